"""Embedding against the torch oracle from identical weights: lookups, gradients (repeated
indices add up, the padding row gets none), max_norm, scale_grad_by_freq, gradcheck and
gradgradcheck, init, reprs and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same, same_error
from tests.nn._util import copy_params, grads_of

RNG = np.random.default_rng(7)
IDX = [[0, 3, 3, 1], [4, 3, 0, 0]]

CASES: list[tuple[tuple[Any, ...], dict[str, Any], Any]] = [
    ((5, 3), {}, IDX),
    ((5, 3), {"padding_idx": 3}, IDX),
    ((5, 3), {"padding_idx": -1}, IDX),
    ((5, 3), {"padding_idx": 0}, [0, 2, 0]),
    ((5, 3), {"scale_grad_by_freq": True}, IDX),
    ((5, 3), {"scale_grad_by_freq": True, "padding_idx": 0}, IDX),
    ((5, 3), {"max_norm": 1.0}, IDX),
    ((5, 3), {"max_norm": 1.5, "norm_type": 1.0}, [[1, 2], [2, 4]]),
    ((6, 2), {}, 2),
]


@pytest.mark.parametrize("args, kwargs, idx", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_embedding_matches_torch(args: tuple[Any, ...], kwargs: dict[str, Any], idx: Any,
                                 dtype: str, device: str) -> None:
    ours = ag.nn.Embedding(*args, **kwargs).to(getattr(ag, dtype))
    theirs = torch.nn.Embedding(*args, **kwargs).to(getattr(torch, dtype))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.padding_idx == theirs.padding_idx
    copy_params(ours, theirs)
    ours.to(device)
    io = ag.tensor(idx, dtype=ag.int64, device=device)
    it = torch.tensor(idx, dtype=torch.int64)
    out_o, out_t = ours(io), theirs(it)
    tol = {"rtol": 1e-6, "atol": 1e-7} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-14}
    assert_same(out_o, out_t, **tol)
    assert out_o.dtype == getattr(ag, dtype)
    assert out_o.grad_fn.name() == out_t.grad_fn.name() == "EmbeddingBackward0"
    assert_same(grads_of(out_o, [ours.weight]), grads_of(out_t, [theirs.weight]), **tol)
    assert_same(ours.weight, theirs.weight, **tol)  # max_norm renormalises in place


def test_embedding_padding_row_and_repeated_indices(device: str) -> None:
    emb = ag.nn.Embedding(4, 2, padding_idx=2, dtype=ag.float64, device=device)
    assert emb.weight[2].tolist() == [0.0, 0.0]
    out = emb(ag.tensor([1, 2, 1, 1, 2], device=device))
    (out * ag.arange(5, dtype=ag.float64, device=device).unsqueeze(1)).sum().backward()
    assert emb.weight.grad.tolist() == [[0, 0], [5, 5], [0, 0], [0, 0]]  # 0 + 2 + 3 at row 1


def test_embedding_init_is_standard_normal(device: str) -> None:
    w = ag.nn.Embedding(2000, 50, device=device).weight.detach().cpu().numpy()
    assert w.dtype == np.float32 and abs(w.mean()) < 0.01 and abs(w.std() - 1) < 0.01


def test_embedding_int32_indices_and_functional(device: str) -> None:
    w = RNG.standard_normal((4, 3))
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        ws = T.tensor(w.tolist(), dtype=T.float64, device=dev, requires_grad=True)
        out = T.nn.functional.embedding(T.tensor([[3, 1]], dtype=T.int32, device=dev), ws,
                                        padding_idx=1)
        res.append([out, *grads_of(out, [ws])])
    assert_same(res[0], res[1], rtol=1e-12, atol=1e-14)


def test_embedding_from_pretrained(device: str) -> None:
    w = ag.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    emb = ag.nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad and emb(ag.tensor([1], device=device)).tolist() == [[3, 4]]
    assert ag.nn.Embedding.from_pretrained(w, freeze=False).weight.requires_grad


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"scale_grad_by_freq": True}])
def test_embedding_gradcheck(kwargs: dict[str, Any], device: str) -> None:
    w = ag.tensor(RNG.standard_normal((5, 3)).tolist(), dtype=ag.float64, device=device,
                  requires_grad=True)
    idx = ag.tensor(IDX, device=device)

    def fn(w: Any) -> Any:
        return ag.nn.functional.embedding(idx, w, **kwargs)

    def square(w: Any) -> Any:
        return fn(w) * fn(w)  # nonlinear, so the double backward w.r.t. w has work to do

    # NOTE: with a padding row or frequency scaling the gradient differs from the derivative on
    # purpose (as in PyTorch), so only the plain lookup is checked against finite differences
    # in w; the backward is linear in the incoming gradient, and gradgradcheck checks that
    # map (the masked, scaled scatter) against finite differences in every case.
    if not kwargs:
        assert ag.autograd.gradcheck(fn, (w,))
        assert ag.autograd.gradgradcheck(square, (w,))
    assert ag.autograd.gradgradcheck(fn, (w,))


def test_embedding_double_backward_matches_torch(device: str) -> None:
    w = RNG.standard_normal((5, 3))
    v = RNG.standard_normal((2, 4, 3))
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        ws = T.tensor(w.tolist(), dtype=T.float64, device=dev, requires_grad=True)
        vs = T.tensor(v.tolist(), dtype=T.float64, device=dev, requires_grad=True)
        out = T.nn.functional.embedding(T.tensor(IDX, device=dev), ws, padding_idx=3)
        (g,) = T.autograd.grad(out, ws, vs, create_graph=True)
        (h,) = T.autograd.grad((g * g).sum(), vs)
        res.append([g, h])
        assert g.grad_fn.name() == "EmbeddingDenseBackwardBackward0"
    assert_same(res[0], res[1], rtol=1e-12, atol=1e-14)


def test_embedding_empty_indices(device: str) -> None:
    emb = ag.nn.Embedding(6, 2, device=device)
    out = emb(ag.tensor([], dtype=ag.int64, device=device))
    assert tuple(out.shape) == (0, 2)
    out.sum().backward()
    assert emb.weight.grad.abs().sum().item() == 0 and tuple(emb.weight.grad.shape) == (6, 2)


ERRORS = [
    lambda T, d: T.nn.Embedding(5, 3)(T.tensor([5])),
    lambda T, d: T.nn.Embedding(5, 3)(T.tensor([[0, -1]])),
    lambda T, d: T.nn.Embedding(5, 3)(T.tensor([1.0])),
    lambda T, d: T.nn.Embedding(5, 3, padding_idx=5),
    lambda T, d: T.nn.Embedding(5, 3, padding_idx=-6),
    lambda T, d: T.nn.functional.embedding(T.tensor([1]), T.randn(5, 3), padding_idx=7),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_embedding_errors(fn: Any, device: str) -> None:
    same_error(fn, device)


def test_embedding_grad_with_long_runs_of_repeats(device: str) -> None:
    """Thousands of lookups of few rows: the weight's gradient is PyTorch's (on CUDA the rows
    are summed in sorted runs, in the same order every run, as PyTorch's CUDA backward)."""
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 7, (64, 50))
    weights = rng.standard_normal((7, 5)).astype(np.float32)
    seed = rng.standard_normal((64, 50, 5)).astype(np.float32)
    grads = []
    for _ in range(2):
        w = ag.tensor(weights, device=device, requires_grad=True)
        (ag.nn.functional.embedding(ag.tensor(idx, device=device), w)
         * ag.tensor(seed, device=device)).sum().backward()
        grads.append(w.grad.cpu().numpy())
    wt = torch.tensor(weights, requires_grad=True)
    (torch.nn.functional.embedding(torch.tensor(idx), wt) * torch.tensor(seed)).sum().backward()
    assert np.array_equal(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], wt.grad.numpy(), rtol=1e-5, atol=1e-4)
