"""Product ops: fused matrix products (``baddbmm``, ``addbmm``, ``addmv``, ``addr``), ``vdot``,
``cross``, ``trace``, and the diagonal of two dims (einsum's repeated subscripts, ``corrcoef``)
with its adjoint. Forward on backend arrays, backward with tensor ops (double backward works).

The fused products take ``beta`` and ``alpha`` as PyTorch does: ``beta == 0`` ignores the added
input entirely (nan and inf in it too), ``alpha == 1``/``beta == 1`` multiply nothing."""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .complex import conj
from .util import c_order, reduce_grad


def _scaled(g: Any, s: Any) -> Any:
    return g if s == 1 else g * conj(s)  # NOTE: complex factors enter gradients conjugated


class _Fused(Node):
    """``beta * c + alpha * product``, ``c`` broadcast to the product's shape."""

    def __init__(self, beta: Any = 1, alpha: Any = 1) -> None:
        self.beta = beta
        self.alpha = alpha

    def combine(self, c: Any, prod: Any) -> Any:
        b = self.backend
        self.c_shape = c.shape
        if self.alpha != 1:
            prod = b.multiply(prod, self.alpha).astype(prod.dtype, copy=False)
        if self.beta == 0:
            return c_order(b, prod)
        out = b.add(prod, c if self.beta == 1 else b.multiply(c, self.beta))
        return c_order(b, out.astype(prod.dtype, copy=False))

    def grad_c(self, grad: Any) -> Any:
        if not self.needs_input_grad[0]:
            return None
        return reduce_grad(_scaled(grad, self.beta), self.c_shape)


class Baddbmm(_Fused):
    """``beta * c + alpha * (x @ y)`` for 3-D ``x``, ``y`` (BaddbmmBackward0)."""

    node_name = "BaddbmmBackward0"

    def forward(self, c: Any, x: Any, y: Any) -> Any:
        need = self.needs_input_grad
        if need:
            self.save_for_backward(x if need[2] else None, y if need[1] else None)
        return self.combine(c, self.backend.matmul(x, y))

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        x, y = map(conj, self.saved_tensors)
        gx = _scaled(grad.bmm(y.transpose(1, 2)), self.alpha) if y is not None else None
        gy = _scaled(x.transpose(1, 2).bmm(grad), self.alpha) if x is not None else None
        return self.grad_c(grad), gx, gy


class Addbmm(_Fused):
    """``beta * c + alpha * sum_b x[b] @ y[b]`` (AddbmmBackward0): one matrix product of the
    batches laid side by side."""

    node_name = "AddbmmBackward0"

    def forward(self, c: Any, x: Any, y: Any) -> Any:
        b = self.backend
        need = self.needs_input_grad
        if need:
            self.save_for_backward(x if need[2] else None, y if need[1] else None)
        batch, n, k = x.shape
        m = y.shape[2]
        rows = b.reshape(b.transpose(x, (1, 0, 2)), (n, batch * k))
        return self.combine(c, b.matmul(rows, b.reshape(y, (batch * k, m))))

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        x, y = map(conj, self.saved_tensors)
        gx = gy = None
        if y is not None:
            g = grad.unsqueeze(0).expand(y.shape[0], grad.shape[0], grad.shape[1])
            gx = _scaled(g.bmm(y.transpose(1, 2)), self.alpha)
        if x is not None:
            g = grad.unsqueeze(0).expand(x.shape[0], grad.shape[0], grad.shape[1])
            gy = _scaled(x.transpose(1, 2).bmm(g), self.alpha)
        return self.grad_c(grad), gx, gy


class Addmv(_Fused):
    """``beta * c + alpha * (m @ v)`` (AddmvBackward0)."""

    node_name = "AddmvBackward0"

    def forward(self, c: Any, m: Any, v: Any) -> Any:
        need = self.needs_input_grad
        if need:
            self.save_for_backward(m if need[2] else None, v if need[1] else None)
        return self.combine(c, self.backend.matmul(m, v))

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        m, v = map(conj, self.saved_tensors)
        gm = _scaled(grad.unsqueeze(1) * v.unsqueeze(0), self.alpha) if v is not None else None
        gv = _scaled(m.t().mv(grad), self.alpha) if m is not None else None
        return self.grad_c(grad), gm, gv


