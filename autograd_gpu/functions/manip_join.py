"""Splits, stacks, grids and broadcasting: ``tensor_split`` and ``hsplit``/``vsplit``/
``dsplit`` (views), ``hstack``/``vstack``/``dstack``/``column_stack``/``row_stack``,
``meshgrid``, ``cartesian_prod``, ``combinations``, ``atleast_1d``/``2d``/``3d``,
``broadcast_tensors`` and ``block_diag``. Part of the manip family (``functions/manip.py``).
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any, Callable, Sequence

from .. import dtypes
from ..autograd.node import user_stacklevel
from ..ops import manip as P
from ..ops import movement as M
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .out import check_out_grad, write_out
from .shape import _broadcast_shapes, cat, stack

__all__ = ["tensor_split", "hsplit", "vsplit", "dsplit", "hstack", "vstack", "dstack",
           "column_stack", "row_stack", "meshgrid", "cartesian_prod", "combinations",
           "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "block_diag"]


# ---- splits ------------------------------------------------------------------------------------

def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """``input`` cut along ``dim`` into ``sections`` pieces of near-equal size (the first
    ``size % sections`` one longer), or at the given ``indices`` (Python slice rules: negative
    ones count from the end, ones past it give empty pieces). A tensor argument is a 0-d
    sections count or a 1-D list of indices (int64, on the CPU).

    Each piece is a view of ``input`` (SliceBackward0), which takes in-place ops.

    Example:
        >>> tensor_split(arange(5), 2)
        (tensor([0, 1, 2]), tensor([3, 4]))
    """
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.device.type != "cpu":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be on cpu, "
                               f"but it's on {arg.device}")
        if arg.dtype is not dtypes.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {dtypes.scalar_type_name(arg.dtype)}")
        if arg.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {arg.ndim} dims")
        arg = arg.tolist()
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(arg, int):
        if arg <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {arg}")
        size, extra = divmod(n, arg)
        bounds = [0]
        for i in range(arg):
            bounds.append(bounds[-1] + size + (i < extra))
    else:
        bounds = [0] + [int(i) for i in arg] + [None]  # type: ignore[list-item]
    pre = (slice(None),) * d
    # NOTE: each piece is PyTorch's slice (SliceBackward0), also one spanning the whole dim
    return tuple(M.Index.apply(input, key=pre + (slice(a, b), Ellipsis), name="SliceBackward0",
                               advanced=False) for a, b in zip(bounds[:-1], bounds[1:]))


def _split_along(fn: str, input: Tensor, arg: Any, least: int, dim: int) -> tuple[Tensor, ...]:  # noqa: A002
    if input.ndim < least:
        raise RuntimeError(f"torch.{fn} requires a tensor with at least {least} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    if isinstance(arg, int):
        n = input.shape[dim]
        if arg == 0 or n % arg:
            raise RuntimeError(f"torch.{fn} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {n} is not divisible by the split_size "
                               f"{arg}!")
    return tensor_split(input, arg, dim)


def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:  # noqa: A002
    """``tensor_split`` along dim 1 (dim 0 of a 1-D tensor); ``sections`` must divide it."""
    return _split_along("hsplit", input, indices_or_sections, 1, 0 if input.ndim == 1 else 1)


def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:  # noqa: A002
    """``tensor_split`` along dim 0 of a tensor of at least 2 dims."""
    return _split_along("vsplit", input, indices_or_sections, 2, 0)


def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:  # noqa: A002
    """``tensor_split`` along dim 2 of a tensor of at least 3 dims."""
    return _split_along("dsplit", input, indices_or_sections, 3, 2)


def _split_method(fn: Callable[..., tuple[Tensor, ...]]) -> Callable[..., tuple[Tensor, ...]]:
    def method(t: Tensor, *args: Any) -> tuple[Tensor, ...]:
        return fn(t, args[0] if len(args) == 1 else list(args))

    method.__name__ = method.__qualname__ = fn.__name__
    return method


# ---- stacks ------------------------------------------------------------------------------------

def _atleast(t: Tensor, nd: int) -> Tensor:
    if t.ndim >= nd:
        return t
    if t.ndim == 0:
        return t.reshape((1,) * nd)
    if nd == 2 or t.ndim == 2:
        return t.unsqueeze(0) if nd == 2 else t.unsqueeze(-1)
    return t.unsqueeze(0).unsqueeze(-1)


def _atleast_fn(nd: int) -> Callable[..., Any]:
    def fn(*tensors: Any) -> Any:
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return _atleast(tensors[0], nd)
        seq = tensors[0] if len(tensors) == 1 else tensors
        return tuple(_atleast(t, nd) for t in seq)

    fn.__name__ = fn.__qualname__ = f"atleast_{nd}d"
    fn.__doc__ = (f"Each tensor with at least {nd} dims: fewer dims get size-1 dims (a view); "
                  "one tensor in, one out, else a tuple.")
    return fn


atleast_1d = _atleast_fn(1)
atleast_2d = _atleast_fn(2)
atleast_3d = _atleast_fn(3)


def _stacked(fn: str, tensors: Sequence[Tensor], nd: int, out: Tensor | None) -> Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{fn} expects a non-empty TensorList")
    if fn == "column_stack":
        parts = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in tensors]
        result = _stacked("hstack", parts, 1, None)
    else:
        parts = [_atleast(t, nd) for t in tensors]
        dim = {"hstack": 0 if parts[0].ndim == 1 else 1, "vstack": 0, "dstack": 2}[fn]
        result = cat(parts, dim)
    if out is None:
        return result
    # NOTE: PyTorch writes with cat's out= form: its checks and messages
    check_out_grad("cat", tensors, out)
    if isinstance(out, Tensor) and not dtypes.can_cast(result.dtype, out.dtype):
        raise TypeError("torch.cat(): input types can't be cast to the desired output type "
                        f"{dtypes.scalar_type_name(out.dtype)}")
    return write_out("cat", result, out, inputs=tensors)


def hstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """The tensors joined column-wise: along dim 1, or dim 0 when they are 1-D (0-d ones
    count as 1-D)."""
    return _stacked("hstack", tensors, 1, out)


def vstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """The tensors (1-D ones as rows) joined along dim 0."""
    return _stacked("vstack", tensors, 2, out)


row_stack = vstack


def dstack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """The tensors (made at least 3-D) joined along dim 2."""
    return _stacked("dstack", tensors, 3, out)


def column_stack(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """The tensors as columns: 0-d and 1-D ones become ``(n, 1)`` columns, then ``hstack``."""
    return _stacked("column_stack", tensors, 1, out)


# ---- grids and combinations --------------------------------------------------------------------

def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids of 0-d or 1-D tensors: grid ``i`` holds ``tensors[i]`` along dim ``i``
    (``indexing="ij"``), expanded over the others (a view, ExpandBackward0); ``"xy"`` swaps the
    first two dims. Without ``indexing``, ``"ij"`` with PyTorch's warning.

    Example:
        >>> meshgrid(tensor([1, 2]), tensor([3]), indexing="ij")
        (tensor([[1], [2]]), tensor([[3], [3]]))
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=user_stacklevel())
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(tensors[:-1], tensors[1:]):
        if a.dtype is not b.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    refs = list(tensors)
    swap = indexing == "xy" and len(refs) >= 2
    if indexing not in ("xy", "ij"):
        raise RuntimeError('torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    if swap:
        refs[0], refs[1] = refs[1], refs[0]
    for t in refs:
        if t.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but "
                               f"got: {t}")
    shape = [t.numel() for t in refs]
    grids = []
    for i, t in enumerate(refs):
        view = [1] * len(refs)
        view[i] = -1
        grids.append(t.view(view).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _vector(t: Tensor) -> None:
    if t.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """The Cartesian product of 1-D tensors: one row per combination, the last tensor's
    entries varying fastest (``stack`` of the flattened ``meshgrid``). One tensor comes back
    as it is.

    Example:
        >>> cartesian_prod(tensor([1, 2]), tensor([3]))
        tensor([[1, 3],
                [2, 3]])
    """
    for t in tensors:
        _vector(t)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.flatten() for g in grids], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """The ``r``-element combinations of a 1-D tensor's entries, one per row, in
    lexicographic order of their positions (as ``itertools.combinations``, or
    ``combinations_with_replacement``).

    Example:
        >>> combinations(tensor([1, 2, 3]))
        tensor([[1, 2],
                [1, 3],
                [2, 3]])
    """
    from ..creation import empty, tensor

    _vector(input)
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty(0, dtype=input.dtype, device=input.device)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    cols = [[row[j] for row in rows] for j in range(r)]
    return stack([input.index_select(0, tensor(c, dtype=dtypes.int64, device=input.device))
                  for c in cols], 1)


# ---- broadcasting and blocks -------------------------------------------------------------------

def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors broadcast to their common shape (``expand`` views; a tensor of that shape
    comes back as it is)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    shape = _broadcast_shapes(*(t.shape for t in tensors)) if tensors else ()
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors as blocks on the diagonal of a zero matrix (0-d: 1x1, 1-D: a row), in their
    promoted dtype (BlockDiagBackward0).

    Example:
        >>> block_diag(tensor([[1]]), tensor([2, 3]))
        tensor([[1, 0, 0],
                [0, 2, 3]])
    """
    from ..creation import empty

    if not tensors:
        return empty(1, 0)
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
        if t.device != tensors[0].device:
            raise RuntimeError("torch.block_diag: input tensors must all be on the same device. "
                               f"Input 0 is on device {tensors[0].device} and input {i} is on "
                               f"device {t.device}")
    dt = dtypes.result_type([t.dtype for t in tensors if t.ndim],
                            [t.dtype for t in tensors if not t.ndim], [])
    return P.BlockDiag.apply(*tensors, dtype=dt)  # type: ignore[no-any-return]


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "tensor_split": tensor_split, "hsplit": _split_method(hsplit),
    "vsplit": _split_method(vsplit), "dsplit": _split_method(dsplit),
}
