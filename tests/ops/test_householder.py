"""geqrf, linalg.householder_product (orgqr) and ormqr against the oracle: values, layouts,
gradients (torch's values, gradcheck, gradgradcheck), node names, real and complex, batched,
and PyTorch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck
from tests.misuse._catalogue import Case, catalogue_test
from tests.ops._same import same


def _m(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    return (a + 1j * rng.standard_normal(shape) if dtype == "complex128" else a).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_values(device: str, dtype: str) -> None:
    tol = 1e-5 if dtype == "float32" else 1e-12
    a = _m((2, 5, 3), dtype)
    theirs, ours = torch.geqrf(torch.tensor(a)), ag.geqrf(ag.tensor(a, device=device))
    same(ours, theirs, rtol=tol, atol=tol)
    (tg, tt), (og, ot) = theirs, ours
    same(ag.linalg.householder_product(og, ot), torch.linalg.householder_product(tg, tt),
         rtol=tol, atol=tol)
    same(og.orgqr(ot), tg.orgqr(tt), rtol=tol, atol=tol)
    for left, other in ((True, _m((2, 5, 4), dtype, 1)), (False, _m((2, 4, 5), dtype, 2))):
        for transpose in (False, True):
            same(ag.ormqr(og, ot, ag.tensor(other, device=device), left, transpose),
                 torch.ormqr(tg, tt, torch.tensor(other), left, transpose), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_gradients(device: str, dtype: str) -> None:
    a, c = _m((4, 3), dtype, 3), _m((4, 2), dtype, 4)
    tau = torch.geqrf(torch.tensor(a))[1].numpy()
    leaves = [(torch.tensor(x, requires_grad=True), ag.tensor(x, device=device,
                                                             requires_grad=True))
              for x in (a, tau, c)]
    (ta, oa), (tt, ot), (tc, oc) = leaves
    w = np.random.default_rng(5).standard_normal((4, 3))
    for T, x, t, o in ((torch, ta, tt, tc), (ag, oa, ot, oc)):
        q = T.linalg.householder_product(x, t)
        r = T.ormqr(x, t, o, True, True)
        loss = (q.abs() ** 2 * T.tensor(w, device=q.device)).sum() + (r.abs() ** 3).sum()
        loss.backward()
    for theirs, ours in leaves:
        same(ours.grad, theirs.grad, rtol=1e-9, atol=1e-10)
    assert type(ag.linalg.householder_product(oa, ot).grad_fn).__name__ == \
        "LinalgHouseholderProductBackward0"
    assert type(ag.ormqr(oa, ot, oc).grad_fn).__name__ == "OrmqrBackward0"
    assert gradcheck(lambda x, t: ag.linalg.householder_product(x, t), (oa, ot))
    right = ag.tensor(_m((2, 4), dtype, 6), device=device, requires_grad=True)
    assert gradgradcheck(lambda x, t, o: ag.ormqr(x, t, o, False, False), (oa, ot, right))


def _g(T: Any, d: str, shape: tuple[int, ...] = (4, 3), dtype: str = "float64") -> Any:
    return T.ones(shape, dtype=getattr(T, dtype), device=d) + T.eye(*shape[-2:],
                                                                    dtype=getattr(T, dtype),
                                                                    device=d)


CASES: dict[str, Case] = {
    "geqrf_vector": lambda T, d: T.geqrf(T.ones(3, device=d)),
    "geqrf_int": lambda T, d: T.geqrf(T.ones(3, 3, dtype=T.int64, device=d)),
    "geqrf_grad": lambda T, d: T.geqrf(_g(T, d).requires_grad_())[0].sum().backward(),
    "geqrf_empty": lambda T, d: T.geqrf(T.ones(0, 3, dtype=T.float64, device=d)),
    "hp_wide": lambda T, d: T.linalg.householder_product(_g(T, d, (3, 4)), T.ones(3, dtype=T.float64, device=d)),
    "hp_tau_long": lambda T, d: T.linalg.householder_product(_g(T, d), T.ones(4, dtype=T.float64, device=d)),
    "hp_tau_ndim": lambda T, d: T.linalg.householder_product(_g(T, d), T.ones(1, 3, dtype=T.float64, device=d)),
    "hp_tau_dtype": lambda T, d: T.linalg.householder_product(_g(T, d), T.ones(3, device=d)),
    "hp_vector": lambda T, d: T.linalg.householder_product(T.ones(3, dtype=T.float64, device=d), T.ones(3, dtype=T.float64, device=d)),
    "hp_fewer_reflectors": lambda T, d: T.linalg.householder_product(_g(T, d), T.ones(1, dtype=T.float64, device=d) * 0.5),
    "ormqr_rows": lambda T, d: T.ormqr(_g(T, d), T.ones(3, dtype=T.float64, device=d), T.ones(3, 3, dtype=T.float64, device=d)),
    "ormqr_cols": lambda T, d: T.ormqr(_g(T, d), T.ones(3, dtype=T.float64, device=d), T.ones(4, 3, dtype=T.float64, device=d), left=False),
    "ormqr_vector": lambda T, d: T.ormqr(_g(T, d), T.ones(3, dtype=T.float64, device=d), T.ones(4, dtype=T.float64, device=d)),
}

test_misuse = catalogue_test(CASES)
