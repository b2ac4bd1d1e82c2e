"""The seeds' examples and exercises, as tests (shared/seeds/)."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_gpu as ag


def test_cubic_matches_analytic(device: str) -> None:
    x = ag.randn(8, requires_grad=True, device=device)
    (x ** 3 - 2 * x).sum().backward()
    assert ag.allclose(x.grad, 3 * x.detach() ** 2 - 2)


def test_sigmoid_matches_analytic(device: str) -> None:
    x = ag.randn(8, requires_grad=True, device=device)
    ag.sigmoid(x).sum().backward()
    sig = ag.sigmoid(x.detach())
    assert ag.allclose(x.grad, sig * (1 - sig))


def test_grad_fn_chain_and_next_functions(device: str) -> None:
    w = ag.tensor([1.5], requires_grad=True, device=device)
    b = ag.tensor([0.3], requires_grad=True, device=device)
    x = ag.tensor([2.0], device=device)
    z = x * w + b
    a = ag.sigmoid(z)
    loss = (a - 1.0) ** 2
    assert w.grad_fn is None and w.is_leaf
    assert z.grad_fn.name() == "AddBackward0"
    assert a.grad_fn.name() == "SigmoidBackward0"
    assert loss.grad_fn.name() == "PowBackward0"
    (sub, _), (const, _) = loss.grad_fn.next_functions
    assert sub.name() == "SubBackward0" and const is None
    mul, _ = z.grad_fn.next_functions[0]
    acc_b, _ = z.grad_fn.next_functions[1]
    assert mul.name() == "MulBackward0"
    assert acc_b.name() == "torch::autograd::AccumulateGrad" and acc_b.variable is b
    assert mul.next_functions[0] == (None, 0)
    assert mul.next_functions[1][0].variable is w


def test_diamond_graph_sums_paths(device: str) -> None:
    a = ag.tensor(2.0, requires_grad=True, device=device)
    b = ag.tensor(3.0, requires_grad=True, device=device)
    c = a + b
    d = ag.tensor(4.0, requires_grad=True, device=device)
    e = c * d
    e.backward()
    assert (a.grad.item(), b.grad.item(), d.grad.item()) == (4.0, 4.0, 5.0)
    x = ag.tensor(3.0, requires_grad=True, device=device)
    y = x * x + x * 2  # x reached along three edges
    y.backward()
    assert x.grad.item() == 8.0


def test_grad_accumulates_and_retain_graph(device: str) -> None:
    x = ag.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
