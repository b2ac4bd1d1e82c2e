"""The filled factories: size parsing, ``zeros``, ``ones``, ``empty``, ``full``, the
``*_like`` forms (PyTorch's ``preserve_format`` layout), ``arange``, ``linspace``, ``eye``.
``creation`` re-exports them with the data factories (``tensor``, ``as_tensor``, ...)."""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Callable, Sequence

from . import dtypes
from .backends.composite import inverse_perm
from .creation import _ALLOWED_KW, _float, finish
from .device import as_device, device
from .functions.checks import checked_scalar
from .tensor import Tensor


# ---- sizes and filled tensors ------------------------------------------------------------------

def parse_size(fn: str, size: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[int, ...]:
    """The shape from ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(size=(2, 3))``, with
    PyTorch's ``TypeError`` for non-integers and ``RuntimeError`` for negative sizes."""
    for k in kwargs:
        if k != "size" and k not in _ALLOWED_KW:
            raise TypeError(f"{fn}() got an unexpected keyword argument '{k}'")
    if kwargs.get("out") is not None:
        raise TypeError(f"{fn}(): the out= argument is not supported by autograd_gpu")
    if "size" in kwargs:
        size = (kwargs["size"],)
    if not size:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        items = tuple(size[0])
        for i, s in enumerate(items):
            if isinstance(s, bool):
                raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, "
                                f"but found element of type bool at pos {i}")
            if not _is_index(s):
                raise TypeError(f"{fn}(): argument 'size' failed to unpack the object at pos "
                                f"{i + 1} with error \"type must be tuple of ints,but got "
                                f"{type(s).__name__}\"")
    elif len(size) == 1 and (isinstance(size[0], bool) or not _is_index(size[0])):
        raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size[0]).__name__}")
    else:
        items = size
        for i, s in enumerate(items):
            if not _is_index(s):
                raise TypeError(f"{fn}(): argument 'size' failed to unpack the object at pos "
                                f"{i + 1} with error \"type must be tuple of ints,but got "
                                f"{type(s).__name__}\"")
    shape = tuple(operator.index(s) for s in items)
    for s in shape:
        if s < 0:
            if fn == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _is_index(s: Any) -> bool:
    if isinstance(s, Tensor) and (s.ndim or s.dtype.category != 1):
        return False
    try:
        operator.index(s)
    except TypeError:
        return False
    return True


def _filled(fn: str, size: tuple[Any, ...], kwargs: dict[str, Any], dtype: Any, device: Any,
            requires_grad: bool) -> Tensor:
    dtypes.check_dtype(fn, dtype)
    out = kwargs.pop("out", None)
    shape = parse_size(fn, size, kwargs)
    if out is not None:
        return _filled_out(fn, shape, out, dtype, device, requires_grad)
    dev = as_device(device)
    dt = dtype or dtypes.get_default_dtype()
    return finish(getattr(dev.backend, fn)(shape, dtype=dt.name), dev, requires_grad)


def _filled_out(fn: str, shape: tuple[int, ...], out: Any, dtype: Any, device: Any,
                requires_grad: bool) -> Tensor:
    """``zeros``/``ones``/``empty`` with ``out=``: ``out`` resized to ``shape`` (silently, as
    PyTorch's factories do) and filled; its dtype and device must agree with any given."""
    from .autograd.grad_mode import no_grad
    from .functions.out import check_out_grad

    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {dtypes.scalar_type_name(dtype)} does not match dtype of out "
                           f"parameter ({dtypes.scalar_type_name(out.dtype)})")
    if device is not None and as_device(device).type != out.device.type:
        raise RuntimeError(f"device type {as_device(device).type} does not match device type of "
                           f"out parameter ({out.device.type})")
    check_out_grad(f"aten::{fn}", (), out)
    with no_grad():
        out.resize_(shape)
        if fn != "empty":
            out.fill_(0 if fn == "zeros" else 1)
    if requires_grad:
        out.requires_grad_(True)
    return out


def zeros(*size: Any, dtype: dtypes.dtype | None = None, device: Any = None,
          requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))``; default float dtype."""
    return _filled("zeros", size, kwargs, dtype, device, requires_grad)


def ones(*size: Any, dtype: dtypes.dtype | None = None, device: Any = None,
         requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))``; default float dtype."""
    return _filled("ones", size, kwargs, dtype, device, requires_grad)


