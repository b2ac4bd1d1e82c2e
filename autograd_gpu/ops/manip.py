"""Shape manipulations: triangles, rolls, flips, diagonals, block diagonals and the strided
views (``diagonal``, ``unfold``, ``as_strided``).

View ops (``is_view = True``) return arrays sharing the input's memory, so in-place writes
through them land in the input and ``view_writes`` can replay them on the base. Every backward
is written with these same nodes (applied, or run on bare arrays), so it is differentiable.
"""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..autograd.node import Node


class Triangle(Node):
    """``tril``/``triu`` (TrilBackward0, TriuBackward0): zeros outside the triangle of the last
    two dims from diagonal ``k``; the gradient keeps the same triangle."""

    raw_ok = True

    def __init__(self, k: int, lower: bool) -> None:
        self.k = k
        self.lower = lower
        self.node_name = "TrilBackward0" if lower else "TriuBackward0"

    def forward(self, x: Any) -> Any:
        return self.backend.tril(x, self.k) if self.lower else self.backend.triu(x, self.k)

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(Triangle, grad, k=self.k, lower=self.lower),)


class Roll(Node):
    """RollBackward0: ``x`` rolled by ``shifts`` along ``axes`` (no ``axes``: the flattened
    ``x`` by the one shift, in ``x``'s shape); backward rolls back."""

    node_name = "RollBackward0"
    raw_ok = True

    def __init__(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> None:
        self.shifts = shifts
        self.axes = axes

    def forward(self, x: Any) -> Any:
        b = self.backend
        if self.axes:
            return b.roll(x, self.shifts, self.axes)
        return b.reshape(b.roll(b.reshape(x, (-1,)), self.shifts, (0,)), x.shape)

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(Roll, grad, shifts=tuple(-s for s in self.shifts), axes=self.axes),)


class Flip(Node):
    """FlipBackward0: a copy reversed along ``axes`` (not a view, as in PyTorch), laid out like
    the input."""

    node_name = "FlipBackward0"
    raw_ok = True

    def __init__(self, axes: tuple[int, ...]) -> None:
        self.axes = axes

    def forward(self, x: Any) -> Any:
        return self.backend.flip(x, self.axes)

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(Flip, grad, axes=self.axes),)


class Rot90(Node):
    """Rot90Backward0: ``k`` quarter turns from dim ``dims[0]`` towards ``dims[1]``: a flip, then
    (odd ``k``) the two dims swapped, the layout PyTorch's gives (a transposed copy)."""

    node_name = "Rot90Backward0"
    raw_ok = True

    def __init__(self, k: int, dims: tuple[int, int]) -> None:
        self.k = k % 4
        self.dims = dims

    def forward(self, x: Any) -> Any:
        b = self.backend
        d0, d1 = self.dims
        if self.k == 0:  # NOTE: a C-contiguous clone (clone(contiguous_format))
            out = b.ascontiguousarray(x)
            return b.copy(out) if out is x else out
        if self.k == 2:
            return b.flip(x, (d0, d1))
        out = b.flip(x, (d1,) if self.k == 1 else (d0,))
        axes = list(range(x.ndim))
        axes[d0], axes[d1] = d1, d0
        return b.transpose(out, tuple(axes))

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(Rot90, grad, k=-self.k, dims=self.dims),)


class Diagonal(Node):
    """DiagonalBackward0: a view of the diagonal ``offset`` of dims ``d1``, ``d2`` (a new last
    dim); writes through it land in the input."""

    node_name = "DiagonalBackward0"
    is_view = True
    raw_ok = True

    def __init__(self, offset: int, d1: int, d2: int) -> None:
        self.offset = offset
        self.d1 = d1
        self.d2 = d2

    def forward(self, x: Any) -> Any:
        self.shape = x.shape
        return self.backend.diagonal(x, self.offset, self.d1, self.d2)

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(DiagonalScatter, grad, shape=self.shape, offset=self.offset,
                         d1=self.d1, d2=self.d2),)


