"""Tensor factories: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``, ``ones``, ``full``,
``empty``, ``arange``, ``linspace``, ``eye`` and the ``*_like`` forms. The random factories
(``rand``, ``randn``, ``randint``, ``randperm``) live in ``random.py`` (also reachable here).

Dtype inference, size parsing and error messages follow PyTorch 2.13.
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from typing import Any, Callable, Sequence

from . import dtypes
from .backends.composite import inverse_perm
from .autograd.node import user_stacklevel
from .device import CPU, as_device, device
from .functions.checks import checked_scalar
from .tensor import _WARNED_ONCE, Tensor

__all__ = ["arange", "as_tensor", "asarray", "empty", "empty_like", "eye", "from_dlpack",
           "from_numpy", "full", "full_like", "linspace", "ones", "ones_like", "tensor", "zeros",
           "zeros_like"]

_RANDOM = ("rand", "rand_like", "randint", "randn", "randn_like", "randperm")


def __getattr__(name: str) -> Any:
    # NOTE: the random factories live in random.py (which builds on this module); they are
    # reachable here too, loaded lazily to keep the import order acyclic.
    if name in _RANDOM:
        from . import random

        return getattr(random, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_float = builtins.float
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_ALLOWED_KW = ("layout", "pin_memory", "memory_format", "out")
_PLAIN = {bool, int, _float}


def finish(data: Any, dev: device, requires_grad: bool) -> Tensor:
    """Wrap a backend array as a new leaf tensor, honouring ``requires_grad``."""
    t = Tensor._make(data, dev)
    if requires_grad:
        if t.dtype.category < 2:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad = True
    return t


def array_dtype(arr: Any) -> dtypes.dtype:
    """Our dtype for a NumPy/CuPy array, or PyTorch's ``TypeError`` for unsupported ones."""
    d = dtypes.BY_NAME.get(arr.dtype.name)
    if d is None:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{arr.dtype.type.__name__}. The only "
            "supported types are: float64, float32, float16, complex64, complex128, int64, int32, "
            "int16, int8, uint64, uint32, uint16, uint8, and bool."
        )
    return d


# ---- tensor(): dtype inference and nested sequences --------------------------------------------

def _is_array(x: Any) -> bool:
    return hasattr(x, "__array_interface__") or hasattr(x, "__cuda_array_interface__")


def _is_seq(x: Any) -> bool:
    if isinstance(x, (list, tuple, range)):
        return True
    return not isinstance(x, Tensor) and _is_array(x) and x.ndim > 0


def _infer(x: Any) -> dtypes.dtype:
    """PyTorch's dtype for ``x``: Python bool/int/float give bool/int64/default float, tensors
    and NumPy scalars or arrays give their own dtype, and a sequence promotes its items."""
    if isinstance(x, bool):
        return dtypes.bool
    if isinstance(x, int):
        return dtypes.int64
    if isinstance(x, Tensor):
        return x.dtype
    if _is_array(x):  # a NumPy scalar or array
        return array_dtype(x)
    if isinstance(x, _float):
        return dtypes.get_default_dtype()
    if isinstance(x, complex):
        return dtypes.get_default_complex_dtype()
    if isinstance(x, (list, tuple, range)):
        kinds = set(map(type, x))
        if kinds and kinds <= _PLAIN:  # fast path: a row of Python numbers
            return (dtypes.get_default_dtype() if float in kinds else
                    dtypes.int64 if int in kinds else dtypes.bool)
        out = None
        for item in x:
            d = _infer(item)
            out = d if out is None else dtypes.promote_types(out, d)
        return dtypes.get_default_dtype() if out is None else out
    if isinstance(x, str):
        raise TypeError("new(): invalid data type 'str'")
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _sizes(x: Any) -> list[int]:
    """The shape, read along first elements (PyTorch reads it the same way)."""
    sizes = []
    while _is_seq(x):
        sizes.append(len(x))
        if not len(x):
            break
        x = x[0]
    return sizes


def _scalar(v: Any, dt: dtypes.dtype) -> Any:
    """``v`` as a Python number of ``dt``'s kind, with PyTorch's errors for bad items."""
    if _is_seq(v):
        if dt.is_floating_point:
            raise TypeError(f"must be real number, not {type(v).__name__}")
        raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")
    if isinstance(v, Tensor):
        if v.numel() != 1:
            if dt.is_floating_point:
                raise ValueError("only one element tensors can be converted to Python scalars")
            raise TypeError("only integer tensors of a single element can be converted to an index")
        v = v.item()
    elif hasattr(v, "item") and not isinstance(v, (int, _float)):
        v = v.item()  # NumPy scalar
    if dt is dtypes.bool:
        return builtins.bool(v)
    if dt.is_complex:
        if not isinstance(v, (int, _float, complex)):
            raise TypeError(f"must be complex number, not {type(v).__name__}")
        return complex(v)
    if dt.is_floating_point:  # NOTE: any Python int converts (float32 takes 2**128 as inf)
        if not isinstance(v, (int, _float)):
            raise TypeError(f"must be real number, not {type(v).__name__}")
        return _float(v)
    if isinstance(v, int) and not isinstance(v, bool) and not _INT64_MIN <= v <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return _to_int(v, dt)


