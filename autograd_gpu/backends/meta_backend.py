"""The ``meta`` device's backend: the CPU backend's code on ``MetaArray``s (shape, dtype and
strides, no storage), so every op computes the shape and dtype of its result and nothing else.

NOTE: ``name`` stays ``"numpy"``: the ops take their NumPy code paths, whose NumPy calls
dispatch to ``MetaArray``; what has no shape rule raises ``NotImplementedError`` naming the
NumPy function (``meta_array.py``). Factories make MetaArrays directly; nothing is allocated
or counted by the memory tracker (meta tensors hold 0 bytes, as in PyTorch).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .base import Array, Shape
from .meta_array import MetaArray, MetaUnsupported
from .numpy_backend import NumpyBackend

_NO_DATA = "Cannot copy out of meta tensor; no data!"


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)


# NOTE: typed as Any: the overrides take NumPy's names with other signatures than NumPy's stubs.
_NumpyBackend: Any = NumpyBackend


class MetaBackend(_NumpyBackend):
    """NumPy's backend, run on MetaArrays."""

    ndarray = MetaArray
    generic = MetaArray

    # creation
    @staticmethod
    def asarray(obj: Any, dtype: Any = None) -> Array:
        if isinstance(obj, MetaArray):
            return obj if dtype is None else obj.astype(dtype)
        host = np.asarray(obj, dtype=dtype)  # NOTE: data given on the host (tensor(data))
        return MetaArray(host.shape, host.dtype)

    @staticmethod
    def empty(shape: Any, dtype: Any = float, **kwargs: Any) -> Array:
        return MetaArray(_shape(shape), dtype)

    zeros = ones = empty

    @staticmethod
    def full(shape: Any, fill_value: Any, dtype: Any = None, **kwargs: Any) -> Array:
        return MetaArray(_shape(shape), np.asarray(fill_value).dtype if dtype is None else dtype)

    @staticmethod
    def linspace(start: Any, stop: Any, num: int = 50, *args: Any, dtype: Any = None,
                 **kwargs: Any) -> Array:
        return MetaArray((int(num),), float if dtype is None else dtype)

    @staticmethod
    def arange(start: Any, stop: Any, step: Any, dtype: str) -> Array:
        return MetaArray((max(0, math.ceil((stop - start) / step)),), dtype)

    @staticmethod
    def eye(n: int, m: int, dtype: str) -> Array:
        return MetaArray((n, m), dtype)

    @staticmethod
    def zeros_like(x: Array, dtype: Any = None, **kwargs: Any) -> Array:
        return MetaArray(x.shape, x.dtype if dtype is None else dtype)

    ones_like = zeros_like

    @staticmethod
    def copy(x: Array) -> Array:
        return MetaArray(x.shape, x.dtype)

    ascontiguousarray = copy

    @staticmethod
    def astype(x: Array, dtype: str) -> Array:
        return x.astype(dtype)

    @staticmethod
    def to_host(x: Array) -> Any:
        raise NotImplementedError(_NO_DATA)

    @staticmethod
    def from_host(x: Any) -> Array:
        return MetaArray(x.shape, x.dtype)

    @staticmethod
    def from_dlpack(x: Any) -> Array:
        raise MetaUnsupported("from_dlpack is not supported on the meta device")

    # values no meta array has
    @staticmethod
    def erf(x: Array) -> Array:
        return MetaArray(x.shape, x.dtype)

    # index checks: no entries to check (PyTorch's meta kernels do not check them either)
    @staticmethod
    def check_index(shape: Shape, key: tuple[Any, ...]) -> bool:
        return False

    @staticmethod
    def out_of_range(index: Array, lo: int, hi: int) -> int | None:
        return None

    # movement
    @staticmethod
    def expand(x: Array, shape: Shape) -> Array:
        return np.broadcast_to(x, shape)

    @staticmethod
    def as_strided(x: Array, shape: Shape, strides: Shape, writeable: bool = False) -> Array:
        return MetaArray(shape, x.dtype, strides)

    @staticmethod
    def index_add(x: Array, key: Any, values: Array) -> None:
        return None

    @staticmethod
    def shares_memory(x: Array, y: Array, **kwargs: Any) -> bool:
        return False

    @staticmethod
    def owns_writable(x: Array) -> bool:
        return True

    # random: the shape of the draw
    @staticmethod
    def new_generator(seed: int) -> Any:
        return None

    @staticmethod
    def random(gen: Any, shape: Shape, dtype: str) -> Array:
        return MetaArray(shape, dtype)

    standard_normal = random

    @staticmethod
    def integers(gen: Any, low: int, high: int, shape: Shape, dtype: str) -> Array:
        return MetaArray(shape, dtype)

    @staticmethod
    def permutation(gen: Any, n: int) -> Array:
        return MetaArray((n,), np.int64)

    @staticmethod
    def uniform(gen: Any, shape: Shape, lo: float, hi: float, dtype: str) -> Array:
        return MetaArray(shape, dtype)

    def normal(self, gen: Any, mean: Any, std: Any, shape: Shape, dtype: str) -> Array:
        return MetaArray(shape, dtype)


meta_backend = MetaBackend()
