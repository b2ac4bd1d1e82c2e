"""Backend entries of the sort family (``functions/sort.py``, ``ops/sort.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends.

Every sort here is stable (``kind="stable"``, CuPy's only kind), NaN last in
ascending order and first in descending order, as PyTorch's. Ties are therefore always broken
by position: the first occurrence comes first (descending too), so ``topk``, ``kthvalue``,
``median`` and ``mode`` pick a well-defined index among equal values. The searching half
(unique, searchsorted, histc, bincount, isin) is in ``sort_search.py``.
"""

from __future__ import annotations

from typing import Any

from .sort_search import SearchBackend

Array = Any


class SortBackend(SearchBackend):
    """The sort family's primitives; ``self`` is the backend object."""

    xp: Any
    name: str

    # ---- sorting ------------------------------------------------------------------------------
    def argsort_stable(self: Any, x: Array, axis: int, descending: bool = False) -> Array:
        """Indices that sort ``x`` along ``axis`` stably (int64). Descending order sorts the
        reversed array ascending and reverses back, which keeps equal elements (and NaNs, which
        come first) in their original order."""
        xp = self.xp
        if x.ndim == 0:
            return xp.zeros((), "int64")
        if not descending:
            return self._argsort(x, axis)
        n = x.shape[axis]
        idx = self._argsort(self.flip_axis(x, axis), axis)
        return (n - 1) - self.flip_axis(idx, axis)

    def _argsort(self: Any, x: Array, axis: int) -> Array:
        # NOTE: CuPy (>= 13) takes kind="stable" too (its only sort, as the docs say).
        return self.xp.argsort(x, axis=axis, kind="stable").astype("int64", copy=False)

    def sort_along(self: Any, x: Array, axis: int, descending: bool) -> tuple[Array, Array]:
        """``(values, indices)`` of a stable sort of ``x`` along ``axis``, laid out like ``x``
        (PyTorch's sort keeps the input's dense layout)."""
        if x.ndim == 0:
            return x.copy(), self.xp.zeros((), "int64")
        idx = self.argsort_stable(x, axis, descending)
        values = self.take_along_axis(x, idx, axis)
        order = self.like_order(x)
        if order is None:
            return self.c_contiguous(values), self.c_contiguous(idx)
        return self.with_order(values, order), self.with_order(idx, order)

    def _rows(self: Any, x: Array, axis: int) -> tuple[Array, tuple[int, ...]]:
        """``x`` with ``axis`` moved last, as a 2-D array of rows, and the leading shape."""
        y = self.xp.moveaxis(x, axis, -1)
        lead = tuple(y.shape[:-1])
        rows = 1
        for s in lead:
            rows *= s
        return y.reshape(rows, y.shape[-1]), lead

    def _unrows(self: Any, r: Array, lead: tuple[int, ...], axis: int) -> Array:
        """The inverse of ``_rows`` (keeping ``axis``), C-contiguous."""
        out = self.xp.moveaxis(r.reshape(lead + (r.shape[-1],)), -1, axis)
        return self.c_contiguous(out)

    # ---- selection: topk, kthvalue, median, mode ----------------------------------------------
    def topk_along(self: Any, x: Array, k: int, axis: int, largest: bool) -> tuple[Array, Array]:
        """The ``k`` largest (or smallest) elements along ``axis``, sorted, and their indices;
        NaN counts as the largest value; equal values come in order of position."""
        if x.ndim == 0:  # NOTE: k is 0 or 1 here; PyTorch returns the element for both
            return x.copy(), self.xp.zeros((), "int64")
        rows, lead = self._rows(x, axis)
        if k == 0 or rows.shape[0] == 0:
            idx = self.xp.zeros((rows.shape[0], k), "int64")
        elif self.name != "numpy" or k == rows.shape[1] or rows.shape[1] <= 64:
            idx = self.argsort_stable(rows, 1, largest)[:, :k]
        else:
            idx = self._topk_numpy(rows, k, largest)
        values = self.take_along_axis(rows, idx, 1)
        return self._unrows(values, lead, axis), self._unrows(idx, lead, axis)

    def _topk_numpy(self: Any, rows: Array, k: int, largest: bool) -> Array:
        """``topk``'s indices on NumPy rows without a full sort.

        Each row is first cut down to its candidates: the elements at least as large as the
        k-th largest of the maxima of ``m`` disjoint groups (k distinct elements reach that
        bound, so the k largest are all among them), gathered into a padded ``(rows, C)``
        array in order of position; ``_topk_partition`` then picks from those. Rows too short
        for groups, rows with NaN, and bounds that keep too much take it directly."""
        from ..compiler import is_compiling

        xp = self.xp
        r, n = rows.shape
        g = min(64, n // (4 * k))  # the group size; m = n // g >= 4k groups
        # NOTE: the candidates' count depends on the values: a compiled step records the direct
        # way (the same indices), whose shapes do not
        if g < 4 or is_compiling():
            return self._topk_partition(rows, k, largest)
        m = n // g
        head = rows[:, :g * m].reshape(r, g, m)  # group j: elements j, j + m, j + 2m, ...
        ext = head.max(1) if largest else head.min(1)
        if rows.dtype.kind == "f" and (xp.isnan(ext).any() or xp.isnan(rows[:, g * m:]).any()):
            return self._topk_partition(rows, k, largest)
        kth = m - k if largest else k - 1
        bound = xp.partition(ext, kth, axis=1)[:, kth:kth + 1]
        mask = rows >= bound if largest else rows <= bound
        # NOTE: the flat nonzero is ~10x faster than NumPy's 2-D one
        flat = xp.flatnonzero(mask.reshape(-1))
        ri, ci = flat // n, flat % n
        counts = xp.bincount(ri, minlength=r)
        c = int(counts.max())
        if c * 4 > n:
            return self._topk_partition(rows, k, largest)
        starts = xp.cumsum(counts) - counts
        pos = xp.arange(ri.shape[0]) - starts[ri]
        # NOTE: padding sorts after every candidate (ties go to the earlier position), and each
        # row has at least k candidates, so it is never picked.
        info = xp.finfo(rows.dtype) if rows.dtype.kind == "f" else xp.iinfo(rows.dtype)
        pad = (-xp.inf if largest else xp.inf) if rows.dtype.kind == "f" else \
            (info.min if largest else info.max)
        vals = xp.full((r, c), pad, rows.dtype)
        cols = xp.zeros((r, c), "int64")
        vals[ri, pos] = rows[ri, ci]
        cols[ri, pos] = ci
        return xp.take_along_axis(cols, self._topk_partition(vals, k, largest), 1)

    def _topk_partition(self: Any, rows: Array, k: int, largest: bool) -> Array:
        xp = self.xp
        n = rows.shape[1]
        if k == n:
            return self.argsort_stable(rows, 1, largest)
        kth = n - k if largest else k - 1
        v = xp.partition(rows, kth, axis=1)[:, kth:kth + 1]  # NOTE: NaN last, as in sort
        beyond = rows > v if largest else rows < v
        equal = rows == v
        if rows.dtype.kind == "f":
            nan, vnan = xp.isnan(rows), xp.isnan(v)
            beyond |= (nan & ~vnan) if largest else (~nan & vnan)
            equal |= nan & vnan
        need = k - beyond.sum(1, keepdims=True)
        keep = beyond | (equal & (xp.cumsum(equal, axis=1) <= need))
        idx = xp.nonzero(keep)[1].reshape(rows.shape[0], k)
        order = self.argsort_stable(xp.take_along_axis(rows, idx, 1), 1, largest)
        return xp.take_along_axis(idx, order, 1)

    def select_sorted(self: Any, x: Array, axis: int, which: str, k: int = 0
                      ) -> tuple[Array, Array]:
        """The element at one position of the stable ascending order along ``axis`` (NaN last)
        and its index, both with ``axis`` kept (size 1): ``which`` is ``"kth"`` (position
        ``k - 1``), ``"median"`` (the lower median; the first NaN where there is one) or
        ``"nanmedian"`` (the lower median of the non-NaN elements; the first NaN when all are).
        """
        xp = self.xp
        if x.ndim == 0:
            return x.copy(), xp.zeros((), "int64")
        n = x.shape[axis]
        if which == "kth":
            pos: Any = xp.full(_kept(x.shape, axis), k - 1, "int64")
        else:
            nans = xp.sum(xp.isnan(x), axis=axis, keepdims=True, dtype="int64") \
                if x.dtype.kind == "f" else xp.zeros(_kept(x.shape, axis), "int64")
            if which == "median":
                pos = xp.where(nans > 0, n - nans, (n - 1) // 2)
            else:
                # NOTE: C's integer division truncates: no non-NaN element gives position 0.
                pos = xp.maximum(n - nans - 1, 0) // 2
        if self.name == "numpy" and n > 64 and pos.size and int(pos.min()) == int(pos.max()):
            return self._select_partition(x, axis, int(pos.reshape(-1)[0]))
        idx = self.argsort_stable(x, axis)
        index = self.take_along_axis(idx, pos, axis)
        values = self.take_along_axis(x, index, axis)
        return self.c_contiguous(values), self.c_contiguous(index)

    def _select_partition(self: Any, x: Array, axis: int, p: int) -> tuple[Array, Array]:
        """``select_sorted`` at one position ``p`` for every slice, in O(n): a partition gives
        the value ``v``; its index is that of the ``(p - #{x < v})``-th element equal to ``v``
        (counting in order of position), which is where the stable sort puts it."""
        xp = self.xp
        v = xp.take(xp.partition(x, p, axis=axis), [p], axis=axis)  # NOTE: NaN last
        less, equal = x < v, x == v
        if x.dtype.kind == "f":
            nan, vnan = xp.isnan(x), xp.isnan(v)
            less = xp.where(vnan, ~nan, less)
            equal = xp.where(vnan, nan, equal)
        rank = p - xp.sum(less, axis=axis, keepdims=True, dtype="int64")
        hit = equal & (xp.cumsum(equal, axis=axis) == rank + 1)
        index = xp.argmax(hit, axis=axis, keepdims=True).astype("int64", copy=False)
        return self.c_contiguous(v), self.c_contiguous(index)

    def median_all(self: Any, x: Array, ignore_nan: bool) -> Array:
        """The lower median of all elements (0-d): NaN if any element is NaN (unless
        ``ignore_nan``, then over the others) or if there is none."""
        xp = self.xp
        flat = x.reshape(-1)
        if x.dtype.kind == "f":
            nan = xp.isnan(flat)
            if bool(nan.any()):
                if not ignore_nan or bool(nan.all()):
                    return xp.full((), float("nan"), x.dtype)
                flat = flat[~nan]
        if flat.size == 0:
            return xp.full((), float("nan"), x.dtype)
        p = (flat.size - 1) // 2
        return xp.partition(flat, p)[p].reshape(()).copy()

    def mode_along(self: Any, x: Array, axis: int) -> tuple[Array, Array]:
        """The most frequent value along ``axis`` (the smallest among equally frequent ones;
        every NaN counts alone) and the index of its last occurrence, with ``axis`` kept."""
        xp = self.xp
        if x.ndim == 0:
            return x.copy(), xp.zeros((), "int64")
        rows, lead = self._rows(x, axis)
        r, n = rows.shape
        idx = self.argsort_stable(rows, 1)
        s = xp.take_along_axis(rows, idx, 1)
        starts = xp.ones((r, n), "bool")
        starts[:, 1:] = s[:, 1:] != s[:, :-1]
        ends = xp.ones((r, n), "bool")
        ends[:, :-1] = starts[:, 1:]
        pos = xp.arange(n, dtype="int64")
        first = self.scan_ufunc("maximum", xp.where(starts, pos, 0), 1)
        runs = xp.where(ends, pos - first + 1, 0)
        best = xp.argmax(runs, axis=1)[:, None]  # NOTE: the first longest run: smallest value
        index = xp.take_along_axis(idx, best, 1)
        values = xp.take_along_axis(rows, index, 1)
        return self._unrows(values, lead, axis), self._unrows(index, lead, axis)


def _kept(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return tuple(1 if i == axis else s for i, s in enumerate(shape))
