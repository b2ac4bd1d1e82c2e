"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode, thread-locality, detach."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import torch

import autograd_gpu as ag

from ._util import both, parity, same_error


@parity
def test_no_grad_context_and_decorators(T: Any, dev: str) -> Any:
    x = T.ones(2, device=dev, requires_grad=True)
    with T.no_grad():
        a = x * 2
        inner = T.is_grad_enabled()
    @T.no_grad()
    def g1(t: Any) -> Any:
        return t * 2

    @T.no_grad
    def g2(t: Any) -> Any:
        return t * 2

    b, c = g1(x), g2(x)
    d = x * 2
    return (a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, inner,
            T.is_grad_enabled(), g2.__name__)


@parity
def test_no_grad_generator_decorator(T: Any, dev: str) -> Any:
    x = T.ones(2, device=dev, requires_grad=True)

    @T.no_grad()
    def gen() -> Any:
        for _ in range(2):
            yield (x * 2).requires_grad, T.is_grad_enabled()

    out = list(gen())
    return out, T.is_grad_enabled()


@parity
def test_enable_grad_inside_no_grad(T: Any, dev: str) -> Any:
    x = T.ones(2, device=dev, requires_grad=True)

    @T.enable_grad()
    def g(t: Any) -> Any:
        return t * 2

    with T.no_grad():
        with T.enable_grad():
            a = x * 2
        b = x * 2
        c = g(x)
    return a.requires_grad, b.requires_grad, c.requires_grad


@parity
def test_set_grad_enabled_forms(T: Any, dev: str) -> Any:
    x = T.ones(2, device=dev, requires_grad=True)
    with T.set_grad_enabled(False):
        a = x * 2
    after_cm = T.is_grad_enabled()
    T.set_grad_enabled(False)
    b = x * 2
    T.set_grad_enabled(True)

    @T.set_grad_enabled(False)
    def g(t: Any) -> Any:
        return t * 2

    still = T.is_grad_enabled()
    c = g(x)
    return a.requires_grad, after_cm, b.requires_grad, still, c.requires_grad


def test_no_grad_restores_on_exception() -> None:
    with pytest.raises(ValueError), ag.no_grad():
        raise ValueError
    assert ag.is_grad_enabled()


@parity
def test_inference_mode(T: Any, dev: str) -> Any:
    x = T.ones(2, device=dev, requires_grad=True)
    with T.inference_mode():
        y = x * 2
        inner = (T.is_inference_mode_enabled(), T.is_grad_enabled())
    with T.inference_mode(False):
        z = x * 2

    @T.inference_mode()
    def g(t: Any) -> Any:
        return t + 1

    w = g(x)
    return (y.requires_grad, y.is_inference(), x.is_inference(), inner,
            T.is_inference_mode_enabled(), z.requires_grad, w.is_inference())


def test_inference_tensor_in_autograd_raises(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        with T.inference_mode():
            y = T.ones(2, device=dev)
        x = T.ones(2, device=dev, requires_grad=True)
        return x * y  # Mul saves y for x's gradient

    same_error(f, device)


def test_inplace_on_inference_tensor_outside_raises(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        with T.inference_mode():
            y = T.ones(2, device=dev)
        y.add_(1)

    same_error(f, device)

    def g(T: Any, dev: str) -> Any:
        with T.inference_mode():
            y = T.ones(2, device=dev)
            y.add_(1)  # allowed inside
        return y.clone().add_(1)  # a clone made outside is a normal tensor

    both(g, device)


def test_grad_mode_is_thread_local(device: str) -> None:
    seen: list[bool] = []

    def worker() -> None:
        x = ag.ones(2, device=device, requires_grad=True)
        seen.append(ag.is_grad_enabled())
        seen.append((x * 2).requires_grad)

    with ag.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        assert not ag.is_grad_enabled()
    assert seen == [True, True]
    # torch agrees
    tseen: list[bool] = []
    with torch.no_grad():
        th = threading.Thread(target=lambda: tseen.append(torch.is_grad_enabled()))
        th.start()
        th.join()
    assert tseen == [True]


@parity
def test_detach_shares_storage_and_version(T: Any, dev: str) -> Any:
    x = T.tensor([1.0, 2.0], device=dev, requires_grad=True)
    y = x * 2
    d = y.detach()
    d.add_(1)  # visible through y, and bumps the shared counter
    return (d.requires_grad, d.grad_fn is None, d.is_leaf, y._version, d._version, y)


def test_detach_inplace(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x = T.tensor([1.0, 2.0], device=dev, requires_grad=True)
        y = x * 2
        v0 = y._version
        z = y.detach_()
        return (z is y, y.requires_grad, y.grad_fn is None, y.is_leaf, y._version == v0)

    both(f, device)

    def g(T: Any, dev: str) -> Any:
        x = T.tensor([1.0, 2.0], device=dev, requires_grad=True)
        x[0:1].detach_()

    same_error(g, device)


def test_inference_tensor_properties(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        with T.inference_mode():
            y = T.ones(2, device=dev)
            with T.inference_mode(False):
                z = T.ones(2, device=dev)
        return ((y + 1).is_inference(), y.clone().is_inference(), y.detach().is_inference(),
                z.is_inference())

    both(f, device)

    def g(T: Any, dev: str) -> Any:
        with T.inference_mode():
            y = T.ones(2, device=dev)
        y.requires_grad_()

    same_error(g, device)
