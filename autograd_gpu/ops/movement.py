"""Shape and indexing ops. View ops (``is_view = True``) return arrays sharing the input's
storage; ``Node.apply`` links their outputs to the base tensor's version counter."""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .util import c_order, reduce_grad


class Reshape(Node):
    """``view``/``reshape``: ViewBackward0, or UnsafeViewBackward0 when reshape had to copy."""

    node_name = "ViewBackward0"
    is_view = True
    raw_ok = True

    def __init__(self, shape: tuple[int, ...], copy_ok: bool = True) -> None:
        self.shape = shape
        self.copy_ok = copy_ok

    def forward(self, x: Any) -> Any:
        self.in_shape = x.shape
        out = self.backend.view(x, self.shape)
        if out is None:
            if not self.copy_ok:
                raise RuntimeError(
                    "view size is not compatible with input tensor's size and stride (at least one "
                    "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
                )
            self.is_view = False
            self.node_name = "UnsafeViewBackward0"
            out = self.backend.reshape(self.backend.ascontiguousarray(x), self.shape)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        return (grad.reshape(self.in_shape),)


class UnsafeView(Reshape):
    """A reshape whose output is not tracked as a view (``_unsafe_view``, UnsafeViewBackward0):
    PyTorch's matmul uses it on products it just made. ``name`` serves ``squeeze_`` there."""

    node_name = "UnsafeViewBackward0"
    is_view = False

    def __init__(self, shape: tuple[int, ...], name: str = "UnsafeViewBackward0") -> None:
        self.shape = shape
        self.node_name = name

    def forward(self, x: Any) -> Any:
        self.in_shape = x.shape
        return self.backend.reshape(x, self.shape)


class Repeat(Node):
    """``x.repeat(*reps)`` (RepeatBackward0): tiles ``x``, which is first padded with leading
    size-1 dims to ``len(reps)`` dims. The gradient sums the tiles."""

    node_name = "RepeatBackward0"

    def __init__(self, reps: tuple[int, ...]) -> None:
        self.reps = reps

    def forward(self, x: Any) -> Any:
        b = self.backend
        self.in_shape = x.shape
        shape = (1,) * (len(self.reps) - x.ndim) + x.shape
        self.interleaved = tuple(d for r, s in zip(self.reps, shape) for d in (r, s))
        # NOTE: the tiles are copied into a new C-contiguous array, as PyTorch's: a reshape of
        # the broadcast view could be that (read-only) view itself, or another layout.
        out = b.empty(self.interleaved, x.dtype)
        b.copyto(out, b.broadcast_to(b.reshape(x, tuple(d for s in shape for d in (1, s))),
                                     self.interleaved))
        return b.reshape(out, tuple(r * s for r, s in zip(self.reps, shape)))

    def backward(self, grad: Any) -> tuple[Any]:
        tiles = tuple(range(0, len(self.interleaved), 2))
        return (grad.reshape(self.interleaved).sum(tiles).reshape(self.in_shape),)


class Squeeze(Node):
    """SqueezeBackward0 (all size-1 dims) / SqueezeBackward1 (given dims)."""

    is_view = True
    raw_ok = True

    def __init__(self, dims: tuple[int, ...], name: str) -> None:
        self.dims = dims
        self.node_name = name

    def forward(self, x: Any) -> Any:
        self.in_shape = x.shape
        return self.backend.reshape(x, tuple(s for i, s in enumerate(x.shape) if i not in self.dims))

    def backward(self, grad: Any) -> tuple[Any]:
        return (grad.reshape(self.in_shape),)


class Unsqueeze(Node):
    node_name = "UnsqueezeBackward0"
    is_view = True
    raw_ok = True

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def forward(self, x: Any) -> Any:
        return self.backend.expand_dims(x, self.dim)

    def backward(self, grad: Any) -> tuple[Any]:
        return (grad.squeeze(self.dim),)


