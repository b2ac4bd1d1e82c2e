"""Row-wise softmax and log-softmax along one dimension."""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .util import c_order


class Softmax(Node):
    node_name = "SoftmaxBackward0"
    raw_ok = True

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def forward(self, x: Any) -> Any:
        # NOTE: on a C-contiguous copy of x, as PyTorch, so that the result is C-contiguous.
        out = self.backend.softmax(c_order(self.backend, x), self.dim)
        self.save_for_backward(out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        (out,) = self.saved_tensors
        if self._raw:  # bare arrays: one fused kernel on the GPU
            return (self.backend.softmax_backward(out, grad, self.dim),)
        return (out * (grad - self.sum(grad * out, self.dim, True)),)


class LogSoftmax(Node):
    node_name = "LogSoftmaxBackward0"
    raw_ok = True

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def forward(self, x: Any) -> Any:
        out = self.backend.log_softmax(c_order(self.backend, x), self.dim)  # NOTE: as softmax
        self.save_for_backward(out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        (out,) = self.saved_tensors
        if self._raw:
            return (self.backend.log_softmax_backward(out, grad, self.dim),)
        return (grad - self.exp(out) * self.sum(grad, self.dim, True),)
