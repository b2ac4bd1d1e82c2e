"""The backward engine: backward/grad arguments, accumulation, retained graphs, higher-order
gradients, deep graphs, graph lifetime and hook order, each compared with torch."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag

from ._util import ALLOW_CREATE_GRAPH_WARNING, both, leaf, parity, same_error, to_np

# ---- backward arguments --------------------------------------------------------------------

@parity
def test_backward_gradient_argument(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    y = x.sin() * x
    y.backward(gradient=T.tensor([[1.0, 2, 3], [4, 5, 6]], dtype=T.float64, device=dev))
    return x.grad


@parity
def test_backward_retain_graph_twice_accumulates(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    g1 = x.grad.clone()
    y.backward()
    return g1, x.grad


@parity
def test_backward_inputs_restricts_accumulation(T: Any, dev: str) -> Any:
    x, w = leaf(T, dev), leaf(T, dev, [[2.0, 1, 0], [1, 1, 3]])
    h = x * w
    h.retain_grad()
    (h * h).sum().backward(inputs=[w])
    g = (x.grad, w.grad, h.grad)
    (h * h).sum().backward(inputs=[h]) if False else None
    return g


@parity
def test_backward_inputs_non_leaf(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    h = x * 3
    (h ** 2).sum().backward(inputs=[h])
    return x.grad, h.grad


@parity
def test_autograd_backward_several_roots(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    a, b = x.sum(), x * x
    T.autograd.backward([a, b], [None, T.ones_like(b)])
    return x.grad


@ALLOW_CREATE_GRAPH_WARNING
@parity
def test_create_graph_backward_gives_differentiable_grad(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.grad_fn is not None
    x.grad = None
    g.sum().backward()
    return g, x.grad


# ---- autograd.grad ----------------------------------------------------------------------------

@parity
def test_grad_grad_outputs_and_several_outputs(T: Any, dev: str) -> Any:
    x, w = leaf(T, dev), leaf(T, dev, [[1.0, -2, 0.5], [0.1, 0.2, 0.3]])
    a = (x * w).tanh()
    b = (x - w).pow(2).sum()
    go = T.tensor([[1.0, 0, 2], [3, 1, 1]], dtype=T.float64, device=dev)
    gx, gw = T.autograd.grad([a, b], [x, w], [go, None])
    assert x.grad is None and w.grad is None
    return gx, gw


@parity
def test_grad_allow_unused_and_materialize(T: Any, dev: str) -> Any:
    x, z = leaf(T, dev), leaf(T, dev)
    y = (x * 2).sum()
    r1 = T.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    r2 = T.autograd.grad(y, [x, z], materialize_grads=True)
    return r1, r2


def test_grad_unused_raises(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x, z = leaf(T, dev), leaf(T, dev)
        T.autograd.grad((x * 2).sum(), [x, z])

    same_error(f, device)


@parity
def test_grad_non_leaf_inputs(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    h = x.exp()
    m = h * x
    y = (m * m).sum()
    return T.autograd.grad(y, [h, m, x])


def test_grad_does_not_touch_other_leaves(device: str) -> None:
    x = ag.tensor([1.0, 2.0], requires_grad=True, device=device)
    w = ag.tensor([3.0, 4.0], requires_grad=True, device=device)
    (gx,) = ag.autograd.grad((x * w).sum(), x)
    np.testing.assert_allclose(to_np(gx), [3.0, 4.0])
    assert w.grad is None and x.grad is None


# ---- accumulation -----------------------------------------------------------------------------

@parity
def test_grad_accumulates_over_calls_and_paths(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    for _ in range(3):
        (x * x + x.sin() * x).sum().backward()
    return x.grad


def test_pass_through_grads_do_not_share_memory(device: str) -> None:
    a = ag.tensor([1.0, 2.0], requires_grad=True, device=device)
    b = ag.tensor([3.0, 4.0], requires_grad=True, device=device)
    (a + b).sum().backward()
    np.testing.assert_allclose(to_np(a.grad), [1.0, 1.0])
    a.grad.add_(10.0)
    np.testing.assert_allclose(to_np(b.grad), [1.0, 1.0])
    # the same root gradient reaching one leaf twice and another once
    c = ag.tensor([1.0, 2.0], requires_grad=True, device=device)
    d = ag.tensor([1.0, 2.0], requires_grad=True, device=device)
    g = ag.tensor([5.0, 6.0], device=device)
    (c + d).backward(g)
    c.grad.mul_(0)
    np.testing.assert_allclose(to_np(d.grad), [5.0, 6.0])
    np.testing.assert_allclose(to_np(g), [5.0, 6.0])  # the user's gradient is never written into


def test_grad_of_leaf_is_not_user_gradient(device: str) -> None:
    x = ag.tensor([1.0, 2.0], requires_grad=True, device=device)
    g = ag.tensor([1.0, 1.0], device=device)
    x.backward(g)
    x.grad.add_(1)
    np.testing.assert_allclose(to_np(g), [1.0, 1.0])


@parity
def test_retain_grad(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    h = x * 2
    h.retain_grad()
    k = h.exp()
    k.retain_grad()
    assert h.retains_grad and not x.retains_grad
    (k * h).sum().backward(retain_graph=True)
    g1 = h.grad.clone()
    (k * h).sum().backward()
    return g1, h.grad, k.grad, x.grad


# ---- saved tensors freed ---------------------------------------------------------------------

def test_second_backward_raises(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        y = (x * x).sum()
        y.backward()
        y.backward()

    same_error(f, device)


@parity
def test_nodes_without_saved_tensors_backward_twice(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    y = (-(x + 2).view(-1)).sum()  # Add, View, Neg and Sum save no tensor
    y.backward()
    y.backward()
    return x.grad


def test_saved_tensors_released_after_backward(device: str) -> None:
    x = ag.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = x.exp()
    node = y.grad_fn
    assert node._saved is not None
    y.sum().backward()
    assert node._saved is None
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        node.saved_tensors  # noqa: B018


# ---- higher order -----------------------------------------------------------------------------

@parity
def test_hessian_vector_product(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    v = T.tensor([[1.0, 0.5, -1], [2, 0, 1]], dtype=T.float64, device=dev)
    y = (x.sin() * x.pow(2)).sum() + (x[0] * x[1]).sum()
    (g,) = T.autograd.grad(y, x, create_graph=True)
    (hv,) = T.autograd.grad((g * v).sum(), x)
    return g, hv


@parity
def test_gradient_penalty(T: Any, dev: str) -> Any:
    w = T.tensor([[0.3, -0.2], [0.1, 0.4], [0.5, 0.5]], dtype=T.float64, device=dev,
                 requires_grad=True)
    x = leaf(T, dev)
    out = (x @ w).tanh().sum()
    (gx,) = T.autograd.grad(out, x, create_graph=True)
    penalty = ((gx.norm() - 1) ** 2)
    penalty.backward()
    return gx, w.grad, x.grad


def test_third_derivative_of_x4(device: str) -> None:
    x = ag.tensor(1.5, dtype=ag.float64, requires_grad=True, device=device)
    y = x ** 4
    (g1,) = ag.autograd.grad(y, x, create_graph=True)
    (g2,) = ag.autograd.grad(g1, x, create_graph=True)
    (g3,) = ag.autograd.grad(g2, x, create_graph=True)
    (g4,) = ag.autograd.grad(g3, x)
    assert [g.item() for g in (g1, g2, g3, g4)] == pytest.approx(
        [4 * 1.5 ** 3, 12 * 1.5 ** 2, 24 * 1.5, 24.0])


# ---- deep graphs and graph lifetime ------------------------------------------------------------

def test_long_chain_no_recursion(device: str) -> None:
    n = 100_000
    # NOTE: gc is paused only for speed (its passes over torch's many objects would dominate);
    # the chain is freed by reference counting, which is what this checks.
    was = gc.isenabled()
    gc.disable()
    try:
        x = ag.tensor(1.0, dtype=ag.float64, requires_grad=True, device=device)
        y = x
        for _ in range(n):
            y = y * 1.0000001
        ref = weakref.ref(y.grad_fn)
        y.backward()
        assert x.grad.item() == pytest.approx(1.0000001 ** n)
        del y  # deleting the 100000-node chain does not recurse either
        assert ref() is None
    finally:
        if was:
            gc.enable()


def test_graph_freed_by_refcount(device: str) -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        x = ag.randn(4, 3, requires_grad=True, device=device)
        w = ag.randn(3, 2, requires_grad=True, device=device)
        h = (x @ w).tanh()
        loss = (h * h).sum()
        node = weakref.ref(h.grad_fn)
        saved = weakref.ref(h.grad_fn._saved[0][1][0])  # TanhBackward0 saves its output array
        del h
        assert node() is not None
        loss.backward(retain_graph=True)
        del loss
        assert node() is None and saved() is None
        # without backward too
        y = (x.exp() * 2).sum()
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None
    finally:
        if was:
            gc.enable()


@parity
def test_next_functions_and_accumulate_grad_variable(T: Any, dev: str) -> Any:
    x, w = leaf(T, dev), leaf(T, dev)
    y = (x * w + 1).sum()
    names = []
    stack = [y.grad_fn]
    while stack:
        n = stack.pop()
        names.append(n.name())
        stack.extend(nf for nf, _ in n.next_functions if nf is not None)
    mul = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert mul.next_functions[0][0].variable is x and mul.next_functions[1][0].variable is w
    assert mul.next_functions[0][0] is (x * 2).grad_fn.next_functions[0][0]
    return names, [nr for _, nr in mul.next_functions]


@parity
def test_hook_execution_order_matches_torch(T: Any, dev: str) -> Any:
    log: list[str] = []
    a = T.tensor([1.0, 2.0], device=dev, requires_grad=True)
    b = T.tensor([3.0, 4.0], device=dev, requires_grad=True)
    c = a * b
    d = c.exp()
    e = c * a
    out = (d + e).sum()
    for name, t in (("a", a), ("b", b), ("c", c), ("d", d), ("e", e)):
        t.register_hook(lambda g, n=name: log.append("tensor " + n))
    for name, t in (("c", c), ("d", d), ("e", e), ("out", out)):
        t.grad_fn.register_prehook(lambda go, n=name: log.append("pre " + n))
        t.grad_fn.register_hook(lambda gi, go, n=name: log.append("post " + n))
    a.register_post_accumulate_grad_hook(lambda t: log.append("acc a"))
    b.register_post_accumulate_grad_hook(lambda t: log.append("acc b"))
    out.backward()
    return log


def test_gradient_dtype_cast_and_scalar_errors(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        (x * 2).backward()

    same_error(f, device)

    def g(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        (x * 2).backward(T.ones(3, device=dev, dtype=T.float64))

    same_error(g, device)


def test_grad_assignment_checks(device: str) -> None:
    def size(T: Any, dev: str) -> Any:
        leaf(T, dev).grad = T.ones(3, dtype=T.float64, device=dev)

    def dtype(T: Any, dev: str) -> Any:
        leaf(T, dev).grad = T.ones(2, 3, dtype=T.float32, device=dev)

    def kind(T: Any, dev: str) -> Any:
        leaf(T, dev).grad = 5

    for f in (size, dtype, kind):
        same_error(f, device)

    def ok(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        x.grad = T.ones(2, 3, dtype=T.float64, device=dev)
        (x * 2).sum().backward()
        g = x.grad
        x.grad = None
        return g, x.grad

    both(ok, device)


def test_non_leaf_grad_access_warns(device: str) -> None:
    for T, dev in ((torch, "cpu"), (ag, device)):
        x = leaf(T, dev)
        y = x * 2
        y.sum().backward()
        with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf"):
            assert y.grad is None
        y.retain_grad()
        assert y.grad is None  # retained: no warning (warnings are errors here)
