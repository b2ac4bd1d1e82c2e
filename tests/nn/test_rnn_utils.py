"""``nn.utils.rnn`` against torch: pad_sequence (batch_first, padding_value, padding_side),
pack/unpack round trips (sorted and unsorted, total_length), gradients through packing, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same
from tests.misuse._catalogue import catalogue_test
from tests.nn._util import grads_of

LENGTHS = [3, 5, 1, 4]


def _seqs(T: Any, dev: str) -> list[Any]:
    rng = np.random.default_rng(0)
    return [T.tensor(rng.standard_normal((n, 2)).tolist(), dtype=T.float64, device=dev,
                     requires_grad=True) for n in LENGTHS]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first: bool, side: str, device: str) -> None:
    so, st = _seqs(ag, device), _seqs(torch, "cpu")
    po = ag.nn.utils.rnn.pad_sequence(so, batch_first, -1.5, side)
    pt = torch.nn.utils.rnn.pad_sequence(st, batch_first, -1.5, side)
    assert_same(po, pt, rtol=0, atol=0)
    assert_same(grads_of(po, so), grads_of(pt, st), rtol=0, atol=0)


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_round_trip(enforce_sorted: bool, batch_first: bool, device: str) -> None:
    def run(T: Any, dev: str) -> tuple[Any, list[Any]]:
        R = T.nn.utils.rnn
        seqs = _seqs(T, dev)
        if enforce_sorted:
            seqs = sorted(seqs, key=lambda s: -s.shape[0])
        packed = R.pack_sequence(seqs, enforce_sorted=enforce_sorted)
        lens = [s.shape[0] for s in seqs]
        padded = R.pad_sequence(seqs, batch_first=batch_first)
        packed2 = R.pack_padded_sequence(padded, T.tensor(lens), batch_first=batch_first,
                                         enforce_sorted=enforce_sorted)
        back, back_lens = R.pad_packed_sequence(packed2, batch_first, 7.0, total_length=6)
        unpacked = R.unpack_sequence(packed)
        unpadded = R.unpad_sequence(padded, T.tensor(lens), batch_first=batch_first)
        out = (packed.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices,
               packed2.data, back, back_lens, unpacked, unpadded)
        return out, seqs

    out_o, so = run(ag, device)
    out_t, st = run(torch, "cpu")
    assert_same(out_o, out_t, rtol=0, atol=0)
    assert out_o[1].device.type == "cpu" and out_o[6].device.type == "cpu"
    assert_same(grads_of(out_o[5], so), grads_of(out_t[5], st), rtol=0, atol=0)


def test_packed_sequence_api(device: str) -> None:
    R = ag.nn.utils.rnn
    p = R.pack_sequence([ag.ones(2, 1, device=device), ag.ones(3, 1, device=device)],
                       enforce_sorted=False)
    assert isinstance(p, tuple) and p._fields == ("data", "batch_sizes", "sorted_indices",
                                                  "unsorted_indices")
    assert p.double().data.dtype == ag.float64 and p.to(ag.float64).data.dtype == ag.float64
    assert p.cpu().data.device.type == "cpu" and p.is_cuda == (device == "cuda")
    assert R.invert_permutation(None) is None
    perm = ag.tensor([2, 0, 1], device=device)
    assert R.invert_permutation(perm).tolist() == \
        torch.nn.utils.rnn.invert_permutation(torch.tensor([2, 0, 1])).tolist()
    data, sizes = R.PackedSequence(p.data, p.batch_sizes)[:2]
    assert sizes.tolist() == [2, 2, 1]


ERRORS = {
    "unsorted": lambda T, d: T.nn.utils.rnn.pack_padded_sequence(T.ones(3, 2, device=d), [1, 2]),
    "zero_length": lambda T, d: T.nn.utils.rnn.pack_padded_sequence(
        T.ones(3, 2, device=d), [0, 2], enforce_sorted=False),
    "total_length": lambda T, d: T.nn.utils.rnn.pad_packed_sequence(
        T.nn.utils.rnn.pack_padded_sequence(T.ones(3, 2, device=d), [3, 2]), total_length=2),
    "padding_side": lambda T, d: T.nn.utils.rnn.pad_sequence([T.ones(2, device=d)],
                                                             padding_side="middle"),
}

test_misuse = catalogue_test(ERRORS)
