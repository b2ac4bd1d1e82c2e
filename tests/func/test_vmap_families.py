"""vmap over the op families' nodes that have batching rules (sort, topk, kthvalue/median/mode
along a dim, var_mean/std_mean, tril/triu): the same values as the per-sample loop and as
torch.func, per-sample gradients through them, no per-sample fallback; 0-d samples take the
loop (counted)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.func._batched import FALLBACKS
from tests.func._helpers import no_fallbacks  # noqa: F401  (the fixture)

FNS: dict[str, Callable[[Any, Any], Any]] = {
    "sort": lambda m, t: m.sort(t, -1)[0],
    "sort_indices_descending": lambda m, t: m.sort(t, 0, descending=True)[1].to(t.dtype),
    "topk": lambda m, t: m.topk(t, 2, -1)[0],
    "kthvalue": lambda m, t: m.kthvalue(t, 2, 0)[0],
    "median_dim": lambda m, t: m.median(t, -1)[0],
    "mode_indices": lambda m, t: m.mode(t, 0)[1].to(t.dtype),
    "var_mean": lambda m, t: m.var_mean(t, -1)[0],
    "std_mean": lambda m, t: m.std_mean(t, (0, 1))[1],
    "tril": lambda m, t: m.tril(t, 1),
    "triu": lambda m, t: m.triu(t, -1),
}


@pytest.mark.parametrize("in_dim", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(FNS))
def test_vmap_matches_torch_func(device: str, name: str, in_dim: int) -> None:
    a = np.random.default_rng(3).standard_normal((4, 3, 5))
    ours = ag.vmap(lambda t: FNS[name](ag, t), in_dims=in_dim)(ag.tensor(a, device=device))
    theirs = torch.vmap(lambda t: FNS[name](torch, t), in_dims=in_dim)(torch.tensor(a))
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["sort", "topk", "kthvalue", "median_dim", "var_mean", "tril"])
def test_per_sample_gradients(device: str, name: str) -> None:
    a = np.random.default_rng(5).standard_normal((4, 3, 5))

    def loss(m: Any, t: Any) -> Any:
        out = FNS[name](m, t)
        w = m.arange(1.0, 1.0 + out.numel(), dtype=t.dtype, device=t.device).reshape(out.shape)
        return (out * w).sum()

    ours = ag.vmap(ag.func.grad(lambda t: loss(ag, t)))(ag.tensor(a, device=device))
    theirs = torch.vmap(torch.func.grad(lambda t: loss(torch, t)))(torch.tensor(a))
    np.testing.assert_allclose(ours.cpu().numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)


def test_scalar_samples_take_the_loop(device: str) -> None:
    s = ag.tensor([3.0, 1.0], dtype=ag.float64, device=device)
    got = ag.vmap(lambda t: ag.sort(t)[0] + ag.median(t, 0)[0])(s)
    assert got.tolist() == [6.0, 2.0]
    assert set(FALLBACKS) == {"Sort", "SelectDim"}, FALLBACKS
    FALLBACKS.clear()
