"""torch.linalg on complex matrices and the general eigendecomposition (``eig``, ``eigvals``)
against the oracle: values, dtypes, layouts, PyTorch's complex gradients (Wirtinger, as
PyTorch's), gradcheck in complex128, and PyTorch's errors."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck
from tests.misuse._catalogue import Case, catalogue_test
from tests.ops._same import same

TOL = {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-10, "complex128": 1e-10}


def _matrix(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _phase_free(out: Any) -> Any:
    """Eigenvectors (the second of a pair) with each column's phase fixed (its largest entry
    made real and positive): LAPACK builds (PyTorch's MKL, NumPy's OpenBLAS) may differ by a
    column's sign or phase; anything else is returned as it is."""
    if not isinstance(out, tuple) or len(out) != 2 or out[1].ndim < 2:
        return out
    v = out[1]
    if not v.numel():
        return out
    big = v.abs().argmax(-2, keepdim=True)
    top = v.gather(-2, big)
    unit = top / top.abs()
    return type(out)((out[0], v / unit))


def _both(a: np.ndarray, device: str, grad: bool = False) -> tuple[Any, Any]:
    return (torch.tensor(a, requires_grad=grad),
            ag.tensor(a, device=device, requires_grad=grad))


def _ri(t: Any) -> Any:
    """A real loss of a real or complex tensor that depends on both its parts."""
    return t.real.sum() + 0.5 * t.imag.sum() if t.is_complex() else t.sum()


def _eig_loss(T: Any, x: Any) -> Any:
    """A loss that does not depend on the eigenvectors' phases (so PyTorch takes it)."""
    w, v = T.linalg.eig(x)
    n = x.shape[-1]
    return _ri(w * w) + (v.abs() ** 2 * T.arange(n, dtype=v.real.dtype, device=v.device)).sum()


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (1, 1), (0, 0), (2, 0, 0)])
def test_eig_matches_torch(device: str, dtype: str, shape: tuple[int, ...]) -> None:
    a = _matrix(shape, dtype)
    ta, oa = _both(a, device)
    tol = TOL[dtype]
    ours = ag.linalg.eig(oa)
    same(_phase_free(ours), _phase_free(torch.linalg.eig(ta)), rtol=tol, atol=tol)
    same(ag.linalg.eigvals(oa), torch.linalg.eigvals(ta), rtol=tol, atol=tol)
    w, v = ours
    same(oa.to(v.dtype) @ v, v * w.unsqueeze(-2), rtol=tol * 10, atol=tol * 10,
         strides=False)  # A V = V L
    if len(shape) == 3 and shape[-1]:  # a non-contiguous input (transposed matrices)
        same(_phase_free(ag.linalg.eig(oa.mT)), _phase_free(torch.linalg.eig(ta.mT)), rtol=tol,
             atol=tol)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eig_gradients(device: str, dtype: str) -> None:
    a = _matrix((2, 4, 4), dtype, seed=3)
    ta, oa = _both(a, device, grad=True)
    _eig_loss(torch, ta).backward()
    _eig_loss(ag, oa).backward()
    same(oa.grad, ta.grad, rtol=1e-9, atol=1e-10)
    ta.grad = None
    oa.grad = None
    _ri(torch.linalg.eigvals(ta) ** 2).backward()
    _ri(ag.linalg.eigvals(oa) ** 2).backward()
    same(oa.grad, ta.grad, rtol=1e-9, atol=1e-10)
    assert type(ag.linalg.eigvals(oa).grad_fn).__name__ == "LinalgEigBackward0"
    leaf = ag.tensor(_matrix((3, 3), dtype, seed=4), device=device, requires_grad=True)
    assert gradcheck(lambda x: _eig_loss(ag, x), (leaf,))
    assert gradcheck(lambda x: ag.linalg.eigvals(x), (leaf,))
    assert gradgradcheck(lambda x: ag.linalg.eigvals(x), (leaf,))


def test_eig_phase_dependent_loss_refused(device: str) -> None:
    for T, dev in ((torch, "cpu"), (ag, device)):
        x = T.tensor(_matrix((3, 3), "float64", seed=5), device=dev, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"^linalg_eig_backward: The eigenvectors in the "
                                               r"complex case are specified up to"):
            T.linalg.eig(x)[1].real.sum().backward()


# ---- the other ops on complex matrices ----------------------------------------------------------

