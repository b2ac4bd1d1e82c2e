"""How PyTorch reads the key of ``t[key]`` and ``t[key] = value``, as a NumPy key.

PyTorch walks the key entry by entry over the partly indexed tensor (``applySlicing``): an
integer selects, a slice slices, None adds a dimension, each Ellipsis skips the dimensions no other
entry names (several Ellipses are allowed), and index tensors are collected for one advanced
index at the end. ``translate`` turns the user's entries into arrays; ``spell_out`` does the walk,
raising PyTorch's errors, and returns a NumPy key without Ellipsis that gives the same result.
"""

from __future__ import annotations

import builtins
import operator
import warnings
from typing import Any

from .. import dtypes
from ..backends.composite import key_width
from ..tensor import Tensor

_INDEX_DTYPES = "tensors used as indices must be long, int, byte or bool tensors"
_NON_TUPLE = ("Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
              "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this "
              "will be interpreted as tensor index, x[torch.tensor(seq)], which will result "
              "either in an error or a different result")
_UINT8 = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
          "instead.")


def entries(key: Any) -> tuple[Any, ...]:
    """The key's entries: a tuple's items, else the key alone. NOTE: as in PyTorch (and old
    NumPy), a short list holding a list, tensor, slice, None or Ellipsis stands for a tuple,
    with PyTorch's deprecation warning."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, list) and len(key) < 32 and builtins.any(
            isinstance(k, (Tensor, list, tuple, range, slice)) or k is None or k is Ellipsis
            or getattr(k, "ndim", 0) and hasattr(k, "__array_interface__") for k in key):
        warnings.warn(_NON_TUPLE, UserWarning, stacklevel=6)
        return tuple(key)
    return (key,)


def translate(t: Tensor, key: Any) -> tuple[tuple[Any, ...], bool]:
    """The user's key as NumPy key entries (index tensors become arrays; batched ones stay
    tensors), one per entry, and whether any entry is an advanced index."""
    out: list[Any] = []
    advanced = False
    for k in entries(key):
        if isinstance(k, Tensor):
            k = _index_tensor(t, k)
            advanced = advanced or not isinstance(k, int)
        elif isinstance(k, str):
            raise TypeError("new(): invalid data type 'str'")
        elif isinstance(k, (list, tuple, range)) or hasattr(k, "__array_interface__") and \
                not isinstance(k, (int, slice)):
            arr = t.backend.asarray(list(k) if isinstance(k, range) else k)
            if arr.size == 0 and arr.dtype.kind == "f":  # x[[]]: an empty integer index
                arr = arr.astype("int64")
            if arr.dtype.kind not in "iub":
                raise IndexError(_INDEX_DTYPES)
            k = arr
            advanced = True
        elif isinstance(k, slice):
            k = _int_slice(k)
        elif k is None or k is Ellipsis:
            pass
        elif isinstance(k, bool):
            k = t.backend.asarray(k)
            advanced = True
        elif isinstance(k, int) or hasattr(k, "__index__"):
            k = int(k)
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got " + type(k).__name__ + ")"
            )
        out.append(k)
    return tuple(out), advanced


def _int_slice(k: slice) -> slice:
    """``k`` with Python ints (from anything with ``__index__``, such as a 0-d integer
    tensor), and PyTorch's refusal of a negative step."""
    try:
        parts = [None if v is None else operator.index(v) for v in (k.start, k.stop, k.step)]
    except TypeError:
        raise TypeError("slice indices must be integers or None or have an __index__ "
                        "method") from None
    if parts[2] is not None and parts[2] < 0:
        raise ValueError("step must be greater than zero")
    return slice(*parts)


def _index_tensor(t: Tensor, k: Tensor) -> Any:
    """An index tensor as a key entry: an int (0-d integer), an array, or (batched) itself."""
    dt = k.dtype
    if dt.is_floating_point or dt is dtypes.int8 or dt is dtypes.int16:
        raise IndexError(_INDEX_DTYPES)
    if k._level:
        if dt is dtypes.bool or dt is dtypes.uint8:
            raise RuntimeError(
                "vmap: We do not support batching operators that can support dynamic shape. "
                "Attempting to batch over indexing with a boolean mask.")
        return k
    if dt is dtypes.uint8:
        warnings.warn(_UINT8, UserWarning, stacklevel=6)
        k = k.bool()
    elif k.ndim == 0 and dt is not dtypes.bool:
        return int(k.item())
    if k._device is not t._device and k._device.type != "cpu":
        raise RuntimeError("indices should be either on cpu or on the same device as the "
                           f"indexed tensor ({t._device})")
    return k._data if k._device is t._device else t.backend.asarray(k.backend.to_host(k._data))


