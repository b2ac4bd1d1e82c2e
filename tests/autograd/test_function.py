"""Custom ``autograd.Function``: both styles, ctx features, error messages, higher order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag

from . import _util
from ._util import both, first_sentence, function_class, parity, same_error, to_np


def make_functions(T: Any) -> dict[str, Any]:
    """The same custom Functions, written against ``T`` (torch or autograd_gpu)."""

    class Cube(T.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, scale: float) -> Any:
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x ** 3 * scale

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2 * ctx.scale, None

    class MulSetup(T.autograd.Function):
        @staticmethod
        def forward(x: Any, y: Any) -> Any:
            return x * y

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            x, y = inputs
            ctx.save_for_backward(x, y)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            x, y = ctx.saved_tensors
            gx = grad * y if ctx.needs_input_grad[0] else None
            gy = grad * x if ctx.needs_input_grad[1] else None
            return gx, gy

    class Exp(T.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            out = x.exp()
            ctx.save_for_backward(out)  # an output, saved
            return out

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (out,) = ctx.saved_tensors
            return grad * out

    class SortWithIdx(T.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            idx = T.tensor([1, 0], device=x.device)
            out = x[idx]
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return out, idx

        @staticmethod
        def backward(ctx: Any, grad: Any, grad_idx: Any) -> Any:
            (idx,) = ctx.saved_tensors
            res = T.zeros_like(grad)
            res[idx] = grad
            return res

    class AddOneInPlace(T.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad

    class TwoOut(T.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx: Any, g1: Any, g2: Any) -> Any:
            ctx.seen = (g1 is None, g2 is None)
            out = 0
            if g1 is not None:
                out = out + g1 * 2
            if g2 is not None:
                out = out + g2 * 3
            return out

    class TwoOutMaterialize(T.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2, x * 3

        @staticmethod
        def backward(ctx: Any, g1: Any, g2: Any) -> Any:
            ctx.seen = (g1 is None, g2 is None, float(g2.abs().sum()))
            return g1 * 2 + g2 * 3

    class Once(T.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x ** 2

        @staticmethod
        @T.autograd.function.once_differentiable
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return grad * 2 * x

    def double(ctx: Any, x: Any) -> Any:
        return x * 2

    TooMany = function_class(T, "TooMany", double, lambda ctx, grad: (grad, grad))
    BadShape = function_class(T, "BadShape", double, lambda ctx, grad: T.ones(5, device=grad.device))
    Wrong = function_class(T, "Wrong", double, lambda ctx, grad: grad * 3)
    return {k: v for k, v in locals().items() if isinstance(v, type)}


def leaf(T: Any, dev: str, data: Any = (0.5, -1.0, 2.0)) -> Any:
    return _util.leaf(T, dev, list(data))


@parity
def test_forward_backward_non_tensor_arg(T: Any, dev: str) -> Any:
    fns = make_functions(T)
    x = leaf(T, dev)
    y = fns["Cube"].apply(x, 0.5)
    y.sum().backward()
    return y, x.grad, y.grad_fn.name(), type(y.grad_fn).__name__


@parity
def test_setup_context_style_and_needs_input_grad(T: Any, dev: str) -> Any:
    fns = make_functions(T)
    x = leaf(T, dev)
    c = T.tensor([2.0, 3.0, 4.0], dtype=T.float64, device=dev)
    y = fns["MulSetup"].apply(x, c)
    assert y.grad_fn.needs_input_grad == (True, False)
    y.sum().backward()
    return y, x.grad, y.grad_fn.name()


@parity
def test_saved_output(T: Any, dev: str) -> Any:
    fns = make_functions(T)
    x = leaf(T, dev)
    y = fns["Exp"].apply(x)
    (y * 2).sum().backward()
    return y, x.grad


@parity
def test_mark_non_differentiable(T: Any, dev: str) -> Any:
    fns = make_functions(T)
    x = leaf(T, dev, (1.0, 2.0))
    out, idx = fns["SortWithIdx"].apply(x)
    (out * T.tensor([1.0, 10.0], dtype=T.float64, device=dev)).sum().backward()
    return out, idx.requires_grad, x.grad


@parity
def test_mark_dirty(T: Any, dev: str) -> Any:
    fns = make_functions(T)
    x = leaf(T, dev)
    h = x * 2
    y = fns["AddOneInPlace"].apply(h)
    y2 = y * y
    y2.sum().backward()
    return y is h, h._version, h.grad_fn.name(), x.grad


@parity
def test_set_materialize_grads(T: Any, dev: str) -> Any:
    fns = make_functions(T)
    x = leaf(T, dev)
    a, _ = fns["TwoOut"].apply(x)
    a.sum().backward()
    seen = a.grad_fn.seen
    x2 = leaf(T, dev)
    b, _ = fns["TwoOutMaterialize"].apply(x2)
    b.sum().backward()
    return seen, b.grad_fn.seen, x.grad, x2.grad


def test_once_differentiable(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        y = make_functions(T)["Once"].apply(x)
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        return g

    both(f, device)

    def g(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        y = make_functions(T)["Once"].apply(x)
        (gx,) = T.autograd.grad(y.sum(), x, create_graph=True)
        gx.sum().backward()

    same_error(g, device)


def test_wrong_number_of_gradients(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        make_functions(T)["TooMany"].apply(x).sum().backward()

    same_error(f, device)


def test_wrong_gradient_shape(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        make_functions(T)["BadShape"].apply(x).sum().backward()

    same_error(f, device)


@parity
def test_no_grad_input_gives_plain_output(T: Any, dev: str) -> Any:
    x = T.tensor([1.0, 2.0], device=dev)
    y = make_functions(T)["Cube"].apply(x, 2.0)
    return y, y.requires_grad, y.grad_fn is None


def test_gradcheck_custom_function(device: str) -> None:
    fns = make_functions(ag)
    x = ag.tensor([0.3, -0.7, 1.1], dtype=ag.float64, requires_grad=True, device=device)
    y = ag.tensor([1.5, 2.0, -0.5], dtype=ag.float64, requires_grad=True, device=device)
    assert ag.autograd.gradcheck(lambda a: fns["Cube"].apply(a, 0.7), (x,))
    assert ag.autograd.gradcheck(fns["MulSetup"].apply, (x, y))
    assert ag.autograd.gradgradcheck(fns["MulSetup"].apply, (x, y))
    assert ag.autograd.gradcheck(fns["Exp"].apply, (x,))


def test_double_backward_through_custom_function(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        y = make_functions(T)["Cube"].apply(x, 2.0)  # backward = grad * 6 x^2: differentiable
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return g, gg

    r = both(f, device)
    np.testing.assert_allclose(to_np(r[1]), 12 * np.array([0.5, -1.0, 2.0]))


def test_legacy_constructor_raises() -> None:
    F = function_class(ag, "F", lambda ctx, x: x)
    G = function_class(torch, "G", lambda ctx, x: x)
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = F()
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        g = G()
    with pytest.raises(RuntimeError) as ours:
        f(ag.ones(1))
    with pytest.raises(RuntimeError) as theirs:
        g(torch.ones(1))
    assert first_sentence(str(ours.value)) == first_sentence(str(theirs.value))


@parity
def test_input_returned_as_is_is_new_tensor(T: Any, dev: str) -> Any:
    Ident = function_class(T, "Ident", lambda ctx, x: x, lambda ctx, g: g * 5)
    x = leaf(T, dev)
    y = Ident.apply(x)
    y.sum().backward()
    return y is x, y.grad_fn.name(), x.grad


@parity
def test_next_functions_only_for_tensor_args(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    c = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, device=dev)
    y = make_functions(T)["Cube"].apply(x, 2.0)
    z = make_functions(T)["MulSetup"].apply(x, c)
    return (len(y.grad_fn.next_functions), y.grad_fn.next_functions[0][0].variable is x,
            z.grad_fn.next_functions[1], y.grad_fn.needs_input_grad)


def test_mark_dirty_on_leaf_raises(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        make_functions(T)["AddOneInPlace"].apply(leaf(T, dev))

    same_error(f, device)


def test_saved_tensor_checks_in_custom_function(device: str) -> None:
    def modified(T: Any, dev: str) -> Any:
        h = leaf(T, dev) * 1
        y = make_functions(T)["Cube"].apply(h, 1.0)
        h.add_(1)
        y.sum().backward()

    same_error(modified, device)

    def freed(T: Any, dev: str) -> Any:
        y = make_functions(T)["Cube"].apply(leaf(T, dev), 1.0)
        y.sum().backward()
        y.sum().backward()

    same_error(freed, device)
