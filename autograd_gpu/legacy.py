"""Legacy typed tensors, as PyTorch keeps them: ``FloatTensor``, ``LongTensor``, ...,
``cuda.FloatTensor``, ..., the ``Tensor(data)`` / ``Tensor(*sizes)`` constructor and
``Tensor.type()``.

- ``FloatTensor([1, 2])`` is ``tensor([1., 2.])``; ``FloatTensor(2, 3)`` an uninitialised
  2x3 float32 tensor; ``FloatTensor(t)`` an alias of ``t`` when it has that dtype (PyTorch's
  ``TypeError`` otherwise). ``Tensor(...)`` does the same with the default dtype and accepts a
  tensor of any dtype. Only ``device=`` is taken, and only the class's device type.
- The classes are not subclasses of ``Tensor``: their metaclass (``tensortype``) makes
  ``isinstance(x, FloatTensor)`` mean "a CPU tensor of dtype float32", as in PyTorch.
- ``x.type()`` is ``'torch.FloatTensor'`` (``'torch.cuda.FloatTensor'``,
  ``'torch.meta.FloatTensor'``); ``x.type(LongTensor)``, ``x.type('torch.DoubleTensor')`` and
  ``x.type(torch.float64)`` convert (returning ``x`` itself when nothing changes).
"""

from __future__ import annotations

import operator
from typing import Any

from . import dtypes
from .backends import cuda_support
from .device import as_device
from .tensor import Size, Tensor

__all__ = ["BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
           "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "tensortype"]

# The ``<Name>Tensor`` part of each dtype's legacy type name.
_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
          "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
          "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
          "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64"}
_SIGNATURES = (" * (*, torch.device device = None)\n * (torch.Storage storage)\n"
               " * (Tensor other)\n * (tuple of ints size, *, torch.device device = None)\n"
               " * (object data, *, torch.device device = None)\n")


class tensortype(type):  # noqa: N801  (PyTorch's name)
    """The metaclass of the typed tensor classes: calling one builds a tensor of its dtype;
    ``isinstance(x, cls)`` holds for tensors of its dtype on its device type."""

    dtype: dtypes.dtype
    is_cuda: bool
    is_sparse = False
    _device_type: str

    def __instancecheck__(cls, obj: Any) -> bool:
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.device.type == cls._device_type)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return construct(cls.dtype, cls._device_type, args, kwargs, exact=True,
                         name=f"torch.{'cuda.' if cls.is_cuda else ''}{cls.__name__}")


def _typed(dt: dtypes.dtype, device_type: str) -> tensortype:
    name = _NAMES[dt.name] + "Tensor"
    module = "autograd_gpu.cuda" if device_type == "cuda" else "autograd_gpu"
    doc = f"Legacy constructor of {device_type} tensors of dtype {dt}: ``{name}(data)`` or " \
          f"``{name}(*sizes)``."
    return tensortype(name, (), {"dtype": dt, "is_cuda": device_type == "cuda",
                                 "_device_type": device_type, "__module__": module,
                                 "__qualname__": name, "__doc__": doc})


_DTYPES = [dtypes.float32, dtypes.float64, dtypes.float16, dtypes.uint8, dtypes.int8,
           dtypes.int16, dtypes.int32, dtypes.int64, dtypes.bool]
CPU_TYPES = {c.__name__: c for c in (_typed(d, "cpu") for d in _DTYPES)}
CUDA_TYPES = {c.__name__: c for c in (_typed(d, "cuda") for d in _DTYPES)}
FloatTensor, DoubleTensor, HalfTensor, ByteTensor, CharTensor, ShortTensor, IntTensor, \
    LongTensor, BoolTensor = CPU_TYPES.values()


# ---- construction --------------------------------------------------------------------------

