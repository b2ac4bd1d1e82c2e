"""Tensor factories: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``, ``ones``, ``full``,
``empty``, ``arange``, ``linspace``, ``eye``, the ``*_like`` forms, ``rand``, ``randn``,
``randint``, ``randperm``."""

from __future__ import annotations

import builtins
from typing import Any, Sequence

from . import dtypes
from .device import as_device, device
from .random import Generator, _gen_for
from .tensor import Tensor

_float = builtins.float


def _finish(data: Any, dev: device, requires_grad: bool) -> Tensor:
    t = Tensor._make(data, dev)
    if requires_grad:
        t.requires_grad = True
    return t


def _infer_dtype(obj: Any) -> dtypes.dtype:
    """PyTorch's dtype for nested Python data: bool < int64 < default float."""
    kind = 0
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, Tensor):
            d = x.dtype
            kind = builtins.max(kind, d.category)
            if d.category == 2:
                return dtypes.get_default_dtype() if d is not dtypes.float64 else d
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, bool):
            continue
        elif isinstance(x, int):
            kind = builtins.max(kind, 1)
        elif isinstance(x, _float):
            return dtypes.get_default_dtype()
        elif hasattr(x, "dtype"):
            d = dtypes.from_name(x.dtype.name)
            kind = builtins.max(kind, d.category)
            if d.category == 2:
                return dtypes.get_default_dtype()
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    return (dtypes.bool, dtypes.int64, dtypes.get_default_dtype())[kind]


def _check_ragged(obj: Any, dim: int = 0) -> None:
    if not isinstance(obj, (list, tuple)) or not obj:
        return
    first = obj[0]
    if isinstance(first, (list, tuple)):
        n = len(first)
        for x in obj:
            if not isinstance(x, (list, tuple)) or len(x) != n:
                got = len(x) if isinstance(x, (list, tuple)) else type(x).__name__
                raise ValueError(f"expected sequence of length {n} at dim {dim + 1} (got {got})")
        for x in obj:
            _check_ragged(x, dim + 1)


def _host_data(obj: Any) -> Any:
    if isinstance(obj, Tensor):
        return obj.detach().cpu()._data
    if isinstance(obj, (list, tuple)):
        return [_host_data(x) for x in obj]
    return obj


def tensor(data: Any, *, dtype: dtypes.dtype | None = None, device: Any = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays or tensors).

    Example:
        >>> tensor([1, 2]).dtype
        torch.int64
    """
    dev = as_device(device) if device is not None else (data._device if isinstance(data, Tensor) else as_device(None))
    if hasattr(data, "__array_interface__") or hasattr(data, "__cuda_array_interface__"):
        src_dtype = dtypes.from_name(data.dtype.name)
        dt = dtype or src_dtype
        arr = dev.backend.asarray(data).astype(dt.name, copy=True)
        return _finish(arr, dev, requires_grad)
    _check_ragged(data)
    dt = dtype or _infer_dtype(data)
    host = _host_data(data)
    arr = dev.backend.asarray(host, dtype=dt.name)
    if arr is host or (isinstance(data, Tensor) and arr is data._data):
        arr = dev.backend.copy(arr)
    return _finish(arr, dev, requires_grad)


def as_tensor(data: Any, dtype: dtypes.dtype | None = None, device: Any = None) -> Tensor:
    """``data`` as a tensor, sharing memory with an array or tensor when dtype and device allow."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype) if (device or dtype) else data
    if hasattr(data, "__array_interface__") and (device is None or as_device(device).type == "cpu"):
        arr = data
        if dtype is not None and arr.dtype.name != dtype.name:
            arr = arr.astype(dtype.name)
        dtypes.from_name(arr.dtype.name)
        return Tensor._make(as_device("cpu").backend.asarray(arr), as_device("cpu"))
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray: Any) -> Tensor:
    """A CPU tensor sharing memory with the NumPy array ``ndarray``."""
    if not hasattr(ndarray, "__array_interface__"):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    dtypes.from_name(ndarray.dtype.name)
    return Tensor._make(ndarray, as_device("cpu"))


def from_dlpack(ext: Any) -> Tensor:
    """A tensor sharing memory with any DLPack producer (NumPy, CuPy, PyTorch, JAX)."""
    dev_type, dev_id = ext.__dlpack_device__()
    if int(dev_type) == 1:
        import numpy as _np  # noqa: F401  (backend module does the real work)

        dev = as_device("cpu")
    else:
        dev = as_device(f"cuda:{dev_id}")
    return Tensor._make(dev.backend.from_dlpack(ext), dev)


def _size(size: Sequence[Any]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (list, tuple)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, int) and not hasattr(s, "__index__"):
            raise TypeError(f"empty(): argument 'size' must be tuple of ints, but found element of type {type(s).__name__}")
        if int(s) < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {int(s)}: {list(size)}")
    return tuple(int(s) for s in size)


