"""The softmax of attention scores: rows that are masked everywhere give zeros, not NaN."""

from __future__ import annotations

from typing import Any

from .fused import Softmax
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
