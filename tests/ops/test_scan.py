"""Scans against torch: cumsum, cumprod, cummax, cummin, logcumsumexp and ``cumsum_`` /
``cumprod_``. Values, dtypes, shapes and strides over shapes (0-d, empty, odd sizes), every dim
(negative too), layouts (transposed, sliced) and dtypes; ties and NaN for cummax/cummin
(PyTorch's last occurrence); zeros, inf and NaN through cumprod's gradient; gradients against
torch's ``.grad``, ``gradcheck`` and ``gradgradcheck``; ``out=`` and the in-place forms.
PyTorch's errors are in ``tests/misuse/test_scan.py``."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.ops._same import same as _same, to_numpy
from autograd_gpu.autograd import gradcheck, gradgradcheck

DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"]
SHAPES = [(), (0,), (1,), (7,), (3, 4), (2, 0, 3), (2, 3, 5)]
LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "contiguous": lambda x: x,
    "transposed": lambda x: x.transpose(0, -1) if x.ndim > 1 else x,
    "sliced": lambda x: x[..., ::2] if x.ndim else x,
}


def _data(shape: tuple[int, ...], dtype: str, seed: int = 0, ties: bool = True) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("float"):
        a = rng.integers(-3, 4, shape) * 0.5 if ties else rng.standard_normal(shape)
        return np.asarray(a, dtype=dtype)
    lo = 0 if dtype == "uint8" else -3
    return rng.integers(lo, 4, shape).astype(dtype)


def _pair(a: np.ndarray, device: str, layout: str = "contiguous",
          grad: bool = False) -> tuple[Any, Any]:
    """The same data as a torch tensor and one of ours on ``device``, both laid out alike."""
    t = torch.from_numpy(a.copy()).requires_grad_(grad)
    o = ag.tensor(a, device=device, requires_grad=grad)
    return LAYOUTS[layout](t), LAYOUTS[layout](o)


_np = to_numpy


def same(ours: Any, theirs: Any, rtol: float = 1e-06, atol: float = 1e-06,
         strides: bool = True, zeros: bool = False) -> None:
    """``tests.ops._same.same`` with this family's default tolerances."""
    _same(ours, theirs, rtol, atol, strides, zeros)


def _dims(shape: tuple[int, ...]) -> list[int]:
    n = max(len(shape), 1)
    return [*range(n), -1]


def _cases() -> list[Any]:
    return [pytest.param(s, d, lay, id=f"{s}-{d}-{lay}") for s in SHAPES for d in DTYPES
            for lay in LAYOUTS if lay == "contiguous" or len(s) > 1]


# ---- values --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dtype,layout", _cases())
def test_cumsum_cumprod(shape: tuple[int, ...], dtype: str, layout: str, device: str) -> None:
    t, o = _pair(_data(shape, dtype), device, layout)
    tol = {"rtol": 1e-3, "atol": 1e-3} if dtype == "float16" else {}
    for dim in _dims(shape):
        same(ag.cumsum(o, dim), torch.cumsum(t, dim), **tol)
        same(o.cumprod(dim), t.cumprod(dim), **tol)
        same(o.cumsum(dim, dtype=ag.float64), t.cumsum(dim, dtype=torch.float64))
        if dtype != "bool":
            same(ag.cumprod(o, dim, dtype=ag.int32), torch.cumprod(t, dim, dtype=torch.int32))


@pytest.mark.parametrize("shape,dtype,layout", _cases())
def test_cummax_cummin(shape: tuple[int, ...], dtype: str, layout: str, device: str) -> None:
    t, o = _pair(_data(shape, dtype), device, layout)
    for dim in _dims(shape):
        same(ag.cummax(o, dim), torch.cummax(t, dim))
        same(o.cummin(dim), t.cummin(dim))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_logcumsumexp(shape: tuple[int, ...], dtype: str, device: str) -> None:
    t, o = _pair(_data(shape, dtype, ties=False), device)
    tol = {"rtol": 1e-3, "atol": 1e-3} if dtype == "float16" else {"rtol": 1e-6}
    for dim in _dims(shape):
        same(ag.logcumsumexp(o, dim), torch.logcumsumexp(t, dim), **tol)
        same(o.logcumsumexp(dim), t.logcumsumexp(dim), **tol)


SPECIAL = [
    [1.0, math.nan, 3.0, math.nan, 0.0],
    [math.nan, 1.0, 1.0],
    [-math.inf, 1.0, math.inf, 2.0, math.nan, 3.0],
    [math.inf, -math.inf, math.inf],
    [-math.inf, -math.inf, -1000.0, 0.0, 1000.0],
    [2.0, 0.0, 3.0, 0.0, 4.0],
    [0.0, -0.0, 0.0, -1.0],
]