class Expand(Node):
    """ExpandBackward0: a view of ``x`` broadcast to ``shape``.

    NOTE: writes through the view reach ``x``, as in PyTorch: ``fill_`` and ``zero_`` write
    through a broadcast dim (to one element), and the view's non-overlapping parts
    (``x.expand(2, 3)[0]``) take any in-place op; an op writing a region whose elements share
    memory (a dim of stride 0 and size > 1) is refused by PyTorch's internal-overlap check
    (``view_writes._check_overlap``).
    """

    node_name = "ExpandBackward0"
    is_view = True
    raw_ok = True

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    def forward(self, x: Any) -> Any:
        self.in_shape = x.shape
        b = self.backend
        lead = len(self.shape) - x.ndim
        if 0 in self.shape:
            return b.empty(self.shape, x.dtype)  # NOTE: no elements: nothing to share
        if self.shape[lead:] == x.shape and all(s == 1 for s in self.shape[:lead]):
            return b.reshape(x, self.shape)
        return b.expand(x, self.shape)

    def backward(self, grad: Any) -> tuple[Any]:
        return (reduce_grad(grad, self.in_shape),)


class Permute(Node):
    """PermuteBackward0; also TransposeBackward0 and TBackward0 by name."""

    node_name = "PermuteBackward0"
    is_view = True
    raw_ok = True

    def __init__(self, axes: tuple[int, ...], name: str = "PermuteBackward0") -> None:
        self.axes = axes
        self.node_name = name

    def forward(self, x: Any) -> Any:
        return self.backend.transpose(x, self.axes)

    def backward(self, grad: Any) -> tuple[Any]:
        inverse = [0] * len(self.axes)
        for i, a in enumerate(self.axes):
            inverse[a] = i
        return (self.permute(grad, tuple(inverse)),)


class Index(Node):
    """``x[key]`` with a NumPy key already translated from the user's. Basic keys give views
    (SelectBackward0, SliceBackward0, ...); advanced keys (index arrays and full slices) copy
    (IndexBackward0), laid out as PyTorch's index kernel lays them out. ``select``:
    ``index_select``, whose caller has checked the index, and whose result is C-contiguous.
    ``rows``: the key is one checked index array over dim 0 of a C-contiguous input (see
    ``functions.index._take_rows``), taken along dim 0."""

    raw_ok = True

    def __init__(self, key: Any, name: str, advanced: bool, select: bool = False,
                 rows: bool = False) -> None:
        self.key = key
        self.node_name = name
        self.advanced = advanced
        self.is_view = not advanced
        self.select = select
        self.rows = rows

    def forward(self, x: Any) -> Any:
        self.in_shape = x.shape
        if not self.advanced:
            return x[self.key]  # NOTE: basic keys end in Ellipsis, so even x[0, 1] is a 0-d view
        b = self.backend
        if self.rows:
            return b.xp.take(x, self.key[0], axis=0)
        if self.select:  # NOTE: a 0-d input takes one index, 0: the result is a copy of it
            return b.ascontiguousarray(x[self.key]) if x.ndim else b.copy(x)
        if b.check_index(x.shape, self.key):
            return b.empty_index(x.shape, self.key, x.dtype)
        return b.index_layout(x, self.key, x[self.key])

    def backward(self, grad: Any) -> tuple[Any]:
        if self.select and not self.in_shape:
            return (grad,)
        return (self.run(IndexEmbed, grad, key=self.key, shape=self.in_shape,
                         accumulate=self.advanced),)


class IndexEmbed(Node):
    """Zeros of ``shape`` with ``grad`` written (or, for repeated indices, added) at ``key``: the
    backward of indexing, itself differentiable (its backward indexes again)."""

    node_name = "IndexBackwardBackward0"

    def __init__(self, key: Any, shape: tuple[int, ...], accumulate: bool) -> None:
        self.key = key
        self.shape = shape
        self.accumulate = accumulate

    def forward(self, g: Any) -> Any:
        b = self.backend
        out = b.zeros(self.shape, g.dtype)
        if not g.size:  # NOTE: the key may then hold entries out of range (see check_index)
            return out
        if self.accumulate:
            b.index_add(out, self.key, g)
        else:
            out[self.key] = g
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        return (Index.apply(grad, key=self.key, name="IndexBackward0", advanced=self.accumulate),)


