"""Gradient clipping: ``clip_grad_norm_`` (= ``get_total_norm`` + ``clip_grads_with_norm_``) and
``clip_grad_value_``."""

from __future__ import annotations

import math
import types
import warnings
from typing import Iterable, Union

from ...autograd.grad_mode import no_grad
from ...creation import tensor
from ...functions import stack
from ...tensor import Tensor

_Params = Union[Tensor, Iterable[Tensor]]


def _vector_norm(x: Tensor, p: float) -> Tensor:
    """The ``p``-norm of all of ``x``'s elements (``inf``: max ``|x|``, 0: count of nonzeros)."""
    a = x.abs()
    if p == math.inf:
        return a.max()
    if p == -math.inf:
        return a.min()
    if p == 0:
        return (a != 0).to(x.dtype).sum()
    if p == 1:
        return a.sum()
    if p == 2:
        return (a * a).sum().sqrt()
    return a.pow(p).sum().pow(1.0 / p)


def get_total_norm(tensors: _Params, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of all ``tensors`` together (the norm of their norms)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    with no_grad():
        norms = [_vector_norm(t, norm_type) for t in tensors]
        first = norms[0].device
        total = _vector_norm(stack([n.to(first) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
            "so it cannot be clipped. To disable this error and scale the gradients by the "
            "non-finite norm anyway, set `error_if_nonfinite=False`"
        )
    return total


def clip_grads_with_norm_(parameters: _Params, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients of ``parameters`` in place by ``min(1, max_norm / (total_norm +
    1e-6))``, ``total_norm`` being a precomputed norm (``get_total_norm``).

    Example:
        >>> total = get_total_norm([p.grad for p in params])
        >>> clip_grads_with_norm_(params, 1.0, total)
    """
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    with no_grad():
        coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            # NOTE: a non-finite total gives coef 0 and inf * 0 = nan, silently as in PyTorch.
            with g.backend.errstate(all="ignore"):
                g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters: _Params, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total ``norm_type``-norm is
    at most ``max_norm`` (by ``max_norm / (total + 1e-6)``, capped at 1).

    Returns:
        The total norm before clipping (a 0-d tensor).

    Raises:
        RuntimeError: the total norm is NaN or infinite and ``error_if_nonfinite`` is set.

    Example:
        >>> clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    if isinstance(parameters, Tensor):
        params = [parameters]
    else:
        params = list(parameters)
        if isinstance(parameters, types.GeneratorType) and not params:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters: _Params, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_`` (warns with a ``FutureWarning``, as PyTorch)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: _Params, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient of ``parameters`` into ``[-clip_value, clip_value]`` in place."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    clip_value = float(clip_value)
    with no_grad():
        for p in params:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
