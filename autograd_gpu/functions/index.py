"""Indexing: ``t[key]`` (Select/Slice/Index nodes), ``t[key] = value``, ``index_select``,
``gather``."""

from __future__ import annotations

import builtins
import operator
from typing import Any

from .. import dtypes
from ..autograd.grad_mode import STATE
from ..backends import cuda_support
from ..backends.composite import key_width
from ..ops import elementwise as E
from ..ops import movement as M
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .arith import _is_scalar, _type_name, as_tensor_like
from .checks import arg_position, checked_scalar, expect_tensor
from .index_key import check_broadcast, check_masks, is_full_slice, spell_out, translate
from .shape import expanded_shape
from .inplace_ops import _check_inplace_target, copy_, inplace
from .view_writes import _OVERLAP, _write_error, overlaps, warn_expanded


def _index_arg(fn: str, index: Any, input: Tensor, method: bool) -> Tensor:  # noqa: A002
    """``index`` checked as PyTorch's argument parser and device check do it. ``method``: the
    call was ``input.fn(...)``, whose argument positions do not count ``input``."""
    expect_tensor(fn, "index", arg_position(3, method), index)
    if index._device is not input._device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {input._device} and {index._device}!")
    return index


def _dim_arg(fn: str, dim: Any, method: bool) -> int:
    """``dim`` as PyTorch's argument parser reads an int: an integer (not a bool) or a 0-d
    integer tensor."""
    if isinstance(dim, Tensor):
        if dim.ndim == 0 and not dim.dtype.is_floating_point and dim.dtype is not dtypes.bool:
            return int(dim.item())
    elif not isinstance(dim, bool) and hasattr(dim, "__index__"):
        return operator.index(dim)
    raise TypeError(f"{fn}(): argument 'dim' (position {arg_position(2, method)}) must be int, not "
                    f"{type(dim).__name__}")


def index_select(input: Tensor, dim: int, index: Tensor, *,  # noqa: A002
                 _method: bool = False) -> Tensor:
    """The slices of ``input`` at positions ``index`` (a 0-d or 1-d int32/int64 tensor) along
    ``dim``, in ``index``'s order (repeats allowed).

    Args:
        input: tensor of any shape (a 0-d input takes an index of one value, 0).
        dim: the dimension to select along.
        index: positions in ``[0, input.size(dim))``; negative positions are out of range, as in
            PyTorch.

    Returns:
        Tensor of ``input``'s shape with ``dim`` of size ``index.numel()`` (IndexSelectBackward0).

    Example:
        >>> index_select(tensor([[1, 2], [3, 4]]), 1, tensor([1, 1]))
        tensor([[2, 2],
                [4, 4]])
    """
    dim = _dim_arg("index_select", dim, _method)
    index = _index_arg("index_select", index, input, _method)
    d = normalize_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype is not dtypes.int64 and index.dtype is not dtypes.int32:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    n = input.shape[d] if input.ndim else 1
    if input.ndim == 0 and index.numel() != 1:
        raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    if n == 0 and index.numel() and input.ndim > 1:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if index.ndim == 0 or input.ndim == 0:
        index = index.reshape(-1)
    if input.ndim == 0 and (input._level or index._level):  # NOTE: vmap: physical arrays
        return index_select(input.reshape(1), 0, index).reshape(())
    if index._level:
        return _index_tensors(input, (slice(None),) * d + (index,), "IndexSelectBackward0")
    bad = index.backend.out_of_range(index._data, 0, n)
    if bad is not None and input.ndim > 1 and (d == 1 or not input.numel()):
        # NOTE: PyTorch's CPU kernels for dim 1 and for an empty input check with this message.
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={n}")
    if bad is not None:
        raise IndexError("index out of range in self")
    key = (slice(None),) * d + (index._data,)
    return M.Index.apply(input, key=key, name="IndexSelectBackward0", advanced=True,
                         select=True)


def gather(input: Tensor, dim: int, index: Tensor, *,  # noqa: A002
           sparse_grad: bool = False, _method: bool = False) -> Tensor:
    """Values of ``input`` along ``dim`` at ``index``; for 2-D tensors and ``dim == 0``,
    ``out[i][j] = input[index[i][j]][j]``.

    ``index`` has as many dims as ``input`` and may be smaller than it in every dimension but
    ``dim`` (the output then covers only those leading positions, as in PyTorch; it is never
    broadcast). Negative index values are out of range, as in PyTorch. ``sparse_grad`` is
    accepted for PyTorch's signature; the gradient is always dense.

    Args:
        input: tensor of any shape (0-d counts as 1-d).
        dim: the dimension to gather along.
        index: int64 or int32 tensor, values in ``[0, input.size(dim))``.

    Returns:
        Tensor of ``index``'s shape and ``input``'s dtype (GatherBackward0).

    Example:
        >>> gather(tensor([[1, 2, 3], [4, 5, 6], [7, 8, 9]]), 0, tensor([[0], [2]]))
        tensor([[1],
                [7]])
    """
    dim = _dim_arg("gather", dim, _method)
    index = _index_arg("gather", index, input, _method)
    d = normalize_dim(dim, input.ndim)
    _check_gather(input, d, index)
    if index._level:
        return GatherT.apply(input, index, dim=d)  # type: ignore[no-any-return]
    check_gather_values(index.backend, index._data, input.shape[d] if input.ndim else 1, d)
    return M.Gather.apply(input, dim=d, index=index._data)


