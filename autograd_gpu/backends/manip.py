"""Backend entries of the manip family (``functions/manip.py``, ``ops/manip.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends.

Views made here (``strided``, ``diagonal``, ``unfold``) share the input's memory and are
writable where the input is: writes through them land in the input, as PyTorch's views.
"""

from __future__ import annotations

from typing import Any

Array = Any


class ManipBackend:
    """The manip family's primitives; ``self`` is the backend object."""

    xp: Any
    name: str

    # ---- triangles, rolls, flips ----------------------------------------------------------
    def tril(self, x: Array, k: int) -> Array:
        """The lower triangle (on and below diagonal ``k``) of the last two dims, zeros elsewhere,
        C-contiguous (PyTorch's layout whatever the input's)."""
        return self._triangle(x, k, True)

    def triu(self, x: Array, k: int) -> Array:
        return self._triangle(x, k, False)

    def _triangle(self, x: Array, k: int, lower: bool) -> Array:
        xp = self.xp
        rows = xp.arange(x.shape[-2], dtype="int64")[:, None]
        cols = xp.arange(x.shape[-1], dtype="int64")[None, :]
        keep = cols - rows <= k if lower else cols - rows >= k
        return xp.ascontiguousarray(xp.where(keep, x, xp.zeros((), x.dtype)))

    def roll(self, x: Array, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Array:
        """``x`` rolled by ``shifts[i]`` along ``axes[i]``, C-contiguous (as PyTorch's)."""
        return self.xp.ascontiguousarray(self.xp.roll(x, shifts, axes))

    def flip(self, x: Array, axes: tuple[int, ...]) -> Array:
        """A copy of ``x`` reversed along ``axes``, laid out like ``x`` (PyTorch's flip keeps
        the input's dense layout)."""
        key = tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(x.ndim))
        out = self.empty_in_order(x.shape, x.dtype, self.like_order(x))  # type: ignore[attr-defined]
        out[...] = x[key]
        return out

    def tri_indices(self, row: int, col: int, offset: int, lower: bool, dtype: str) -> Array:
        """The ``(2, n)`` row/column indices of the lower (upper) triangle of a ``row x col``
        matrix from diagonal ``offset``, in row-major order."""
        xp = self.xp
        r = xp.arange(row, dtype="int64")[:, None]
        c = xp.arange(col, dtype="int64")[None, :]
        mask = (c - r <= offset) if lower else (c - r >= offset)
        rows, cols = xp.nonzero(mask)
        return xp.stack([rows, cols]).astype(dtype)

    def repeat_indices(self, counts: list[int], dtype: str) -> Array:
        """``i`` repeated ``counts[i]`` times, for every ``i`` (``torch.repeat_interleave``)."""
        xp = self.xp
        return xp.repeat(xp.arange(len(counts), dtype=dtype), counts)

    # ---- diagonals -------------------------------------------------------------------------
    def diagonal(self, x: Array, offset: int, d1: int, d2: int) -> Array:
        """A writable view of the diagonal ``offset`` of dims ``d1``, ``d2``, moved to the end."""
        n = _diag_len(x.shape[d1], x.shape[d2], offset)
        shape = tuple(s for i, s in enumerate(x.shape) if i not in (d1, d2)) + (n,)
        st = x.strides
        strides = tuple(s for i, s in enumerate(st) if i not in (d1, d2)) + (st[d1] + st[d2],)
        start = x
        if n and x.size:
            key = [slice(None)] * x.ndim
            key[d1 if offset < 0 else d2] = slice(abs(offset), None)
            start = x[tuple(key)]
        return self.xp.lib.stride_tricks.as_strided(start, shape, strides)

    def diag_embed(self, x: Array, offset: int, d1: int, d2: int) -> Array:
        """Zeros of one more dim with the last dim of ``x`` on the diagonal ``offset`` of dims
        ``d1``, ``d2`` (C-contiguous)."""
        n = x.shape[-1] + abs(offset)
        rest = list(x.shape[:-1])
        shape = [0] * (x.ndim + 1)
        for i in range(x.ndim + 1):
            shape[i] = n if i in (d1, d2) else rest.pop(0)
        out = self.xp.zeros(tuple(shape), x.dtype)
        self.diagonal(out, offset, d1, d2)[...] = x
        return out

    # ---- strided views ---------------------------------------------------------------------
    def unfold(self, x: Array, dim: int, size: int, step: int) -> Array:
        """A view of the windows of ``size`` every ``step`` along ``dim`` (a new last dim)."""
        if x.ndim == 0:
            return self.xp.lib.stride_tricks.as_strided(x, (size,), (x.itemsize,))
        n = (x.shape[dim] - size) // step + 1
        shape = x.shape[:dim] + (n,) + x.shape[dim + 1:] + (size,)
        st = x.strides
        strides = st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],)
        return self.xp.lib.stride_tricks.as_strided(x, shape, strides)

    def unfold_backward(self, g: Array, shape: tuple[int, ...], dim: int, size: int,
                        step: int) -> Array:
        """Zeros of ``shape`` with the windows' values ``g`` (``unfold``'s layout) added in."""
        xp = self.xp
        out = xp.zeros(shape, g.dtype)
        if not g.size:
            return out
        if not shape:
            return xp.reshape(xp.sum(g), ())
        n = g.shape[dim]
        idx = xp.arange(n, dtype="int64")[:, None] * step + xp.arange(size, dtype="int64")
        vals = xp.moveaxis(g, -1, dim + 1)
        self.index_add(out, (slice(None),) * dim + (idx,), vals)  # type: ignore[attr-defined]
        return out

    def data_ptr(self, a: Array) -> int:
        if self.name == "numpy":
            return int(a.__array_interface__["data"][0])
        return int(a.data.ptr)

    def memory_root(self, a: Array) -> Array:
        """The array owning the memory ``a`` views (the last array along its ``.base`` chain)."""
        root = a
        cur = a
        while getattr(cur, "base", None) is not None:
            cur = cur.base
            if isinstance(cur, self.ndarray):  # type: ignore[attr-defined]
                root = cur
        return root

    def element_offset(self, a: Array, origin: Array) -> int:
        """Where ``a``'s first element sits, in elements of ``a``, from ``origin``'s first
        element (both viewing the same memory)."""
        if not a.size or not origin.size:
            return 0
        return (self.data_ptr(a) - self.data_ptr(origin)) // a.itemsize

    def strided(self, x: Array, shape: tuple[int, ...], strides: tuple[int, ...],
                offset: int) -> Array | None:
        """The view of the memory ``x`` lives in with ``shape``, element ``strides``, starting
        ``offset`` elements from ``x``'s first one (may be negative): ``as_strided``. None when
        that memory does not hold the view."""
        xp = self.xp
        size = x.itemsize
        extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
        if not extent:
            return xp.lib.stride_tricks.as_strided(x, shape, tuple(s * size for s in strides))
        root = self.memory_root(x)
        if root.dtype != x.dtype or not (root.flags.c_contiguous or root.flags.f_contiguous):
            return None
        start = self.element_offset(x, root) + offset
        if start < 0 or start + extent > root.size:
            return None
        flat = xp.lib.stride_tricks.as_strided(root, (root.size,), (size,))
        return xp.lib.stride_tricks.as_strided(flat[start:], shape, tuple(s * size for s in strides))

    def strided_indices(self, shape: tuple[int, ...], strides: tuple[int, ...],
                        offset: int) -> Array:
        """The int64 array of ``shape`` holding ``offset + sum(i_k * strides[k])``: where each
        element of an ``as_strided`` view sits in its storage."""
        xp = self.xp
        out = xp.full(shape, offset, dtype="int64")
        for d, (n, s) in enumerate(zip(shape, strides)):
            out = out + xp.reshape(xp.arange(n, dtype="int64") * s, (n,) + (1,) * (len(shape) - d - 1))
        return out

    def strided_move(self, x: Array, src: tuple[Any, ...], dst: tuple[Any, ...], storage: int,
                     pre: Array | None, post: Array | None) -> Array:
        """``x`` (of geometry ``src``: shape, strides, offset) added into a zero storage of
        ``storage`` elements, read back with geometry ``dst``; ``pre``/``post``: divisors of
        the input and the result (or None)."""
        xp = self.xp
        buf = xp.zeros((storage,), x.dtype)
        if pre is not None:
            x = x / pre
        self.index_add(buf, self.strided_indices(*src).reshape(-1), x.reshape(-1))  # type: ignore[attr-defined]
        out = buf[self.strided_indices(*dst)]
        return out / post if post is not None else out

    def strided_counts(self, geometry: tuple[Any, ...], storage: int, dtype: Any) -> Array:
        """How many elements of the geometry (shape, strides, offset) share each one's memory
        location (an array of that shape)."""
        idx = self.strided_indices(*geometry)
        counts = self.xp.zeros((storage,), dtype)
        self.index_add(counts, idx.reshape(-1), self.xp.ones((idx.size,), dtype))  # type: ignore[attr-defined]
        return counts[idx]

    def block_diag(self, xs: list[Array], dtype: Any) -> Array:
        """The 2-D blocks ``xs`` on the diagonal of a zero matrix of ``dtype``."""
        rows = sum(x.shape[0] for x in xs)
        cols = sum(x.shape[1] for x in xs)
        out = self.xp.zeros((rows, cols), dtype)
        r = c = 0
        for x in xs:
            out[r:r + x.shape[0], c:c + x.shape[1]] = x
            r += x.shape[0]
            c += x.shape[1]
        return out


def _diag_len(n1: int, n2: int, offset: int) -> int:
    """The length of diagonal ``offset`` of an ``n1 x n2`` matrix (0 when it has none)."""
    return max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
