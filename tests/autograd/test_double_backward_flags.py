"""Under ``create_graph``, which gradients require grad (and so can be differentiated again)
follows PyTorch op by op: relu-like backwards stay linked to their input (second derivative 0),
mask-based ones (clamp, maximum, where, indexing) do not."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag

OPS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "relu": lambda m, x, y: x.relu(),
    "leaky_relu": lambda m, x, y: m.nn.functional.leaky_relu(x, 0.1),
    "clamp": lambda m, x, y: x.clamp(-0.5, 0.5),
    "maximum": lambda m, x, y: m.maximum(x, y),
    "amax": lambda m, x, y: x.amax(),
    "abs": lambda m, x, y: x.abs(),
    "where": lambda m, x, y: m.where(x > 0, x, y),
    "index": lambda m, x, y: x[[0, 1, 1]],
    "elu": lambda m, x, y: m.nn.functional.elu(x),
}


def _second(m: Any, op: Callable[..., Any], device: str) -> tuple[bool, Any]:
    dev = {} if m is torch else {"device": device}
    x = m.tensor([0.3, -1.2, 2.0, -0.1, 0.7], dtype=m.float64, requires_grad=True, **dev)
    y = m.tensor([0.1, -0.2, 3.0, -0.5, 0.2], dtype=m.float64, requires_grad=True, **dev)
    (g,) = m.autograd.grad(op(m, x, y).sum(), x, create_graph=True)
    if not g.requires_grad:
        return False, None
    (h,) = m.autograd.grad((g * g).sum(), x, allow_unused=True)
    # NOTE: torch may return a lazily-zero tensor; adding zeros materialises it.
    return True, None if h is None else (h.detach() + m.zeros_like(x)).tolist()


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradient_of_gradient_matches_torch(device: str, name: str) -> None:
    ours = _second(ag, OPS[name], device)
    theirs = _second(torch, OPS[name], device)
    assert ours[0] == theirs[0]
    if theirs[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-12)
