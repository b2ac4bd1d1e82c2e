"""``Adagrad``: per-coordinate learning rates from the sum of squared gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import full_like, tensor
from ..dtypes import float32
from . import _ops
from .optimizer import Optimizer, ParamsT, _no_grad_step, _scalar


class Adagrad(Optimizer):
    """Adagrad, PyTorch's ``torch.optim.Adagrad`` (single-tensor path, dense gradients).

    Per parameter, at step ``t`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g;  p -= clr * g / (sqrt(s) + eps)

    Args:
        params: tensors or parameter groups.
        lr: learning rate.
        lr_decay: learning-rate decay per step.
        weight_decay: L2 penalty.
        initial_accumulator_value: starting value of the sum ``s``.
        eps: added to the denominator for numerical stability.
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = Adagrad([w], lr=1e-2)
    """

    def __init__(self, params: ParamsT, lr: Any = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if differentiable:
            raise NotImplementedError("autograd_gpu.optim does not support differentiable=True")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        # NOTE: unlike the other optimizers, Adagrad creates its state eagerly, as PyTorch does.
        # (parameters added later by ``add_param_group`` get theirs on their first step).
        for group in self.param_groups:
            for p in group["params"]:
                _init_state(self.state[p], p, group)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adagrad step; ``closure`` re-evaluates the loss and returns it."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _scalar(group["lr"])
            wd, eps, lr_decay = group["weight_decay"], group["eps"], group["lr_decay"]
            for p, grad in self._grads(group):
                state = self.state[p]
                if len(state) == 0:
                    _init_state(state, p, group)
                state_sum = state["sum"]
                state["step"].add_(1)
                step = state["step"].item()
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                clr = lr / (1 + (step - 1) * lr_decay)
                _ops.addcmul_(state_sum, grad, grad, value=1)
                std = state_sum.sqrt().add_(eps)
                _ops.addcdiv_(p, grad, std, value=-clr)
        return loss


def _init_state(state: dict[str, Any], p: Any, group: dict[str, Any]) -> None:
    state["step"] = tensor(0.0, dtype=float32)
    state["sum"] = full_like(p, group["initial_accumulator_value"])