class Addr(_Fused):
    """``beta * c + alpha * outer(u, v)`` (AddrBackward0); for bool, ``(beta and c) or (alpha
    and u and v)``, as PyTorch's."""

    node_name = "AddrBackward0"

    def forward(self, c: Any, u: Any, v: Any) -> Any:
        b = self.backend
        need = self.needs_input_grad
        if need:
            self.save_for_backward(u if need[2] else None, v if need[1] else None)
        outer = b.multiply(b.expand_dims(u, 1), b.expand_dims(v, 0))
        if u.dtype == "bool":
            self.c_shape = c.shape
            out = outer if self.alpha else b.zeros(outer.shape, "bool")
            if self.beta:
                out = b.logical_or(out, c)
            return c_order(b, b.broadcast_to(out, outer.shape))
        return self.combine(c, outer)

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        u, v = map(conj, self.saved_tensors)
        gu = _scaled(grad.mv(v), self.alpha) if v is not None else None
        gv = _scaled(grad.t().mv(u), self.alpha) if u is not None else None
        return self.grad_c(grad), gu, gv


class Vdot(Node):
    """``sum(x * y)`` of two 1-D tensors (VdotBackward0; real dtypes, so no conjugate)."""

    node_name = "VdotBackward0"

    def forward(self, x: Any, y: Any) -> Any:
        need = self.needs_input_grad
        if need:
            self.save_for_backward(y if need[0] else None, x if need[1] else None)
        return self.backend.asarray(self.backend.dot(x, y))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        y, x = map(conj, self.saved_tensors)
        return (grad * y if y is not None else None, grad * x if x is not None else None)


class Cross(Node):
    """The cross product along ``dim`` (length 3), inputs broadcast (LinalgCrossBackward0)."""

    node_name = "LinalgCrossBackward0"

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def forward(self, x: Any, y: Any) -> Any:
        b = self.backend
        self.shapes = (x.shape, y.shape)
        need = self.needs_input_grad
        if need:
            self.save_for_backward(x if need[1] else None, y if need[0] else None)
        return c_order(b, b.cross3(x, y, self.dim))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        gx = reduce_grad(Cross.apply(y, grad, dim=self.dim), self.shapes[0]) \
            if y is not None else None
        gy = reduce_grad(Cross.apply(grad, x, dim=self.dim), self.shapes[1]) \
            if x is not None else None
        return gx, gy


class Trace(Node):
    """The sum of a matrix's main diagonal (TraceBackward0); integers sum to int64."""

    node_name = "TraceBackward0"

    def forward(self, x: Any) -> Any:
        b = self.backend
        self.shape = x.shape
        dtype = x.dtype if x.dtype.kind in "fc" else "int64"
        return b.asarray(b.sum(b.diagonal_of(x, 0, 1), axis=None, dtype=dtype))

    def backward(self, grad: Any) -> tuple[Any]:
        n, m = self.shape
        eye = self.wrap(self.backend.eye(n, m, "bool"))
        # NOTE: as PyTorch's: the gradient is placed on the diagonal only (an inf or nan
        # gradient leaves the other elements 0).
        return (grad.expand(n, m).where(eye, 0.0),)


class Diagonal(Node):
    """The diagonal of dims ``dim1 < dim2``, put where ``dim1`` was (``dim2`` removed): a copy
    (DiagonalBackward0)."""

    node_name = "DiagonalBackward0"

    def __init__(self, dim1: int, dim2: int) -> None:
        self.dim1 = dim1
        self.dim2 = dim2

    def forward(self, x: Any) -> Any:
        b = self.backend
        self.shape = x.shape
        return c_order(b, b.moveaxis(b.diagonal_of(x, self.dim1, self.dim2), -1, self.dim1))

    def backward(self, grad: Any) -> tuple[Any]:
        return (DiagonalEmbed.apply(grad, dim1=self.dim1, dim2=self.dim2, shape=self.shape),)


class DiagonalEmbed(Node):
    """Zeros of ``shape`` with ``g`` on the diagonal of dims ``dim1``, ``dim2`` (``g`` holds it
    at ``dim1``, as ``Diagonal`` returns it): Diagonal's adjoint."""

    node_name = "DiagonalBackwardBackward0"

    def __init__(self, dim1: int, dim2: int, shape: tuple[int, ...]) -> None:
        self.dim1 = dim1
        self.dim2 = dim2
        self.shape = shape

    def forward(self, g: Any) -> Any:
        b = self.backend
        out = b.zeros(self.shape, g.dtype)
        b.set_diagonal(out, b.moveaxis(g, self.dim1, -1), self.dim1, self.dim2)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        return (Diagonal.apply(grad, dim1=self.dim1, dim2=self.dim2),)
