"""Matrix functions and decompositions behind torch.linalg and their torch.* names: det, inverse,
solve, cholesky, qr, svd, eigh, ... (LAPACK through NumPy, cuSOLVER through CuPy).

This module holds determinants, inverses, solves and Cholesky; ``decomp_spectral`` QR, SVD,
eigh and what builds on them; ``decomp_norms`` norms and the products. ``autograd_gpu.linalg``
re-exports them under PyTorch's ``torch.linalg`` names.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from ..autograd.node import user_stacklevel
from ..ops import decomp as D
from ..tensor import Tensor
from . import decomp_util as U
from .arith import _type_name
from .checks import expect_tensor

_WARNED: set[str] = set()  # PyTorch's TORCH_WARN_ONCE deprecations already given


def _warn_once(name: str, message: str) -> None:
    if name not in _WARNED:
        _WARNED.add(name)
        warnings.warn(message, UserWarning, stacklevel=user_stacklevel())


# ---- determinants ------------------------------------------------------------------------------

def det(A: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: N803  (PyTorch's names)
    """The determinant of each matrix of ``A`` (..., n, n).

    The gradient is ``grad * det * A^-T``; at an exactly singular matrix it is 0 (as PyTorch's
    first derivative), and under ``create_graph`` the cofactor matrix from the SVD.

    Example:
        >>> det(tensor([[2.0, 1.0], [1.0, 3.0]]))
        tensor(5.)
    """
    U.check_matrix("linalg.det", A, square=True, complex_ok=True)
    U.no_half(A, kernel="lu")
    return U.finish("linalg_det", D.Det.apply(A), out, (A,))


def linalg_slogdet(A: Tensor, *, out: Any = None) -> Any:  # noqa: N803
    """``linalg.slogdet``: ``(sign, logabsdet)`` of each matrix, ``det = sign *
    exp(logabsdet)``; a singular matrix gives ``(0, -inf)``. Only ``logabsdet`` has a gradient
    (``A^-T`` times it)."""
    return _slogdet(A, out, U.linalg_slogdet, "linalg_slogdet")


def _slogdet(A: Tensor, out: Any, kind: Any, fn: str) -> Any:  # noqa: N803
    U.check_matrix("linalg.slogdet", A, square=True, complex_ok=True)
    U.no_half(A, fn="linalg.slogdet")
    sign, logabs = D.Slogdet.apply(A)
    return U.finish(fn, kind((sign, logabs)), out, (A,))


def slogdet(input: Tensor, *, out: Any = None) -> Any:  # noqa: A002
    """``torch.slogdet``: ``linalg.slogdet`` returning ``torch.return_types.slogdet``."""
    return _slogdet(input, out, U.slogdet_type, "slogdet")


def logdet(input: Tensor) -> Tensor:  # noqa: A002
    """``log(det(A))``: NaN where a real determinant is negative, -inf where it is 0; complex
    for a complex matrix."""
    U.check_matrix("logdet", input, square=True, complex_ok=True)
    U.no_half(input, fn="logdet")
    sign, logabs = D.Slogdet.apply(input)
    if input.dtype.is_complex:  # NOTE: log(det) on the principal branch: log|det| + i arg(det)
        # (a singular matrix: -inf + nan j, as PyTorch's)
        from .complex import complex as _complex  # NOTE: late: complex builds on decomp's peers

        return _complex(logabs, sign.angle().where(sign != 0, float("nan")))
    return logabs.where(sign != -1, float("nan"))


# ---- inverses ----------------------------------------------------------------------------------

def _check_inv(A: Tensor) -> None:  # noqa: N803
    """PyTorch's checks of ``linalg.inv`` (``inv_ex``'s messages name ``linalg.inv`` too)."""
    U.check_matrix("linalg.inv", A, square=True, complex_ok=True)
    U.no_half(A, fn="linalg.inv")


def inv(A: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: N803
    """The inverse of each matrix; a singular one raises ``LinAlgError`` with PyTorch's message
    (the index of LAPACK's first zero pivot). Gradient ``-A^-T grad A^-T``."""
    _check_inv(A)
    return U.finish("linalg_inv", D.InvEx.apply(A, check=True)[0], out, (A,))


def inv_ex(A: Tensor, *, check_errors: bool = False, out: Any = None) -> Any:  # noqa: N803
    """``(inverse, info)``: ``info`` (int32, per matrix) is 0, or LAPACK's index of the first
    zero pivot of a singular matrix (whose inverse is then NaN here: PyTorch's holds inf/NaN
    garbage). ``check_errors`` raises instead."""
    _check_inv(A)
    try:
        inverse, info = D.InvEx.apply(A, check=bool(check_errors))
    except D.LinAlgError as e:
        raise D.LinAlgError(str(e).replace("linalg.inv:", "linalg.inv_ex:", 1)) from None
    return U.finish("linalg_inv_ex", U.linalg_inv_ex((inverse, info)), out, (A,),
                    exact=(False, True))


def inverse(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``torch.inverse``: ``linalg.inv``."""
    return inv(input, out=out)


# ---- linear solves -----------------------------------------------------------------------------

def _solve_args(fn: str, A: Tensor, B: Tensor, left: bool) -> bool:  # noqa: N803
    """PyTorch's checks of ``linalg.solve(A, B)``; True when ``B`` is a (batch of) vector(s)."""
    expect_tensor("linalg_solve", "A", 1, A)
    expect_tensor("linalg_solve", "B", 2, B)
    U.check_floating("linalg.solve", A, complex_ok=True)
    U.check_same_dtype("linalg.solve", A, B)
    U.check_same_device(A, B)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    U.check_matrix("linalg.solve", A, square=True, floating=False)
    if not vector and B.ndim < 2:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    b_rows, b_cols = (B.shape[-1], 1) if vector else tuple(B.shape[-2:])
    n = A.shape[-1]
    if (b_rows if left else b_cols) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {b_rows}x{b_cols})")
    U.broadcast_batch(fn, tuple(B.shape[:-1] if vector else B.shape[:-2]), tuple(A.shape[:-2]))
    if not left and vector:
        raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not "
                           "supported for left=False. In this case linalg.solve is equivalent to "
                           "B / A.squeeze(-1)")
    U.no_half(A, kernel="lu")
    return vector


