"""QR, SVD and symmetric eigendecompositions (``linalg.qr``, ``svd``, ``svdvals``, ``eigh``,
``eigvalsh``; the deprecated ``torch.qr`` and ``torch.svd``), and what builds on them:
``pinv``/``pinverse``, ``lstsq``, ``matrix_rank``; and ``matrix_exp``.

Singular vectors and eigenvectors are determined up to sign (LAPACK's choice here, which may
differ from the LAPACK build PyTorch uses): compare them, and differentiate through them, with
sign-invariant functions.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import user_stacklevel
from ..ops import decomp_spectral as S
from ..ops.decomp import const
from ..tensor import Tensor
from . import decomp_util as U
from .arith import _type_name
from .checks import expect_tensor, invalid_arguments

_WARNED: set[str] = set()


def _kernel_dtype(kernel: str, a: Tensor, complex_ok: bool = False) -> None:
    """PyTorch's NotImplementedError from a LAPACK kernel that takes float32/float64 (and the
    complex dtypes where ``complex_ok``) only."""
    if complex_ok and a.dtype.is_complex:
        return
    if not a.dtype.is_floating_point or a.dtype.name == "float16":
        raise NotImplementedError(f"\"{kernel}_{a._device.type}\" not implemented for "
                                  f"'{_type_name(a.dtype)}'")


def _needs_grad(a: Tensor) -> bool:
    return a.requires_grad and is_grad_enabled()


# ---- QR ----------------------------------------------------------------------------------------

def linalg_qr(A: Tensor, mode: str = "reduced", *, out: Any = None) -> Any:  # noqa: N803
    """``linalg.qr``: ``(Q, R)`` with ``A = Q R``, ``Q`` orthonormal columns, ``R`` upper
    triangular. ``mode``: 'reduced' (``Q`` (m, k), ``R`` (k, n)), 'complete' (``Q`` (m, m)) or
    'r' (``R`` only; ``Q`` empty, and no gradient)."""
    U.check_matrix("linalg.qr", A, complex_ok=True)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
                           "(default), 'r', or 'complete'")
    _kernel_dtype("geqrf", A, complex_ok=True)
    q, r = S.Qr.apply(A, mode=mode)
    return U.finish("linalg_qr", U.linalg_qr((q, r)), out, (A,))


def qr(input: Tensor, some: bool = True, *, out: Any = None) -> Any:  # noqa: A002
    """The deprecated ``torch.qr``: ``linalg.qr`` in mode 'reduced' (``some``) or
    'complete'."""
    if "qr" not in _WARNED:
        _WARNED.add("qr")
        warnings.warn(_QR_DEPRECATED, UserWarning, stacklevel=user_stacklevel())
    U.check_matrix("linalg.qr", input, complex_ok=True)
    _kernel_dtype("geqrf", input, complex_ok=True)
    q, r = S.Qr.apply(input, mode="reduced" if some else "complete")
    return U.finish("qr", U.qr_type((q, r)), out, (input,))


_QR_DEPRECATED = (
    "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
    "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
    "Q, R = torch.qr(A, some)\nshould be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if "
    "some else 'complete')")


# ---- SVD ---------------------------------------------------------------------------------------

def _check_svd(A: Tensor, driver: Any) -> None:  # noqa: N803
    U.check_matrix("linalg.svd", A, complex_ok=True)
    if driver is not None:
        if A._device.type != "cuda":
            raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                               "CUDA inputs with cuSOLVER backend.")
        if driver not in ("gesvd", "gesvdj", "gesvda"):
            raise RuntimeError("torch.linalg.svd: unknown svd driver " + str(driver) +
                               " in svd_cusolver computation. Available options are: gesvd, "
                               "gesvdj, gesvda")
    _kernel_dtype("linalg_svd", A, complex_ok=True)


def linalg_svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None,  # noqa: N803
               out: Any = None) -> Any:
    """``linalg.svd``: ``(U, S, Vh)`` with ``A = U diag(S) Vh``, ``S`` descending; ``U`` and
    ``Vh`` square when ``full_matrices``. A matrix with inf or NaN raises ``LinAlgError``.

    The gradient is PyTorch's; it is well defined for losses that do not depend on the signs
    of the singular vectors, and needs distinct singular values when ``U``/``Vh`` are used."""
    _check_svd(A, driver)
    u, s, vh = S.Svd.apply(A, full_matrices=bool(full_matrices))
    return U.finish("linalg_svd", U.linalg_svd((u, s, vh)), out, (A,))


def svdvals(A: Tensor, *, driver: Any = None, out: Tensor | None = None) -> Tensor:  # noqa: N803
    """The singular values of each matrix, descending (LinalgSvdBackward0: with a gradient,
    the singular vectors are computed too, as PyTorch does)."""
    _check_svd(A, driver)
    if _needs_grad(A):
        s = S.Svd.apply(A, full_matrices=False)[1]
    else:
        s = S.Svd.apply(A, compute_uv=False)
    return U.finish("linalg_svdvals", s, out, (A,))


def svd(input: Tensor, some: bool = True, compute_uv: bool = True, *,  # noqa: A002
        out: Any = None) -> Any:
    """``torch.svd``: ``(U, S, V)`` (``V``, not ``Vh``); reduced when ``some``. Without
    ``compute_uv``, ``U`` and ``V`` are zero-filled ``(m, m)`` and ``(n, n)`` matrices."""
    expect_tensor("svd", "input", 1, input)
    if input.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has "
                           f"{input.ndim} dimensions instead")
    _check_svd(input, None)
    if compute_uv:
        u, s, vh = S.Svd.apply(input, full_matrices=not some)
        v = vh.mH
    else:
        s = svdvals(input)
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        u = input.new_zeros(batch + (m, m))
        v = input.new_zeros(batch + (n, n)).mT  # NOTE: PyTorch's layout (a zero Vh, transposed)
    return U.finish("svd", U.svd_type((u, s, v)), out, (input,))


# ---- symmetric eigendecomposition --------------------------------------------------------------

def _check_eigh(A: Tensor, UPLO: Any) -> str:  # noqa: N803
    U.check_matrix("linalg.eigh", A, square=True, floating=False)
    uplo = UPLO.upper() if isinstance(UPLO, str) else UPLO
    if uplo not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _kernel_dtype("linalg_eigh", A, complex_ok=True)
    return str(uplo)


def eigh(A: Tensor, UPLO: str = "L", *, out: Any = None) -> Any:  # noqa: N803
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix, read from its lower (``UPLO
    'L'``) or upper triangle; eigenvalues ascending, eigenvectors as columns.

    The gradient is PyTorch's (symmetric); with eigenvectors in the loss it needs distinct
    eigenvalues and a loss that does not depend on their signs."""
    uplo = _check_eigh(A, UPLO)
    w, v = S.Eigh.apply(A, uplo=uplo)
    return U.finish("linalg_eigh", U.linalg_eigh((w, v)), out, (A,))


