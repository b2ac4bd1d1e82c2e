"""``SmoothedCrossEntropy``: cross-entropy with label smoothing as one node.

PyTorch composes it from a dozen ops (log_softmax, nll_loss, a sum over classes, a masked fill,
the mean, two scalings and an add), and so does ``nn.functional.cross_entropy``'s general path;
on the small batches of a classifier that is a dozen nodes of Python overhead for a few hundred
numbers. The common case (a batch ``(N, C)`` of float32/float64 logits, class-index targets all
in ``[0, C)``, no weights, 'mean' or 'sum') runs here as one node instead: the same arithmetic
on the same arrays in the same order, so the loss and the gradient are the composition's bit
for bit. The node is named after the composition's last one (``AddBackward0``), as
``loss.grad_fn`` is in PyTorch.

It keeps what the composition keeps for backward (an ``(N, C)`` array, here the logits rather
than the log-probabilities, recomputed in backward), so memory stays the same. Under
``create_graph`` its backward runs the composition again (``Recompute``).

NOTE: what differs from the composition: ``loss.grad_fn.next_functions`` leads straight to the
logits' node (not through the two scalings), and modifying the logits in place between the loss
and its backward raises the in-place error (the node saved them; the composition saved its own
log-probabilities), as PyTorch does for any op that saves its input.
"""

from __future__ import annotations

from typing import Any, Callable

from .recompute import Recompute
from .util import c_order

# NOTE: above this many logits the composition's overhead is small next to its arithmetic, and
# the log_softmax recomputed in backward would cost more than the nodes it saves
FUSE_BELOW = 1 << 16


class SmoothedCrossEntropy(Recompute):
    """``(1 - e) * nll_loss(log_softmax(x), t) + e / C * smooth(log_softmax(x))``: ``fn`` is the
    composition (for ``create_graph``), ``reduction`` 'mean' or 'sum', ``smoothing`` ``e``."""

    raw_ok = True

    def __init__(self, fn: Callable[..., Any], reduction: str, smoothing: float) -> None:
        super().__init__(fn, "AddBackward0")
        self.reduction = reduction
        self.smoothing = smoothing

    def forward(self, x: Any, target: Any) -> Any:  # type: ignore[override]
        b = self.backend
        n, c = x.shape
        logp = b.log_softmax(c_order(b, x), 1)
        if self.needs_input_grad:
            self.save_for_backward(x, target)
        total = b.asarray(n, x.dtype)
        # NOTE: each line is one node of the composition, with that node's forward arithmetic
        losses = -logp[b.arange(0, n, 1, "int64"), target]  # NllLoss (its fast path)
        nll = b.sum(losses)
        if self.reduction == "mean":
            nll = (nll / total).astype(x.dtype, copy=False)
        smooth = b.sum(b.negative(b.sum(logp, axis=(1,))), axis=(0,))  # -logp.sum(1), .sum()
        if self.reduction == "mean":
            smooth = b.true_divide(smooth, total)  # / (~ignored).sum(), every target counted
        e = self.smoothing
        return b.add(b.multiply(nll, 1 - e), b.multiply(smooth, e / c))

    def backward(self, grad: Any) -> tuple[Any, ...]:  # type: ignore[override]
        if not self._raw:
            return super().backward(grad)
        x, target = self.saved_tensors
        b = self.backend
        n, c = x.shape
        dtype = x.dtype
        logp = b.log_softmax(c_order(b, x), 1)
        e = self.smoothing
        mean = self.reduction == "mean"
        total = b.asarray(n, dtype)
        # NOTE: the composition's backward, node by node: the smoothing branch (Mul, Div, the
        # spread of both sums and the negation between them) ...
        k = grad * (e / c)
        if mean:
            k = k / total
        spread = b.empty((n,), dtype)
        spread[...] = k
        g = b.empty((n, c), dtype)
        g[...] = (-spread).reshape(n, 1)
        # ... the nll branch (Mul, then NllLoss's scatter of -1 or -1 / N) ...
        coef = b.zeros((n, c), dtype)
        minus = b.asarray(-1, dtype)
        coef[b.arange(0, n, 1, "int64"), target] = minus / total if mean else minus
        # ... their sum (the engine's accumulation), and LogSoftmax's backward
        g = coef * (grad * (1 - e)) + g
        return b.log_softmax_backward(logp, g, 1), None
