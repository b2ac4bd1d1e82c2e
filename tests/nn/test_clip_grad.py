"""nn.utils gradient clipping against the torch oracle."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from tests.autograd._util import both, same_error
from tests.nn._util import t

RNG = np.random.default_rng(4)
GRADS = [RNG.standard_normal((3, 4)), RNG.standard_normal(5) * 10, RNG.standard_normal((2, 2))]


def _params(T: Any, dev: str, scale: float = 1.0) -> list[Any]:
    ps = []
    for g in GRADS:
        p = t(T, dev, np.zeros_like(g), grad=True)
        p.grad = t(T, dev, g * scale)
        ps.append(p)
    ps.append(t(T, dev, np.zeros(2), grad=True))  # no grad: skipped
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, 0.5])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm_matches_torch(norm_type: float, max_norm: float, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        ps = _params(T, dev)
        total = T.nn.utils.clip_grad_norm_(iter(ps), max_norm, norm_type=norm_type)
        return total, [p.grad for p in ps]

    both(run, device, rtol=1e-10)


def test_clip_grad_norm_single_tensor_and_empty(device: str) -> None:
    both(lambda T, dev: T.nn.utils.clip_grad_norm_(_params(T, dev)[0], 1.0), device)
    both(lambda T, dev: T.nn.utils.clip_grad_norm_([t(T, dev, [1.0], grad=True)], 1.0), device)


def test_clip_grad_norm_nonfinite(device: str) -> None:
    def run(T: Any, dev: str, error: bool) -> Any:
        ps = _params(T, dev)
        ps[0].grad[0, 0] = float("inf")
        return T.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=error)

    both(lambda T, dev: run(T, dev, False), device)
    same_error(lambda T, dev: run(T, dev, True), device)


@pytest.mark.parametrize("clip", [0.3, 2])
def test_clip_grad_value_matches_torch(clip: float, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        ps = _params(T, dev)
        assert T.nn.utils.clip_grad_value_(ps, clip) is None
        return [p.grad for p in ps]

    both(run, device)


def test_parameters_vector_round_trip(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        m = T.nn.Linear(3, 2).to(dev)
        v = T.nn.utils.parameters_to_vector(m.parameters())
        T.nn.utils.vector_to_parameters(T.arange(8.0, device=dev), m.parameters())
        return v.shape, m.weight, m.bias

    both(run, device)
