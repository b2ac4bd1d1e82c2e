"""The 1-D and 3-D max/avg pools, adaptive pools, LP pools (and later unpooling and fractional
pooling) against the torch oracle: values, indices, gradients, grad_fn names, double backward,
module reprs and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same
from tests.misuse._catalogue import catalogue_test
from tests.nn._oracle import check_fn
from tests.nn._util import t

RNG = np.random.default_rng(12)

POOL_CASES: list[tuple[str, tuple[int, ...], dict[str, Any]]] = [
    ("max_pool1d", (2, 3, 7), {"kernel_size": 2}),
    ("max_pool1d", (3, 8), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
    ("max_pool1d", (2, 2, 9), {"kernel_size": 2, "dilation": 3, "padding": 1}),
    ("max_pool3d", (2, 2, 5, 6, 4), {"kernel_size": 2}),
    ("max_pool3d", (2, 5, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2,
                                  "ceil_mode": True}),
    ("max_pool3d", (1, 2, 4, 6, 5), {"kernel_size": (2, 3, 1), "stride": (1, 2, 2),
                                     "padding": (1, 1, 0)}),
    ("avg_pool1d", (2, 3, 7), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg_pool1d", (3, 8), {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True,
                            "count_include_pad": False}),
    ("avg_pool3d", (2, 2, 5, 6, 4), {"kernel_size": 2}),
    ("avg_pool3d", (2, 5, 6, 7), {"kernel_size": 3, "stride": 2, "padding": 1,
                                  "ceil_mode": True}),
    ("avg_pool3d", (1, 2, 5, 6, 7), {"kernel_size": (2, 3, 3), "stride": (1, 2, 2),
                                     "padding": 1, "ceil_mode": True,
                                     "count_include_pad": False}),
    ("avg_pool3d", (1, 2, 4, 5, 4), {"kernel_size": 2, "padding": 1, "divisor_override": 3}),
    ("adaptive_avg_pool1d", (2, 3, 7), {"output_size": 3}),
    ("adaptive_avg_pool1d", (3, 4), {"output_size": 7}),
    ("adaptive_avg_pool2d", (2, 3, 7, 5), {"output_size": (3, None)}),
    ("adaptive_avg_pool2d", (3, 5, 6), {"output_size": 4}),
    ("adaptive_avg_pool2d", (2, 3, 5, 6), {"output_size": 1}),
    ("adaptive_avg_pool3d", (2, 2, 7, 5, 4), {"output_size": (3, 2, 5)}),
    ("adaptive_max_pool1d", (2, 3, 7), {"output_size": 3}),
    ("adaptive_max_pool2d", (2, 3, 7, 5), {"output_size": (3, 4)}),
    ("adaptive_max_pool2d", (3, 5, 6), {"output_size": (None, 4)}),
    ("adaptive_max_pool3d", (2, 2, 7, 5, 4), {"output_size": (3, 2, 5)}),
    ("lp_pool1d", (2, 3, 7), {"norm_type": 2, "kernel_size": 3}),
    ("lp_pool2d", (2, 3, 7, 5), {"norm_type": 3, "kernel_size": (2, 3), "stride": 1}),
    ("lp_pool3d", (2, 3, 6, 5, 4), {"norm_type": 1.5, "kernel_size": 2, "ceil_mode": True}),
]


def _call(T: Any, fn: str, x: Any, kw: dict[str, Any]) -> Any:
    f = getattr(T.nn.functional, fn)
    if fn.startswith(("max_pool", "adaptive_max")):
        return f(x, return_indices=True, **kw)
    if fn.startswith("lp_pool"):
        return f(x.abs() + 0.5, **kw)
    return f(x, **kw)


@pytest.mark.parametrize("fn, shape, kw", POOL_CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pools_match_torch(fn: str, shape: tuple[int, ...], kw: dict[str, Any], dtype: str,
                           device: str) -> None:
    xa = RNG.standard_normal(shape)
    check_fn(lambda T, x: _call(T, fn, x, kw), xa, device, dtype)


@pytest.mark.parametrize("fn, kw", [
    ("max_pool3d", {"kernel_size": 2, "stride": 1}),
    ("avg_pool3d", {"kernel_size": 2, "padding": 1, "count_include_pad": False}),
    ("adaptive_avg_pool3d", {"output_size": (2, 3, 2)}),
    ("adaptive_max_pool2d", {"output_size": (2, 3)}),
    ("max_pool1d", {"kernel_size": 2, "stride": 1}),
])
def test_pools_gradgradcheck(fn: str, kw: dict[str, Any], device: str) -> None:
    # NOTE: distinct values, so the maxima are unique and finite differences see no kinks.
    xa = RNG.permutation(2 * 3 * 4 * 4).reshape(2, 3, 4, 4) / 7.0
    if fn.endswith("1d"):
        xa = xa.reshape(6, 16)
    x = t(ag, device, xa, True)

    def f(x: Any) -> Any:
        return getattr(ag.nn.functional, fn)(x, **kw) ** 2

    assert ag.autograd.gradcheck(f, (x,))
    assert ag.autograd.gradgradcheck(f, (x,))


def test_max_pool_ties_and_infinities_pick_as_torch(device: str) -> None:
    xa = np.array([[[[1.0, 1.0, 0.0], [1.0, 1.0, 2.0], [2.0, 0.0, 2.0]]] * 2])
    xa[0, 1] = -np.inf
    for fn, args in (("max_pool3d", (2, 1, 1)), ("adaptive_max_pool3d", ((2, 2, 2),)),
                     ("adaptive_max_pool2d", (2,))):
        check_fn(lambda T, x, fn=fn, args=args: getattr(T.nn.functional, fn)(
                     x, *args, return_indices=True), xa,
                 device)


@pytest.mark.parametrize("cls, args, kwargs", [
    ("MaxPool1d", (2,), {}),
    ("MaxPool1d", (3,), {"stride": 1, "padding": 1, "return_indices": True}),
    ("MaxPool3d", (2,), {"stride": 1, "padding": 1, "dilation": 2, "ceil_mode": True}),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}),
    ("AvgPool3d", (2,), {"stride": 1, "padding": 1, "ceil_mode": True, "divisor_override": 3}),
    ("AdaptiveAvgPool1d", (3,), {}),
    ("AdaptiveAvgPool2d", ((3, None),), {}),
    ("AdaptiveAvgPool3d", (2,), {}),
    ("AdaptiveMaxPool1d", (2,), {"return_indices": True}),
    ("AdaptiveMaxPool2d", ((2, 3),), {}),
    ("AdaptiveMaxPool3d", (2,), {}),
    ("LPPool1d", (2, 3), {}),
    ("LPPool2d", (1.5, (2, 3)), {"stride": 1, "ceil_mode": True}),
    ("LPPool3d", (2, 2), {}),
])
def test_pool_modules_match_torch(cls: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                                  device: str) -> None:
    ours, theirs = getattr(ag.nn, cls)(*args, **kwargs), getattr(torch.nn, cls)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    k = int(cls[-2])
    xa = np.abs(RNG.standard_normal((2, 3, 5, 6, 7)[-k - 2:]))
    assert_same(ours(t(ag, device, xa)), theirs(t(torch, "cpu", xa)), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("n, shape, kw, out_size", [
    (1, (2, 3, 8), {"kernel_size": 2}, None),
    (1, (3, 9), {"kernel_size": 3, "stride": 2, "padding": 1}, (9,)),
    (2, (2, 3, 6, 7), {"kernel_size": 2}, (2, 3, 7, 7)),
    (2, (3, 7, 7), {"kernel_size": 3, "stride": 2, "padding": 1}, None),
    (3, (2, 2, 4, 5, 6), {"kernel_size": 2}, (5, 5, 6)),
])
def test_max_unpool_matches_torch(n: int, shape: tuple[int, ...], kw: dict[str, Any],
                                  out_size: Any, device: str) -> None:
    xa = RNG.permutation(int(np.prod(shape))).reshape(shape) / 7.0

    def run(T: Any, x: Any) -> Any:
        F = T.nn.functional
        out, idx = getattr(F, f"max_pool{n}d")(x, return_indices=True, **kw)
        res = getattr(F, f"max_unpool{n}d")(out * 2, idx, output_size=out_size, **kw)
        mod = getattr(T.nn, f"MaxUnpool{n}d")(**kw)(out, idx, out_size)
        assert repr(getattr(T.nn, f"MaxUnpool{n}d")(**kw)) == repr(
            getattr(torch.nn, f"MaxUnpool{n}d")(**kw))
        return res, mod

    check_fn(run, xa, device)
    if "stride" in kw:
        return  # NOTE: overlapping windows repeat indices: PyTorch's gradient ignores overwrites
    x = t(ag, device, xa, True)
    out, idx = getattr(ag.nn.functional, f"max_pool{n}d")(x, return_indices=True, **kw)
    out = out.detach().requires_grad_()
    assert ag.autograd.gradgradcheck(
        lambda v: getattr(ag.nn.functional, f"max_unpool{n}d")(
            v, idx, output_size=shape[-n:], **kw) ** 2, (out,))


def _f(fn: str, shape: tuple[int, ...], *args: Any, **kw: Any) -> Any:
    return lambda T, dev: getattr(T.nn.functional, fn)(T.ones(*shape, device=dev), *args, **kw)


CASES = {
    "max1d 1-D input": _f("max_pool1d", (5,), 2),
    "max1d 4-D input": _f("max_pool1d", (2, 3, 4, 5), 2),
    "max1d zero kernel": _f("max_pool1d", (2, 3, 5), 0),
    "max1d zero stride": _f("max_pool1d", (2, 3, 5), 2, 0),
    "max1d wide padding": _f("max_pool1d", (2, 3, 5), 2, padding=2),
    "max1d big kernel": _f("max_pool1d", (2, 3, 5), 6),
    "max1d zero dilation": _f("max_pool1d", (2, 3, 5), 2, dilation=0),
    "max1d pair kernel": _f("max_pool1d", (2, 3, 5), (2, 2)),
    "max1d empty channel": _f("max_pool1d", (2, 0, 5), 2),
    "max1d empty batch": _f("max_pool1d", (0, 3, 5), 2),
    "avg1d 1-D input": _f("avg_pool1d", (5,), 2),
    "avg1d wide padding": _f("avg_pool1d", (2, 3, 5), 2, padding=2),
    "avg1d big kernel": _f("avg_pool1d", (2, 3, 5), 6),
    "avg1d pair kernel": _f("avg_pool1d", (2, 3, 5), (2, 2)),
    "max3d 2-D input": _f("max_pool3d", (5, 5), 2),
    "max3d zero stride": _f("max_pool3d", (2, 3, 5, 5, 5), 2, 0),
    "max3d wide padding": _f("max_pool3d", (2, 3, 5, 5, 5), 2, padding=2),
    "max3d big kernel": _f("max_pool3d", (2, 3, 5, 5, 5), 6),
    "max3d zero dilation": _f("max_pool3d", (2, 3, 5, 5, 5), 2, dilation=0),
    "max3d pair kernel": _f("max_pool3d", (2, 3, 5, 5, 5), (2, 2)),
    "max3d empty channel": _f("max_pool3d", (2, 0, 5, 5, 5), 2),
    "avg3d 2-D input": _f("avg_pool3d", (5, 5), 2),
    "avg3d wide padding": _f("avg_pool3d", (2, 3, 5, 5, 5), 2, padding=2),
    "avg3d big kernel": _f("avg_pool3d", (2, 3, 5, 5, 5), 6),
    "avg3d pair kernel": _f("avg_pool3d", (2, 3, 5, 5, 5), (2, 2)),
    "avg3d zero divisor": _f("avg_pool3d", (2, 3, 5, 5, 5), 2, divisor_override=0),
    "avg3d empty channel": _f("avg_pool3d", (2, 0, 5, 5, 5), 2),
    "adaptive avg1d 1-D": _f("adaptive_avg_pool1d", (5,), 2),
    "adaptive avg1d pair": _f("adaptive_avg_pool1d", (2, 3, 5), (2, 2)),
    "adaptive avg1d negative": _f("adaptive_avg_pool1d", (2, 3, 5), -1),
    "adaptive avg1d empty channel": _f("adaptive_avg_pool1d", (2, 0, 5), 2),
    "adaptive avg2d 1-D": _f("adaptive_avg_pool2d", (5,), 2),
    "adaptive avg2d triple": _f("adaptive_avg_pool2d", (2, 3, 5, 5), (2, 2, 2)),
    "adaptive avg2d negative": _f("adaptive_avg_pool2d", (2, 3, 5, 5), -1),
    "adaptive avg2d zero": _f("adaptive_avg_pool2d", (2, 3, 5, 5), 0),
    "adaptive avg3d 2-D": _f("adaptive_avg_pool3d", (5, 5), 2),
    "adaptive avg3d pair": _f("adaptive_avg_pool3d", (2, 3, 5, 5), (2, 2)),
    "adaptive avg3d empty channel": _f("adaptive_avg_pool3d", (2, 0, 5, 5, 5), 2),
    "adaptive max1d 1-D": _f("adaptive_max_pool1d", (5,), 2),
    "adaptive max1d empty channel": _f("adaptive_max_pool1d", (2, 0, 5), 2),
    "adaptive max1d pair": _f("adaptive_max_pool1d", (2, 3, 5), (2, 2)),
    "adaptive max2d 1-D": _f("adaptive_max_pool2d", (5,), 2),
    "adaptive max2d empty channel": _f("adaptive_max_pool2d", (2, 0, 5, 5), 2),
    "adaptive max3d 2-D": _f("adaptive_max_pool3d", (5, 5), 2),
    "unpool output_size length": lambda T, dev: T.nn.functional.max_unpool2d(
        T.ones(1, 1, 2, 2, device=dev), T.zeros(1, 1, 2, 2, dtype=T.int64, device=dev), 2,
        output_size=(4, 4, 4)),
    "unpool output_size range": lambda T, dev: T.nn.functional.max_unpool2d(
        T.ones(1, 1, 2, 2, device=dev), T.zeros(1, 1, 2, 2, dtype=T.int64, device=dev), 2,
        output_size=(6, 4)),
}

test_misuse = catalogue_test(CASES)