@pytest.mark.parametrize("data", SPECIAL)
def test_special_values(data: list[float], device: str) -> None:
    """NaN propagation (the last NaN's index), infinities, signed zeros."""
    t, o = _pair(np.array(data, dtype="float32"), device)
    for name in ("cumsum", "cumprod", "logcumsumexp"):
        same(getattr(ag, name)(o, 0), getattr(torch, name)(t, 0))
    same(ag.cummax(o, 0), torch.cummax(t, 0))
    same(ag.cummin(o, 0), torch.cummin(t, 0))


def test_float32_accumulates_like_torch(device: str) -> None:
    """A long float32 cumsum matches PyTorch's CPU (which accumulates in double) to float32's
    rounding; on CUDA it accumulates in float32, as PyTorch's CUDA kernel does."""
    a = np.random.default_rng(1).standard_normal(100_000).astype("float32")
    t, o = _pair(a, device)
    tol = {"rtol": 1e-6, "atol": 1e-4} if device == "cpu" else {"rtol": 1e-4, "atol": 1e-2}
    same(ag.cumsum(o, 0), torch.cumsum(t, 0), **tol)
    same(ag.cumprod(o[:50] + 1, 0), torch.cumprod(t[:50] + 1, 0), rtol=1e-5)


@pytest.mark.parametrize("shape,dim", [((3, 2000), 1), ((5, 1001), -1), ((300, 300), 0),
                                       ((4, 90, 80), 1), ((2, 3000), 0)])
