"""CtcLossBackward0: the connectionist temporal classification loss of each sequence.

The forward (alpha) and backward (beta) recursions run in log space over time, one step per
time step for every sequence and extended-label position at once. The gradient is PyTorch's: the
gradient with respect to the *logits* behind ``log_softmax`` (``exp(lp) - posterior``), which
is what it hands back as the gradient of ``log_probs``; as in PyTorch it has no derivative.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .nn_losses import _no_second_derivative

_NEG_INF = float("-inf")


def _lse3(b: Any, x: Any, y: Any, z: Any) -> Any:
    """``log(exp(x) + exp(y) + exp(z))`` element-wise; -inf where all three are -inf."""
    m = b.maximum(b.maximum(x, y), z)
    m = b.where(m == _NEG_INF, 0, m)
    return b.log(b.exp(x - m) + b.exp(y - m) + b.exp(z - m)) + m


def _shift(b: Any, a: Any, k: int) -> Any:
    """``a`` (N, L) moved ``k`` places along L: right for ``k > 0``, left for ``k < 0``,
    filled with -inf."""
    n, length = a.shape
    pad = b.full((n, min(abs(k), length)), _NEG_INF, a.dtype)
    if k > 0:
        return b.concatenate([pad, a[:, :length - k]], axis=1)
    return b.concatenate([a[:, -k:], pad], axis=1)


class CtcLoss(Node):
    """Negative log-likelihood (N,) of the padded targets ``tg`` (N, S) under ``lp`` (T, N, C),
    for the given input and target lengths (int64 arrays of shape (N,))."""

    node_name = "CtcLossBackward0"

    def __init__(self, blank: int, zero_infinity: bool) -> None:
        self.blank, self.zero_infinity = blank, zero_infinity

    def _extended(self, lp: Any, tg: Any) -> tuple[Any, Any, Any]:
        """The extended labels (N, 2S+1) (blanks between and around the targets), their
        log-probabilities (T, N, 2S+1), and where a label may skip the blank before it."""
        b = self.backend
        n, s = tg.shape
        pos = b.arange(0, 2 * s + 1, 1, "int64")
        label = tg[:, b.clip((pos - 1) // 2, 0, max(s - 1, 0))] if s else \
            b.zeros((n, 1), "int64")
        ext = b.where((pos % 2 == 0)[None, :], self.blank, label).astype("int64")
        lp_ext = b.take_along_axis(lp, b.broadcast_to(ext[None], (lp.shape[0],) + ext.shape), 2)
        skip = b.logical_and(b.not_equal(ext, _shift_int(b, ext, 2)), (pos % 2 == 1)[None, :])
        skip = b.logical_and(skip, (pos >= 2)[None, :])
        return ext, lp_ext, skip

    def forward(self, lp: Any, tg: Any, il: Any, tl: Any) -> Any:
        b = self.backend
        t_max, n = lp.shape[0], lp.shape[1]
        ext, lp_ext, skip = self._extended(lp, tg)
        length = ext.shape[1]
        alpha = b.full((t_max, n, length), _NEG_INF, lp.dtype)
        if t_max:
            first = b.full((n, length), _NEG_INF, lp.dtype)
            first[:, 0] = lp_ext[0, :, 0]
            if length > 1:
                first[:, 1] = b.where(tl > 0, lp_ext[0, :, 1], _NEG_INF)
            alpha[0] = first
        neg = b.full((n, length), _NEG_INF, lp.dtype)
        for t in range(1, t_max):
            a = alpha[t - 1]
            alpha[t] = _lse3(b, a, _shift(b, a, 1), b.where(skip, _shift(b, a, 2), neg)) \
                + lp_ext[t]
        rows = b.arange(0, n, 1, "int64")
        last = alpha[b.clip(il - 1, 0, max(t_max - 1, 0)), rows] if t_max else neg
        end1 = last[rows, 2 * tl] if t_max else neg[:, 0]
        end2 = b.where(tl > 0, last[rows, b.maximum(2 * tl - 1, 0)], _NEG_INF) if t_max \
            else neg[:, 0]
        ll = b.logaddexp(end1, end2)
        ll = b.where(il == 0, b.where(tl == 0, 0.0, _NEG_INF), ll)
        nll = (-ll).astype(lp.dtype, copy=False)
        # NOTE: log_alpha and the likelihoods are kept, as PyTorch keeps them (outputs of its
        # forward); beta is computed in backward.
        self.save_for_backward(lp, tg, il, tl)
        self.alpha, self.nll = alpha, nll
        return nll

    def backward(self, grad: Any) -> tuple[Any, None, None, None]:
        lp, tg, il, tl = self.saved_tensors

        def fn(b: Any, g: Any, lpa: Any, tga: Any, ila: Any, tla: Any) -> Any:
            return self._grad(b, g, lpa, tga, ila, tla)

        return _no_second_derivative(fn, "_ctc_loss_backward", grad, lp, tg, il, tl), \
            None, None, None

    def _grad(self, b: Any, g: Any, lp: Any, tg: Any, il: Any, tl: Any) -> Any:
        t_max, n, c = lp.shape
        ext, lp_ext, skip = self._extended(lp, tg)
        length = ext.shape[1]
        pos = b.arange(0, length, 1, "int64")[None, :]
        skip_next = _shift_bool(b, skip, -2)  # s + 2 may be reached from s
        ends = b.logical_or(pos == 2 * tl[:, None],
                            b.logical_and(pos == 2 * tl[:, None] - 1, (tl > 0)[:, None]))
        neg = b.full((n, length), _NEG_INF, lp.dtype)
        beta = b.full((t_max, n, length), _NEG_INF, lp.dtype)
        for t in range(t_max - 1, -1, -1):
            if t < t_max - 1:
                nb = beta[t + 1]
                rec = _lse3(b, nb, _shift(b, nb, -1), b.where(skip_next, _shift(b, nb, -2), neg)) \
                    + lp_ext[t]
            else:
                rec = neg
            init = b.where(ends, lp_ext[t], _NEG_INF)
            beta[t] = b.where((il - 1 == t)[:, None], init,
                              b.where((t < il - 1)[:, None], rec, _NEG_INF))
        ab = self.alpha + beta
        m = b.max(ab, axis=2, keepdims=True)
        m = b.where(m == _NEG_INF, 0, m)
        acc = b.zeros((t_max, n, c), lp.dtype)
        b.scatter_add(acc, b.broadcast_to(ext[None], ab.shape), b.exp(ab - m), 2)
        post = b.exp(b.log(acc) + m + self.nll[None, :, None] - lp)
        out = b.exp(lp) - post
        keep = b.arange(0, t_max, 1, "int64")[:, None] < il[None, :]
        if self.zero_infinity:
            keep = b.logical_and(keep, (self.nll != float("inf"))[None, :])
        out = b.where(keep[:, :, None], out, 0)
        return (out * g[None, :, None]).astype(lp.dtype, copy=False)


def _shift_int(b: Any, a: Any, k: int) -> Any:
    """Integer labels (N, L) moved ``k`` places right, filled with -1 (no label)."""
    pad = b.full((a.shape[0], min(k, a.shape[1])), -1, a.dtype)
    return b.concatenate([pad, a[:, :a.shape[1] - k]], axis=1)


def _shift_bool(b: Any, a: Any, k: int) -> Any:
    """A mask (N, L) moved ``-k`` places left (``k < 0``), filled with False."""
    pad = b.zeros((a.shape[0], min(-k, a.shape[1])), "bool")
    return b.concatenate([a[:, -k:], pad], axis=1)