def _fill(fn: str, size: Sequence[Any], dtype: dtypes.dtype | None, device: Any, requires_grad: bool) -> Tensor:
    dev = as_device(device)
    dt = dtype or dtypes.get_default_dtype()
    return _finish(getattr(dev.backend, fn)(_size(size), dtype=dt.name), dev, requires_grad)


def zeros(*size: Any, dtype: dtypes.dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _fill("zeros", size, dtype, device, requires_grad)


def ones(*size: Any, dtype: dtypes.dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _fill("ones", size, dtype, device, requires_grad)


def empty(*size: Any, dtype: dtypes.dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return _fill("empty", size, dtype, device, requires_grad)


def full(size: Sequence[int], fill_value: Any, *, dtype: dtypes.dtype | None = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    dev = as_device(device)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dt = dtype or dtypes.scalar_type(fill_value)
    return _finish(dev.backend.full(_size((size,)), fill_value, dtype=dt.name), dev, requires_grad)


def _like(fn: Any, t: Tensor, dtype: dtypes.dtype | None, device: Any, requires_grad: bool, *args: Any) -> Tensor:
    return fn(*((tuple(t.shape),) + args), dtype=dtype or t.dtype, device=device or t._device, requires_grad=requires_grad)


def zeros_like(input: Tensor, *, dtype: dtypes.dtype | None = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return _like(zeros, input, dtype, device, requires_grad)


def ones_like(input: Tensor, *, dtype: dtypes.dtype | None = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return _like(ones, input, dtype, device, requires_grad)


def empty_like(input: Tensor, *, dtype: dtypes.dtype | None = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return _like(empty, input, dtype, device, requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: dtypes.dtype | None = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype, device=device or input._device,
                requires_grad=requires_grad)


def rand_like(input: Tensor, *, dtype: dtypes.dtype | None = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False) -> Tensor:
    return rand(tuple(input.shape), dtype=dtype or input.dtype, device=device or input._device,
                requires_grad=requires_grad)


def randn_like(input: Tensor, *, dtype: dtypes.dtype | None = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False) -> Tensor:
    return randn(tuple(input.shape), dtype=dtype or input.dtype, device=device or input._device,
                 requires_grad=requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: dtypes.dtype | None = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 when all are integers."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) / step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    vals = (start, end, step)
    if dtype is None:
        dtype = dtypes.int64 if builtins.all(isinstance(v, int) for v in vals) else dtypes.get_default_dtype()
    dev = as_device(device)
    import math

    n = builtins.max(math.ceil((end - start) / step), 0)
    data = dev.backend.arange(0, n, 1, dtype="float64") * step + start if dtype.is_floating_point \
        else dev.backend.arange(start, end, step, dtype="int64")
    return _finish(data.astype(dtype.name), dev, requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype: dtypes.dtype | None = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    dev = as_device(device)
    dt = dtype or dtypes.get_default_dtype()
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    return _finish(dev.backend.linspace(start, end, steps, dtype="float64").astype(dt.name), dev, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: dtypes.dtype | None = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    dev = as_device(device)
    dt = dtype or dtypes.get_default_dtype()
    return _finish(dev.backend.eye(n, n if m is None else m, dt.name), dev, requires_grad)


def rand(*size: Any, generator: Generator | None = None, dtype: dtypes.dtype | None = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in ``[0, 1)``."""
    dev = as_device(device)
    dt = dtype or dtypes.get_default_dtype()
    data = dev.backend.random(_gen_for(dev, generator), _size(size), dt.name)
    return _finish(data, dev, requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: dtypes.dtype | None = None,
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples."""
    dev = as_device(device)
    dt = dtype or dtypes.get_default_dtype()
    data = dev.backend.standard_normal(_gen_for(dev, generator), _size(size), dt.name)
    return _finish(data, dev, requires_grad)


def randint(low: int, high: Any = None, size: Any = None, *, generator: Generator | None = None,
            dtype: dtypes.dtype | None = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers uniform in ``[low, high)`` (``randint(high, size)`` starts at 0)."""
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        raise TypeError("randint() missing required argument 'size'")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dev = as_device(device)
    dt = dtype or dtypes.int64
    data = dev.backend.integers(_gen_for(dev, generator), low, high, _size((size,)), "int64")
    return _finish(data.astype(dt.name, copy=False), dev, requires_grad)


def randperm(n: int, *, generator: Generator | None = None, dtype: dtypes.dtype | None = None,
             device: Any = None) -> Tensor:
    dev = as_device(device)
    data = dev.backend.permutation(_gen_for(dev, generator), n)
    return Tensor._make(data.astype((dtype or dtypes.int64).name), dev)
