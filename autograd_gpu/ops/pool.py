"""Pooling, resampling and padding ops of any spatial rank, from two kinds of node.

**Separable taps** (``Taps``, and its adjoint ``TapsAdjoint``): along each spatial axis ``d``
every output position ``o`` is a weighted sum of ``T`` input positions,
``y[.., o, ..] = sum_t w_d[o, t] * x[.., idx_d[o, t], ..]``, applied axis after axis (the last
axis first, as PyTorch's kernels nest their loops), then divided by an optional ``divisor``
over the output positions. Padding (reflect, replicate, circular: one tap of weight 1), nearest,
linear, cubic and antialiased resampling, average and adaptive average pooling are all such tables
(built on the host by the nn layer). ``TapsAdjoint`` adds each tap back (``index_add``); each node
is the other's backward, so gradients of every order come for free.

**Window maxima** (``WindowMax``): every output takes the largest of its window, the window
being, per axis, ``idx_d[p, o, k]`` (valid where ``valid_d``) for plane ``p`` (one table for all
planes, or one per plane for fractional pooling). It returns the values and their flat indices
into the input plane; the gradient is ``PlaneScatter`` of the incoming gradient at those indices,
whose adjoint is ``PlaneGather`` (and vice versa), again gradients of every order.

A table is a NumPy array (small, host-built); a node moves it to its device once.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .conv import may_hold_nan

# (axis from the end, index (O, T) int64, weight (O, T) float or None, valid (O, T) bool or None)
Tap = tuple[int, Any, Any, Any]


def _dev(b: Any, a: Any, dtype: Any = None) -> Any:
    """A host table as an array of backend ``b`` (``None`` stays ``None``)."""
    if a is None:
        return None
    return b.asarray(a) if dtype is None else b.asarray(a).astype(dtype, copy=False)


def _dtype(x: Any) -> Any:
    return getattr(x, "_data", x).dtype


class _TapsBase(Node):
    """Remembers the tap tables, the input's spatial sizes and the divisor (host arrays)."""

    raw_ok = True

    def __init__(self, taps: tuple[Tap, ...], in_sizes: tuple[int, ...], divisor: Any = None,
                 name: str = "TapsBackward0") -> None:
        self.taps, self.in_sizes, self.divisor, self.name_ = taps, in_sizes, divisor, name
        self.node_name = name if type(self) is Taps else name.replace("Backward0",
                                                                      "BackwardBackward0")

    @property
    def params(self) -> dict[str, Any]:
        return {"taps": self.taps, "in_sizes": self.in_sizes, "divisor": self.divisor,
                "name": self.name_}

    def _divide(self, y: Any) -> Any:
        if self.divisor is None:
            return y
        return y / _dev(self.backend, self.divisor, y.dtype)

    def _matrix(self, k: int, n_in: int, dtype: Any) -> Any:
        """Tap table ``k`` as a dense ``(O, n_in)`` matrix on the node's device (cached): its
        weights summed into their input positions, invalid taps left out."""
        import numpy as np

        key = (k, str(dtype))
        cache = self.__dict__.setdefault("_matrices", {})
        if key not in cache:
            _, idx, w, valid = self.taps[k]
            o, t = idx.shape
            weight = np.ones((o, t)) if w is None else np.asarray(w, dtype=np.float64)
            if valid is not None:
                weight = np.where(valid, weight, 0.0)
            dense = np.zeros((o, n_in))
            np.add.at(dense, (np.repeat(np.arange(o), t), idx.reshape(-1)), weight.reshape(-1))
            cache[key] = self.backend.asarray(dense.astype(dtype))
        return cache[key]

    def _dense(self, x: Any, sizes: list[int]) -> bool:
        """Whether to apply the tables as matrix products: BLAS instead of a gather and a
        scatter-add, when the matrices are small and ``x`` is finite (a product would turn
        ``0 * inf`` into NaN where the taps never read the infinity)."""
        if any(idx.shape[0] * n > _DENSE_MAX for (_, idx, _, _), n in zip(self.taps, sizes)):
            return False
        if all(w is None and idx.shape[1] == 1 for _, idx, w, _ in self.taps):
            return False  # NOTE: pure gathers (padding, nearest): exact and cheap as they are
        return x.dtype.kind == "f" and bool(self.backend.xp.isfinite(x).all())


_DENSE_MAX = 1 << 20  # NOTE: elements of one tap matrix (8 MiB in float64)


def _along(b: Any, x: Any, ax: int, m: Any) -> Any:
    """``m`` (O, N) applied to axis ``ax`` of ``x`` (N long there): one (batched) matmul."""
    pre = 1
    for s in x.shape[:ax]:
        pre *= s
    post = 1
    for s in x.shape[ax + 1:]:
        post *= s
    n = x.shape[ax]
    if post == 1:
        y = b.reshape(x, (pre, n)) @ m.T
    else:
        y = m @ b.reshape(x, (pre, n, post))
    return b.reshape(y, x.shape[:ax] + (m.shape[0],) + x.shape[ax + 1:])