def solve(A: Tensor, B: Tensor, *, left: bool = True,  # noqa: N803
          out: Tensor | None = None) -> Tensor:
    """``X`` with ``A X = B`` (``left``) or ``X A = B``; batch dims broadcast; ``B`` may be a
    (batch of) vector(s). A singular ``A`` raises ``LinAlgError``."""
    vector = _solve_args("linalg.solve", A, B, left)
    x = D.SolveEx.apply(A, B, left=left, vector=vector, check=True)[0]
    return U.finish("linalg_solve", x, out, (A, B))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False,  # noqa: N803
             out: Any = None) -> Any:
    """``(result, info)`` of ``solve``; ``info`` is LAPACK's (0, or the first zero pivot)."""
    vector = _solve_args("linalg.solve_ex", A, B, left)
    try:
        x, info = D.SolveEx.apply(A, B, left=left, vector=vector, check=bool(check_errors))
    except D.LinAlgError as e:
        raise D.LinAlgError(str(e).replace("torch.linalg.solve:", "torch.linalg.solve_ex:", 1)) \
            from None
    return U.finish("linalg_solve_ex", U.linalg_solve_ex((x, info)), out, (A, B),
                    exact=(False, True))


_MISSING: Any = object()


def solve_triangular(A: Tensor, B: Tensor, *,  # noqa: N803
                     upper: bool = _MISSING, left: bool = True, unitriangular: bool = False,
                     out: Tensor | None = None) -> Tensor:
    """``X`` with ``T X = B`` (``left``) or ``X T = B``, ``T`` the upper (``upper``) or lower
    triangle of ``A``, with ones on the diagonal when ``unitriangular``. ``B`` takes ``A``'s
    dtype; batch dims broadcast. A zero on the diagonal gives inf/NaN, as BLAS trsm."""
    fn = "linalg.solve_triangular"
    if upper is _MISSING:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: '
                        '"upper"')
    expect_tensor("linalg_solve_triangular", "A", 1, A)
    expect_tensor("linalg_solve_triangular", "B", 2, B)
    for name, t in (("A", A), ("B", B)):
        if t.ndim < 2:
            raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    U.check_matrix(fn, A, square=True, floating=False)
    U.check_same_device(A, B)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {B.shape[-2]}x"
                           f"{B.shape[-1]})")
    U.broadcast_batch(fn, tuple(B.shape[:-2]), tuple(A.shape[:-2]))
    if not (A.dtype.is_floating_point or A.dtype.is_complex) or A.dtype.name == "float16":
        raise NotImplementedError(f"\"triangular_solve_{A._device.type}\" not implemented for "
                                  f"'{_type_name(A.dtype)}'")
    if B.dtype is not A.dtype:
        B = B.to(A.dtype)
    x = D.SolveTriangular.apply(A, B, upper=bool(upper), left=bool(left),
                                unitriangular=bool(unitriangular))
    return U.finish("linalg_solve_triangular", x, out, (A, B))


