"""``autograd.grad(..., is_grads_batched=True)`` against PyTorch: a batch of vector-Jacobian
products in one call (values, unused inputs, create_graph) and the errors for bad batches."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import check_case


def _graph(T: Any, dev: str) -> tuple[Any, Any, Any]:
    rng = np.random.default_rng(0)
    x = T.tensor(rng.standard_normal((4, 3)), requires_grad=True, device=dev)
    z = T.tensor(rng.standard_normal(2), requires_grad=True, device=dev)
    y = (x * x).sum(1) * x.sum() + x[:, 0].exp()
    return x, z, y


@pytest.mark.parametrize("create_graph", [False, True])
def test_batched_vjps_match_torch(device: str, create_graph: bool) -> None:
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x, z, y = _graph(T, dev)
        v = T.tensor(np.arange(20.0).reshape(5, 4) - 7, dtype=T.float64, device=dev)
        gx, gz = T.autograd.grad(y, [x, z], v, is_grads_batched=True, allow_unused=True,
                                 create_graph=create_graph, retain_graph=True)
        assert gz is None
        _, mz = T.autograd.grad(y, [x, z], v, is_grads_batched=True, allow_unused=True,
                                materialize_grads=True, retain_graph=True)
        second = T.autograd.grad(gx.sum(), x)[0] if create_graph else None
        res.append((gx, tuple(mz.shape), second))
    assert tuple(res[0][0].shape) == tuple(res[1][0].shape) == (5, 4, 3)
    np.testing.assert_allclose(res[0][0].detach().cpu().numpy(), res[1][0].detach().numpy(),
                               rtol=1e-12)
    assert res[0][1] == res[1][1] == (2,)
    if create_graph:
        np.testing.assert_allclose(res[0][2].cpu().numpy(), res[1][2].numpy(), rtol=1e-12)


def _bad(g: Any, scalar: bool = False) -> Any:
    def case(T: Any, dev: str) -> Any:
        x = T.ones(3, requires_grad=True, device=dev)
        y = (x * x).sum() if scalar else x * 2
        return T.autograd.grad(y, x, g(T, dev), is_grads_batched=True)
    return case


@pytest.mark.parametrize("name, case", [
    ("wrong remaining shape", _bad(lambda T, d: T.ones(2, 5, device=d))),
    ("0-d grad_output", _bad(lambda T, d: T.ones((), device=d), scalar=True)),
    ("implicit grad of a scalar", _bad(lambda T, d: None, scalar=True)),
    ("implicit grad of a vector", _bad(lambda T, d: None)),
])
def test_bad_batches_raise_as_torch(device: str, name: str, case: Any) -> None:
    check_case(case, device)