COMPLEX_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "det": lambda T, x: T.linalg.det(x),
    "slogdet": lambda T, x: T.linalg.slogdet(x),
    "logdet": lambda T, x: T.logdet(x),
    "inv": lambda T, x: T.linalg.inv(x),
    "inv_ex": lambda T, x: T.linalg.inv_ex(x),
    "solve": lambda T, x: T.linalg.solve(x, x[..., :2] + 1),
    "solve_vector_right": lambda T, x: (T.linalg.solve(x, x[..., 0]),
                                        T.linalg.solve(x, x.mT, left=False)),
    "solve_ex": lambda T, x: T.linalg.solve_ex(x, x.mH),
    "eigh": lambda T, x: T.linalg.eigh(x + x.mH),
    "eigvalsh": lambda T, x: T.linalg.eigvalsh(x + x.mH, UPLO="U"),
    "matrix_exp": lambda T, x: T.linalg.matrix_exp(0.3 * x),
    # NOTE: phase-free views of the singular vectors (their phases are LAPACK's choice)
    "svd": lambda T, x: (lambda u, s, vh: (s, (u * s.unsqueeze(-2).to(u.dtype)) @ vh, u.abs(),
                                           vh.abs()))(*T.linalg.svd(x)),
    "svd_wide": lambda T, x: (lambda u, s, vh: (s, u @ vh[..., :2, :]))(
        *T.linalg.svd(x[..., :2, :], full_matrices=False)),
    "svdvals": lambda T, x: T.linalg.svdvals(x[..., :2]),
    "torch_svd": lambda T, x: (lambda u, s, v: (s, u @ v.mH))(*T.svd(x)),
    "qr": lambda T, x: T.linalg.qr(x),
    "qr_tall_wide": lambda T, x: (*T.linalg.qr(x[..., :2]), *T.linalg.qr(x[..., :2, :])),
    "cholesky": lambda T, x: (T.linalg.cholesky(x @ x.mH + 3 * _eye(T, x)),
                              T.linalg.cholesky(x @ x.mH + _eye(T, x), upper=True)),
    "cholesky_ex": lambda T, x: T.linalg.cholesky_ex(x @ x.mH + 3 * _eye(T, x)),
    "solve_triangular": lambda T, x: (
        T.linalg.solve_triangular(x + 3 * _eye(T, x), x, upper=True),
        T.linalg.solve_triangular(x + 3 * _eye(T, x), x, upper=False, left=False,
                                  unitriangular=True)),
    "matrix_norm": lambda T, x: tuple(T.linalg.matrix_norm(x, o)
                                      for o in ("fro", "nuc", 2, -2, 1, float("inf"))),
    "cond": lambda T, x: T.linalg.cond(x),
    "vecdot": lambda T, x: (T.linalg.vecdot(x[0], x[1]), T.linalg.vecdot(x[0, 0], x[1, 1])),
    "tensorinv_tensorsolve": lambda T, x: (
        T.linalg.tensorinv(x.reshape(-1, 3)[:3], ind=1),
        T.linalg.tensorsolve(x.reshape(-1, 3)[:3], x.reshape(-1, 3)[-1])),
}


def _eye(T: Any, x: Any) -> Any:
    return T.eye(3, dtype=x.dtype, device=x.device)


def _loss(T: Any, out: Any) -> Any:
    parts = out if isinstance(out, tuple) else (out,)
    total = 0
    for p in parts:
        if p.dtype in (T.int32, T.int64):
            continue
        if p.ndim >= 2 and p.shape[-1] == p.shape[-2] and p.is_complex():
            p = p.abs() ** 2  # NOTE: eigh's eigenvectors: phase-free
        weights = (T.arange(1, p.shape[-1] + 1, dtype=p.real.dtype, device=p.device) if p.ndim
                   else 1.0)
        total = total + _ri(p * weights)
    return total


@pytest.mark.parametrize("name", sorted(COMPLEX_OPS))
def test_complex_ops_match_torch(device: str, name: str) -> None:
    fn = COMPLEX_OPS[name]
    for dtype in ("complex64", "complex128"):
        a = _matrix((2, 3, 3), dtype, seed=7)
        ta, oa = _both(a, device)
        same(_phase_free(fn(ag, oa)), _phase_free(fn(torch, ta)), rtol=TOL[dtype],
             atol=TOL[dtype])
    ta, oa = _both(_matrix((2, 3, 3), "complex128", seed=8), device, grad=True)
    _loss(torch, fn(torch, ta)).backward()
    _loss(ag, fn(ag, oa)).backward()
    same(oa.grad, ta.grad, rtol=1e-9, atol=1e-10)
    leaf = ag.tensor(_matrix((3, 3), "complex128", seed=9), device=device, requires_grad=True)
    assert gradcheck(lambda x: _loss(ag, fn(ag, x)), (leaf,))
    if name in ("det", "inv", "solve", "slogdet"):
        assert gradgradcheck(lambda x: _loss(ag, fn(ag, x)), (leaf,))


