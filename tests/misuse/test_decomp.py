"""Misuse catalogue: torch.linalg and the decompositions' torch.* names. Every refusal PyTorch
makes of a bad argument (too few dims, non-square, integer or float16 dtypes, mismatched
dtypes and shapes, unknown modes, orders and drivers, singular and non-positive-definite
matrices) must be ours, with the same exception type and first sentence; legal corner cases
(empty matrices, vector right-hand sides, broadcasting, legacy keyword forms) must run and
agree.

``torch.linalg.LinAlgError`` is PyTorch's class (not ours): the programs turn it into a
plain RuntimeError carrying the message, after checking it is the library's LinAlgError.
"""

from __future__ import annotations

import warnings
from typing import Any

from tests.misuse._catalogue import Case, catalogue_test


def _x(T: Any, dev: str, *shape: int, dtype: str = "float32", grad: bool = False) -> Any:
    """A deterministic well-conditioned tensor of ``shape`` (diagonally dominant squares)."""
    n = 1
    for s in shape:
        n *= s
    x = (T.arange(n, dtype=T.float64, device=dev).reshape(shape) % 7 - 3) / 4
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        x = x + 3 * T.eye(shape[-1], dtype=T.float64, device=dev)
    return x.to(getattr(T, dtype)).requires_grad_(grad)


def _lin(fn: Any) -> Case:
    """``fn(T, dev)`` with the library's LinAlgError raised as a RuntimeError of its text."""

    def run(T: Any, dev: str) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return fn(T, dev)
        except T.linalg.LinAlgError as e:
            raise RuntimeError(f"LinAlgError: {e}") from None

    return run


def _quiet(fn: Any) -> Case:
    def run(T: Any, dev: str) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(T, dev)

    return run


SQUARE_FNS = {
    "det": lambda T, a: T.linalg.det(a),
    "slogdet": lambda T, a: T.linalg.slogdet(a),
    "logdet": lambda T, a: T.logdet(a),
    "inv": lambda T, a: T.linalg.inv(a),
    "inv_ex": lambda T, a: T.linalg.inv_ex(a),
    "inverse": lambda T, a: T.inverse(a),
    "cholesky": lambda T, a: T.linalg.cholesky(a),
    "cholesky_ex": lambda T, a: T.linalg.cholesky_ex(a),
    "torch_cholesky": lambda T, a: T.cholesky(a),
    "eigh": lambda T, a: T.linalg.eigh(a),
    "eigvalsh": lambda T, a: T.linalg.eigvalsh(a),
    "matrix_exp": lambda T, a: T.linalg.matrix_exp(a),
    "matrix_power": lambda T, a: T.linalg.matrix_power(a, 2),
    "matrix_power_neg": lambda T, a: T.linalg.matrix_power(a, -1),
    "cholesky_inverse": lambda T, a: T.cholesky_inverse(a),
    "solve": lambda T, a: T.linalg.solve(a, a),
    "solve_triangular": lambda T, a: T.linalg.solve_triangular(a, a, upper=True),
}
ANY_FNS = {
    "qr": lambda T, a: T.linalg.qr(a),
    "torch_qr": lambda T, a: T.qr(a),
    "svd": lambda T, a: T.linalg.svd(a),
    "torch_svd": lambda T, a: T.svd(a),
    "svdvals": lambda T, a: T.linalg.svdvals(a),
    "pinv": lambda T, a: T.linalg.pinv(a),
    "pinverse": lambda T, a: T.pinverse(a),
    "matrix_rank": lambda T, a: T.linalg.matrix_rank(a),
    "matrix_norm": lambda T, a: T.linalg.matrix_norm(a),
    "matrix_norm_2": lambda T, a: T.linalg.matrix_norm(a, 2),
    "cond": lambda T, a: T.linalg.cond(a),
    "lstsq": lambda T, a: T.linalg.lstsq(a, a, driver="gels"),  # NOTE: CUDA takes gels only
}

BAD_INPUTS = {
    "1d": lambda T, dev: _x(T, dev, 3),
    "0d": lambda T, dev: _x(T, dev),
    "nonsquare": lambda T, dev: _x(T, dev, 2, 3),
    "long": lambda T, dev: _x(T, dev, 3, 3, dtype="int64"),
    "half": lambda T, dev: _x(T, dev, 3, 3, dtype="float16"),
    "long_1d": lambda T, dev: _x(T, dev, 3, dtype="int64"),
    "long_nonsquare": lambda T, dev: _x(T, dev, 2, 3, dtype="int64"),
    "bool": lambda T, dev: _x(T, dev, 2, 2) > 0,
}