def empty(*size: Any, dtype: dtypes.dtype | None = None, device: Any = None,
          requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """An uninitialised tensor: ``empty(2, 3)``; its values are whatever memory held."""
    return _filled("empty", size, kwargs, dtype, device, requires_grad)


def full(size: Sequence[int], fill_value: Any, *, dtype: dtypes.dtype | None = None,
         device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value``.

    Without ``dtype`` the fill value decides: bool gives ``bool``, int ``int64``, float the
    default dtype (``full((2,), 3)`` is int64, as in PyTorch).
    """
    dtypes.check_dtype("full", dtype)
    if not isinstance(size, (list, tuple)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = parse_size("full", (size,), kwargs)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    elif hasattr(fill_value, "item") and not isinstance(fill_value, (int, _float)):
        # NOTE: a NumPy bool is a number to PyTorch here, so it fills the default float dtype.
        fill_value = fill_value.item()
        if isinstance(fill_value, bool):
            fill_value = _float(fill_value)
    dt = dtype or dtypes.scalar_type(fill_value)
    dev = as_device(device)
    if isinstance(fill_value, (int, _float)):
        # NOTE: PyTorch fills one element without checking float16's range
        fill_value = checked_scalar(fill_value, dt, check_half=math.prod(shape) != 1)
    return finish(dev.backend.full(shape, fill_value, dtype=dt.name), dev, requires_grad)


def like_layout(input: Tensor, make: Callable[[tuple[int, ...]], Tensor]) -> Tensor:  # noqa: A002
    """``make(shape)``, a new tensor of ``input``'s shape, laid out as PyTorch lays out the
    ``*_like`` factories' results (``preserve_format``: a transposed input gives a transposed
    result, see ``backend.like_order``): made in the permuted shape, then transposed back."""
    order = None if input._level else input.backend.like_order(input._data)
    if order is not None:
        from .func._batched import LEVELS  # NOTE: late: func sits above this layer

        if LEVELS.stack:  # NOTE: under vmap a draw may gain batch dims; the layout is moot
            order = None
    if order is None:
        return make(tuple(input.shape))
    outer = order[::-1]
    t = make(tuple(input.shape[d] for d in outer))
    t._data = t.backend.transpose(t._data, inverse_perm(outer))
    return t


def _like(input: Tensor, dtype: Any, device: Any) -> tuple[dtypes.dtype, device]:  # noqa: A002
    dtypes.check_dtype("like", dtype)
    return dtype or input.dtype, as_device(device) if device is not None else input._device


def zeros_like(input: Tensor, *, dtype: dtypes.dtype | None = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Zeros with the shape of ``input`` (and its dtype and device unless given)."""
    dt, dev = _like(input, dtype, device)
    return like_layout(input, lambda s: zeros(s, dtype=dt, device=dev, requires_grad=requires_grad))


def ones_like(input: Tensor, *, dtype: dtypes.dtype | None = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Ones with the shape of ``input`` (and its dtype and device unless given)."""
    dt, dev = _like(input, dtype, device)
    return like_layout(input, lambda s: ones(s, dtype=dt, device=dev, requires_grad=requires_grad))


def empty_like(input: Tensor, *, dtype: dtypes.dtype | None = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """An uninitialised tensor with the shape of ``input`` (and its dtype and device)."""
    dt, dev = _like(input, dtype, device)
    return like_layout(input, lambda s: empty(s, dtype=dt, device=dev, requires_grad=requires_grad))


def full_like(input: Tensor, fill_value: Any, *, dtype: dtypes.dtype | None = None,  # noqa: A002
              device: Any = None, requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """``fill_value`` in the shape, dtype and device of ``input`` (``full_like(ints, 2.7)`` is 2)."""
    dt, dev = _like(input, dtype, device)
    return like_layout(input, lambda s: full(s, fill_value, dtype=dt, device=dev,
                                             requires_grad=requires_grad))


# ---- ranges --------------------------------------------------------------------------------------

def _number(x: Any, *also: type) -> Any:
    """A Python number from a Python, NumPy or 0-d tensor scalar (``also``: more Python types
    accepted, such as ``complex``)."""
    if isinstance(x, (int, _float, *also)):
        return x
    if hasattr(x, "item"):
        return x.item()
    raise TypeError(f"expected a number, got {type(x).__name__}")


def arange(start: Any = None, end: Any = None, step: Any = 1, *, dtype: dtypes.dtype | None = None,
           device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``.

    The dtype is int64 when all arguments are integers, else the default float dtype. The
    length is ``ceil((end - start) / step)`` computed in double precision, as in PyTorch
    (``arange(0, 1, 0.1)`` has 10 elements). For integer dtypes the arguments are truncated
    to integers first.
    """
    dtypes.check_dtype("arange", dtype)
    if start is None:
        if end is None:
            raise TypeError("arange() received an invalid combination of arguments - got (), but "
                            "expected one of:")
        start = 0
    elif end is None:
        start, end = 0, start
    start, end, step = _number(start), _number(end), _number(step)
    if dtype is None:
        ints = builtins.all(isinstance(v, int) for v in (start, end, step))
        dtype = dtypes.int64 if ints else dtypes.get_default_dtype()
    if dtype is dtypes.bool:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not dtype.is_floating_point:
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = math.ceil((_float(end) - _float(start)) / _float(step))
    dev = as_device(device)
    be = dev.backend
    # NOTE: values are start + i * step in double precision, cast once; PyTorch's SIMD kernel
    # can differ from this in the last bit for some elements.
    if dtype.is_floating_point:
        data = be.arange(0, n, 1, dtype="float64") * step + start
    else:
        data = be.arange(0, n, 1, dtype="int64") * step + start
    with be.errstate(over="ignore"):
        data = data.astype(dtype.name)
    return finish(data, dev, requires_grad)


def linspace(start: Any, end: Any, steps: int, *, dtype: dtypes.dtype | None = None,
             device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive.

    Values are computed as PyTorch does, in the output dtype: the first half as
    ``start + i * step``, the second half as ``end - (steps - 1 - i) * step``, so both ends are
    exact and the digits match PyTorch's.
    """
    dtypes.check_dtype("linspace", dtype)
    if isinstance(steps, Tensor):
        steps = steps.item()
    if not isinstance(steps, int) or isinstance(steps, bool):
        raise TypeError(f"linspace() received an invalid combination of arguments - got "
                        f"({type(start).__name__}, {type(end).__name__}, {type(steps).__name__}), "
                        "but expected one of:")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    start, end = _number(start, complex), _number(end, complex)
    dt = dtype or dtypes.get_default_dtype()
    if isinstance(start, complex) or isinstance(end, complex):
        inferred = dtypes.get_default_complex_dtype()
        if dtype is not None and not dtype.is_complex:
            raise RuntimeError(f"torch.linspace(): inferred dtype "
                               f"{dtypes.c_type_name(inferred)} can't be safely cast to passed "
                               f"dtype {dtypes.scalar_type_name(dtype)}")
        dt = dtype or inferred
    dev = as_device(device)
    be = dev.backend
    # NOTE: PyTorch computes integer outputs in double and float outputs in their own dtype.
    work = dt.name if dt.category >= 2 else "float64"
    if dt.category >= 2:
        s, e = be.asarray(start, dtype=work), be.asarray(end, dtype=work)
    else:
        # NOTE: the ends are first cast (wrapping) to the integer dtype: linspace(3, -3, 5,
        # dtype=uint8) runs from 3 to 253, as in PyTorch.
        s, e = (be.asarray(int(v)).astype(dt.name).astype(work) for v in (start, end))
    if steps <= 1:
        data = be.full((steps,), s, dtype=work)
    else:
        step = (e - s) / be.asarray(steps - 1, dtype=work)
        real = dt.to_real().name if dt.category >= 2 else work  # NOTE: complex steps, real counts
        idx = be.arange(0, steps, 1, dtype=real)
        rev = be.arange(steps - 1, -1, -1, dtype=real)
        data = be.where(idx < steps // 2, s + step * idx, e - step * rev)
    return finish(data.astype(dt.name), dev, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: dtypes.dtype | None = None, device: Any = None,
        requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """The ``n x m`` identity matrix (``m`` defaults to ``n``)."""
    dtypes.check_dtype("eye", dtype)
    for name, pos, v in (("n", 1, n), ("m", 2, m)):
        if v is None:
            continue
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"eye(): argument '{name}' (position {pos}) must be int, not "
                            f"{type(v).__name__}")
        if v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dev = as_device(device)
    dt = dtype or dtypes.get_default_dtype()
    return finish(dev.backend.eye(n, n if m is None else m, dt.name), dev, requires_grad)
