"""The fake ``cupy`` module itself: creation and host transfers with CuPy's rules, kernels that
refuse to run, and every other NumPy function or ufunc served on fake arrays (see ``_array``)."""

from __future__ import annotations

import functools
import types
from typing import Any, Callable

import numpy as np

from . import _array as A
from ._array import IMPLICIT_MSG, Ufunc, ndarray
from ._cuda import cuda, get_default_memory_pool, get_default_pinned_memory_pool
from ._linalg import linalg
from ._random import random

__version__ = "13.0.0+fake.numpy"
__autograd_gpu_fake__ = True  # tests that need a real GPU look for this

__all__ = ["IMPLICIT_MSG", "cuda", "get_default_memory_pool", "get_default_pinned_memory_pool",
           "linalg", "ndarray", "random"]

# NumPy names CuPy does not have: asking for them fails here as it would on a GPU.
_NOT_IN_CUPY = {"errstate", "seterr", "geterr", "seterrcall", "geterrcall", "frompyfunc", "ma",
                "rec", "char", "ctypeslib", "memmap", "fromfile", "load", "save", "savez"}


def is_available() -> bool:
    return True


# ---- creation and host transfers ----------------------------------------------------------

def _host(obj: Any) -> Any:
    """Python data with fake arrays inside made host arrays (CuPy gathers them on the device)."""
    if isinstance(obj, ndarray):
        return obj._a
    if isinstance(obj, (list, tuple)):
        return [_host(v) for v in obj]
    return obj


def array(obj: Any, dtype: Any = None, copy: bool | None = True, order: str = "K",
          subok: bool = False, ndmin: int = 0, *, blocking: bool = False) -> ndarray:
    """A device array from a device array (copied unless ``copy`` is False and nothing changes)
    or from host data (NumPy arrays, scalars, nested lists): always a new device buffer."""
    if isinstance(obj, ndarray):
        if not copy:
            out = obj.astype(dtype, copy=False) if dtype is not None else obj
            return out if out.ndim >= ndmin else A.wrap(np.array(out._a, ndmin=ndmin,
                                                                 copy=False), (out,))
        src = obj._a
        return A.run("copy", lambda: np.array(src, dtype=dtype, copy=True,  # type: ignore[arg-type]
                                              order=order, ndmin=ndmin), [obj])
    if hasattr(obj, "__cuda_array_interface__"):
        raise NotImplementedError("the fake cupy cannot read a foreign __cuda_array_interface__")
    A.host_read("cupy.array of host data (a host-to-device copy of pageable memory)")
    host = np.array(_host(obj), dtype=dtype, order=order, ndmin=ndmin)  # type: ignore[arg-type]
    return A.new(np.array(host, copy=True))


def asarray(a: Any, dtype: Any = None, order: str | None = None, *,
            blocking: bool = False) -> ndarray:
    """``a`` itself when it is already a device array of ``dtype``; else ``array(a, dtype)``."""
    return array(a, dtype=dtype, copy=False, order=order or "K")


asanyarray = asarray


def ascontiguousarray(a: Any, dtype: Any = None) -> ndarray:
    if not isinstance(a, ndarray):
        raise TypeError(f"Argument 'a' has incorrect type (expected cupy.ndarray, got "
                        f"{type(a).__name__})")
    src = a._a
    return A.run("ascontiguousarray", lambda: np.ascontiguousarray(src, dtype=dtype), [a])


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: Any = None, *,
            blocking: bool = True) -> np.ndarray:
    """A host copy of a device array; host data passes through ``numpy.asarray``."""
    if isinstance(a, ndarray):
        A.host_read("cupy.asnumpy (a device-to-host copy)")
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)  # type: ignore[call-overload, no-any-return]


def get_array_module(*args: Any) -> Any:
    import sys

    return sys.modules["cupy"] if any(isinstance(a, ndarray) for a in args) else np


class _HostDLPack:
    """What NumPy needs to import a fake-device DLPack producer: its capsule says host memory."""

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __dlpack__(self, **kw: Any) -> Any:
        return self._obj.__dlpack__(**kw)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def from_dlpack(x: Any, *, device: Any = None, copy: bool | None = None) -> ndarray:
    """A device array sharing memory with ``x``, an object on a CUDA device (DLPack device
    type 2). Like CuPy's, the result's ``base`` is None (the memory is not the pool's).

    NOTE: host objects (DLPack device type 1) are refused: CuPy cannot view host memory.
    """
    dev = getattr(x, "__dlpack_device__", None)
    if dev is None or not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} has no __dlpack__/__dlpack_device__")
    kind, _ = dev()
    if int(kind) != 2:
        raise BufferError(f"the fake cupy.from_dlpack takes CUDA objects only (DLPack device "
                          f"type 2, got {int(kind)}): CuPy cannot view host memory")
    r = np.from_dlpack(_HostDLPack(x))
    out = object.__new__(ndarray)
    out._a, out._owner, out._mem = r, None, None
    return out


fromDlpack = from_dlpack  # noqa: N816  (CuPy's old name)


def shares_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    if isinstance(a, ndarray) and isinstance(b, ndarray):
        return bool(np.shares_memory(a._a, b._a, max_work=max_work))
    if isinstance(a, ndarray) or isinstance(b, ndarray):
        return False  # device and host memory never overlap
    return bool(np.shares_memory(a, b, max_work=max_work))


