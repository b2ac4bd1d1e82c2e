"""QR, SVD and symmetric eigendecompositions, and what builds on them (``pinv``, ``lstsq``,
``matrix_rank``), ``matrix_exp`` and ``linalg.cross``: forward on backend arrays, backward with
PyTorch's formulas in tensor ops (see ``ops/decomp.py``)."""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .decomp import LinAlgError, batch_prefix, diag_embed, eye_mask, solve_triangular, triangle
from .util import reduce_grad


def _check_finite(b: Any, a: Any) -> None:
    """PyTorch's LinAlgError for an SVD of a matrix holding NaN (LAPACK's gesdd fails; inf
    gives NaN results instead)."""
    if a.size == 0:
        return
    bad = b.has_nan(a)
    if bool(bad.any()):
        raise LinAlgError(f"linalg.svd: {batch_prefix(bad, a.ndim > 2)}The algorithm failed to "
                          "converge because the input matrix contained non-finite values.")


def _check_phase(fn: str, vhgv: Any) -> None:
    """PyTorch's refusal of a loss that depends on the free phase ``e^{i phi}`` of complex
    eigenvectors: ``imag(diag(V^H gV))`` not within 1e-2 of 0 (its allclose bounds)."""
    if not bool(vhgv.diagonal(0, -2, -1).imag.abs().le(1e-2).all()):
        raise RuntimeError(f"{fn}: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on "
                           "this quantity, so it is ill-defined.")


# ---- QR ----------------------------------------------------------------------------------------

class Qr(Node):
    """``linalg.qr`` (LinalgQrBackward0): outputs ``(Q, R)`` for ``mode`` 'reduced',
    'complete' or 'r' (``Q`` empty)."""

    node_name = "LinalgQrBackward0"

    def __init__(self, mode: str = "reduced") -> None:
        self.mode = mode

    def forward(self, a: Any) -> tuple[Any, Any]:
        b = self.backend
        q, r = self.backend.qr(a, self.mode)
        q, r = b.f_order(q), b.f_order(r)
        self.save_for_backward(q, r)
        return q, r

    def backward(self, grad_q: Any, grad_r: Any = None) -> tuple[Any]:
        if self.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
                "through linalg.qr.")
        q, r = self.saved_tensors
        m, n = q.shape[-2], r.shape[-1]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        if grad_q is None and grad_r is None:
            return (None,)
        if m >= n:
            return (_qr_backward_tall(grad_q, grad_r, q, r),)
        # NOTE: a wide A = [X | Y] = Q [U | V]: X = QU is a square QR, and Y = QV.
        u, v = r[..., :, :m], r[..., :, m:]
        g_u = grad_r[..., :, :m] if grad_r is not None else None
        g_y = q @ grad_r[..., :, m:] if grad_r is not None else v.new_zeros(tuple(v.shape))
        g_q = grad_q
        if grad_r is not None:
            g_v = grad_r[..., :, m:]
            extra = (q @ v) @ g_v.mH
            g_q = extra if g_q is None else g_q + extra
        from ..functions import cat  # NOTE: late: functions/ builds on ops/

        return (cat([_qr_backward_tall(g_q, g_u, q, u), g_y], -1),)


def _qr_backward_tall(grad_q: Any, grad_r: Any, q: Any, r: Any) -> Any:
    """The gradient of a QR with ``m >= n``: ``(gQ + Q copyltu(M)) R^-H``, ``M = R gR^H -
    gQ^H Q``, ``copyltu`` the Hermitian matrix with ``M``'s strict lower triangle and the real
    part of its diagonal."""
    terms = []
    if grad_r is not None:
        terms.append(r @ grad_r.mH)
    if grad_q is not None:
        terms.append(-(grad_q.mH @ q))
    m = terms[0] if len(terms) == 1 else terms[0] + terms[1]
    low = triangle(m, upper=False, k=-1)
    diag = m.diagonal(0, -2, -1)
    sym = low + low.mH + diag_embed(diag.real.to(m.dtype) if m.dtype.is_complex else diag)
    b = q @ sym
    if grad_q is not None:
        b = b + grad_q
    return solve_triangular(r.mH, b, upper=False, left=False)


