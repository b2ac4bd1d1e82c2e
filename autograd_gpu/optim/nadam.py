"""``NAdam`` and ``RAdam``: Adam with Nesterov momentum, and Adam with a rectified variance."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import zeros_like
from ..tensor import Tensor
from . import _ops
from .adam import moments
from .optimizer import (
    _capture_health_check,
    _check_adam_args,
    _check_capturable,
    _zero_state,
    Optimizer, ParamsT, _check_differentiable, _check_lr, _group_lr, _no_grad_step,
    _step_tensor,
)


class NAdam(Optimizer):
    """NAdam, PyTorch's ``torch.optim.NAdam`` (single-tensor path).

    Per parameter, at step ``t`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p        (or p *= 1 - lr * weight_decay when decoupled)
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay)); mu_product *= mu_t
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        p -= lr * (1 - mu_t) / (1 - mu_product) * g / denom
        p -= lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom

    With ``capturable=True`` ``step`` and ``mu_product`` are tensors on ``p``'s device and the
    scalars above 0-d tensor ops there (PyTorch's capturable formulas: ``g`` and ``m`` scaled
    first, then ``p += g' / denom`` and ``p += m' / denom``), so no host read.

    Args:
        params: tensors or parameter groups.
        lr: learning rate.
        betas: decay rates of the first and second moment averages.
        eps: added to the denominator for numerical stability.
        weight_decay: L2 penalty (decoupled when ``decoupled_weight_decay``).
        momentum_decay: the momentum schedule's decay ``psi``.
        decoupled_weight_decay: decay the weights directly, as AdamW (NAdamW).
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = NAdam([w], lr=2e-3)
    """

    def __init__(self, params: ParamsT, lr: Any = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_adam_args(eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        _check_differentiable(differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one NAdam step; ``closure`` re-evaluates the loss and returns it."""
        _capture_health_check(self)
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _group_lr(group)
            beta1, beta2 = group["betas"]
            eps = group["eps"]
            for p, grad in self._grads(group):
                state = self.state[p]
                if len(state) == 0:
                    at = p.device if group["capturable"] else None
                    state["step"] = _step_tensor(0.0, at)
                    state["mu_product"] = _step_tensor(1.0, at)
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                if group["capturable"]:
                    _nadam_capturable(p, grad, state, group, lr)
                    continue
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                step = state["step"].add_(1).item()
                grad, bias_correction2, mu, mu_next = _scalars(p, grad, step, group, lr)
                # NOTE: mu_product is a float32 (float64) tensor: each product rounds to it.
                mu_product = state["mu_product"].mul_(mu).item()
                mu_product_next = mu_product * mu_next
                _ops.lerp_(exp_avg, grad, 1 - beta1)
                _ops.addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
                denom = exp_avg_sq.div(bias_correction2).sqrt_().add_(eps)
                _ops.addcdiv_(p, grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
                _ops.addcdiv_(p, exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
        return loss


def _scalars(p: Tensor, grad: Tensor, step: Any, group: dict[str, Any], lr: Any
             ) -> tuple[Tensor, Any, Any, Any]:
    """NAdam's weight decay (``p`` decayed, or the decayed grad returned) and, at ``step`` (a
    number, or a 0-d tensor when capturable), ``1 - beta2**step``, ``mu`` and ``mu_next``."""
    beta1, beta2 = group["betas"]
    wd, psi = group["weight_decay"], group["momentum_decay"]
    bias_correction2 = 1 - beta2**step
    if wd != 0:
        if group["decoupled_weight_decay"]:
            p.mul_(1 - lr * wd)
        else:
            grad = grad.add(p, alpha=wd)
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * psi)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * psi)))
    return grad, bias_correction2, mu, mu_next


def _nadam_capturable(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                      lr: Any) -> None:
    """One parameter's ``capturable=True`` NAdam step (PyTorch's single-tensor capturable
    formulas: ``step``, ``mu_product`` and the scalars as 0-d tensors on ``p``'s device)."""
    beta1, beta2 = group["betas"]
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    step, mu_product = state["step"], state["mu_product"]
    _check_capturable(p, mu_product, step, what="params, mu_products and state_steps")
    step.add_(1)
    grad, bias_correction2, mu, mu_next = _scalars(p, grad, step, group, lr)
    mu_product.mul_(mu)
    _ops.lerp_(exp_avg, grad, 1 - beta1)
    _ops.addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
    denom = exp_avg_sq.div(bias_correction2).sqrt().add(group["eps"])
    mu_product_next = mu_product * mu_next
    grad = grad * (-lr * (1.0 - mu) / (1.0 - mu_product))
    exp_avg = exp_avg * (-lr * mu_next / (1.0 - mu_product_next))
    _ops.addcdiv_(p, grad, denom)
    _ops.addcdiv_(p, exp_avg, denom)


class RAdam(Optimizer):
    """RAdam, PyTorch's ``torch.optim.RAdam`` (single-tensor path).

    Per parameter, at step ``t`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p        (or p *= 1 - lr * weight_decay when decoupled)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
        p -= lr * m / (1 - beta1**t) * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t   (rho_t > 5)
        p -= lr * m / (1 - beta1**t)                                                 (otherwise)

    with the rectification ``r_t = sqrt((rho_t-4)(rho_t-2) rho_inf / ((rho_inf-4)(rho_inf-2) rho_t))``.
    With ``capturable=True`` ``step`` is a tensor on ``p``'s device, the scalars are 0-d tensor
    ops there and the branch a ``where`` (PyTorch's capturable formulas), so no host read.

    Args:
        params: tensors or parameter groups.
        lr: learning rate.
        betas: decay rates of the first and second moment averages.
        eps: added to the denominator for numerical stability.
        weight_decay: L2 penalty (decoupled when ``decoupled_weight_decay``).
        decoupled_weight_decay: decay the weights directly, as AdamW.
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = RAdam([w], lr=1e-3)
    """

    def __init__(self, params: ParamsT, lr: Any = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        _check_adam_args(eps, betas, weight_decay)
        _check_differentiable(differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one RAdam step; ``closure`` re-evaluates the loss and returns it."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _group_lr(group)
            beta1, beta2 = group["betas"]
            wd, eps = group["weight_decay"], group["eps"]
            for p, grad in self._grads(group):
                state = self.state[p]
                exp_avg, exp_avg_sq = _zero_state(state, p, "exp_avg", "exp_avg_sq",
                                                  capturable=group["capturable"])
                if group["capturable"]:
                    _radam_capturable(p, grad, state, group, lr)
                    continue
                step = state["step"].add_(1).item()
                moments(p, grad, exp_avg, exp_avg_sq, wd, group["decoupled_weight_decay"], lr,
                        beta1, beta2)
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                corrected = exp_avg / bias_correction1
                rho_inf = 2 / (1 - beta2) - 1
                rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
                if rho_t > 5.0:
                    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                            / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                    adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(eps)
                    p.sub_(corrected * lr * adaptive_lr * rect)
                else:
                    p.sub_(corrected * lr)
        return loss


def _radam_capturable(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                      lr: Any) -> None:
    """One parameter's ``capturable=True`` RAdam step (PyTorch's single-tensor capturable
    formulas: the rectified update where ``rho_t > 5``, else 1, picked by ``where``)."""
    from ..functions import where

    beta1, beta2 = group["betas"]
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    step = state["step"]
    _check_capturable(p, step)
    step.add_(1)
    moments(p, grad, exp_avg, exp_avg_sq, group["weight_decay"], group["decoupled_weight_decay"],
            lr, beta1, beta2)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    corrected = exp_avg / bias_correction1
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
    rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
    adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(group["eps"])
    update = where(rho_t > 5.0, rect * adaptive_lr, 1.0)
    p.add_(corrected * lr * update, alpha=-1.0)
