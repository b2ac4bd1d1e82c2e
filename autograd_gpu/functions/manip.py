"""Shape manipulations beyond view/reshape: triangles, diagonals, flips and rolls, tiling and
repetition, splits and stacks, meshgrid and combinations, broadcasting helpers.

This module holds triangles (``tril``, ``triu`` and their indices), rolls, flips and
rotations, ``repeat_interleave``, ``tile`` and ``diff``; ``manip_views`` the diagonals and
strided views (``diagonal``, ``unfold``, ``as_strided``, ...); ``manip_join`` splits, stacks,
grids and broadcasting.

``__all__`` lists the ``torch.*`` names this family adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import dtypes
from ..ops import manip as P
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .arith import _type_name
from .compare import logical_xor
from .inplace_ops import inplace
from .out import write_out


def int_arg(fn: str, name: str, position: int, value: Any) -> int:
    """``value`` as an int argument of ``fn``, or PyTorch's ``TypeError`` (bools refused)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not "
                    f"{type(value).__name__}")


def ints_arg(fn: str, name: str, position: int, value: Any) -> tuple[int, ...]:
    """``value`` as a tuple-of-ints argument of ``fn`` (a tuple or list of ints), or PyTorch's
    ``TypeError``."""
    head = f"{fn}(): argument '{name}' (position {position}) must be tuple of ints"
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{head}, not {type(value).__name__}")
    for i, v in enumerate(value):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{head}, but found element of type {type(v).__name__} at pos {i}")
    return tuple(value)


def varargs(args: tuple[Any, ...]) -> Any:
    """A method's int-list argument given as ``t.f(1, 2)`` or ``t.f((1, 2))``."""
    return args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


# ---- triangles -------------------------------------------------------------------------------

def _triangle(fn: str, input: Tensor, diagonal: Any, out: Tensor | None,  # noqa: A002
              method: bool) -> Tensor:
    k = int_arg(fn, "diagonal", 1 if method else 2, diagonal)
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: input tensor must have at least 2 dimensions")
    result = P.Triangle.apply(input, k=k, lower=fn == "tril")
    return result if out is None else write_out(fn, result, out, inputs=(input,), exact=(True,))