# ---- SVD ---------------------------------------------------------------------------------------

class Svd(Node):
    """``linalg.svd`` (LinalgSvdBackward0): outputs ``(U, S, Vh)``, or ``S`` alone without
    ``compute_uv`` (``svdvals`` of a tensor that needs no gradient)."""

    node_name = "LinalgSvdBackward0"

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True) -> None:
        self.full_matrices = full_matrices
        self.compute_uv = compute_uv

    def forward(self, a: Any) -> Any:
        b = self.backend
        _check_finite(b, a)
        if not self.compute_uv:
            return b.svd(a, False, compute_uv=False)
        u, s, vh = b.svd(a, self.full_matrices)
        u, vh = b.f_order(u), b.f_order(vh)
        self.save_for_backward(u, s, vh)
        return u, s, vh

    def backward(self, grad_u: Any, grad_s: Any = None, grad_vh: Any = None) -> tuple[Any]:
        u, s, vh = self.saved_tensors
        if self.full_matrices:
            # NOTE: the columns past min(m, n) are arbitrary: PyTorch narrows them away.
            k = s.shape[-1]
            u, vh = u[..., :, :k], vh[..., :k, :]
            grad_u = grad_u[..., :, :k] if grad_u is not None else None
            grad_vh = grad_vh[..., :k, :] if grad_vh is not None else None
        return (svd_backward(grad_u, grad_s, grad_vh, u, s, vh),)


def svd_full(a: Any) -> tuple[Any, Any, Any]:
    """``(U, S, Vh)`` of square matrices, differentiable (for backward formulas)."""
    out: tuple[Any, Any, Any] = Svd.apply(a, full_matrices=False)
    return out


def svd_backward(grad_u: Any, grad_s: Any, grad_vh: Any, u: Any, s: Any, vh: Any) -> Any:
    """PyTorch's SVD gradient (reduced U and Vh), real or complex: with ``skew(X) = X - X^H``,
    ``gA = U [(skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS)] V^H`` (``E_ij = s_j² - s_i²``
    off the diagonal), plus the parts outside the span of U (``m > n``) or V (``m < n``); for
    complex matrices ``i imag(diag(U^H gU)) / s`` on the diagonal, and a loss that depends on
    the singular vectors' free phases refused, as PyTorch's."""
    m, n = u.shape[-2], vh.shape[-1]
    if grad_u is None and grad_vh is None:
        if grad_s is None:
            return None
        return u @ (grad_s.unsqueeze(-1) * vh) if m >= n else (u * grad_s.unsqueeze(-2)) @ vh
    k = s.shape[-1]
    s2 = s * s
    e = (s2.unsqueeze(-2) - s2.unsqueeze(-1)).where(~eye_mask(s, k), 1.0)  # e[i, j] = s_j² - s_i²
    uhgu = vhgv = None
    if grad_u is not None:
        uhgu = u.mH @ grad_u
        uhgu = uhgu - uhgu.mH
    if grad_vh is not None:
        vhgv = vh @ grad_vh.mH
        vhgv = vhgv - vhgv.mH
    complex_ = u.dtype.is_complex
    if complex_:
        im_u = uhgu.diagonal(0, -2, -1).imag if uhgu is not None else s * 0.0
        im_v = vhgv.diagonal(0, -2, -1).imag if vhgv is not None else s * 0.0
        if not bool((im_u + im_v).abs().le(1e-2 + 1e-2 * im_v.abs()).all()):
            raise RuntimeError(
                "svd_backward: The singular vectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this phase "
                "term, making it ill-defined.")
    if uhgu is not None and vhgv is not None:
        g = (uhgu * s.unsqueeze(-2) + s.unsqueeze(-1) * vhgv) / e
    elif uhgu is not None:
        g = (uhgu / e) * s.unsqueeze(-2)
    else:
        g = s.unsqueeze(-1) * (vhgv / e)
    if grad_s is not None:
        g = g + diag_embed(grad_s)
    if complex_ and uhgu is not None:
        g = g + diag_embed(im_u / (2 * s) * 1j)
    if m > n and grad_u is not None:
        g = u @ g
        gus = grad_u / s.unsqueeze(-2)
        g = g + gus - u @ (u.mH @ gus)
        return g @ vh
    if m < n and grad_vh is not None:
        g = g @ vh
        sgv = grad_vh / s.unsqueeze(-1)
        g = g + sgv - (sgv @ vh.mH) @ vh
        return u @ g
    return u @ (g @ vh) if m >= n else (u @ g) @ vh


