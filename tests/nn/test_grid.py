"""F.grid_sample and F.affine_grid against the torch oracle: values, gradients w.r.t. input,
grid and theta, grad_fn names, double backward, warnings, errors.

Tolerances: float64 to 1e-11 (the coordinates round as PyTorch's CPU kernels round them; sums
of up to 16 taps differ in order), float32 to 1e-5."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same
from tests.misuse._catalogue import catalogue_test
from tests.nn._util import grads_of, second_grads, t

RNG = np.random.default_rng(21)
F64 = {"rtol": 1e-11, "atol": 1e-12}


def _both(fn: Any, arrays: list[Any], device: str, dtype: str = "float64",
          second: bool = False) -> list[Any]:
    """``fn(T, *tensors)`` in both libraries: output, gradients, grad_fn name (and a
    Hessian-vector product w.r.t. the first input)."""
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        xs = [t(T, dev, a, True, getattr(T, dtype)) for a in arrays]
        out = fn(T, *xs)
        item = [out, grads_of(out, xs), type(out.grad_fn).__name__]
        if second:
            item.append(second_grads(fn(T, *xs), xs[0]))
        res.append(item)
    return res


def _grid(shape: tuple[int, ...], lo: float = -1.3, hi: float = 1.3) -> Any:
    return RNG.uniform(lo, hi, shape)  # NOTE: past [-1, 1]: out-of-range points too


def _gs(**kw: Any) -> Any:
    return lambda T, x, g: T.nn.functional.grid_sample(x, g, **kw)


TABLE = [(mode, pad, ac) for mode in ("bilinear", "nearest", "bicubic")
         for pad in ("zeros", "border", "reflection") for ac in (False, True)]


@pytest.mark.parametrize("mode, pad, ac", TABLE)
def test_grid_sample_4d_matches_torch(mode: str, pad: str, ac: bool, device: str) -> None:
    xa, ga = RNG.standard_normal((2, 3, 4, 5)), _grid((2, 3, 6, 2), -2.5, 2.5)
    ours, theirs = _both(_gs(mode=mode, padding_mode=pad, align_corners=ac), [xa, ga], device)
    assert_same(ours[:2], theirs[:2], **F64)
    assert ours[2] == theirs[2] == "GridSampler2DBackward0"


@pytest.mark.parametrize("mode, pad, ac", [c for c in TABLE if c[0] != "bicubic"])
def test_grid_sample_5d_matches_torch(mode: str, pad: str, ac: bool, device: str) -> None:
    xa, ga = RNG.standard_normal((2, 2, 3, 4, 5)), _grid((2, 3, 2, 2, 3), -2.5, 2.5)
    ours, theirs = _both(_gs(mode=mode, padding_mode=pad, align_corners=ac), [xa, ga], device)
    assert_same(ours[:2], theirs[:2], **F64)
    assert ours[2] == theirs[2] == "GridSampler3DBackward0"


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "nearest"])
@pytest.mark.parametrize("ac", [False, True])
def test_grid_sample_on_pixel_centres(mode: str, ac: bool, device: str) -> None:
    """An identity affine grid lands on pixel centres (integer coordinates, where the bilinear
    grid gradient is one-sided): PyTorch's rounding and choice of side."""
    xa = RNG.standard_normal((1, 2, 3, 4))

    def fn(T: Any, x: Any, th: Any) -> Any:
        g = T.nn.functional.affine_grid(th, (1, 2, 3, 4), align_corners=ac)
        return T.nn.functional.grid_sample(x, g, mode=mode, padding_mode="border",
                                           align_corners=ac)

    ours, theirs = _both(fn, [xa, np.array([[[1.0, 0, 0], [0, 1, 0]]])], device)
    assert_same(ours[:2], theirs[:2], **F64)
    assert_same(ours[0], t(torch, "cpu", xa), **F64)


def test_grid_sample_float32(device: str) -> None:
    xa, ga = RNG.standard_normal((2, 3, 4, 5)), _grid((2, 3, 6, 2))
    ours, theirs = _both(_gs(mode="bicubic", padding_mode="reflection", align_corners=False),
                         [xa, ga], device, "float32")
    assert_same(ours[:2], theirs[:2], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode, pad, nd", [("bilinear", "zeros", 2), ("bicubic", "reflection", 2),
                                            ("bilinear", "border", 3)])