class Taps(_TapsBase):
    """``y = (per axis: sum_t w[o, t] x[idx[o, t]]) / divisor`` (see the module docstring)."""

    def forward(self, x: Any) -> Any:
        b = self.backend
        sizes = [x.shape[axis] for axis, _, _, _ in self.taps]
        if self._dense(x, sizes):
            for k in reversed(range(len(self.taps))):
                ax = x.ndim + self.taps[k][0]
                x = _along(b, x, ax, self._matrix(k, x.shape[ax], x.dtype))
            return b.ascontiguousarray(self._divide(x))
        for axis, idx, w, valid in reversed(self.taps):
            ax = x.ndim + axis
            o, t = idx.shape
            tail = (1,) * (x.ndim - ax - 1)
            xt = x[(slice(None),) * ax + (_dev(b, idx.reshape(-1)),)]
            xt = xt.reshape(x.shape[:ax] + (o, t) + x.shape[ax + 1:])
            if w is not None:
                xt = xt * _dev(b, w, x.dtype).reshape((o, t) + tail)
            if valid is not None:
                xt = b.where(_dev(b, valid).reshape((o, t) + tail), xt, 0)
            x = xt.reshape(x.shape[:ax] + (o,) + x.shape[ax + 1:]) if t == 1 and w is None \
                else b.sum(xt, axis=ax + 1)
        return b.ascontiguousarray(self._divide(x))

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(TapsAdjoint, grad, **self.params),)


class TapsAdjoint(_TapsBase):
    """The adjoint of ``Taps``: each output position's share ``w[o, t] g[o] / divisor`` added
    into input position ``idx[o, t]`` (repeated positions add up)."""

    def forward(self, g: Any) -> Any:
        b = self.backend
        g = self._divide(g)
        n_sp = len(self.in_sizes)
        sizes = [self.in_sizes[n_sp + axis] for axis, _, _, _ in self.taps]
        if self._dense(g, sizes):
            for k, n_in in enumerate(sizes):
                ax = g.ndim + self.taps[k][0]
                g = _along(b, g, ax, self._matrix(k, n_in, g.dtype).T)
            return b.ascontiguousarray(g)
        for axis, idx, w, valid in self.taps:
            ax = g.ndim + axis
            o, t = idx.shape
            tail = (1,) * (g.ndim - ax - 1)
            gt = b.broadcast_to(g.reshape(g.shape[:ax] + (o, 1) + g.shape[ax + 1:]),
                                g.shape[:ax] + (o, t) + g.shape[ax + 1:])
            if w is not None:
                gt = gt * _dev(b, w, g.dtype).reshape((o, t) + tail)
            if valid is not None:
                gt = b.where(_dev(b, valid).reshape((o, t) + tail), gt, 0)
            n_in = self.in_sizes[n_sp + axis]
            out = b.zeros(g.shape[:ax] + (n_in,) + g.shape[ax + 1:], g.dtype)
            key = (slice(None),) * ax + (_dev(b, idx.reshape(-1)),)
            b.index_add(out, key, b.ascontiguousarray(gt).reshape(
                g.shape[:ax] + (o * t,) + g.shape[ax + 1:]))
            g = out
        return g

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(Taps, grad, **self.params),)


# ---- window maxima ----------------------------------------------------------------------------

class _Plane(Node):
    """Works on ``x`` as ``(planes, prod(spatial))`` with flat indices ``(planes, M)``."""

    raw_ok = True

    def __init__(self, indices: Any, n_spatial: int, in_sizes: tuple[int, ...],
                 name: str, accumulate: bool = True) -> None:
        self.indices, self.n_spatial, self.in_sizes = indices, n_spatial, in_sizes
        self.name_, self.accumulate = name, accumulate
        self.node_name = name

    @property
    def params(self) -> dict[str, Any]:
        return {"indices": self.indices, "n_spatial": self.n_spatial, "in_sizes": self.in_sizes,
                "name": self.name_, "accumulate": self.accumulate}


class PlaneGather(_Plane):
    """``y[p, m] = x[p, indices[p, m]]`` over the flattened trailing ``n_spatial`` axes;
    ``y`` has the shape of ``indices``."""

    def forward(self, x: Any) -> Any:
        b = self.backend
        lead = x.shape[:x.ndim - self.n_spatial]
        flat = x.reshape((_prod(lead), _prod(x.shape[len(lead):])))
        idx = self.indices.reshape((flat.shape[0], _prod(self.indices.shape[len(lead):])))
        return b.take_along_axis(flat, idx, 1).reshape(self.indices.shape)

    def backward(self, grad: Any) -> tuple[Any]:
        # NOTE: the adjoint of a gather adds up repeated indices (even under an unpooling).
        return (self.run(PlaneScatter, grad, **{**self.params, "accumulate": True}),)


