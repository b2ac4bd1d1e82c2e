"""Indexing: ``t[key]`` (Select/Slice/Index nodes), ``t[key] = value``, ``index_select``,
``gather``."""

from __future__ import annotations

import builtins
from typing import Any

from .. import dtypes
from ..autograd.grad_mode import STATE
from ..backends.composite import key_width
from ..ops import elementwise as E
from ..ops import movement as M
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .arith import as_tensor_like
from .shape import expanded_shape
from .inplace_ops import _check_inplace_target, _write_error, copy_, inplace


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    d = normalize_dim(dim, input.ndim)
    if index._level:
        return _index_tensors(input, (slice(None),) * d + (index,), "IndexSelectBackward0")
    key = (slice(None),) * d + (index._data,)
    return M.Index.apply(input, key=key, name="IndexSelectBackward0", advanced=True)


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    if index._level:
        return GatherT.apply(input, index, dim=normalize_dim(dim, input.ndim))  # type: ignore[no-any-return]
    return M.Gather.apply(input, dim=normalize_dim(dim, input.ndim), index=index._data)


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
        self.index = index
        return super().forward(x)

    def backward(self, grad: Any) -> tuple[Any, None]:  # type: ignore[override]
        return super().backward(grad) + (None,)


# ---- indexing --------------------------------------------------------------------------------

def _index_key(t: Tensor, key: Any) -> tuple[tuple[Any, ...], bool]:
    """The user's key as a NumPy key (Tensors become arrays), and whether it is advanced."""
    if not isinstance(key, tuple):
        key = (key,)
    out: list[Any] = []
    advanced = False
    for k in key:
        if isinstance(k, Tensor) and k._level:
            if k.dtype is dtypes.bool:
                raise RuntimeError(
                    "vmap: We do not support batching operators that can support dynamic shape. "
                    "Attempting to batch over indexing with a boolean mask.")
            if k.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(k)
            advanced = True
        elif isinstance(k, Tensor):
            if k.ndim == 0 and not k.dtype.is_floating_point and k.dtype is not dtypes.bool:
                out.append(int(k.item()))
                continue
            if k.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if k._device is not t._device and k._device.type != "cpu":
                raise RuntimeError("indices should be either on cpu or on the same device as the indexed tensor (cpu)")
            arr = k._data if k._device is t._device else t.backend.asarray(k.backend.to_host(k._data))
            out.append(arr)
            advanced = True
        elif isinstance(k, (list, range)) or hasattr(k, "__array_interface__") and not isinstance(k, (int, slice)):
            arr = t.backend.asarray(list(k) if isinstance(k, range) else k)
            if arr.size == 0 and arr.dtype.kind == "f":  # x[[]]: an empty integer index
                arr = arr.astype("int64")
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(arr)
            advanced = True
        elif k is None or k is Ellipsis or isinstance(k, slice):
            if isinstance(k, slice) and k.step is not None and k.step < 0:
                raise ValueError("step must be greater than zero")
            out.append(k)
        elif isinstance(k, bool):
            out.append(t.backend.asarray(k))
            advanced = True
        elif isinstance(k, int) or hasattr(k, "__index__"):
            out.append(int(k))
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got " + type(k).__name__ + ")"
            )
    return tuple(out), advanced


def _check_bounds(shape: tuple[int, ...], key: tuple[Any, ...]) -> None:
    """PyTorch's IndexError for an integer out of range (NumPy's says 'axis')."""
    n_real = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    dim = 0
    for k in key:
        if k is Ellipsis:
            dim += len(shape) - n_real
        elif k is None:
            continue
        else:
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            if isinstance(k, int) and not -shape[dim] <= k < shape[dim]:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {shape[dim]}")
            dim += 1


def _check_masks(shape: tuple[int, ...], key: tuple[Any, ...]) -> None:
    """PyTorch's IndexError for a boolean mask whose shape does not match the dims it covers."""
    width = key_width
    real = builtins.sum(width(k) for k in key)
    full: list[int] = []  # the indexed shape with the None dims inserted, as PyTorch reports it
    dim = 0
    for k in key:
        if k is None:
            full.append(1)
        elif k is Ellipsis:
            n = builtins.max(len(shape) - real, 0)
            full += shape[dim:dim + n]
            dim += n
        else:
            full += shape[dim:dim + width(k)]
            dim += width(k)
    full += shape[dim:]
    pos = 0
    for k in key:
        w = width(k)
        if k is Ellipsis:
            pos += builtins.max(len(shape) - real, 0)
        elif k is None:
            pos += 1
        elif getattr(k, "dtype", None) is not None and k.dtype.kind == "b" and k.ndim:
            for j in range(w):
                if pos + j < len(full) and k.shape[j] != full[pos + j]:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {full} at index {pos + j}"
                    )
        pos += w


def getitem(t: Tensor, key: Any) -> Tensor:
    """``t[key]``: ints select (SelectBackward0), slices slice (SliceBackward0), None adds a
    dimension; integer/bool tensors and lists index (IndexBackward0)."""
    npkey, advanced = _index_key(t, key)
    if advanced and builtins.any(isinstance(k, Tensor) for k in npkey):
        return _index_tensors(t, npkey, "IndexBackward0")
    if advanced:
        _check_masks(t.shape, npkey)
        try:
            return M.Index.apply(t, key=npkey, name="IndexBackward0", advanced=True)
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension")) from None
    if npkey.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    _check_bounds(t.shape, npkey)
    # NOTE: one node per index entry, as PyTorch records them (x[0, 1:] is Slice(Select(x))).
    n_real = builtins.sum(1 for k in npkey if k is not None and k is not Ellipsis)
    out = t
    dim = 0
    recorded = False
    for k in npkey:
        if k is Ellipsis:
            dim += t.ndim - n_real
            continue
        pre = (slice(None),) * dim
        if k is None:
            out = M.Unsqueeze.apply(out, dim=dim)
            dim += 1
            recorded = True
        elif isinstance(k, int):
            out = M.Index.apply(out, key=pre + (k, Ellipsis), name="SelectBackward0", advanced=False)
            recorded = True
        else:
            # NOTE: full slices inside a tuple are skipped; a bare x[:] is recorded, as PyTorch.
            if k != slice(None) or isinstance(key, slice):
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
    recording = STATE.grad_enabled and (t._requires_grad or (value_t is not None and value_t._requires_grad))
    npkey, advanced = _index_key(t, key)
    if not advanced:
        _check_bounds(t.shape, npkey)
    else:
        _check_masks(t.shape, npkey)
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
    npkey, advanced = _index_key(t, key)
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
