"""The optimizers' fused CUDA path: one kernel launch updates every parameter of a group
(``kernels/optim.cu`` through ``backends/cuda_optim.py``), PyTorch's ``fused=True``.

Used on CUDA for ``fused=True`` and by default (``foreach`` and ``fused`` unset: where PyTorch
takes its multi-tensor path); the kernels compute the single-tensor path's operations in its
order, so the numbers are those of ``_foreach`` and of the Tensor ops (float32/float64 bit for
bit; float16 computes in float32). The caller has ticked each parameter's ``step`` and bumps the
version counters as the slow path does (SGD's first momentum buffers are made here).

NOTE: unlike PyTorch's fused optimizers, ``step`` stays a CPU float32 scalar (the non-fused
layout): the bias corrections come from it on the host, in Python floats as the single-tensor
path computes them, and reach the kernel as arguments, so the update is one launch (PyTorch adds
one more to increment device-side steps) and ``state_dict`` is the same whichever path ran.
Parameters whose step values differ (a group's later additions) get one launch per value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from . import _foreach


def _acc(dtype: Any) -> Any:
    """The NumPy type the kernel computes ``dtype`` in (float16 in float32), which rounds the
    scalars as the single-tensor path rounds them for that type."""
    return np.float64 if dtype == np.float64 else np.float32


def _parts(rows: list[Any], key: Any) -> dict[Any, list[Any]]:
    """``rows`` by dtype and ``key(row)``: one launch each."""
    parts: dict[Any, list[Any]] = {}
    for row in rows:
        parts.setdefault((row[0]._data.dtype, key(row)), []).append(row)
    return parts


def _col(rows: list[Any], at: Any) -> list[Any]:
    return [at(row)._data for row in rows]


def _tables(opt: Any) -> dict[Any, Any]:
    """``opt``'s chunk-table cache (not in its ``state``; it dies with the optimizer)."""
    cache = opt.__dict__.get("_fused_tables")
    if cache is None:
        cache = opt.__dict__["_fused_tables"] = {}
    return cache


def sgd(opt: Any, rows: list[Any], group: dict[str, Any], lr: Any,
        bumps: _foreach.Bumps) -> None:
    """SGD on ``rows`` ``(p, grad, momentum_buffer or None)``; makes the first step's buffers
    (as empty arrays the kernel fills with the gradient) and bumps the versions."""
    from ..backends import cuda_optim

    momentum, wd = group["momentum"], group["weight_decay"]
    for (dtype, first), part in _parts(rows, lambda r: r[2] is None).items():
        T = _acc(dtype)
        mom, undamped, nesterov, neg_lr = _foreach.sgd_scalars(T, lr, momentum,
                                                               group["dampening"],
                                                               group["nesterov"])
        bufs = None
        if momentum != 0:
            if first:
                for i, (p, g, _) in enumerate(part):
                    buf = Tensor._make(p.backend.xp.empty_like(p._data), p._device)
                    opt.state[p]["momentum_buffer"] = buf
                    part[i] = (p, g, buf)
            bufs = _col(part, lambda r: r[2])
        cuda_optim.sgd(_col(part, lambda r: r[0]), _col(part, lambda r: r[1]), bufs,
                       wd=None if wd == 0 else float(T(wd)), momentum=float(mom),
                       undamped=float(undamped), neg_lr=float(neg_lr),
                       maximize=group["maximize"], nesterov=nesterov, first=first,
                       cache=_tables(opt))
        for p, _, buf in part:
            bumps(p)
            if buf is not None and not first:
                bumps(buf, 2)


def adam(opt: Any, rows: list[Any], group: dict[str, Any], lr: Any, beta1: Any,
         beta2: Any) -> None:
    """Adam/AdamW on ``rows`` ``(p, grad, (exp_avg, exp_avg_sq[, max_exp_avg_sq]), step)``."""
    from ..backends import cuda_optim

    wd, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
    for (dtype, step), part in _parts(rows, lambda r: r[3]).items():
        T = _acc(dtype)
        decay, (low, w), b2, omb2, bc2_sqrt, eps, neg_step = _foreach.adam_scalars(
            T, step, lr, beta1, beta2, group["eps"], wd if decoupled else 0)
        cuda_optim.adam(
            _col(part, lambda r: r[0]), _col(part, lambda r: r[1]),
            _col(part, lambda r: r[2][0]), _col(part, lambda r: r[2][1]),
            _col(part, lambda r: r[2][2]) if group["amsgrad"] else None,
            decay=None if decay is None else float(decay),
            wd=None if wd == 0 or decoupled else float(T(wd)), weight=(low, float(w)),
            beta2=float(b2), one_minus_beta2=float(omb2), bc2_sqrt=float(bc2_sqrt),
            eps=float(eps), neg_step=float(neg_step), maximize=group["maximize"],
            cache=_tables(opt))


def rmsprop(opt: Any, rows: list[Any], group: dict[str, Any], lr: Any) -> None:
    """RMSprop on ``rows`` ``(p, grad, (square_avg[, momentum_buffer][, grad_avg]))``."""
    from ..backends import cuda_optim

    wd, momentum, centered = group["weight_decay"], group["momentum"], group["centered"]
    for (dtype, _), part in _parts(rows, lambda r: None).items():
        T = _acc(dtype)
        alpha, oma, (low, w), eps, mom, neg_lr, _ = _foreach.rmsprop_scalars(
            T, lr, group["alpha"], group["eps"], momentum)
        cuda_optim.rmsprop(
            _col(part, lambda r: r[0]), _col(part, lambda r: r[1]),
            _col(part, lambda r: r[2][0]),
            _col(part, lambda r: r[2][-1]) if centered else None,
            _col(part, lambda r: r[2][1]) if momentum > 0 else None,
            wd=None if wd == 0 else float(T(wd)), alpha=float(alpha),
            one_minus_alpha=float(oma), weight=(low, float(w)), eps=float(eps),
            momentum=float(mom), neg_lr=float(neg_lr), maximize=group["maximize"],
            cache=_tables(opt))