def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    if isinstance(a, ndarray) and isinstance(b, ndarray):
        return bool(np.may_share_memory(a._a, b._a, max_work=max_work))
    return False


def copyto(dst: Any, src: Any, casting: str = "same_kind", where: Any = None) -> None:
    """CuPy's copyto: ``src`` a device array or a scalar (a size-1 host array at most)."""
    if not isinstance(dst, ndarray):
        raise TypeError(f"copyto() argument 1 must be cupy.ndarray, not {type(dst).__name__}")
    if isinstance(src, np.ndarray):
        if src.size != 1:
            raise ValueError("non-scalar numpy.ndarray cannot be used for copyto")
        src = src.reshape(()).item()
    srcs: list[Any] = [dst]
    s = A.kernel_arg(src, srcs)
    w = None if where is None else A.kernel_arg(where, srcs)
    d = dst._a
    A.run("copyto", lambda: np.copyto(d, s, casting=casting,  # type: ignore[arg-type]
                                      where=True if w is None else w), srcs)


# ---- kernels: they cannot run here ------------------------------------------------------

class FakeKernelError(NotImplementedError):
    """A CUDA kernel was asked for on the NumPy stand-in."""


def _no_kernels(what: str) -> FakeKernelError:
    return FakeKernelError(f"the NumPy stand-in for CuPy cannot compile or run CUDA kernels "
                           f"({what}); run with AUTOGRAD_GPU_KERNELS=0")


class RawKernel:
    def __init__(self, code: str, name: str, options: tuple[str, ...] = (),
                 backend: str = "nvrtc", translate_cucomplex: bool = False, **kw: Any) -> None:
        self.code, self.name, self.options = code, name, options

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        raise _no_kernels(f"RawKernel {self.name}")

    def compile(self, *args: Any, **kwargs: Any) -> None:
        raise _no_kernels(f"RawKernel {self.name}")


class RawModule:
    def __init__(self, *, code: str | None = None, path: str | None = None,
                 options: tuple[str, ...] = (), name_expressions: Any = None, **kw: Any) -> None:
        self.code, self.path, self.options = code, path, options
        self.name_expressions = name_expressions

    def get_function(self, name: str) -> RawKernel:
        raise _no_kernels(f"RawModule.get_function({name!r})")

    def compile(self, *args: Any, **kwargs: Any) -> None:
        raise _no_kernels("RawModule.compile")


class ElementwiseKernel:
    def __init__(self, in_params: str, out_params: str, operation: str, name: str = "kernel",
                 **kw: Any) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        raise _no_kernels(f"ElementwiseKernel {self.name}")


class ReductionKernel(ElementwiseKernel):
    def __init__(self, in_params: str, out_params: str, map_expr: str, reduce_expr: str,
                 post_map_expr: str, identity: Any, name: str = "reduce_kernel",
                 **kw: Any) -> None:
        self.name = name


def memoize(for_each_device: bool = False) -> Callable[[Callable[..., Any]], Any]:
    """CuPy's ``memoize``: cache a function's results by its arguments (per device)."""

    def deco(fn: Callable[..., Any]) -> Any:
        cache: dict[Any, Any] = {}

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            key = (cuda.get_device_id() if for_each_device else 0, args,
                   tuple(sorted(kwargs.items())))
            if key not in cache:
                cache[key] = fn(*args, **kwargs)
            return cache[key]

        return run

    return deco


# ---- cupy.lib.stride_tricks ---------------------------------------------------------------

def as_strided(x: Any, shape: Any = None, strides: Any = None) -> ndarray:
    """A writable view of ``x``'s buffer (CuPy has no read-only arrays)."""
    if not isinstance(x, ndarray):
        raise A.unsupported(x)
    r = np.lib.stride_tricks.as_strided(x._a, shape, strides, writeable=x._a.flags.writeable)
    return A.wrap(r, (x,))  # type: ignore[no-any-return]


def broadcast_to(x: Any, shape: Any) -> ndarray:
    """``x`` broadcast to ``shape``: a writable view, as CuPy's (NumPy's is read-only)."""
    if not isinstance(x, ndarray):
        raise A.unsupported(x)
    r = np.broadcast_to(x._a, shape)
    if x._a.flags.writeable:
        r.flags.writeable = True
    return A.wrap(r, (x,))  # type: ignore[no-any-return]


stride_tricks = types.ModuleType("cupy.lib.stride_tricks")
stride_tricks.as_strided = as_strided  # type: ignore[attr-defined]
lib = types.ModuleType("cupy.lib")
lib.stride_tricks = stride_tricks  # type: ignore[attr-defined]


# ---- everything else: NumPy's functions and ufuncs on fake arrays -------------------------

def _function(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        return A.call(fn, args, kwargs)

    return run


def __getattr__(name: str) -> Any:
    if name.startswith("__") or name in _NOT_IN_CUPY or not hasattr(np, name):
        raise AttributeError(f"module 'cupy' has no attribute '{name}' (not in the fake either)")
    obj = getattr(np, name)
    if isinstance(obj, np.ufunc):
        out: Any = A.ufunc(name) if obj is getattr(np, obj.__name__, None) else Ufunc(obj)
    elif callable(obj) and not isinstance(obj, type):
        out = _function(obj)
    else:
        out = obj  # dtypes, scalar types, constants
    globals()[name] = out
    return out