@pytest.mark.parametrize("special", ["finite", "inf", "nan"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_large_scans(shape: tuple[int, ...], dim: int, special: str, dtype: str,
                     device: str) -> None:
    """Sizes past NumPy's fast paths (16-element blocks along the last axis, slice-wise along
    others), with the infinities and NaNs that send the blocks back to the plain scan; and the
    gradient, a reversed scan."""
    a = np.random.default_rng(2).uniform(0.5, 1.5, shape)
    if special != "finite":
        a.reshape(-1)[[7, 911]] = math.inf if special == "inf" else math.nan
    t, o = _pair(a.astype(dtype), device, grad=dtype != "float16")
    tol = {"rtol": 2e-3, "atol": 1e-2} if dtype == "float16" else {"rtol": 1e-5, "atol": 1e-4}
    same(ag.cumsum(o, dim), torch.cumsum(t, dim), **tol)
    same(ag.cumprod(o * 0.999, dim), torch.cumprod(t * 0.999, dim), **tol)
    if dtype != "float16":
        torch.cumsum(t, dim).sum().backward()
        ag.cumsum(o, dim).sum().backward()
        same(o.grad, t.grad)


# ---- gradients -----------------------------------------------------------------------------------

GRAD_DATA = {
    "plain": [[0.5, -1.2, 2.0, 1.5], [0.3, 0.7, -0.4, 1.1], [2.0, -0.6, 0.9, -1.3]],
    "zeros": [[2.0, 0.0, 3.0, 0.0], [0.0, 1.5, 2.0, -1.0], [1.0, 2.0, 0.0, 3.0]],
    "ties": [[1.0, 1.0, 2.0, 2.0], [3.0, 1.0, 3.0, 0.5], [0.0, 0.0, 0.0, 0.0]],
}
SCANS: dict[str, Callable[[Any, Any, int], Any]] = {
    "cumsum": lambda T, x, d: T.cumsum(x, d),
    "cumsum_dtype": lambda T, x, d: T.cumsum(x.float(), d, dtype=T.float64),
    "cumprod": lambda T, x, d: T.cumprod(x, d),
    "cummax": lambda T, x, d: T.cummax(x, d)[0],
    "cummin": lambda T, x, d: T.cummin(x, d).values,
    "logcumsumexp": lambda T, x, d: T.logcumsumexp(x, d),
    "cumsum_method": lambda T, x, d: x.cumsum(d),
}


@pytest.mark.parametrize("data", sorted(GRAD_DATA))
@pytest.mark.parametrize("name", sorted(SCANS))
def test_grad(name: str, data: str, device: str) -> None:
    """``.grad`` as torch's, the node names, and gradcheck/gradgradcheck (except at ties,
    where finite differences see a kink)."""
    a = np.array(GRAD_DATA[data], dtype="float64")
    fn = SCANS[name]
    for dim in (0, 1, -1):
        t, o = _pair(a, device, grad=True)
        w = np.random.default_rng(dim + 5).standard_normal(a.shape)
        yt, yo = fn(torch, t, dim), fn(ag, o, dim)
        assert yo.grad_fn.name() == yt.grad_fn.name()
        (yt * torch.from_numpy(w).to(yt.dtype)).sum().backward()
        (yo * ag.tensor(w, device=device).to(yo.dtype)).sum().backward()
        same(o.grad, t.grad, rtol=1e-5)
        if data != "plain" and name in ("cummax", "cummin") or name == "cumsum_dtype":
            continue  # NOTE: a kink at ties; float32 in between is too coarse for gradcheck
        x = ag.tensor(a, device=device, requires_grad=True)
        f = (lambda d: lambda v: fn(ag, v, d))(dim)
        assert gradcheck(f, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)
        assert gradgradcheck(f, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)


CUMPROD_GRAD = [
    [2.0, 0.0, 3.0, 0.0, 4.0],
    [2.0, 0.0, 3.0, math.nan, 4.0],
    [2.0, 0.0, 3.0, math.inf, 4.0],
    [2.0, math.inf, 3.0, 0.0, 4.0],
    [2.0, 0.5, 3.0, math.inf, 4.0],
    [math.nan, 2.0, 0.5, 3.0, 0.0],
    [0.0, 0.0, 1.0],
    [0.0],
    [3.0, 0.0],
]


@pytest.mark.parametrize("data", CUMPROD_GRAD)
def test_cumprod_grad_special(data: list[float], device: str) -> None:
    """Zeros, inf and NaN through cumprod's backward: PyTorch's values exactly."""
    t, o = _pair(np.array(data), device, grad=True)
    torch.cumprod(t, 0).sum().backward()
    ag.cumprod(o, 0).sum().backward()
    same(o.grad, t.grad)


def test_cumprod_double_backward_with_zeros(device: str) -> None:
    """create_graph through zeros takes the differentiable formula: torch's second
    derivatives."""
    a = np.array([[2.0, 0.0, 3.0, 0.5], [1.0, 2.0, 0.0, 0.0]])
    t, o = _pair(a, device, grad=True)
    w = torch.tensor([[1.0, -2.0, 0.5, 3.0], [2.0, 1.0, -1.0, 0.5]], dtype=torch.float64)
    (gt,) = torch.autograd.grad((torch.cumprod(t, 1) * w).sum(), t, create_graph=True)
    (go,) = ag.autograd.grad((ag.cumprod(o, 1) * ag.tensor(w.numpy(), device=device)).sum(), o,
                             create_graph=True)
    same(go, gt)
    (ht,) = torch.autograd.grad((gt * gt).sum(), t)
    (ho,) = ag.autograd.grad((go * go).sum(), o)
    same(ho, ht)


def test_logcumsumexp_grad_infinities(device: str) -> None:
    for data in ([-math.inf, 1.0, math.inf, 2.0], [-math.inf, -math.inf, 2.0], [1.0, math.nan]):
        t, o = _pair(np.array(data, dtype="float32"), device, grad=True)
        torch.logcumsumexp(t, 0).sum().backward()
        ag.logcumsumexp(o, 0).sum().backward()
        same(o.grad, t.grad)


# ---- out= and in place ---------------------------------------------------------------------------

def test_out_and_inplace(device: str) -> None:
    t, o = _pair(np.array([[1.5, 1.5, -2.0], [0.5, 3.0, 1.0]], dtype="float32"), device)
    for dt in ("int64", "float64", "float32"):
        ot, oo = torch.zeros(2, 3, dtype=getattr(torch, dt)), ag.zeros(2, 3, dtype=getattr(ag, dt),
                                                                     device=device)
        assert ag.cumsum(o, 1, out=oo) is oo
        torch.cumsum(t, 1, out=ot)
        same(oo, ot)
        ag.cumprod(o, 0, out=oo)
        torch.cumprod(t, 0, out=ot)
        same(oo, ot)
    vt, it = torch.zeros(2, 3), torch.zeros(2, 3, dtype=torch.int64)
    vo, io = ag.zeros(2, 3, device=device), ag.zeros(2, 3, dtype=ag.int64, device=device)
    res = ag.cummax(o, 1, out=(vo, io))
    same(res, torch.cummax(t, 1, out=(vt, it)))
    assert res[0] is vo and res.indices is io
    lt, lo = torch.zeros(1), ag.zeros(1, device=device)
    with pytest.warns(UserWarning, match="was resized"):
        ag.logcumsumexp(o, 0, out=lo)
    with pytest.warns(UserWarning, match="was resized"):
        torch.logcumsumexp(t, 0, out=lt)
    same(lo, lt)
    for dt in ("int32", "float32", "float64"):
        it2, io2 = _pair(np.array([[1, 2, 3], [4, 5, 6]], dtype=dt), device)
        same(io2.cumsum_(1), it2.cumsum_(1))
        same(io2.cumprod_(0), it2.cumprod_(0))


def test_inplace_grad(device: str) -> None:
    """``y.cumsum_(d)`` / ``y.cumprod_(d)`` on a non-leaf: the node and gradient as torch's."""
    a = np.array([[0.5, 2.0, -1.0], [1.5, -0.5, 3.0]])
    t, o = _pair(a, device, grad=True)
    yt, yo = t * 2, o * 2
    yt.cumsum_(1).cumprod_(0)
    yo.cumsum_(1).cumprod_(0)
    assert yo.grad_fn.name() == yt.grad_fn.name()
    yt.sum().backward()
    yo.sum().backward()
    same(o.grad, t.grad)
