"""Interoperability and odds and ends of the ``torch`` namespace: ``frombuffer``, ``to_dlpack``,
``get_device``, ``resize_as_`` (and the deprecated ``Tensor.resize_as``), ``Tensor.addmm_`` and
``set_anomaly_enabled``.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from .. import dtypes
from ..autograd import anomaly
from ..device import CPU
from ..tensor import Tensor
from .checks import expect_tensor
from .inplace_ops import inplace
from .linalg import addmm
from .out import resize_

__all__ = ["frombuffer", "to_dlpack", "get_device", "resize_as_", "set_anomaly_enabled"]

_WARNED: set[str] = set()


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D CPU tensor over the bytes of ``buffer`` (any object with the buffer protocol),
    sharing its memory: ``count`` elements of ``dtype`` (-1: all) from byte ``offset``.

    A read-only buffer (``bytes``) gives PyTorch's warning once; its tensor stays read-only
    here (a write raises), where PyTorch's would write into it."""
    if not isinstance(dtype, dtypes.dtype):
        raise TypeError(f"frombuffer(): argument 'dtype' must be torch.dtype, not "
                        f"{type(dtype).__name__}")
    view = memoryview(buffer)
    length = view.nbytes
    size = dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif length - offset < count * size:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly and "frombuffer" not in _WARNED:
        _WARNED.add("frombuffer")
        warnings.warn("The given buffer is not writable, and PyTorch does not support "
                      "non-writable tensors. This means you can write to the underlying "
                      "(supposedly non-writable) buffer using the tensor. You may want to copy "
                      "the buffer to protect its data or make it writable before converting it to "
                      "a tensor. This type of warning will be suppressed for the rest of this "
                      "program.", UserWarning, stacklevel=2)
    array = np.frombuffer(view.cast("B"), dtype=dtype.name, count=count, offset=offset)
    out = Tensor._make(array, CPU)
    return out.requires_grad_() if requires_grad else out


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule sharing ``tensor``'s memory (``from_dlpack`` here or in PyTorch takes
    it back): a versioned one (DLPack 1.0) where the array library makes them, which keeps
    writes possible; else the legacy kind."""
    expect_tensor("to_dlpack", "tensor", 1, tensor)
    try:
        return tensor._data.__dlpack__(max_version=(1, 0))
    except TypeError:  # NOTE: an array library without DLPack 1.0
        return tensor._data.__dlpack__()


def get_device(input: Tensor) -> int:  # noqa: A002
    """The CUDA device index of ``input``, -1 on the CPU."""
    expect_tensor("get_device", "input", 1, input)
    return input.get_device()


def resize_as_(input: Tensor, the_template: Tensor, *,  # noqa: A002
               memory_format: Any = None) -> Tensor:
    """``input`` resized in place to ``the_template``'s shape (``Tensor.resize_``)."""
    expect_tensor("resize_as_", "input", 1, input)
    expect_tensor("resize_as_", "the_template", 2, the_template)
    return resize_(input, tuple(the_template.shape))


def _resize_as(t: Tensor, tensor: Tensor) -> Tensor:
    """The deprecated non-inplace ``Tensor.resize_as``: a reshape that keeps the element count
    (PyTorch's autograd ``Resize``), with its warning and error."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    shape = tuple(tensor.shape)
    n = 1
    for s in shape:
        n *= s
    if n != t.numel():
        dims = "x".join(map(str, shape))
        raise RuntimeError(f"requested resize to {dims} ({n} elements in total), but the given "
                           f"tensor has a size of {'x'.join(map(str, t.shape))} ({t.numel()} "
                           "elements). autograd's resize can only change the shape of a given "
                           "tensor, while preserving the number of elements. ")
    return t.reshape(shape)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for this thread (``autograd.set_detect_anomaly``'s
    switch without its context manager)."""
    anomaly.STATE.enabled = bool(enabled)
    anomaly.STATE.check_nan = bool(check_nan)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "resize_as": _resize_as,
    "addmm_": lambda t, mat1, mat2, *, beta=1, alpha=1: inplace(t, addmm, mat1, mat2, beta=beta,
                                                              alpha=alpha),
}