def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Tensor | None = None) -> Tensor:  # noqa: N803
    """The eigenvalues of each symmetric matrix, ascending (LinalgEighBackward0)."""
    uplo = _check_eigh(A, UPLO)
    if _needs_grad(A):
        w = S.Eigh.apply(A, uplo=uplo)[0]
    else:
        w = S.Eigh.apply(A, uplo=uplo, compute_v=False)
    return U.finish("linalg_eigvalsh", w, out, (A,))


# ---- pseudo-inverse, rank, least squares -------------------------------------------------------

def _tolerances(A: Tensor, atol: Any, rtol: Any) -> tuple[Any, Any]:  # noqa: N803
    """PyTorch's ``atol``/``rtol`` defaults: none given: ``rtol = eps * max(m, n)``; ``atol``
    alone: ``rtol`` 0 where ``atol > 0``, else the default."""
    default = U.EPS[A.dtype.name] * max(A.shape[-2:])
    a = U.tolerance(atol, A) if atol is not None else 0.0
    if rtol is not None:
        return a, U.tolerance(rtol, A)
    if atol is None:
        return a, default
    if isinstance(a, Tensor):
        return a, a.new_zeros(tuple(a.shape)).where(a > 0, default)
    return a, 0.0 if a > 0 else default


def pinv(A: Tensor, rcond: Any = None, hermitian: bool = False, *, atol: Any = None,  # noqa: N803
         rtol: Any = None, out: Tensor | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix, by the SVD (the eigendecomposition when
    ``hermitian``): singular values at or below ``max(atol, rtol * largest)`` count as zero.
    ``rcond`` (the older form) is ``rtol`` with ``atol`` 0."""
    if rcond is not None and (atol is not None or rtol is not None):
        raise invalid_arguments("linalg_pinv", (A,), {"rcond": rcond, "atol": atol}
                                if atol is not None else {"rcond": rcond, "rtol": rtol})
    expect_tensor("linalg_pinv", "input", 1, A)
    if A.dtype.is_complex:
        U.check_floating("linalg.pinv", A)  # NOTE: refused, as not supported yet
    if A.ndim < 2 or not A.dtype.is_floating_point or A.dtype.name == "float16":
        raise RuntimeError(f"linalg.pinv({_type_name(A.dtype)}{{{list(A.shape)}}}): expected a "
                           "tensor with 2 or more dimensions of float, double, cfloat or cdouble "
                           "types")
    if hermitian:
        U.check_matrix("linalg.eigh", A, square=True, floating=False)
    if rcond is not None:
        a_tol, r_tol = 0.0, U.tolerance(rcond, A)
    else:
        a_tol, r_tol = _tolerances(A, atol, rtol)
    p = S.Pinv.apply(A, a_tol, r_tol, hermitian=bool(hermitian))
    return U.finish("linalg_pinv", p, out, (A,))


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:  # noqa: A002
    """``torch.pinverse``: ``linalg.pinv(input, rcond)``."""
    return pinv(input, rcond)


def matrix_rank(A: Tensor, tol: Any = None, hermitian: bool = False, *,  # noqa: N803
                atol: Any = None, rtol: Any = None, out: Tensor | None = None) -> Tensor:
    """The number of singular values (|eigenvalues| when ``hermitian``) above ``max(atol, rtol
    * largest)`` per matrix (int64). ``tol`` (the older form) is ``atol`` with ``rtol`` 0."""
    if tol is not None and (atol is not None or rtol is not None):
        raise invalid_arguments("linalg_matrix_rank", (A,), {"tol": tol, "atol": atol}
                                if atol is not None else {"tol": tol, "rtol": rtol})
    expect_tensor("linalg_matrix_rank", "input", 1, A)
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 "
                           "dimensions.")
    if A.dtype.is_complex:
        U.check_floating("linalg.matrix_rank", A)  # NOTE: refused, as not supported yet
    if not A.dtype.is_floating_point or A.dtype.name == "float16":
        raise RuntimeError("This function doesn't handle types other than float and double")
    if hermitian:
        U.check_matrix("linalg.eigh", A, square=True, floating=False)
    if tol is not None:
        a_tol, r_tol = U.tolerance(tol, A), 0.0
    else:
        a_tol, r_tol = _tolerances(A, atol, rtol)
    rank = S.MatrixRank.apply(A, a_tol, r_tol, hermitian=bool(hermitian))
    return U.finish("linalg_matrix_rank", rank, out, (A,), exact=(True,))


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *,  # noqa: N803
          driver: str | None = None) -> Any:
    """``(solution, residuals, rank, singular_values)``: the least-squares solution of
    ``A X = B`` per matrix (batch dims broadcast; ``B`` may be a batch of vectors).

    The solution is the minimum-norm one from the SVD, singular values at or below ``rcond``
    (default ``eps * max(m, n)``) times the largest counting as zero, for every driver (PyTorch's
    'gels' assumes full rank, 'gelsy' uses a pivoted QR: the same solution up to rounding for
    matrices of full rank). As PyTorch's CPU drivers: ``residuals`` (the squared residual norms
    of each column) for 'gels' when ``m > n``, and for 'gelsd'/'gelss' when ``m > n`` and every
    matrix has full rank, else empty; ``rank`` for all but 'gels'; ``singular_values`` for
    'gelsd'/'gelss'. Gradients: PyTorch's (through ``pinv``)."""
    expect_tensor("linalg_lstsq", "self", 1, A)
    expect_tensor("linalg_lstsq", "b", 2, B)
    fn = "torch.linalg.lstsq"
    U.check_same_device(A, B)
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError(f"{fn}: other must have at least 1 dimension.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{fn}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {_type_name(A.dtype)} and other's dtype "
                           f"{_type_name(B.dtype)}")
    vector = B.ndim == A.ndim - 1
    if (B.shape[-1] if vector else B.shape[-2]) != A.shape[-2]:
        raise RuntimeError(f"{fn}: input.size(-2) should match other.size(-2)")
    if A.dtype.is_complex:
        U.check_floating(fn, A)  # NOTE: refused, as not supported yet
    if not A.dtype.is_floating_point or A.dtype.name == "float16":
        raise RuntimeError("This function doesn't handle types other than float and double")
    cuda = A._device.type == "cuda"
    if driver is None:
        driver = "gels" if cuda else "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError(f"{fn}: parameter `driver` should be one of (gels, gelsy, gelsd, "
                           "gelss)")
    if cuda and driver != "gels":
        raise RuntimeError(f"{fn}: `driver` other than `gels` is not supported on CUDA")
    U.broadcast_batch(fn, tuple(A.shape[:-2]), tuple(B.shape[:-1] if vector else B.shape[:-2]))
    if rcond is None:
        rcond = U.EPS[A.dtype.name] * max(A.shape[-2:])
    extra: dict[str, Any] = {}
    x, res = S.Lstsq.apply(A, B, rcond=float(rcond), driver=driver, vector=vector, extra=extra)
    dev = A._device
    rank = Tensor._make(extra["rank"], dev)
    sv = Tensor._make(extra["singular_values"], dev)
    return U.linalg_lstsq((x, res, rank, sv))


