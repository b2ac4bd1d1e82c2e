"""A small training problem run identically by torch and autograd_gpu (each with its own autograd)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

RNG = np.random.default_rng(1234)
INIT = {
    "w1": RNG.standard_normal((4, 6)).astype(np.float32) * 0.5,
    "b1": RNG.standard_normal(6).astype(np.float32) * 0.1,
    "w2": RNG.standard_normal((6, 2)).astype(np.float32) * 0.5,
    "q": RNG.standard_normal(9).astype(np.float32),
}
X = RNG.standard_normal((16, 4)).astype(np.float32)
Y = RNG.standard_normal((16, 2)).astype(np.float32)
SCALE = np.linspace(0.5, 3.0, 9).astype(np.float32)


def make_params(lib: Any, device: str = "cpu") -> list[Any]:
    """Leaf parameters with identical float32 values in ``lib`` (torch or autograd_gpu)."""
    dev = "cpu" if lib is torch else device
    return [lib.tensor(INIT[k], device=dev, requires_grad=True) for k in ("w1", "b1", "w2", "q")]


def loss_fn(lib: Any, params: list[Any], device: str = "cpu") -> Any:
    """A tanh MLP's squared error plus a scaled quadratic (plain tensor ops only), in the
    parameters' dtype."""
    dev = "cpu" if lib is torch else device
    w1, b1, w2, q = params
    x, y = lib.tensor(X, device=dev, dtype=w1.dtype), lib.tensor(Y, device=dev, dtype=w1.dtype)
    pred = lib.tanh(x @ w1 + b1) @ w2
    scale = lib.tensor(SCALE, device=dev, dtype=w1.dtype)
    return ((pred - y) ** 2).mean() + (scale * (q - 0.5) ** 2).sum() * 0.1

