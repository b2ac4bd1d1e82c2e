"""``Rprop`` (resilient backpropagation) and ``ASGD`` (averaged SGD)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import tensor, zeros_like
from ..dtypes import float32
from .optimizer import (
    Optimizer, ParamsT, _check_differentiable, _check_lr, _no_grad_step, _scalar, _step_tensor,
)


class Rprop(Optimizer):
    """Rprop, PyTorch's ``torch.optim.Rprop`` (single-tensor path).

    Per element, with gradient ``g`` (negated when ``maximize``) and the previous one ``g'``::

        s = sign(g * g');  step_size *= etaplus (s > 0), etaminus (s < 0), 1 (s == 0)
        step_size = clamp(step_size, *step_sizes)
        g = 0 where s < 0 (and that zero is remembered as g')
        p -= sign(g) * step_size

    Args:
        params: tensors or parameter groups.
        lr: initial step size.
        etas: ``(etaminus, etaplus)``, the multiplicative decrease and increase factors.
        step_sizes: ``(min, max)`` allowed step sizes.
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = Rprop([w], lr=1e-2)
    """

    def __init__(self, params: ParamsT, lr: Any = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _check_differentiable(differentiable)
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Rprop step; ``closure`` re-evaluates the loss and returns it."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p, grad in self._grads(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor(0.0)
                    state["prev"] = zeros_like(p)
                    state["step_size"] = zeros_like(grad).fill_(_scalar(group["lr"]))
                prev, step_size = state["prev"], state["step_size"]
                state["step"].add_(1)
                sign = grad.mul(prev).sign()
                pos, neg = sign.gt(0), sign.lt(0)
                sign = sign.masked_fill(pos, etaplus).masked_fill(neg, etaminus)
                sign = sign.masked_fill(sign.eq(0), 1)
                step_size.mul_(sign).clamp_(step_size_min, step_size_max)
                grad = grad.masked_fill(sign.eq(etaminus), 0)
                p.sub_(grad.sign().mul_(step_size))
                prev.copy_(grad)
        return loss


class ASGD(Optimizer):
    """Averaged SGD, PyTorch's ``torch.optim.ASGD`` (single-tensor path).

    Per parameter, at step ``t`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = p (mu == 1), else ax += mu * (p - ax)
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)

    Args:
        params: tensors or parameter groups.
        lr: learning rate.
        lambd: decay term.
        alpha: power of the ``eta`` update.
        t0: the step at which averaging starts.
        weight_decay: L2 penalty.
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = ASGD([w], lr=1e-2)
    """

    def __init__(self, params: ParamsT, lr: Any = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_differentiable(differentiable)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one ASGD step; ``closure`` re-evaluates the loss and returns it."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _scalar(group["lr"])
            lambd, alpha, t0, wd = group["lambd"], group["alpha"], group["t0"], \
                group["weight_decay"]
            for p, grad in self._grads(group):
                state = self.state[p]
                if len(state) == 0:
                    # NOTE: unlike the other optimizers', ASGD's scalars live on p's device.
                    state["step"] = _step_tensor(0.0, p.device)
                    state["eta"] = tensor(lr, dtype=float32, device=p.device)
                    state["mu"] = _step_tensor(1.0, p.device)
                    state["ax"] = zeros_like(p)
                mu, ax, eta = state["mu"], state["ax"], state["eta"]
                step = state["step"].add_(1).item()
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                eta_value = eta.item()
                p.mul_(1 - lambd * eta_value)
                p.add_(grad, alpha=-eta_value)
                if mu.item() != 1:
                    ax.add_(p.sub(ax).mul_(mu))
                else:
                    ax.copy_(p)
                eta.fill_(lr / ((1 + lambd * lr * step) ** alpha))
                mu.fill_(1 / max(1, step - t0))
        return loss