def _check_gather(input: Tensor, d: int, index: Tensor) -> None:  # noqa: A002
    """PyTorch's refusals of a ``gather`` index by dtype and shape, in PyTorch's order."""
    if index.dtype is not dtypes.int64 and index.dtype is not dtypes.int32:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if builtins.max(input.ndim, 1) != builtins.max(index.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    if not index.numel():
        return
    for k in range(input.ndim):
        if k != d and index.ndim and index.shape[k] > input.shape[k]:
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(index.shape)} to be "
                f"no larger than self {list(input.shape)} apart from dimension {d}")


def check_gather_values(backend: Any, index: Any, n: int, d: int) -> None:
    """PyTorch's error for a ``gather`` index value outside ``[0, n)`` (no wrap-around)."""
    bad = backend.out_of_range(index, 0, n)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")


# ---- index tensors as op inputs (vmap: batched indices) --------------------------------------

class _Slot:
    """In a key template: the ``i``-th index tensor input of ``IndexT``."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


def fill_key(template: tuple[Any, ...], values: list[Any]) -> tuple[Any, ...]:
    """``template`` with each slot replaced by its value."""
    return tuple(values[k.i] if isinstance(k, _Slot) else k for k in template)


def _index_tensors(t: Tensor, key: tuple[Any, ...], name: str) -> Tensor:
    """``t[key]`` where ``key`` holds batched index tensors: they become inputs of ``IndexT``."""
    tensors = [k for k in key if isinstance(k, Tensor)]
    slots = iter(range(len(tensors)))
    template = tuple(_Slot(next(slots)) if isinstance(k, Tensor) else k for k in key)
    return IndexT.apply(t, *tensors, key=template, name=name)  # type: ignore[no-any-return]


class IndexT(M.Index):
    """Advanced indexing whose index arrays arrive as inputs (slots of ``key``) rather than as
    constants, so that ``vmap`` can batch them; backward as ``Index``."""

    def __init__(self, key: Any, name: str) -> None:
        super().__init__(key, name, True)

    def forward(self, x: Any, *index: Any) -> Any:  # type: ignore[override]
        self.key = fill_key(self.key, list(index))
        return super().forward(x)

    def backward(self, grad: Any) -> tuple[Any, ...]:  # type: ignore[override]
        return super().backward(grad) + (None,) * (len(self.needs_input_grad) - 1)


class GatherT(M.Gather):
    """``gather`` with the index as an input (``vmap``: a batched index); backward as
    ``Gather``."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim, None)

    def forward(self, x: Any, index: Any) -> Any:  # type: ignore[override]
        check_gather_values(self.backend, index, x.shape[self.dim] if x.ndim else 1, self.dim)
        self.index = index
        return super().forward(x)

    def backward(self, grad: Any) -> tuple[Any, None]:  # type: ignore[override]
        return super().backward(grad) + (None,)


# ---- indexing --------------------------------------------------------------------------------

def _key(t: Tensor, key: Any) -> tuple[tuple[Any, ...], bool, Tensor]:
    """The NumPy key for ``t[key]`` (Ellipses spelled out), whether it is advanced, and the
    tensor it indexes: ``t`` for a basic key; for an advanced key, the view of ``t`` its ints,
    slices and None make (``_walk``), with the key left for that view. PyTorch's checks run in
    its order: integers against the shape during the walk, then masks and broadcasting."""
    npkey, advanced = translate(t, key)
    npkey = spell_out(t.shape, npkey, not isinstance(key, (tuple, list, Tensor)))
    if not advanced:
        return npkey, False, t
    view, rest, _ = _walk(t, npkey, False)
    check_masks(view.shape, rest)
    check_broadcast(t.backend, rest)
    return rest, True, view