# ---- symmetric eigendecomposition --------------------------------------------------------------

class Eigh(Node):
    """``linalg.eigh`` (LinalgEighBackward0): outputs ``(eigenvalues, eigenvectors)``, or the
    eigenvalues alone without ``compute_v``; the matrix is read from its ``uplo`` triangle."""

    node_name = "LinalgEighBackward0"

    def __init__(self, uplo: str = "L", compute_v: bool = True) -> None:
        self.uplo = uplo
        self.compute_v = compute_v

    def forward(self, a: Any) -> Any:
        if not self.compute_v:
            return self.backend.eigh(a, self.uplo, compute_v=False)
        w, v = self.backend.eigh(a, self.uplo)
        v = self.backend.f_order(v)
        self.save_for_backward(w, v)
        return w, v

    def backward(self, grad_w: Any, grad_v: Any = None) -> tuple[Any]:
        w, v = self.saved_tensors
        if grad_v is None:
            if grad_w is None:
                return (None,)
            return (v @ (grad_w.unsqueeze(-1) * v.mH),)
        n = w.shape[-1]
        eye = eye_mask(w, n)
        vhgv = v.mH @ grad_v
        if v.dtype.is_complex:
            _check_phase("linalg_eigh_backward", vhgv)
        vhgv = 0.5 * (vhgv - vhgv.mH)
        e = (w.unsqueeze(-2) - w.unsqueeze(-1)).where(~eye, 1.0)  # e[i, j] = w_j - w_i
        g = (vhgv / e).where(~eye, 0.0)
        if grad_w is not None:
            g = g + diag_embed(grad_w)
        return (v @ (g @ v.mH),)


def check_finite_eig(b: Any, a: Any) -> None:
    """PyTorch's refusal of a matrix holding inf or NaN by ``linalg.eig`` (its ``eigvals``
    does not check, and its LAPACK call then crashes: ours says ``eig``'s words)."""
    if a.size and not bool(b.xp.isfinite(a).all()):
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")


class Eig(Node):
    """``linalg.eig`` (LinalgEigBackward0): outputs ``(eigenvalues, eigenvectors)``, complex;
    ``linalg.eigvals`` takes the eigenvalues (the vectors are still computed for backward)."""

    node_name = "LinalgEigBackward0"

    def forward(self, a: Any) -> tuple[Any, Any]:
        b = self.backend
        check_finite_eig(b, a)
        w, v = b.eig(a)
        v = b.f_order(v)
        self.real_input = a.dtype.kind != "c"
        self.save_for_backward(w, v)
        return w, v

    def backward(self, grad_w: Any, grad_v: Any = None) -> tuple[Any]:
        """PyTorch's ``linalg_eig_backward``: with ``VhgV = V^H gV`` projected to keep the
        columns' unit norm (``VhgV - V^H V diag(re(diag VhgV))``), divided elementwise by
        ``conj(L_j - L_i)`` off the diagonal, ``gL`` on it, and conjugated by ``V^-H``:
        ``gA = V^-H (...) V^H``; real for a real ``A``. A loss that depends on the arbitrary
        phase of each eigenvector (``imag(diag(V^H gV)) != 0``) is refused, as PyTorch's."""
        w, v = self.saved_tensors
        if grad_w is None and grad_v is None:
            return (None,)
        from ..functions.decomp import solve  # NOTE: late: functions/ builds on ops/

        vh = v.mH
        if grad_v is None:
            g = solve(vh, grad_w.unsqueeze(-1) * vh)
        else:
            vhgv = vh @ grad_v
            diag = vhgv.diagonal(0, -2, -1)
            _check_phase("linalg_eig_backward", vhgv)
            vhgv = vhgv - vh @ (v * diag.real.unsqueeze(-2))
            n = w.shape[-1]
            eye = eye_mask(w, n)
            lc = w.conj()
            econj = (lc.unsqueeze(-2) - lc.unsqueeze(-1)).where(~eye, 1.0)
            inner = (vhgv / econj).where(~eye, 0.0)
            if grad_w is not None:
                inner = inner + diag_embed(grad_w)
            g = solve(vh, inner @ vh)
        return (g.real if self.real_input else g,)


