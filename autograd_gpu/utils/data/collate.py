"""Turning samples into batches: ``default_collate`` (stack a list of samples) and
``default_convert`` (convert one sample when automatic batching is off), as in PyTorch.

NumPy arrays and scalars are recognised by their type's module, so this file needs no numpy
import; ``as_tensor`` does the conversion.
"""

from __future__ import annotations

import collections.abc
import copy
from typing import Any, Callable, Sequence

from ... import dtypes
from ...creation import as_tensor, tensor
from ...functions import stack
from ...tensor import Tensor

_COLLATE_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                "lists; found {}")
_NUMPY_STRINGS = ("str_", "string_", "bytes_")


def _numpy_kind(x: Any) -> str | None:
    """'array' for a NumPy array, 'scalar' for a NumPy scalar, None for anything else."""
    cls = type(x)
    if cls.__module__ != "numpy" or cls.__name__ in _NUMPY_STRINGS:
        return None
    return "array" if cls.__name__ in ("ndarray", "memmap") else "scalar"


def _is_text_array(arr: Any) -> bool:
    # NOTE: string, unicode and object arrays cannot become tensors (PyTorch's [SaUO] check).
    return arr.dtype.char in "SaUO"


def _rebuild(elem: Any, items: list[Any], mutable: type, fallback: Callable[[], Any]) -> Any:
    """A container of ``elem``'s type holding ``items`` (keys or positions as in ``elem``);
    a plain dict/list when the type cannot be rebuilt that way."""
    try:
        if isinstance(elem, mutable):
            clone: Any = copy.copy(elem)
            if isinstance(elem, collections.abc.Mapping):
                clone.update(dict(zip(elem, items)))
            else:
                for i, v in enumerate(items):
                    clone[i] = v
            return clone
        rebuild: Any = type(elem)
        if isinstance(elem, collections.abc.Mapping):
            return rebuild(dict(zip(elem, items)))
        return rebuild(items)
    except TypeError:
        return fallback()


def default_collate(batch: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch, recursing through containers.

    Tensors are stacked along a new first dimension; NumPy arrays become tensors and are
    stacked; Python floats become a float64 tensor, ints an int64 tensor and bools a bool
    tensor; strings and bytes are returned as they came (the list, or inside a sequence the
    tuple of one position's values, as in PyTorch); dicts collate key by key, namedtuples field
    by field, and other sequences position by position (tuples come back as lists, as in
    PyTorch).

    Example:
        >>> default_collate([(tensor([1.0]), 0), (tensor([2.0]), 1)])
        [tensor([[1.],
                [2.]]), tensor([0, 1])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    kind = _numpy_kind(elem)
    if kind == "array":
        if _is_text_array(elem):
            raise TypeError(_COLLATE_ERR.format(elem.dtype))
        return stack([as_tensor(b) for b in batch], 0)
    if kind == "scalar":
        return as_tensor(batch)
    if isinstance(elem, float):
        return tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        items = [default_collate([d[key] for d in batch]) for key in elem]
        return _rebuild(elem, items, collections.abc.MutableMapping,
                        lambda: dict(zip(elem, items)))
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        items = [default_collate(s) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return items
        return _rebuild(elem, items, collections.abc.MutableSequence, lambda: items)
    raise TypeError(_COLLATE_ERR.format(type(elem)))


def default_convert(data: Any) -> Any:
    """Convert one sample when automatic batching is off (``batch_size=None``): NumPy arrays
    and scalars become tensors, containers are converted element-wise, anything else is
    returned as it is."""
    kind = _numpy_kind(data)
    if kind == "array":
        return data if _is_text_array(data) else as_tensor(data)
    if kind == "scalar":
        return as_tensor(data)
    if isinstance(data, (Tensor, str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        items = [default_convert(data[key]) for key in data]
        return _rebuild(data, items, collections.abc.MutableMapping,
                        lambda: dict(zip(data, items)))
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence):
        items = [default_convert(d) for d in data]
        return _rebuild(data, items, collections.abc.MutableSequence, lambda: items)
    return data