def _to_int(v: Any, dt: dtypes.dtype) -> int:
    if not isinstance(v, (int, _float)):
        raise TypeError(f"'{type(v).__name__}' object cannot be interpreted as an integer")
    # NOTE: torch.tensor names the dtype (int8) where the other conversions name a C type.
    return checked_scalar(v, dt, type_name=dt.name)  # type: ignore[no-any-return]


def _plain_row(x: Any, dt: dtypes.dtype) -> bool:
    """True when ``x`` holds only Python numbers that the backend converts to ``dt`` exactly as
    PyTorch does, so the per-item checks of ``_scalar`` can be skipped (a large speed-up)."""
    kinds = set(map(type, x))
    if not kinds <= _PLAIN or dt.is_complex:
        return False
    if int in kinds:
        ints = [v for v in x if type(v) is int]
        lo, hi = (_INT64_MIN, _INT64_MAX) if dt.category != 1 else dtypes.int_bounds(dt)
        if not (lo <= min(ints) and max(ints) <= hi):
            return False
    return dt.category != 1 or float not in kinds


def _flatten(x: Any, dim: int, sizes: list[int], dt: dtypes.dtype, out: list[Any]) -> None:
    if not _is_seq(x):
        raise TypeError("not a sequence")
    n = sizes[dim]
    if len(x) != n:
        raise ValueError(f"expected sequence of length {n} at dim {dim} (got {len(x)})")
    if dim == len(sizes) - 1:
        out.extend(x if _plain_row(x, dt) else (_scalar(v, dt) for v in x))
    else:
        for v in x:
            _flatten(v, dim + 1, sizes, dt, out)


def _from_data(data: Any, dt: dtypes.dtype, dev: device) -> Any:
    """A new backend array on ``dev`` holding Python data (scalars and nested sequences)."""
    sizes = _sizes(data)
    flat: list[Any] = []
    if 0 in sizes:
        pass  # NOTE: PyTorch checks nothing below an empty dimension: [[], [1]] is (2, 0)
    elif sizes:
        _flatten(data, 0, sizes, dt, flat)
    else:
        flat.append(_scalar(data, dt))
    be = dev.backend
    # NOTE: float16 overflow gives inf, as in PyTorch. The list is converted on the host (CuPy
    # too goes through NumPy), so the error state silenced is NumPy's, whatever the device.
    with CPU.backend.errstate(over="ignore"):
        arr = be.asarray(flat, dtype=dt.name)
    return arr.reshape(tuple(sizes))