class Gather(Node):
    """PyTorch's ``gather`` along ``dim`` (an output of ``index``'s shape, which may be smaller
    than ``x``'s outside ``dim``); backward scatters (adds) back. ``index`` was checked."""

    node_name = "GatherBackward0"
    raw_ok = True

    def __init__(self, dim: int, index: Any) -> None:
        self.dim = dim
        self.index = index

    def forward(self, x: Any) -> Any:
        self.shape = x.shape
        # NOTE: C-contiguous whatever index's layout, as PyTorch's (empty(index.sizes()))
        return c_order(self.backend, self.backend.gather(x, self.index, self.dim))

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(ScatterAdd, grad, dim=self.dim, index=self.index, shape=self.shape),)


class ScatterAdd(Node):
    """Zeros of ``shape`` with ``src`` added at ``index`` along ``dim`` (gather's adjoint)."""

    node_name = "ScatterAddBackward0"

    def __init__(self, dim: int, index: Any, shape: tuple[int, ...]) -> None:
        self.dim = dim
        self.index = index
        self.shape = shape

    def forward(self, src: Any) -> Any:
        out = self.backend.zeros(self.shape, src.dtype)
        self.backend.scatter_add(out, self.index, src, self.dim)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        return (Gather.apply(grad, dim=self.dim, index=self.index),)


class Cat(Node):
    """CatBackward0. ``skipped``: the inputs left out of the result (PyTorch's legacy rule for
    shape (0,) among tensors of another rank); they stay inputs and get an empty gradient."""

    node_name = "CatBackward0"

    def __init__(self, dim: int, skipped: tuple[bool, ...] = ()) -> None:
        self.dim = dim
        self.skipped = skipped

    def forward(self, *xs: Any) -> Any:
        self.skipped = self.skipped or (False,) * len(xs)
        kept = [x for x, skip in zip(xs, self.skipped) if not skip]
        self.sizes = [x.shape[self.dim] for x in kept]
        self.dtype = kept[0].dtype
        # NOTE: C-contiguous, as PyTorch's (NumPy keeps the inputs' layout).
        return self.backend.ascontiguousarray(self.backend.concatenate(kept, axis=self.dim))

    def backward(self, grad: Any) -> tuple[Any, ...]:
        pieces = iter(grad.split(self.sizes, self.dim))
        return tuple(self.wrap(self.backend.zeros((0,), self.dtype)) if skip else next(pieces)
                     for skip in self.skipped)


class Stack(Node):
    node_name = "StackBackward0"

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def forward(self, *xs: Any) -> Any:
        # NOTE: C-contiguous, as PyTorch's (NumPy keeps the inputs' layout).
        return self.backend.ascontiguousarray(self.backend.stack(xs, axis=self.dim))

    def backward(self, grad: Any) -> tuple[Any, ...]:
        return tuple(grad.unbind(self.dim))


class Split(Node):
    """``split``/``chunk`` (SplitBackward0, SplitWithSizesBackward0) and ``unbind``
    (UnbindBackward0, ``squeeze=True``): several views, one per piece."""

    is_view = True

    def __init__(self, sizes: list[int], dim: int, name: str, squeeze: bool = False) -> None:
        self.sizes = sizes
        self.dim = dim
        self.node_name = name
        self.squeeze = squeeze

    def forward(self, x: Any) -> Any:
        self.shape = x.shape
        self.dtype = x.dtype
        outs = []
        start = 0
        pre = (slice(None),) * self.dim
        for s in self.sizes:
            outs.append(x[pre + ((start if self.squeeze else slice(start, start + s)),)])
            start += s
        return tuple(outs)

    def backward(self, *grads: Any) -> tuple[Any]:
        from .. import functions

        parts = []
        # NOTE: the engine passes gradients only up to the last output that received one.
        grads = grads + (None,) * (len(self.sizes) - len(grads))
        for g, s in zip(grads, self.sizes):
            if g is None:
                shape = list(self.shape)
                shape[self.dim] = s
                if self.squeeze:
                    del shape[self.dim]
                g = self.wrap(self.backend.zeros(tuple(shape), self.dtype))
            parts.append(g)
        if self.squeeze:
            return (functions.stack(parts, self.dim),)
        return (functions.cat(parts, self.dim),)


class Contiguous(Node):
    """``contiguous()`` of a non-contiguous tensor: a copy (CloneBackward0, as in PyTorch)."""

    node_name = "CloneBackward0"

    def forward(self, x: Any) -> Any:
        return self.backend.ascontiguousarray(x)

    def backward(self, grad: Any) -> tuple[Any]:
        return (grad,)