def tril(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The lower triangle of the last two dims: elements with ``col - row <= diagonal`` kept,
    the others 0 (TrilBackward0; the gradient keeps the same triangle).

    Args:
        input: tensor of at least 2 dims, any dtype.
        diagonal: 0 is the main diagonal, > 0 above it, < 0 below it.
        out: optional tensor to write the result into.

    Returns:
        C-contiguous tensor of ``input``'s shape and dtype.

    Example:
        >>> tril(ones(2, 2))
        tensor([[1., 0.],
                [1., 1.]])
    """
    return _triangle("tril", input, diagonal, out, False)


def triu(input: Tensor, diagonal: int = 0, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The upper triangle of the last two dims (``col - row >= diagonal`` kept), as ``tril``."""
    return _triangle("triu", input, diagonal, out, False)


def _tril_method(t: Tensor, diagonal: int = 0) -> Tensor:
    return _triangle("tril", t, diagonal, None, True)


def _triu_method(t: Tensor, diagonal: int = 0) -> Tensor:
    return _triangle("triu", t, diagonal, None, True)


def tril_(t: Tensor, diagonal: int = 0) -> Tensor:
    """``t.tril_()``: ``tril`` written into ``t``."""
    return inplace(t, _tril_method, diagonal)


def triu_(t: Tensor, diagonal: int = 0) -> Tensor:
    return inplace(t, _triu_method, diagonal)


def _tri_indices(fn: str, row: int, col: int, offset: int, dtype: dtypes.dtype | None,
                 device: Any) -> Tensor:
    from ..creation import finish
    from ..device import as_device

    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name} must be non-negative, got{v}")
    dtype = dtypes.int64 if dtype is None else dtype
    if dtype not in (dtypes.int64, dtypes.int32):
        raise NotImplementedError(f"\"{fn}\" not implemented for '{_type_name(dtype)}'")
    dev = as_device(device)
    data = dev.backend.tri_indices(row, col, offset, fn == "tril_indices", dtype.name)
    return finish(data, dev, False)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: dtypes.dtype | None = None,
                 device: Any = None, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The ``(2, n)`` row and column indices of the lower triangle of a ``row x col`` matrix
    (``col - row <= offset``), in row-major order; int64 (or int32) on ``device``.

    Example:
        >>> tril_indices(2, 2)
        tensor([[0, 1, 1],
                [0, 0, 1]])
    """
    return _tri_indices("tril_indices", row, col, offset, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: dtypes.dtype | None = None,
                 device: Any = None, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """The indices of the upper triangle (``col - row >= offset``), as ``tril_indices``."""
    return _tri_indices("triu_indices", row, col, offset, dtype, device)


# ---- rolls, flips, rotations -----------------------------------------------------------------

def _dims_tuple(value: Any) -> tuple[int, ...]:
    return (value,) if isinstance(value, int) else tuple(value)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:  # noqa: A002
    """``input`` rolled by ``shifts[i]`` along ``dims[i]``: elements pushed off one end come
    back at the other (RollBackward0). Without ``dims`` the flattened tensor rolls by the one
    shift, and the shape is kept.

    Example:
        >>> roll(arange(4), 1)
        tensor([3, 0, 1, 2])
    """
    if isinstance(shifts, float):
        raise TypeError("roll(): argument 'shifts' (position 2) must be tuple of ints, not float")
    sh = _dims_tuple(shifts)
    ds = () if dims is None else _dims_tuple(dims)
    if not sh:
        raise RuntimeError("`shifts` required")
    if not ds and len(sh) == 1:
        return P.Roll.apply(input, shifts=sh, axes=())
    if len(sh) != len(ds):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {ds[0]} but tensor has no dimensions")
    axes = tuple(normalize_dim(d, input.ndim) for d in ds)
    return P.Roll.apply(input, shifts=sh, axes=axes)


def _flip_dims(dims: tuple[int, ...], ndim: int) -> tuple[int, ...]:
    axes: list[int] = []
    for d in dims:
        a = normalize_dim(d, ndim)
        if a in axes:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
        axes.append(a)
    return tuple(axes) if ndim else ()


def flip(input: Tensor, dims: Any) -> Tensor:  # noqa: A002
    """A copy of ``input`` reversed along ``dims`` (FlipBackward0; not a view, as in PyTorch),
    laid out like ``input``.

    Example:
        >>> flip(arange(3), (0,))
        tensor([2, 1, 0])
    """
    axes = _flip_dims(ints_arg("flip", "dims", 2, dims), input.ndim)
    return P.Flip.apply(input, axes=axes)


def _flip_method(t: Tensor, *dims: Any) -> Tensor:
    return P.Flip.apply(t, axes=_flip_dims(tuple(varargs(dims)), t.ndim))


def fliplr(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` reversed along dim 1 (left/right)."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return P.Flip.apply(input, axes=(1,))


def flipud(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` reversed along dim 0 (up/down)."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return P.Flip.apply(input, axes=(0,))


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:  # noqa: A002
    """``input`` turned ``k`` quarter turns in the plane of ``dims``, from the first dim towards
    the second (Rot90Backward0). Odd ``k`` swaps the two dims' sizes.

    Example:
        >>> rot90(tensor([[1, 2], [3, 4]]))
        tensor([[2, 4],
                [1, 3]])
    """
    k = int_arg("rot90", "k", 2, k)
    dims = tuple(dims)
    nd = input.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = normalize_dim(dims[0], nd), normalize_dim(dims[1], nd)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    return P.Rot90.apply(input, k=k, dims=(d0, d1))


# ---- repetition --------------------------------------------------------------------------------

def _repeat_indices(repeats: Tensor, output_size: int | None) -> Tensor:
    """``torch.repeat_interleave(repeats)``: ``i`` repeated ``repeats[i]`` times, in
    ``repeats``' dtype."""
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in (dtypes.int64, dtypes.int32):
        raise NotImplementedError(f"\"repeat_interleave_{repeats.device.type}\" not implemented "
                                  f"for '{_type_name(repeats.dtype)}'")
    counts = [int(c) for c in repeats.tolist()]
    if any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and output_size != sum(counts):
        raise RuntimeError("allocated size does not match required size")
    data = repeats.backend.repeat_indices(counts, repeats.dtype.name)
    return Tensor._make(data, repeats._device)


def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,  # noqa: A002
                      output_size: int | None = None) -> Tensor:
    """Each element (each slice along ``dim``) of ``input`` repeated ``repeats`` times, in
    place (``[a, b]`` -> ``[a, a, b, b]``); ``repeats`` is an int or a tensor of one count per
    slice. Without ``dim`` the flattened input repeats. ``repeat_interleave(repeats)`` alone
    gives the indices ``i`` repeated ``repeats[i]`` times.

    An int gives ``input`` expanded and copied (ViewBackward0 of a CloneBackward0), a tensor
    an ``index_select`` (IndexSelectBackward0), as in PyTorch.

    Example:
        >>> repeat_interleave(tensor([1, 2]), 2)
        tensor([1, 1, 2, 2])
    """
    if repeats is None:
        return _repeat_indices(input, output_size)
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else normalize_dim(dim, x.ndim)
    if isinstance(repeats, Tensor):
        if repeats.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        n = x.shape[d] if x.ndim else 1
        if repeats.numel() == 1:
            repeats = repeats.reshape(1).expand(n)
        elif repeats.shape[0] != n:
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats.shape[0]} and input.size({d}) = {n}")
        index = _repeat_indices(repeats, output_size)
        return x.index_select(d, index if index.dtype is dtypes.int64 else index.long())
    r = int_arg("repeat_interleave", "repeats", 2, repeats)
    if r < 0:
        raise RuntimeError("Repeats must be non-negative")
    if output_size is not None and x.ndim and output_size != x.shape[d] * r:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {x.shape[d] * r} "
                           f"but got {output_size}")
    e = x.unsqueeze(d + 1)
    shape = list(e.shape)
    shape[d + 1] = r
    e = e.expand(shape)
    copy = e.contiguous() if not e.is_contiguous() else e.clone()
    return copy.flatten(d, d + 1)