def test_grid_sample_double_backward_matches_torch(mode: str, pad: str, nd: int,
                                                   device: str) -> None:
    xa = RNG.standard_normal((1, 2, 3, 4) if nd == 2 else (1, 2, 3, 3, 4))
    ga = _grid((1, 2, 3, 2) if nd == 2 else (1, 2, 2, 2, 3))
    for order in (0, 1):  # NOTE: second derivative w.r.t. the input, then w.r.t. the grid
        arrays = [xa, ga] if order == 0 else [ga, xa]

        def fn(T: Any, a: Any, b: Any, order: int = order) -> Any:
            x, g = (a, b) if order == 0 else (b, a)
            return T.nn.functional.grid_sample(x, g, mode=mode, padding_mode=pad,
                                               align_corners=False)

        ours, theirs = _both(fn, arrays, device, second=True)
        assert_same(ours[3], theirs[3], **F64)


@pytest.mark.parametrize("mode, pad, shapes", [
    ("bilinear", "reflection", ((1, 2, 3, 4), (1, 2, 2, 2))),
    ("bicubic", "zeros", ((1, 1, 3, 3), (1, 2, 1, 2))),
    ("nearest", "border", ((1, 1, 3, 3), (1, 2, 1, 2))),
    ("bilinear", "zeros", ((1, 1, 2, 3, 3), (1, 1, 2, 1, 3))),
])
def test_grid_sample_gradgradcheck(mode: str, pad: str, shapes: Any, device: str) -> None:
    x = t(ag, device, RNG.standard_normal(shapes[0]), True)
    g = t(ag, device, _grid(shapes[1]), True)

    def f(x: Any, g: Any) -> Any:
        return ag.nn.functional.grid_sample(x, g, mode=mode, padding_mode=pad,
                                            align_corners=True)

    assert ag.autograd.gradcheck(f, (x, g))
    assert ag.autograd.gradgradcheck(f, (x, g))


@pytest.mark.parametrize("xs, gs", [((0, 2, 3, 3), (0, 2, 2, 2)), ((1, 0, 3, 3), (1, 2, 2, 2)),
                                    ((1, 2, 3, 3), (1, 0, 2, 2))])
def test_grid_sample_empty(xs: Any, gs: Any, device: str) -> None:
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x = T.ones(*xs, dtype=T.float64, device=dev, requires_grad=True)
        g = T.zeros(*gs, dtype=T.float64, device=dev, requires_grad=True)
        out = T.nn.functional.grid_sample(x, g, align_corners=False)
        res.append([out, list(T.autograd.grad(out.sum(), [x, g]))])
    assert_same(res[0], res[1])


