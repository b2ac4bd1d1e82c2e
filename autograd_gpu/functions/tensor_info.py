"""Questions about tensors: ``is_signed``, ``is_nonzero``, ``is_same_size``,
``is_conj``/``is_neg``/``is_complex``, ``typename``, ``adjoint``, and the legacy constructor
``Tensor.new``. The conjugate family (``real``, ``conj``, ...) is in ``complex.py``.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..tensor import Tensor
from .checks import expect_tensor

__all__ = ["is_signed", "is_nonzero", "is_same_size", "is_conj", "is_neg", "is_complex",
           "is_storage", "typename", "adjoint", "is_inference"]

_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
               "complex64": "ComplexFloatTensor", "complex128": "ComplexDoubleTensor"}


def is_signed(input: Tensor) -> bool:  # noqa: A002
    expect_tensor("is_signed", "input", 1, input)
    return input.dtype is not dtypes.bool and input.dtype.name != "uint8"


def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """The truth of a one-element tensor (PyTorch's errors for none or several)."""
    expect_tensor("is_nonzero", "input", 1, input)
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    expect_tensor("is_same_size", "input", 1, input)
    expect_tensor("is_same_size", "other", 2, other)
    return tuple(input.shape) == tuple(other.shape)


def is_conj(input: Tensor) -> bool:  # noqa: A002
    return False  # NOTE: conj is eager here (functions/complex.py), never a lazy view


def is_neg(input: Tensor) -> bool:  # noqa: A002
    return False  # NOTE: no lazy negation views either


def is_complex(input: Tensor) -> bool:  # noqa: A002
    expect_tensor("is_complex", "input", 1, input)
    return input.dtype.is_complex


def is_inference(input: Tensor) -> bool:  # noqa: A002
    expect_tensor("is_inference", "input", 1, input)
    return input.is_inference()


def is_storage(obj: Any) -> bool:
    from .convert import Storage

    return isinstance(obj, Storage)


def typename(obj: Any) -> str:
    """``torch.FloatTensor`` for a float32 CPU tensor (``torch.cuda.FloatTensor`` on CUDA), else
    the object's qualified type name."""
    if isinstance(obj, Tensor):
        prefix = "torch.cuda." if obj.device.type == "cuda" else "torch."
        return prefix + _TYPE_NAMES[obj.dtype.name]
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in ("builtins", "__builtin__") else f"{module}.{name}"


def adjoint(input: Tensor) -> Tensor:  # noqa: A002
    """The conjugate transpose of the last two dims (a view)."""
    expect_tensor("adjoint", "input", 1, input)
    if input.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    from .complex import conj

    return conj(input.transpose(-2, -1))


def _new(self: Tensor, *args: Any, device: Any = None, dtype: Any = None) -> Tensor:
    """The legacy constructor: ``t.new(2, 3)`` (uninitialised, ``t``'s dtype and device),
    ``t.new([1, 2])`` (data), ``t.new()`` (empty)."""
    dev = self.device if device is None else device
    dt = self.dtype if dtype is None else dtype
    if len(args) == 1 and not isinstance(args[0], int) and not isinstance(args[0], Tensor):
        from ..creation import tensor

        if isinstance(args[0], (list, tuple)) or hasattr(args[0], "__array__"):
            return tensor(args[0], dtype=dt, device=dev)
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0].detach()
    from ..creation import empty

    return empty(*args, dtype=dt, device=dev) if args else empty(0, dtype=dt, device=dev)


def _new_empty_strided(self: Tensor, size: Any, stride: Any, *, dtype: Any = None,
                       device: Any = None, requires_grad: bool = False) -> Tensor:
    from .factories import empty_strided

    return empty_strided(size, stride, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)


def _const_data_ptr(self: Tensor) -> int:
    return self.data_ptr()


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "is_signed": is_signed, "is_nonzero": is_nonzero, "is_same_size": is_same_size,
    "is_conj": is_conj, "is_neg": is_neg, "adjoint": adjoint, "new": _new, "new_empty_strided": _new_empty_strided,
    "const_data_ptr": _const_data_ptr,
}
