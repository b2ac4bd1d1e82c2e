"""Backend entries of the scan family (``functions/scan.py``, ``ops/scan.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends.

NumPy scans with its ufuncs' ``accumulate``. CuPy has ``cumsum``/``cumprod`` but no other
``accumulate`` (``maximum``, ``logaddexp``); there a scan is a log-step (Hillis-Steele) pass:
``ceil(log2(n))`` whole-array steps, each combining every element with the one ``2**i`` before it.
"""

from __future__ import annotations

from typing import Any, Callable

Array = Any


def _acc_dtype(name: str, dtype: Any) -> Any:
    """The dtype PyTorch accumulates a float scan in: double on the CPU for float32 and float16
    (its CPU ``acc_type``), float32 for float16 on CUDA; None: the dtype itself."""
    kind = getattr(dtype, "kind", "")
    if kind != "f":
        return None
    if name == "numpy":
        return "float64" if dtype.itemsize < 8 else None
    return "float32" if dtype.itemsize < 4 else None


class ScanBackend:
    """The scan family's primitives; ``self`` is the backend object."""

    xp: Any
    name: str

    def c_contiguous(self: Any, x: Array) -> Array:
        """``x`` C-contiguous, copied only when it is not (0-d stays 0-d, unlike
        ``ascontiguousarray``)."""
        return x if x.ndim < 2 or x.flags.c_contiguous else self.xp.ascontiguousarray(x)

    def flip_axis(self: Any, x: Array, axis: int) -> Array:
        """``x`` reversed along ``axis`` (a view)."""
        key = [slice(None)] * x.ndim
        key[axis] = slice(None, None, -1)
        return x[tuple(key)]

    def cumsum_along(self: Any, x: Array, axis: int, dtype: Any = None,
                     reverse: bool = False) -> Array:
        """The cumulative sum of ``x`` along ``axis`` in ``dtype`` (``x``'s when None), from the
        end when ``reverse``; a C-contiguous result (PyTorch's layout)."""
        return self._scan_op("cumsum", x, axis, dtype, reverse)

    def cumprod_along(self: Any, x: Array, axis: int, dtype: Any = None,
                      reverse: bool = False) -> Array:
        """The cumulative product of ``x`` along ``axis`` (as ``cumsum_along``)."""
        return self._scan_op("cumprod", x, axis, dtype, reverse)

    def _scan_op(self: Any, op: str, x: Array, axis: int, dtype: Any, reverse: bool) -> Array:
        xp = self.xp
        out_dtype = xp.dtype(dtype) if dtype is not None else x.dtype
        if x.ndim == 0:
            return x.astype(out_dtype, copy=True)
        src = x.astype(out_dtype, copy=False)
        if self.name == "numpy" and out_dtype.kind == "f" and src.size >= 4096:
            out = self._scan_numpy(op, src, axis, reverse)
            if out is not None:
                return out
        acc = _acc_dtype(self.name, out_dtype)
        if reverse:
            src = self.flip_axis(src, axis)
        out = getattr(xp, op)(src, axis=axis, dtype=acc)
        if reverse:
            out = self.flip_axis(out, axis)
        out = out.astype(out_dtype, copy=False)
        return self.c_contiguous(out)

    # ---- NumPy's fast paths for large float scans ------------------------------------------
    # NOTE: NumPy's cumsum is a plain sequential loop (~3 ns an element, 10-20 along a non-last
    # axis); PyTorch's CPU kernel runs at ~1. Two exact-enough paths close the gap.

    def _scan_numpy(self: Any, op: str, x: Array, axis: int, reverse: bool) -> Array | None:
        """``op`` (cumsum/cumprod) of the float array ``x`` along ``axis`` on NumPy, or None
        where neither fast path applies: a scan along the last axis is a cumsum of 16-element
        blocks by one matrix product, plus each block's offset (``_cumsum_blocks``); along
        another axis, a loop over the axis adds whole slices (vectorised across them)."""
        np = self.xp
        if reverse:
            x = self.flip_axis(x, axis)
        x = np.ascontiguousarray(x)
        shape = x.shape
        n = shape[axis]
        outer = inner = 1
        for i, s in enumerate(shape):
            if i < axis:
                outer *= s
            elif i > axis:
                inner *= s
        v = x.reshape(outer, n, inner)
        if inner == 1 and op == "cumsum" and n >= 64:
            out = self._cumsum_blocks(v.reshape(outer, n))
        elif outer * inner >= 256 and 4 * outer * inner >= n and n > 1:
            out = self._scan_loop(op, v)
        else:
            return None
        if out is None:
            return None
        out = out.reshape(shape)
        return np.ascontiguousarray(self.flip_axis(out, axis)) if reverse else out

    def _cumsum_blocks(self: Any, rows: Array) -> Array | None:
        """The cumsum of each row of ``rows``: within 16-element blocks by one matrix product
        with a triangle of ones, then each block's offset (the cumsum of the block totals, in
        float64) added. None where a block total is not finite: an inf or NaN times the
        triangle's zeros would spread NaN across its block."""
        np = self.xp
        b = 16
        r, n = rows.shape
        work = rows if rows.dtype.itemsize >= 4 else rows.astype("float32")
        nb = -(-n // b)
        if n % b:
            padded = np.zeros((r, nb * b), work.dtype)
            padded[:, :n] = work
            work = padded
        tri = np.triu(np.ones((b, b), work.dtype))
        within = (work.reshape(r * nb, b) @ tri).reshape(r, nb, b)
        totals = within[:, :, -1].astype("float64")
        if not np.isfinite(totals).all():
            return None
        offsets = np.cumsum(totals, axis=1)
        offsets -= totals
        within += offsets.astype(work.dtype)[:, :, None]
        out = within.reshape(r, nb * b)
        if n % b:
            out = np.ascontiguousarray(out[:, :n])
        return out.astype(rows.dtype, copy=False)

    def _scan_loop(self: Any, op: str, v: Array) -> Array:
        """``op`` along axis 1 of the 3-D ``v`` as PyTorch's CPU kernel computes it (in order,
        accumulating in its accumulation type), one whole ``v[:, i, :]`` slice at a time."""
        np = self.xp
        ufunc = np.add if op == "cumsum" else np.multiply
        acc = v[:, 0, :].astype(_acc_dtype(self.name, v.dtype) or v.dtype)
        out = np.empty(v.shape, v.dtype)
        out[:, 0, :] = acc
        for i in range(1, v.shape[1]):
            ufunc(acc, v[:, i, :], out=acc)
            out[:, i, :] = acc
        return out

    def scan_ufunc(self: Any, op: str, x: Array, axis: int) -> Array:
        """``xp.<op>.accumulate(x, axis)`` for ``op`` in ``maximum``, ``minimum``,
        ``logaddexp``: NumPy's ufunc, or the log-step scan on CuPy."""
        xp = self.xp
        fn = getattr(xp, op)
        if self.name == "numpy" or x.shape[axis] <= 1:
            if x.shape[axis] <= 1:
                return xp.array(x, copy=True)
            return fn.accumulate(x, axis=axis)
        return self._log_step(fn, x, axis)

    def _log_step(self: Any, fn: Callable[[Array, Array], Array], x: Array, axis: int) -> Array:
        """The inclusive scan of ``x`` along ``axis`` with the associative ``fn``, in
        ``ceil(log2(n))`` vectorised steps (no ``accumulate`` needed)."""
        y = self.xp.moveaxis(x, axis, -1).copy()
        n = y.shape[-1]
        step = 1
        while step < n:
            # NOTE: the right side is computed in full before the write (Hillis-Steele).
            y[..., step:] = fn(y[..., step:], y[..., :-step])
            step *= 2
        return self.xp.moveaxis(y, -1, axis)

    def cummaxmin(self: Any, x: Array, axis: int, is_max: bool) -> tuple[Array, Array]:
        """The running max (or min) of ``x`` along ``axis`` and the index where it was taken:
        the last occurrence of the running value, NaN propagating (the last NaN), as
        PyTorch's; both C-contiguous."""
        xp = self.xp
        if x.ndim == 0:
            return x.copy(), xp.zeros((), "int64")
        if x.dtype.kind == "b":
            values = self.scan_ufunc("maximum" if is_max else "minimum",
                                     x.astype("uint8"), axis).astype("bool")
        else:
            values = self.scan_ufunc("maximum" if is_max else "minimum", x, axis)
        # NOTE: the running value changes only where an element equals it; the index at i is
        # the last such position <= i: a running max over those positions.
        hit = x == values
        if x.dtype.kind == "f":
            hit |= xp.isnan(x)
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        pos = xp.arange(x.shape[axis], dtype="int64").reshape(shape)
        idx = self.scan_ufunc("maximum", xp.where(hit, pos, 0), axis)
        return self.c_contiguous(values), self.c_contiguous(idx)

    def logcumsumexp(self: Any, x: Array, axis: int, reverse: bool = False) -> Array:
        """``log(cumsum(exp(x)))`` along ``axis``, stable (a scan of ``logaddexp``), computed in
        PyTorch's accumulation type; from the end when ``reverse``."""
        if x.ndim == 0:
            return x.copy()
        acc = _acc_dtype(self.name, x.dtype)
        src = x.astype(acc, copy=False) if acc is not None else x
        if reverse:
            src = self.flip_axis(src, axis)
        out = self.scan_ufunc("logaddexp", src, axis)
        if reverse:
            out = self.flip_axis(out, axis)
        return self.c_contiguous(out.astype(x.dtype, copy=False))

    def cumprod_grad_zeros(self: Any, x: Array, out: Array, grad: Array, axis: int) -> Array:
        """The gradient of ``cumprod`` along ``axis`` for an ``x`` with zeros, in O(n) (no
        division by a zero): before a slice's first zero, the usual
        ``reversed_cumsum(grad * out) / x`` over that stretch; at the first zero, the sum of
        ``grad_j * out[z - 1] * prod(x[z + 1 .. j])`` over ``j`` up to the second zero; 0 after.
        """
        xp = self.xp
        zero = x == 0
        seen = xp.cumsum(zero, axis=axis)
        before = seen == 0
        w = xp.where(before, grad * out, 0)
        rev = self.flip_axis(xp.cumsum(self.flip_axis(w, axis), axis=axis), axis)
        safe_x = xp.where(before, x, 1)
        result = xp.where(before, rev / safe_x, 0).astype(x.dtype, copy=False)
        # the first zero of each slice (if any), and the stretch after it up to the second zero
        first = zero & (seen == 1)
        after_first = (seen == 1) & ~first
        prods = xp.cumprod(xp.where(after_first, x, 1), axis=axis)
        total = xp.sum(prods * xp.where(seen == 1, grad, 0), axis=axis, keepdims=True)
        n = x.shape[axis]
        shape = [1] * x.ndim
        shape[axis] = n
        pos = xp.arange(n, dtype="int64").reshape(shape)
        z = xp.max(xp.where(first, pos, 0), axis=axis, keepdims=True)  # 0 without a zero
        prev = self.take_along_axis(out, xp.maximum(z - 1, 0), axis)
        prev = xp.where(z == 0, 1, prev)
        result = xp.where(first, total * prev, result)
        return self.c_contiguous(result.astype(x.dtype, copy=False))