# ---- pseudo-inverse, least squares, rank -------------------------------------------------------

class Pinv(Node):
    """``linalg.pinv`` (LinalgPinvBackward0): inputs ``(A, atol, rtol)``, the tolerances
    numbers or tensors broadcasting against the batch dims."""

    node_name = "LinalgPinvBackward0"

    def __init__(self, hermitian: bool = False) -> None:
        self.hermitian = hermitian

    def forward(self, a: Any, atol: Any, rtol: Any) -> Any:
        b = self.backend
        if not self.hermitian:
            _check_finite(b, a)
        out = b.pinv(a, atol, rtol, self.hermitian)
        self.save_for_backward(a, out)
        return out

    def backward(self, grad: Any) -> tuple[Any, None, None]:
        a, p = self.saved_tensors
        return pinv_backward(grad, p, a), None, None


def pinv_backward(grad: Any, p: Any, a: Any) -> Any:
    """The gradient of ``P = pinv(A)`` (Golub and Pereyra's derivative):
    ``-P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)``."""
    pt, gt = p.mT, grad.mT
    return -(pt @ grad @ pt) + (gt @ (p @ pt) - a @ (p @ (gt @ (p @ pt)))) \
        + ((pt @ p) @ gt - (((pt @ p) @ gt) @ p) @ a)


class Lstsq(Node):
    """``linalg.lstsq`` (LinalgLstsqBackward0): outputs ``(solution, residuals)``; the rank and
    singular values (no gradient) go into ``extra``. ``vector``: ``B`` is a (batch of)
    vector(s). The solution is the minimum-norm one from the SVD for every driver."""

    node_name = "LinalgLstsqBackward0"

    def __init__(self, rcond: float | None, driver: str, vector: bool,
                 extra: dict[str, Any]) -> None:
        self.rcond = rcond
        self.driver = driver
        self.vector = vector
        self.extra = extra

    def forward(self, a: Any, b: Any) -> tuple[Any, Any]:
        be = self.backend
        _check_finite(be, a)
        rhs = b[..., None] if self.vector else b
        x, rank, s = be.lstsq(a, rhs, None if self.driver == "gels" else self.rcond)
        m, n = a.shape[-2:]
        driver = self.driver
        if driver == "gels" and m > n or driver in ("gelsd", "gelss") and m > n and \
                bool((rank == n).all()):
            r = be.broadcast_to(a, x.shape[:-2] + a.shape[-2:]) @ x - rhs
            res = (r * r).sum(axis=-2)
        else:
            res = be.zeros((0,), a.dtype)
        self.extra["rank"] = rank if driver != "gels" else be.zeros((0,), "int64")
        self.extra["singular_values"] = s if driver in ("gelsd", "gelss") else \
            be.zeros((0,), a.dtype)
        x = x[..., 0] if self.vector else be.f_order(x)
        self.has_residuals = res.size > 0
        self.save_for_backward(a, b, x)
        return x, res

    def backward(self, grad_x: Any, grad_res: Any = None) -> tuple[Any, Any]:
        a, b, x = self.saved_tensors
        need = self.needs_input_grad
        b_m = b.unsqueeze(-1) if self.vector else b
        x_m = x.unsqueeze(-1) if self.vector else x
        g_a = g_b = None
        if grad_x is not None:
            g_x = grad_x.unsqueeze(-1) if self.vector else grad_x
            p = Pinv.apply(a, 0.0, _default_rtol(a), hermitian=False)
            if need[0]:
                g_a = pinv_backward(g_x @ b_m.mT, p, a)
            if need[1]:
                g_b = p.mT @ g_x
        if grad_res is not None and self.has_residuals:
            # NOTE: the residuals |A X - B|² at the optimum X: only their explicit dependence
            # on A and B remains (A^T (A X - B) = 0 there).
            r = a @ x_m - b_m
            w = 2 * (r * grad_res.unsqueeze(-2))
            g_a = w @ x_m.mT if g_a is None else g_a + w @ x_m.mT
            g_b = -w if g_b is None else g_b - w
        if g_a is not None:
            g_a = reduce_grad(g_a, tuple(a.shape))
        if g_b is not None:
            g_b = reduce_grad(g_b.squeeze(-1) if self.vector else g_b, tuple(b.shape))
        return g_a if need[0] else None, g_b if need[1] else None