def triangular_solve(b: Tensor, A: Tensor,  # noqa: N803
                     upper: bool = True, transpose: bool = False, unitriangular: bool = False,
                     *, out: Any = None) -> Any:
    """The deprecated ``torch.triangular_solve``: ``(solution, cloned_coefficient)`` with
    ``op(A) X = b``, ``op`` the transpose when ``transpose``."""
    _warn_once("triangular_solve", _TRIANGULAR_SOLVE_DEPRECATED)
    expect_tensor("triangular_solve", "input", 1, b)
    expect_tensor("triangular_solve", "A", 2, A)
    for name, t in (("b", b), ("A", A)):
        if t.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 "
                               f"dimensions, but it has {t.ndim} dimensions instead")
    _solver_checks("triangular_solve", b, A)
    x, coef = D.TriangularSolve.apply(b, A, upper=bool(upper), transpose=bool(transpose),
                                      unitriangular=bool(unitriangular))
    return U.finish("triangular_solve", U.triangular_solve_type((x, coef)), out, (b, A))


_TRIANGULAR_SOLVE_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
    "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
    "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).")


def _solver_checks(fn: str, b: Tensor, A: Tensor) -> None:  # noqa: N803
    """The checks ``triangular_solve`` and ``cholesky_solve`` share (PyTorch's
    linearSolveCheckInputs)."""
    U.check_same_device(b, A)
    if b.dtype is not A.dtype:
        raise RuntimeError("Expected b and A to have the same dtype, but found b of type "
                           f"{_type_name(b.dtype)} and A of type {_type_name(A.dtype)} "
                           "instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} "
                           f"by {A.shape[-1]} matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {fn}: each A matrix is {A.shape[-1]} "
                           f"by {A.shape[-1]} but each b matrix is {b.shape[-2]} by "
                           f"{b.shape[-1]}")
    U.broadcast_batch(fn, tuple(b.shape[:-2]), tuple(A.shape[:-2]))
    if not A.dtype.is_floating_point or A.dtype.name == "float16":
        raise NotImplementedError(f"\"{fn}_{A._device.type}\" not implemented for "
                                  f"'{_type_name(A.dtype)}'")


# ---- Cholesky ----------------------------------------------------------------------------------

def _check_cholesky(fn: str, A: Tensor) -> None:  # noqa: N803
    U.check_matrix(fn, A, square=True, floating=fn != "cholesky", complex_ok=True)
    if A.dtype.is_complex:
        return
    if not A.dtype.is_floating_point or A.dtype.name == "float16":
        raise NotImplementedError(f"\"cholesky_{A._device.type}\" not implemented for "
                                  f"'{_type_name(A.dtype)}'")