def _is_array(k: Any) -> bool:
    """True for an index array (not an int, a slice, None or a batched index tensor)."""
    return getattr(k, "ndim", None) is not None and not isinstance(k, (int, Tensor))


def _width(k: Any) -> int:
    """How many dimensions of the tensor an entry names (PyTorch's specified dims)."""
    return 1 if isinstance(k, Tensor) else key_width(k)


def is_full_slice(k: slice, size: int) -> bool:
    """True for a slice PyTorch skips as a no-op (from 0, step 1, to at least ``size``)."""
    return k.start in (None, 0) and k.step in (None, 1) and (k.stop is None or k.stop >= size)


def spell_out(shape: tuple[int, ...], key: tuple[Any, ...], single: bool) -> tuple[Any, ...]:
    """PyTorch's walk over the entries ``key`` (from ``translate``) of a tensor of ``shape``:
    its IndexError for too many indices and for an integer out of range (naming the entry's
    position in the key, as PyTorch does), and the equivalent NumPy key with each Ellipsis
    spelled out as full slices. ``single``: the user's key was one entry, not a tuple."""
    if single and not shape and (isinstance(key[0], int) or isinstance(key[0], slice)):
        k = key[0]
        if isinstance(k, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if k == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"index {k} is out of bounds for dimension 0 with size 0")
    specified = builtins.sum(_width(k) for k in key)
    if specified > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    fill = len(shape) - specified  # the dimensions each Ellipsis stands for
    sizes = list(shape)  # the partly indexed tensor's sizes
    out: list[Any] = []
    dim = advanced_end = 0
    for pos, k in enumerate(key):
        rank = len(sizes)
        if k is Ellipsis:
            out += [slice(None)] * builtins.max(builtins.min(fill, rank - dim), 0)
            dim += fill
        elif k is None or _width(k) == 0:  # None, or a 0-d bool: a new dimension
            if dim > rank:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-rank - 1}, {rank}], but got {dim})")
            sizes.insert(dim, 1)
            out.append(k)
            dim += 1
            advanced_end = dim if k is not None else advanced_end
        elif isinstance(k, int):
            # NOTE: past the last dimension (several Ellipses) PyTorch reads a size off the end
            # of its size array, in practice 0; the index is then out of range.
            size = sizes[dim] if dim < rank else 0
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {pos} with size "
                                 f"{size}")
            del sizes[dim]
            out.append(k)
        elif isinstance(k, slice):
            if dim < rank:
                sizes[dim] = len(range(*k.indices(sizes[dim])))
                out.append(k)
            elif not is_full_slice(k, 0):
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-rank}, {rank - 1}], but got {dim})")
            dim += 1
        else:  # an index array (or batched index tensor)
            out.append(k)
            dim += _width(k)
            advanced_end = dim
    if advanced_end > len(sizes):
        raise IndexError(f"too many indices for tensor of dimension {len(sizes)} "
                         f"(got {advanced_end})")
    return tuple(out)


def check_masks(shape: tuple[int, ...], key: tuple[Any, ...]) -> None:
    """PyTorch's IndexError for a boolean mask whose shape does not match the dims it covers
    (``key`` is spelled out: no Ellipsis)."""
    full: list[int] = []  # the indexed shape with the None dims inserted, as PyTorch reports it
    dim = 0
    for k in key:
        if k is None:
            full.append(1)
        else:
            full += shape[dim:dim + _width(k)]
            dim += _width(k)
    full += shape[dim:]
    pos = 0
    for k in key:
        w = 1 if k is None else _width(k)
        if _is_array(k) and k.dtype.kind == "b" and k.ndim:
            for j in range(w):
                if pos + j < len(full) and k.shape[j] != full[pos + j]:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {full} at index {pos + j}"
                    )
        pos += w


def check_broadcast(backend: Any, key: tuple[Any, ...]) -> None:
    """PyTorch's IndexError when the index arrays do not broadcast together (a k-d mask counts
    as k index arrays of its number of true entries)."""
    arrays = [k for k in key if _is_array(k) or isinstance(k, Tensor)]
    if len(arrays) < 2:
        return
    shapes: list[tuple[int, ...]] = []
    for k in arrays:
        if isinstance(k, Tensor) or k.dtype.kind != "b":
            shapes.append(tuple(k.shape))
        else:
            count = int(backend.to_host(k.sum())) if k.ndim else int(bool(k))
            shapes += [(count,)] * builtins.max(k.ndim, 1)
    n = builtins.max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        for i, d in enumerate((1,) * (n - len(s)) + s):
            if d != 1 and out[i] not in (1, d):
                raise IndexError("shape mismatch: indexing tensors could not be broadcast "
                                 "together with shapes " + ", ".join(str(list(x)) for x in shapes))
            if d != 1:
                out[i] = d
