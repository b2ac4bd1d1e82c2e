"""Backend entries of the stats family (``functions/stats.py``, ``ops/stats.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations

import math
from typing import Any


class StatsBackend:
    """The stats family's primitives; ``self`` is the backend object."""

    xp: Any
    name: str

    def stable_argsort(self, x: Any) -> Any:
        """The indices sorting ``x`` along its last axis, stable (ties keep their order), NaN
        last. NOTE: CuPy's argsort is always stable and takes no ``kind`` but None."""
        if self.name == "cupy":
            return self.xp.argsort(x, axis=-1)
        return self.xp.argsort(x, axis=-1, kind="stable")

    def quantile_ranks(self, x: Any, qs: Any, mode: str, ignore_nan: bool) -> Any:
        """The fractional sorted positions of the quantiles ``qs`` (1-d) in each row of ``x``
        (along its last axis), shaped ``x.shape[:-1] + qs.shape``, in ``x``'s dtype (PyTorch
        computes them there), rounded as ``mode`` says.

        NOTE: as PyTorch's: a row holding a NaN takes the last position (a NaN) in quantile;
        nanquantile counts only non-NaN elements, and an all-NaN row takes position 0 (a NaN).
        """
        xp = self.xp
        dt = x.dtype.type
        nan = xp.isnan(x)
        if ignore_nan:
            valid = xp.sum(~nan, axis=-1, keepdims=True).astype(x.dtype)
            ranks = qs * (valid - dt(1))
            ranks = xp.where(ranks < 0, dt(0), ranks)
        else:
            last = dt(x.shape[-1] - 1)
            ranks = xp.where(xp.any(nan, axis=-1, keepdims=True), last, qs * last)
        ranks = xp.broadcast_to(ranks, x.shape[:-1] + qs.shape).astype(x.dtype)
        if mode == "lower":
            return xp.floor(ranks)
        if mode == "higher":
            return xp.ceil(ranks)
        if mode == "nearest":
            return xp.rint(ranks)  # NOTE: half to even, as torch.round
        return ranks

    def ceil_int(self, x: Any) -> Any:
        return self.xp.ceil(x).astype("int64")

    # ---- cdist: pairwise distances, a block of rows of x1 at a time ---------------------------
    # NOTE: the (..., P, R, M) differences of all pairs would be P * R * M elements; blocks of
    # rows keep the temporaries near _CDIST_BLOCK elements whatever the sizes.

    def _cdist_rows(self, x1: Any, x2: Any) -> int:
        per_row = x2.shape[-2] * x2.shape[-1]
        for s in x1.shape[:-2]:
            per_row *= s
        return max(1, _CDIST_BLOCK // max(1, per_row))

    def cdist_forward(self, x1: Any, x2: Any, p: float) -> Any:
        """The p-distances (..., P, R) between the rows of ``x1`` (..., P, M) and ``x2``
        (..., R, M) (equal batch dims), ``vector_norm`` of each difference."""
        xp = self.xp
        out = xp.empty(x1.shape[:-1] + (x2.shape[-2],), x1.dtype)
        step = self._cdist_rows(x1, x2)
        for i in range(0, x1.shape[-2], step):
            diff = x1[..., i:i + step, None, :] - x2[..., None, :, :]
            out[..., i:i + step, :] = _norm_last(xp, diff, p)
        return out

    def cdist_backward(self, grad: Any, x1: Any, x2: Any, dist: Any, p: float) -> tuple[Any, Any]:
        """The gradients of ``cdist_forward`` for ``x1`` and ``x2``, as PyTorch's kernels (see
        ``ops.stats._pair_grad``, the same formula on tensors)."""
        xp = self.xp
        g1 = xp.empty(x1.shape, x1.dtype)
        g2 = xp.zeros(x2.shape, x2.dtype)
        step = self._cdist_rows(x1, x2)
        for i in range(0, x1.shape[-2], step):
            diff = x1[..., i:i + step, None, :] - x2[..., None, :, :]
            pair = _pair_grad(xp, diff, dist[..., i:i + step, :, None],
                              grad[..., i:i + step, :, None], p)
            g1[..., i:i + step, :] = pair.sum(axis=-2)
            g2 -= pair.sum(axis=-3)
        return g1, g2

    def pdist_forward(self, x: Any, p: float) -> Any:
        """The p-distances of the pairs ``i < j`` of rows of ``x`` (N, M), in ``triu_indices``
        order (N >= 2, M >= 1)."""
        i, j = self.xp.triu_indices(x.shape[0], 1)
        return _norm_last(self.xp, x[i] - x[j], p)

    def pdist_backward(self, grad: Any, x: Any, dist: Any, p: float) -> Any:
        """The gradient of ``pdist_forward`` for ``x``: each pair's share added to row ``i``
        and taken from row ``j`` (PyTorch's kernel's formula, ``_pair_grad``)."""
        xp = self.xp
        i, j = xp.triu_indices(x.shape[0], 1)
        pair = _pair_grad(xp, x[i] - x[j], dist[:, None], grad[:, None], p)
        out = xp.zeros(x.shape, x.dtype)
        self.index_add(out, i, pair)  # type: ignore[attr-defined]
        self.index_add(out, j, -pair)  # type: ignore[attr-defined]
        return out


_CDIST_BLOCK = 1 << 22


def _norm_last(xp: Any, d: Any, p: float) -> Any:
    """The p-norm of ``d`` over its last axis (non-empty), in ``d``'s dtype."""
    a = xp.abs(d)
    if p == 0:
        return (a != 0).sum(axis=-1).astype(d.dtype)
    if p == 1:
        return a.sum(axis=-1)
    if p == 2:
        return xp.sqrt((a * a).sum(axis=-1))
    if math.isinf(p):
        return a.max(axis=-1)
    return xp.power(xp.power(a, p).sum(axis=-1), 1.0 / p).astype(d.dtype, copy=False)


def _pair_grad(xp: Any, diff: Any, dist: Any, grad: Any, p: float) -> Any:
    """d dist / d diff times ``grad`` for every pair (arrays): 0 where the distance is 0 (for
    p < 1 also where the difference is 0); the inf-norm's ties each get the whole gradient."""
    sign = xp.sign(diff)
    if p == 0:
        return xp.zeros(diff.shape, diff.dtype)
    if p == 1:
        return grad * sign
    if math.isinf(p):
        return xp.where(xp.abs(diff) == dist, grad * sign, 0).astype(diff.dtype, copy=False)
    zero = dist == 0
    d = xp.where(zero, 1, dist).astype(diff.dtype, copy=False)
    if p == 2:
        out = grad * diff / d
    elif p < 2:
        out = sign * xp.power(xp.abs(diff), p - 1) * grad / xp.power(d, p - 1)
        if p < 1:
            zero = zero | (diff == 0)
    else:
        out = diff * xp.power(xp.abs(diff), p - 2) * grad / xp.power(d, p - 1)
    return xp.where(zero, 0, out).astype(diff.dtype, copy=False)
