"""Tensor factories: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``, ``ones``, ``full``,
``empty``, ``arange``, ``linspace``, ``eye`` and the ``*_like`` forms. The random factories
(``rand``, ``randn``, ``randint``, ``randperm``) live in ``random.py`` (also reachable here).

Dtype inference, size parsing and error messages follow PyTorch 2.13. The filled factories
live in ``creation_fill`` and are re-exported here.
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

from . import dtypes
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
        require_grad(t)
    return t


def require_grad(t: Tensor) -> None:
    """Make the new leaf ``t`` require grad, with the factories' error for other dtypes."""
    if t.dtype.category < 2:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    t.requires_grad = True


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
    """A tensor sharing memory with any DLPack producer (NumPy, CuPy, PyTorch, JAX), or with a
    DLPack capsule (``to_dlpack``'s)."""
    if type(ext).__name__ == "PyCapsule":
        ext = _Capsule(ext)
    dev_type, dev_id = ext.__dlpack_device__()
    dev = CPU if int(dev_type) == 1 else as_device(f"cuda:{dev_id}")
    return Tensor._make(dev.backend.from_dlpack(ext), dev)


class _Capsule:
    """A DLPack capsule as a producer: ``__dlpack__`` hands it over, and the device is read from
    the ``DLTensor`` it holds (``{void *data; DLDevice device; ...}``), which a versioned capsule
    places after its version, context, deleter and flags (32 bytes).

    NOTE: NumPy reads a legacy ("dltensor") capsule as read-only; ``to_dlpack`` makes versioned
    ones, which stay writable."""

    def __init__(self, capsule: Any) -> None:
        import ctypes

        name_of = ctypes.pythonapi.PyCapsule_GetName
        name_of.restype, name_of.argtypes = ctypes.c_char_p, [ctypes.py_object]
        name = name_of(capsule)
        if name not in (b"dltensor", b"dltensor_versioned"):
            raise RuntimeError(f"from_dlpack: expected an unused DLPack capsule, got one named "
                               f"{(name or b'').decode()!r}")
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        tensor = get(capsule, name) + (32 if name == b"dltensor_versioned" else 0)
        device = (ctypes.c_int32 * 2).from_address(tensor + ctypes.sizeof(ctypes.c_void_p))
        self.capsule, self.device = capsule, (int(device[0]), int(device[1]))

    def __dlpack__(self, **_: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.device


from .creation_fill import (  # noqa: E402,F401  (the filled factories build on the above)
    _filled, _like, _number, arange, empty, empty_like, eye, full, full_like, like_layout,
    linspace, ones, ones_like, parse_size, zeros, zeros_like,
)