def tensor(data: Any, *, dtype: dtypes.dtype | None = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``: a Python scalar, nested lists or tuples, a NumPy
    array or scalar, or a tensor.

    Without ``dtype`` the type is inferred as in PyTorch: bools give ``bool``, ints ``int64``,
    floats the default dtype (``float32``), arrays and tensors keep theirs, and mixed items
    promote. Ragged lists raise ``ValueError`` naming the dimension.

    Example:
        >>> tensor([1, 2]).dtype
        torch.int64
        >>> tensor([[1, 2], [3, 4.5]])
        tensor([[1.0000, 2.0000],
                [3.0000, 4.5000]])
    """
    dtypes.check_dtype("tensor", dtype)
    if isinstance(data, Tensor):
        _warn_copy_construct("torch.tensor")
        return _copy(data, dtype, device, requires_grad)
    dev = as_device(device)
    if _is_array(data):
        dt = dtype or array_dtype(data)
        if hasattr(data, "__cuda_array_interface__") and dev.type == "cpu":
            data = data.get()  # NOTE: a CuPy array copies to host first
        with CPU.backend.errstate(all="ignore"):  # NOTE: casts give inf silently, as PyTorch
            arr = dev.backend.asarray(data).astype(dt.name, copy=True)
        return finish(arr, dev, requires_grad)
    dt = dtype or _infer(data)
    return finish(_from_data(data, dt, dev), dev, requires_grad)


def new_tensor(like: Tensor, data: Any, dtype: dtypes.dtype | None = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """``like.new_tensor(data)``: ``tensor(data)`` with ``like``'s dtype and device by default."""
    dtypes.check_dtype("new_tensor", dtype)
    dtype, device = dtype or like.dtype, device or like._device
    if isinstance(data, Tensor):
        _warn_copy_construct("tensor.new_tensor")
        return _copy(data, dtype, device, requires_grad)
    return tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def _copy(t: Tensor, dtype: dtypes.dtype | None, device: Any, requires_grad: bool) -> Tensor:
    dev = as_device(device) if device is not None else t._device
    src = t.detach().to(dev)
    dt = dtype or src.dtype
    with CPU.backend.errstate(all="ignore"):  # NOTE: casts give inf silently, as PyTorch
        return finish(src._data.astype(dt.name, copy=True), dev, requires_grad)


def _warn_copy_construct(api: str) -> None:
    """PyTorch's warning when a tensor is copied by ``torch.tensor(t)`` or ``x.new_tensor(t)``
    (whether or not ``t`` requires grad)."""
    warnings.warn(
        "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
        "or sourceTensor.detach().clone().requires_grad_(True), rather than "
        f"{api}(sourceTensor).", UserWarning, stacklevel=user_stacklevel())


def as_tensor(data: Any, dtype: dtypes.dtype | None = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, sharing memory with a tensor or NumPy array when its dtype and
    device already match (then writes through one show in the other); otherwise a copy."""
    dtypes.check_dtype("as_tensor", dtype)
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    dev = as_device(device)
    if isinstance(data, CPU.backend.ndarray) and dev is CPU:
        dt = array_dtype(data)
        if dtype is None or dtype is dt:
            return Tensor._make(data, CPU)
        with CPU.backend.errstate(all="ignore"):  # NOTE: casts give inf silently, as PyTorch
            return Tensor._make(data.astype(dtype.name), CPU)
    return tensor(data, dtype=dtype, device=dev)


_UNSET: Any = object()  # asarray's requires_grad when the caller gives none


def asarray(obj: Any, *, dtype: dtypes.dtype | None = None, device: Any = None,
            copy: bool | None = None, requires_grad: bool = _UNSET) -> Tensor:
    """``obj`` as a tensor, sharing memory when nothing changes (``as_tensor``'s rules), as
    PyTorch 2.13's ``torch.asarray``.

    ``copy=True`` always copies (a tensor through ``clone``), ``copy=False`` refuses to copy.
    Without ``requires_grad`` a tensor keeps its own, and its graph: converting or copying one
    that requires grad records ToCopyBackward0 or CloneBackward0, and PyTorch's warning about
    the new default is given (once per process). An explicit ``requires_grad`` is set on the
    result, which for an unchanged leaf tensor is ``obj`` itself (as PyTorch); an unchanged
    non-leaf becomes ``obj.detach()`` for ``requires_grad=False``.

    Example:
        >>> asarray([1, 2], dtype=float64)
        tensor([1., 2.], dtype=torch.float64)
    """
    dtypes.check_dtype("asarray", dtype)
    if not isinstance(obj, Tensor):
        out = tensor(obj, dtype=dtype, device=device) if copy else \
            as_tensor(obj, dtype=dtype, device=device)
        return _require_grad(out) if requires_grad is not _UNSET and requires_grad else out
    if requires_grad is _UNSET:
        requires_grad = obj.requires_grad
        if requires_grad and "asarray" not in _WARNED_ONCE:
            _WARNED_ONCE.add("asarray")  # NOTE: PyTorch's TORCH_WARN_ONCE: once per process
            warnings.warn(
                "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad "
                "instead of False. Pass requires_grad=False explicitly to get the old behavior "
                "and silence this warning.", UserWarning, stacklevel=user_stacklevel())
    dt = dtype or obj.dtype
    dev = as_device(device) if device is not None else obj._device
    if copy is False and dt is not obj.dtype:
        raise ValueError(f"can't alias tensor with dtype '{dtypes.scalar_type_name(obj.dtype)}' "
                         f"into dtype '{dtypes.scalar_type_name(dt)}'.")
    if copy is False and dev is not obj._device:
        raise ValueError(f"can't alias tensor from device '{obj._device}' to '{dev}'.")
    out = obj.to(device=dev, dtype=dt)
    if copy and out is obj:
        out = obj.clone()
    if out.requires_grad == requires_grad:
        return out
    if requires_grad:
        return _require_grad(out)
    return out.requires_grad_(False) if out.is_leaf else out.detach()


def _require_grad(t: Tensor) -> Tensor:
    if t.dtype.category < 2:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return t.requires_grad_(True)


def from_numpy(ndarray: Any) -> Tensor:
    """A CPU tensor sharing memory with the NumPy array ``ndarray`` (writes show in both)."""
    if not isinstance(ndarray, CPU.backend.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    array_dtype(ndarray)
    return Tensor._make(ndarray, CPU)


def from_dlpack(ext: Any) -> Tensor:
    """A tensor sharing memory with any DLPack producer (NumPy, CuPy, PyTorch, JAX)."""
    dev_type, dev_id = ext.__dlpack_device__()
    dev = CPU if int(dev_type) == 1 else as_device(f"cuda:{dev_id}")
    return Tensor._make(dev.backend.from_dlpack(ext), dev)


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
    shape = parse_size(fn, size, kwargs)
    dev = as_device(device)
    dt = dtype or dtypes.get_default_dtype()
    return finish(getattr(dev.backend, fn)(shape, dtype=dt.name), dev, requires_grad)


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
