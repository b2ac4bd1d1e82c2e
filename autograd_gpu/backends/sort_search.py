"""Backend entries of the sort family's searching half: unique, searchsorted, histc,
bincount, isin, count_nonzero. Written once through ``self.xp``; ``SortBackend`` (``sort.py``)
derives from this mixin, and its ``argsort_stable`` is what ``unique`` sorts with."""

from __future__ import annotations

import math
from typing import Any

Array = Any


class SearchBackend:
    """Primitives for unique/searchsorted/histc/bincount/isin; ``self`` is the backend."""

    xp: Any
    name: str

    # ---- unique -------------------------------------------------------------------------------
    def unique_rows(self: Any, rows: Array, sort: bool) -> tuple[Array, Array, Array]:
        """Unique rows of the 2-D ``rows`` (1-element rows for an element-wise unique):
        ``(first row index of each group in sorted order, inverse, counts)``. ``sort``: sort
        rows lexicographically first (stably, NaN last); else only consecutive equal rows
        merge (``unique_consecutive``). NaN never equals NaN, so each NaN stays apart, as in
        PyTorch."""
        xp = self.xp
        n = rows.shape[0]
        if n == 0:
            empty = xp.zeros((0,), "int64")
            return empty, empty, empty
        if not sort:
            order = xp.arange(n, dtype="int64")
        elif rows.shape[1] == 1:
            order = self.argsort_stable(rows[:, 0], 0)
        else:
            # NOTE: lexsort's last key is the primary one (and CuPy's takes no bool keys).
            keys = rows.T[::-1] if rows.dtype.kind != "b" else rows.T[::-1].astype("uint8")
            order = xp.lexsort(keys).astype("int64", copy=False)
        s = rows[order]
        new = xp.ones((n,), "bool")
        new[1:] = xp.any(s[1:] != s[:-1], axis=1)
        group = xp.cumsum(new, dtype="int64") - 1
        inverse = xp.empty((n,), "int64")
        inverse[order] = group
        starts = xp.flatnonzero(new)
        counts = xp.diff(xp.concatenate([starts, xp.asarray([n], dtype=starts.dtype)]))
        return order[starts], inverse, counts.astype("int64", copy=False)

    # ---- searching ----------------------------------------------------------------------------
    def searchsorted_rows(self: Any, seq: Array, values: Array, right: bool,
                          sorter: Array | None) -> Array:
        """For each of ``values``, its insertion index in ``seq`` (int64): the first position
        whose element is ``>= value`` (``> value`` when ``right``), as PyTorch's bisection
        compares, so NaN is past everything (a NaN value goes to the end, even past NaNs).
        ``seq`` is 1-D (any ``values``) or ``(..., n)`` with ``values`` of shape ``(..., m)``;
        ``sorter`` indexes ``seq`` along its last dimension."""
        xp = self.xp
        if sorter is not None:
            seq = self.take_along_axis(seq, sorter, seq.ndim - 1)
        n = seq.shape[-1]
        if n == 0 or values.size == 0:
            return xp.zeros(values.shape, "int64")
        if seq.ndim == 1 and not (seq.dtype.kind == "f" and bool(xp.isnan(seq).any())):
            # NOTE: NumPy's and CuPy's search agree with PyTorch's when ``seq`` holds no NaN.
            side = "right" if right else "left"
            return xp.searchsorted(seq, values, side=side).astype("int64", copy=False)
        rows = seq.reshape(1, n) if seq.ndim == 1 else seq.reshape(-1, n)
        vals = values.reshape(1, -1) if seq.ndim == 1 else values.reshape(rows.shape[0], -1)
        lo = xp.zeros(vals.shape, "int64")
        hi = xp.full(vals.shape, n, "int64")
        for _ in range(n.bit_length() + 1):
            active = lo < hi
            if not bool(active.any()):
                break
            mid = (lo + hi) // 2
            v = xp.take_along_axis(rows, xp.minimum(mid, n - 1), 1)
            go_right = ~(v > vals) if right else ~(v >= vals)
            lo = xp.where(active & go_right, mid + 1, lo)
            hi = xp.where(active & ~go_right, mid, hi)
        return lo.reshape(values.shape)

    # ---- counting -----------------------------------------------------------------------------
    def histc(self: Any, x: Array, bins: int, lo: float, hi: float) -> Array:
        """PyTorch's ``histc``: ``bins`` equal bins over ``[lo, hi]`` (edges in ``x``'s dtype),
        elements outside (and NaN) ignored, ``hi`` itself in the last bin; the bin of ``e`` is
        ``int((e - lo) * bins / (hi - lo))`` computed in ``x``'s dtype, as PyTorch's kernel."""
        xp = self.xp
        left, right = x.dtype.type(lo), x.dtype.type(hi)  # the outer edges, in x's dtype
        flat = x.reshape(-1)
        inside = flat[(flat >= left) & (flat <= right)]
        pos = ((inside - left) * x.dtype.type(bins) / (right - left)).astype("int64")
        pos = xp.minimum(pos, bins - 1)
        return xp.bincount(pos, minlength=bins)[:bins].astype(x.dtype)

    def histogramdd(self: Any, x: Array, edges: list[Array], weight: Array | None) -> Array:
        """PyTorch's ``histogramdd`` counts: the points ``x`` (N, D) in the bins between the
        increasing ``edges`` of each dim (``weight``: their weights, (N,)); a point on a last
        edge falls in the last bin, points outside (or NaN) are not counted. The result has
        ``x``'s dtype and one dim per edge array.

        NOTE: the bin is found by binary search in the edges, as PyTorch's kernel ends up with
        for linear bins too (it corrects its interpolated guess against the edges)."""
        xp = self.xp
        shape = tuple(int(e.shape[0]) - 1 for e in edges)
        flat = xp.zeros((x.shape[0],), "int64")
        keep = xp.ones((x.shape[0],), "bool")
        for d, e in enumerate(edges):
            col = x[:, d]
            pos = xp.searchsorted(e, col, side="right") - 1
            pos = xp.where(col == e[-1], shape[d] - 1, pos)
            keep &= (col >= e[0]) & (col <= e[-1])
            flat = flat * shape[d] + xp.clip(pos, 0, shape[d] - 1)
        total = math.prod(shape)
        w = None if weight is None else weight[keep].astype("float64")
        counts = xp.bincount(flat[keep], weights=w, minlength=total)[:total]
        return counts.astype(x.dtype).reshape(shape)

    def bincount(self: Any, x: Array, weights: Array | None = None, minlength: int = 0) -> Array:
        """Counts of each value of the non-negative integer 1-D ``x`` (int64), or sums of
        ``weights`` (float64) at them, at least ``minlength`` long."""
        xp = self.xp
        if weights is None:
            return xp.bincount(x, minlength=minlength).astype("int64", copy=False)
        return xp.bincount(x, weights=weights.astype("float64"), minlength=minlength)

    def isin(self: Any, element: Array, test_elements: Array, assume_unique: bool = False,
             invert: bool = False) -> Array:
        """Whether each element is among ``test_elements`` (NaN never is); ``invert``: is not.
        NumPy's signature; the result is exact whatever ``assume_unique`` says."""
        return self.xp.isin(element, test_elements, invert=invert)

    def count_nonzero(self: Any, x: Array, axis: Any = None) -> Array:
        """The number of nonzero elements over ``axis`` (a tuple; None: all), int64, NaN
        counting as nonzero; an array (0-d for a full count), C-contiguous."""
        return self.c_contiguous(self.xp.asarray(self.xp.sum(x != 0, axis=axis, dtype="int64")))
