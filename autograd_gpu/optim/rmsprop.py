"""``RMSprop``: gradients scaled by a running root-mean-square of their history."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor import Tensor
from . import _foreach, _fused, _ops
from .optimizer import (Optimizer, ParamsT, _check_capturable, _check_differentiable, _check_lr,
                        _no_grad_step, _scalar, _zero_state)


class RMSprop(Optimizer):
    """RMSprop, PyTorch's ``torch.optim.RMSprop``, with the numbers of its single-tensor path (the
    fast path, ``_foreach`` or one fused kernel per group on CUDA, gives them too).

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
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)
        _check_differentiable(differentiable)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one RMSprop step; ``closure`` re-evaluates the loss and returns it.

        The fast path (``_foreach``, or one fused kernel per group on CUDA) serves what it can;
        ``_single`` the rest, with the same numbers. A ``capturable`` group keeps ``step`` on
        ``p``'s device and takes ``_single`` (the update never reads ``step``).
        """
        loss = self._closure_loss(closure)
        bumps = _foreach.Bumps()
        for group in self.param_groups:
            lr = _scalar(group["lr"])
            alpha, eps, wd = group["alpha"], group["eps"], group["weight_decay"]
            momentum, centered = group["momentum"], group["centered"]
            names = ("square_avg", *(("momentum_buffer",) if momentum > 0 else ()),
                     *(("grad_avg",) if centered else ()))
            path = _foreach.path(group, alpha, eps, wd, momentum)
            scalars: dict[Any, tuple[Any, ...]] = {}
            rows: list[Any] = []
            for p, grad in self._with_grad(group):
                state = self.state[p]
                bufs = _zero_state(state, p, *names, capturable=group["capturable"])
                how, xp = _foreach.route(path, p, grad, bufs, state["step"])
                if how is _foreach.SLOW:
                    _single(p, grad, state, group, lr)
                    continue
                _foreach.tick(state["step"], bumps)
                if how is _foreach.FUSED:
                    rows.append((p, grad, bufs))
                else:
                    T = p._data.dtype.type
                    k = scalars.get(T)
                    if k is None:
                        k = scalars[T] = _foreach.rmsprop_scalars(T, lr, alpha, eps, momentum)
                    d = p._data
                    s = _foreach.scratch(self, p, 3)
                    g = _foreach.effective_grad(xp, d, grad._data, s[0], s[1], group["maximize"],
                                                None if wd == 0 else T(wd))
                    _foreach.rmsprop(xp, d, g, bufs[0]._data,
                                     state["grad_avg"]._data if centered else None,
                                     state["momentum_buffer"]._data if momentum > 0 else None,
                                     s, k)
                bumps(p)
                for t in bufs:  # NOTE: grad_avg's lerp_ writes once, the others twice
                    bumps(t, 1 if centered and t is bufs[-1] else 2)
            if rows:
                _fused.rmsprop(self, rows, group, lr)
        return loss


def _single(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
            lr: Any) -> None:
    """One parameter's RMSprop step with Tensor ops (PyTorch's single-tensor path)."""
    alpha, eps, wd = group["alpha"], group["eps"], group["weight_decay"]
    if group["capturable"]:
        _check_capturable(p, state["step"])
    if group["maximize"]:
        grad = -grad
    square_avg = state["square_avg"]
    state["step"].add_(1)
    if wd != 0:
        grad = grad.add(p, alpha=wd)
    _ops.addcmul_(square_avg.mul_(alpha), grad, grad, value=1 - alpha)
    if group["centered"]:
        grad_avg = _ops.lerp_(state["grad_avg"], grad, 1 - alpha)
        avg = _ops.addcmul(square_avg, grad_avg, grad_avg, value=-1).sqrt_()
    else:
        avg = square_avg.sqrt()
    avg = avg.add_(eps)
    if group["momentum"] > 0:
        buf = state["momentum_buffer"]
        _ops.addcdiv_(buf.mul_(group["momentum"]), grad, avg)
        p.add_(buf, alpha=-lr)
    else:
        _ops.addcdiv_(p, grad, avg, value=-lr)
