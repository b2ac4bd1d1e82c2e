"""Helpers for the nn tests: arrays as tensors of either library, weights copied across."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import autograd_gpu as ag


def t(T: Any, dev: str, data: Any, grad: bool = False, dtype: Any = None) -> Any:
    """``data`` as a tensor of library ``T`` (float64 unless it is integer data or ``dtype``)."""
    arr = np.asarray(data)
    if dtype is None:
        dtype = T.int64 if arr.dtype.kind in "iu" else T.float64
    return T.tensor(arr.tolist(), dtype=dtype, device=dev, requires_grad=grad)


def copy_params(ours: ag.nn.Module, theirs: torch.nn.Module) -> None:
    """Give the torch module our module's parameter values (names must agree)."""
    mine = dict(ours.named_parameters())
    names = [n for n, _ in theirs.named_parameters()]
    assert names == list(mine), (names, list(mine))
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            p.copy_(torch.from_numpy(np.array(mine[name].detach().cpu().numpy())))


def grads_of(out: Any, inputs: list[Any], seed: int = 0) -> list[Any]:
    """``d(sum(out * v))/d inputs`` for a fixed random ``v`` (the same for both libraries)."""
    v = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    T = torch if isinstance(out, torch.Tensor) else ag
    vt = T.tensor(v.tolist(), dtype=out.dtype, device=out.device) if out.dim() else \
        T.tensor(float(v), dtype=out.dtype, device=out.device)
    return list(T.autograd.grad(out, inputs, vt, allow_unused=True))


def second_grads(out: Any, x: Any, seed: int = 0) -> Any:
    """The gradient w.r.t. ``x`` of ``sum(grad(out . v, x) * w)``: a Hessian-vector product."""
    T = torch if isinstance(out, torch.Tensor) else ag
    v = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    w = np.random.default_rng(seed + 1).standard_normal(tuple(x.shape))
    vt = T.tensor(v.tolist() if out.dim() else float(v), dtype=out.dtype, device=out.device)
    (g,) = T.autograd.grad(out, x, vt, create_graph=True)
    if not g.requires_grad:  # NOTE: a piecewise-linear op: its gradient is constant in x
        return T.zeros_like(x)
    wt = T.tensor(w.tolist(), dtype=x.dtype, device=x.device)
    (h,) = T.autograd.grad((g * wt).sum(), x, allow_unused=True)
    # NOTE: torch may answer with a lazy ZeroTensor: adding materialises it.
    return T.zeros_like(x) if h is None else T.zeros_like(x) + h