def _default_rtol(a: Any) -> float:
    eps = 2.220446049250313e-16 if a.dtype.itemsize == 8 else 1.1920928955078125e-07
    return eps * max(a.shape[-2:])


class MatrixRank(Node):
    """``linalg.matrix_rank``: the count of singular values (|eigenvalues| when
    ``hermitian``) above ``max(atol, rtol * largest)``; int64, no gradient."""

    def __init__(self, hermitian: bool = False) -> None:
        self.hermitian = hermitian

    def forward(self, a: Any, atol: Any, rtol: Any) -> Any:
        b = self.backend
        if not self.hermitian:
            _check_finite(b, a)
        return b.matrix_rank(a, atol, rtol, self.hermitian)


# ---- matrix functions --------------------------------------------------------------------------

class MatrixExp(Node):
    """``linalg.matrix_exp`` (LinalgMatrixExpBackward0)."""

    node_name = "LinalgMatrixExpBackward0"

    def forward(self, a: Any) -> Any:
        self.save_for_backward(a)
        return self.backend.matrix_exp(a)

    def backward(self, grad: Any) -> tuple[Any]:
        (a,) = self.saved_tensors
        n = a.shape[-1]
        # NOTE: the Fréchet derivative in direction G, adjoint: the top-right block of
        # exp([[A^H, G], [0, A^H]]) (as PyTorch's linalg_matrix_exp_differential).
        from ..functions import cat  # NOTE: late: functions/ builds on ops/

        at = a.mH
        zeros = at.new_zeros(tuple(at.shape))
        block = cat([cat([at, grad], -1), cat([zeros, at], -1)], -2)
        return (MatrixExp.apply(block)[..., :n, n:],)


class Cross(Node):
    """``linalg.cross`` (LinalgCrossBackward0) along ``dim`` (non-negative) of the broadcast
    inputs."""

    node_name = "LinalgCrossBackward0"

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def forward(self, x: Any, y: Any) -> Any:
        self.shapes = (x.shape, y.shape)
        need = self.needs_input_grad
        if need:
            self.save_for_backward(x if need[1] else None, y if need[0] else None)
        return self.backend.cross(x, y, self.dim)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        need = self.needs_input_grad
        return (reduce_grad(Cross.apply(y, grad, dim=self.dim), tuple(self.shapes[0]))
                if need[0] else None,
                reduce_grad(Cross.apply(grad, x, dim=self.dim), tuple(self.shapes[1]))
                if need[1] else None)
