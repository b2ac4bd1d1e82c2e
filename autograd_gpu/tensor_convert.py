"""``Tensor``'s conversions: to Python and NumPy values (``item``, ``tolist``, ``numpy``, the
number protocols, ``len`` and iteration), to other dtypes and devices (``to``, ``float()``,
``cuda()``, ``type()``), the ``new_*`` factories, and layout queries (``stride``,
``is_contiguous``, ``data_ptr``). ``Tensor`` inherits them."""

from __future__ import annotations

from builtins import bool as _bool
from builtins import int as _int
from typing import TYPE_CHECKING, Any, Iterator

from . import dtypes
from .backends import cuda_support
from .device import CPU

if TYPE_CHECKING:
    from .tensor import Tensor

# NOTE: set by tensor.py once ``functions/`` and ``creation`` can be imported (they build on
# Tensor).
F: Any = None
_C: Any = None


class TensorConversions:
    """Conversion methods of ``Tensor`` (``self`` is always a ``Tensor``)."""

    if TYPE_CHECKING:  # NOTE: what Tensor provides
        _data: Any
        _device: Any
        _requires_grad: bool

        @property
        def backend(self) -> Any: ...

        @property
        def dtype(self) -> Any: ...

        @property
        def ndim(self) -> int: ...

        def detach(self) -> Tensor: ...

    def numpy(self, *, force: bool = False) -> Any:
        """The data as a NumPy array sharing memory (CPU tensors only)."""
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if self._device.type != "cpu":
            if not force:
                raise TypeError(
                    f"can't convert {self._device} device type tensor to "
                    "numpy. Use Tensor.cpu() to copy the tensor to host memory first."
                )
            return self.backend.to_host(self._data)
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        arr = self.detach().numpy()  # NOTE: a CUDA tensor refuses, as in PyTorch
        return arr if dtype is None else arr.astype(dtype)

    def item(self) -> Any:
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if self._device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        if cuda_support.CAPTURE[0] is not None and self._device.type == "cuda":
            cuda_support.refuse_during_capture("Tensor.item() (a copy of CUDA memory to the host)")
        return self._data.reshape(()).item() if self._device.type == "cpu" else self.cpu().item()

    def tolist(self) -> Any:
        if cuda_support.CAPTURE[0] is not None and self._device.type == "cuda":
            cuda_support.refuse_during_capture("Tensor.tolist() (a copy of CUDA memory to the "
                                               "host)")
        return self.backend.to_host(self._data).tolist()

    def __float__(self) -> float:
        self._check_scalar()
        return float(self.item())

    def __int__(self) -> int:
        self._check_scalar()
        return int(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if self._data.size != 1:
            many = "more than one value" if self._data.size else "no values"
            raise RuntimeError(f"Boolean value of Tensor with {many} is ambiguous")
        if cuda_support.CAPTURE[0] is not None and self._device.type == "cuda":
            cuda_support.refuse_during_capture("bool() of a CUDA tensor (a copy of CUDA memory "
                                               "to the host, e.g. an `if` on a tensor's value)")
        return bool(self.item())

    def _check_scalar(self) -> None:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(self._data.shape[0])

    def __iter__(self) -> Iterator[Tensor]:
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(F.unbind(self, 0))


    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._data.__dlpack_device__()

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        return F.to(self, *args, **kwargs)

    def cpu(self) -> Tensor:
        return F.to(self, CPU)

    def cuda(self, device: Any = None) -> Tensor:
        return F.to(self, "cuda" if device is None else device)

    def type(self, dtype: Any = None, non_blocking: _bool = False, **kwargs: Any) -> Any:
        from .legacy import convert

        return convert(self, dtype, non_blocking, **kwargs)  # type: ignore[arg-type]

    def float(self) -> Tensor:
        return F.to(self, dtypes.float32)

    def double(self) -> Tensor:
        return F.to(self, dtypes.float64)

    def half(self) -> Tensor:
        return F.to(self, dtypes.float16)

    def long(self) -> Tensor:
        return F.to(self, dtypes.int64)

    def int(self) -> Tensor:
        return F.to(self, dtypes.int32)

    def bool(self) -> Tensor:
        return F.to(self, dtypes.bool)

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: _bool = False) -> Tensor:
        """A new tensor from ``data`` with this tensor's dtype and device unless given."""
        return _C.new_tensor(self, data, dtype, device, requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: _bool = False) -> Tensor:
        return _C.zeros(*size, dtype=dtype or self.dtype, device=device or self._device,
                        requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: _bool = False) -> Tensor:
        return _C.ones(*size, dtype=dtype or self.dtype, device=device or self._device,
                       requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: _bool = False) -> Tensor:
        return _C.empty(*size, dtype=dtype or self.dtype, device=device or self._device,
                        requires_grad=requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: _bool = False) -> Tensor:
        return _C.full(size, fill_value, dtype=dtype or self.dtype, device=device or self._device,
                       requires_grad=requires_grad)

    def clone(self, *, memory_format: Any = None) -> Tensor:
        return F.clone(self)

    def contiguous(self, memory_format: Any = None) -> Tensor:
        return F.contiguous(self)

    def is_contiguous(self, memory_format: Any = None) -> _bool:
        return bool(self.backend.is_contiguous(self._data))

    def stride(self, dim: _int | None = None) -> Any:
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[F.normalize_dim(dim, self.ndim)]

    def data_ptr(self) -> _int:
        kind = self._device.type
        if kind == "meta":
            return 0  # NOTE: no storage, as PyTorch's meta tensors
        return int(self._data.__array_interface__["data"][0]) if kind == "cpu" else int(self._data.data.ptr)

    def untyped_storage(self) -> Any:
        return F.Storage(self)
