"""EmbeddingBag / F.embedding_bag against the torch oracle from identical weights: the three
modes, fixed-size (2-D) and offset bags, include_last_offset, padding rows, per-sample weights,
max_norm, scale_grad_by_freq; outputs, gradients (weight and per_sample_weights), double
backward, reprs and PyTorch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same, same_error
from tests.nn._util import copy_params, grads_of

RNG = np.random.default_rng(11)
FLAT = [1, 2, 4, 5, 4, 3, 2, 0, 4]
BAGS_2D = [[0, 3, 3, 1], [4, 3, 0, 0], [2, 2, 5, 1]]
# (module kwargs, input, offsets, per_sample_weights?)
CASES: list[tuple[dict[str, Any], Any, Any, bool]] = [
    ({"mode": "sum"}, BAGS_2D, None, False),
    ({"mode": "mean"}, BAGS_2D, None, False),
    ({"mode": "max"}, BAGS_2D, None, False),
    ({"mode": "sum"}, FLAT, [0, 2, 2, 6], False),  # an empty bag
    ({"mode": "mean"}, FLAT, [0, 2, 2, 6], False),
    ({"mode": "max"}, FLAT, [0, 2, 2, 6], False),
    ({"mode": "sum"}, FLAT, [0, 3, 3, 7], True),
    ({"mode": "sum"}, BAGS_2D, None, True),
    ({"mode": "mean", "include_last_offset": True}, FLAT, [0, 2, 5, 9], False),
    ({"mode": "max", "include_last_offset": True}, FLAT, [0, 4, 4, 7], False),
    ({"mode": "sum", "padding_idx": 4}, FLAT, [0, 3, 6], True),
    ({"mode": "mean", "padding_idx": -3}, FLAT, [0, 3, 5], False),
    ({"mode": "mean", "padding_idx": 4}, [4, 4, 1], [0, 2], False),  # a bag of padding only
    ({"mode": "max", "padding_idx": 0}, BAGS_2D, None, False),
    ({"mode": "sum", "scale_grad_by_freq": True}, FLAT, [0, 4], True),
    ({"mode": "mean", "scale_grad_by_freq": True, "padding_idx": 2}, BAGS_2D, None, False),
    ({"mode": "mean", "max_norm": 1.0}, BAGS_2D, None, False),
    ({"mode": "max", "max_norm": 1.5, "norm_type": 1.0}, FLAT, [0, 5], False),
    ({"mode": "sum"}, [], [0, 0], False),
]


@pytest.mark.parametrize("kwargs, idx, offsets, psw", CASES)
def test_embedding_bag_matches_torch(kwargs: dict[str, Any], idx: Any, offsets: Any, psw: bool,
                                     device: str) -> None:
    ours = ag.nn.EmbeddingBag(6, 3, **kwargs).double()
    theirs = torch.nn.EmbeddingBag(6, 3, **kwargs).double()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    copy_params(ours, theirs)
    ours.to(device)
    weights = RNG.standard_normal(np.shape(idx)).tolist() if psw else None
    res = []
    for T, dev, mod in ((ag, device, ours), (torch, "cpu", theirs)):
        args = [T.tensor(idx, dtype=T.int64, device=dev)]
        args.append(None if offsets is None else T.tensor(offsets, dtype=T.int64, device=dev))
        ws = None if psw is False else T.tensor(weights, dtype=T.float64, device=dev,
                                                 requires_grad=True)
        out = mod(*args, per_sample_weights=ws)
        assert out.grad_fn.name() == "EmbeddingBagBackward0"
        if T is torch and kwargs.get("scale_grad_by_freq"):
            out = _freq_oracle(mod, *args, ws)
        res.append([out, *grads_of(out, [mod.weight] + ([ws] if psw else [])), mod.weight])
    assert_same(res[0], res[1], rtol=1e-12, atol=1e-14)


def _freq_oracle(mod: Any, idx: Any, offsets: Any, ws: Any) -> Any:
    """torch's embedding_bag with ``scale_grad_by_freq`` as documented, built from
    F.embedding: torch 2.13's CPU kernel divides by the wrong index's count (pytorch#190063,
    fixed by pytorch#190264; CUDA was right), so it is no oracle there."""
    if offsets is None:
        offsets = torch.arange(0, idx.numel(), idx.shape[1])
        idx = idx.reshape(-1)
        ws = None if ws is None else ws.reshape(-1)
    rows = torch.nn.functional.embedding(idx, mod.weight, mod.padding_idx,
                                         scale_grad_by_freq=True)
    keep = torch.ones(len(idx), dtype=torch.float64) if mod.padding_idx is None else \
        (idx != mod.padding_idx).double()
    rows = rows * keep[:, None] * (1 if ws is None else ws[:, None])
    bags = torch.searchsorted(offsets, torch.arange(len(idx)), right=True) - 1
    out = torch.zeros(len(offsets), rows.shape[1], dtype=rows.dtype).index_add(0, bags, rows)
    if mod.mode == "mean":
        out = out / torch.zeros(len(offsets)).double().index_add(0, bags, keep).clamp(min=1)[:, None]
    return out


def test_embedding_bag_float32_and_int32(device: str) -> None:
    w = RNG.standard_normal((5, 4))
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        ws = T.tensor(w.tolist(), dtype=T.float32, device=dev, requires_grad=True)
        out = T.nn.functional.embedding_bag(T.tensor([3, 1, 0, 3], dtype=T.int32, device=dev),
                                            ws, T.tensor([0, 1], dtype=T.int32, device=dev))
        res.append([out, *grads_of(out, [ws])])
    assert_same(res[0], res[1], rtol=1e-6, atol=1e-7)


def test_embedding_bag_max_ties_go_to_the_first(device: str) -> None:
    w = ag.tensor([[1.0, 5.0], [1.0, 2.0], [0.0, 5.0]], device=device, requires_grad=True)
    out = ag.nn.functional.embedding_bag(ag.tensor([[1, 0, 2]], device=device), w, mode="max")
    out.sum().backward()
    assert out.tolist() == [[1.0, 5.0]] and w.grad.tolist() == [[0, 1], [1, 0], [0, 0]]


def test_embedding_bag_double_backward(device: str) -> None:
    w = ag.tensor(RNG.standard_normal((5, 3)).tolist(), dtype=ag.float64, device=device,
                  requires_grad=True)
    p = ag.tensor(RNG.standard_normal(6).tolist(), dtype=ag.float64, device=device,
                  requires_grad=True)
    idx, offs = ag.tensor([1, 3, 3, 0, 4, 1], device=device), ag.tensor([0, 2], device=device)

    def fn(w: Any, p: Any) -> Any:
        return ag.nn.functional.embedding_bag(idx, w, offs, mode="sum", per_sample_weights=p)

    assert ag.autograd.gradcheck(fn, (w, p))
    assert ag.autograd.gradgradcheck(fn, (w, p))
    for mode in ("mean", "max"):
        assert ag.autograd.gradcheck(
            lambda w, m=mode: ag.nn.functional.embedding_bag(idx, w, offs, mode=m), (w,))


def test_embedding_bag_from_pretrained_and_init(device: str) -> None:
    w = ag.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    bag = ag.nn.EmbeddingBag.from_pretrained(w, mode="sum")
    assert not bag.weight.requires_grad
    assert bag(ag.tensor([[1, 0, 1]], device=device)).tolist() == [[7.0, 10.0]]
    assert ag.nn.EmbeddingBag.from_pretrained(w, freeze=False).weight.requires_grad
    b2 = ag.nn.EmbeddingBag(300, 40, padding_idx=1, device=device)
    arr = b2.weight.detach().cpu().numpy()
    assert arr.dtype == np.float32 and not arr[1].any() and abs(arr.std() - 1) < 0.03


def test_embedding_bag_sparse_is_refused(device: str) -> None:
    bag = ag.nn.EmbeddingBag(4, 2, sparse=True, device=device)
    assert repr(bag) == repr(torch.nn.EmbeddingBag(4, 2, sparse=True))
    with pytest.raises(NotImplementedError, match="sparse"):
        bag(ag.tensor([[1, 2]], device=device))


F_ = "nn.functional.embedding_bag"
ERRORS = [
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1, 2]), T.randn(5, 3),
                                               T.tensor([1, 2])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1, 2]), T.randn(5, 3),
                                               T.tensor([0, 3])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1, 5]), T.randn(5, 3), T.tensor([0])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1, -1]), T.randn(5, 3), T.tensor([0])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1, 5]), T.randn(5, 3).double(),
                                               T.tensor([0])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1, 5]), T.randn(5, 3), T.tensor([0]),
                                               mode="max"),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5, 3), T.tensor([0]),
                                               mode="sum",
                                               per_sample_weights=T.ones(1, dtype=T.float64)),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1.0]), T.randn(5, 3), T.tensor([0])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5, 3), T.tensor([0.0])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.ones(5, 3, dtype=T.int32),
                                               T.tensor([0])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5, 3), T.tensor([0]),
                                               mode="max", per_sample_weights=T.ones(1)),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1, 2]), T.randn(5, 3), T.tensor([0]),
                                               mode="sum", per_sample_weights=T.ones(3)),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5, 3), T.tensor([0]),
                                               mode="avg"),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5, 3), T.tensor([[0]])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5, 3)),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([[1]]), T.randn(5, 3), T.tensor([0])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([[[1]]]), T.randn(5, 3)),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5), T.tensor([0])),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5, 3), T.tensor([0]),
                                               mode="max", scale_grad_by_freq=True),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5, 3), T.tensor([0]),
                                               mode="max", sparse=True),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5, 3), T.tensor([0]),
                                               padding_idx=5),
    lambda T, d: T.nn.functional.embedding_bag(T.tensor([1]), T.randn(5, 3), T.tensor([0]),
                                               padding_idx=-6),
    lambda T, d: T.nn.EmbeddingBag(5, 3, padding_idx=5),
    lambda T, d: T.nn.EmbeddingBag.from_pretrained(T.ones(3)),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_embedding_bag_errors(fn: Any, device: str) -> None:
    same_error(fn, device)
