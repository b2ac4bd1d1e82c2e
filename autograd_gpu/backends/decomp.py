"""Backend entries of the decomp family (``functions/decomp.py``, ``ops/decomp.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends.

Factorizations are LAPACK's through ``numpy.linalg`` and cuSOLVER's through ``cupy.linalg``;
nothing here factorizes a matrix by hand. The ``*_ex`` entries never raise on a singular or
non-positive-definite matrix: they return PyTorch's ``info`` (LAPACK's: the 1-based index of
the first zero pivot, or the order of the first leading minor that is not positive-definite)
and NaN in the results of the matrices that failed.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

# Padé approximant of degree 13 for exp (Higham 2005), and the 1-norm up to which it is exact
# to double precision without scaling.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152
# NOTE: the squarings a compiled step records (norms up to 2**8 * theta13, about 1375)
_SQUARINGS = 8


def _batch(s: tuple[int, ...], t: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two batch shapes (the caller has checked that they broadcast)."""
    n = max(len(s), len(t))
    s, t = (1,) * (n - len(s)) + s, (1,) * (n - len(t)) + t
    return tuple(b if a == 1 else a for a, b in zip(s, t))


def _real_dtype(dtype: Any) -> Any:
    """The dtype of a ``dtype`` number's real part (``complex64`` -> ``float32``)."""
    import numpy as np

    return np.zeros((), dtype).real.dtype


