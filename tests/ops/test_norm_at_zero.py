"""``norm`` where the norm or an element is exactly 0: values, gradients and second-order
gradients equal PyTorch's, nan included (its masked backward formula gives 0 there, and the
derivative of that formula is nan where the norm's Hessian is infinite)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag

INPUTS = {
    "all_zero": np.zeros((3, 4)),
    "zero_row": np.array([[0.0, 0, 0, 0], [1, -2, 0, 3], [0.5, 0, 0, -1]]),
    "zero_column": np.array([[0.0, 1, 0, 0], [0, -2, 0, 3], [0, 0, 0, -1]]),
    "ties_and_zeros": np.array([[0.0, 1, -1, 0], [0, -2, 2, 0], [0, 0, 0, -1]]),
}
ORDERS = [2, "fro", 1, math.inf, -math.inf, 3, 1.5, 0.5, 4, 2.5]
DIMS = [(None, False), (1, False), (0, True), ((0, 1), False)]


def _np(m: Any, t: Any) -> np.ndarray | None:
    if t is None:
        return None
    if m is torch and t._is_zerotensor():
        return np.zeros(tuple(t.shape))
    return np.asarray(t.detach().cpu()) if m is ag else t.detach().numpy()


def _run(m: Any, x_np: np.ndarray, p: Any, dim: Any, keepdim: bool,
         device: str) -> list[np.ndarray | None]:
    """The norm, its gradient, and the gradients of ``<grad, v>`` w.r.t. ``x`` and ``w``."""
    kw = {"device": device} if m is ag else {}
    x = m.tensor(x_np, dtype=m.float64, requires_grad=True, **kw)
    out = m.norm(x, p=p) if dim is None else m.norm(x, p=p, dim=dim, keepdim=keepdim)
    rng = np.random.default_rng(1)
    w = m.tensor(rng.standard_normal(tuple(out.shape)), dtype=m.float64, requires_grad=True, **kw)
    (gx,) = m.autograd.grad((out * w).sum(), x, create_graph=True)
    v = m.tensor(rng.standard_normal(x_np.shape), dtype=m.float64, **kw)
    ggx, ggw = m.autograd.grad((gx * v).sum(), (x, w), allow_unused=True)
    return [_np(m, t) for t in (out, gx, ggx, ggw)]


@pytest.mark.parametrize("dim,keepdim", DIMS)
@pytest.mark.parametrize("p", ORDERS)
def test_norm_first_and_second_order_at_zero_match_torch(p: Any, dim: Any, keepdim: bool,
                                                         device: str) -> None:
    for name, x in INPUTS.items():
        ours = _run(ag, x, p, dim, keepdim, device)
        theirs = _run(torch, x, p, dim, keepdim, "cpu")
        for what, a, b in zip(("norm", "grad", "grad of grad (x)", "grad of grad (w)"), ours,
                              theirs):
            msg = f"{name} p={p} dim={dim} keepdim={keepdim}: {what}"
            if b is None:
                assert a is None or not np.any(a), msg
                continue
            assert a is not None, msg
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True, err_msg=msg)


def test_norm_p0_has_no_gradient(device: str) -> None:
    """As in PyTorch: the count of nonzeros records a node, but no gradient flows from it."""
    x = ag.tensor([[1.0, 0.0], [2.0, 3.0]], requires_grad=True, device=device)
    y = x.norm(p=0)
    assert y.grad_fn.name() == "LinalgVectorNormBackward0"
    y.backward()
    assert x.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        ag.autograd.grad(x.norm(p=0, dim=1).sum(), x)