def _signless(out: Any) -> Any:
    """Factors compared up to the signs of singular vectors and eigenvectors (LAPACK builds
    differ there): the absolute values of float tensors."""
    if isinstance(out, tuple):
        return tuple(_signless(o) for o in out)
    return out.abs() if out.is_floating_point() else out


def _apply(fn: Any, make: Any) -> Case:
    return _lin(lambda T, dev: _signless(fn(T, make(T, dev))))


CASES: dict[str, Case] = {}
for _fname, _fn in {**SQUARE_FNS, **ANY_FNS}.items():
    for _iname, _make in BAD_INPUTS.items():
        if (_fname, _iname) == ("matrix_power", "bool"):
            continue  # NOTE: PyTorch names its CPU and CUDA kernels differently here
        CASES[f"{_fname}_{_iname}"] = _apply(_fn, _make)
    CASES[f"{_fname}_empty"] = _apply(_fn, lambda T, dev: _x(T, dev, 0, 0))
    CASES[f"{_fname}_batch_empty"] = _apply(_fn, lambda T, dev: _x(T, dev, 0, 2, 2))
    CASES[f"{_fname}_ok"] = _apply(_fn, lambda T, dev: _x(T, dev, 2, 3, 3))

_SING = [[1.0, 2.0], [2.0, 4.0]]
_NOT_PD = [[1.0, 2.0], [2.0, 1.0]]


def _m(T: Any, dev: str, data: Any) -> Any:
    return T.tensor(data, device=dev)