def _type_name(x: Any) -> str:
    """Python's ``tp_name`` of ``x``'s type, as PyTorch's messages print it."""
    if isinstance(x, Tensor):
        return "Tensor"
    if isinstance(x, dtypes.dtype):
        return "torch.dtype"
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _bad_combination(args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    got = ", ".join([_type_name(a) for a in args] +
                    [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
    return TypeError(f"new() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n{_SIGNATURES}")


def _options(dt: dtypes.dtype, dev: Any) -> str:
    return (f"TensorOptions(dtype={dtypes.c_type_name(dt)}, device={dev}, "
            "layout=Strided, requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def _index(x: Any) -> int | None:
    if isinstance(x, (bool, float)):
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def construct(dt: dtypes.dtype, device_type: str, args: tuple[Any, ...],
              kwargs: dict[str, Any], exact: bool, name: str) -> Tensor:
    """PyTorch's legacy ``new()``: no argument, a tensor, a sequence of data, or sizes.

    ``exact``: a tensor argument must have dtype ``dt`` (the typed classes); ``Tensor(t)``
    takes any dtype.
    """
    from .creation import empty, tensor

    if set(kwargs) - {"device"}:
        raise _bad_combination(args, kwargs)
    if device_type == "cuda" and cuda_support._cupy() is None:
        raise TypeError(f"type {name} not available. Torch not compiled with CUDA enabled.")
    dev = as_device(device_type if kwargs.get("device") is None else kwargs["device"])
    if dev.type != device_type:
        raise RuntimeError(f"legacy constructor expects device type: {device_type} but device "
                           f"type: {dev.type} was passed")
    if not args:
        return empty(0, dtype=dt, device=dev)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if exact and first.dtype is not dt:
            raise TypeError(f"expected {_options(dt, dev)} (got "
                            f"{_options(first.dtype, first.device)})")
        # NOTE: PyTorch returns an alias (AliasBackward0 when it requires grad; a view here).
        return first.view_as(first) if first.requires_grad else first.detach()
    if len(args) == 1 and isinstance(first, str):
        raise TypeError("new(): invalid data type 'str'")
    if len(args) == 1 and not isinstance(first, Size) and (
            isinstance(first, (list, tuple, range))
            or (hasattr(first, "__array_interface__") and getattr(first, "ndim", 0) > 0)):
        return tensor(first, dtype=dt, device=dev)
    sizes = [_index(a) for a in (first if len(args) == 1 and isinstance(first, Size) else args)]
    if sizes and sizes[0] is None:
        if len(args) == 1:
            raise TypeError(f"new(): data must be a sequence (got {_type_name(first)})")
        raise _bad_combination(args, kwargs)
    for i, s in enumerate(sizes):
        if s is None:
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {i + 1} "
                            f"with error \"type must be tuple of ints,but got "
                            f"{_type_name(args[i])}\"")
    return empty(tuple(sizes), dtype=dt, device=dev)


def construct_default(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Tensor:
    """``Tensor(...)`` (or a subclass without its own ``__new__``): the default dtype's type."""
    out = construct(dtypes.get_default_dtype(), "cpu", args, kwargs, exact=False,
                    name="torch.Tensor")
    if cls is not Tensor:
        out = out.detach()
        out.__class__ = cls
    return out


# ---- Tensor.type() -------------------------------------------------------------------------

def type_name(t: Tensor) -> str:
    """``'torch.FloatTensor'``, ``'torch.cuda.LongTensor'``, ``'torch.meta.FloatTensor'``."""
    kind = t.device.type
    return f"torch.{'' if kind == 'cpu' else kind + '.'}{_NAMES[t.dtype.name]}Tensor"


def _by_string(name: str) -> tensortype:
    kind, _, short = name.removeprefix("torch.").rpartition(".")
    table = {"": CPU_TYPES, "cuda": CUDA_TYPES}.get(kind, {})
    if not name.startswith("torch.") or short not in table:
        raise ValueError(f"invalid type: '{name}'")
    return table[short]


def convert(t: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """``Tensor.type(dtype=None, non_blocking=False)``: the type name, or ``t`` converted to a
    typed class (or its name, or a dtype); ``t`` itself when it already has that type."""
    if dtype is None:
        return type_name(t)
    if isinstance(dtype, dtypes.dtype):
        return t.to(dtype)
    if isinstance(dtype, str):
        cls = _by_string(dtype)
    elif dtype is Tensor:  # NOTE: the default tensor type: CPU, the default dtype
        return t.to("cpu", dtypes.get_default_dtype())
    elif isinstance(dtype, tensortype):
        cls = dtype
    elif isinstance(dtype, type):
        where = "" if dtype.__module__ == "builtins" else dtype.__module__ + "."
        raise ValueError(f"invalid type: '{where}{dtype.__qualname__}'")
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    dev = t.device if t.device.type == cls._device_type else cls._device_type
    return t.to(dev, cls.dtype)
