"""Matrix products: mm, mv, dot, bmm, addmm, and batched broadcasting matmul."""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .complex import conj
from .util import reduce_grad


def _mat_error(x: Any, y: Any) -> RuntimeError:
    return RuntimeError(
        f"mat1 and mat2 shapes cannot be multiplied ({x.shape[0]}x{x.shape[1]} and "
        f"{y.shape[0]}x{y.shape[1]})"
    )


class Mm(Node):
    """``x @ y`` for 2-D ``x`` and ``y`` (MmBackward0)."""

    node_name = "MmBackward0"
    raw_ok = True

    def forward(self, x: Any, y: Any) -> Any:
        if x.shape[1] != y.shape[0]:
            raise _mat_error(x, y)
        need = self.needs_input_grad
        if need:
            self.save_for_backward(x if need[1] else None, y if need[0] else None)
            self.col_major = (_col_major(x), _col_major(y))
        return self.backend.matmul(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        # NOTE: operators only (@, .T), so the same lines run on arrays (raw path) and Tensors.
        return _mm_grads(grad, x, y, self.col_major)


class Addmm(Node):
    """``beta * c + alpha * (x @ y)`` (AddmmBackward0; ``linear`` on 2-D input)."""

    node_name = "AddmmBackward0"
    raw_ok = True

    def __init__(self, beta: Any = 1, alpha: Any = 1) -> None:
        self.beta = beta
        self.alpha = alpha

    def forward(self, c: Any, x: Any, y: Any) -> Any:
        if x.shape[1] != y.shape[0]:
            raise _mat_error(x, y)
        b = self.backend
        need = self.needs_input_grad
        if need:
            self.save_for_backward(x if need[2] else None, y if need[1] else None)
            self.col_major = (_col_major(x), _col_major(y))
        self.c_shape = c.shape
        out = b.matmul(x, y)
        if self.alpha != 1:
            out *= self.alpha
        if self.beta == 0:
            # NOTE: beta == 0 ignores c entirely (even NaN in c), as in PyTorch.
            return out
        out += c if self.beta == 1 else c * self.beta
        return out

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        x, y = self.saved_tensors
        need = self.needs_input_grad
        gc = None
        if need[0]:
            gc = reduce_grad(grad if self.beta == 1 else grad * self.beta, self.c_shape)
        gx, gy = _mm_grads(grad, x, y, self.col_major)
        if self.alpha != 1:
            gx = gx * self.alpha if gx is not None else None
            gy = gy * self.alpha if gy is not None else None
        return gc, gx, gy


def _col_major(a: Any) -> bool:
    """True for a column-major (transposed C-contiguous) matrix, as PyTorch tests it."""
    return bool(a.strides[0] == a.itemsize and a.strides[1] == a.shape[0] * a.itemsize)


def _mm_grads(grad: Any, x: Any, y: Any, col_major: tuple[bool, bool]) -> tuple[Any, Any]:
    """The gradients of ``x @ y`` (None where ``x`` or ``y``, the other's saved factor, is).

    NOTE: as PyTorch's mm_mat1/mat2_backward: the gradient of a column-major factor (``w.t()``
    in ``linear``) is computed column-major, so that it comes back to the leaf ``w`` in ``w``'s
    own (C) layout and ``.grad`` takes it without a copy."""
    gx = gy = None
    x, y = conj(x), conj(y)  # NOTE: complex: grad_x = grad @ y^H (PyTorch's convention)
    if y is not None:
        gx = (y @ grad.T).T if col_major[0] else grad @ y.T
    if x is not None:
        gy = (grad.T @ x).T if col_major[1] else x.T @ grad
    return gx, gy


class Mv(Node):
    node_name = "MvBackward0"

    def forward(self, x: Any, v: Any) -> Any:
        if x.shape[1] != v.shape[0]:
            raise RuntimeError(
                f"size mismatch, got input ({x.shape[0]}), mat ({x.shape[0]}x{x.shape[1]}), "
                f"vec ({v.shape[0]})"
            )
        self.save_for_backward(x, v)
        return self.backend.matmul(x, v)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, v = self.saved_tensors
        need = self.needs_input_grad
        x, v = conj(x), conj(v)
        return (grad.unsqueeze(1) * v.unsqueeze(0) if need[0] else None,
                x.t().mv(grad) if need[1] else None)


class Dot(Node):
    node_name = "DotBackward0"
    raw_ok = True

    def forward(self, x: Any, y: Any) -> Any:
        if x.shape != y.shape:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src [{y.shape[0]}] to "
                f"have the same number of elements, but got {x.shape[0]} and {y.shape[0]} elements "
                "respectively"
            )
        self.save_for_backward(x, y)
        return self.backend.asarray(self.backend.dot(x, y))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        need = self.needs_input_grad
        return (grad * conj(y) if need[0] else None, grad * conj(x) if need[1] else None)


class Bmm(Node):
    """Batched product of 3-D tensors with equal batch sizes (BmmBackward0)."""

    node_name = "BmmBackward0"

    def forward(self, x: Any, y: Any) -> Any:
        if x.shape[0] != y.shape[0] or x.shape[2] != y.shape[1]:
            raise RuntimeError(
                "Expected size for first two dimensions of batch2 tensor to be: "
                f"[{x.shape[0]}, {x.shape[2]}] but got: [{y.shape[0]}, {y.shape[1]}]."
            )
        self.save_for_backward(x, y)
        return _bmm(self.backend, x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        need = self.needs_input_grad
        x, y = conj(x), conj(y)
        return (grad.bmm(y.transpose(1, 2)) if need[0] else None,
                x.transpose(1, 2).bmm(grad) if need[1] else None)


def _bmm(b: Any, x: Any, y: Any) -> Any:
    """``x @ y`` for 3-D arrays, with two shapes that vmap makes common done in one call.

    NOTE: a ``y`` broadcast along the batch (stride 0: a weight every sample shares, as
    ``vmap(grad(f))`` lifts it) multiplies as one GEMM on the folded rows; an inner size of 1
    (per-sample outer products, the weight gradients of that case) is a broadcast multiply.
    Both give the same numbers as the batched product.
    """
    batch, n, k = x.shape
    if k == 1:
        return b.multiply(x, y)
    if batch > 1 and y.strides[0] == 0:
        return b.reshape(b.matmul(b.reshape(x, (batch * n, k)), y[0]), (batch, n, y.shape[2]))
    return b.matmul(x, y)