class DecompBackend:
    """The decomp family's primitives; ``self`` is the backend object."""

    xp: Any
    name: str
    to_host: Any  # the backend's own entry

    # ---- errors --------------------------------------------------------------------------
    @contextlib.contextmanager
    def _raising(self) -> Iterator[None]:
        """Library calls inside raise ``LinAlgError`` when a factorization fails: NumPy always
        does; CuPy only under ``cupyx.errstate(linalg='raise')`` (it skips the check, and its
        device synchronization, by default)."""
        state = None
        if self.name == "cupy":
            import cupyx

            state = getattr(cupyx, "errstate", None)
        with state(linalg="raise") if state is not None else contextlib.nullcontext():
            yield

    def _bad(self) -> tuple[type[Exception], ...]:
        return (self.xp.linalg.LinAlgError,)

    # ---- small helpers of the backward formulas -------------------------------------------
    def mT(self, a: Any) -> Any:  # noqa: N802  (PyTorch's name)
        """The matrices of ``a`` transposed (a view)."""
        return self.xp.swapaxes(a, -1, -2)

    def f_order(self, a: Any) -> Any:
        """``a`` with each matrix in column-major order (the batch dims C-ordered): the layout
        PyTorch gives the results of LAPACK routines."""
        if a.ndim < 2 or (a.flags.f_contiguous and a.ndim == 2):
            return a
        return self.mT(self.xp.ascontiguousarray(self.mT(a)))

    def tri_mask(self, m: int, n: int, upper: bool, k: int = 0) -> Any:
        """The bool ``(m, n)`` mask of the upper (``col - row >= k``) or lower triangle."""
        ones = self.xp.ones((m, n), bool)
        return self.xp.triu(ones, k) if upper else self.xp.tril(ones, k)

    def split_order(self, mask: Any) -> tuple[Any, Any, Any]:
        """For a flat bool ``mask``: the indices where it holds, where it does not, and the
        permutation that puts ``concatenate([on, off])`` back in order."""
        xp = self.xp
        on = xp.nonzero(mask)[0]
        off = xp.nonzero(~mask)[0]
        return on, off, xp.argsort(xp.concatenate([on, off]))

    def has_nan(self, a: Any) -> Any:
        """True for each matrix of ``a`` holding a NaN."""
        return self.xp.isnan(a).any(axis=(-2, -1))

    def _nan_of_nan(self, a: Any, out: Any) -> Any:
        """``out`` NaN wherever its matrix ``a`` holds a NaN, as LAPACK's answer is (cuSOLVER's
        can hold infinities there)."""
        if self.name == "numpy":
            return out
        return self.xp.where(self.has_nan(a)[..., None, None], self.xp.nan, out).astype(
            out.dtype, copy=False)

    def cross(self, x: Any, y: Any, axis: int) -> Any:
        """The cross product of 3-vectors along ``axis`` of the broadcast ``x`` and ``y``."""
        xp = self.xp
        shape = _batch(x.shape, y.shape)
        x = xp.moveaxis(xp.broadcast_to(x, shape), axis, -1)
        y = xp.moveaxis(xp.broadcast_to(y, shape), axis, -1)
        x0, x1, x2 = x[..., 0], x[..., 1], x[..., 2]
        y0, y1, y2 = y[..., 0], y[..., 1], y[..., 2]
        out = xp.stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], axis=-1)
        return xp.ascontiguousarray(xp.moveaxis(out, -1, axis))

    # ---- determinants --------------------------------------------------------------------
    def slogdet(self, a: Any) -> tuple[Any, Any]:
        """``(sign, log|det|)`` of each matrix; sign 0 and -inf for a singular one (LAPACK's
        getrf met an exactly zero pivot)."""
        xp = self.xp
        real = _real_dtype(a.dtype)  # NOTE: a complex matrix has a complex sign, a real log
        if a.size == 0:
            return xp.ones(a.shape[:-2], a.dtype), xp.zeros(a.shape[:-2], real)
        sign, logabs = xp.linalg.slogdet(a)
        return xp.asarray(sign, a.dtype), xp.asarray(logabs, real)

    def det(self, a: Any) -> Any:
        xp = self.xp
        if a.size == 0:
            return xp.ones(a.shape[:-2], a.dtype)
        return xp.asarray(xp.linalg.det(a), a.dtype)

    def lu_info(self, a: Any) -> Any:
        """LAPACK getrf's ``info`` for each matrix: the 1-based index of the first exactly zero
        pivot of its partially pivoted LU factorization, 0 for none.

        NOTE: the first ``k`` pivots depend on the first ``k`` columns only, so the first zero
        pivot is the smallest ``k`` for which ``[A[:, :k] | R[:, k:]]`` (``R`` a fixed generic
        matrix) is singular to LAPACK (slogdet's sign is 0): found by bisection on ``k``, one
        batched slogdet per step.
        """
        xp = self.xp
        n = a.shape[-1]
        batch = a.shape[:-2]
        if a.size == 0:
            return xp.zeros(batch, "int32")
        idx = xp.arange(n * n, dtype=a.dtype).reshape(n, n)
        generic = xp.sin(idx * 1.618 + 0.5) + xp.eye(n, dtype=a.dtype) * 2
        col = xp.arange(n).reshape(1, n)
        lo = xp.zeros(batch + (1, 1), "int64")  # known: no zero pivot in the first lo columns
        hi = xp.full(batch + (1, 1), n + 1, "int64")  # known: a zero pivot by column hi
        for _ in range(max(1, n.bit_length() + 1)):
            mid = (lo + hi) // 2
            trial = xp.where(col < mid, a, generic)
            sign, _ = xp.linalg.slogdet(trial)
            zero = (sign == 0).reshape(lo.shape)
            hi = xp.where(zero, mid, hi)
            lo = xp.where(zero, lo, mid)
        info = xp.where(hi > n, 0, hi).reshape(batch)
        sign, _ = xp.linalg.slogdet(a)
        # NOTE: a matrix LAPACK calls singular keeps a nonzero info even if the bisection missed.
        return xp.where((sign == 0) & (info == 0), n, info).astype("int32")

    # ---- inverses and solves -------------------------------------------------------------
    def inv_ex(self, a: Any) -> tuple[Any, Any]:
        """``(inverse, info)``; the inverse of a singular matrix is NaN."""
        xp = self.xp
        if a.size == 0:
            return xp.empty(a.shape, a.dtype), xp.zeros(a.shape[:-2], "int32")
        try:
            with self._raising():
                return self._nan_of_nan(a, xp.linalg.inv(a)), xp.zeros(a.shape[:-2], "int32")
        except self._bad():
            pass
        info = self.lu_info(a)
        bad = (info != 0)[..., None, None]
        out = xp.linalg.inv(xp.where(bad, xp.eye(a.shape[-1], dtype=a.dtype), a))
        return self._nan_of_nan(a, xp.where(bad, xp.nan, out).astype(a.dtype, copy=False)), info

    def solve_ex(self, a: Any, b: Any) -> tuple[Any, Any]:
        """``(x, info)`` with ``a @ x = b`` for ``a`` (..., n, n) and ``b`` (..., n, k), the
        batch dims broadcast together; ``x`` is NaN for a singular ``a``."""
        xp = self.xp
        batch = _batch(a.shape[:-2], b.shape[:-2])
        a = xp.broadcast_to(a, batch + a.shape[-2:])
        b = xp.broadcast_to(b, batch + b.shape[-2:])
        if a.size == 0 or b.size == 0:
            return xp.zeros(b.shape, b.dtype), xp.zeros(batch, "int32")
        try:
            with self._raising():
                return self._nan_of_nan(a, xp.linalg.solve(a, b)), xp.zeros(batch, "int32")
        except self._bad():
            pass
        info = self.lu_info(a)
        bad = (info != 0)[..., None, None]
        out = xp.linalg.solve(xp.where(bad, xp.eye(a.shape[-1], dtype=a.dtype), a), b)
        return self._nan_of_nan(a, xp.where(bad, xp.nan, out).astype(b.dtype, copy=False)), info

    def solve_triangular(self, a: Any, b: Any, upper: bool, unitriangular: bool) -> Any:
        """``x`` with ``T @ x = b``, ``T`` the upper or lower triangle of ``a`` (its diagonal
        taken as ones when ``unitriangular``); batch dims broadcast.

        NOTE: solved by LAPACK's general solver on the triangle (its LU of a triangular matrix
        is the matrix itself, up to row swaps in the lower case). A zero on the diagonal makes
        that refuse; the result is then BLAS trsm's, inf and NaN included (substitution).
        """
        xp = self.xp
        t = self.triangle(a, upper, unitriangular)
        batch = _batch(t.shape[:-2], b.shape[:-2])
        t = xp.broadcast_to(t, batch + t.shape[-2:])
        b = xp.broadcast_to(b, batch + b.shape[-2:])
        if t.size == 0 or b.size == 0:
            return xp.zeros(b.shape, b.dtype)
        if bool((xp.diagonal(t, axis1=-2, axis2=-1) != 0).all()):
            return xp.linalg.solve(t, b).astype(b.dtype, copy=False)
        return self._substitute(t, b, upper)

    def _substitute(self, t: Any, b: Any, upper: bool) -> Any:
        """Back (``upper``) or forward substitution, column by column as BLAS trsm: the
        inf/NaN pattern a zero diagonal gives (that of MKL, whose trsm divides zeros too)."""
        xp = self.xp
        x = xp.array(b, dtype=b.dtype, copy=True)
        n = t.shape[-1]
        for k in range(n - 1, -1, -1) if upper else range(n):
            xk = x[..., k, :] / t[..., k, k:k + 1]
            x[..., k, :] = xk
            rest = slice(0, k) if upper else slice(k + 1, n)
            x[..., rest, :] = x[..., rest, :] - t[..., rest, k:k + 1] * xk[..., None, :]
        return x

    def triangle(self, a: Any, upper: bool, unitriangular: bool = False) -> Any:
        xp = self.xp
        out = xp.triu(a) if upper else xp.tril(a)
        if unitriangular:
            n = a.shape[-1]
            eye = xp.eye(a.shape[-2], n, dtype=bool)
            out = xp.where(eye, xp.ones((), a.dtype), out)
        return out

    # ---- Cholesky ------------------------------------------------------------------------
    def cholesky_ex(self, a: Any) -> tuple[Any, Any]:
        """``(L, info)``: the lower Cholesky factor; ``info`` the order of the first leading
        minor that is not positive-definite (NaN on the diagonal counts), ``L`` NaN there."""
        xp = self.xp
        batch = a.shape[:-2]
        if a.size == 0:
            return xp.zeros(a.shape, a.dtype), xp.zeros(batch, "int32")
        try:
            with self._raising():
                low = xp.linalg.cholesky(a)
            info = self._nan_pivot(low)
            if not bool((info != 0).any()):
                return low, info
        except self._bad():
            pass
        flat = a.reshape((-1,) + a.shape[-2:])
        info = xp.zeros(flat.shape[0], "int32")
        for i in self._failing(flat, 0, flat.shape[0]):
            info[i] = self._minor_order(flat[i])
        info = info.reshape(batch)
        bad = (info != 0)[..., None, None]
        low = xp.linalg.cholesky(xp.where(bad, xp.eye(a.shape[-1], dtype=a.dtype), a))
        return xp.where(bad, xp.nan, low).astype(a.dtype, copy=False), info

    def _nan_pivot(self, low: Any) -> Any:
        """1 + the index of the first NaN on each factor's diagonal (0 for none): where
        LAPACK's potrf stops on a NaN pivot, which some BLAS builds pass through."""
        xp = self.xp
        bad = xp.isnan(xp.diagonal(low, axis1=-2, axis2=-1))
        first = xp.argmax(bad, axis=-1) + 1
        return xp.where(bad.any(axis=-1), first, 0).astype("int32")

    def _chol_fails(self, a: Any) -> bool:
        try:
            with self._raising():
                low = self.xp.linalg.cholesky(a)
        except self._bad():
            return True
        return bool((self._nan_pivot(low) != 0).any())

    def _failing(self, flat: Any, start: int, stop: int) -> list[int]:
        """The indices in ``flat[start:stop]`` whose factorization fails (halving search)."""
        if stop <= start or not self._chol_fails(flat[start:stop]):
            return []
        if stop - start == 1:
            return [start]
        mid = (start + stop) // 2
        return self._failing(flat, start, mid) + self._failing(flat, mid, stop)

    def _minor_order(self, a: Any) -> int:
        """The order of the first leading minor of ``a`` whose factorization fails."""
        lo, hi = 0, a.shape[-1]  # minor lo succeeds, minor hi fails
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self._chol_fails(a[:mid, :mid]):
                hi = mid
            else:
                lo = mid
        return hi

    # ---- orthogonal and spectral factorizations ---------------------------------------------
    def qr(self, a: Any, mode: str) -> tuple[Any, Any]:
        """``(Q, R)`` of ``numpy.linalg.qr`` (``Q`` empty for mode ``'r'``)."""
        xp = self.xp
        m, n = a.shape[-2:]
        k = min(m, n)
        if a.size == 0 or k == 0:
            q_cols = m if mode == "complete" else k
            q = xp.zeros(a.shape[:-2] + (m, q_cols), a.dtype)
            if q_cols == m:
                q[...] = xp.eye(m, dtype=a.dtype)
            r = xp.zeros(a.shape[:-2] + (m if mode == "complete" else k, n), a.dtype)
            return (xp.zeros((0,), a.dtype) if mode == "r" else q), r
        try:
            out = xp.linalg.qr(a, mode=mode)
        except self._bad():
            if a.ndim < 3:
                raise
            # NOTE: CuPy's qr took one matrix at a time before it took stacks: factor the
            # matrices one by one.
            parts = [self.qr(one, mode) for one in a.reshape((-1, m, n))]
            r = xp.stack([p[1] for p in parts]).reshape(a.shape[:-2] + parts[0][1].shape)
            q = xp.stack([p[0] for p in parts]).reshape(a.shape[:-2] + parts[0][0].shape)
            return (xp.zeros((0,), a.dtype) if mode == "r" else q), r
        if mode == "r":
            return xp.zeros((0,), a.dtype), out
        return out[0], out[1]

    def svd(self, a: Any, full_matrices: bool, compute_uv: bool = True) -> Any:
        """``(U, S, Vh)`` (or ``S``) of ``numpy.linalg.svd``; the caller checks finiteness."""
        xp = self.xp
        m, n = a.shape[-2:]
        k = min(m, n)
        batch = a.shape[:-2]
        real = _real_dtype(a.dtype)  # NOTE: singular values are real, for complex A too
        if a.size == 0:
            s = xp.zeros(batch + (k,), real)
            if not compute_uv:
                return s
            u = xp.zeros(batch + ((m, m) if full_matrices else (m, k)), a.dtype)
            vh = xp.zeros(batch + ((n, n) if full_matrices else (k, n)), a.dtype)
            if full_matrices:
                u[...] = xp.eye(m, dtype=a.dtype)
                vh[...] = xp.eye(n, dtype=a.dtype)
            return u, s, vh
        # NOTE: a matrix holding inf has NaN factors, as PyTorch's (LAPACK's gesdd may refuse
        # it or loop): it is factored as zeros, then its results are NaN.
        bad = ~xp.isfinite(a).all(axis=(-2, -1))
        any_bad = bool(bad.any())
        if any_bad:
            a = xp.where(bad[..., None, None], 0, a)
        if not compute_uv:
            s = xp.linalg.svd(a, compute_uv=False).astype(real, copy=False)
            return xp.where(bad[..., None], xp.nan, s).astype(real) if any_bad else s
        u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
        s = s.astype(real, copy=False)
        if any_bad:
            u, vh = (xp.where(bad[..., None, None], xp.nan, t).astype(a.dtype) for t in (u, vh))
            s = xp.where(bad[..., None], xp.nan, s).astype(real)
        return u, s, vh

    def eigh(self, a: Any, uplo: str, compute_v: bool = True) -> Any:
        """``(eigenvalues, eigenvectors)`` (or the eigenvalues) of a symmetric matrix, read
        from its ``uplo`` triangle, eigenvalues ascending."""
        xp = self.xp
        real = _real_dtype(a.dtype)  # NOTE: a Hermitian matrix has real eigenvalues
        if a.size == 0:
            w = xp.zeros(a.shape[:-1], real)
            return (w, xp.zeros(a.shape, a.dtype)) if compute_v else w
        if not compute_v:
            return xp.linalg.eigvalsh(a, UPLO=uplo).astype(real, copy=False)
        w, v = xp.linalg.eigh(a, UPLO=uplo)
        return w.astype(real, copy=False), v

    def geqrf(self, a: Any) -> tuple[Any, Any]:
        """LAPACK geqrf's ``(a, tau)``: ``R`` on and above the diagonal, the Householder vectors
        below it (column-major, as PyTorch's), ``tau`` their scales (NumPy's and CuPy's
        ``qr(mode='raw')``, which hand back the transposed matrix)."""
        xp = self.xp
        m, n = a.shape[-2:]
        batch = a.shape[:-2]
        if a.size == 0:
            return self.f_order(xp.array(a, copy=True)), xp.zeros(batch + (min(m, n),), a.dtype)
        if a.ndim == 2 or self.name == "numpy":
            h, tau = xp.linalg.qr(a, mode="raw")
        else:  # NOTE: CuPy's raw mode takes one matrix at a time
            flat = a.reshape((-1, m, n))
            parts = [xp.linalg.qr(flat[i], mode="raw") for i in range(flat.shape[0])]
            h = xp.stack([p[0] for p in parts]).reshape(batch + (n, m))
            tau = xp.stack([p[1] for p in parts]).reshape(batch + (min(m, n),))
        return self.f_order(xp.swapaxes(h, -1, -2)), tau.astype(a.dtype, copy=False)

    def eig(self, a: Any, compute_v: bool = True) -> Any:
        """``(eigenvalues, eigenvectors)`` (or the eigenvalues) of a general square matrix,
        complex (complex64 for float32 and complex64 input), in LAPACK geev's order and
        normalisation (unit columns, largest component real), as PyTorch's.

        NOTE: on CUDA through the host (NumPy's geev), as PyTorch's CUDA eig goes through
        MAGMA's host routine: cuSOLVER's geev orders and scales its answer differently."""
        import numpy as np

        xp = self.xp
        cplx = np.result_type(a.dtype, np.complex64)
        if a.size == 0:
            w = xp.zeros(a.shape[:-1], cplx)
            return (w, xp.zeros(a.shape, cplx)) if compute_v else w
        host = a if self.name == "numpy" else self.to_host(a)
        if not compute_v:
            return xp.asarray(np.linalg.eigvals(host).astype(cplx, copy=False))
        w, v = np.linalg.eig(host)
        return xp.asarray(w.astype(cplx, copy=False)), xp.asarray(v.astype(cplx, copy=False))

    # ---- matrix functions -----------------------------------------------------------------
    def matrix_exp(self, a: Any) -> Any:
        """``exp(A)`` by scaling and squaring with the degree-13 Padé approximant (Higham
        2005): each matrix is scaled by ``2**-s`` to a 1-norm within the approximant's range,
        approximated (one LAPACK solve), then squared ``s`` times. float16 computes in
        float32."""
        xp = self.xp
        if a.size == 0:
            return xp.zeros(a.shape, a.dtype)
        dtype = a.dtype
        x = a.astype("float32") if dtype == xp.float16 else a
        n = a.shape[-1]
        norm = xp.abs(x).sum(axis=-2).max(axis=-1)
        norm = xp.where(xp.isfinite(norm), norm, 0)
        s = xp.ceil(xp.log2(xp.maximum(norm / _THETA13, 1.0)))
        s = xp.maximum(s, 0).astype("int64")
        from ..compiler import is_compiling

        if s.size and is_compiling() and bool(s.max() <= _SQUARINGS):
            # NOTE: a compiled step records ``_SQUARINGS`` squarings (those past a matrix's own
            # leave it as it is) and a check of one bool, which holds while the norms stay in
            # range, rather than their count, which changes with the values
            steps = _SQUARINGS
        else:
            steps = int(s.max()) if s.size else 0
        x = x * xp.exp2(-s.astype(x.dtype))[..., None, None]
        eye = xp.eye(n, dtype=x.dtype)
        c = _PADE13
        x2 = x @ x
        x4 = x2 @ x2
        x6 = x4 @ x2
        u = x @ (x6 @ (c[13] * x6 + c[11] * x4 + c[9] * x2) + c[7] * x6 + c[5] * x4
                 + c[3] * x2 + c[1] * eye)
        v = x6 @ (c[12] * x6 + c[10] * x4 + c[8] * x2) + c[6] * x6 + c[4] * x4 + c[2] * x2 \
            + c[0] * eye
        out = xp.linalg.solve(v - u, v + u)
        for i in range(steps):
            out = xp.where((s > i)[..., None, None], out @ out, out)
        # NOTE: C order as PyTorch's; CuPy's solve answers in column-major order
        return xp.ascontiguousarray(out.astype(dtype, copy=False))

    def pinv(self, a: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
        """The pseudo-inverse: singular values (or |eigenvalues|) at or below
        ``max(atol, rtol * largest)`` count as zero; ``atol``/``rtol`` broadcast against the
        batch dims."""
        xp = self.xp
        m, n = a.shape[-2:]
        if a.size == 0:
            return xp.zeros(a.shape[:-2] + (n, m), a.dtype)
        if hermitian:
            w, v = self.eigh(a, "L")
            mag = xp.abs(w)
            tol = self._tolerance(mag.max(axis=-1), atol, rtol)
            winv = xp.where(mag > tol[..., None], 1 / xp.where(w == 0, 1, w), 0).astype(a.dtype)
            return (v * winv[..., None, :]) @ xp.swapaxes(v, -1, -2)
        u, s, vh = self.svd(a, full_matrices=False)
        tol = self._tolerance(s[..., 0], atol, rtol)
        sinv = xp.where(s > tol[..., None], 1 / xp.where(s == 0, 1, s), 0).astype(a.dtype)
        return (xp.swapaxes(vh, -1, -2) * sinv[..., None, :]) @ xp.swapaxes(u, -1, -2)

    def _tolerance(self, largest: Any, atol: Any, rtol: Any) -> Any:
        xp = self.xp
        return xp.maximum(xp.asarray(atol, largest.dtype), xp.asarray(rtol, largest.dtype)
                          * largest)

    def matrix_rank(self, a: Any, atol: Any, rtol: Any, hermitian: bool) -> Any:
        xp = self.xp
        if a.size == 0:
            return xp.zeros(a.shape[:-2], "int64")
        if hermitian:
            s = xp.abs(self.eigh(a, "L", compute_v=False))
            largest = s.max(axis=-1)
        else:
            s = self.svd(a, False, compute_uv=False)
            largest = s[..., 0]
        tol = self._tolerance(largest, atol, rtol)
        return (s > tol[..., None]).sum(axis=-1).astype("int64")

    def lstsq(self, a: Any, b: Any, rcond: float | None) -> tuple[Any, Any, Any]:
        """``(x, rank, s)``: the minimum-norm least-squares solution of ``a @ x = b`` (batch
        dims broadcast) from the SVD, singular values at or below ``rcond`` times the largest
        counting as zero (``rcond=None``: none does)."""
        xp = self.xp
        batch = _batch(a.shape[:-2], b.shape[:-2])
        a = xp.broadcast_to(a, batch + a.shape[-2:])
        b = xp.broadcast_to(b, batch + b.shape[-2:])
        n = a.shape[-1]
        k = min(a.shape[-2:])
        if a.size == 0 or b.size == 0:
            return (xp.zeros(batch + (n, b.shape[-1]), a.dtype), xp.zeros(batch, "int64"),
                    xp.zeros(batch + (k,), a.dtype))
        u, s, vh = self.svd(a, full_matrices=False)
        keep = s > 0 if rcond is None else s > rcond * s[..., :1]
        sinv = xp.where(keep, 1 / xp.where(s == 0, 1, s), 0).astype(a.dtype)
        x = xp.swapaxes(vh, -1, -2) @ (sinv[..., None] * (xp.swapaxes(u, -1, -2) @ b))
        return x, keep.sum(axis=-1).astype("int64"), s