class DiagonalCopy(Diagonal):
    """``diag`` of a matrix: the diagonal as a new C-contiguous tensor
    (``DiagonalBackward0_copy``, PyTorch's name there)."""

    node_name = "DiagonalBackward0_copy"
    is_view = False

    def forward(self, x: Any) -> Any:
        return self.backend.copy(super().forward(x))


class DiagonalScatter(Node):
    """Zeros of ``shape`` with ``g`` on the diagonal (``Diagonal``'s backward); backward reads
    the diagonal again."""

    node_name = "DiagonalBackwardBackward0"
    raw_ok = True

    def __init__(self, shape: tuple[int, ...], offset: int, d1: int, d2: int) -> None:
        self.shape = shape
        self.offset = offset
        self.d1 = d1
        self.d2 = d2

    def forward(self, g: Any) -> Any:
        out = self.backend.zeros(self.shape, g.dtype)
        self.backend.diagonal(out, self.offset, self.d1, self.d2)[...] = g
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(DiagonalCopy, grad, offset=self.offset, d1=self.d1, d2=self.d2),)


class DiagEmbed(Node):
    """DiagEmbedBackward0: the last dim of ``x`` on the diagonal ``offset`` of new dims ``d1``,
    ``d2`` of a zero tensor; the gradient is that diagonal of ``grad``."""

    node_name = "DiagEmbedBackward0"
    raw_ok = True

    def __init__(self, offset: int, d1: int, d2: int) -> None:
        self.offset = offset
        self.d1 = d1
        self.d2 = d2

    def forward(self, x: Any) -> Any:
        return self.backend.diag_embed(x, self.offset, self.d1, self.d2)

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(DiagonalCopy, grad, offset=self.offset, d1=self.d1, d2=self.d2),)


class Unfold(Node):
    """UnfoldBackward0: a view of the windows of ``size`` every ``step`` along ``dim``."""

    node_name = "UnfoldBackward0"
    is_view = True
    raw_ok = True

    def __init__(self, dim: int, size: int, step: int) -> None:
        self.dim = dim
        self.size = size
        self.step = step

    def forward(self, x: Any) -> Any:
        self.shape = x.shape
        return self.backend.unfold(x, self.dim, self.size, self.step)

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(UnfoldSum, grad, shape=self.shape, dim=self.dim, size=self.size,
                         step=self.step),)


class UnfoldSum(Node):
    """Zeros of ``shape`` with the windows' gradients added in (``Unfold``'s backward)."""

    node_name = "UnfoldBackwardBackward0"
    raw_ok = True

    def __init__(self, shape: tuple[int, ...], dim: int, size: int, step: int) -> None:
        self.shape = shape
        self.dim = dim
        self.size = size
        self.step = step

    def forward(self, g: Any) -> Any:
        return self.backend.unfold_backward(g, self.shape, self.dim, self.size, self.step)

    def backward(self, grad: Any) -> tuple[Any]:
        # NOTE: the windows are a view of ``grad``; a copy keeps it apart from later writes.
        return (self.run(Unfold, grad, dim=self.dim, size=self.size, step=self.step) * 1,)


