"""``Muon``: momentum whose update is orthogonalised by a Newton-Schulz iteration (torch 2.13's
``torch.optim.Muon``), for the 2-D weights of hidden layers."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import dtypes
from ..functions import addmm
from ..tensor import Tensor
from ._ops import lerp_
from .optimizer import Optimizer, ParamsT, _no_grad_step, _scalar

__all__ = ["Muon"]

EPS = 1e-07
DEFAULT_A = 3.4445
DEFAULT_B = -4.775
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _zeropower_via_newtonschulz(grad: Tensor, ns_coefficients: tuple[float, float, float],
                                ns_steps: int, eps: float) -> Tensor:
    """An approximately orthogonal matrix with ``grad``'s singular vectors: ``X / ||X||_F``,
    then ``ns_steps`` of ``X <- a X + (b G + c G^2) X`` with ``G = X X^T`` (on the wide
    orientation, so ``G`` is the smaller Gram matrix).

    NOTE: PyTorch iterates in bfloat16, which autograd_gpu does not have; the iteration runs in
    float32 here (the same formula, with float32 rounding).
    """
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = grad.to(dtypes.float32)
    if tall:
        x = x.t()
    x = x / x.norm().clamp(min=eps)
    for _ in range(ns_steps):
        gram = x.mm(x.t())
        x = addmm(x, addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.t() if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape: Any) -> float:
    """``lr`` scaled for a ``(A, B)`` matrix: ``sqrt(max(1, A / B))`` ("original", the default)
    or ``0.2 * sqrt(max(A, B))`` ("match_rms_adamw")."""
    A, B = shape[:2]  # noqa: N806
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Muon, PyTorch's ``torch.optim.Muon`` (2-D parameters only).

    Per parameter, with ``g`` its gradient::

        buf = lerp(buf, g, 1 - momentum)                  (starts at zero)
        u = lerp(g, buf, momentum) (nesterov) or buf
        O = NewtonSchulz(u)                               (about U V^T of u's SVD)
        p = p * (1 - lr * weight_decay) - adjust_lr(lr, p.shape) * O

    Args:
        params: 2-D tensors or parameter groups.
        lr: learning rate.
        weight_decay: decoupled weight decay.
        momentum: momentum factor.
        nesterov: use Nesterov momentum.
        ns_coefficients: ``(a, b, c)`` of the Newton-Schulz polynomial.
        eps: floor of the Frobenius norm the iteration starts by dividing by.
        ns_steps: Newton-Schulz steps (below 100).
        adjust_lr_fn: None or "original" (``sqrt(max(1, A/B))``) or "match_rms_adamw"
            (``0.2 sqrt(max(A, B))``).

    Example:
        >>> opt = Muon([linear.weight], lr=0.02)
    """

    def __init__(self, params: ParamsT, lr: Any = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
                 eps: float = EPS, ns_steps: int = DEFAULT_NS_STEPS,
                 adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Muon step; ``closure`` re-evaluates the loss and returns it."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _scalar(group["lr"])
            momentum = group["momentum"]
            for p, grad in self._grads(group):
                if p.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = grad.new_zeros(tuple(grad.shape))
                buf = state["momentum_buffer"]
                lerp_(buf, grad, 1 - momentum)
                update = lerp_(grad.clone(), buf, momentum) if group["nesterov"] else buf
                update = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                     group["ns_steps"], group["eps"])
                p.mul_(1 - lr * group["weight_decay"])
                p.add_(update.to(p.dtype), alpha=-_adjust_lr(lr, group["adjust_lr_fn"],
                                                             tuple(p.shape)))
        return loss