def test_complex_singular(device: str) -> None:
    z = np.zeros((2, 2), "complex128")
    for T, dev in ((torch, "cpu"), (ag, device)):
        x = T.tensor(z, device=dev)
        assert T.linalg.det(x).item() == 0
        with pytest.raises(T.linalg.LinAlgError, match="input matrix is singular"):
            T.linalg.inv(x)
    same(ag.logdet(ag.tensor(z, device=device)), torch.logdet(torch.tensor(z)))


def test_complex_refused_where_not_supported_yet(device: str) -> None:
    """The ops whose complex gradients are not written yet say so (PyTorch takes them)."""
    x = ag.tensor(_matrix((3, 3), "complex128"), device=device)
    for fn in (ag.linalg.pinv, ag.linalg.matrix_rank, lambda a: ag.linalg.lstsq(a, a)):
        with pytest.raises(RuntimeError, match="complex inputs are not supported yet"):
            fn(x)


def test_svd_phase_dependent_loss_refused(device: str) -> None:
    for T, dev in ((torch, "cpu"), (ag, device)):
        x = T.tensor(_matrix((3, 3), "complex128", seed=6), device=dev, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"^svd_backward: The singular vectors in the "
                                               r"complex case are specified up to"):
            T.linalg.svd(x)[0].real.sum().backward()


# ---- errors ------------------------------------------------------------------------------------

def _m(T: Any, dev: str, shape: tuple[int, ...], dtype: str = "float64") -> Any:
    return T.ones(shape, dtype=getattr(T, dtype), device=dev)


CASES: dict[str, Case] = {
    "eig_not_square": lambda T, d: T.linalg.eig(_m(T, d, (2, 3))),
    "eigvals_not_square": lambda T, d: T.linalg.eigvals(_m(T, d, (3, 2))),
    "eig_vector": lambda T, d: T.linalg.eig(_m(T, d, (3,))),
    "eigvals_vector": lambda T, d: T.linalg.eigvals(_m(T, d, (3,))),
    "eig_int": lambda T, d: T.linalg.eig(_m(T, d, (2, 2), "int64")),
    "eigvals_int": lambda T, d: T.linalg.eigvals(_m(T, d, (2, 2), "int64")),
    "eig_nan": lambda T, d: T.linalg.eig(T.tensor([[float("nan"), 1.0], [2.0, 3.0]], device=d)),
    "eig_inf": lambda T, d: T.linalg.eig(T.tensor([[float("inf"), 1.0], [2.0, 3.0]], device=d)),
    "eig_not_tensor": lambda T, d: T.linalg.eig([[1.0, 0.0], [0.0, 1.0]]),
    "eig_out": lambda T, d: (lambda o: (T.linalg.eig(_m(T, d, (2, 2)), out=o), o[0]))(
        (T.empty(0, dtype=T.complex128, device=d), T.empty(0, dtype=T.complex128, device=d)))[1],
    "eigvals_out": lambda T, d: (lambda o: (T.linalg.eigvals(_m(T, d, (2, 2)), out=o), o)[1])(
        T.empty(0, dtype=T.complex128, device=d)),
    "eig_diagonal": lambda T, d: T.linalg.eig(T.diag(T.tensor([3.0, -1.0, 2.0], device=d))),
    "eig_rotation": lambda T, d: T.linalg.eigvals(T.tensor([[0.0, -1.0], [1.0, 0.0]], device=d)),
    "det_complex_int_refused": lambda T, d: T.linalg.det(_m(T, d, (2, 2), "int32")),
    "solve_complex_dtype_mismatch": lambda T, d: T.linalg.solve(
        _m(T, d, (2, 2), "complex128"), _m(T, d, (2,), "complex64")),
}

test_misuse = catalogue_test(CASES)


def test_eig_half_refused(device: str) -> None:
    with pytest.raises(NotImplementedError, match=r"not implemented for 'Half'"):
        ag.linalg.eig(ag.eye(2, dtype=ag.float16, device=device))
