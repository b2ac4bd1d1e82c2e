"""Indexing: ``t[key]`` (Select/Slice/Index nodes), ``t[key] = value``, ``index_select``,
``gather``."""

from __future__ import annotations

import builtins
from typing import Any

from .. import dtypes
from ..autograd.grad_mode import STATE
from ..ops import elementwise as E
from ..ops import movement as M
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .arith import as_tensor_like
from .index_key import check_broadcast, check_masks, is_full_slice, spell_out, translate
from .shape import expanded_shape
from .inplace_ops import _check_inplace_target, _write_error, copy_, inplace


def _index_arg(fn: str, index: Any, input: Tensor) -> Tensor:  # noqa: A002
    """``index`` checked as PyTorch's argument parser and device check do it."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{fn}(): argument 'index' (position 3) must be Tensor, not "
                        f"{type(index).__name__}")
    if index._device is not input._device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {input._device} and {index._device}!")
    return index


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
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
    index = _index_arg("index_select", index, input)
    d = normalize_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype is not dtypes.int64 and index.dtype is not dtypes.int32:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    n = input.shape[d] if input.ndim else 1
    if input.ndim == 0 and index.numel() != 1:
        raise RuntimeError("index_select(): Index to scalar can have only 1 value, got "
                           f"{index.numel()} value(s)")
    if n == 0 and index.numel():
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if index.ndim == 0 or input.ndim == 0:
        index = index.reshape(-1)
    if input.ndim == 0:  # NOTE: PyTorch returns a 0-d tensor; NumPy cannot index a 0-d array
        return index_select(input.reshape(1), 0, index).reshape(())
    if index._level:
        return _index_tensors(input, (slice(None),) * d + (index,), "IndexSelectBackward0")
    if index.backend.out_of_range(index._data, 0, n) is not None:
        raise IndexError("index out of range in self")
    key = (slice(None),) * d + (index._data,)
    return M.Index.apply(input, key=key, name="IndexSelectBackward0", advanced=True,
                         checked=True)


def gather(input: Tensor, dim: int, index: Tensor, *,  # noqa: A002
           sparse_grad: bool = False) -> Tensor:
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
    index = _index_arg("gather", index, input)
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

def _key(t: Tensor, key: Any) -> tuple[tuple[Any, ...], bool]:
    """The NumPy key for ``t[key]`` (Ellipses spelled out) and whether it is advanced, after
    PyTorch's checks of the key against ``t``'s shape."""
    npkey, advanced = translate(t, key)
    npkey = spell_out(t.shape, npkey, not isinstance(key, (tuple, list, Tensor)))
    if advanced:
        check_masks(t.shape, npkey)
        check_broadcast(t.backend, npkey)
    return npkey, advanced


def getitem(t: Tensor, key: Any) -> Tensor:
    """``t[key]``: ints select (SelectBackward0), slices slice (SliceBackward0), None adds a
    dimension; integer/bool tensors and lists index (IndexBackward0)."""
    npkey, advanced = _key(t, key)
    if advanced and builtins.any(isinstance(k, Tensor) for k in npkey):
        return _index_tensors(t, npkey, "IndexBackward0")
    if advanced:
        return M.Index.apply(t, key=npkey, name="IndexBackward0", advanced=True)
    # NOTE: one node per index entry, as PyTorch records them (x[0, 1:] is Slice(Select(x))).
    out = t
    dim = 0
    recorded = False
    for k in npkey:
        pre = (slice(None),) * dim
        if k is None:
            out = M.Unsqueeze.apply(out, dim=dim)
            dim += 1
            recorded = True
        elif isinstance(k, int):
            out = M.Index.apply(out, key=pre + (k, Ellipsis), name="SelectBackward0",
                                advanced=False)
            recorded = True
        else:
            # NOTE: PyTorch skips a slice that takes a whole dimension inside a tuple; it
            # records a bare x[:].
            if not is_full_slice(k, out.shape[dim]) or isinstance(key, slice):
                out = M.Index.apply(out, key=pre + (k, Ellipsis), name="SliceBackward0",
                                    advanced=False)
                recorded = True
            dim += 1
    if not recorded:  # x[...], x[()], x[:, :]: an alias
        out = M.Index.apply(out, key=(Ellipsis,), name="AliasBackward0", advanced=False)
    return out


def setitem(t: Tensor, key: Any, value: Any) -> None:
    """``t[key] = value``, in place; recorded as CopySlices when autograd is involved."""
    value_t = value if isinstance(value, Tensor) else None
    if t._level or value_t is not None and value_t._level:
        _setitem_batched(t, key, value)
        return
    recording = STATE.grad_enabled and (
        t._requires_grad or (value_t is not None and value_t._requires_grad))
    npkey, advanced = _key(t, key)
    if advanced:
        t.backend.check_index(t.shape, npkey)
    if value_t is not None:
        value_t = _fit_value(t, npkey, advanced, value_t)
    if not recording:
        _check_inplace_target(t)
        v = value_t._data if value_t is not None else value
        if value_t is not None and value_t._device is not t._device:
            v = t.backend.asarray(value_t.backend.to_host(value_t._data))
        try:
            t._data[npkey] = v
        except ValueError as e:
            raise _write_error(e) from None
        t._counter().bump()
        return
    if value_t is None:
        value_t = as_tensor_like(value, t)
    if advanced:
        inplace(t, _index_put, npkey, value_t)
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


def _fit_value(t: Tensor, npkey: Any, advanced: bool, value: Tensor) -> Tensor:
    """``value`` without the leading size-1 dims the indexed region lacks (PyTorch drops them),
    or PyTorch's error when it does not broadcast to that region."""
    target = tuple(t._data[npkey].shape)
    v = tuple(value.shape)
    k = 0
    while len(v) - k > len(target) and v[k] == 1:
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


def _index_put(t: Tensor, npkey: Any, value: Tensor) -> Tensor:
    return _IndexPut.apply(t, value.to(t.dtype), key=npkey)


class _IndexPut(E.Node):
    """``t`` with ``value`` written at an advanced ``key`` (out of place; IndexPutBackward0)."""

    node_name = "IndexPutBackward0"

    def __init__(self, key: Any) -> None:
        self.key = key

    def forward(self, x: Any, v: Any) -> Any:
        out = self.backend.copy(x)
        out[self.key] = v
        self.v_shape = v.shape
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        mask = self.backend.ones(grad.shape, grad._data.dtype)
        mask[self.key] = 0
        gx = grad * self.wrap(mask) if self.needs_input_grad[0] else None
        gv = None
        if self.needs_input_grad[1]:
            gv = M.Index.apply(grad, key=self.key, name="IndexBackward0", advanced=True)
            gv = gv.sum_to_size(self.v_shape)
        return gx, gv
