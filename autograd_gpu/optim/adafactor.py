"""``Adafactor``: Adam-like updates with a factored (row times column) second moment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..creation import zeros_like
from ..tensor import Tensor
from . import _ops
from .optimizer import Optimizer, ParamsT, _no_grad_step, _scalar, _step_tensor

_EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


class Adafactor(Optimizer):
    """Adafactor, PyTorch's ``torch.optim.Adafactor`` (single-tensor path).

    Per parameter, at step ``t`` with gradient ``g`` (negated when ``maximize``)::

        beta2_t = 1 - t ** beta2_decay;   rho_t = min(lr, 1 / sqrt(t))
        alpha = max(eps2, RMS(p)) * rho_t
        p *= 1 - lr * weight_decay
        matrices (dim > 1): R = lerp(R, mean(g*g, -1), 1 - beta2_t), C likewise over dim -2,
                            v = R @ C / max(mean(R, -2), eps1)
        vectors:            v = lerp(v, g*g, 1 - beta2_t)
        u = g / sqrt(max(v, eps1**2));   p -= alpha / max(1, RMS(u) / d) * u

    ``eps1`` defaults to the machine epsilon of the parameter's dtype.

    Args:
        params: tensors or parameter groups.
        lr: learning rate (caps the relative step ``rho_t``).
        beta2_decay: exponent of the second-moment decay schedule (<= 0).
        eps: ``(eps1, eps2)``: the variance floor (None: the dtype's epsilon) and the floor of
            the parameter RMS.
        d: clipping threshold of the update RMS.
        weight_decay: decoupled weight decay.
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = Adafactor([w], lr=1e-2)
    """

    def __init__(self, params: ParamsT, lr: Any = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple[float | None, float] = (None, 1e-3), d: float = 1.0,
                 weight_decay: float = 0.0, *, foreach: bool | None = None,
                 maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adafactor step; ``closure`` re-evaluates the loss and returns it."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            lr = _scalar(group["lr"])
            eps1, eps2 = group["eps"]
            wd, clip = group["weight_decay"], group["d"]
            for p, grad in self._grads(group):
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = _step_tensor(0.0)
                    if grad.dim() > 1:
                        state["row_var"] = grad.new_zeros((*grad.shape[:-1], 1))
                        state["col_var"] = grad.new_zeros((*grad.shape[:-2], 1, grad.shape[-1]))
                    else:
                        state["variance"] = zeros_like(grad)
                floor = _EPS[str(p.dtype).removeprefix("torch.")] if eps1 is None else eps1
                step = state["step"].add_(1).item()
                one_minus_beta2 = step**group["beta2_decay"]
                rho = min(lr, 1 / (step**0.5))
                alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho
                if wd != 0:
                    p.mul_(1 - lr * wd)
                if grad.dim() > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    row_norm = grad.norm(dim=-1, keepdim=True)
                    _ops.lerp_(row_var, row_norm.mul(row_norm).div_(grad.size(-1)),
                               one_minus_beta2)
                    col_norm = grad.norm(dim=-2, keepdim=True)
                    _ops.lerp_(col_var, col_norm.mul(col_norm).div_(grad.size(-2)),
                               one_minus_beta2)
                    var_estimate = row_var @ col_var
                    var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=floor))
                else:
                    variance = state["variance"]
                    _ops.lerp_(variance, grad * grad, one_minus_beta2)
                    var_estimate = variance.clone()
                update = var_estimate.clamp_(min=floor * floor).rsqrt_().mul_(grad)
                denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * clip))
                p.add_(update, alpha=-alpha / denom)
        return loss
