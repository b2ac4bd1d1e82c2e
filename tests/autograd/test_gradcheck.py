"""gradcheck / gradgradcheck: pass on correct gradients, GradcheckError on a wrong backward."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError

import autograd_gpu as ag
from autograd_gpu.autograd.gradcheck import GradcheckError

from ._util import function_class


def make_wrong(T: Any, second_order_wrong: bool = False) -> Any:
    class Square(T.autograd.Function):
        """x**2 with backward 2x (right) or 3x (wrong); with ``second_order_wrong`` the first
        derivative is right but is computed by an op whose own backward is wrong."""

        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            if second_order_wrong:
                return grad * TwiceWrongGrad.apply(x)
            return grad * 3 * x

    TwiceWrongGrad = function_class(T, "TwiceWrongGrad", lambda ctx, x: x * 2,
                                    lambda ctx, grad: grad * 5)  # the backward should give 2
    return Square


def inputs(T: Any, dev: str) -> tuple[Any, ...]:
    x = T.tensor([[0.3, -0.8, 1.2], [0.5, 0.9, -1.4]], dtype=T.float64, device=dev,
                 requires_grad=True)
    w = T.tensor([[0.7, -0.1], [0.2, 0.4], [-0.6, 1.1]], dtype=T.float64, device=dev,
                 requires_grad=True)
    return x, w


def test_gradcheck_passes_on_correct_functions(device: str) -> None:
    x, w = inputs(ag, device)
    assert ag.autograd.gradcheck(lambda a, b: (a @ b).tanh(), (x, w))
    assert ag.autograd.gradcheck(lambda a: (a.exp() * a.sin()).sum(dim=1), (x,))
    assert ag.autograd.gradcheck(lambda a, b: ((a @ b).sigmoid(), a.pow(3)), (x, w))
    assert ag.autograd.gradgradcheck(lambda a, b: (a @ b).tanh(), (x, w))
    assert ag.autograd.gradgradcheck(lambda a: a.pow(3).sum(), (x,))


def test_gradcheck_ignores_inputs_without_grad(device: str) -> None:
    x, w = inputs(ag, device)
    assert ag.autograd.gradcheck(lambda a, b, s: (a @ b) * s, (x, w.detach(), 2.0))


@pytest.mark.parametrize("T", [torch, ag], ids=["torch", "ours"])
def test_gradcheck_wrong_backward_raises(T: Any) -> None:
    x, _ = inputs(T, "cpu")
    square = make_wrong(T)
    err = TorchGradcheckError if T is torch else GradcheckError
    assert issubclass(err, RuntimeError) and ag.autograd.GradcheckError is GradcheckError
    with pytest.raises(err, match="Jacobian mismatch for output 0 with respect to input 0"):
        T.autograd.gradcheck(square.apply, (x,))
    assert T.autograd.gradcheck(square.apply, (x,), raise_exception=False) is False


def test_gradcheck_wrong_backward_on_device(device: str) -> None:
    x, _ = inputs(ag, device)
    with pytest.raises(RuntimeError):
        ag.autograd.gradcheck(make_wrong(ag).apply, (x,))


@pytest.mark.parametrize("T", [torch, ag], ids=["torch", "ours"])
def test_gradgradcheck_wrong_second_order_raises(T: Any) -> None:
    x, _ = inputs(T, "cpu")
    square = make_wrong(T, second_order_wrong=True)
    assert T.autograd.gradcheck(square.apply, (x,))  # the first derivative is right
    with pytest.raises(TorchGradcheckError if T is torch else GradcheckError):
        T.autograd.gradgradcheck(square.apply, (x,))
    assert T.autograd.gradgradcheck(square.apply, (x,), raise_exception=False) is False


def test_gradcheck_needs_an_input_requiring_grad() -> None:
    with pytest.raises(ValueError) as ours:
        ag.autograd.gradcheck(lambda a: a * 2, (ag.ones(2, dtype=ag.float64),))
    with pytest.raises(ValueError) as theirs:
        torch.autograd.gradcheck(lambda a: a * 2, (torch.ones(2, dtype=torch.float64),))
    assert str(ours.value) == str(theirs.value)
