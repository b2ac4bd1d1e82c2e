"""inf/nan arithmetic is silent, as in PyTorch, even with warnings turned into errors (as this
suite's pytest configuration does)."""

from __future__ import annotations

import math

import torch

import autograd_gpu as ag


def test_inf_times_zero_is_nan_silently(device: str) -> None:
    for m, kw in ((torch, {}), (ag, {"device": device})):
        x = m.tensor([math.inf, 1.0, -math.inf], requires_grad=True, **kw)
        y = x * 0
        s = (x - x).sum() + y.sum()
        s.backward()
        assert math.isnan(s.item())
        assert [math.isnan(v) for v in y.tolist()] == [True, False, True]
        assert x.grad.tolist()[1] == 0.0


def test_overflow_is_inf_silently(device: str) -> None:
    x = ag.tensor([3e38, -3e38], device=device)
    assert (x * 10).tolist() == [math.inf, -math.inf]
    assert (x * 10).tolist() == (torch.tensor([3e38, -3e38]) * 10).tolist()
