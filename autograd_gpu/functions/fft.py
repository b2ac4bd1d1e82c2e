"""``torch.fft``'s functions: argument handling (``n``/``s``, ``dim``, ``norm``, dtypes), then
one ``Fft`` op (``ops/fft.py``). ``hfft``/``ihfft`` are ``irfft``/``rfft`` of conjugates with
the normalization swapped; the shifts are ``roll``; the frequencies are factories.

PyTorch's ``complex32`` is not supported, so float16 input raises ("Unsupported dtype Half"),
as PyTorch does on the CPU.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import dtypes
from ..ops.fft import Fft
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .checks import expect_tensor
from .complex import conj

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftshift",
           "ifftshift", "fftfreq", "rfftfreq"]

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _input(fn: str, x: Any, real: bool | None) -> Tensor:
    """``x`` in the dtype the transform computes in: integers and bools take the default float
    dtype; ``real`` True refuses complex input (rfft), False makes real input complex."""
    expect_tensor(fn, "input", 1, x)
    d = x.dtype
    if d is dtypes.float16:
        raise RuntimeError("Unsupported dtype Half")
    if d.category < 2:
        x = x.to(dtypes.get_default_dtype())
    if real is True and x.dtype.is_complex:
        raise RuntimeError(f"{fn} expects a real input tensor, but got "
                           f"{dtypes.scalar_type_name(x.dtype)}")
    if real is False and not x.dtype.is_complex:
        x = x.to(x.dtype.to_complex())
    return x


def _dims_sizes(x: Tensor, s: Sequence[int] | None, dim: Any, c2r: bool = False
                ) -> tuple[tuple[int, ...], list[int]]:
    """PyTorch's rules for ``s`` and ``dim``: all dims when neither is given, the last
    ``len(s)`` with ``s`` alone; -1 in ``s`` means the input's size (for ``c2r`` the last
    one's default is ``2 * (size - 1)``)."""
    ndim = x.ndim
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        if ndim == 0 and dim:
            raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
        dims = tuple(normalize_dim(d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        dims = tuple(range(ndim - len(s), ndim))
    else:
        dims = tuple(range(ndim))
    sizes = [x.shape[d] for d in dims] if s is None else [
        x.shape[d] if n == -1 else int(n) for d, n in zip(dims, s)]
    if c2r and dims and (s is None or s[-1] == -1):
        sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return dims, sizes


def _c2c(fn: str, x: Tensor, s: Any, dim: Any, norm: str | None, inverse: bool) -> Tensor:
    x = _input(fn, x, None)
    dims, sizes = _dims_sizes(x, s, dim)
    if not x.dtype.is_complex:  # NOTE: a forward transform of real input (FftR2CBackward0)
        return Fft.apply(x, kind="r2c", dims=dims, s=tuple(sizes),  # type: ignore[no-any-return]
                         norm=_norm(norm), onesided=False)
    return Fft.apply(x, kind="c2c", dims=dims, s=tuple(sizes),  # type: ignore[no-any-return]
                     norm=_norm(norm), inverse=inverse)


def _real_inverse(fn: str, x: Tensor, s: Any, dim: Any, norm: str) -> Tensor:
    """The inverse transform of real ``x`` (``ifft`` of a real signal): a forward transform of
    it with the normalization swapped, conjugated."""
    return conj(_c2c(fn, x, s, dim, _SWAP[norm], False))


def _r2c(fn: str, x: Tensor, s: Any, dim: Any, norm: str) -> Tensor:
    x = _input(fn, x, True)
    dims, sizes = _dims_sizes(x, s, dim)
    return Fft.apply(x, kind="r2c", dims=dims, s=tuple(sizes), norm=norm)  # type: ignore[no-any-return]


def _c2r(fn: str, x: Tensor, s: Any, dim: Any, norm: str) -> Tensor:
    x = _input(fn, x, False)
    dims, sizes = _dims_sizes(x, s, dim, c2r=True)
    return Fft.apply(x, kind="c2r", dims=dims, s=tuple(sizes), norm=norm)  # type: ignore[no-any-return]


def _ifft_any(fn: str, x: Any, s: Any, dim: Any, norm: str | None, one: bool) -> Tensor:
    """``ifft`` (``one``: 1-D) or ``ifftn``. NOTE: as PyTorch, a real 1-D input goes through a
    forward real transform and ``conj`` (so its zero imaginary parts print as ``-0.``); n-D
    real input is made complex first."""
    if one and isinstance(x, Tensor) and x.dtype.category < 3 and x.dtype is not dtypes.float16:
        return _real_inverse(fn, x, s, dim, _norm(norm))
    return _c2c(fn, _input(fn, x, False), s, dim, norm, True)


def _one(dim: int, n: int | None) -> tuple[Any, Any]:
    return (None if n is None else (n,)), (dim,)


# ---- one dimension ---------------------------------------------------------------------------

def fft(input: Tensor, n: int | None = None, dim: int = -1,  # noqa: A002
        norm: str | None = None) -> Tensor:
    """The discrete Fourier transform along ``dim``, of length ``n`` (zero-padded or trimmed).

    ``norm``: ``"backward"`` (no scaling, the default), ``"ortho"`` (``1/sqrt(n)``) or
    ``"forward"`` (``1/n``). Real input gives the full (Hermitian) complex spectrum.

    Example:
        >>> fft(tensor([1.0, 0.0, 0.0, 0.0]))
        tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    s, d = _one(dim, n)
    return _c2c("fft_fft", input, s, d, norm, False)


def ifft(input: Tensor, n: int | None = None, dim: int = -1,  # noqa: A002
         norm: str | None = None) -> Tensor:
    """The inverse of ``fft`` (``norm="backward"`` scales by ``1/n``)."""
    s, d = _one(dim, n)
    return _ifft_any("fft_ifft", input, s, d, norm, True)


def rfft(input: Tensor, n: int | None = None, dim: int = -1,  # noqa: A002
         norm: str | None = None) -> Tensor:
    """The FFT of real ``input``: the ``n // 2 + 1`` non-redundant bins."""
    s, d = _one(dim, n)
    return _r2c("rfft", input, s, d, _norm(norm))


def irfft(input: Tensor, n: int | None = None, dim: int = -1,  # noqa: A002
          norm: str | None = None) -> Tensor:
    """The inverse of ``rfft``: a real signal of length ``n`` (default ``2 * (m - 1)``) from a
    one-sided spectrum of ``m`` bins (the imaginary parts of the first bin and, for even ``n``,
    the last are ignored)."""
    s, d = _one(dim, n)
    return _c2r("irfft", input, s, d, _norm(norm))


def hfft(input: Tensor, n: int | None = None, dim: int = -1,  # noqa: A002
         norm: str | None = None) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half: a real spectrum of
    length ``n`` (``irfft`` of the conjugate with the normalization swapped)."""
    s, d = _one(dim, n)
    return _c2r("hfft", conj(_input("hfft", input, False)), s, d, _SWAP[_norm(norm)])


def ihfft(input: Tensor, n: int | None = None, dim: int = -1,  # noqa: A002
          norm: str | None = None) -> Tensor:
    """The inverse of ``hfft``: the one-sided spectrum of real ``input``, conjugated and
    scaled as an inverse transform."""
    s, d = _one(dim, n)
    return conj(_r2c("ihfft", input, s, d, _SWAP[_norm(norm)]))


# ---- two and n dimensions --------------------------------------------------------------------

def fftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
         norm: str | None = None) -> Tensor:
    """``fft`` over ``dim`` (all dims by default; the last ``len(s)`` when only ``s`` is
    given), with signal sizes ``s``."""
    return _c2c("fft_fftn", input, s, dim, norm, False)


def ifftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
          norm: str | None = None) -> Tensor:
    """The inverse of ``fftn``."""
    return _ifft_any("fft_ifftn", input, s, dim, norm, False)


def rfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
          norm: str | None = None) -> Tensor:
    """``fftn`` of real ``input``, one-sided along the last of ``dim``."""
    return _r2c("rfftn", input, s, dim, _norm(norm))


def irfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
           norm: str | None = None) -> Tensor:
    """The inverse of ``rfftn``: real output of sizes ``s`` (the last defaults to
    ``2 * (m - 1)``)."""
    return _c2r("irfftn", input, s, dim, _norm(norm))


def hfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
          norm: str | None = None) -> Tensor:
    """``hfft`` over several dims: ``irfftn`` of the conjugate, normalization swapped."""
    return _c2r("hfftn", conj(_input("hfftn", input, False)), s, dim, _SWAP[_norm(norm)])


def ihfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
           norm: str | None = None) -> Tensor:
    """The inverse of ``hfftn``: the conjugate of ``rfftn``, normalization swapped."""
    return conj(_r2c("ihfftn", input, s, dim, _SWAP[_norm(norm)]))


def _two(fn: Any, doc: str) -> Any:
    def f(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1),  # noqa: A002
          norm: str | None = None) -> Tensor:
        return fn(input, s, dim, norm)  # type: ignore[no-any-return]

    f.__name__ = f.__qualname__ = fn.__name__[:-1] + "2"
    f.__doc__ = doc
    return f


fft2 = _two(fftn, "``fftn`` over the last two dims.")
ifft2 = _two(ifftn, "``ifftn`` over the last two dims.")
rfft2 = _two(rfftn, "``rfftn`` over the last two dims.")
irfft2 = _two(irfftn, "``irfftn`` over the last two dims.")
hfft2 = _two(hfftn, "``hfftn`` over the last two dims.")
ihfft2 = _two(ihfftn, "``ihfftn`` over the last two dims.")


# ---- shifts and frequencies ------------------------------------------------------------------

def _shift(input: Tensor, dim: Any, sign: int) -> Tensor:  # noqa: A002
    if dim is None:
        dims: tuple[int, ...] = tuple(range(input.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        raise RuntimeError("`shifts` required")
    shifts = tuple(sign * (input.shape[normalize_dim(d, input.ndim)] // 2) for d in dims)
    from .manip import roll

    return roll(input, shifts, dims)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """Moves the zero frequency to the middle: ``roll`` by ``n // 2`` along ``dim`` (all
    dims by default)."""
    return _shift(input, dim, 1)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The inverse of ``fftshift``: ``roll`` by ``-(n // 2)``."""
    return _shift(input, dim, -1)


def _freq(fn: str, n: int, d: float, real: bool, dtype: Any, device: Any,
          requires_grad: bool) -> Tensor:
    from ..creation import finish
    from ..device import as_device

    dtypes.check_dtype(fn, dtype)
    dt = dtype or dtypes.get_default_dtype()
    dev = as_device(device)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if n == 0:  # NOTE: rfftfreq(0) is [nan] in PyTorch (0 / 0)
        out = dev.backend.full((1,), float("nan"), dt.name) if real else \
            dev.backend.zeros((0,), dt.name)
        return finish(out, dev, requires_grad)
    return finish(dev.backend.fftfreq(n, d, real, dt.name), dev, requires_grad)


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None,
            requires_grad: bool = False, **_: Any) -> Tensor:
    """The sample frequencies of an ``n``-point ``fft`` with spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``."""
    return _freq("fftfreq", n, d, False, dtype, device, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, **_: Any) -> Tensor:
    """The sample frequencies of an ``n``-point ``rfft``: ``[0, ..., n // 2] / (d * n)``."""
    return _freq("rfftfreq", n, d, True, dtype, device, requires_grad)