def getitem(t: Tensor, key: Any) -> Tensor:
    """``t[key]``: ints select (SelectBackward0), slices slice (SliceBackward0), None adds a
    dimension; integer/bool tensors and lists then index what is left (IndexBackward0)."""
    if key.__class__ is Tensor and not key._level and not t._level:
        out = _take_rows(t, key)
        if out is not None:
            return out
    npkey, advanced, view = _key(t, key)
    cuda_support.refuse_masks_during_capture(npkey, advanced)  # NOTE: CUDA graphs: no masks
    if advanced and builtins.any(isinstance(k, Tensor) for k in npkey):
        return _index_tensors(view, npkey, "IndexBackward0")
    if advanced:
        return M.Index.apply(view, key=npkey, name="IndexBackward0", advanced=True)
    out, _, recorded = _walk(t, npkey, isinstance(key, slice))
    if not recorded:  # x[...], x[()], x[:, :]: an alias
        out = M.Index.apply(out, key=(Ellipsis,), name="AliasBackward0", advanced=False)
    return out


def _take_rows(t: Tensor, key: Tensor) -> Tensor | None:
    """``t[key]`` for a C-contiguous int64/int32 index tensor (at least 1-d, not empty, every
    entry in range; PyTorch lays the result out by a strided key's order) on ``t``'s device,
    ``t`` C-contiguous and not empty: one ``take`` along dim 0, the
    general path's node (IndexBackward0) and values. None when a
    condition fails: the general path then handles (or refuses) the key."""
    x, k = t._data, key._data
    if key._device is not t._device or t._device.type == "meta" \
            or k.dtype.name not in _ROW_INDEX or not k.ndim or not k.size or not x.ndim \
            or not x.flags.c_contiguous or not k.flags.c_contiguous:
        return None  # NOTE: the device first: meta arrays have neither flags nor values
    n = x.shape[0]
    if t.backend.out_of_range(k, -n, n) is not None:  # NOTE: n == 0 fails here too
        return None
    return M.Index.apply(t, key=(k,), name="IndexBackward0", advanced=True, rows=True)  # type: ignore[no-any-return]


_ROW_INDEX = ("int64", "int32")


def _walk(t: Tensor, npkey: tuple[Any, ...], bare_slice: bool) -> tuple[Tensor, tuple[Any, ...],
                                                                          bool]:
    """PyTorch's walk over a spelled-out key (``applySlicing``): ints select, slices slice, None
    and 0-d bools add a dimension, one view node each (x[0, 1:] is Slice(Select(x))), while
    index arrays wait for one advanced index of the view. Returns the view, the key left for
    that index (the arrays, a 0-d bool as a one-entry mask of its new dimension, full slices
    elsewhere) and whether a node was recorded. ``bare_slice``: the user's key was one slice.

    NOTE: NumPy would treat an int among index arrays as one more index array, which moves the
    result's dimensions (x[0, :, idx] has shape (3, 2) in PyTorch, (2, 3) in NumPy)."""
    out = t
    rest: list[Any] = []
    dim = 0
    recorded = False
    for k in npkey:
        pre = (slice(None),) * dim
        if k is None or _is_bool_scalar(k):
            out = M.Unsqueeze.apply(out, dim=dim)
            rest.append(slice(None) if k is None else k.reshape(1))
            dim += 1
            recorded = True
        elif isinstance(k, int):
            out = M.Index.apply(out, key=pre + (k, Ellipsis), name="SelectBackward0",
                                advanced=False)
            recorded = True
        elif isinstance(k, slice):
            # NOTE: PyTorch skips a slice that takes a whole dimension inside a tuple; it
            # records a bare x[:].
            if not is_full_slice(k, out.shape[dim]) or bare_slice:
                out = M.Index.apply(out, key=pre + (k, Ellipsis), name="SliceBackward0",
                                    advanced=False)
                recorded = True
            rest.append(slice(None))
            dim += 1
        else:  # an index array (or a batched index tensor)
            rest.append(k)
            dim += 1 if isinstance(k, Tensor) else key_width(k)
    return out, tuple(rest), recorded


def _is_bool_scalar(k: Any) -> bool:
    return not isinstance(k, Tensor) and getattr(k, "ndim", None) == 0 and k.dtype.kind == "b"


