"""``EmbeddingBag``: sums, means or maxima of bags of embedding rows (``EmbeddingBagBackward0``).

Forward runs on backend arrays, one scatter by bag id for all bags; backward is written with
tensor ops and the differentiable embedding scatter (``norm_ops.EmbeddingDenseBackward``), so it
is itself differentiable.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .norm_ops import EmbeddingDenseBackward


class EmbeddingBag(Node):
    """``out[b] = reduce(weight[indices[i]] for i in bag b)`` over the positions whose ``keep`` is
    1 (not the padding row); ``per_sample_weights`` (mode "sum") scale each row.

    Params:
        indices: flat int64 array of rows, all in range.
        bags: the bag of each position (int64, in ``[0, num_bags)``).
        keep: 1.0 where a position counts, 0.0 where it is left out (float64).
        num_bags: the number of output rows.
        mode: "sum", "mean" or "max".
        freq: per-position gradient scale (``1 / count`` of its index) or None.
    """

    node_name = "EmbeddingBagBackward0"

    def __init__(self, indices: Any, bags: Any, keep: Any, num_bags: int, mode: str,
                 freq: Any) -> None:
        self.indices, self.bags, self.keep = indices, bags, keep
        self.num_bags, self.mode, self.freq = num_bags, mode, freq

    def _counts(self) -> Any:
        """Positions kept per bag (float64, counted by scatter: exact below 2**53)."""
        b = self.backend
        counts = b.zeros((self.num_bags,), "float64")
        b.index_add(counts, self.bags, self.keep)
        return counts

    def forward(self, w: Any, psw: Any) -> Any:
        b = self.backend
        self.save_for_backward(w, psw)
        rows = w[self.indices]
        keep = self.keep.astype(w.dtype, copy=False).reshape(-1, 1)
        out = b.zeros((self.num_bags, w.shape[1]), w.dtype)
        if self.mode == "max":
            return self._max_forward(rows, keep, out)
        if psw is not None:
            rows = rows * psw.reshape(-1, 1)
        b.index_add(out, self.bags, rows * keep)
        if self.mode == "mean":
            counts = b.maximum(self._counts(), 1.0).astype(w.dtype, copy=False)
            out = out / counts.reshape(-1, 1)
        return out

    def _max_forward(self, rows: Any, keep: Any, out: Any) -> Any:
        """The column-wise maximum of each bag (0 for an empty bag); ``self.argpos`` keeps, per
        output element, the first position holding it (PyTorch's ``max_indices``)."""
        b = self.backend
        n, dim = rows.shape
        lowest = b.reduce_identity("amax", rows.dtype)
        b.scatter_reduce_into(out, (self.bags,), b.where(keep > 0, rows, lowest), "amax",
                              include_self=False)
        hit = (self._counts() > 0).reshape(-1, 1)
        out = b.where(hit, out, b.zeros((), out.dtype)).astype(out.dtype, copy=False)
        # NOTE: ties go to the first position in the bag, as PyTorch's CPU kernel (it replaces
        # the running maximum only on a strictly greater value).
        pos = b.arange(0, n, 1, "int64").reshape(-1, 1)
        at_max = b.logical_and(b.equal(rows, out[self.bags]), keep > 0)
        first = b.full((self.num_bags, dim), n, "int64")
        b.scatter_reduce_into(first, (self.bags,), b.where(at_max, pos, n), "amin")
        self.valid = b.logical_and(hit, first < n)
        self.argpos = b.where(self.valid, first, 0)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        w, psw = self.saved_tensors
        num, dim = w.shape
        grad_w = grad_psw = None
        if self.num_bags == 0:
            grad_w = grad.new_zeros(tuple(w.shape)) if self.needs_input_grad[0] else None
            grad_psw = psw.new_zeros(tuple(psw.shape)) if psw is not None and \
                self.needs_input_grad[1] else None
            return grad_w, grad_psw
        b = self.backend
        if self.mode == "max":
            if self.needs_input_grad[0]:
                cols = b.arange(0, dim, 1, "int64").reshape(1, -1)
                target = (self.indices[self.argpos] * dim + cols).reshape(-1)
                flat = EmbeddingDenseBackward.apply(
                    grad.reshape(-1, 1), indices=target, padding_idx=-1,
                    scale=self.valid.reshape(-1), num=num * dim)
                grad_w = flat.reshape(num, dim)
            return grad_w, None
        per_bag = grad.index_select(0, self.wrap(self.bags))
        if self.needs_input_grad[0]:
            scale = self.keep
            if self.mode == "mean":
                scale = scale / b.maximum(self._counts(), 1.0)[self.bags]
            if self.freq is not None:
                scale = scale * self.freq
            rows = per_bag if psw is None else per_bag * psw.unsqueeze(1)
            grad_w = EmbeddingDenseBackward.apply(rows, indices=self.indices, padding_idx=-1,
                                                  scale=scale, num=num)
        if psw is not None and self.needs_input_grad[1]:
            picked = w.index_select(0, self.wrap(self.indices))
            grad_psw = (per_bag * picked).sum(1) * self.wrap(self.keep).to(w.dtype)
        return grad_w, grad_psw