class AsStrided(Node):
    """AsStridedBackward0: the view of the input's memory with ``size``, element ``stride``s,
    starting ``offset`` elements from the input's first element (may be negative: PyTorch's
    offsets count from the storage's start). ``in_strides``: the input's strides when the view
    was made.

    NOTE: an array in another layout (a gradient replayed through the view chain) is first laid
    out in the input's geometry (a copy, as PyTorch's CopySlices copies the gradient into the
    base's strides); memory outside the input reads as 0 there.
    """

    node_name = "AsStridedBackward0"
    is_view = True

    def __init__(self, size: tuple[int, ...], stride: tuple[int, ...], offset: int,
                 in_strides: tuple[int, ...]) -> None:
        self.size = size
        self.stride = stride
        self.offset = offset
        self.in_strides = in_strides

    def forward(self, x: Any) -> Any:
        b = self.backend
        self.in_shape = x.shape
        out = None
        if not x.size or all(n == 1 or s // x.itemsize == t
                             for n, s, t in zip(x.shape, x.strides, self.in_strides)):
            out = b.strided(x, self.size, self.stride, self.offset)
        if out is None:
            self.is_view = False
            src, dst, n = self._geometry()
            out = b.strided_move(x, src, dst, n, None, None)
        return out

    def _geometry(self) -> tuple[tuple[Any, ...], tuple[Any, ...], int]:
        """The input's and the view's geometries (shape, strides, offset) in one storage that
        holds both, and its size."""
        lo = min(0, self.offset)
        src = (self.in_shape, self.in_strides, -lo)
        dst = (self.size, self.stride, self.offset - lo)
        return src, dst, max(_extent(*src), _extent(*dst))

    def backward(self, grad: Any) -> tuple[Any]:
        src, dst, n = self._geometry()
        # NOTE: input elements sharing memory share its gradient equally, as in PyTorch.
        counts = self.backend.strided_counts(src, n, grad._data.dtype)
        post = counts if bool((counts > 1).any()) else None
        return (StridedMove.apply(grad, src=dst, dst=src, storage=n, pre=None, post=post),)


class StridedMove(Node):
    """``x`` of geometry ``src`` added into a zero storage of ``storage`` elements and read back
    with geometry ``dst`` (``as_strided``'s backward), ``x`` divided by ``pre`` first and the
    result by ``post`` (arrays or None). Its adjoint is the move back."""

    node_name = "AsStridedBackwardBackward0"

    def __init__(self, src: tuple[Any, ...], dst: tuple[Any, ...], storage: int, pre: Any,
                 post: Any) -> None:
        self.src = src
        self.dst = dst
        self.storage = storage
        self.pre = pre
        self.post = post

    def forward(self, x: Any) -> Any:
        return self.backend.strided_move(x, self.src, self.dst, self.storage, self.pre,
                                         self.post)

    def backward(self, grad: Any) -> tuple[Any]:
        return (StridedMove.apply(grad, src=self.dst, dst=self.src, storage=self.storage,
                                  pre=self.post, post=self.pre),)


def _extent(shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> int:
    """The storage size a geometry needs (0 without elements)."""
    if not all(shape):
        return 0
    return offset + 1 + sum((n - 1) * s for n, s in zip(shape, strides))


class BlockDiag(Node):
    """BlockDiagBackward0: the inputs (as matrices: 0-d is 1x1, 1-d a row) on the diagonal of
    a zero matrix of ``dtype``; each gradient is its block, in its input's dtype."""

    node_name = "BlockDiagBackward0"

    def __init__(self, dtype: dtypes.dtype) -> None:
        self.dtype = dtype

    def forward(self, *xs: Any) -> Any:
        self.shapes = [x.shape for x in xs]
        self.dtypes = [x.dtype for x in xs]
        mats = [self.backend.reshape(x, _as_matrix(x.shape)) for x in xs]
        return self.backend.block_diag(mats, self.dtype.name)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        out: list[Any] = []
        r = c = 0
        for i, (shape, dt) in enumerate(zip(self.shapes, self.dtypes)):
            rows, cols = _as_matrix(shape)
            if self.needs_input_grad[i]:
                g = grad[r:r + rows, c:c + cols].reshape(shape)
                out.append(g if g.dtype.name == str(dt) else g.to(dtypes.from_name(str(dt))))
            else:
                out.append(None)
            r += rows
            c += cols
        return tuple(out)


def _as_matrix(shape: tuple[int, ...]) -> tuple[int, int]:
    """The block a ``block_diag`` input of ``shape`` makes: 0-d is 1x1, 1-d a row."""
    if len(shape) == 2:
        return shape[0], shape[1]
    return 1, shape[0] if shape else 1
