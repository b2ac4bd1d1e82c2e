"""``Adagrad``: per-coordinate learning rates from the sum of squared gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import full_like
from ..tensor import Tensor
from . import _foreach, _ops
from .optimizer import (Optimizer, ParamsT, _check_fused, _check_fused_param, _check_lr,
                        _no_grad_step, _scalar, _step_tensor)


class Adagrad(Optimizer):
    """Adagrad, PyTorch's ``torch.optim.Adagrad`` (dense gradients), with the numbers of its
    single-tensor path (the fast path, ``_foreach``, gives them too).

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
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        # NOTE: unlike the other optimizers, Adagrad creates its state eagerly, as PyTorch does.
        # (parameters added later by ``add_param_group`` get theirs on their first step).
        for group in self.param_groups:
            for p in group["params"]:
                _init_state(self.state[p], p, group)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adagrad step; ``closure`` re-evaluates the loss and returns it.

        The fast path (``_foreach``) serves what it can; ``_single`` the rest, with the same
        numbers.
        """
        loss = self._closure_loss(closure)
        bumps = _foreach.Bumps()
        for group in self.param_groups:
            lr = _scalar(group["lr"])
            wd, eps, lr_decay = group["weight_decay"], group["eps"], group["lr_decay"]
            path = _foreach.path(group, wd, eps, lr_decay)
            scalars: dict[Any, tuple[Any, ...]] = {}
            for p, grad in self._with_grad(group):
                state = self.state[p]
                if group["fused"]:
                    _check_fused_param(p)
                if len(state) == 0:
                    _init_state(state, p, group)
                how, xp = _foreach.route(_foreach.ARRAYS if path else path, p, grad,
                                         (state["sum"],), state["step"])
                if how is _foreach.SLOW:
                    _single(p, grad, state, group, lr)
                    continue
                step = _foreach.tick(state["step"], bumps)
                T = p._data.dtype.type
                k = scalars.get((T, step))
                if k is None:
                    k = scalars[(T, step)] = (T(eps), T(-(lr / (1 + (step - 1) * lr_decay))))
                d = p._data
                s = _foreach.scratch(self, p, 3)
                g = _foreach.effective_grad(xp, d, grad._data, s[0], s[1], group["maximize"],
                                            None if wd == 0 else T(wd))
                _foreach.adagrad(xp, d, g, state["sum"]._data, s, k)
                bumps(p)
                bumps(state["sum"])
        return loss


def _single(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
            lr: Any) -> None:
    """One parameter's Adagrad step with Tensor ops (PyTorch's single-tensor path)."""
    wd, eps, lr_decay = group["weight_decay"], group["eps"], group["lr_decay"]
    if group["maximize"]:
        grad = -grad
    state_sum = state["sum"]
    state["step"].add_(1)
    step = state["step"].item()
    if wd != 0:
        grad = grad.add(p, alpha=wd)
    clr = lr / (1 + (step - 1) * lr_decay)
    _ops.addcmul_(state_sum, grad, grad, value=1)
    std = state_sum.sqrt().add_(eps)
    _ops.addcdiv_(p, grad, std, value=-clr)


def _init_state(state: dict[str, Any], p: Any, group: dict[str, Any]) -> None:
    state["step"] = _step_tensor(0.0, fused=bool(group["fused"]))
    state["sum"] = full_like(p, group["initial_accumulator_value"])
