"""``Adamax`` (Adam with an infinity-norm second moment) and ``Adadelta``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _ops
from .optimizer import (
    _capture_health_check,
    _check_adam_args,
    _check_capturable,
    _zero_state,
    Optimizer, ParamsT, _check_differentiable, _check_lr, _group_lr, _no_grad_step, _scalar,
)


class Adamax(Optimizer):
    """Adamax, PyTorch's ``torch.optim.Adamax`` (single-tensor path).

    Per parameter, at step ``t`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        m = lerp(m, g, 1 - beta1);  u = max(beta2 * u, |g| + eps)
        p -= lr / (1 - beta1**t) * m / u

    With ``capturable=True`` (PyTorch's capturable formulas, ``step`` a tensor on ``p``'s
    device, no host read): ``p += m / (u * ((beta1**t - 1) / lr))``.

    Args:
        params: tensors or parameter groups.
        lr: learning rate.
        betas: decay rates of the first moment and of the infinity norm.
        eps: added to ``|g|`` for numerical stability.
        weight_decay: L2 penalty.
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = Adamax([w], lr=2e-3)
    """

    def __init__(self, params: ParamsT, lr: Any = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_lr(lr)
        _check_adam_args(eps, betas, weight_decay)
        _check_differentiable(differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adamax step; ``closure`` re-evaluates the loss and returns it."""
        _capture_health_check(self)
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _group_lr(group)
            beta1, beta2 = group["betas"]
            wd, eps, capturable = group["weight_decay"], group["eps"], group["capturable"]
            for p, grad in self._grads(group):
                state = self.state[p]
                exp_avg, exp_inf = _zero_state(state, p, "exp_avg", "exp_inf",
                                               capturable=capturable)
                step_t = state["step"]
                if capturable:
                    _check_capturable(p, step_t)
                step_t.add_(1)
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                _ops.lerp_(exp_avg, grad, 1 - beta1)
                exp_inf.copy_(exp_inf.mul_(beta2).maximum(grad.abs().add_(eps)))
                if capturable:
                    neg_bias_correction = (beta1**step_t - 1).div_(lr)
                    _ops.addcdiv_(p, exp_avg, exp_inf * neg_bias_correction)
                else:
                    step = step_t.item()
                    _ops.addcdiv_(p, exp_avg, exp_inf, value=-lr / (1 - beta1**step))
        return loss


class Adadelta(Optimizer):
    """Adadelta, PyTorch's ``torch.optim.Adadelta`` (single-tensor path).

    Per parameter, with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p -= lr * delta

    Args:
        params: tensors or parameter groups.
        lr: scale of the update.
        rho: decay rate of the running averages.
        eps: added inside the square roots for numerical stability.
        weight_decay: L2 penalty.
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = Adadelta([w])
    """

    def __init__(self, params: ParamsT, lr: Any = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_differentiable(differentiable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adadelta step; ``closure`` re-evaluates the loss and returns it.

        ``capturable=True`` keeps ``step`` on ``p``'s device (the update never reads it).
        """
        _capture_health_check(self)
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _scalar(group["lr"])
            rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
            pairs = self._grads(group)
            for p, _ in pairs:
                _zero_state(self.state[p], p, "square_avg", "acc_delta",
                            capturable=group["capturable"])
            if group["capturable"]:  # NOTE: PyTorch checks them all before updating any
                for p, _ in pairs:
                    _check_capturable(p, self.state[p]["step"], xla=False)
            for p, grad in pairs:
                state = self.state[p]
                square_avg, acc_delta = state["square_avg"], state["acc_delta"]
                state["step"].add_(1)
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                _ops.addcmul_(square_avg.mul_(rho), grad, grad, value=1 - rho)
                std = square_avg.add(eps).sqrt_()
                delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
                _ops.addcmul_(acc_delta.mul_(rho), delta, delta, value=1 - rho)
                p.add_(delta, alpha=-lr)
        return loss
