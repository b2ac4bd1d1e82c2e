"""More factories: ``empty_strided``, ``scalar_tensor``, ``logspace``, the deprecated
``range``, the window functions (``hann_window``, ``hamming_window``, ``bartlett_window``,
``blackman_window``, ``kaiser_window``) and ``vander``.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

import builtins
import math
import warnings
from typing import Any, Callable, Sequence

from .. import dtypes
from ..autograd.node import user_stacklevel
from ..device import as_device
from ..tensor import Tensor
from .checks import expect_tensor, invalid_arguments

__all__ = ["empty_strided", "scalar_tensor", "logspace", "range", "hann_window",
           "hamming_window", "bartlett_window", "blackman_window", "kaiser_window", "vander"]


def _creation() -> Any:
    from .. import creation  # late: creation builds on the functions

    return creation


def _finish(data: Any, dev: Any, requires_grad: bool) -> Tensor:
    return _creation().finish(data, dev, requires_grad)


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                  device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """An uninitialised tensor of ``size`` with element ``stride`` (any strides: dense in any
    order, with gaps, or overlapping), on storage just large enough for it."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"{list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    dt = dtype or dtypes.get_default_dtype()
    dev = as_device(device)
    b = dev.backend
    n = 0 if 0 in size else 1 + sum((d - 1) * s for d, s in zip(size, stride))
    buf = b.empty((max(n, 1),), dt.name)
    item = buf.itemsize
    data = b.as_strided(buf, size, tuple(s * item for s in stride), writeable=True)
    return _finish(data, dev, requires_grad)


def scalar_tensor(s: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A 0-d tensor holding the number ``s`` (the default float dtype unless ``dtype``)."""
    if isinstance(s, Tensor):
        s = s.item()
    return _creation().tensor(s, dtype=dtype or dtypes.get_default_dtype(), device=device,
                              requires_grad=requires_grad)


def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """``base ** linspace(start, end, steps)``, computed in double and cast to ``dtype``."""
    c = _creation()
    exps = c.linspace(start, end, steps, dtype=dtypes.float64, device=device)
    dt = dtype or dtypes.get_default_dtype()
    out = float(base) ** exps
    return _finish(out.to(dt)._data, out._device, requires_grad)


def range(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,  # noqa: A001
          device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """``start, start + step, ...`` up to and including ``end`` (deprecated in PyTorch, with
    its warning; ``arange`` excludes ``end``)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=user_stacklevel())
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dt = dtype or dtypes.get_default_dtype()
    c = _creation()
    out = c.arange(n, dtype=dtypes.float64, device=device) * step + start
    return _finish(out.to(dt)._data, out._device, requires_grad)


def _window(name: str, formula: Callable[[Any, int], Any]) -> Callable[..., Tensor]:
    """A window function of PyTorch's signature: ``formula(n, N)`` on ``n = arange(N)`` as
    float64 (``N``: the length of the symmetric window; a periodic window is the symmetric
    one of length ``window_length + 1`` without its last point)."""

    def window(window_length: int, periodic: bool = True, *args: Any, dtype: Any = None,
               device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
        if not isinstance(window_length, int) or isinstance(window_length, bool):
            given = {k: v for k, v in (("dtype", dtype), ("device", device)) if v is not None}
            if given or requires_grad:
                raise invalid_arguments(name, (window_length, periodic, *args)[:1 + len(args)],
                                        {**given, **({"requires_grad": True} if requires_grad
                                                     else {})})
            raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                            f"{type(window_length).__name__}")
        if window_length < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got "
                               f"window_length={window_length}")
        dt = dtype or dtypes.get_default_dtype()
        if not dt.is_floating_point:
            grad = "true" if requires_grad else "false (default)"
            raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions("
                               f"dtype={dtypes.c_type_name(dt)}, device={as_device(device)}, "
                               f"layout=Strided (default), requires_grad={grad}, "
                               "pinned_memory=false, memory_format=(nullopt))")
        c = _creation()
        if window_length <= 1:
            out = c.ones(window_length, dtype=dtypes.float64, device=device)
        else:
            n_sym = window_length + 1 if periodic else window_length
            n = c.arange(window_length, dtype=dtypes.float64, device=device)
            out = formula(n, n_sym, *args, **kwargs)
        return _finish(out.to(dt)._data, out._device, requires_grad)

    window.__name__ = window.__qualname__ = name
    return window


def _cosine_sum(*coeffs: float) -> Callable[[Any, int], Any]:
    def formula(n: Any, big_n: int) -> Any:
        out: Any = coeffs[0]
        for k, a in enumerate(coeffs[1:], start=1):
            out = out + ((-1) ** k) * a * (2 * math.pi * k * n / (big_n - 1)).cos()
        return out

    return formula


def _hamming(n: Any, big_n: int, alpha: float = 0.54, beta: float = 0.46) -> Any:
    return alpha - beta * (2 * math.pi * n / (big_n - 1)).cos()


def _bartlett(n: Any, big_n: int) -> Any:
    return 1 - (2 * n / (big_n - 1) - 1).abs()


def _kaiser(n: Any, big_n: int, beta: float = 12.0) -> Any:
    alpha = (big_n - 1) / 2.0
    r = ((n - alpha) / alpha).clamp(-1, 1)
    arg = beta * (1 - r * r).clamp(min=0).sqrt()
    b = n.backend
    return Tensor._make(b.xp.i0(arg._data) / float(b.xp.i0(b.xp.asarray(beta))), n._device)


hann_window = _window("hann_window", _cosine_sum(0.5, 0.5))
hamming_window = _window("hamming_window", _hamming)
bartlett_window = _window("bartlett_window", _bartlett)
blackman_window = _window("blackman_window", _cosine_sum(0.42, 0.5, 0.08))
kaiser_window = _window("kaiser_window", _kaiser)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of the 1-D ``x``: columns ``x ** (N - 1), ..., x ** 0`` (or
    increasing powers), built by repeated products so that gradients are exact at 0."""
    expect_tensor("vander", "x", 1, x)
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    from .shape import stack

    work = x if x.dtype.is_floating_point else x.to(dtypes.int64)
    cols = []
    if n:
        cols.append(work.new_ones(work.shape))
    for _ in builtins.range(1, n):
        cols.append(cols[-1] * work)
    if not cols:
        return work.new_empty((x.shape[0], 0))
    return stack(cols if increasing else cols[::-1], 1)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
