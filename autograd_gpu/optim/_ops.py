"""Fused-looking update primitives the optimizers share, in PyTorch's order of operations.

PyTorch's optimizers call ``addcmul_``, ``addcdiv_`` and ``lerp_``; these helpers compute the same
expressions from plain tensor ops, rounding after each operation the way PyTorch's scalar CPU
kernels do, so float32 results agree with PyTorch's to the last bit or two.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor


def addcmul_(t: Tensor, t1: Tensor, t2: Tensor, value: Any = 1) -> Tensor:
    """``t += value * t1 * t2`` in place, evaluated as ``t + (value * t1) * t2``."""
    return t.add_(t1.mul(value).mul_(t2))


def addcmul(t: Tensor, t1: Tensor, t2: Tensor, value: Any = 1) -> Tensor:
    """``t + (value * t1) * t2`` as a new tensor."""
    return t.add(t1.mul(value).mul_(t2))


def addcdiv_(t: Tensor, t1: Tensor, t2: Tensor, value: Any = 1) -> Tensor:
    """``t += value * t1 / t2`` in place, evaluated as ``t + (value * t1) / t2``."""
    return t.add_(t1.mul(value).div_(t2))


def lerp_(t: Tensor, end: Tensor, weight: float) -> Tensor:
    """``t += weight * (end - t)`` in place (PyTorch's ``lerp_`` with a scalar weight).

    NOTE: like PyTorch, a weight of 0.5 or more is evaluated from the ``end`` side,
    ``end - (end - t) * (1 - weight)``, which is exact at ``weight == 1``. ``1 - weight`` is
    taken after rounding ``weight`` to ``t``'s dtype, as PyTorch's kernel does (rounded on the
    CPU: no device round trip, which a CUDA graph capture refuses).
    """
    diff = end.sub(t)
    if abs(weight) < 0.5:
        return t.add_(diff.mul_(weight))
    w = t.new_tensor(weight, device="cpu").item()
    return t.copy_(end.sub(diff.mul_(1 - w)))
