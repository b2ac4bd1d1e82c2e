"""Group normalisation as one node (``NativeGroupNormBackward0``, as PyTorch records it).

Forward runs on backend arrays; backward is written with tensor ops, so it is itself
differentiable (``gradgradcheck``, gradient penalties); without ``create_graph`` it runs on
arrays (``norm_fast``'s few-pass formulas, or the CUDA kernels below).

NOTE: on CUDA, float inputs with parameters of their dtype run fused kernels (``kernels/norm.cu``:
one row-wise pass per (sample, group) forward; dx row-wise and the weight/bias gradients as column
sums in the first-order backward); the tensor formula below serves the rest and double backward.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.grad_mode import STATE
from . import norm_fast
from .norm_ops import _Normalize


class NativeGroupNorm(_Normalize):
    """``(x - mean) * rstd * weight + bias`` with the statistics of each of ``groups`` channel
    groups of each sample (``x`` of shape ``(N, C, *)``, viewed as ``(N, groups, -1)``), and
    ``weight`` and ``bias`` per channel ``(C,)``."""

    node_name = "NativeGroupNormBackward0"

    def __init__(self, groups: int, eps: float) -> None:
        self.groups, self.eps = groups, eps
        self.red = (2,)

    def _grouped(self, shape: tuple[int, ...]) -> tuple[int, int, int]:
        # NOTE: explicit sizes, not -1: an empty batch has no size to infer from.
        return shape[0], self.groups, shape[1] // self.groups * math.prod(shape[2:])

    def forward(self, x: Any, w: Any, bias: Any) -> Any:
        self.pshape = (x.shape[1],) + (1,) * (x.ndim - 2)
        self.bias_shape = (x.shape[1],)
        self.pdims = (0,) + tuple(range(2, x.ndim))
        fused = self.backend.fused_group_norm(x, w, bias, self.groups, self.eps)
        if fused is not None:  # CUDA: one kernel (kernels/norm.cu)
            out, mean, rstd = fused
            self.save_for_backward(x, w, mean, rstd)
            return out
        n, c = x.shape[0], x.shape[1]
        xg = x.reshape(self._grouped(x.shape))
        mean, _, rstd, out = self._stats(xg)
        self.save_for_backward(x, w, mean, rstd)
        flat = (n, c, math.prod(x.shape[2:]))
        scale = self.backend.broadcast_to(rstd, (n, self.groups, c // self.groups))
        if w is not None:
            scale = scale * w.reshape(self.groups, c // self.groups)
        out = out.reshape(flat)
        out *= scale.reshape(n, c, 1)  # NOTE: one pass for rstd and weight together
        if bias is not None:
            out += bias.reshape(1, c, 1)
        return out.reshape(x.shape).astype(x.dtype, copy=False)

    def _fused_backward(self, grad: Any, x: Any, w: Any, mean: Any, rstd: Any,
                        needs: tuple[bool, bool, bool]) -> tuple[Any, Any, Any] | None:
        fused = self.backend.fused_group_norm_backward(grad, x, w, mean, rstd, self.groups, needs)
        if fused is not None:
            return fused  # type: ignore[no-any-return]
        n, c = x.shape[0], x.shape[1]
        flat = (n, c, math.prod(x.shape[2:]))
        gx, gw, gb = norm_fast.group_norm_backward(
            self.backend, x.reshape(flat), grad.reshape(flat), w, mean, rstd, self.groups,
            needs)
        return (None if gx is None else gx.reshape(x.shape)), gw, gb

    def backward(self, grad: Any) -> tuple[Any, ...]:
        x, w, mean, rstd = self.saved_tensors
        fused = self._first_order(grad, x, w, mean, rstd)
        if fused is not None:
            return fused
        needs = self.needs_input_grad
        xg = x.reshape(self._grouped(tuple(x.shape)))
        if STATE.grad_enabled and x.requires_grad:
            # NOTE: a graph is being recorded (create_graph): the statistics must be functions
            # of x for second derivatives to be right.
            mean = xg.mean(2, keepdim=True)
            xc = xg - mean
            rstd = ((xc * xc).mean(2, keepdim=True) + self.eps).rsqrt()
        xhat = (xg - mean) * rstd
        gx = gw = gb = None
        if needs[0]:
            gy = grad if w is None else grad * w.view(self.pshape)
            gy = gy.reshape(xg.shape)
            proj = (gy * xhat).mean(2, keepdim=True)
            gx = (rstd * (gy - gy.mean(2, keepdim=True) - xhat * proj)).reshape(x.shape)
        if needs[1]:
            gw = self._sum_p(grad * xhat.reshape(x.shape)).view(w.shape)
        if needs[2]:
            gb = self._sum_p(grad).view(self.bias_shape)
        return gx, gw, gb
