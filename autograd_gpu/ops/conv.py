"""Convolution and pooling ops, built on sliding windows (im2col) and their adjoint (col2im).

Every op sees a batched ``(N, C, *spatial)`` input with 1, 2 or 3 spatial dimensions. A window
geometry is ``kernel``, ``stride``, ``dilation``, ``pad`` (the leading side of each dimension),
``in_hw`` (the image's spatial size) and ``out_hw`` (the number of windows along each
dimension): the padding at the trailing side is whatever the output size needs (so asymmetric
'same' padding and ``ceil_mode`` need no special case). ``Im2col`` turns ``x`` into its windows
``(N, C, *kernel, *out_hw)``; ``Col2im`` adds windows back into an image. Each is the other's
adjoint, so each is the other's backward, and every backward here is made of them, ``*`` and
``@``: gradients of any order. Neither loops over kernel offsets: both are one strided view.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.node import Node
from . import conv_batchlast, conv_shifted, pool_tiled

Pair = tuple[int, ...]


def _padded_hw(kernel: Pair, stride: Pair, dilation: Pair, out_hw: Pair) -> Pair:
    """The padded input size that ``out_hw`` windows span."""
    return tuple((o - 1) * s + (k - 1) * d + 1
                 for k, s, d, o in zip(kernel, stride, dilation, out_hw))


def windows(b: Any, x: Any, kernel: Pair, stride: Pair, dilation: Pair, pad: Pair,
            out_hw: Pair, fill: Any = 0) -> Any:
    """A strided (read-only, uncopied where no padding is needed) view ``(N, C, *kernel,
    *out_hw)`` of the windows of ``x``, padded with ``fill``."""
    n, c, sizes = x.shape[0], x.shape[1], tuple(x.shape[2:])
    full = _padded_hw(kernel, stride, dilation, out_hw)
    if any(pad) or any(f > s for f, s in zip(full, sizes)):
        x = conv_shifted.pad_to(b, x, full, pad, fill)
    s = x.strides
    shape = (n, c) + tuple(kernel) + tuple(out_hw)
    strides = (s[0], s[1]) + tuple(st * d for st, d in zip(s[2:], dilation)) + tuple(
        st * sd for st, sd in zip(s[2:], stride))
    return b.as_strided(x, shape, strides)


def col2im(b: Any, cols: Any, kernel: Pair, stride: Pair, dilation: Pair, pad: Pair,
           in_hw: Pair, out_hw: Pair) -> Any:
    """Windows ``(N, C, *kernel, *out_hw)`` summed into an ``(N, C, *in_hw)`` image.

    Element ``t`` of window offset ``i`` lands at ``q = stride * t + dilation * i`` of the padded
    image. The windows are spread ``stride`` apart (zeros between) into ``z[..., i, u]`` with
    ``u = q + dilation * (k - 1 - i)``, so ``image[q] = sum_i z[i, q + dilation (k - 1 - i)]``:
    one strided view of ``z`` (a step of ``-dilation`` along ``u`` per kernel offset) summed
    over the kernel axes.
    """
    n, c, nd = cols.shape[0], cols.shape[1], len(kernel)
    if all(s == k * d for s, k, d in zip(stride, kernel, dilation)) and all(
            d == 1 for d in dilation):
        # NOTE: windows tile the image (pooling with stride == kernel): a transpose, no adds.
        axes = (0, 1) + tuple(a for i in range(nd) for a in (2 + nd + i, 2 + i))
        tiled = tuple(o * k for o, k in zip(out_hw, kernel))
        out = cols.transpose(axes).reshape((n, c) + tiled)
        if all(p == 0 for p in pad) and tuple(in_hw) == tiled:
            return out
        size = tuple(max(t, p + h) for t, p, h in zip(tiled, pad, in_hw))
        full = b.zeros((n, c) + size, cols.dtype)
        full[conv_shifted.spatial((0,) * nd, tiled)] = out
        return b.ascontiguousarray(full[conv_shifted.spatial(pad, in_hw)])
    size = tuple(max(f, p + h) for f, p, h in
                 zip(_padded_hw(kernel, stride, dilation, out_hw), pad, in_hw))
    lead = tuple(d * (k - 1) for d, k in zip(dilation, kernel))
    # NOTE: kernel axes first, so the sum adds whole contiguous images (fast in NumPy).
    z = b.zeros(tuple(kernel) + (n, c) + tuple(s + a for s, a in zip(size, lead)), cols.dtype)
    spread = tuple(slice(a, a + (o - 1) * s + 1, s) for a, o, s in zip(lead, out_hw, stride))
    z[(slice(None),) * (2 + nd) + spread] = cols.transpose(
        tuple(range(2, 2 + nd)) + (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)))
    st = z.strides
    view = z[(slice(None),) * (2 + nd) + tuple(slice(a, None) for a in lead)]
    strides = tuple(st[i] - dilation[i] * st[2 + nd + i] for i in range(nd)) + st[nd:]
    summed = b.as_strided(view, tuple(kernel) + (n, c) + size, strides)
    out = b.sum(summed, axis=tuple(range(nd)))
    if size == tuple(in_hw):
        return out
    return b.ascontiguousarray(out[conv_shifted.spatial(pad, in_hw)])


def _dtype(x: Any) -> Any:
    """The backend dtype of a Tensor (or, on the raw path, of an array)."""
    return getattr(x, "_data", x).dtype


class _Windowed(Node):
    """A node that remembers one window geometry (see the module docstring). With ``flat``,
    windows are laid out ``(N, C * prod(kernel), prod(out_hw))`` (``unfold``'s layout)."""

    def __init__(self, kernel: Pair, stride: Pair, dilation: Pair, pad: Pair, in_hw: Pair,
                 out_hw: Pair, flat: bool = False) -> None:
        self.kernel, self.stride, self.dilation = tuple(kernel), tuple(stride), tuple(dilation)
        self.pad, self.in_hw, self.out_hw = tuple(pad), tuple(in_hw), tuple(out_hw)
        self.flat = flat

    @property
    def geometry(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "stride": self.stride, "dilation": self.dilation,
                "pad": self.pad, "in_hw": self.in_hw, "out_hw": self.out_hw, "flat": self.flat}

    def col2im(self, cols: Any) -> Any:
        """Windows ``(N, C, *kernel, *out_hw)`` (Tensor, or array on the raw path) summed back
        into an ``(N, C, *in_hw)`` image."""
        return self.run(Col2im, cols, **self.geometry)

    def im2col(self, x: Any) -> Any:
        return self.run(Im2col, x, **self.geometry)


class Im2col(_Windowed):
    """``x (N, C, *in_hw)`` to its zero-padded windows ``(N, C, *kernel, *out_hw)``,
    contiguous (or ``(N, C * K, L)`` when ``flat``)."""

    node_name = "Im2ColBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        b = self.backend
        unbatched = x.ndim == len(self.kernel) + 1  # NOTE: only unfold's (flat) inputs
        if unbatched:
            x = x.reshape((1,) + x.shape)
        cols = b.ascontiguousarray(
            windows(b, x, self.kernel, self.stride, self.dilation, self.pad, self.out_hw))
        if self.flat:
            cols = cols.reshape(x.shape[0], x.shape[1] * math.prod(self.kernel),
                                math.prod(self.out_hw))
        return cols[0] if unbatched else cols

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.col2im(grad),)


