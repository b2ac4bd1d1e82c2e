"""The scatter family's nodes: writes and reductions at index positions (``Scatter``,
``ScatterFill``, ``IndexPutAccumulate``, ``MaskedScatter``) and reads (``Take``,
``MaskedSelect``). ``functions/scatter*.py`` check the arguments (shapes and dtypes) before a
node runs and hand it the check of the index values, which it runs on the array it gets.

``Scatter`` serves every op that sends the values of a source tensor to positions along one
dimension: ``scatter``, ``scatter_add``, ``scatter_reduce``, ``put`` (read flat) and, with their
1-d index expanded along the dimension to the source's shape, ``index_add``, ``index_copy`` and
``index_reduce``. Backward follows PyTorch's formulas (ties in amax/amin share the gradient
evenly; a product's zeros are handled without dividing by them) and is written with these
nodes, so it differentiates again.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..autograd.grad_mode import STATE
from ..autograd.node import Node
from . import movement as M
from .rounding import NOT_IMPLEMENTED, _no_derivative

Check = Callable[[Any, Any], None]  # check(backend, index array): raises PyTorch's error
_PROD_DOUBLE = ("scatter_reduce(): Double backward is unsupported for src when >1 zeros in src "
                "are scattered to the same position in self")


def fit_grad(grad: Any, shape: tuple[int, ...], name: str, i: int) -> Any:
    """``grad`` for an input of ``shape``: itself, summed down where the input broadcasts to
    it, or PyTorch's engine error (``scatter`` with a source larger than its index)."""
    have = tuple(grad.shape)
    if have == tuple(shape):
        return grad
    n = len(have) - len(shape)
    if n >= 0 and all(s in (1, h) for s, h in zip(shape, have[n:])):
        return grad.sum_to_size(shape)
    raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} - got "
                       f"{list(have)} but expected shape compatible with {list(shape)}")


def _flat(a: Any) -> Any:
    return a.reshape(-1) if a.ndim != 1 else a


