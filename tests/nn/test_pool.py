"""max_pool2d / avg_pool2d and their modules against the torch oracle: values, indices,
gradients, gradcheck and gradgradcheck, reprs, grad_fn names and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests._compare import outcome
from tests.autograd._util import assert_same
from tests.nn._util import grads_of, t

RNG = np.random.default_rng(6)

MAX_CASES: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((2, 3, 6, 6), {"kernel_size": 2}),
    ((2, 3, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((1, 2, 7, 8), {"kernel_size": (2, 3), "stride": (1, 2), "padding": (1, 1)}),
    ((2, 2, 9, 8), {"kernel_size": 3, "stride": 1, "dilation": 2, "padding": 1}),
    ((2, 2, 7, 7), {"kernel_size": 2, "ceil_mode": True}),
    ((2, 2, 8, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((1, 2, 9, 6), {"kernel_size": (3, 2), "stride": (2, 3), "dilation": (2, 1),
                    "ceil_mode": True}),
    ((3, 5, 5), {"kernel_size": 2}),  # unbatched
    ((2, 3, 5, 5), {"kernel_size": 3, "stride": 1}),  # overlapping windows
]


@pytest.mark.parametrize("shape, kwargs", MAX_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool2d_matches_torch(shape: tuple[int, ...], kwargs: dict[str, Any], dtype: str,
                                  device: str) -> None:
    xa = RNG.standard_normal(shape)
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x = t(T, dev, xa, True, getattr(T, dtype))
        out, idx = T.nn.functional.max_pool2d(x, return_indices=True, **kwargs)
        plain = T.nn.functional.max_pool2d(x, **kwargs)
        res.append((out, idx, plain, grads_of(out, [x]), out.grad_fn.name()))
    # NOTE: on a GPU the gradient of an input in several windows is summed by atomics in any
    # order (as PyTorch CUDA's is): float32 sums may differ in the last bits
    tol = (1e-5, 1e-6) if device == "cuda" and dtype == "float32" else (1e-6, 1e-7)
    assert_same(res[0][:4], res[1][:4], *tol)
    assert res[0][1].dtype == ag.int64 and not res[0][1].requires_grad
    assert res[0][4] == res[1][4] == "MaxPool2DWithIndicesBackward0"


def test_max_pool2d_ties_pick_the_first_maximum(device: str) -> None:
    xa = np.array([[[[1.0, 1.0, 0.0], [1.0, 1.0, 2.0], [2.0, 0.0, 2.0]]]])
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x = t(T, dev, xa, True)
        out, idx = T.nn.functional.max_pool2d(x, 2, 1, return_indices=True)
        out.sum().backward()
        res.append((out, idx, x.grad))
    assert_same(res[0], res[1])


AVG_CASES: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((2, 3, 6, 6), {"kernel_size": 2}),
    ((2, 3, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((2, 3, 7, 5), {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
    ((1, 2, 7, 8), {"kernel_size": (2, 3), "stride": (1, 2), "padding": (1, 1)}),
    ((2, 2, 7, 7), {"kernel_size": 2, "ceil_mode": True}),
    ((2, 2, 8, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ((2, 2, 8, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                    "count_include_pad": False}),
    ((2, 2, 6, 7), {"kernel_size": (3, 2), "padding": 1, "divisor_override": 5}),
    ((3, 5, 5), {"kernel_size": 2, "stride": 1}),  # unbatched, overlapping
]


@pytest.mark.parametrize("shape, kwargs", AVG_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_avg_pool2d_matches_torch(shape: tuple[int, ...], kwargs: dict[str, Any], dtype: str,
                                  device: str) -> None:
    xa = RNG.standard_normal(shape)
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x = t(T, dev, xa, True, getattr(T, dtype))
        out = T.nn.functional.avg_pool2d(x, **kwargs)
        res.append((out, grads_of(out, [x]), out.grad_fn.name()))
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-13}
    assert_same(res[0][:2], res[1][:2], **tol)
    assert res[0][0].dtype == getattr(ag, dtype)
    assert res[0][2] == res[1][2] == "AvgPool2DBackward0"


@pytest.mark.parametrize("fn, kwargs", [
    ("max_pool2d", {"kernel_size": 2, "stride": 1, "padding": 1}),
    ("max_pool2d", {"kernel_size": (2, 3), "dilation": (2, 1), "ceil_mode": True}),
    ("avg_pool2d", {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("avg_pool2d", {"kernel_size": 2, "stride": 1, "count_include_pad": False, "padding": 1}),
])
def test_pool_gradcheck_and_gradgradcheck(fn: str, kwargs: dict[str, Any], device: str) -> None:
    # NOTE: distinct values, so the maxima are unique and finite differences see no kinks.
    xa = RNG.permutation(2 * 2 * 5 * 6).reshape(2, 2, 5, 6) / 7.0
    x = t(ag, device, xa, True)

    def f(x: Any) -> Any:
        return getattr(ag.nn.functional, fn)(x, **kwargs) ** 2

    assert ag.autograd.gradcheck(f, (x,))
    assert ag.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("fn", ["max_pool2d", "avg_pool2d"])
def test_pool_double_backward_matches_torch(fn: str, device: str) -> None:
    xa = RNG.standard_normal((2, 2, 5, 5))
    va = RNG.standard_normal((2, 2, 5, 5))
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x, v = t(T, dev, xa, True), t(T, dev, va)
        out = getattr(T.nn.functional, fn)(x.sin(), 3, 2, 1)
        (gx,) = T.autograd.grad((out ** 3).sum(), x, create_graph=True)
        (gg,) = T.autograd.grad((gx * v).sum(), x)
        res.append((gx, gg))
    assert_same(res[0], res[1], rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("cls, args, kwargs", [
    ("MaxPool2d", (2,), {}),
    ("MaxPool2d", ((2, 3),), {"stride": 1, "padding": 1, "dilation": 2, "ceil_mode": True}),
    ("MaxPool2d", (3,), {"stride": (1, 2), "return_indices": True}),
    ("AvgPool2d", (2,), {}),
    ("AvgPool2d", ((2, 3),), {"stride": 1, "padding": 1, "ceil_mode": True,
                              "count_include_pad": False, "divisor_override": 3}),
])
def test_pool_modules_match_torch(cls: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                                  device: str) -> None:
    ours, theirs = getattr(ag.nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    assert ours.stride == theirs.stride and ours.kernel_size == theirs.kernel_size
    xa = RNG.standard_normal((2, 3, 7, 8))
    out_o, out_t = ours(t(ag, device, xa)), theirs(t(torch, "cpu", xa))
    assert_same(out_o, out_t, rtol=1e-12, atol=1e-13)


def _pool(T: Any, fn: str, shape: tuple[int, ...], *args: Any, **kw: Any) -> Any:
    return getattr(T.nn.functional, fn)(T.zeros(*shape), *args, **kw)


@pytest.mark.parametrize("fn", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("shape, args, kw", [
    ((2, 3, 5, 5), (3,), {"padding": 2}),
    ((2, 3, 1, 1), (3,), {}),
    ((5, 5), (3,), {}),
    ((1, 2, 3, 4, 5), (2,), {}),
    ((2, 0, 4, 4), (2,), {}),
    ((2, 3, 5, 5), (0, 1), {}),
    ((2, 3, 5, 5), (2, 0), {}),
    ((2, 3, 5, 5), (2, 1), {"padding": -1}),
    ((2, 3, 5, 5), ((2, 2, 2),), {}),
    ((2, 3, 5, 5), (2, (1, 1, 1)), {}),
    ((2, 3, 5, 5), (2, 1, (1, 1, 1)), {}),
])
def test_pool_errors_match_torch(fn: str, shape: tuple[int, ...], args: tuple[Any, ...],
                                 kw: dict[str, Any]) -> None:
    theirs = outcome(lambda: _pool(torch, fn, shape, *args, **kw))
    assert theirs[0] == "raises"
    assert outcome(lambda: _pool(ag, fn, shape, *args, **kw)) == theirs


@pytest.mark.parametrize("fn, args, kw", [
    ("max_pool2d", (2, 1), {"dilation": 0}),
    ("max_pool2d", (2, 1), {"dilation": (1, 1, 1)}),
    ("max_pool2d", (3, 1), {"dilation": 2, "padding": 2}),
    ("avg_pool2d", (2,), {"divisor_override": 0}),
])
def test_pool_specific_errors_match_torch(fn: str, args: tuple[Any, ...],
                                          kw: dict[str, Any]) -> None:
    theirs = outcome(lambda: _pool(torch, fn, (2, 3, 5, 5), *args, **kw))
    assert theirs[0] == "raises"
    assert outcome(lambda: _pool(ag, fn, (2, 3, 5, 5), *args, **kw)) == theirs


def test_pool_empty_batch_matches_torch(device: str) -> None:
    for fn in ("max_pool2d", "avg_pool2d"):
        out = getattr(ag.nn.functional, fn)(ag.zeros(0, 2, 4, 4, device=device), 2)
        assert tuple(out.shape) == (0, 2, 2, 2)
