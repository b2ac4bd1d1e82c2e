"""torch.fft against the oracle: every transform with ``n``/``s``, ``dim`` and ``norm``, real,
integer and complex input, values and gradients (a real loss weighing real and imaginary parts
differently), gradcheck, the shifts and frequencies, and PyTorch's errors."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck
from tests.misuse._catalogue import Case, catalogue_test
from tests.ops._same import same

_RNG = np.random.default_rng(0)
_REAL = _RNG.standard_normal((3, 4, 5))
_CPLX = _RNG.standard_normal((3, 4, 5)) + 1j * _RNG.standard_normal((3, 4, 5))


def _loss(y: Any) -> Any:
    if y.is_complex():
        w = y.real * 1.5 - y.imag * 0.75
    else:
        w = y * 1.25
    return (w * w.detach().new_tensor(np.arange(w.numel()).reshape(w.shape) % 3 + 1)).sum()


NORMS = [None, "backward", "ortho", "forward"]
ONE = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
# (n, dim): default, padded, trimmed, another dim
ONE_ARGS = [(None, -1), (8, -1), (3, 1), (None, 0), (6, -3)]
MANY = ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fft2", "ifft2", "rfft2", "irfft2",
        "hfft2", "ihfft2"]
MANY_ARGS = [(None, None), ((4, 6), None), ((2, 3, 4), None), (None, (0, 2)), ((5, 2), (2, 0)),
             ((-1, 3), (1, 2)), (None, (-1,))]
_REAL_IN = ("rfft", "ihfft", "rfftn", "ihfftn", "rfft2", "ihfft2")


def _inputs(name: str) -> list[tuple[str, Any]]:
    if name in _REAL_IN:
        return [("float64", _REAL), ("float32", _REAL)]
    return [("complex128", _CPLX), ("complex64", _CPLX), ("float64", _REAL)]


def _run(T: Any, fn: Callable[[Any], Any], dtype: str, data: Any) -> tuple[Any, Any]:
    x = T.tensor(data, dtype=getattr(T, dtype), requires_grad=True)
    y = fn(x)
    _loss(y).backward()
    return y.detach(), x.grad


def _check(fn_of: Callable[[Any], Callable[[Any], Any]], dtype: str, data: Any) -> None:
    try:
        theirs = _run(torch, fn_of(torch), dtype, data)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            _run(ag, fn_of(ag), dtype, data)
        return
    ours = _run(ag, fn_of(ag), dtype, data)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype in ("float32", "complex64") else \
        dict(rtol=1e-9, atol=1e-9)
    for a, b in zip(ours, theirs):
        same(a, b, strides=False, **tol)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("args", ONE_ARGS, ids=str)
@pytest.mark.parametrize("name", ONE)
def test_one_dim(name: str, args: Any, norm: Any) -> None:
    n, dim = args
    for dtype, data in _inputs(name):
        _check(lambda T: lambda x: getattr(T.fft, name)(x, n=n, dim=dim, norm=norm), dtype, data)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("args", MANY_ARGS, ids=str)
@pytest.mark.parametrize("name", MANY)
def test_many_dims(name: str, args: Any, norm: Any) -> None:
    s, dim = args
    kw: dict[str, Any] = {"norm": norm}
    if s is not None:
        kw["s"] = s
    if dim is not None:
        kw["dim"] = dim
    for dtype, data in _inputs(name)[:2]:
        _check(lambda T: lambda x: getattr(T.fft, name)(x, **kw), dtype, data)


@pytest.mark.parametrize("name", ONE + ["fftn", "rfftn", "irfftn", "ifft2"])
def test_device_and_layouts(device: str, name: str) -> None:
    """Non-contiguous input on every device; integer input; grad_fn names."""
    for T, dev in ((torch, "cpu"), (ag, device)):
        src = _REAL if name in _REAL_IN else _CPLX
        x = T.tensor(src, device=dev).transpose(0, 2)[1:]
        y = getattr(T.fft, name)(x)
        if T is torch:
            theirs = y
        else:
            same(y, theirs, strides=False, rtol=1e-4, atol=1e-4)
    for T in (torch, ag):
        y = getattr(T.fft, name)(T.arange(6, device=dev if T is ag else "cpu").reshape(2, 3))
        if T is torch:
            theirs = y
        else:
            same(y, theirs, strides=False, rtol=1e-5, atol=1e-5)
    names = [getattr(T.fft, name)(T.tensor(_REAL if name in _REAL_IN else _CPLX,
                                           requires_grad=True)).grad_fn.name() for T in (torch, ag)]
    assert names[0] == names[1]


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn",
                                  "irfftn", "rfft2"])
def test_gradcheck(name: str) -> None:
    src = _REAL if name in _REAL_IN else _CPLX
    x = ag.tensor(src[:2, :3], requires_grad=True)
    f = getattr(ag.fft, name)
    assert gradcheck(lambda x: f(x, norm="ortho"), (x,))
    if name in ("fft", "irfft", "rfft"):
        assert gradgradcheck(lambda x: f(x), (x,))


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2), ()])
def test_shifts(device: str, name: str, dim: Any) -> None:
    kw = {} if dim is None else {"dim": dim}
    _check(lambda T: lambda x: getattr(T.fft, name)(x, **kw), "float64", _REAL)
    _check(lambda T: lambda x: getattr(T.fft, name)(x, **kw), "complex64", _CPLX)
    if dim in (None, 0, -1):
        same(getattr(ag.fft, name)(ag.arange(7, device=device), **kw),
             getattr(torch.fft, name)(torch.arange(7), **kw))


@pytest.mark.parametrize("n", [0, 1, 4, 7])
def test_freqs(device: str, n: int) -> None:
    for name in ("fftfreq", "rfftfreq"):
        for d, dtype in ((1.0, None), (0.5, "float64"), (3, "float32")):
            kw = {} if dtype is None else {"dtype": dtype}
            ours = getattr(ag.fft, name)(n, d, device=device,
                                         **{k: getattr(ag, v) for k, v in kw.items()})
            theirs = getattr(torch.fft, name)(n, d, **{k: getattr(torch, v) for k, v in kw.items()})
            same(ours, theirs)


def _x(T: Any, dev: str, dtype: Any = None) -> Any:
    return T.ones(2, 3, dtype=dtype, device=dev)


CASES: dict[str, Case] = {
    "bad_norm": lambda T, d: T.fft.fft(_x(T, d), norm="bad"),
    "n_zero": lambda T, d: T.fft.fft(_x(T, d), n=0),
    "dim_out_of_range": lambda T, d: T.fft.fft(_x(T, d), dim=2),
    "rfft_complex": lambda T, d: T.fft.rfft(_x(T, d, T.cfloat)),
    "ihfft_complex": lambda T, d: T.fft.ihfft(_x(T, d, T.cdouble)),
    "half": lambda T, d: T.fft.fft(_x(T, d, T.half)),
    "s_too_long": lambda T, d: T.fft.fftn(_x(T, d), s=(1, 2, 3)),
    "s_dim_mismatch": lambda T, d: T.fft.fftn(_x(T, d), s=(2,), dim=(0, 1)),
    "dims_repeat": lambda T, d: T.fft.fftn(_x(T, d), dim=(0, 0)),
    "fft2_1d": lambda T, d: T.fft.fft2(T.ones(3, device=d)),
    "irfft_one_bin": lambda T, d: T.fft.irfft(T.ones(1, device=d)),
    "irfft_n1": lambda T, d: T.fft.irfft(_x(T, d), n=1),
    "empty": lambda T, d: T.fft.fft(T.ones(0, device=d)),
    "empty_n": lambda T, d: T.fft.fft(T.ones(0, device=d), n=2),
    "bool": lambda T, d: T.fft.fft(T.ones(3, dtype=T.bool, device=d)),
    "scalar": lambda T, d: T.fft.fft(T.tensor(1.0, device=d)),
    "scalar_dim0": lambda T, d: T.fft.fftn(T.tensor(1.0, device=d), dim=(0,)),
    "fftn_0d": lambda T, d: T.fft.fftn(T.tensor(2.0, device=d)),
    "not_tensor": lambda T, d: T.fft.fft([1.0, 2.0]),
    "fftfreq_neg": lambda T, d: T.fft.fftfreq(-1),
}

test_misuse = catalogue_test(CASES)