CASES.update({
    # singular and not positive-definite: LinAlgError messages, batch element prefix
    "inv_singular": _lin(lambda T, d: T.linalg.inv(_m(T, d, _SING))),
    "inv_zero": _lin(lambda T, d: T.linalg.inv(T.zeros(3, 3, device=d))),
    "inv_batch_singular": _lin(lambda T, d: T.linalg.inv(T.stack([T.eye(2, device=d),
                                                                  _m(T, d, _SING)]))),
    "inv_ex_check": _lin(lambda T, d: T.linalg.inv_ex(_m(T, d, _SING), check_errors=True)),
    "inv_ex_info": _lin(lambda T, d: T.linalg.inv_ex(T.zeros(2, 3, 3, device=d)).info),
    "solve_singular": _lin(lambda T, d: T.linalg.solve(_m(T, d, _SING), T.ones(2, device=d))),
    "solve_batch_singular": _lin(lambda T, d: T.linalg.solve(
        T.stack([T.eye(2, device=d), _m(T, d, _SING)]), T.ones(2, 2, device=d))),
    "solve_ex_check": _lin(lambda T, d: T.linalg.solve_ex(_m(T, d, _SING), T.ones(2, device=d),
                                                          check_errors=True)),
    "solve_ex_info": _lin(lambda T, d: T.linalg.solve_ex(_m(T, d, _SING),
                                                         T.ones(2, device=d)).info),
    "cholesky_not_pd": _lin(lambda T, d: T.linalg.cholesky(_m(T, d, _NOT_PD))),
    "cholesky_batch_not_pd": _lin(lambda T, d: T.linalg.cholesky(
        T.stack([T.eye(2, device=d), -T.eye(2, device=d)]))),
    "cholesky_upper_not_pd": _lin(lambda T, d: T.linalg.cholesky(_m(T, d, _NOT_PD), upper=True)),
    "cholesky_ex_check": _lin(lambda T, d: T.linalg.cholesky_ex(_m(T, d, _NOT_PD),
                                                                check_errors=True)),
    "cholesky_ex_info": _lin(lambda T, d: T.linalg.cholesky_ex(_m(T, d, _NOT_PD)).info),
    "torch_cholesky_not_pd": _lin(lambda T, d: T.cholesky(_m(T, d, _NOT_PD))),
    "cholesky_singular": _lin(lambda T, d: T.linalg.cholesky(T.ones(3, 3, device=d))),
    "cholesky_nan": _lin(lambda T, d: T.linalg.cholesky(T.full((2, 2), float("nan"), device=d))),
    "tensorinv_singular": _lin(lambda T, d: T.linalg.tensorinv(T.zeros(4, 2, 2, device=d), 1)),
    "svd_nan": _lin(lambda T, d: T.linalg.svd(T.full((2, 2), float("nan"), device=d))),
    "svd_inf": _lin(lambda T, d: tuple(T.linalg.svd(
        T.stack([T.eye(2, device=d), T.full((2, 2), float("inf"), device=d)])))[1:2]),
    "svd_batch_inf": _lin(lambda T, d: T.linalg.svdvals(
        T.stack([T.eye(2, device=d), T.full((2, 2), float("inf"), device=d)]))),
    "pinv_nan": _lin(lambda T, d: T.linalg.pinv(T.full((2, 3), float("nan"), device=d))),
    "matrix_rank_nan": _lin(lambda T, d: T.linalg.matrix_rank(T.full((2, 2), float("nan"),
                                                                     device=d))),
    "det_singular": _lin(lambda T, d: T.linalg.det(_m(T, d, _SING))),
    "slogdet_singular": _lin(lambda T, d: tuple(T.linalg.slogdet(_m(T, d, _SING)))),
    "logdet_negative": _lin(lambda T, d: T.logdet(-T.eye(3, device=d))),
    "eigh_nan": _lin(lambda T, d: T.linalg.eigvalsh(T.full((2, 2), float("nan"), device=d))),
    # solve's argument rules
    "solve_dtype": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3), _x(T, d, 3, dtype="float64"))),
    "solve_int_A": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3, dtype="int64"), _x(T, d, 3))),
    "solve_int_B": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3), _x(T, d, 3, dtype="int64"))),
    "solve_shapes": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3), _x(T, d, 2))),
    "solve_shapes_matrix": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3), _x(T, d, 2, 4))),
    "solve_B_0d": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3), _x(T, d))),
    "solve_A_1d": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3), _x(T, d, 3))),
    "solve_batch_mismatch": _lin(lambda T, d: T.linalg.solve(_x(T, d, 2, 3, 3),
                                                             _x(T, d, 4, 3, 1))),
    "solve_broadcast": _lin(lambda T, d: T.linalg.solve(_x(T, d, 2, 1, 3, 3), _x(T, d, 4, 3, 1))),
    "solve_vector_batch": _lin(lambda T, d: T.linalg.solve(_x(T, d, 2, 3, 3), _x(T, d, 2, 3))),
    "solve_vector_broadcast": _lin(lambda T, d: T.linalg.solve(_x(T, d, 2, 3, 3), _x(T, d, 3))),
    "solve_right": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3), _x(T, d, 4, 3), left=False)),
    "solve_right_vector": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3), _x(T, d, 3),
                                                           left=False)),
    "solve_right_shapes": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3), _x(T, d, 3, 4),
                                                           left=False)),
    "solve_half": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3, dtype="float16"),
                                                   _x(T, d, 3, dtype="float16"))),
    "solve_not_tensor": _lin(lambda T, d: T.linalg.solve(_x(T, d, 3, 3), 1.0)),
    # triangular solvers
    "solve_triangular_no_upper": _lin(lambda T, d: T.linalg.solve_triangular(_x(T, d, 3, 3),
                                                                             _x(T, d, 3, 3))),
    "solve_triangular_B_1d": _lin(lambda T, d: T.linalg.solve_triangular(
        _x(T, d, 3, 3), _x(T, d, 3), upper=True)),
    "solve_triangular_A_1d": _lin(lambda T, d: T.linalg.solve_triangular(
        _x(T, d, 3), _x(T, d, 3, 3), upper=True)),
    "solve_triangular_shapes": _lin(lambda T, d: T.linalg.solve_triangular(
        _x(T, d, 3, 3), _x(T, d, 2, 2), upper=True)),
    "solve_triangular_shapes_right": _lin(lambda T, d: T.linalg.solve_triangular(
        _x(T, d, 3, 3), _x(T, d, 2, 2), upper=True, left=False)),
    "solve_triangular_dtypes": _lin(lambda T, d: T.linalg.solve_triangular(
        _x(T, d, 3, 3, dtype="float64"), _x(T, d, 3, 2), upper=False)),
    "solve_triangular_dtypes2": _lin(lambda T, d: T.linalg.solve_triangular(
        _x(T, d, 3, 3), _x(T, d, 3, 2, dtype="int64"), upper=False)),
    "solve_triangular_broadcast": _lin(lambda T, d: T.linalg.solve_triangular(
        _x(T, d, 2, 3, 3), _x(T, d, 4, 1, 3, 2), upper=True)),
    "solve_triangular_batch_mismatch": _lin(lambda T, d: T.linalg.solve_triangular(
        _x(T, d, 2, 3, 3), _x(T, d, 4, 3, 2), upper=True)),
    "triangular_solve_b_1d": _lin(lambda T, d: T.triangular_solve(_x(T, d, 3), _x(T, d, 3, 3))),
    "triangular_solve_A_1d": _lin(lambda T, d: T.triangular_solve(_x(T, d, 3, 3), _x(T, d, 3))),
    "triangular_solve_nonsquare": _lin(lambda T, d: T.triangular_solve(_x(T, d, 3, 3),
                                                                       _x(T, d, 2, 3))),
    "triangular_solve_shapes": _lin(lambda T, d: T.triangular_solve(_x(T, d, 2, 2),
                                                                    _x(T, d, 3, 3))),
    "triangular_solve_int": _lin(lambda T, d: T.triangular_solve(
        _x(T, d, 3, 3, dtype="int64"), _x(T, d, 3, 3, dtype="int64"))),
    "triangular_solve_dtypes": _lin(lambda T, d: T.triangular_solve(
        _x(T, d, 3, 3), _x(T, d, 3, 3, dtype="float64"))),
    "triangular_solve_broadcast": _lin(lambda T, d: T.triangular_solve(_x(T, d, 4, 1, 3, 2),
                                                                       _x(T, d, 2, 3, 3))),
    "cholesky_solve_b_1d": _lin(lambda T, d: T.cholesky_solve(_x(T, d, 3), _x(T, d, 3, 3))),
    "cholesky_solve_L_1d": _lin(lambda T, d: T.cholesky_solve(_x(T, d, 3, 3), _x(T, d, 3))),
    "cholesky_solve_nonsquare": _lin(lambda T, d: T.cholesky_solve(_x(T, d, 3, 3),
                                                                   _x(T, d, 2, 3))),
    "cholesky_solve_shapes": _lin(lambda T, d: T.cholesky_solve(_x(T, d, 2, 2), _x(T, d, 3, 3))),
    "cholesky_solve_int": _lin(lambda T, d: T.cholesky_solve(
        _x(T, d, 3, 3, dtype="int64"), _x(T, d, 3, 3, dtype="int64"))),
    "cholesky_solve_half": _lin(lambda T, d: T.cholesky_solve(
        _x(T, d, 3, 3, dtype="float16"), _x(T, d, 3, 3, dtype="float16"))),
    "cholesky_solve_dtypes": _lin(lambda T, d: T.cholesky_solve(_x(T, d, 3, 3),
                                                                _x(T, d, 3, 3, dtype="float64"))),
    "cholesky_solve_broadcast": _lin(lambda T, d: T.cholesky_solve(_x(T, d, 4, 1, 3, 2),
                                                                   _x(T, d, 2, 3, 3))),
    # QR, SVD, eigh arguments
    "qr_mode": _lin(lambda T, d: T.linalg.qr(_x(T, d, 3, 2), mode="full")),
    "qr_mode_int": _lin(lambda T, d: T.linalg.qr(_x(T, d, 3, 3, dtype="int64"), mode="x")),
    "qr_mode_half": _lin(lambda T, d: T.linalg.qr(_x(T, d, 3, 3, dtype="float16"), mode="x")),
    "qr_r": _lin(lambda T, d: tuple(T.linalg.qr(_x(T, d, 4, 3), mode="r"))),
    "qr_complete": _lin(lambda T, d: tuple(T.linalg.qr(_x(T, d, 4, 3), mode="complete"))[1]),
    "qr_complete_empty": _lin(lambda T, d: tuple(T.linalg.qr(_x(T, d, 3, 0), mode="complete"))),
    "qr_r_backward": _lin(lambda T, d: (lambda x: T.autograd.grad(
        T.linalg.qr(x, mode="r")[1].sum(), x))(_x(T, d, 4, 3, grad=True))),
    "qr_complete_backward": _lin(lambda T, d: (lambda x: T.autograd.grad(
        T.linalg.qr(x, mode="complete")[0].sum(), x))(_x(T, d, 4, 3, grad=True))),
    "svd_driver_cpu": _lin(lambda T, d: T.linalg.svd(_x(T, d, 3, 3).cpu(), driver="gesvd")),
    "svdvals_driver_cpu": _lin(lambda T, d: T.linalg.svdvals(_x(T, d, 3, 3).cpu(),
                                                             driver="gesvdj")),
    "torch_svd_nouv": _lin(lambda T, d: tuple(T.svd(_x(T, d, 2, 4, 3), compute_uv=False))),
    "svd_empty": _lin(lambda T, d: tuple(T.linalg.svd(_x(T, d, 0, 3)))),
    "svd_empty_reduced": _lin(lambda T, d: tuple(T.linalg.svd(_x(T, d, 2, 0, 3),
                                                              full_matrices=False))),
    "eigh_uplo": _lin(lambda T, d: T.linalg.eigh(_x(T, d, 3, 3), UPLO="X")),
    "eigh_uplo_int": _lin(lambda T, d: T.linalg.eigh(_x(T, d, 3, 3, dtype="int64"), UPLO="X")),
    "eigh_uplo_1d": _lin(lambda T, d: T.linalg.eigh(_x(T, d, 3), UPLO="X")),
    "eigh_uplo_lower": _lin(lambda T, d: T.linalg.eigvalsh(_x(T, d, 3, 3), "u")),
    "eigh_upper": _lin(lambda T, d: T.linalg.eigvalsh(_x(T, d, 3, 3), UPLO="U")),
    # pinv, matrix_rank, lstsq arguments
    "pinv_rcond_and_atol": _lin(lambda T, d: T.linalg.pinv(_x(T, d, 3, 3), rcond=0.1, atol=0.1)),
    "pinv_rcond": _lin(lambda T, d: T.linalg.pinv(_x(T, d, 3, 4), 0.5)),
    "pinv_atol": _lin(lambda T, d: T.linalg.pinv(_x(T, d, 3, 4), atol=0.5)),
    "pinv_atol_tensor": _lin(lambda T, d: T.linalg.pinv(_x(T, d, 2, 3, 3),
                                                        atol=T.tensor([0.1, 3.0], device=d))),
    "pinv_rtol": _lin(lambda T, d: T.linalg.pinv(_x(T, d, 3, 4), rtol=0.3)),
    "pinv_hermitian_nonsquare": _lin(lambda T, d: T.linalg.pinv(_x(T, d, 2, 3), hermitian=True)),
    "pinv_hermitian": _lin(lambda T, d: T.linalg.pinv(_x(T, d, 3, 3) + _x(T, d, 3, 3).mT,
                                                      hermitian=True)),
    "pinverse_rcond": _lin(lambda T, d: T.pinverse(_x(T, d, 4, 3), rcond=0.2)),
    "matrix_rank_tol_and_atol": _lin(lambda T, d: T.linalg.matrix_rank(_x(T, d, 3, 3), tol=0.1,
                                                                       atol=0.1)),
    "matrix_rank_tol": _lin(lambda T, d: T.linalg.matrix_rank(_x(T, d, 3, 4), 2.0)),
    "matrix_rank_tol_tensor": _lin(lambda T, d: T.linalg.matrix_rank(
        _x(T, d, 2, 3, 3), tol=T.tensor([0.1, 3.0], device=d))),
    "matrix_rank_atol_negative": _lin(lambda T, d: T.linalg.matrix_rank(_x(T, d, 3, 3),
                                                                        atol=-1.0)),
    "matrix_rank_rtol": _lin(lambda T, d: T.linalg.matrix_rank(_x(T, d, 4, 3), rtol=0.9)),
    "matrix_rank_hermitian_nonsquare": _lin(lambda T, d: T.linalg.matrix_rank(
        _x(T, d, 2, 3), hermitian=True)),
    "matrix_rank_zero": _lin(lambda T, d: T.linalg.matrix_rank(T.zeros(3, 3, device=d))),
    "lstsq_1d": _lin(lambda T, d: T.linalg.lstsq(_x(T, d, 3), _x(T, d, 3))),
    "lstsq_B_0d": _lin(lambda T, d: T.linalg.lstsq(_x(T, d, 3, 3), _x(T, d))),
    "lstsq_dtype": _lin(lambda T, d: T.linalg.lstsq(_x(T, d, 3, 3),
                                                    _x(T, d, 3, 3, dtype="float64"))),
    "lstsq_rows": _lin(lambda T, d: T.linalg.lstsq(_x(T, d, 3, 2), _x(T, d, 4, 1))),
    "lstsq_driver": _lin(lambda T, d: T.linalg.lstsq(_x(T, d, 3, 2), _x(T, d, 3, 1),
                                                     driver="foo")),
    "lstsq_vector": _lin(lambda T, d: tuple(T.linalg.lstsq(_x(T, d, 4, 2), _x(T, d, 4),
                                                           driver="gels"))),
    "lstsq_gels_vector": _lin(lambda T, d: tuple(T.linalg.lstsq(_x(T, d, 2, 4, 3), _x(T, d, 2, 4),
                                                                driver="gels"))),
    # norms
    "vector_norm_str": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 3), "fro")),
    "vector_norm_int": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 3, dtype="int64"))),
    "vector_norm_int_dtype": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 3, dtype="int64"),
                                                                    dtype=T.float32)),
    "vector_norm_dtype_int": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 3), dtype=T.int64)),
    "vector_norm_dtype": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 3), dtype=T.float64)),
    "vector_norm_empty_inf": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 0, 3),
                                                                    float("inf"))),
    "vector_norm_empty_inf_dim": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 0, 3),
                                                                        float("inf"), dim=1)),
    "vector_norm_empty_inf_dim0": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 0, 3),
                                                                         float("inf"), dim=0)),
    "vector_norm_empty_neg": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 0, 3),
                                                                    -float("inf"))),
    "vector_norm_empty_2": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 0, 3))),
    "vector_norm_dim_dup": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 3, 3), dim=(0, 0))),
    "vector_norm_dim_out": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 3, 3), dim=2)),
    "vector_norm_0d": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d), 3)),
    "vector_norm_zero_ord": _lin(lambda T, d: T.linalg.vector_norm(_x(T, d, 4, 3), 0, dim=0)),
    "matrix_norm_dims3": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 2, 2, 2), dim=(0, 1, 2))),
    "matrix_norm_dims_same": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 3, 3), dim=(0, 0))),
    "matrix_norm_dims_same_neg": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 3, 3),
                                                                        dim=(1, -1))),
    "matrix_norm_dim_int": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 3, 3), dim=0)),
    "matrix_norm_ord": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 3, 3), 3)),
    "matrix_norm_ord_str": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 3, 3), "abc")),
    "matrix_norm_ord_float": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 3, 3), 1.5)),
    "matrix_norm_int_dtype": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 3, 3, dtype="int64"),
                                                                    dtype=T.float32)),
    "matrix_norm_half_fro": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 3, 3,
                                                                      dtype="float16"))),
    "matrix_norm_keepdim_2": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 2, 3, 4), 2,
                                                                    dim=(0, 2), keepdim=True)),
    "matrix_norm_empty_1": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 0, 3), 1)),
    "matrix_norm_empty_nuc": _lin(lambda T, d: T.linalg.matrix_norm(_x(T, d, 0, 3), "nuc")),
    "norm_dims3": _lin(lambda T, d: T.linalg.norm(_x(T, d, 3, 3), dim=(0, 1, 0))),
    "norm_int": _lin(lambda T, d: T.linalg.norm(_x(T, d, 3, dtype="int64"))),
    "norm_str_1d": _lin(lambda T, d: T.linalg.norm(_x(T, d, 3), "nuc")),
    "norm_3d_ord": _lin(lambda T, d: T.linalg.norm(_x(T, d, 2, 2, 2), 2)),
    "norm_3d": _lin(lambda T, d: T.linalg.norm(_x(T, d, 2, 2, 2))),
    "norm_dim2_ord1": _lin(lambda T, d: T.linalg.norm(_x(T, d, 2, 2, 2), 1, dim=(0, 1))),
    "norm_dim1_str": _lin(lambda T, d: T.linalg.norm(_x(T, d, 2, 2, 2), "fro", dim=1)),
    "norm_dim2": _lin(lambda T, d: T.linalg.norm(_x(T, d, 2, 2, 2), dim=(0, 1))),
    "norm_ord_1d": _lin(lambda T, d: T.linalg.norm(_x(T, d, 5), -1)),
    "norm_ord_2d": _lin(lambda T, d: T.linalg.norm(_x(T, d, 3, 3), float("-inf"))),
    "cond_ord": _lin(lambda T, d: T.linalg.cond(_x(T, d, 3, 3), 3)),
    "cond_str": _lin(lambda T, d: T.linalg.cond(_x(T, d, 3, 3), "abc")),
    "cond_fro_nonsquare": _lin(lambda T, d: T.linalg.cond(_x(T, d, 2, 3), "fro")),
    "cond_singular": _lin(lambda T, d: T.linalg.cond(T.zeros(2, 2, device=d), "fro")),
    "cond_singular_2": _lin(lambda T, d: T.linalg.cond(T.zeros(2, 2, device=d))),
    "cond_1": _lin(lambda T, d: T.linalg.cond(_x(T, d, 2, 3, 3), 1)),
    "cond_nonsquare": _lin(lambda T, d: T.linalg.cond(_x(T, d, 2, 3), -2)),
    # products
    "matrix_power_float_n": _lin(lambda T, d: T.linalg.matrix_power(_x(T, d, 3, 3), 2.0)),
    "matrix_power_int": _lin(lambda T, d: T.linalg.matrix_power(_x(T, d, 3, 3, dtype="int64"), 3)),
    "matrix_power_zero": _lin(lambda T, d: T.linalg.matrix_power(_x(T, d, 2, 3, 3), 0)),
    "matrix_power_zero_grad": _lin(lambda T, d: T.linalg.matrix_power(
        _x(T, d, 3, 3, grad=True), 0).grad_fn.name()),
    "matrix_power_one_grad": _lin(lambda T, d: T.linalg.matrix_power(
        _x(T, d, 3, 3, grad=True), 1).grad_fn.name()),
    "matrix_power_big": _lin(lambda T, d: T.linalg.matrix_power(_x(T, d, 3, 3) / 3, 13)),
    "matrix_power_neg_int": _lin(lambda T, d: T.linalg.matrix_power(
        _x(T, d, 3, 3, dtype="int64"), -2)),
    "multi_dot_one": _lin(lambda T, d: T.linalg.multi_dot([_x(T, d, 3, 3)])),
    "multi_dot_none": _lin(lambda T, d: T.linalg.multi_dot([])),
    "multi_dot_0d": _lin(lambda T, d: T.linalg.multi_dot([_x(T, d, 3, 3), _x(T, d)])),
    "multi_dot_3d": _lin(lambda T, d: T.linalg.multi_dot([_x(T, d, 2, 3, 3), _x(T, d, 3, 3)])),
    "multi_dot_mid_1d": _lin(lambda T, d: T.linalg.multi_dot([_x(T, d, 3, 3), _x(T, d, 3),
                                                              _x(T, d, 3, 3)])),
    "multi_dot_shapes": _lin(lambda T, d: T.linalg.multi_dot([_x(T, d, 3, 2), _x(T, d, 3, 3)])),
    "multi_dot_dtypes": _lin(lambda T, d: T.linalg.multi_dot([_x(T, d, 3, 3),
                                                              _x(T, d, 3, 3, dtype="float64")])),
    "multi_dot_not_tensor": _lin(lambda T, d: T.linalg.multi_dot([_x(T, d, 3, 3), 3])),
    "multi_dot_vectors": _lin(lambda T, d: T.linalg.multi_dot([_x(T, d, 3), _x(T, d, 3)])),
    "multi_dot_vec_mat": _lin(lambda T, d: T.linalg.multi_dot([_x(T, d, 3), _x(T, d, 3, 4),
                                                               _x(T, d, 4, 2), _x(T, d, 2, 5),
                                                               _x(T, d, 5)])),
    "multi_dot_int": _lin(lambda T, d: T.linalg.multi_dot([_x(T, d, 3, 3, dtype="int64"),
                                                           _x(T, d, 3, 3, dtype="int64")])),
    "vecdot_sizes": _lin(lambda T, d: T.linalg.vecdot(_x(T, d, 3), _x(T, d, 4))),
    "vecdot_int": _lin(lambda T, d: T.linalg.vecdot(_x(T, d, 3, dtype="int64"),
                                                    _x(T, d, 3, dtype="int64"))),
    "vecdot_dtypes": _lin(lambda T, d: T.linalg.vecdot(_x(T, d, 3), _x(T, d, 3, dtype="float64"))),
    "vecdot_broadcast": _lin(lambda T, d: T.linalg.vecdot(_x(T, d, 2, 3), _x(T, d, 3))),
    "vecdot_broadcast_bad": _lin(lambda T, d: T.linalg.vecdot(_x(T, d, 2, 3), _x(T, d, 2))),
    "vecdot_dim": _lin(lambda T, d: T.linalg.vecdot(_x(T, d, 2, 3), _x(T, d, 2, 3), dim=0)),
    "vecdot_0d": _lin(lambda T, d: T.linalg.vecdot(_x(T, d), _x(T, d))),
    "vecdot_1d_node": _lin(lambda T, d: T.linalg.vecdot(_x(T, d, 3, grad=True),
                                                        _x(T, d, 3)).grad_fn.name()),
    "cross_2": _lin(lambda T, d: T.linalg.cross(_x(T, d, 2), _x(T, d, 2))),
    "cross_dim": _lin(lambda T, d: T.linalg.cross(_x(T, d, 3, 2), _x(T, d, 3, 2))),
    "cross_dim0": _lin(lambda T, d: T.linalg.cross(_x(T, d, 3, 2), _x(T, d, 3, 2), dim=0)),
    "cross_ndim": _lin(lambda T, d: T.linalg.cross(_x(T, d, 3, 3), _x(T, d, 3))),
    "cross_broadcast": _lin(lambda T, d: T.linalg.cross(_x(T, d, 2, 1, 3), _x(T, d, 1, 4, 3))),
    "cross_broadcast_bad": _lin(lambda T, d: T.linalg.cross(_x(T, d, 2, 3), _x(T, d, 4, 3))),
    "cross_dtypes": _lin(lambda T, d: T.linalg.cross(_x(T, d, 3), _x(T, d, 3, dtype="float64"))),
    "cross_int": _lin(lambda T, d: T.linalg.cross(_x(T, d, 3, dtype="int64"),
                                                  _x(T, d, 3, dtype="int64") + 2)),
    "cross_bool": _lin(lambda T, d: T.linalg.cross(_x(T, d, 3) > 0, _x(T, d, 3) > 0)),
    "cross_dim_out": _lin(lambda T, d: T.linalg.cross(_x(T, d, 3), _x(T, d, 3), dim=2)),
    "cross_empty": _lin(lambda T, d: T.linalg.cross(_x(T, d, 0, 3), _x(T, d, 0, 3))),
    "tensorinv_ind0": _lin(lambda T, d: T.linalg.tensorinv(_x(T, d, 4, 4), ind=0)),
    "tensorinv_shape": _lin(lambda T, d: T.linalg.tensorinv(_x(T, d, 4, 2, 3), ind=1)),
    "tensorinv_ok": _lin(lambda T, d: T.linalg.tensorinv(_x(T, d, 6, 2, 3), ind=1)),
    "tensorinv_ind2": _lin(lambda T, d: T.linalg.tensorinv(_x(T, d, 2, 2, 4), ind=2)),
    "tensorsolve": _lin(lambda T, d: T.linalg.tensorsolve(_x(T, d, 2, 3, 6), _x(T, d, 2, 3))),
    "tensorsolve_dims": _lin(lambda T, d: T.linalg.tensorsolve(_x(T, d, 6, 2, 3), _x(T, d, 2, 3),
                                                               dims=(0,))),
    "tensorsolve_shape": _lin(lambda T, d: T.linalg.tensorsolve(_x(T, d, 2, 3, 5),
                                                                _x(T, d, 2, 3))),
    "diagonal": _lin(lambda T, d: T.linalg.diagonal(_x(T, d, 2, 3, 4), offset=1)),
    "diagonal_dims": _lin(lambda T, d: T.linalg.diagonal(_x(T, d, 2, 3, 4), dim1=0, dim2=2)),
    "linalg_matmul": _lin(lambda T, d: T.linalg.matmul(_x(T, d, 2, 3), _x(T, d, 3))),
    "matrix_exp_half": _lin(lambda T, d: (lambda r: (tuple(r.shape), str(r.dtype)))(
        T.linalg.matrix_exp(_x(T, d, 3, 3, dtype="float16")))),
    "matrix_exp_big": _lin(lambda T, d: T.linalg.matrix_exp(_x(T, d, 2, 3, 3) * 5)),
    # the methods
    "method_det": _lin(lambda T, d: _x(T, d, 3, 3).det()),
    "method_logdet": _lin(lambda T, d: _x(T, d, 3, 3).logdet()),
    "method_slogdet": _lin(lambda T, d: tuple(_x(T, d, 3, 3).slogdet())),
    "method_inverse": _lin(lambda T, d: _x(T, d, 3, 3).inverse()),
    "method_pinverse": _lin(lambda T, d: _x(T, d, 3, 2).pinverse()),
    "method_matrix_power": _lin(lambda T, d: _x(T, d, 3, 3).matrix_power(3)),
    "method_matrix_exp": _lin(lambda T, d: _x(T, d, 3, 3).matrix_exp()),
    "method_qr_R": _lin(lambda T, d: _x(T, d, 4, 3).qr().R.abs()),
    "method_svd_S": _lin(lambda T, d: _x(T, d, 4, 3).svd().S),
    "method_cholesky_inverse": _lin(lambda T, d: _x(T, d, 3, 3).cholesky_inverse()),
    "method_cholesky_solve": _lin(lambda T, d: _x(T, d, 3, 2).cholesky_solve(_x(T, d, 3, 3))),
    "method_triangular_solve": _lin(lambda T, d: tuple(_x(T, d, 3, 2).triangular_solve(
        _x(T, d, 3, 3)))),
    "method_cholesky": _quiet(lambda T, d: _x(T, d, 3, 3).cholesky(upper=True)),
    "cholesky_upper_reads_upper": _lin(lambda T, d: T.linalg.cholesky(
        T.tensor([[4.0, 100.0], [2.0, 3.0]], device=d), upper=True)),
    "cholesky_upper_nonsymmetric": _lin(lambda T, d: T.linalg.cholesky(_x(T, d, 3, 3),
                                                                       upper=True)),
    "cholesky_ex_upper": _lin(lambda T, d: tuple(T.linalg.cholesky_ex(_x(T, d, 2, 3, 3),
                                                                      upper=True))),
})

test_misuse = catalogue_test(CASES)
