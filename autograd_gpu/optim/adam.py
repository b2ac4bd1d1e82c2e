"""``Adam`` and ``AdamW``: adaptive moment estimation, with coupled or decoupled weight decay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _ops
from .optimizer import (Optimizer, ParamsT, _check_adam_args, _check_differentiable, _check_lr,
                        _no_grad_step, _scalar, _zero_state)


class Adam(Optimizer):
    """Adam, PyTorch's ``torch.optim.Adam`` (single-tensor path).

    Per parameter, at step ``t`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p            (or p *= 1 - lr * weight_decay when decoupled)
        m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
        v_hat = max(v_hat, v) when amsgrad
        p -= lr / (1 - beta1**t) * m / (sqrt(v or v_hat) / sqrt(1 - beta2**t) + eps)

    Args:
        params: tensors or parameter groups.
        lr: learning rate.
        betas: decay rates of the first and second moment averages.
        eps: added to the denominator for numerical stability.
        weight_decay: L2 penalty (decoupled, AdamW-style, when ``decoupled_weight_decay``).
        amsgrad: use the running maximum of the second moment (AMSGrad).
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = Adam([w], lr=1e-3)
    """

    def __init__(self, params: ParamsT, lr: Any = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        _check_lr(lr)
        _check_adam_args(eps, betas, weight_decay)
        _check_differentiable(differentiable)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adam step; ``closure`` re-evaluates the loss and returns it."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _scalar(group["lr"])
            beta1, beta2 = (_scalar(b) for b in group["betas"])
            wd, eps, amsgrad = group["weight_decay"], group["eps"], group["amsgrad"]
            for p, grad in self._grads(group):
                state = self.state[p]
                exp_avg, exp_avg_sq = _zero_state(
                    state, p, "exp_avg", "exp_avg_sq", *(("max_exp_avg_sq",) if amsgrad else ()))[:2]
                state["step"].add_(1)
                if wd != 0:
                    if group["decoupled_weight_decay"]:
                        p.mul_(1 - lr * wd)
                    else:
                        grad = grad.add(p, alpha=wd)
                _ops.lerp_(exp_avg, grad, 1 - beta1)
                _ops.addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
                step = state["step"].item()
                bias_correction1 = 1 - beta1**step
                bias_correction2 = 1 - beta2**step
                step_size = lr / bias_correction1
                bias_correction2_sqrt = bias_correction2**0.5
                if amsgrad:
                    max_sq = state["max_exp_avg_sq"]
                    max_sq.copy_(max_sq.maximum(exp_avg_sq))
                    denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                else:
                    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                _ops.addcdiv_(p, exp_avg, denom, value=-step_size)
        return loss


class AdamW(Adam):
    """AdamW, PyTorch's ``torch.optim.AdamW``: Adam with decoupled weight decay
    (``p *= 1 - lr * weight_decay`` before the Adam update), default ``weight_decay=1e-2``.

    Example:
        >>> opt = AdamW([w], lr=1e-3, weight_decay=0.01)
    """

    def __init__(self, params: ParamsT, lr: Any = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
