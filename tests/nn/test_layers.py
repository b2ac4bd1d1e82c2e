"""Layers against the torch oracle from identical weights: outputs, input and parameter
gradients, reprs; Dropout in train and eval mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same
from tests.nn._util import copy_params, grads_of

RNG = np.random.default_rng(2)

LAYERS: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    ("Linear", (4, 3), {}, (5, 4)),
    ("Linear", (4, 3), {"bias": False}, (2, 5, 4)),
    ("Linear", (4, 3), {}, (4,)),
    ("Identity", (7,), {"unused": 1}, (2, 3)),
    ("Flatten", (), {}, (2, 3, 4)),
    ("Flatten", (0, 1), {}, (2, 3, 4)),
    ("ReLU", (), {}, (3, 4)),
    ("LeakyReLU", (0.3,), {}, (3, 4)),
    ("GELU", (), {}, (3, 4)),
    ("GELU", ("tanh",), {}, (3, 4)),
    ("SiLU", (), {}, (3, 4)),
    ("ELU", (0.5,), {}, (3, 4)),
    ("Softplus", (2.0, 3.0), {}, (3, 4)),
    ("Sigmoid", (), {}, (3, 4)),
    ("Tanh", (), {}, (3, 4)),
    ("Softmax", (1,), {}, (3, 4)),
    ("LogSoftmax", (0,), {}, (3, 4)),
    ("Dropout", (0.4,), {}, (3, 4)),  # compared in eval mode below
]


@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_matches_torch(name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                             shape: tuple[int, ...], dtype: str, device: str) -> None:
    ours = getattr(ag.nn, name)(*args, **kwargs).to(getattr(ag, dtype))
    theirs = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, dtype))
    assert repr(ours) == repr(theirs)
    copy_params(ours, theirs)
    ours.to(device)
    if name == "Dropout":
        ours.eval()
        theirs.eval()
    x = RNG.standard_normal(shape) * 2
    xo = ag.tensor(x.tolist(), dtype=getattr(ag, dtype), device=device, requires_grad=True)
    xt = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    out_o, out_t = ours(xo), theirs(xt)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    assert_same(out_o, out_t, **tol)
    assert out_o.dtype == getattr(ag, dtype)
    gi_o = grads_of(out_o, [xo, *ours.parameters()])
    gi_t = grads_of(out_t, [xt, *theirs.parameters()])
    assert_same(gi_o, gi_t, **tol)
    if out_t.grad_fn is not None:
        assert out_o.grad_fn.name() == out_t.grad_fn.name()


def test_linear_default_init_bounds(device: str) -> None:
    for fan_in, fan_out in [(3, 5), (64, 10), (1000, 2)]:
        m = ag.nn.Linear(fan_in, fan_out, device=device)
        bound = 1 / np.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) gives exactly this bound
        w, b = m.weight.detach().cpu().numpy(), m.bias.detach().cpu().numpy()
        assert w.shape == (fan_out, fan_in) and b.shape == (fan_out,)
        assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
        assert m.weight.device.type == device and m.weight.dtype == ag.float32
        if w.size > 1000:
            assert abs(w.std() - bound / np.sqrt(3)) < 0.05 * bound  # uniform's std
    m = ag.nn.Linear(2, 3, bias=False, dtype=ag.float64)
    assert m.bias is None and m.weight.dtype == ag.float64
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert list(m.state_dict()) == ["weight"]


def test_linear_seeded_init_is_reproducible(device: str) -> None:
    ag.manual_seed(7)
    a = ag.nn.Linear(5, 4, device=device)
    ag.manual_seed(7)
    b = ag.nn.Linear(5, 4, device=device)
    np.testing.assert_array_equal(a.weight.detach().cpu().numpy(), b.weight.detach().cpu().numpy())


def test_dropout_module_modes(device: str) -> None:
    m = ag.nn.Dropout(0.5)
    x = ag.ones(1000, device=device, requires_grad=True)
    out = m(x)
    zeros = int((out == 0).sum())
    assert 400 < zeros < 600 and set(np.unique(out.detach().cpu().numpy())) <= {0.0, 2.0}
    m.eval()
    assert m(x) is x
    inplace = ag.nn.Dropout(0.5, inplace=True).train()
    y = ag.ones(100, device=device)
    assert inplace(y) is y and int((y == 0).sum()) > 0
    assert repr(inplace) == "Dropout(p=0.5, inplace=True)"


def test_inplace_module_reprs() -> None:
    for name, args in [("ReLU", (True,)), ("SiLU", (True,)), ("LeakyReLU", (0.1, True)),
                       ("ELU", (2.0, True))]:
        assert repr(getattr(ag.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


def test_mlp_training_step_matches_torch(device: str) -> None:
    def build(T: Any) -> Any:
        return T.nn.Sequential(T.nn.Linear(6, 12), T.nn.ReLU(), T.nn.Dropout(0.0),
                               T.nn.Linear(12, 12), T.nn.Tanh(), T.nn.Linear(12, 3))

    ours, theirs = build(ag), build(torch)
    copy_params(ours, theirs)
    ours.to(device)
    x = RNG.standard_normal((16, 6))
    y = RNG.integers(0, 3, 16)
    for _ in range(3):
        lo = ag.nn.functional.cross_entropy(
            ours(ag.tensor(x.tolist(), dtype=ag.float32, device=device)),
            ag.tensor(y.tolist(), device=device))
        lt = torch.nn.functional.cross_entropy(theirs(torch.tensor(x, dtype=torch.float32)),
                                               torch.tensor(y))
        for m in (ours, theirs):
            m.zero_grad()
        lo.backward()
        lt.backward()
        np.testing.assert_allclose(lo.item(), lt.item(), rtol=1e-5)
        with ag.no_grad(), torch.no_grad():
            for p, q in zip(ours.parameters(), theirs.parameters()):
                np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.numpy(), rtol=1e-4,
                                           atol=1e-6)
                p.sub_(0.1 * p.grad)
                q.sub_(0.1 * q.grad)
