"""Tensor hooks, post-accumulate hooks, Node hooks and pre-hooks: values and order vs torch."""

from __future__ import annotations

from typing import Any

import pytest

import autograd_gpu as ag

from . import _util
from ._util import both, parity, same_error


def leaf(T: Any, dev: str) -> Any:
    return _util.leaf(T, dev, [1.0, -2.0, 3.0])


@parity
def test_tensor_hook_replaces_gradient(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    h = x * x
    seen = []
    h.register_hook(lambda g: seen.append(g.clone()) or g * 10)
    x.register_hook(lambda g: g + 1)
    h.sum().backward()
    return seen, x.grad


@parity
def test_hook_handle_remove(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    handle = x.register_hook(lambda g: g * 100)
    (x * 2).sum().backward()
    g1 = x.grad.clone()
    handle.remove()
    handle.remove()  # twice is harmless
    x.grad = None
    (x * 2).sum().backward()
    return g1, x.grad


@parity
def test_several_hooks_run_in_registration_order(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    y = x.exp()
    log = []
    y.register_hook(lambda g: log.append(1) or g * 2)
    y.register_hook(lambda g: log.append(2) or g + 1)
    y.register_hook(lambda g: log.append(3))
    y.sum().backward()
    return log, x.grad


def test_hook_on_tensor_without_grad_raises(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        T.ones(2, device=dev).register_hook(lambda g: g)

    same_error(f, device)


def test_post_accumulate_grad_hook(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        seen = []

        def hook(t: Any) -> None:
            seen.append(t.grad.clone())
            t.grad.mul_(0.5)  # e.g. an optimizer step reading .grad

        x.register_post_accumulate_grad_hook(hook)
        (x * x).sum().backward()
        (x * 3).sum().backward()
        return seen, x.grad

    both(f, device)

    def g(T: Any, dev: str) -> Any:
        (leaf(T, dev) * 2).register_post_accumulate_grad_hook(lambda t: None)

    same_error(g, device)


@parity
def test_node_hook_and_prehook(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    w = T.tensor([0.5, 0.25, 2.0], dtype=T.float64, device=dev, requires_grad=True)
    y = x * w
    log = []

    def pre(grad_outputs: Any) -> Any:
        log.append(("pre", [g.clone() for g in grad_outputs]))
        return (grad_outputs[0] * 2,)

    def post(grad_inputs: Any, grad_outputs: Any) -> Any:
        log.append(("post", [g.clone() for g in grad_inputs], [g.clone() for g in grad_outputs]))
        return (grad_inputs[0] + 1, grad_inputs[1])

    y.grad_fn.register_prehook(pre)
    y.grad_fn.register_hook(post)
    y.sum().backward()
    return log, x.grad, w.grad


@parity
def test_retain_grad_sees_hooked_gradient(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    h = x * 2
    h.register_hook(lambda g: g * 3)  # registered before retain_grad
    h.retain_grad()
    h.register_hook(lambda g: g + 1)  # after: still runs before retain_grad captures
    (h * h).sum().backward()
    return h.grad, x.grad


@parity
def test_hook_on_leaf_modifies_accumulated_grad_only(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    x.register_hook(lambda g: g * 0)
    y = x * 2
    y.retain_grad()
    y.sum().backward()
    return x.grad, y.grad


def test_removable_handle_context_manager(device: str) -> None:
    x = ag.tensor([1.0, 2.0], requires_grad=True, device=device)
    with x.register_hook(lambda g: g * 0):
        pass
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


@parity
def test_hook_with_grad_in_autograd_grad(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    h = x.sin()
    h.register_hook(lambda g: g * 2)
    return T.autograd.grad(h.sum(), x)


def test_metadata_dict() -> None:
    x = ag.tensor([1.0], requires_grad=True)
    y = x * 2
    y.grad_fn.metadata["k"] = 1
    assert y.grad_fn.metadata == {"k": 1}
    with pytest.raises(AttributeError):
        y.grad_fn.no_such_attribute  # noqa: B018


@parity
def test_hooks_and_retain_grad_across_inplace(T: Any, dev: str) -> Any:
    x = T.tensor([1.0, 2.0], device=dev, requires_grad=True)
    h = x * 3
    h.retain_grad()
    log = []
    h.register_hook(lambda g: log.append(("before", g.clone())))  # sees the old value's grad
    h.mul_(2)
    h.register_hook(lambda g: log.append(("after", g.clone())))
    (h * h).sum().backward()
    return h.grad, log, x.grad, h.retains_grad


@parity
def test_retain_grad_on_modified_view(T: Any, dev: str) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 4.0]], device=dev, requires_grad=True)
    h = x * 3
    v = h[0]
    v.retain_grad()
    v.mul_(2)
    (h * h).sum().backward()
    return v.grad, x.grad, v.grad_fn.name(), h.grad_fn.name()


@parity
def test_gradients_seen_by_hooks_are_not_reused_as_grad(T: Any, dev: str) -> Any:
    x = T.ones(2, device=dev, requires_grad=True)
    w = T.ones(2, device=dev, requires_grad=True)
    seen_x: list[Any] = []
    seen_node: list[Any] = []
    x.register_hook(lambda g: seen_x.append(g))
    h = w.view(-1)  # ViewBackward0 saves nothing: it can run in both passes
    h.grad_fn.register_hook(lambda gi, go: seen_node.append(gi[0]))
    (x * 2 + h * 2).sum().backward()
    (x * 3 + h * 3).sum().backward()  # accumulates into .grad without touching what hooks kept
    return seen_x[0], seen_node[0], x.grad, w.grad
