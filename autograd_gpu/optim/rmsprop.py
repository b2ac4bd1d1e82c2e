"""``RMSprop``: gradients scaled by a running root-mean-square of their history."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import tensor, zeros_like
from ..dtypes import float32
from . import _ops
from .optimizer import Optimizer, ParamsT, _no_grad_step, _scalar


class RMSprop(Optimizer):
    """RMSprop, PyTorch's ``torch.optim.RMSprop`` (single-tensor path).

    Per parameter, with gradient ``g`` (negated when ``maximize``)::

        g = g + weight_decay * p
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - m * m) + eps, with m = lerp(m, g, 1 - alpha) (centered), else sqrt(v) + eps
        buf = momentum * buf + g / avg; p -= lr * buf      (momentum > 0)
        p -= lr * g / avg                                   (otherwise)

    Args:
        params: tensors or parameter groups.
        lr: learning rate.
        alpha: smoothing constant of the squared-gradient average.
        eps: added to the denominator for numerical stability.
        weight_decay: L2 penalty.
        momentum: momentum factor.
        centered: normalize by the estimated variance instead of the raw second moment.
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = RMSprop([w], lr=1e-2, momentum=0.9)
    """

    def __init__(self, params: ParamsT, lr: Any = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        if differentiable:
            raise NotImplementedError("autograd_gpu.optim does not support differentiable=True")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one RMSprop step; ``closure`` re-evaluates the loss and returns it."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _scalar(group["lr"])
            alpha, eps, wd = group["alpha"], group["eps"], group["weight_decay"]
            momentum, centered = group["momentum"], group["centered"]
            for p, grad in self._grads(group):
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = tensor(0.0, dtype=float32)
                    state["square_avg"] = zeros_like(p)
                    if momentum > 0:
                        state["momentum_buffer"] = zeros_like(p)
                    if centered:
                        state["grad_avg"] = zeros_like(p)
                square_avg = state["square_avg"]
                state["step"].add_(1)
                if wd != 0:
                    grad = grad.add(p, alpha=wd)
                _ops.addcmul_(square_avg.mul_(alpha), grad, grad, value=1 - alpha)
                if centered:
                    grad_avg = _ops.lerp_(state["grad_avg"], grad, 1 - alpha)
                    avg = _ops.addcmul(square_avg, grad_avg, grad_avg, value=-1).sqrt_()
                else:
                    avg = square_avg.sqrt()
                avg = avg.add_(eps)
                if momentum > 0:
                    buf = state["momentum_buffer"]
                    _ops.addcdiv_(buf.mul_(momentum), grad, avg)
                    p.add_(buf, alpha=-lr)
                else:
                    _ops.addcdiv_(p, grad, avg, value=-lr)
        return loss
