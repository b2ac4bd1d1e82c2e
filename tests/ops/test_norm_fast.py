"""The few-pass array backward of batch and group norm (``ops/norm_fast.py``): taken when no graph
is recorded, and accurate in float32 where the mean is large against the spread (the sums are of
the centred input; ``sum(grad * x) - mean * sum(grad)`` would lose three digits here)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.ops import norm_fast

MODULES = [("BatchNorm1d", (3,)), ("GroupNorm", (3, 6))]


@pytest.mark.parametrize("cls, args", MODULES)
def test_float32_gradients_with_a_large_mean(cls: str, args: tuple[int, ...], device: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    for name in ("batch_norm_backward", "group_norm_backward"):
        real = getattr(norm_fast, name)
        monkeypatch.setattr(norm_fast, name,
                            lambda *a, _r=real, _n=name, **k: calls.append(_n) or _r(*a, **k))
    rng = np.random.default_rng(3)
    channels = args[-1]
    x = (1000.0 + rng.standard_normal((4, channels, 5))).astype(np.float32)
    v = rng.standard_normal(x.shape)
    ours = getattr(ag.nn, cls)(*args).to(device)
    theirs = getattr(torch.nn, cls)(*args).double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))))
    for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        p.data = ag.tensor(q.detach().numpy(), dtype=ag.float32, device=device)
    xo = ag.tensor(x, device=device, requires_grad=True)
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    got: list[Any] = list(ag.autograd.grad(ours(xo), [xo, *ours.parameters()],
                                           ag.tensor(v, dtype=ag.float32, device=device)))
    want = torch.autograd.grad(theirs(xt), [xt, *theirs.parameters()], torch.from_numpy(v))
    for g, r in zip(got, want):
        g, r = g.cpu().numpy().astype(np.float64), r.numpy()
        np.testing.assert_allclose(g, r, rtol=0, atol=2e-4 * np.abs(r).max())
    if device == "cpu":
        assert calls, "the array formulas were not taken"
