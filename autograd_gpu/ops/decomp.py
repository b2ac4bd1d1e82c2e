"""Determinants, inverses, solves and the Cholesky factorization (``torch.linalg``), forward on
backend arrays (LAPACK / cuSOLVER through ``backend``), backward with PyTorch's formulas written
with tensor ops, so that they differentiate again. ``decomp_spectral`` holds QR, SVD, eigh and
the matrix functions built on them.

Every op takes batches of matrices ``(..., m, n)``. Gradients of the factorizations follow
PyTorch's ``FunctionsManual`` (the formulas are facts of calculus; the code is ours).
"""

from __future__ import annotations

from typing import Any

from ..autograd import node as node_mod
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import Node
from .util import reduce_grad


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a matrix that is singular, not positive-definite, or that
    an algorithm could not handle (a RuntimeError, as PyTorch's)."""


# ---- tensor helpers for the backward formulas --------------------------------------------------

def const(t: Any, array: Any) -> Any:
    """``array`` as a constant tensor on ``t``'s device."""
    return node_mod.Tensor_._make(array, t._device)


def eye_mask(t: Any, n: int, m: int | None = None) -> Any:
    """A bool ``(n, m)`` identity on ``t``'s device."""
    return const(t, t.backend.eye(n, n if m is None else m, "bool"))


def tri_mask(t: Any, upper: bool, k: int = 0) -> Any:
    """The bool mask of ``t``'s upper (col - row >= k) or lower (col - row <= k) triangle."""
    b = t.backend
    m, n = t.shape[-2:]
    return const(t, b.tri_mask(m, n, upper, k))


def triangle(t: Any, upper: bool, k: int = 0) -> Any:
    """``triu(t, k)`` / ``tril(t, k)``, NaN-safe (the other triangle is 0 whatever it holds)."""
    return t.where(tri_mask(t, upper, k), 0.0)


def diag_embed(v: Any) -> Any:
    """Square matrices with ``v`` (..., n) on their diagonals."""
    n = v.shape[-1]
    return v.unsqueeze(-1).expand(tuple(v.shape) + (n,)).where(eye_mask(v, n), 0.0)


def diagonal(x: Any) -> Any:
    """The diagonals (..., n) of square matrices ``x``."""
    return x.where(eye_mask(x, x.shape[-1]), 0.0).sum(-1)


def eye_like(t: Any, n: int) -> Any:
    return const(t, t.backend.eye(n, n, str(t._data.dtype)))


def batch_prefix(bad: Any, batched: bool) -> str:
    """``"(Batch element i): "`` for the first failing matrix of a batch (``bad``: a bool or
    int array over the batch dims), as PyTorch's messages start; empty for one matrix."""
    if not batched:
        return ""
    flat = bad.reshape(-1)
    i = int(flat.nonzero()[0][0])
    return f"(Batch element {i}): "


def first_info(info: Any) -> int:
    flat = info.reshape(-1)
    return int(flat[flat.nonzero()[0][0]])


# ---- determinants ------------------------------------------------------------------------------

class Det(Node):
    """``linalg.det`` (LinalgDetBackward0)."""

    node_name = "LinalgDetBackward0"

    def forward(self, a: Any) -> Any:
        out = self.backend.det(a)
        self.save_for_backward(a, out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        a, det = self.saved_tensors
        return (det_backward(grad, a, det),)


def det_backward(grad: Any, a: Any, det: Any) -> Any:
    """PyTorch's gradient of ``det``: ``grad * conj(det) * A^-H`` (the cofactor matrix).

    NOTE: as PyTorch's, the first derivative of an exactly singular matrix (det == 0, LAPACK met
    a zero pivot) is 0 (PyTorch solves with its LU perturbed there, against a zero right-hand
    side). Under create_graph, real matrices with ``|det| < 100 eps`` take the SVD form of the
    cofactor matrix instead (right for singular matrices, and differentiable), the others the
    solve; complex ones always the solve (our SVD is real-only).
    """
    n = a.shape[-1]
    if a.numel() == 0:
        return a * 0.0
    d = diag_embed((grad * det.conj()).unsqueeze(-1).expand(tuple(det.shape) + (n,)))
    if not is_grad_enabled() or a.dtype.is_complex:
        singular = (det == 0).unsqueeze(-1).unsqueeze(-1)
        safe = eye_like(a, n).expand(a.shape).where(singular, a)
        return solve(safe.mH, d).where(~singular, 0.0)
    eps = 2.220446049250313e-16 if a.dtype.itemsize == 8 else 1.1920928955078125e-07
    near = (det.abs() < 100 * eps)._data
    return _masked_map(near, lambda x, dd, g: _cofactor_svd(x, g),
                       lambda x, dd, g: solve(x.mT, dd), a, d, grad)


def _cofactor_svd(a: Any, grad: Any) -> Any:
    """``grad`` times the cofactor matrix of ``a`` from its SVD: ``U diag(prod_{j!=i} s_j) Vh``
    times ``det(U) det(Vh)`` (right for singular matrices too)."""
    from .decomp_spectral import svd_full

    u, s, vh = svd_full(a)
    alpha = Det.apply(u) * Det.apply(vh) * grad
    n = s.shape[-1]
    rows = s.unsqueeze(-2).expand(tuple(s.shape[:-1]) + (n, n))
    others = rows.where(~eye_mask(s, n), 1.0).prod(-1)  # NOTE: s_i replaced by 1 in row i
    return (u * (alpha.unsqueeze(-1) * others).unsqueeze(-2)) @ vh


def _masked_map(mask: Any, on: Any, off: Any, a: Any, *rest: Any) -> Any:
    """``on(...)`` on the matrices of ``a`` (and of ``rest``, same batch dims) where the batch
    mask ``mask`` (an array) holds, ``off(...)`` elsewhere, put back in batch order.

    NOTE: each function sees only its own matrices (as PyTorch's masked_fmap), so that one
    that is NaN where it does not apply (the SVD form at repeated singular values) leaves the
    others' gradients alone."""
    n_true = int(mask.sum())
    if n_true == 0:
        return off(a, *rest)
    if n_true == mask.size:
        return on(a, *rest)
    batch = tuple(a.shape[:-2])
    idx_on, idx_off, inverse = a.backend.split_order(mask.reshape(-1))

    def take(t: Any, idx: Any) -> Any:
        flat = t.reshape((-1,) + tuple(t.shape[len(batch):]))
        return flat.index_select(0, const(t, idx))

    part_on = on(*(take(t, idx_on) for t in (a, *rest)))
    part_off = off(*(take(t, idx_off) for t in (a, *rest)))
    from ..functions import cat  # NOTE: late: functions/ builds on ops/

    out = cat([part_on, part_off]).index_select(0, const(a, inverse))
    return out.reshape(batch + tuple(out.shape[1:]))


class Slogdet(Node):
    """``linalg.slogdet`` (LinalgSlogdetBackward0): outputs ``(sign, logabsdet)``."""

    node_name = "LinalgSlogdetBackward0"

    def forward(self, a: Any) -> tuple[Any, Any]:
        sign, logabs = self.backend.slogdet(a)
        self.save_for_backward(a, sign)
        return sign, logabs

    def backward(self, grad_sign: Any, grad_logabs: Any = None) -> tuple[Any]:
        # NOTE: the sign of a real determinant is piecewise constant: its gradient is ignored;
        # a complex one's moves on the unit circle: ``g = g_logabs - i imag(conj(g_sign) sign)``
        # (PyTorch's slogdet_backward), then ``g A^-H``.
        a, sign = self.saved_tensors
        g = grad_logabs
        if a.dtype.is_complex:
            if grad_sign is not None:
                turn = (grad_sign.conj() * sign).imag * -1j
                g = turn if g is None else g + turn
            elif g is not None:
                g = g.to(a.dtype)
        if g is None:
            return (None,)
        n = a.shape[-1]
        if a.numel() == 0:
            return (a * 0.0,)
        d = diag_embed(g.unsqueeze(-1).expand(tuple(g.shape) + (n,)))
        # NOTE: a singular matrix gives NaN here (PyTorch's LU solve gives inf/NaN); under
        # create_graph PyTorch calls linalg.solve, which refuses it, and so do we.
        return (solve(a.mH, d, check=is_grad_enabled()),)


# ---- inverses and solves -----------------------------------------------------------------------

class InvEx(Node):
    """``linalg.inv_ex`` (LinalgInvExBackward0): outputs ``(inverse, info)``; with ``check``
    a singular matrix raises PyTorch's LinAlgError (``linalg.inv``)."""

    node_name = "LinalgInvExBackward0"

    def __init__(self, check: bool = True) -> None:
        self.check = check

    def forward(self, a: Any) -> tuple[Any, Any]:
        out, info = self.backend.inv_ex(a)
        out = self.backend.f_order(out)
        if self.check and info.size and bool((info != 0).any()):
            raise LinAlgError(
                f"linalg.inv: {batch_prefix(info != 0, a.ndim > 2)}The diagonal element "
                f"{first_info(info)} is zero, the inversion could not be completed because the "
                "input matrix is singular.")
        self.save_for_backward(out)
        return out, info

    def backward(self, grad: Any, grad_info: Any = None) -> tuple[Any]:
        (inv,) = self.saved_tensors
        if grad is None:
            return (None,)
        inv_h = inv.mH
        return (-(inv_h @ grad @ inv_h),)


class SolveEx(Node):
    """``linalg.solve_ex`` (LinalgSolveExBackward0): ``X`` with ``A X = B`` (``left``) or
    ``X A = B``, and ``info``. ``vector``: ``B`` is a (batch of) vector(s). Batch dims
    broadcast; ``check`` raises PyTorch's LinAlgError for a singular ``A``."""

    node_name = "LinalgSolveExBackward0"

    def __init__(self, left: bool = True, vector: bool = False, check: bool = True) -> None:
        self.left = left
        self.vector = vector
        self.check = check

    def forward(self, a: Any, b: Any) -> tuple[Any, Any]:
        be = self.backend
        self.shapes = (a.shape, b.shape)
        rhs = b[..., None] if self.vector else b
        if self.left:
            x, info = be.solve_ex(a, rhs)
        else:
            x, info = be.solve_ex(be.mT(a), be.mT(rhs))
            x = be.ascontiguousarray(be.mT(x))
        if self.vector:
            x = x[..., 0]
        if self.left:
            x = be.f_order(x)
        if self.check and info.size and bool((info != 0).any()):
            raise LinAlgError(f"torch.linalg.solve: {batch_prefix(info != 0, info.ndim > 0)}"
                              "The solver failed because the input matrix is singular.")
        self.save_for_backward(a, x)
        return x, info

    def backward(self, grad: Any, grad_info: Any = None) -> tuple[Any, Any]:
        a, x = self.saved_tensors
        if grad is None:
            return None, None
        need = self.needs_input_grad
        g_b = solve(a.mH, grad, left=self.left, vector=self.vector, check=False)
        g_a = None
        if need[0]:
            gb_m = g_b.unsqueeze(-1) if self.vector else g_b
            x_m = x.unsqueeze(-1) if self.vector else x
            g_a = reduce_grad(-(gb_m @ x_m.mH) if self.left else -(x_m.mH @ gb_m),
                              tuple(self.shapes[0]))
        return g_a, reduce_grad(g_b, tuple(self.shapes[1])) if need[1] else None


def solve(a: Any, b: Any, left: bool = True, vector: bool = False, check: bool = True) -> Any:
    """``A^-1 B`` (or ``B A^-1``) as a differentiable op, for backward formulas."""
    return SolveEx.apply(a, b, left=left, vector=vector, check=check)[0]


class SolveTriangular(Node):
    """``linalg.solve_triangular`` (LinalgSolveTriangularBackward0): ``X`` with ``T X = B``
    (``left``) or ``X T = B``, ``T`` the upper or lower triangle of ``A`` (unit diagonal when
    ``unitriangular``). Batch dims broadcast."""

    node_name = "LinalgSolveTriangularBackward0"

    def __init__(self, upper: bool, left: bool = True, unitriangular: bool = False) -> None:
        self.upper = upper
        self.left = left
        self.unitriangular = unitriangular

    def forward(self, a: Any, b: Any) -> Any:
        be = self.backend
        self.shapes = (a.shape, b.shape)
        if self.left:
            x = be.solve_triangular(a, b, self.upper, self.unitriangular)
        else:
            x = be.mT(be.solve_triangular(be.mT(a), be.mT(b), not self.upper,
                                          self.unitriangular))
        x = be.f_order(x)
        self.save_for_backward(a, x)
        return x

    def backward(self, grad: Any) -> tuple[Any, Any]:
        a, x = self.saved_tensors
        need = self.needs_input_grad
        g_b = SolveTriangular.apply(a.mH, grad, upper=not self.upper, left=self.left,
                                    unitriangular=self.unitriangular)
        g_a = None
        if need[0]:
            g_a = -(g_b @ x.mH) if self.left else -(x.mH @ g_b)
            g_a = triangle(g_a, self.upper, (1 if self.upper else -1) if self.unitriangular else 0)
            g_a = reduce_grad(g_a, tuple(self.shapes[0]))
        return g_a, reduce_grad(g_b, tuple(self.shapes[1])) if need[1] else None


def solve_triangular(a: Any, b: Any, upper: bool, left: bool = True) -> Any:
    return SolveTriangular.apply(a, b, upper=upper, left=left)


class TriangularSolve(Node):
    """The deprecated ``torch.triangular_solve(b, A)`` (TriangularSolveBackward0): outputs
    ``(solution, cloned_coefficient)``; ``transpose`` solves with ``A^T``."""

    node_name = "TriangularSolveBackward0"

    def __init__(self, upper: bool, transpose: bool, unitriangular: bool) -> None:
        self.upper = upper
        self.transpose = transpose
        self.unitriangular = unitriangular

    def forward(self, b: Any, a: Any) -> tuple[Any, Any]:
        be = self.backend
        self.shapes = (b.shape, a.shape)
        t = be.mT(a) if self.transpose else a
        x = be.f_order(be.solve_triangular(t, b, self.upper != self.transpose,
                                           self.unitriangular))
        self.save_for_backward(a, x)
        return x, be.f_order(be.copy(be.broadcast_to(a, x.shape[:-2] + a.shape[-2:])))

    def backward(self, grad: Any, grad_coef: Any = None) -> tuple[Any, Any]:
        a, x = self.saved_tensors
        need = self.needs_input_grad
        g_b = g_a = None
        if grad is not None:
            t = a if self.transpose else a.mT
            g_b = SolveTriangular.apply(t, grad, upper=self.upper == self.transpose,
                                        unitriangular=self.unitriangular)
            if need[1]:
                g_a = -(x @ g_b.mT) if self.transpose else -(g_b @ x.mT)
                k = (1 if self.upper else -1) if self.unitriangular else 0
                g_a = triangle(g_a, self.upper, k)
        if grad_coef is not None and need[1]:
            g_a = grad_coef if g_a is None else g_a + grad_coef
        return (reduce_grad(g_b, tuple(self.shapes[0])) if need[0] and g_b is not None else None,
                reduce_grad(g_a, tuple(self.shapes[1])) if g_a is not None else None)


# ---- Cholesky ----------------------------------------------------------------------------------

class CholeskyEx(Node):
    """``linalg.cholesky_ex`` (LinalgCholeskyExBackward0): outputs ``(L, info)`` (``L^H`` when
    ``upper``); ``check`` raises PyTorch's LinAlgError for a matrix that is not
    positive-definite. ``fn``: the name its message starts with; ``single``: one output
    (``torch.cholesky``, CholeskyBackward0)."""

    node_name = "LinalgCholeskyExBackward0"

    def __init__(self, upper: bool = False, check: bool = True, fn: str = "linalg.cholesky",
                 single: bool = False) -> None:
        self.upper = upper
        self.check = check
        self.fn = fn
        self.single = single
        if single:
            self.node_name = "CholeskyBackward0"

    def forward(self, a: Any) -> Any:
        be = self.backend
        # NOTE: upper=True reads A's upper triangle, as LAPACK's potrf with uplo 'U'
        low, info = be.cholesky_ex(be.mT(a) if self.upper else a)
        if self.check and info.size and bool((info != 0).any()):
            raise LinAlgError(
                f"{self.fn}: {batch_prefix(info != 0, a.ndim > 2)}The factorization could not be "
                "completed because the input is not positive-definite (the leading minor of "
                f"order {first_info(info)} is not positive-definite).")
        out = be.f_order(be.mT(low) if self.upper else low)
        self.save_for_backward(out)
        return out if self.single else (out, info)

    def backward(self, grad: Any, grad_info: Any = None) -> tuple[Any]:
        (factor,) = self.saved_tensors
        if grad is None:
            return (None,)
        return (cholesky_backward(grad, factor, self.upper),)


def cholesky_backward(grad: Any, factor: Any, upper: bool) -> Any:
    """PyTorch's Cholesky gradient (Murray 2016): with ``Phi = tril(L^H gL)`` and its diagonal
    halved, ``gA = L^-H sym(Phi) L^-1``, ``sym(X) = (X + X^H) / 2``: Hermitian."""
    low, g = (factor.mH, grad.mH) if upper else (factor, grad)
    x = low.mH @ g
    phi = triangle(x, upper=False) - 0.5 * diag_embed(x.diagonal(0, -2, -1))
    phi = 0.5 * (phi + phi.mH)
    out = solve_triangular(low.mH, phi, upper=True)
    return solve_triangular(low, out, upper=False, left=False)


class CholeskySolve(Node):
    """``torch.cholesky_solve(B, L)`` (CholeskySolveBackward0): ``X`` with ``L L^H X = B``
    (``U^H U`` when ``upper``). Batch dims broadcast."""

    node_name = "CholeskySolveBackward0"

    def __init__(self, upper: bool) -> None:
        self.upper = upper

    def forward(self, b: Any, factor: Any) -> Any:
        be = self.backend
        self.shapes = (b.shape, factor.shape)
        low = be.mT(factor) if self.upper else factor
        y = be.solve_triangular(low, b, False, False)
        x = be.f_order(be.solve_triangular(be.mT(low), y, True, False))
        self.save_for_backward(factor, x)
        return x

    def backward(self, grad: Any) -> tuple[Any, Any]:
        factor, x = self.saved_tensors
        need = self.needs_input_grad
        g_b = CholeskySolve.apply(grad, factor, upper=self.upper)
        g_f = None
        if need[1]:
            common = g_b @ x.mT
            common = common + common.mT
            g_f = -(factor @ common) if self.upper else -(common @ factor)
            g_f = reduce_grad(g_f, tuple(self.shapes[1]))
        return reduce_grad(g_b, tuple(self.shapes[0])) if need[0] else None, g_f


class CholeskyInverse(Node):
    """``torch.cholesky_inverse(L)`` (CholeskyInverseBackward0): ``(L L^H)^-1`` (``(U^H U)^-1``
    when ``upper``)."""

    node_name = "CholeskyInverseBackward0"

    def __init__(self, upper: bool) -> None:
        self.upper = upper

    def forward(self, factor: Any) -> Any:
        be = self.backend
        n = factor.shape[-1]
        eye = be.broadcast_to(be.eye(n, n, str(factor.dtype)), factor.shape)
        low = be.mT(factor) if self.upper else factor
        y = be.solve_triangular(low, eye, False, False)
        out = be.f_order(be.solve_triangular(be.mT(low), y, True, False))
        self.save_for_backward(factor, out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        factor, inv = self.saved_tensors
        common = inv @ (grad + grad.mT) @ inv
        return (-(factor @ common) if self.upper else -(common @ factor),)
