"""``SGD``: stochastic gradient descent with optional momentum, Nesterov and weight decay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tensor import Tensor
from . import _foreach, _fused
from .optimizer import (Optimizer, ParamsT, _check_fused, _check_fused_param, _check_lr,
                        _no_grad_step, _scalar)


class SGD(Optimizer):
    """Stochastic gradient descent, PyTorch's ``torch.optim.SGD``.

    Per parameter, with ``g`` its gradient (negated when ``maximize``)::

        g = g + weight_decay * p
        buf = g (first step) or momentum * buf + (1 - dampening) * g
        g = g + momentum * buf (nesterov) or buf
        p -= lr * g

    Args:
        params: tensors or parameter groups.
        lr: learning rate.
        momentum: momentum factor (0 disables the buffer).
        dampening: dampening of the momentum.
        weight_decay: L2 penalty.
        nesterov: use Nesterov momentum (needs ``momentum > 0`` and ``dampening == 0``).
        maximize: ascend the objective instead of descending it.

    Example:
        >>> opt = SGD([w], lr=0.1, momentum=0.9)
    """

    def __init__(self, params: ParamsT, lr: Any = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    # NOTE: read from the group inside _foreach.host calls: a recorded step reads them afresh
    _live_hypers = ("lr", "momentum", "dampening")

    def _recordable(self) -> bool:
        """Whether ``compile`` may record this step's update: every group on the foreach
        path (its host work behind ``_foreach.host``), every parameter on the CPU."""
        return all(_foreach.path(group, group["weight_decay"], group["momentum"],
                                  group["dampening"]) is not _foreach.SLOW
                   and all(p._device.type == "cpu" for p in group["params"])
                   for group in self.param_groups)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one SGD step; ``closure`` re-evaluates the loss and returns it.

        The fast path (``_foreach``, or one fused kernel per group on CUDA) serves what it can;
        ``_single`` the rest, with the same numbers.
        """
        loss = self._closure_loss(closure)
        bumps = _foreach.Bumps()
        for group in self.param_groups:
            lr = _scalar(group["lr"])
            wd, momentum, dampening = group["weight_decay"], group["momentum"], group["dampening"]
            path = _foreach.path(group, wd, momentum, dampening)
            scalars: dict[Any, tuple[Any, ...]] = {}
            rows: list[Any] = []
            arrays: list[Any] = []
            for p, grad in self._with_grad(group):
                state = self.state[p]
                if not state and group["fused"]:
                    _check_fused_param(p)
                buf = state.get("momentum_buffer") if momentum != 0 else None
                how, xp = _foreach.route(path, p, grad, () if buf is None else (buf,),
                                         half=bool(group["fused"]))
                if how is _foreach.SLOW:
                    _single(p, grad, state, group, lr)
                    continue
                if how is _foreach.FUSED:
                    rows.append((p, grad, buf))
                    continue
                arrays.append((p, grad, buf, xp, state))
            if arrays:
                # NOTE: the host work of all of them in one _foreach.host call each side
                ks = _foreach.host(_all_scalars, scalars, [a[0]._data.dtype.type for a in arrays],
                                   group)
                bumped: list[tuple[Tensor, int]] = []
                for (p, grad, buf, xp, state), k in zip(arrays, ks):
                    T = p._data.dtype.type
                    d = p._data
                    s = _foreach.scratch(self, p, 2)
                    g = _foreach.effective_grad(xp, d, grad._data, s[0], s[1],
                                                group["maximize"], None if wd == 0 else T(wd))
                    first = momentum != 0 and buf is None
                    if first:
                        buf = state["momentum_buffer"] = _foreach.sgd_first(p, g)
                    elif buf is not None:
                        bumped.append((buf, 2))
                    _foreach.sgd(xp, d, g, None if buf is None else buf._data, s, k, first)
                    bumped.append((p, 1))
                _foreach.host(_bump_all, bumps, bumped)
            if rows:
                _fused.sgd(self, rows, group, lr, bumps)
        return loss


def _all_scalars(cache: dict[Any, Any], Ts: list[Any],
                 group: dict[str, Any]) -> list[tuple[Any, ...]]:
    """``_scalars`` for each parameter of a group on the foreach path (by its dtype; the
    group's hyper-parameters are the same for all of them)."""
    if len(Ts) < 2:
        return [_scalars(cache, T, group) for T in Ts]
    by_type: dict[Any, tuple[Any, ...]] = {}
    out = []
    for T in Ts:
        k = by_type.get(T)
        if k is None:
            k = by_type[T] = _scalars(cache, T, group)
        out.append(k)
    return out


def _bump_all(bumps: _foreach.Bumps, rows: list[tuple[Tensor, int]]) -> None:
    bumps.all(rows)


def _scalars(cache: dict[Any, Any], T: Any, group: dict[str, Any]) -> tuple[Any, ...]:
    """``_foreach.sgd``'s scalars from the group's hyper-parameters as they are now (kept in
    ``cache``). NOTE: one ``_foreach.host`` call, so a compiled step reads ``lr`` every replay."""
    key = (T, _scalar(group["lr"]), group["momentum"], group["dampening"], group["nesterov"])
    k = cache.get(key)
    if k is None:
        if len(cache) > 8:
            cache.clear()
        k = cache[key] = _foreach.sgd_scalars(T, *key[1:])
    return k


def _single(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any],
            lr: Any) -> None:
    """One parameter's SGD step with Tensor ops (PyTorch's single-tensor path)."""
    wd, momentum = group["weight_decay"], group["momentum"]
    if group["maximize"]:
        grad = -grad
    if wd != 0:
        grad = grad.add(p, alpha=wd)
    if momentum != 0:
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = grad.detach().clone()
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
        grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
    p.add_(grad, alpha=-lr)