def test_align_corners_none_warns(device: str) -> None:
    x, g = ag.ones(1, 1, 2, 2, device=device), ag.zeros(1, 1, 1, 2, device=device)
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        out = ag.nn.functional.grid_sample(x, g)
    assert_same(out, torch.ones(1, 1, 1, 1))
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        ag.nn.functional.affine_grid(ag.ones(1, 2, 3, device=device), (1, 1, 2, 2))
    with pytest.warns(UserWarning, match="unit-size grids"):
        ag.nn.functional.affine_grid(ag.ones(1, 2, 3, device=device), (1, 1, 1, 2),
                                     align_corners=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.nn.functional.grid_sample(x, g, align_corners=True)


@pytest.mark.parametrize("size, tshape", [((2, 3, 4, 5), (2, 2, 3)), ((2, 1, 3, 4, 2), (2, 3, 4)),
                                          ((1, 1, 1, 3), (1, 2, 3)),
                                          ((1, 2, 2, 1, 3), (1, 3, 4))])
@pytest.mark.parametrize("ac", [False, True])
def test_affine_grid_matches_torch(size: Any, tshape: Any, ac: bool, device: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NOTE: unit sizes with align_corners warn
        ours, theirs = _both(lambda T, th: T.nn.functional.affine_grid(th, size, align_corners=ac),
                             [RNG.standard_normal(tshape)], device)
    assert_same(ours[:2], theirs[:2], **F64)
    assert ours[0].stride() == theirs[0].stride()
    assert ours[2] == theirs[2] == "AffineGridGeneratorBackward0"


def test_affine_grid_then_grid_sample_gradgradcheck(device: str) -> None:
    th = t(ag, device, [[[0.9, 0.2, 0.1], [-0.3, 1.1, 0.05]]], True)
    x = t(ag, device, RNG.standard_normal((1, 1, 3, 4)), True)

    def f(th: Any, x: Any) -> Any:
        g = ag.nn.functional.affine_grid(th, (1, 1, 2, 3), align_corners=False)
        return ag.nn.functional.grid_sample(x, g, align_corners=False)

    assert ag.autograd.gradgradcheck(f, (th, x))


def _s(xs: Any, gs: Any, xdt: str = "float64", gdt: str = "float64", **kw: Any) -> Any:
    kw.setdefault("align_corners", False)
    return lambda T, dev: T.nn.functional.grid_sample(
        T.ones(*xs, dtype=getattr(T, xdt), device=dev),
        T.zeros(*gs, dtype=getattr(T, gdt), device=dev), **kw)


def _a(tshape: Any, size: Any, dt: str = "float64", **kw: Any) -> Any:
    kw.setdefault("align_corners", False)
    return lambda T, dev: T.nn.functional.affine_grid(
        T.ones(*tshape, dtype=getattr(T, dt), device=dev), size, **kw)


MISUSE = {
    "bad mode": _s((1, 1, 3, 3), (1, 2, 2, 2), mode="linear"),
    "bad padding": _s((1, 1, 3, 3), (1, 2, 2, 2), padding_mode="edge"),
    "dtype mismatch": _s((1, 1, 3, 3), (1, 2, 2, 2), "float64", "float32"),
    "dtype mismatch 3-D": _s((1, 1, 3, 3, 3), (1, 2, 2, 2, 3), "float32", "float64"),
    "integer": _s((1, 1, 3, 3), (1, 2, 2, 2), "int64", "int64"),
    "integer 3-D": _s((1, 1, 3, 3, 3), (1, 2, 2, 2, 3), "int64", "int64"),
    "3-D input": _s((1, 3, 3), (1, 2, 2)),
    "3-D input, 4-D grid": _s((1, 3, 3), (1, 2, 2, 2)),
    "6-D input": _s((1, 1, 3, 3, 3, 3), (1, 2, 2, 2, 2, 4)),
    "4-D input, 5-D grid": _s((1, 1, 3, 3), (1, 1, 2, 2, 2)),
    "batch": _s((2, 1, 3, 3), (1, 2, 2, 2)),
    "last dim": _s((1, 1, 3, 3), (1, 2, 2, 3)),
    "last dim 3-D": _s((1, 1, 3, 3, 3), (1, 2, 2, 2, 2)),
    "empty spatial": _s((1, 1, 0, 3), (1, 2, 2, 2)),
    "bicubic 5-D": _s((1, 1, 3, 3, 3), (1, 2, 2, 2, 3), mode="bicubic"),
    "not a tensor": lambda T, dev: T.nn.functional.grid_sample(
        T.ones(1, 1, 3, 3, device=dev), 3, align_corners=False),
    "theta integer": _a((1, 2, 3), (1, 1, 2, 2), "int64"),
    "theta shape": _a((1, 3, 3), (1, 1, 2, 2)),
    "theta shape 3-D": _a((1, 2, 3), (1, 1, 2, 2, 2)),
    "theta 2-D": _a((2, 3), (1, 1, 2, 2)),
    "size 3": _a((1, 2, 3), (1, 2, 2)),
    "batch of theta": _a((2, 2, 3), (1, 1, 2, 2)),
    "batch of size": _a((1, 2, 3), [3, 1, 2, 2]),
    "zero size": _a((1, 2, 3), (1, 1, 0, 2)),
    "zero channels": _a((1, 2, 3), (1, 0, 2, 2)),
    "zero size, unit size": _a((1, 2, 3), (1, 1, 1, 0), align_corners=True),
}

test_misuse = catalogue_test(MISUSE)