class Col2im(_Windowed):
    """Windows ``(N, C, *kernel, *out_hw)`` (or ``(N, C * K, L)`` when ``flat``) added into an
    ``(N, C, *in_hw)`` image (overlaps add up, padding is cropped): the adjoint of
    ``Im2col``."""

    node_name = "Col2ImBackward0"
    raw_ok = True

    def forward(self, cols: Any) -> Any:
        unbatched = self.flat and cols.ndim == 2  # NOTE: fold's unbatched ``(C * K, L)``
        if self.flat:
            k, c = math.prod(self.kernel), cols.shape[-2]
            cols = cols.reshape((-1, c // k) + self.kernel + self.out_hw)
        out = col2im(self.backend, cols, self.kernel, self.stride, self.dilation, self.pad,
                     self.in_hw, self.out_hw)
        return out[0] if unbatched else out

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.im2col(grad),)


class Convolution(_Windowed):
    """``out[n, o] = bias[o] + sum_{c, i} w[o, c, i] x_pad[n, g c, stride t + dilation i]``
    (1, 2 or 3 spatial dimensions), one (grouped, batched) matmul of the weight with the input's
    windows. ``transposed``: its adjoint in ``x`` (``conv_transpose``): the weight
    ``(C_in, C_out / groups, *kernel)`` times ``x`` gives windows that ``col2im`` sums into the
    output; the geometry is then the output's (``in_hw``: output size, ``out_hw``: ``x``'s)."""

    node_name = "ConvolutionBackward0"
    raw_ok = True
    batch_last = False  # whether forward ran conv_batchlast (its backward then does too)

    def __init__(self, groups: int, transposed: bool = False, **geometry: Any) -> None:
        super().__init__(**geometry)
        self.groups, self.transposed = groups, transposed

    def _mats(self, x_shape: Any, w_shape: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The weight as ``(g, rows, cols)`` matrices and the windows (or, transposed, ``x``)
        as ``(N, g, cols, L)``."""
        g, k, length = self.groups, math.prod(self.kernel), math.prod(self.out_hw)
        if self.transposed:  # w (C_in, C_out/g, *k): rows C_in/g, cols C_out/g * K
            return (g, w_shape[0] // g, w_shape[1] * k), (x_shape[0], g, w_shape[0] // g, length)
        return (g, w_shape[0] // g, w_shape[1] * k), (x_shape[0], g, w_shape[1] * k, length)

    def _bias_shape(self) -> tuple[int, ...]:
        return (-1,) + (1,) * len(self.kernel)

    def forward(self, x: Any, w: Any, bias: Any) -> Any:
        b = self.backend
        w_mat, x_mat = self._mats(x.shape, w.shape)
        w3 = w.reshape(w_mat)
        if self.transposed:
            cols = b.matmul(w3.swapaxes(-1, -2), x.reshape(x_mat))
            c_out = w.shape[1] * self.groups
            cols = cols.reshape((x.shape[0], c_out) + self.kernel + self.out_hw)
            out = col2im(b, cols, self.kernel, self.stride, self.dilation, self.pad,
                         self.in_hw, self.out_hw)
        elif conv_batchlast.applies(b, False, x.shape, w.shape, self.out_hw):
            self.batch_last = True
            out = conv_batchlast.forward(b, x, w, bias, self.groups, self.kernel, self.stride,
                                         self.dilation, self.pad, self.out_hw)
            bias = None  # NOTE: added already
        elif self._shifted(b, w.shape):
            out = conv_shifted.forward(b, x, w, self.groups, self.kernel, self.dilation,
                                       self.pad, self.out_hw)
        else:
            cols = windows(b, x, self.kernel, self.stride, self.dilation, self.pad, self.out_hw)
            out = b.matmul(w3, cols.reshape(x_mat))
            out = out.reshape((x.shape[0], w.shape[0]) + self.out_hw)
        if bias is not None:
            out += bias.reshape(self._bias_shape())
        need = self.needs_input_grad
        if need:
            self.save_for_backward(x if need[1] else None, w if need[0] else None)
            self.x_shape, self.w_shape = tuple(x.shape), tuple(w.shape)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        x, w = self.saved_tensors
        need = self.needs_input_grad
        n, g = self.x_shape[0], self.groups
        if self.batch_last and self._raw:
            return conv_batchlast.grads(
                self.backend, x, w, grad, need, self.w_shape, g, self.kernel, self.stride,
                self.dilation, self.pad, self.in_hw, self.out_hw)
        w_mat, x_mat = self._mats(self.x_shape, self.w_shape)
        grad_x = grad_w = grad_b = None
        if self.transposed:
            g_cols = self.im2col(grad).reshape((n, g, w_mat[2], x_mat[3]))
            if need[0]:
                grad_x = (w.reshape(w_mat) @ g_cols).reshape(self.x_shape)
            if need[1]:
                x3 = x.reshape(x_mat)
                grad_w = (x3 @ g_cols.swapaxes(-1, -2)).sum(0).reshape(self.w_shape)
        else:
            g_out = grad.reshape((n, g, w_mat[1], x_mat[3]))
            if need[0] and self._by_correlation():
                grad_x = self._grad_by_correlation(grad, w)
            elif need[0]:
                cols_grad = w.reshape(w_mat).swapaxes(-1, -2) @ g_out
                grad_x = self.col2im(
                    cols_grad.reshape((n, self.x_shape[1]) + self.kernel + self.out_hw))
            if need[1] and self._raw and self._shifted(self.backend, self.w_shape):
                grad_w = conv_shifted.weight_grad(self.backend, x, grad, g, self.kernel,
                                                  self.dilation, self.pad, self.out_hw)
            elif need[1]:
                cols = self.im2col(x).reshape(x_mat)
                grad_w = (g_out @ cols.swapaxes(-1, -2)).sum(0).reshape(self.w_shape)
        if len(need) > 2 and need[2]:
            grad_b = grad.sum((0,) + tuple(range(2, 2 + len(self.kernel))))
        return grad_x, grad_w, grad_b


    def _shifted(self, b: Any, w_shape: Any) -> bool:
        """Whether this (not transposed) convolution runs as shifted products
        (``conv_shifted``): the NumPy backend, stride 1, enough channels per group."""
        return not self.transposed and conv_shifted.applies(b, self.stride, w_shape[1],
                                                            self.out_hw)

    def _by_correlation(self) -> bool:
        """Whether the input gradient can be the correlation of the (padded) output gradient
        with the flipped, transposed weight: stride 1 and padding within the dilated kernel.
        That is one more im2col and matmul, where ``col2im`` would add the windows back with a
        strided sum, which NumPy does several times slower."""
        return all(s == 1 for s in self.stride) and all(
            p <= d * (k - 1) for p, d, k in zip(self.pad, self.dilation, self.kernel))

    def _grad_by_correlation(self, grad: Any, w: Any) -> Any:
        """``grad_x = conv(grad, flip(w)^T)`` with leading padding ``d (k - 1) - p``: the
        same sums as ``col2im`` of the weight-times-gradient windows, in another order."""
        nd, g = len(self.kernel), self.groups
        c_out, c_in_g = self.w_shape[0], self.w_shape[1]
        axes = tuple(range(2, 2 + nd))
        flipped = w.flip(axes) if hasattr(w, "flip") else w[(slice(None),) * 2 + (
            slice(None, None, -1),) * nd]
        wt = flipped.reshape((g, c_out // g, c_in_g) + self.kernel).swapaxes(1, 2).reshape(
            (g * c_in_g, c_out // g) + self.kernel)
        pad = tuple(d * (k - 1) - p for p, d, k in zip(self.pad, self.dilation, self.kernel))
        params: dict[str, Any] = {
            "groups": g, "transposed": False, "kernel": self.kernel, "stride": self.stride,
            "dilation": self.dilation, "pad": pad, "in_hw": self.out_hw, "out_hw": self.in_hw}
        if not hasattr(grad, "_data"):  # NOTE: the raw path (bare arrays, no graph)
            node = Convolution(**params)
            node.backend, node.backend_device = self.backend, self.backend_device
            return node.forward(grad, wt, None)
        return Convolution.apply(grad, wt, None, **params)


class _Pool(_Windowed):
    """A pooling node: 3-D ``(C, H, W)`` inputs are handled as a batch of one, in place, so the
    output's node is this one (as in PyTorch)."""

    def __init__(self, unbatched: bool, **geometry: Any) -> None:
        super().__init__(**geometry)
        self.unbatched = unbatched

    def _batched(self, x: Any) -> Any:
        return x.reshape((1,) + tuple(x.shape)) if self.unbatched else x

    def _unbatched(self, x: Any) -> Any:
        return x.reshape(tuple(x.shape)[1:]) if self.unbatched else x


_SMALL_WINDOW = 4  # NOTE: windows this small: running comparisons beat argmax (2x at 2)


def _first_max(b: Any, parts: list[Any], valid: Any = None) -> tuple[Any, Any]:
    """The value and offset (int8) of each window's pick among ``parts`` (strided views, one per
    window offset, in row-major order): PyTorch's scan, the first maximum, or the last NaN.
    ``valid[j]`` (where given) says where offset ``j`` lies inside the input: padding is
    never picked, even when it ties (all of a window's elements ``-inf``)."""
    xp = b.xp
    best = parts[0]
    for part in parts[1:]:
        best = xp.maximum(best, part)  # NOTE: NaN wins, so a non-NaN best means no NaN part
    index = xp.full(best.shape, len(parts) - 1, dtype="int8")
    for j in range(len(parts) - 2, -1, -1):  # NOTE: descending: the first occurrence wins
        hit = xp.equal(parts[j], best)
        if valid is not None:
            hit &= valid[j]
        index = b.where(hit, j, index).astype("int8", copy=False)
    if best.dtype.kind == "f" and may_hold_nan(b, best):
        for j, part in enumerate(parts):  # NOTE: ascending: the last NaN wins
            index = b.where(xp.isnan(part), j, index).astype("int8", copy=False)
    # NOTE: the picked element itself (``maximum`` may return either of two equal zeros)
    value = parts[-1]
    for j in range(len(parts) - 2, -1, -1):
        value = b.where(index == j, parts[j], value)
    return b.ascontiguousarray(value), index


def may_hold_nan(b: Any, a: Any) -> bool:
    """Whether ``a`` may hold a NaN: NumPy looks (one cheap pass); other backends answer yes
    without looking (CuPy would wait for the GPU, meta arrays hold no data), and so does a
    compiled step's recording (its replay then meets a NaN as eager does, where a check of the
    answer would fail part-way), and the caller runs its NaN rule, which changes nothing where
    there is none."""
    from ..compiler import is_compiling

    if b.name == "numpy" and b.ndarray is b.xp.ndarray and not is_compiling():
        return bool(b.xp.isnan(a).any())
    return True


def _last_nan(b: Any, cols: Any, k: Any) -> Any:
    """``k`` (argmax along the last axis of ``cols``: the first NaN) moved to the last NaN of
    each window that holds one, as PyTorch's scan picks."""
    xp = b.xp
    nan = xp.isnan(cols)
    last = cols.shape[-1] - 1 - b.argmax(nan[..., ::-1], axis=-1)
    return b.where(nan.any(-1), last, k)


class MaxPool2d(_Pool):
    """The maximum of each (dilated, ``-inf``-padded) window, and its flat index ``h * W + w``
    into the input plane. The gradient goes to that one element."""

    node_name = "MaxPool2DWithIndicesBackward0"
    raw_ok = True

    tiled_shape: tuple[int, ...] | None = None  # the input's shape when pool_tiled ran

    def forward(self, x: Any) -> tuple[Any, Any]:
        b = self.backend
        x = self._batched(x)
        if pool_tiled.applies(b, x, self.kernel, self.stride, self.dilation, self.pad,
                              self.out_hw):
            out, indices, flat = pool_tiled.forward(b, x, self.kernel, self.out_hw)
            self.tiled_shape = tuple(x.shape)
            self.save_for_backward(flat)
            return self._unbatched(out), self._unbatched(indices)
        n, c = x.shape[:2]
        (kh, kw), (ho, wo) = self.kernel, self.out_hw
        # NOTE: any value <= every element pads correctly (every window holds one element).
        fill = float("-inf") if x.dtype.kind == "f" else (b.min(x) if x.size else 0)
        cols = windows(b, x, self.kernel, self.stride, self.dilation, self.pad, self.out_hw, fill)
        valid = self._valid()
        if kh * kw <= _SMALL_WINDOW:
            out, k = _first_max(b, [cols[:, :, i, j] for i in range(kh) for j in range(kw)],
                                valid)
        else:
            # NOTE: the window axis last (one copy), where argmax runs along contiguous memory
            cols = cols.transpose(0, 1, 4, 5, 2, 3).reshape(n, c, ho, wo, kh * kw)
            k = b.argmax(cols, axis=-1)
            if valid is not None:  # NOTE: the first real element equal to the maximum
                top = b.take_along_axis(cols, k[..., None], -1)
                k = b.argmax(b.logical_and(b.equal(cols, top), valid.transpose(1, 2, 0)), -1)
            if x.dtype.kind == "f" and may_hold_nan(b, cols):
                k = _last_nan(b, cols, k)
            out = b.take_along_axis(cols, k[..., None], -1).reshape(n, c, ho, wo)
        self.save_for_backward(k)
        return self._unbatched(out), self._unbatched(self._flat_indices(k))

    def _valid(self) -> Any:
        """``(kh * kw, Ho, Wo)`` bool: which window offsets lie inside the input; ``None`` when
        every window is inside (no padding, no partial window from ``ceil_mode``)."""
        (kh, kw), (ho, wo), (h, w) = self.kernel, self.out_hw, self.in_hw
        (sh, sw), (dh, dw), (pt, pl) = self.stride, self.dilation, self.pad
        if not (pt or pl or (ho - 1) * sh + (kh - 1) * dh >= h
                or (wo - 1) * sw + (kw - 1) * dw >= w):
            return None
        b = self.backend
        rows = b.arange(0, ho, 1, "int64") * sh - pt + (b.arange(0, kh, 1, "int64") * dh
                                                          ).reshape(kh, 1)
        cols = b.arange(0, wo, 1, "int64") * sw - pl + (b.arange(0, kw, 1, "int64") * dw
                                                          ).reshape(kw, 1)
        inside_r = b.logical_and(rows >= 0, rows < h).reshape(kh, 1, ho, 1)
        inside_c = b.logical_and(cols >= 0, cols < w).reshape(1, kw, 1, wo)
        return b.logical_and(inside_r, inside_c).reshape(kh * kw, ho, wo)

    def _flat_indices(self, k: Any) -> Any:
        """Window offsets ``k`` as flat ``h * W + w`` indices into the input plane: each
        window's corner plus the offset's displacement (a table of ``prod(kernel)``)."""
        b = self.backend
        (kh, kw), (ho, wo) = self.kernel, self.out_hw
        (sh, sw), (dh, dw), (pt, pl), w_in = self.stride, self.dilation, self.pad, self.in_hw[1]
        corner = ((b.arange(0, ho, 1, "int64") * sh - pt).reshape(ho, 1) * w_in
                  + b.arange(0, wo, 1, "int64") * sw - pl)
        step = b.asarray([(j // kw) * dh * w_in + (j % kw) * dw for j in range(kh * kw)],
                         dtype="int64")
        return step[k] + corner

    def backward(self, grad: Any, grad_indices: Any = None) -> tuple[Any]:
        (k,) = self.saved_tensors
        b = self.backend
        k = getattr(k, "_data", k)
        if self.tiled_shape is not None:  # NOTE: ``k`` holds pool_tiled's flat indices
            if self._raw:
                g = pool_tiled.backward(b, self._batched(grad), k, self.tiled_shape)
                return (self._unbatched(g),)
            k = pool_tiled.window_offsets(b, k, self.tiled_shape, self.kernel, self.out_hw)
        if self._raw and self._disjoint() and b.ndarray is b.xp.ndarray:  # NOTE: not meta
            # NOTE: each input element is in at most one window: the gradients land without
            # adding up, one scatter into zeros (no window-sized mask, no col2im).
            g = self._batched(grad)
            n, c, (h, w) = g.shape[0], g.shape[1], self.in_hw
            out = b.zeros((n * c, h * w), g.dtype)
            b.put_along_axis(out, self._flat_indices(k).reshape(n * c, -1),
                             g.reshape(n * c, -1), axis=1)
            return (self._unbatched(out.reshape((n, c, h, w))),)
        (kh, kw), (ho, wo), n, c = self.kernel, self.out_hw, k.shape[0], k.shape[1]
        positions = b.arange(0, kh * kw, 1, "int64").reshape(kh * kw, 1, 1)
        mask = b.equal(k[:, :, None], positions)
        if not self._raw:
            mask = self.wrap(mask)
        # NOTE: a select, not ``mask * grad``: elements that were not picked get +0 (as
        # PyTorch's zero-filled scatter), never ``0 * -g = -0``.
        cols = self.where(mask, grad.reshape((n, c, 1, ho, wo)), 0)
        return (self._unbatched(self.col2im(cols.reshape((n, c, kh, kw, ho, wo)))),)

    def _disjoint(self) -> bool:
        """No padding and windows that never overlap (so every flat index is a real element
        and appears once)."""
        return not any(self.pad) and all(
            s >= d * (k - 1) + 1 for s, d, k in zip(self.stride, self.dilation, self.kernel))


class AvgPool2d(_Pool):
    """The sum of each zero-padded window over its divisor: the window's size clipped to the
    padded input (``count_include_pad``), the count of its elements inside the input, or
    ``divisor_override``."""

    node_name = "AvgPool2DBackward0"
    raw_ok = True

    def __init__(self, count_include_pad: bool, divisor_override: int | None,
                 **params: Any) -> None:
        super().__init__(**params)
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def _divisor(self) -> Any:
        """``(Ho, Wo)`` divisors, as PyTorch counts them (padding is symmetric here)."""
        b = self.backend
        if self.divisor_override:
            return b.full(self.out_hw, self.divisor_override, "int64")
        sizes = []
        for d in (0, 1):
            k, s, p, n = self.kernel[d], self.stride[d], self.pad[d], self.in_hw[d]
            start = b.arange(0, self.out_hw[d], 1, "int64") * s - p
            end = b.minimum(start + k, n + p)
            if not self.count_include_pad:
                start, end = b.maximum(start, 0), b.minimum(end, n)
            sizes.append(end - start)
        return sizes[0].reshape(-1, 1) * sizes[1]

    def forward(self, x: Any) -> Any:
        b = self.backend
        x = self._batched(x)
        cols = windows(b, x, self.kernel, self.stride, self.dilation, self.pad, self.out_hw)
        self.divisor = self._divisor()
        out = b.sum(cols, axis=(2, 3)) / self.divisor.astype(x.dtype, copy=False)
        return self._unbatched(out.astype(x.dtype, copy=False))

    def backward(self, grad: Any) -> tuple[Any]:
        b = self.backend
        n_c = self._batched(grad).shape[:2]
        div = self.divisor.astype(_dtype(grad), copy=False)
        g = self._batched(grad) / (div if self._raw else self.wrap(div))
        g = g.reshape(tuple(n_c) + (1, 1) + self.out_hw)
        shape = tuple(n_c) + self.kernel + self.out_hw
        # NOTE: every element of a window gets the same share: a broadcast, not a copy.
        cols = b.broadcast_to(g, shape) if self._raw else g.expand(*shape)
        return (self._unbatched(self.col2im(cols)),)
