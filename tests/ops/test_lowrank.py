"""svd_lowrank and pca_lowrank: exact on matrices of rank <= q (singular values, reconstruction
and gradients equal the oracle's), tall, wide and batched inputs, ``M``, reproducible under
manual_seed, and PyTorch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import Case, catalogue_test
from tests.ops._same import same


def _low_rank(shape: tuple[int, ...], rank: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    *batch, m, n = shape
    return rng.standard_normal((*batch, m, rank)) @ rng.standard_normal((*batch, rank, n))


@pytest.mark.parametrize("shape", [(30, 12), (12, 30), (2, 16, 10)])
def test_svd_lowrank_exact_on_low_rank(device: str, shape: tuple[int, ...]) -> None:
    a = _low_rank(shape, 3)
    m = _low_rank(shape[-2:], 1, seed=1)
    for mm in (None, m):
        ag.manual_seed(0)
        ours = ag.svd_lowrank(ag.tensor(a, device=device), q=5,
                              M=None if mm is None else ag.tensor(mm, device=device))
        u, s, v = ours
        target = a - (0 if mm is None else mm)
        rebuilt = ((u * s.unsqueeze(-2)) @ v.mT).cpu().numpy()
        np.testing.assert_allclose(rebuilt, target, atol=1e-10)
        want = torch.linalg.svdvals(torch.tensor(target))[..., :4]
        same(s[..., :4], want, rtol=1e-10, atol=1e-10, strides=False)


def test_pca_lowrank_and_gradients(device: str) -> None:
    a = _low_rank((20, 8), 3, seed=2) + 1.5
    ta = torch.tensor(a, requires_grad=True)
    oa = ag.tensor(a, device=device, requires_grad=True)
    _, ts, _ = torch.pca_lowrank(ta, q=4)
    _, os_, _ = ag.pca_lowrank(oa, q=4)
    same(os_[:3], ts[:3], rtol=1e-10, atol=1e-10, strides=False)
    ts[:3].sum().backward()
    os_[:3].sum().backward()
    same(oa.grad, ta.grad, rtol=1e-8, atol=1e-8)
    _, s_plain, _ = ag.pca_lowrank(oa.detach(), q=4, center=False)
    same(s_plain[:3], torch.pca_lowrank(torch.tensor(a), q=4, center=False)[1][:3], rtol=1e-10,
         atol=1e-10, strides=False)


def test_reproducible_under_manual_seed(device: str) -> None:
    a = ag.tensor(np.random.default_rng(3).standard_normal((15, 9)), device=device)
    runs = []
    for _ in range(2):
        ag.manual_seed(7)
        runs.append(ag.svd_lowrank(a, q=3, niter=0)[0])
    assert ag.equal(runs[0], runs[1])


def _a(T: Any, d: str) -> Any:
    return T.ones(6, 4, dtype=T.float64, device=d)


CASES: dict[str, Case] = {
    "pca_q_too_big": lambda T, d: T.pca_lowrank(_a(T, d), q=5),
    "pca_q_negative": lambda T, d: T.pca_lowrank(_a(T, d), q=-1),
    "pca_niter_negative": lambda T, d: T.pca_lowrank(_a(T, d), niter=-1),
    "svd_lowrank_shapes": lambda T, d: [t.shape for t in T.svd_lowrank(_a(T, d), q=2)],
    "pca_shapes": lambda T, d: [t.shape for t in T.pca_lowrank(_a(T, d))],
}

test_misuse = catalogue_test(CASES)
