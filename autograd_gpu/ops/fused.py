"""Row-wise softmax and log-softmax along one dimension."""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node


class Softmax(Node):
    node_name = "SoftmaxBackward0"
    raw_ok = True

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def forward(self, x: Any) -> Any:
        b = self.backend
        # NOTE: subtract the row max so that exp never overflows.
        e = b.exp(x - b.max(x, axis=self.dim, keepdims=True)) if x.size else b.copy(x)
        out = e / b.sum(e, axis=self.dim, keepdims=True) if x.size else e
        self.save_for_backward(out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        (out,) = self.saved_tensors
        return (out * (grad - self.sum(grad * out, self.dim, True)),)


class LogSoftmax(Node):
    node_name = "LogSoftmaxBackward0"
    raw_ok = True

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def forward(self, x: Any) -> Any:
        b = self.backend
        if not x.size:
            out = b.copy(x)
        else:
            # NOTE: x - max - log(sum(exp(x - max))): stable for large |x|.
            shifted = x - b.max(x, axis=self.dim, keepdims=True)
            out = shifted - b.log(b.sum(b.exp(shifted), axis=self.dim, keepdims=True))
        self.save_for_backward(out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        (out,) = self.saved_tensors
        return (grad - self.exp(out) * self.sum(grad, self.dim, True),)
