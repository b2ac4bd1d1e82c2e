"""``Rprop`` (resilient backpropagation) and ``ASGD`` (averaged SGD)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import ones_like, tensor, zeros_like
from ..functions import maximum, where
from ..tensor import Tensor
from . import _ops
from .optimizer import (
    Optimizer, ParamsT, _capture_health_check, _check_capturable, _check_differentiable, _check_lr,
    _group_lr, _no_grad_step, _scalar, _step_tensor,
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
        """Perform one Rprop step; ``closure`` re-evaluates the loss and returns it.

        ``capturable=True`` keeps ``step`` on ``p``'s device and selects with ``where`` (PyTorch's
        capturable formulas; NOTE: ``masked_fill`` with a Python value copies it to the device,
        which a CUDA graph capture refuses).
        """
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            for p, grad in self._grads(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor(0.0, p.device if group["capturable"] else None)
                    state["prev"] = zeros_like(p)
                    state["step_size"] = zeros_like(grad).fill_(_scalar(group["lr"]))
                prev, step_size = state["prev"], state["step_size"]
                if group["capturable"]:
                    _check_capturable(p, state["step"])
                state["step"].add_(1)
                if group["capturable"]:
                    _rprop_capturable(p, grad, prev, step_size, group)
                    continue
                sign = grad.mul(prev).sign()
                pos, neg = sign.gt(0), sign.lt(0)
                sign = sign.masked_fill(pos, etaplus).masked_fill(neg, etaminus)
                sign = sign.masked_fill(sign.eq(0), 1)
                step_size.mul_(sign).clamp_(step_size_min, step_size_max)
                grad = grad.masked_fill(sign.eq(etaminus), 0)
                p.sub_(grad.sign().mul_(step_size))
                prev.copy_(grad)
        return loss


def _rprop_capturable(p: Tensor, grad: Tensor, prev: Tensor, step_size: Tensor,
                      group: dict[str, Any]) -> None:
    """One parameter's ``capturable=True`` Rprop update (after ``step += 1``): PyTorch's
    single-tensor capturable formulas, ``where`` in place of masked assignments."""
    etaminus, etaplus = group["etas"]
    sign = grad.mul(prev).sign()
    # NOTE: where(c, x, scalar) with the condition negated: a scalar in ``input``'s place is
    # copied to the device (refused in a capture), in ``other``'s place it is not
    sign = where(sign.gt(0).logical_not(), sign, etaplus)
    sign = where(sign.lt(0).logical_not(), sign, etaminus)
    sign = where(sign.ne(0), sign, 1)
    step_size.mul_(sign).clamp_(*group["step_sizes"])
    grad = where(sign.ne(etaminus), grad, 0)
    _ops.addcmul_(p, grad.sign(), step_size, value=-1)
    prev.copy_(grad)


class ASGD(Optimizer):
    """Averaged SGD, PyTorch's ``torch.optim.ASGD`` (single-tensor path).

    Per parameter, at step ``t`` with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = p (mu == 1), else ax += mu * (p - ax)
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)

    With ``capturable=True`` (PyTorch's capturable formulas) ``eta``, ``mu`` and ``step`` are
    read as 0-d tensors on ``p``'s device, ``ax += mu * (p - ax)`` also when ``mu == 1``, and no
    host read happens.

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
        _capture_health_check(self)
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _group_lr(group)
            lambd, alpha, t0, wd = group["lambd"], group["alpha"], group["t0"], \
                group["weight_decay"]
            for p, grad in self._grads(group):
                state = self.state[p]
                if len(state) == 0:
                    # NOTE: unlike the other optimizers', ASGD's scalars live on p's device.
                    state["step"] = step_t = _step_tensor(0.0, p.device)
                    state["eta"] = lr.detach().to(step_t.dtype, device=p.device).clone() \
                        if isinstance(lr, Tensor) else tensor(lr, dtype=step_t.dtype,
                                                              device=p.device)
                    state["mu"] = _step_tensor(1.0, p.device)
                    state["ax"] = zeros_like(p)
                mu, ax, eta = state["mu"], state["ax"], state["eta"]
                if group["capturable"]:
                    _asgd_capturable(p, grad, state, group, lr)
                    continue
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


def _asgd_capturable(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
                     lr: Any) -> None:
    """One parameter's ``capturable=True`` ASGD step (PyTorch's single-tensor capturable
    formulas, every scalar a 0-d tensor on ``p``'s device)."""
    lambd, alpha, t0, wd = group["lambd"], group["alpha"], group["t0"], group["weight_decay"]
    mu, ax, eta, step = state["mu"], state["ax"], state["eta"], state["step"]
    _check_capturable(p, mu, eta, step, what="params, mus, etas, and state_steps")
    step.add_(1)
    if wd != 0:
        grad = grad.add(p, alpha=wd)
    p.mul_(1 - lambd * eta)
    _ops.addcmul_(p, grad, eta, value=-1)
    ax.add_(p.sub(ax).mul_(mu))
    eta.copy_(lr / ((1 + lambd * lr * step) ** alpha))
    mu.copy_(1 / maximum(step - t0, ones_like(step)))
