"""``torch.linalg``: norms, inverses, solves, decompositions and matrix functions, with PyTorch's
gradient formulas (LAPACK through NumPy on the CPU, cuSOLVER through CuPy on CUDA; the ops live
in ``ops/decomp.py``, the argument handling in ``functions/decomp.py``).

Complex matrices: ``det``, ``slogdet``, ``inv``, ``inv_ex``, ``solve``, ``solve_ex``,
``solve_triangular``, ``cholesky``, ``cholesky_ex``, ``qr``, ``svd``, ``svdvals``, ``eig``,
``eigvals``, ``eigh``, ``eigvalsh``, ``matrix_exp``, ``matrix_norm``, ``norm``, ``cond``,
``vecdot``, ``tensorinv`` and ``tensorsolve`` take them, with PyTorch's complex gradients (and
its refusal of losses that depend on eigen- or singular vectors' free phases); ``pinv``,
``lstsq`` and ``matrix_rank`` refuse them as not supported yet.

Not here: ``lu``, ``lu_factor``, ``lu_solve`` and ``ldl_*`` (NumPy exposes no LU or LDL
routines).
"""

from __future__ import annotations

from ..functions.decomp import (
    det, inv, inv_ex, linalg_cholesky as cholesky, cholesky_ex, linalg_slogdet as slogdet,
    solve, solve_ex, solve_triangular,
)
from ..functions.decomp_norms import (
    cond, cross, matrix_norm, matrix_power, multi_dot, norm, tensorinv, tensorsolve, vander,
    vecdot, vector_norm,
)
from ..functions.decomp_spectral import (
    eig, eigh, eigvals, eigvalsh, linalg_qr as qr, linalg_svd as svd, lstsq, matrix_exp, matrix_rank, pinv,
    svdvals,
)
from ..functions.householder import householder_product
from ..functions.linalg import matmul
from ..ops.decomp import LinAlgError
from ._diagonal import diagonal

__all__: list[str] = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
    "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "lstsq", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
    "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
    "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
    "vector_norm",
]