# ---- matrix exponential ------------------------------------------------------------------------

def matrix_exp(A: Tensor) -> Tensor:  # noqa: N803
    """``exp(A) = sum_k A^k / k!`` of each square matrix (scaling and squaring with a Padé
    approximant); float16 computes in float32. Gradient: PyTorch's block-matrix form."""
    U.check_matrix("linalg.matrix_exp", A, square=True, complex_ok=True)
    return S.MatrixExp.apply(A)  # type: ignore[no-any-return]


# ---- general eigendecomposition ----------------------------------------------------------------

def _check_eig(fn: str, A: Tensor) -> None:  # noqa: N803
    U.check_matrix(f"linalg.{fn}", A, square=True, floating=False, arg="input")
    if A.dtype.is_complex:
        return
    if not A.dtype.is_floating_point:
        raise RuntimeError(f"Unknown Complex ScalarType for {_type_name(A.dtype)}")
    _kernel_dtype("linalg_eig_out", A)


def eig(A: Tensor, *, out: Any = None) -> Any:  # noqa: N803
    """``(eigenvalues, eigenvectors)`` of each square matrix, complex (complex64 for float32),
    as LAPACK's geev gives them: in its order, each eigenvector a unit column whose largest
    component is real.

    The gradient is PyTorch's; a loss that depends on the eigenvectors' free phases (say
    ``V.real.sum()``) is refused, as PyTorch refuses it. On CUDA the decomposition runs on the
    host, as PyTorch's does.

    Example:
        >>> eig(tensor([[2.0, 0.0], [0.0, 3.0]])).eigenvalues
        tensor([2.+0.j, 3.+0.j])
    """
    _check_eig("eig", A)
    w, v = S.Eig.apply(A)
    return U.finish("linalg_eig", U.linalg_eig((w, v)), out, (A,))


def eigvals(A: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: N803
    """The eigenvalues of each square matrix, complex, in ``eig``'s order
    (LinalgEigBackward0: the eigenvectors are computed too when a gradient is needed)."""
    _check_eig("eigvals", A)
    if _needs_grad(A):
        w = S.Eig.apply(A)[0]
    else:
        S.check_finite_eig(A.backend, A._data)
        w = const(A, A.backend.eig(A._data, compute_v=False))
    return U.finish("linalg_eigvals", w, out, (A,))


__all__: list[str] = ["qr", "svd", "pinverse", "matrix_exp"]
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "qr": qr, "svd": svd, "pinverse": pinverse, "matrix_exp": matrix_exp,
}
