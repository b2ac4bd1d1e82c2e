"""torch.linalg against PyTorch, part 2: QR, SVD, eigh and what builds on them (``qr``,
``svd``, ``svdvals``, ``eigh``, ``eigvalsh``, ``pinv``/``pinverse``, ``matrix_rank``,
``lstsq``) and ``matrix_exp``, as ``test_decomp.py`` checks the solvers: values, node names
and gradients on float32/float64, contiguous and transposed, batched inputs, then
``gradcheck``/``gradgradcheck``.

Singular vectors and eigenvectors are unique up to sign only (and LAPACK builds may choose
differently): the programs fix the sign of each vector by its first entry, which leaves
values and gradients comparable (and the losses gauge-invariant, as PyTorch requires).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.ops.test_decomp import DTYPES, LAYOUTS, check_grads, compare, rand


def _fix(u: Any, vh: Any = None) -> Any:
    """``u`` (and ``vh``) with each column of ``u`` signed so that its first entry is >= 0."""
    d = u[..., :1, :].sign()
    d = d + (d == 0).to(d.dtype)
    return (u * d, vh * d.mT) if vh is not None else u * d


def _svd(T: Any, a: Any, full: bool = False) -> tuple[Any, Any, Any]:
    u, s, vh = T.linalg.svd(a, full_matrices=full)
    k = s.shape[-1]
    u, vh = _fix(u[..., :k], vh[..., :k, :])
    return u, s, vh


def _eigh(T: Any, a: Any, uplo: str = "L") -> tuple[Any, Any]:
    w, v = T.linalg.eigh(a, UPLO=uplo)
    return w, _fix(v)


def _sym(x: Any) -> Any:
    return x + x.mT


def _rank2(m: int, n: int, seed: int = 0) -> np.ndarray:
    """An ``m x n`` matrix of rank 2."""
    return rand(m, 2, seed=seed) @ rand(2, n, seed=seed + 1)


CASES: dict[str, tuple[Any, list[np.ndarray]]] = {
    "qr": (lambda T, a: tuple(T.linalg.qr(a)), [rand(4, 3)]),
    "qr_square_batch": (lambda T, a: tuple(T.linalg.qr(a)), [rand(2, 3, 3)]),
    "qr_wide": (lambda T, a: tuple(T.linalg.qr(a)), [rand(2, 3, 5)]),
    "qr_complete_wide": (lambda T, a: tuple(T.linalg.qr(a, mode="complete")), [rand(3, 4)]),
    "qr_r": (lambda T, a: T.linalg.qr(a, mode="r")[1], [rand(5, 3)]),
    "qr_torch": (lambda T, a: tuple(T.qr(a)), [rand(4, 3)]),
    "qr_torch_complete": (lambda T, a: tuple(a.qr(some=False))[1], [rand(4, 3)]),
    "svd": (lambda T, a: _svd(T, a), [rand(4, 3)]),
    "svd_wide_batch": (lambda T, a: _svd(T, a), [rand(2, 3, 5)]),
    "svd_full_square": (lambda T, a: _svd(T, a, full=True), [rand(3, 3)]),
    "svd_full_values": (lambda T, a: T.linalg.svd(a)[1], [rand(5, 2)]),
    "svd_reconstruct": (lambda T, a: (lambda u, s, vh: (u * s.unsqueeze(-2)) @ vh)(
        *T.linalg.svd(a, full_matrices=False)), [rand(2, 4, 3)]),
    "svdvals": (lambda T, a: T.linalg.svdvals(a), [rand(2, 4, 3)]),
    "svd_torch": (lambda T, a: (lambda u, s, v: (_fix(u, v.mT)[0], s, _fix(u, v.mT)[1]))(
        *T.svd(a)), [rand(4, 3)]),
    "svd_torch_nouv": (lambda T, a: tuple(T.svd(a, compute_uv=False)), [rand(2, 4, 3)]),
    "eigh": (lambda T, a: _eigh(T, _sym(a)), [rand(2, 4, 4)]),
    "eigh_upper_raw": (lambda T, a: _eigh(T, a, "U"), [rand(3, 3)]),  # only a triangle is read
    "eigh_lower_raw": (lambda T, a: _eigh(T, a, "L"), [rand(3, 3)]),
    "eigvalsh": (lambda T, a: T.linalg.eigvalsh(_sym(a)), [rand(2, 3, 3)]),
    "eigvalsh_upper": (lambda T, a: T.linalg.eigvalsh(a, UPLO="U"), [rand(4, 4)]),
    "pinv": (lambda T, a: T.linalg.pinv(a), [rand(2, 4, 3)]),
    "pinv_wide": (lambda T, a: T.linalg.pinv(a), [rand(3, 5)]),
    "pinv_rank_deficient": (lambda T, a: T.linalg.pinv(a), [_rank2(4, 3)]),
    "pinv_rtol": (lambda T, a: T.linalg.pinv(a, rtol=0.5), [rand(4, 4)]),
    "pinv_atol": (lambda T, a: T.linalg.pinv(a, atol=1.0), [rand(4, 4)]),
    "pinv_hermitian": (lambda T, a: T.linalg.pinv(_sym(a), hermitian=True), [rand(2, 3, 3)]),
    "pinverse": (lambda T, a: a.pinverse(0.3), [rand(3, 4)]),
    "matrix_rank": (lambda T, a: T.linalg.matrix_rank(a), [_rank2(4, 5)]),
    "matrix_rank_hermitian": (lambda T, a: T.linalg.matrix_rank(a @ a.mT, hermitian=True),
                              [_rank2(4, 4)]),
    "matrix_rank_tol": (lambda T, a: T.linalg.matrix_rank(a, 1.0), [rand(2, 4, 4)]),
    "lstsq_gels": (lambda T, a, b: tuple(T.linalg.lstsq(a, b, driver="gels")),
                   [rand(5, 3), rand(5, 2)]),
    "lstsq_gels_wide": (lambda T, a, b: T.linalg.lstsq(a, b, driver="gels").solution,
                        [rand(2, 3, 5), rand(2, 3, 2)]),
    "lstsq_vector": (lambda T, a, b: tuple(T.linalg.lstsq(a, b[..., 0], driver="gels")),
                     [rand(2, 5, 3), rand(2, 5, 1)]),
    "lstsq_broadcast": (lambda T, a, b: T.linalg.lstsq(a, b, driver="gels").solution,
                        [rand(2, 5, 3), rand(1, 5, 2)]),
    "matrix_exp": (lambda T, a: T.linalg.matrix_exp(a), [rand(2, 3, 3)]),
    "matrix_exp_large": (lambda T, a: T.matrix_exp(a * 4), [rand(4, 4)]),
    "matrix_exp_small": (lambda T, a: a.matrix_exp(), [rand(3, 3) * 1e-3]),
    "matrix_exp_1x1": (lambda T, a: T.linalg.matrix_exp(a), [rand(2, 1, 1)]),
}


@pytest.mark.filterwarnings("ignore:torch\\.qr is deprecated")
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(device: str, name: str, dtype: str, layout: str) -> None:
    fn, arrays = CASES[name]
    tol = 1e-6 if dtype == "float64" else 5e-4
    if name.startswith("matrix_exp_large"):
        tol *= 10
    compare(fn, arrays, device, dtype, layout, grad=name not in NO_GRAD, tol=tol)


NO_GRAD = {"qr_r", "qr_torch_complete"}  # PyTorch refuses these backwards (tested below)


GRAD_CASES = ["qr", "qr_square_batch", "qr_wide", "qr_complete_wide", "svd", "svd_wide_batch",
              "svd_full_square", "svd_reconstruct", "svdvals", "svd_torch", "eigh",
              "eigvalsh", "pinv", "pinv_wide", "pinv_hermitian", "lstsq_gels",
              "lstsq_vector", "matrix_exp", "matrix_exp_large"]


@pytest.mark.filterwarnings("ignore:torch\\.qr is deprecated")
@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradcheck(device: str, name: str) -> None:
    fn, arrays = CASES[name]
    if name == "eigh":
        arrays = [rand(3, 3)]
    if name.startswith("lstsq"):
        fn = _float_outputs(fn)
    check_grads(fn, arrays, device)


def _float_outputs(fn: Any) -> Any:
    """``fn`` with its outputs that take no gradient (lstsq's rank) left out."""
    return lambda T, *xs: tuple(o for o in fn(T, *xs) if o.requires_grad)


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss", "gels"])
def test_lstsq_drivers_cpu(driver: str) -> None:
    """PyTorch's CPU drivers: which of residuals, rank and singular values they fill; the
    solution of a rank-deficient problem (the minimum-norm one but for 'gels')."""
    for a, b in ((rand(5, 3), rand(5, 2)), (rand(3, 5), rand(3, 2)),
                 (rand(2, 5, 3), rand(2, 5, 2)), (_rank2(5, 3), rand(5, 2))):
        theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        ours = ag.linalg.lstsq(ag.tensor(a), ag.tensor(b), driver=driver)
        for o, t in zip(ours, theirs):
            assert tuple(o.shape) == tuple(t.shape), (o.shape, t.shape)
            assert str(o.dtype) == str(t.dtype)
        if driver != "gels" or (np.linalg.matrix_rank(a) == min(a.shape[-2:])).all():
            np.testing.assert_allclose(ours.solution.numpy(), theirs.solution.numpy(),
                                       atol=1e-9)
            np.testing.assert_allclose(ours.residuals.numpy(), theirs.residuals.numpy(),
                                       atol=1e-9)
        np.testing.assert_array_equal(ours.rank.numpy(), theirs.rank.numpy())
        np.testing.assert_allclose(ours.singular_values.numpy(),
                                   theirs.singular_values.numpy(), atol=1e-12)
    default = ag.linalg.lstsq(ag.tensor(rand(4, 2)), ag.tensor(rand(4, 1)))
    assert default.rank.item() == 2 and default.residuals.numel() == 0  # gelsy on the CPU


def test_lstsq_residual_gradient(device: str) -> None:
    compare(lambda T, a, b: T.linalg.lstsq(a, b, driver="gels").residuals,
            [rand(5, 3), rand(5, 2)], device)
    check_grads(lambda T, a, b: T.linalg.lstsq(a, b, driver="gels").residuals,
                [rand(5, 3), rand(5, 2)], device)


def test_lstsq_cuda_driver() -> None:
    if not ag.cuda.is_available():
        pytest.skip("no CUDA device (real or fake)")
    a = ag.tensor(rand(4, 2), device="cuda")
    with pytest.raises(RuntimeError, match="`driver` other than `gels` is not supported"):
        ag.linalg.lstsq(a, a, driver="gelsd")
    out = ag.linalg.lstsq(a, a)
    assert out.rank.numel() == 0 and out.residuals.shape == (2,)  # gels, as PyTorch on CUDA


def test_qr_modes_shapes(device: str) -> None:
    for shape in ((4, 3), (3, 4), (3, 3), (2, 0, 3), (0, 3), (3, 0)):
        for mode in ("reduced", "complete", "r"):
            compare(lambda T, a, m=mode: tuple(T.linalg.qr(a, mode=m)), [rand(*shape)], device,
                    grad=False)


def test_qr_backward_refusals(device: str) -> None:
    x = ag.tensor(rand(4, 3), device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="depends on Q, which is not computed"):
        ag.linalg.qr(x, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
        ag.linalg.qr(x, mode="complete").Q.sum().backward()


def test_svd_empty_and_inf(device: str) -> None:
    for shape in ((0, 3), (3, 0), (2, 0, 0), (0, 2, 3)):
        for full in (True, False):
            compare(lambda T, a, f=full: tuple(T.linalg.svd(a, full_matrices=f)),
                    [rand(*shape)], device, grad=False)
        compare(lambda T, a: T.linalg.svdvals(a), [rand(*shape)], device, grad=False)
    inf = np.stack([np.eye(2), np.full((2, 2), np.inf)])
    compare(lambda T, a: tuple(T.linalg.svd(a)), [inf], device, grad=False)
    compare(lambda T, a: (T.linalg.matrix_rank(a), T.linalg.pinv(a)), [inf], device, grad=False)


def test_eigh_empty(device: str) -> None:
    for shape in ((0, 0), (2, 0, 0), (0, 3, 3)):
        compare(lambda T, a: tuple(T.linalg.eigh(a)), [rand(*shape)], device, grad=False)
        compare(lambda T, a: T.linalg.pinv(a, hermitian=True), [rand(*shape)], device,
                grad=False)


def test_repeated_eigenvalues_value_gradient(device: str) -> None:
    """Gradients of eigenvalues alone are defined at repeated eigenvalues (the identity)."""
    compare(lambda T, a: T.linalg.eigvalsh(a), [np.eye(3)], device)
    compare(lambda T, a: T.linalg.svdvals(a), [np.eye(3)], device)


def test_deprecated_qr_warns() -> None:
    from autograd_gpu.functions import decomp_spectral

    decomp_spectral._WARNED.discard("qr")
    with pytest.warns(UserWarning, match="torch.qr is deprecated"):
        ag.qr(ag.eye(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.qr(ag.eye(2))