def linalg_cholesky(A: Tensor, *, upper: bool = False,  # noqa: N803
                    out: Tensor | None = None) -> Tensor:
    """``linalg.cholesky``: the lower Cholesky factor ``L`` of each symmetric positive-definite
    matrix, ``A = L L^T``, read from the lower triangle (``upper``: ``L^T``, read from the upper
    triangle). A matrix that is not positive-definite raises ``LinAlgError`` naming its first
    failing leading minor. The gradient is PyTorch's (symmetric)."""
    _check_cholesky("linalg.cholesky", A)
    return U.finish("linalg_cholesky", D.CholeskyEx.apply(A, upper=bool(upper))[0], out, (A,))


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False,  # noqa: N803
                out: Any = None) -> Any:
    """``(L, info)``: ``info`` 0, or the order of the first leading minor that is not
    positive-definite (``L`` is then NaN here; PyTorch's holds a partial factorization)."""
    _check_cholesky("linalg.cholesky", A)
    L, info = D.CholeskyEx.apply(A, upper=bool(upper), check=bool(check_errors),
                                 fn="linalg.cholesky_ex")
    return U.finish("linalg_cholesky_ex", U.linalg_cholesky_ex((L, info)), out, (A,),
                    exact=(False, True))


def cholesky(input: Tensor, upper: bool = False, *,  # noqa: A002
             out: Tensor | None = None) -> Tensor:
    """The deprecated ``torch.cholesky`` (CholeskyBackward0)."""
    _warn_once("cholesky", _CHOLESKY_DEPRECATED)
    _check_cholesky("cholesky", input)
    L = D.CholeskyEx.apply(input, upper=bool(upper), fn="cholesky", single=True)
    return U.finish("cholesky", L, out, (input,))


_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
    "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
    "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for "
    "all valid (symmetric positive definite) inputs.")


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False, *,  # noqa: A002
                   out: Tensor | None = None) -> Tensor:
    """``X`` with ``L L^T X = B`` for ``B = input`` and the Cholesky factor ``L = input2``
    (``U^T U`` when ``upper``); batch dims broadcast."""
    expect_tensor("cholesky_solve", "input", 1, input)
    expect_tensor("cholesky_solve", "input2", 2, input2)
    for name, t in (("b", input), ("u", input2)):
        if t.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has {t.ndim} "
                               "dimensions instead")
    _solver_checks("cholesky_solve", input, input2)
    x = D.CholeskySolve.apply(input, input2, upper=bool(upper))
    return U.finish("cholesky_solve", x, out, (input, input2))


def cholesky_inverse(input: Tensor, upper: bool = False, *,  # noqa: A002
                     out: Tensor | None = None) -> Tensor:
    """``(L L^T)^-1`` from the Cholesky factor ``L = input`` (``(U^T U)^-1`` when ``upper``)."""
    U.check_matrix("cholesky_inverse", input, square=True, floating=False)
    if not input.dtype.is_floating_point or input.dtype.name == "float16":
        raise NotImplementedError(f"\"cholesky_inverse_out_{input._device.type}\" not "
                                  f"implemented for '{_type_name(input.dtype)}'")
    x = D.CholeskyInverse.apply(input, upper=bool(upper))
    return U.finish("cholesky_inverse", x, out, (input,))


# ---- exports -----------------------------------------------------------------------------------

from . import decomp_norms, decomp_spectral  # noqa: E402  (they build on the above)
from .decomp_norms import matrix_power  # noqa: E402
from .decomp_spectral import matrix_exp, pinverse, qr, svd  # noqa: E402

__all__: list[str] = [
    "det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve", "cholesky_inverse",
    "triangular_solve", "qr", "svd", "pinverse", "matrix_power", "matrix_exp",
]
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "det": det, "logdet": logdet, "slogdet": slogdet, "inverse": inverse,
    "cholesky": cholesky, "cholesky_solve": cholesky_solve,
    "cholesky_inverse": cholesky_inverse, "triangular_solve": triangular_solve,
    **decomp_spectral.TENSOR_METHODS, **decomp_norms.TENSOR_METHODS,
}