class Scatter(Node):
    """``x`` with the values of ``src`` (cut to ``index``'s shape) sent to ``index`` along
    ``dim`` and written (``reduce`` "set") or reduced into ``x``'s ("sum", "prod", "mean",
    "amax", "amin"; ``include_self``: whether ``x``'s own value takes part). ``alpha`` scales
    ``src`` (``index_add``). ``name``: PyTorch's node name for the op it serves. ``flat``:
    ``put`` (``x``, ``index`` and ``src`` read flat; a ``x`` of at most one dimension is read
    so anyway). ``legacy``: scatter's ``reduce=`` argument, which PyTorch does not
    differentiate.

    ``grad_error``: the reduction's name where PyTorch computes it but refuses its gradient
    ("max", "min").

    ``index`` is an input (it takes no gradient) whose shapes were checked; ``check(backend,
    index)`` checks its values (here, so that a batched index under ``vmap`` is checked slice
    by slice). ``wrap_n``: add this to negative entries first (``put``). ``expand``: ``index`` is
    1-d along ``dim`` (the index ops) and stands for itself expanded to ``src``'s shape."""

    def __init__(self, dim: int, reduce: str, name: str, include_self: bool = True,
                 alpha: Any = 1, flat: bool = False, legacy: bool = False,
                 grad_error: str | None = None, check: Check | None = None,
                 wrap_n: int | None = None, expand: bool = False) -> None:
        self.dim = dim
        self.reduce = reduce
        self.node_name = NOT_IMPLEMENTED if legacy else name
        self.op_name = name
        self.include_self = include_self
        self.alpha = alpha
        self.flat = flat
        self.legacy = legacy
        self.grad_error = grad_error
        self.check = check
        self.wrap_n = wrap_n
        self.expand = expand

    def forward(self, x: Any, index: Any, src: Any) -> Any:
        b = self.backend
        if self.check is not None:
            self.check(b, index)
        if self.wrap_n is not None:
            index = b.wrap_negative(index, self.wrap_n)
        flat = self.flat or x.ndim <= 1
        self.shapes = (x.shape, src.shape if self.expand else index.shape, src.shape)
        # NOTE: C-contiguous, as PyTorch's results; put and tensors of at most one dimension
        # work on a fresh 1-d copy (put's result then takes x's layout, as PyTorch's).
        out = b.copy(_flat(x)) if flat else b.contiguous_copy(x)
        idx = self._full_index(b, index, flat)
        vals = _flat(src) if flat else src
        if vals.shape != idx.shape and vals.ndim == idx.ndim:
            vals = vals[tuple(slice(0, n) for n in idx.shape)]
        # NOTE: nothing to write: an empty index (of any rank, PyTorch reads none of it) or an
        # empty x (whose index PyTorch's index_add does not read either)
        if idx.size and out.size:
            if self.alpha is not True and self.alpha != 1:
                vals = (vals * self.alpha).astype(out.dtype, copy=False)
            b.scatter_reduce_into(out, b.along_axis_key(idx, 0 if flat else self.dim), vals,
                                  self.reduce, self.include_self)
        result = out.reshape(x.shape) if flat else out
        if self.flat and x.ndim > 1 and not x.flags.c_contiguous:
            result, out = b.copy(x), result
            result[...] = out
        if self.needs_input_grad and not self.legacy:
            # NOTE: what PyTorch's node saves (so that an in-place write to it is refused as
            # PyTorch refuses it); prod/amax/amin read x, src and the result.
            if self.reduce not in ("set", "sum") or self.op_name == "ScatterReduceBackward0":
                self.save_for_backward(index, x, src, result)
            elif self.flat or self.expand:  # put, index_add, index_copy
                self.save_for_backward(index, src)
            else:
                self.save_for_backward(index)
        return result

    def _full_index(self, b: Any, index: Any, flat: bool) -> Any:
        """The index of the equivalent ``scatter`` (``expand``: ``index`` broadcast along
        ``dim`` to the source's shape)."""
        if flat:
            return _flat(index)
        if not self.expand:
            return index
        view = [1] * len(self.shapes[2])
        view[self.dim] = -1
        return b.broadcast_to(b.reshape(index, tuple(view)), self.shapes[2])

    def backward(self, grad: Any) -> tuple[Any, None, Any]:
        if self.legacy:
            raise _no_derivative("scatter")
        if self.grad_error is not None:
            raise RuntimeError("Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                               f"'amin' but got {self.grad_error}.")
        x_shape, idx_shape, src_shape = self.shapes
        saved = self.saved_tensors
        flat = self.flat or len(x_shape) <= 1
        index = saved[0]
        if flat or self.expand:
            index = self.wrap(self._full_index(self.backend, index._data, flat))
        g = _flat(grad) if flat else grad
        ops = _Ops(self, index, 0 if flat else self.dim)
        need_x, need_src = self.needs_input_grad[0], self.needs_input_grad[2]
        reduce = self.reduce
        gx: Any = None
        gs: Any = None
        if reduce in ("set", "sum"):
            if need_x:
                gx = g if reduce == "sum" and self.include_self else ops.fill0(g)
            gs = ops.gather(g) if need_src else None
            if gs is not None and self.alpha is not True and self.alpha != 1:
                gs = gs * self.alpha
        elif reduce == "mean":
            gx = g / ops.counts(g, self.include_self)
            gs = ops.gather(gx) if need_src else None
        else:
            x, src, out = (_flat(t) if flat else t for t in saved[1:])
            if src.shape != index.shape:
                src = src[tuple(slice(0, n) for n in index.shape)]
            gx, gs = (_prod_grads(ops, g, x, src, out, self.include_self, need_src)
                      if reduce == "prod" else
                      _extremum_grads(ops, g, x, src, out, need_src))
        if need_x:
            gx = gx if self.include_self else ops.fill0(gx)
            gx = gx.reshape(x_shape) if flat else gx
        else:
            gx = None
        if gs is not None:
            gs = gs.reshape(src_shape if self.flat else idx_shape)
            gs = fit_grad(gs, src_shape, self.op_name, 1)  # NOTE: PyTorch counts self, src
        return gx, None, gs


class _Ops:
    """The tensor operations a ``Scatter`` backward is written with, along its dimension and
    index (a Tensor)."""

    def __init__(self, node: Node, index: Any, dim: int) -> None:
        self.node, self.index, self.dim = node, index, dim

    def gather(self, t: Any) -> Any:
        return M.Gather.apply(t, dim=self.dim, index=self.index._data)

    def fill0(self, t: Any) -> Any:
        return ScatterFill.apply(t, self.index, dim=self.dim, value=0)

    def scatter(self, t: Any, src: Any, reduce: str, include_self: bool = True) -> Any:
        return Scatter.apply(t, self.index, src, dim=self.dim, reduce=reduce,
                             name="ScatterReduceBackward0", include_self=include_self)

    def counts(self, like: Any, include_self: bool) -> Any:
        """How many values (``x``'s own when ``include_self``) each position averaged, 1
        where none: a constant of ``like``'s dtype."""
        b = self.node.backend
        n = b.full(like.shape, 1 if include_self else 0, dtype=like._data.dtype)
        ones = b.ones(self.index.shape, dtype=like._data.dtype)
        b.scatter_reduce_into(n, b.along_axis_key(self.index._data, self.dim), ones, "sum")
        n[n == 0] = 1
        return self.node.wrap(n)


def _prod_grads(ops: _Ops, g: Any, x: Any, src: Any, out: Any, include_self: bool,
                need_src: bool) -> tuple[Any, Any]:
    """The gradients of a scatter product, as PyTorch's: a zero of ``x`` or of ``src`` is
    left out of the product it divides (no 0/0); a position that got two zeros from ``src``
    gives them no second derivative (PyTorch's delayed error)."""
    masked_x = x.masked_fill(x == 0, 1)
    gx = g * ops.scatter(masked_x, src, "prod", include_self) / masked_x
    if not need_src:
        return gx, None
    dtype = g.dtype
    src_zero = src == 0
    zeros_here = ops.gather(ops.scatter(x.new_zeros(x.shape), src_zero.to(dtype), "sum"))
    single = src_zero & (zeros_here == 1)
    masked_src_out = ops.scatter(x, src.masked_fill(single, 1), "prod", include_self)
    gs = ops.gather(g * masked_src_out).where(
        single, ops.gather(g * out) / src.masked_fill(src_zero, 1))
    if STATE.grad_enabled and bool((zeros_here > 1).any()):
        gs = _DelayedError.apply(gs, message=_PROD_DOUBLE)
    return gx, gs


def _extremum_grads(ops: _Ops, g: Any, x: Any, src: Any, out: Any,
                    need_src: bool) -> tuple[Any, Any]:
    """amax/amin gradients: shared evenly among the values equal to the result (``x``'s own
    counts even when ``include_self`` is False, as in PyTorch)."""
    # NOTE: ties share the gradient evenly; NaN results (equal to nothing) give NaN.
    dtype = g.dtype
    x_is = (x == out).to(dtype)
    src_is = (src == ops.gather(out)).to(dtype)
    share = g / ops.scatter(x_is, src_is, "sum")
    gs = src_is * ops.gather(share) if need_src else None
    return x_is * share, gs


class ScatterFill(Node):
    """``x`` with ``value`` written at ``index`` along ``dim`` (or, ``reduce`` "sum"/"prod",
    added or multiplied in: scatter's legacy ``reduce=`` with a number). ``value`` is a
    number, or the 0-d array of a third input (``index_fill`` with a tensor value:
    IndexFillBackward1, whose gradient sums ``grad`` over the filled positions).
    ScatterBackward1 by default. ``preserve``: the result takes ``x``'s layout
    (``index_fill``), else it is C-contiguous (``scatter``). ``check``, ``wrap_n``: as
    ``Scatter``'s; ``expand``: ``index`` is 1-d along ``dim`` (``index_fill``)."""

    def __init__(self, dim: int, value: Any = None, name: str = "ScatterBackward1",
                 reduce: str = "set", legacy: bool = False, preserve: bool = False,
                 check: Check | None = None, wrap_n: int | None = None,
                 expand: bool = False) -> None:
        self.dim = dim
        self.value = value
        self.node_name = NOT_IMPLEMENTED if legacy else name
        self.reduce = reduce
        self.legacy = legacy
        self.preserve = preserve
        self.check = check
        self.wrap_n = wrap_n
        self.expand = expand

    def forward(self, x: Any, index: Any, v: Any = None) -> Any:
        b = self.backend
        if self.check is not None:
            self.check(b, index)
        if self.wrap_n is not None:
            index = b.wrap_negative(index, self.wrap_n)
        flat = x.ndim <= 1
        d = 0 if flat else self.dim
        # NOTE: scatter's result is C-contiguous, index_fill's (``preserve``) takes x's layout
        out = b.copy(_flat(x)) if flat else b.copy(x) if self.preserve else b.contiguous_copy(x)
        if flat:
            idx = _flat(index)
        elif self.expand:
            shape = list(x.shape)
            shape[d] = index.size
            view = [1] * x.ndim
            view[d] = -1
            idx = b.broadcast_to(b.reshape(index, tuple(view)), tuple(shape))
        else:
            idx = index
        key = b.along_axis_key(idx, d) if idx.size and out.size else None
        value = v if v is not None else self.value
        if key is not None and self.reduce == "set":
            b.scatter_reduce_into(out, key, value, "set")
        elif key is not None:
            vals = b.broadcast_to(b.asarray(value, dtype=out.dtype), idx.shape)
            b.scatter_reduce_into(out, key, vals, self.reduce)
        if v is not None and self.needs_input_grad and self.needs_input_grad[2]:
            filled = b.zeros(out.shape, "bool")
            if key is not None:
                filled[key] = True
            self.filled = filled.reshape(x.shape)
            self.v_dtype = v.dtype.name
        if self.needs_input_grad:
            self.save_for_backward(index)
        return out.reshape(x.shape) if flat else out

    def backward(self, grad: Any) -> tuple[Any, ...]:
        if self.legacy:
            raise _no_derivative("scatter")
        (index,) = self.saved_tensors
        gx = None
        if self.needs_input_grad[0]:
            flat = grad.ndim <= 1
            g = ScatterFill.apply(_flat(grad) if flat else grad, index,
                                  dim=0 if flat else self.dim, value=0, preserve=True,
                                  expand=self.expand)
            gx = g.reshape(grad.shape) if flat else g
        if len(self.needs_input_grad) < 3:
            return gx, None
        gv = None
        if self.needs_input_grad[2]:
            gv = grad.where(self.wrap(self.filled), 0).sum().to(dtypes.from_name(self.v_dtype))
        return gx, None, gv


class _DelayedError(Node):
    """Passes its input through; differentiating through it raises ``message`` (PyTorch's
    DelayedError, named Error)."""

    node_name = "Error"

    def __init__(self, message: str) -> None:
        self.message = message

    def forward(self, x: Any) -> Any:
        return self.backend.copy(x)

    def backward(self, grad: Any) -> tuple[Any]:
        raise RuntimeError(self.message)


class Take(Node):
    """``x`` read flat at ``index`` (negative positions count from the end): TakeBackward0, a
    result of ``index``'s shape. ``check``: as ``Scatter``'s."""

    node_name = "TakeBackward0"

    def __init__(self, check: Check | None = None) -> None:
        self.check = check

    def forward(self, x: Any, index: Any) -> Any:
        b = self.backend
        if self.check is not None:
            self.check(b, index)
        self.x_shape = x.shape
        self.flat_index = b.wrap_negative(_flat(index), x.size)
        if self.needs_input_grad:
            self.save_for_backward(x)  # NOTE: as PyTorch's node: a later write to x is refused
        return _flat(x)[self.flat_index].reshape(index.shape)

    def backward(self, grad: Any) -> tuple[Any, None]:
        self.saved_tensors  # noqa: B018  (the version check)
        n = 1
        for s in self.x_shape:
            n *= s
        g = M.ScatterAdd.apply(_flat(grad), dim=0, index=self.flat_index, shape=(n,))
        return g.reshape(self.x_shape), None


class MaskedSelect(Node):
    """The elements of ``x`` where ``mask`` is true, ``x`` and ``mask`` broadcast together
    (a 1-d result in C order): MaskedSelectBackward0."""

    node_name = "MaskedSelectBackward0"

    def __init__(self, mask: Any, shape: tuple[int, ...]) -> None:
        self.mask = mask
        self.shape = shape

    def forward(self, x: Any) -> Any:
        b = self.backend
        self.x_shape = x.shape
        self.positions = b.flat_positions(b.broadcast_to(self.mask, self.shape))
        if self.needs_input_grad:
            self.save_for_backward(x)  # NOTE: as PyTorch's node: a later write to x is refused
        return _flat(b.broadcast_to(x, self.shape))[self.positions]

    def backward(self, grad: Any) -> tuple[Any]:
        self.saved_tensors  # noqa: B018  (the version check)
        n = 1
        for s in self.shape:
            n *= s
        g = M.IndexEmbed.apply(grad, key=(self.positions,), shape=(n,), accumulate=True)
        return (fit_grad(g.reshape(self.shape), self.x_shape, self.node_name, 0),)


class MaskedScatter(Node):
    """``x`` (broadcast with ``mask``) with the leading elements of ``src`` (read flat)
    written, in order, where ``mask`` is true: MaskedScatterBackward0. ``src`` was checked to
    have enough elements."""

    node_name = "MaskedScatterBackward0"

    def __init__(self, mask: Any, shape: tuple[int, ...]) -> None:
        self.mask = mask
        self.shape = shape

    def forward(self, x: Any, src: Any) -> Any:
        b = self.backend
        self.x_shape, self.src_shape = x.shape, src.shape
        self.mask = b.broadcast_to(self.mask, self.shape)
        self.positions = b.flat_positions(self.mask)
        out = b.copy(b.reshape(b.broadcast_to(x, self.shape), (-1,)))
        out[self.positions] = _flat(src)[:self.positions.size]
        return out.reshape(self.shape)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gx = gs = None
        if self.needs_input_grad[0]:
            gx = grad.masked_fill(self.wrap(self.mask), 0)
            gx = fit_grad(gx, self.x_shape, self.node_name, 0)
        if self.needs_input_grad[1]:
            n = 1
            for s in self.src_shape:
                n *= s
            picked = M.Index.apply(_flat(grad), key=(self.positions,),
                                   name="IndexBackward0", advanced=True)
            gs = M.IndexEmbed.apply(picked, key=(slice(0, picked.shape[0]),), shape=(n,),
                                    accumulate=False).reshape(self.src_shape)
        return gx, gs


class IndexPutAccumulate(Node):
    """``x`` with ``v`` added at the advanced ``key`` (repeated positions add up):
    ``index_put(..., accumulate=True)``, IndexPutBackward0. ``empty``: the region is empty
    (nothing to add; the key may be out of range)."""

    node_name = "IndexPutBackward0"

    def __init__(self, key: Any, region: tuple[int, ...], empty: bool) -> None:
        self.key = key
        self.region = region
        self.empty = empty

    def forward(self, x: Any, v: Any) -> Any:
        b = self.backend
        self.v_shape = v.shape
        out = b.copy(x)
        if not self.empty:
            b.scatter_reduce_into(out, self.key, b.broadcast_to(v, self.region), "sum")
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gv = None
        if self.needs_input_grad[1]:
            if self.empty:
                gv = grad.new_zeros(self.v_shape)
            else:
                gv = M.Index.apply(grad, key=self.key, name="IndexBackward0", advanced=True)
                gv = gv.sum_to_size(self.v_shape)
        return grad, gv
