"""Diagonals and strided views: ``diagonal`` (a view), ``diag``, ``diag_embed``, ``diagflat``,
``Tensor.unfold`` and ``as_strided`` (views), ``ravel``, ``swapdims``, ``broadcast_to`` and
``Tensor.storage_offset``. Part of the manip family (``functions/manip.py``).

The views share the input's storage and version counter: a write through one lands in the
input, and an in-place op on one is replayed on its base (``view_writes``), as in PyTorch.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..ops import manip as P
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .out import write_out

__all__ = ["diagonal", "diag", "diag_embed", "diagflat", "as_strided", "ravel", "swapdims",
           "broadcast_to"]


def _diag_dims(input: Tensor, ndim: int, dim1: int, dim2: int) -> tuple[int, int]:  # noqa: A002
    d1, d2 = normalize_dim(dim1, ndim), normalize_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    """A view of the diagonal ``offset`` (> 0 above the main one, < 0 below) of the matrices in
    dims ``dim1``, ``dim2``; those dims are removed and the diagonal becomes the last dim
    (DiagonalBackward0). Writes through it land in ``input``.

    Example:
        >>> diagonal(tensor([[1, 2], [3, 4]]))
        tensor([1, 4])
    """
    d1, d2 = _diag_dims(input, input.ndim, dim1, dim2)
    return P.Diagonal.apply(input, offset=offset, d1=d1, d2=d2)


def diag(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """A 1-D ``input`` on the diagonal ``diagonal`` of a square zero matrix, or a copy of the
    diagonal ``diagonal`` of a 2-D ``input``.

    Example:
        >>> diag(tensor([1, 2]))
        tensor([[1, 0],
                [0, 2]])
    """
    if input.ndim == 1:
        result = P.DiagEmbed.apply(input, offset=diagonal, d1=0, d2=1)
    elif input.ndim == 2:
        result = P.DiagonalCopy.apply(input, offset=diagonal, d1=0, d2=1)
    else:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")
    if out is None:
        return result
    # NOTE: PyTorch's diag with out= records nothing and refuses no input requiring grad
    return write_out("diag", result.detach(), out, exact=(True,))


def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: A002
    """A zero tensor of one more dim with ``input``'s last dim on the diagonal ``offset`` of
    the matrices in (new) dims ``dim1``, ``dim2``; they have size ``input.shape[-1] +
    |offset|`` (DiagEmbedBackward0).

    Example:
        >>> diag_embed(tensor([[1, 2]]))
        tensor([[[1, 0],
                 [0, 2]]])
    """
    d1, d2 = _diag_dims(input, input.ndim + 1, dim1, dim2)
    return P.DiagEmbed.apply(input, offset=offset, d1=d1, d2=d2)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:  # noqa: A002
    """The flattened ``input`` on the diagonal ``offset`` of a square zero matrix."""
    return P.DiagEmbed.apply(input.contiguous().view(-1), offset=offset, d1=0, d2=1)


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:  # noqa: A002
    """``Tensor.unfold``: a view of the windows of ``size`` elements every ``step`` along
    ``dimension``, which then counts the windows; the window is a new last dim
    (UnfoldBackward0). Windows may overlap (``step < size``).

    Example:
        >>> arange(5).unfold(0, 2, 2)
        tensor([[0, 1],
                [2, 3]])
    """
    d = normalize_dim(dimension, input.ndim)
    most = input.shape[d] if input.ndim else 1
    if size > most:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {most} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return P.Unfold.apply(input, dim=d, size=size, step=step)


def _storage_offset(t: Tensor) -> int:
    """``Tensor.storage_offset()``: where the tensor's first element sits in its storage (the
    memory of the tensor it is a view of), in elements."""
    base = t._base if t._base is not None else t
    return int(t.backend.element_offset(t._data, base._data))


def _storage_size(t: Tensor) -> int:
    """The elements in ``t``'s storage: those its base spans."""
    base = t._base if t._base is not None else t
    a = base._data
    if not a.size:
        return 0
    return 1 + sum((n - 1) * s // a.itemsize for n, s in zip(a.shape, a.strides))


def _check_strided(input: Tensor, size: tuple[int, ...], stride: tuple[int, ...],  # noqa: A002
                   storage_offset: int | None, here: int, have: int) -> int:
    """PyTorch's checks of an ``as_strided`` geometry on a storage of ``have`` elements
    (``input``'s own offset ``here``); the storage offset it starts at."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    offset = here if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(s < 0 for s in size):
        raise RuntimeError("Storage size calculation overflowed with sizes="
                           f"{list(size)} and strides={list(stride)}")
    if all(size):
        need = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
        if need > have:
            item = input._data.itemsize
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize {item} requiring a storage size of {need * item} are "
                f"out of bounds for storage of size {have * item}")
    return offset


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],  # noqa: A002
               storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given ``size``, element ``stride``s and
    ``storage_offset`` (default: ``input``'s own), counted from the storage's start as in
    PyTorch (AsStridedBackward0). Elements may repeat (a stride of 0, overlapping strides);
    their gradients then add up, and an input whose elements share memory shares them out.

    Example:
        >>> arange(6.).as_strided((2, 2), (1, 2))
        tensor([[0., 2.],
                [1., 3.]])
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    here = _storage_offset(input)
    offset = _check_strided(input, size, stride, storage_offset, here, _storage_size(input))
    return P.AsStrided.apply(input, size=size, stride=stride, offset=offset - here,
                             in_strides=tuple(input.stride()))


def ravel(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` flattened to 1-D: a view when it is contiguous, else a contiguous copy's."""
    return input.contiguous().view(-1)


def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    """``transpose``'s other name: a view with ``dim0`` and ``dim1`` swapped."""
    return input.transpose(dim0, dim1)


def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:  # noqa: A002
    """A view of ``input`` broadcast to ``size`` (``expand``; -1 keeps a dim)."""
    return input.expand(*size)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "diagonal": diagonal, "diag": diag, "diag_embed": diag_embed, "diagflat": diagflat,
    "unfold": unfold, "as_strided": as_strided, "storage_offset": _storage_offset,
    "ravel": ravel, "swapdims": swapdims,
}
