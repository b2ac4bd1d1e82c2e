"""A small training problem run identically by torch and autograd_gpu (each with its own autograd)."""

from __future__ import annotations

from typing import Any, Callable

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


def check_state_dict_round_trip(device: str, name: str, kw: dict[str, Any],
                                inspect: Callable[[dict[str, Any]], None] | None = None) -> Any:
    """Train 10 steps with two parameter groups, save ``state_dict`` (``inspect`` sees it),
    load it into a fresh optimizer (whose changed lr the load restores) on copies of the
    parameters, train 10 more: exactly the parameters of 20 uninterrupted steps."""
    import autograd_gpu as ag

    def make(params: list[Any]) -> Any:
        return getattr(ag.optim, name)(
            [{"params": params[:2]}, {"params": params[2:], "lr": kw["lr"] / 2}], **kw)

    def train(params: list[Any], opt: Any, steps: int) -> None:
        for _ in range(steps):
            opt.zero_grad()
            loss_fn(ag, params, device).backward()
            opt.step()

    full = make_params(ag, device)
    train(full, make(full), 20)
    first = make_params(ag, device)
    opt = make(first)
    train(first, opt, 10)
    sd = opt.state_dict()
    if inspect is not None:
        inspect(sd)
    resumed = [ag.tensor(p.detach().cpu().numpy(), device=device, requires_grad=True)
               for p in first]
    fresh = make(resumed)
    fresh.param_groups[1]["lr"] = 123.0  # overwritten by the loaded groups
    fresh.load_state_dict(sd)
    assert fresh.param_groups[1]["lr"] == kw["lr"] / 2
    assert fresh.param_groups[0]["params"][0] is resumed[0]
    train(resumed, fresh, 10)
    for a, b in zip(resumed, full):
        np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())

