"""Attention nodes: the softmax of attention scores (rows that are masked everywhere give
zeros, not NaN) and fused attention (our CUDA kernels, one node)."""

from __future__ import annotations

from typing import Any, Callable

from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import Node
from .fused import Softmax
from .recompute import recompute_backward
from .util import c_order


class SafeSoftmax(Softmax):
    """``softmax(x, dim)``, with zeros for rows whose entries are all ``-inf`` (PyTorch's
    ``_safe_softmax``, used by ``scaled_dot_product_attention``).

    The backward is softmax's, from the output: a zero row has a zero gradient.
    """

    node_name = "SafeSoftmaxBackward0"

    def forward(self, x: Any) -> Any:
        b = self.backend
        x = c_order(b, x)
        out = b.softmax(x, self.dim)
        # NOTE: exp(-inf - (-inf)) is NaN: such rows are set to 0 (all masked: nothing to attend).
        dead = b.all(b.equal(x, float("-inf")), axis=self.dim, keepdims=True)
        out = b.where(dead, b.zeros_like(out), out)
        self.save_for_backward(out)
        return out


class FusedAttention(Node):
    """``softmax(q @ k^T * scale + mask) @ v`` by our fused CUDA kernels
    (``backends/cuda_attention.py``): one node, as PyTorch's fused SDPA records
    (``node_name``: ``ScaledDotProductEfficientAttentionBackward0``, inputs q, k, v, mask, or
    ``ScaledDotProductFlashAttentionBackward0``, inputs q, k, v).

    Saves the inputs, the output and the row log-sum-exp (``(..., L)`` floats), never the
    ``(L, S)`` weights: the backward recomputes them tile by tile. Under ``create_graph`` the
    backward runs ``math`` (the math path's function of ``q, k, v[, mask]``) again with
    recording and differentiates it, so higher-order gradients are the math path's.
    """

    def __init__(self, causal: bool, scale: float, name: str,
                 math: Callable[..., Any]) -> None:
        self.causal, self.scale, self.node_name, self.math = causal, scale, name, math

    def forward(self, q: Any, k: Any, v: Any, mask: Any = None) -> Any:
        out, lse = self.backend.attention_forward(q, k, v, mask, self.causal, self.scale)
        self.save_for_backward(q, k, v, mask, out, lse)
        return out

    def backward(self, grad: Any) -> tuple[Any, ...]:
        saved = self.saved_tensors
        need = self.needs_input_grad
        if is_grad_enabled():  # create_graph: the math path's graph, recomputed
            return recompute_backward(self.math, saved[:len(need)], need, (grad,))
        q, k, v, mask, out, lse = (None if t is None else t._data for t in saved)
        grads = self.backend.attention_backward(
            q, k, v, mask, out, lse, grad._data, self.causal, self.scale,
            len(need) > 3 and need[3])
        return tuple(self.wrap(g) if n and g is not None else None
                     for g, n in zip(grads, need))
