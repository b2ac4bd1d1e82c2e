"""``Adam`` and ``AdamW``: adaptive moment estimation, with coupled or decoupled weight decay."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..tensor import Tensor
from . import _flat, _foreach, _fused, _ops
from .optimizer import (Optimizer, ParamsT, _capture_health_check, _check_adam_args,
                        _check_capturable, _check_fused, _check_fused_param, _check_lr,
                        _group_lr, _no_grad_step, _scalar, _step_tensor, _zero_state)


class Adam(Optimizer):
    """Adam, PyTorch's ``torch.optim.Adam``, with the numbers of its single-tensor path (the fast
    path, ``_foreach`` or one fused kernel per group on CUDA, gives them too).

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
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    # NOTE: read from the group inside _foreach.host calls: a recorded step reads them afresh
    _live_hypers = ("lr", "betas", "eps")

    def _recordable(self) -> bool:
        """Whether ``compile`` may record this step's update: every group on the foreach
        path (its host work behind ``_foreach.host``), every parameter on the CPU."""
        return all(_foreach.path(group, group["betas"][0], group["betas"][1], group["eps"],
                                  group["weight_decay"]) is not _foreach.SLOW
                   and all(p._device.type == "cpu" for p in group["params"])
                   for group in self.param_groups)

    @_no_grad_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one Adam step; ``closure`` re-evaluates the loss and returns it.

        The fast path (``_foreach``, or one fused kernel per group on CUDA) serves what it can
        (a CPU group whose state ``_flat`` laid out flat: one update for the whole group);
        ``_single`` the rest, with the same numbers; a ``capturable`` group takes ``_single``'s
        device-only formulas (see ``_capturable``).
        """
        _capture_health_check(self)
        loss = self._closure_loss(closure)
        bumps = _foreach.Bumps()
        for group in self.param_groups:
            lr = _group_lr(group)
            beta1, beta2 = (_scalar(b) for b in group["betas"])
            wd, eps, amsgrad = group["weight_decay"], group["eps"], group["amsgrad"]
            decoupled = group["decoupled_weight_decay"]
            names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if amsgrad else \
                ("exp_avg", "exp_avg_sq")
            path = _foreach.path(group, *group["betas"], eps, wd)
            fused = bool(group["fused"])
            scalars: dict[Any, tuple[Any, ...]] = {}
            rows: list[Any] = []
            arrays: list[Any] = []
            items = self._with_grad(group)
            if path and items and not fused and not self.state.get(items[0][0]) \
                    and not any(self.state.get(p) for p, _ in items):
                _flat.make_state(self, group, items, names, _step_tensor)
            for p, grad in items:
                state = self.state[p]
                if not state and fused:
                    _check_fused_param(p)
                bufs = _zero_state(state, p, *names, capturable=group["capturable"],
                                   fused=fused)
                how, xp = _foreach.route(path, p, grad, bufs, state["step"], half=fused)
                if how is _foreach.SLOW:
                    _single(p, grad, state, group, lr, beta1, beta2)
                    continue
                if how is _foreach.FUSED:
                    rows.append((p, grad, bufs, _foreach.tick(state["step"], bumps)))
                    continue
                arrays.append((p, grad, bufs, xp, state["step"]))
            flat = _flat.get(self, group) if arrays else None
            if flat is not None:
                whole, ks = _foreach.host(_flat_ticks, flat, arrays,
                                          [a[0]._data.dtype.type for a in arrays], bumps,
                                          scalars, group)
                if whole:
                    _flat.adam(np, flat, arrays, ks, group["maximize"],
                               None if wd == 0 or decoupled else arrays[0][0]._data.dtype.type(wd),
                               amsgrad)
                    _foreach.host(_bumps, bumps, [(a[0], a[2]) for a in arrays],
                                  wd != 0 and decoupled)
                    arrays = []
            elif arrays:
                # NOTE: the host work of all of them in one _foreach.host call each side
                ks = _foreach.host(_ticks, [a[4] for a in arrays],
                                   [a[0]._data.dtype.type for a in arrays], bumps, scalars, group)
            if arrays:
                for (p, grad, bufs, xp, _), k in zip(arrays, ks):
                    T = p._data.dtype.type
                    d = p._data
                    s = _foreach.scratch(self, p, 3)
                    g = _foreach.effective_grad(xp, d, grad._data, s[0], s[1], group["maximize"],
                                                None if wd == 0 or decoupled else T(wd))
                    _foreach.adam(xp, d, g, bufs[0]._data, bufs[1]._data,
                                  bufs[2]._data if amsgrad else None, s, k)
                _foreach.host(_bumps, bumps, [(a[0], a[2]) for a in arrays],
                              wd != 0 and decoupled)
            if rows:
                _fused.adam(self, rows, group, lr, beta1, beta2)
                for p, _, bufs, _ in rows:
                    _bump(bumps, p, bufs, wd != 0 and decoupled)
        return loss


def _single(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any], lr: Any,
            beta1: Any, beta2: Any) -> None:
    """One parameter's Adam step with Tensor ops (PyTorch's single-tensor path)."""
    wd, eps = group["weight_decay"], group["eps"]
    if group["maximize"]:
        grad = -grad
    if group["capturable"]:
        _capturable(p, grad, state, group, lr, beta1, beta2)
        return
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    step = state["step"].add_(1).item()
    moments(p, grad, exp_avg, exp_avg_sq, wd, group["decoupled_weight_decay"], lr, beta1, beta2)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = bias_correction2**0.5
    if group["amsgrad"]:
        max_sq = state["max_exp_avg_sq"]
        max_sq.copy_(max_sq.maximum(exp_avg_sq))
        denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    else:
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    _ops.addcdiv_(p, exp_avg, denom, value=-step_size)


def _capturable(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any], lr: Any,
                beta1: Any, beta2: Any) -> None:
    """One parameter's ``capturable=True`` Adam step: PyTorch's single-tensor capturable
    formulas, with ``step`` a tensor on ``p``'s device and the bias corrections 0-d tensor ops
    there (no host read: a CUDA graph replays them with the step count of each replay)::

        step_size_neg = -(lr / (1 - beta1**step))
        denom = sqrt(v) / (sqrt(1 - beta2**step) * step_size_neg) + eps / step_size_neg
        p += m / denom
    """
    step = state["step"]
    _check_capturable(p, step)
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    step.add_(1)
    moments(p, grad, exp_avg, exp_avg_sq, group["weight_decay"], group["decoupled_weight_decay"],
            lr, beta1, beta2)
    step_size_neg = (lr / (1 - beta1**step)).neg()
    bias_correction2_sqrt = (1 - beta2**step).sqrt()
    if group["amsgrad"]:
        max_sq = state["max_exp_avg_sq"]
        exp_avg_sq = max_sq.copy_(max_sq.maximum(exp_avg_sq))
    denom = (exp_avg_sq.sqrt() / (bias_correction2_sqrt * step_size_neg)) \
        .add_(group["eps"] / step_size_neg)
    _ops.addcdiv_(p, exp_avg, denom)


def moments(p: Tensor, grad: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, wd: Any,
            decoupled: bool, lr: Any, beta1: Any, beta2: Any) -> None:
    """Adam's (and NAdam's) weight decay and moment updates, in PyTorch's single-tensor order:
    ``p *= 1 - lr * wd`` (decoupled) or ``grad += wd * p``, then ``exp_avg`` toward ``grad`` and
    ``exp_avg_sq`` toward ``grad**2``."""
    if wd != 0:
        if decoupled:
            p.mul_(1 - lr * wd)
        else:
            grad = grad.add(p, alpha=wd)
    _ops.lerp_(exp_avg, grad, 1 - beta1)
    _ops.addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)


def _tick(step: Tensor, bumps: _foreach.Bumps, cache: dict[Any, Any], T: Any,
          group: dict[str, Any]) -> tuple[Any, ...]:
    """``step += 1``, then ``_foreach.adam``'s scalars at the new step from the group's
    hyper-parameters as they are now (kept in ``cache``: a group's parameters share them).
    NOTE: one ``_foreach.host`` call, so that a compiled step reads ``lr`` on every replay."""
    t = _foreach.tick(step, bumps)
    lr = _scalar(group["lr"])
    beta1, beta2 = (_scalar(b) for b in group["betas"])
    wd = group["weight_decay"] if group["decoupled_weight_decay"] else 0
    key = (T, t, lr, beta1, beta2, group["eps"], wd)
    k = cache.get(key)
    if k is None:
        if len(cache) > 8:  # NOTE: a compiled step keeps one cache for all its replays
            cache.clear()
        k = cache[key] = _foreach.adam_scalars(T, t, lr, beta1, beta2, group["eps"], wd)
    return k


def _ticks(steps: list[Tensor], Ts: list[Any], bumps: _foreach.Bumps, cache: dict[Any, Any],
           group: dict[str, Any]) -> list[tuple[Any, ...]]:
    """``_tick`` for each parameter of a group on the foreach path (the group's
    hyper-parameters read once: they are the same for all of them)."""
    if len(steps) < 2:
        return [_tick(step, bumps, cache, T, group) for step, T in zip(steps, Ts)]
    lr = _scalar(group["lr"])
    beta1, beta2 = (_scalar(b) for b in group["betas"])
    eps = group["eps"]
    wd = group["weight_decay"] if group["decoupled_weight_decay"] else 0
    out = []
    tick = _foreach.tick
    for step, T in zip(steps, Ts):
        t = tick(step, bumps)
        key = (T, t, lr, beta1, beta2, eps, wd)
        k = cache.get(key)
        if k is None:
            if len(cache) > 8:
                cache.clear()
            k = cache[key] = _foreach.adam_scalars(T, t, lr, beta1, beta2, eps, wd)
        out.append(k)
    return out


def _flat_ticks(flat: _flat.Flat, rows: list[Any], Ts: list[Any], bumps: _foreach.Bumps,
                cache: dict[Any, Any], group: dict[str, Any]) -> tuple[bool, Any]:
    """``_ticks``, then ``(True, the scalars)`` when ``flat`` serves the whole group (one
    ``_flat.adam``), else ``(False, each parameter's scalars)``.
    NOTE: one ``_foreach.host`` call: a compiled step checks the layout on every replay (a
    replay whose check gives another answer stops with an error, never runs on the wrong one)."""
    ks = _ticks([r[4] for r in rows], Ts, bumps, cache, group)
    if _flat.usable(flat, rows, ks):
        return True, ks[0]
    return False, ks


def _bumps(bumps: _foreach.Bumps, rows: list[tuple[Tensor, tuple[Tensor, ...]]],
           decayed: bool) -> None:
    first = 2 if decayed else 1
    bumps.all([row for p, bufs in rows
               for row in ((p, first), (bufs[0], 1), (bufs[1], 2), *((b, 1) for b in bufs[2:]))])


def _bump(bumps: _foreach.Bumps, p: Tensor, bufs: tuple[Tensor, ...], decayed: bool) -> None:
    """The slow path's version bumps: ``p`` (once more for the decoupled decay), ``exp_avg``,
    ``exp_avg_sq`` (``mul_`` and ``add_``), ``max_exp_avg_sq`` (``copy_``)."""
    bumps(p, 2 if decayed else 1)
    bumps(bufs[0])
    bumps(bufs[1], 2)
    if len(bufs) > 2:
        bumps(bufs[2])


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