def tile(input: Tensor, dims: Any) -> Tensor:  # noqa: A002
    """``input`` repeated ``dims[i]`` times along each dim (RepeatBackward0); a shorter
    ``dims`` is padded with leading 1s, a longer one adds leading dims.

    Example:
        >>> tile(tensor([1, 2]), (2,))
        tensor([1, 2, 1, 2])
    """
    return _tile(input, ints_arg("tile", "dims", 2, dims))


def _tile(input: Tensor, reps: tuple[int, ...]) -> Tensor:  # noqa: A002
    reps = (1,) * (input.ndim - len(reps)) + reps
    shape = (1,) * (len(reps) - input.ndim) + tuple(input.shape)
    sizes = [s * r for s, r in zip(shape, reps)]
    for s in sizes:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {sizes}")
    return input.repeat(*reps)


def _tile_method(t: Tensor, *dims: Any) -> Tensor:
    return _tile(t, tuple(varargs(dims)))


# ---- differences -------------------------------------------------------------------------------

def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,  # noqa: A002
         append: Tensor | None = None, *, out: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim``: ``x[i + 1] - x[i]``, ``n`` times (for bool
    tensors ``x[i + 1] != x[i]``). ``prepend``/``append`` are joined to ``input`` along ``dim``
    first (when ``n > 0``). Each step has one element fewer; ``n`` past the size gives an
    empty result.

    Example:
        >>> diff(tensor([1, 4, 9]))
        tensor([3, 5])
    """
    from ..creation import zeros_like
    from .shape import cat

    for name, t in (("prepend", prepend), ("append", append)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = normalize_dim(dim, input.ndim)
    for t in (prepend, append):
        if t is None:
            continue
        if t.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i in range(input.ndim):
            if i != d and t.shape[i] != input.shape[i]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({i}) = "
                    f"{input.shape[i]}, but got tensor.size({i}) = {t.shape[i]}")
    if n == 0:
        if out is not None:
            # NOTE: PyTorch copies ``input`` into ``out`` (its dtype exactly), unrecorded
            if out.dtype is not input.dtype:
                raise RuntimeError(f"expected scalar_type {_type_name(input.dtype)} but found "
                                   f"{_type_name(out.dtype)}")
            return write_out("diff", input.detach(), out)
        return zeros_like(input).copy_(input)
    else:
        x = input
        if prepend is not None or append is not None:
            x = cat([t for t in (prepend, x, append) if t is not None], d)
        length = x.shape[d] - 1
        for _ in range(min(n, x.shape[d])):
            hi, lo = x.narrow(d, 1, length), x.narrow(d, 0, length)
            x = logical_xor(hi, lo) if x.dtype is dtypes.bool else hi - lo
            length -= 1
        result = x
    if out is None:
        return result
    # NOTE: PyTorch writes the last step with sub's (logical_xor's) out= form: its checks
    return write_out("logical_xor" if input.dtype is dtypes.bool else "sub", result, out,
                     inputs=(input, prepend, append))


# ---- the family's exports (with manip_views' and manip_join's) ----------------------------

from . import manip_join, manip_scatter, manip_views  # noqa: E402  (they build on the above)
from .manip_join import *  # noqa: E402,F401,F403
from .manip_scatter import *  # noqa: E402,F401,F403
from .manip_views import *  # noqa: E402,F401,F403

__all__: list[str] = [
    "tril", "triu", "tril_indices", "triu_indices", "roll", "flip", "fliplr", "flipud", "rot90",
    "repeat_interleave", "tile", "diff",
] + manip_views.__all__ + manip_join.__all__ + manip_scatter.__all__

TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "tril": _tril_method, "triu": _triu_method, "tril_": tril_, "triu_": triu_,
    "roll": roll, "flip": _flip_method, "fliplr": fliplr, "flipud": flipud, "rot90": rot90,
    "repeat_interleave": repeat_interleave, "tile": _tile_method, "diff": diff,
    **manip_views.TENSOR_METHODS, **manip_join.TENSOR_METHODS, **manip_scatter.TENSOR_METHODS,
}