def setitem(t: Tensor, key: Any, value: Any) -> None:
    """``t[key] = value``, in place; recorded as CopySlices when autograd is involved."""
    value_t = value if isinstance(value, Tensor) else None
    if value_t is None and _is_scalar(value):
        if type(value) is int and not -(1 << 63) <= value < (1 << 63):
            raise ValueError("Overflow when unpacking long long")
        # NOTE: PyTorch rounds a number into float16 unchecked here (to inf past 65504)
        value = checked_scalar(value, t.dtype, check_half=False)
    if t._level or value_t is not None and value_t._level:
        _setitem_batched(t, key, value)
        return
    recording = STATE.grad_enabled and (
        t._requires_grad or (value_t is not None and value_t._requires_grad))
    # NOTE: an advanced key writes into the view its ints, slices and None make (``_key``).
    npkey, advanced, target = _key(t, key)
    if advanced and value_t is not None and value_t.dtype is not t.dtype and not (
            value_t.ndim == 0 and isinstance(key, Tensor) and key.dtype is dtypes.bool):
        # NOTE: index_put_ takes no other dtype (a 0-d value under one mask is masked_fill_)
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_type_name(t.dtype)} for the destination and "
                           f"{_type_name(value_t.dtype)} for the source.")
    # NOTE: an empty region takes no write: its key may hold entries out of range.
    empty = advanced and t.backend.check_index(target.shape, npkey)
    if value_t is not None:
        value_t = _fit_value(target, npkey, advanced, value_t, empty)
    through = None
    if overlaps(target._data):  # elements sharing memory (a broadcast view)
        if not advanced:
            if overlaps(target._data[npkey]):
                raise RuntimeError(_OVERLAP)
        else:
            # NOTE: PyTorch warns (twice for a mask and one value), then writes the selected
            # elements only
            warn_expanded("index_put_")
            if isinstance(key, Tensor) and key.dtype is dtypes.bool and (
                    value_t is None or value_t.ndim == 0):
                warn_expanded("masked_fill_")
            through = t.backend.zeros(target.shape, "bool")
            if not empty:
                through[npkey] = True
    if not recording:
        _check_inplace_target(t)
        v = value_t._data if value_t is not None else value
        if value_t is not None and value_t._device is not t._device:
            v = t.backend.asarray(value_t.backend.to_host(value_t._data))
        try:
            if empty:
                t.backend.empty_index(target.shape, npkey, t._data.dtype)[...] = v
            else:
                target._data[npkey] = v
        except ValueError as e:
            raise _write_error(e) from None
        t._counter().bump()
        return
    if value_t is None:
        value_t = as_tensor_like(value, t)
    if advanced:
        inplace(target, _index_put, npkey, value_t, empty, _through=through)
        return
    copy_(getitem(t, key), value_t)


def _setitem_batched(t: Tensor, key: Any, value: Any) -> None:
    """``t[key] = value`` under vmap: a basic key writes into the (batched) view ``t[key]``."""
    _, advanced = translate(t, key)
    if advanced:
        raise RuntimeError("vmap: t[key] = value with an advanced (tensor or list) key is not "
                           "supported inside vmap; use index_put or torch.where instead")
    view = getitem(t, key)
    inplace(view, lambda x, v: as_tensor_like(v, x).to(x.dtype).expand(x.shape), value)


def _fit_value(t: Tensor, npkey: Any, advanced: bool, value: Tensor, empty: bool) -> Tensor:
    """``value`` without its leading size-1 dims (PyTorch drops them all), or PyTorch's error
    when it does not broadcast to that region (``empty``: see ``check_index``)."""
    region = t.backend.empty_index(t.shape, npkey, t._data.dtype) if empty else t._data[npkey]
    target = tuple(region.shape)
    v = tuple(value.shape)
    k = 0
    while k < len(v) and v[k] == 1:
        k += 1
    if k:
        value = value.reshape(v[k:])
        v = v[k:]
    if not advanced:
        expanded_shape(value, target)
        return value
    if len(v) > len(target) or any(a not in (1, b) for a, b in zip(v[::-1], target[::-1])):
        raise RuntimeError(
            f"shape mismatch: value tensor of shape [{', '.join(map(str, v))}] cannot be broadcast "
            f"to indexing result of shape [{', '.join(map(str, target))}]"
        )
    return value


def _index_put(t: Tensor, npkey: Any, value: Tensor, empty: bool) -> Tensor:
    return _IndexPut.apply(t, value.to(t.dtype), key=npkey, empty=empty)


class _IndexPut(E.Node):
    """``t`` with ``value`` written at an advanced ``key`` (out of place; IndexPutBackward0).
    ``empty``: the region is empty (nothing to write; the key may be out of range)."""

    node_name = "IndexPutBackward0"

    def __init__(self, key: Any, empty: bool = False) -> None:
        self.key = key
        self.empty = empty

    def forward(self, x: Any, v: Any) -> Any:
        out = self.backend.copy(x)
        if not self.empty:  # NOTE: the last of repeated positions wins, on CUDA too
            self.backend.scatter_reduce_into(out, self.key, v, "set")
        self.v_shape = v.shape
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        mask = self.backend.ones(grad.shape, grad._data.dtype)
        if not self.empty:
            mask[self.key] = 0
        gx = grad * self.wrap(mask) if self.needs_input_grad[0] else None
        gv = None
        if self.needs_input_grad[1]:
            gv = M.Index.apply(grad, key=self.key, name="IndexBackward0", advanced=True)
            gv = gv.sum_to_size(self.v_shape)
        return gx, gv