class PlaneScatter(_Plane):
    """The adjoint of ``PlaneGather``: ``g`` (the shape of ``indices``) added (or, for
    unpooling, written) into a zero ``(lead, *in_sizes)`` array at ``indices``."""

    def forward(self, g: Any) -> Any:
        b = self.backend
        lead = self.indices.shape[:self.indices.ndim - self.n_spatial]
        planes = _prod(lead)
        out = b.zeros((planes, _prod(self.in_sizes)), g.dtype)
        per = _prod(self.indices.shape[len(lead):])  # NOTE: explicit: planes may be 0
        idx = self.indices.reshape((planes, per))
        src = b.ascontiguousarray(g).reshape((planes, per))
        if self.accumulate:
            b.scatter_add(out, idx, src, 1)
        else:
            b.put_along_axis(out, idx, src, 1)
        return out.reshape(tuple(lead) + tuple(self.in_sizes))

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.run(PlaneGather, grad, **self.params),)


def _prod(shape: Any) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


class WindowMax(Node):
    """The maximum of each window and its flat index into the input plane (the first maximum in
    row-major window order; a NaN wins; windows never pick a position outside the input).

    ``tables[d] = (idx (P, O_d, K_d), valid (P, O_d, K_d))`` with ``P`` 1 or the number of planes
    (``prod(lead)``). Returns ``(values, indices)`` of shape ``lead + (O_1, ..., O_n)``."""

    raw_ok = True

    def __init__(self, tables: tuple[tuple[Any, Any], ...], name: str) -> None:
        self.tables, self.node_name = tables, name

    def forward(self, x: Any) -> tuple[Any, Any]:
        b = self.backend
        n = len(self.tables)
        lead, sizes = x.shape[:x.ndim - n], x.shape[x.ndim - n:]
        planes = _prod(lead)
        flat_idx: Any = 0
        valid: Any = True
        outs = tuple(t[0].shape[1] for t in self.tables)
        ks = tuple(t[0].shape[2] for t in self.tables)
        stride = 1
        for d in reversed(range(n)):
            idx, ok = self.tables[d]
            shape = [idx.shape[0]] + [1] * (2 * n)
            shape[1 + d], shape[1 + n + d] = outs[d], ks[d]
            flat_idx = flat_idx + _dev(b, idx).reshape(shape) * stride
            valid = b.logical_and(valid, _dev(b, ok).reshape(shape))
            stride *= sizes[d]
        p_tab = flat_idx.shape[0]
        m, k = _prod(outs), _prod(ks)
        full = (p_tab,) + outs + ks
        flat_idx = b.broadcast_to(flat_idx, full).reshape(p_tab, m * k)
        valid = b.broadcast_to(valid, full).reshape(p_tab, m, k)
        xf = x.reshape(planes, _prod(sizes))
        if p_tab == 1:
            win = xf[:, flat_idx[0]].reshape(planes, m, k)
        else:
            win = b.take_along_axis(xf, flat_idx, 1).reshape(planes, m, k)
        low = float("-inf") if x.dtype.kind == "f" else (b.min(x) if x.size else 0)
        masked = b.where(valid, win, low)
        top = b.max(masked, axis=2, keepdims=True)
        pick = b.logical_and(valid, b.logical_or(b.equal(masked, top), b.isnan(masked)))
        k_sel = b.argmax(pick, axis=2)
        if x.dtype.kind == "f" and may_hold_nan(b, top):
            # NOTE: PyTorch's scan replaces its pick at every NaN: the last NaN wins.
            last = k - 1 - b.argmax(pick[..., ::-1], axis=2)
            k_sel = b.where(b.isnan(top[..., 0]), last, k_sel)
        sel = b.take_along_axis(flat_idx.reshape(p_tab, m, k), k_sel[..., None], 2)
        sel = b.broadcast_to(sel, (planes, m, 1)).reshape(tuple(lead) + outs)
        out = b.take_along_axis(xf, sel.reshape(planes, m), 1).reshape(tuple(lead) + outs)
        self.indices, self.in_sizes = sel, tuple(sizes)
        return out, b.ascontiguousarray(sel)

    def backward(self, grad: Any, grad_indices: Any = None) -> tuple[Any]:
        return (self.run(PlaneScatter, grad, indices=self.indices,
                         n_spatial=len(self.tables), in_sizes=self.in_sizes,
                         name="MaxPoolBackwardBackward0"),)
