"""Convolution and pooling ops, built on sliding windows (im2col) and their adjoint (col2im).

All of them see a 4-D ``(N, C, H, W)`` input. A window geometry is ``kernel``, ``stride``,
``dilation``, ``pad`` (top, left), ``in_hw`` and ``out_hw``: the padding at the bottom and right
is whatever the output size needs (so asymmetric 'same' padding and ``ceil_mode`` need no
special case). ``Im2col`` turns ``x`` into its windows ``(N, C, kh, kw, Ho, Wo)``; ``Col2im``
adds windows back into an image. Each is the other's adjoint, so each is the other's backward,
and every backward here is made of them, ``*`` and ``@``: gradients of any order.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node

Pair = tuple[int, int]


def _padded_hw(kernel: Pair, stride: Pair, dilation: Pair, out_hw: Pair) -> Pair:
    """The padded input size that ``out_hw`` windows span."""
    return ((out_hw[0] - 1) * stride[0] + (kernel[0] - 1) * dilation[0] + 1,
            (out_hw[1] - 1) * stride[1] + (kernel[1] - 1) * dilation[1] + 1)


def windows(b: Any, x: Any, kernel: Pair, stride: Pair, dilation: Pair, pad: Pair,
            out_hw: Pair, fill: Any = 0) -> Any:
    """A strided (read-only, uncopied where no padding is needed) view ``(N, C, kh, kw, Ho,
    Wo)`` of the windows of ``x``, padded with ``fill``."""
    n, c, h, w = x.shape
    hp, wp = _padded_hw(kernel, stride, dilation, out_hw)
    if pad != (0, 0) or hp > h or wp > w:
        xp = b.full((n, c, hp, wp), fill, x.dtype)
        rows, cols = max(min(h, hp - pad[0]), 0), max(min(w, wp - pad[1]), 0)
        xp[:, :, pad[0]:pad[0] + rows, pad[1]:pad[1] + cols] = x[:, :, :rows, :cols]
        x = xp
    s = x.strides
    shape = (n, c, kernel[0], kernel[1], out_hw[0], out_hw[1])
    strides = (s[0], s[1], s[2] * dilation[0], s[3] * dilation[1], s[2] * stride[0],
               s[3] * stride[1])
    return b.as_strided(x, shape, strides)


def _dtype(x: Any) -> Any:
    """The backend dtype of a Tensor (or, on the raw path, of an array)."""
    return getattr(x, "_data", x).dtype


class _Windowed(Node):
    """A node that remembers one window geometry (see the module docstring)."""

    def __init__(self, kernel: Pair, stride: Pair, dilation: Pair, pad: Pair, in_hw: Pair,
                 out_hw: Pair) -> None:
        self.kernel, self.stride, self.dilation = kernel, stride, dilation
        self.pad, self.in_hw, self.out_hw = pad, in_hw, out_hw

    @property
    def geometry(self) -> dict[str, Pair]:
        return {"kernel": self.kernel, "stride": self.stride, "dilation": self.dilation,
                "pad": self.pad, "in_hw": self.in_hw, "out_hw": self.out_hw}

    def col2im(self, cols: Any) -> Any:
        """Windows ``(N, C, kh, kw, Ho, Wo)`` (Tensor, or array on the raw path) summed back
        into an ``(N, C, H, W)`` image."""
        return self.run(Col2im, cols, **self.geometry)

    def im2col(self, x: Any) -> Any:
        return self.run(Im2col, x, **self.geometry)


class Im2col(_Windowed):
    """``x (N, C, H, W)`` to its zero-padded windows ``(N, C, kh, kw, Ho, Wo)``, contiguous."""

    node_name = "Im2ColBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        b = self.backend
        cols = windows(b, x, self.kernel, self.stride, self.dilation, self.pad, self.out_hw)
        return b.ascontiguousarray(cols)

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.col2im(grad),)


class Col2im(_Windowed):
    """Windows ``(N, C, kh, kw, Ho, Wo)`` added into an ``(N, C, H, W)`` image (overlaps add up,
    padding is cropped): the adjoint of ``Im2col``."""

    node_name = "Col2ImBackward0"
    raw_ok = True

    def forward(self, cols: Any) -> Any:
        n, c, kh, kw, ho, wo = cols.shape
        (sh, sw), (dh, dw), (pt, pl), (h, w) = self.stride, self.dilation, self.pad, self.in_hw
        hp, wp = _padded_hw(self.kernel, self.stride, self.dilation, self.out_hw)
        hp, wp = max(hp, pt + h), max(wp, pl + w)
        if (sh, sw) == (kh * dh, kw * dw) and (dh, dw) == (1, 1):
            # NOTE: windows tile the image (pooling with stride == kernel): a transpose, no adds.
            out = cols.transpose(0, 1, 4, 2, 5, 3).reshape(n, c, ho * kh, wo * kw)
            if (hp, wp) == (h, w) == (ho * kh, wo * kw):
                return out
            full = self.backend.zeros((n, c, hp, wp), cols.dtype)
            full[:, :, :ho * kh, :wo * kw] = out
            return self.backend.ascontiguousarray(full[:, :, pt:pt + h, pl:pl + w])
        out = self.backend.zeros((n, c, hp, wp), cols.dtype)
        # NOTE: one strided slice-add per kernel offset: kh * kw vectorised adds, no scatter.
        for i in range(kh):
            for j in range(kw):
                out[:, :, i * dh:i * dh + (ho - 1) * sh + 1:sh,
                    j * dw:j * dw + (wo - 1) * sw + 1:sw] += cols[:, :, i, j]
        if (hp, wp) == (h, w):
            return out
        return self.backend.ascontiguousarray(out[:, :, pt:pt + h, pl:pl + w])

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.im2col(grad),)


class Convolution(_Windowed):
    """``out[n, o] = bias[o] + sum_{c, i, j} w[o, c, i, j] x_pad[n, g c, s h + d i, s w + d j]``,
    computed as one (grouped, batched) matmul of the weight with the input's windows."""

    node_name = "ConvolutionBackward0"
    raw_ok = True

    def __init__(self, groups: int, **geometry: Any) -> None:
        super().__init__(**geometry)
        self.groups = groups

    def _shapes(self, x_shape: Any, w_shape: Any) -> tuple[int, ...]:
        n, g, o = x_shape[0], self.groups, w_shape[0]
        return n, g, o // g, w_shape[1] * w_shape[2] * w_shape[3], self.out_hw[0] * self.out_hw[1]

    def forward(self, x: Any, w: Any, bias: Any) -> Any:
        b = self.backend
        n, g, og, kg, length = self._shapes(x.shape, w.shape)
        cols = windows(b, x, self.kernel, self.stride, self.dilation, self.pad, self.out_hw)
        out = b.matmul(w.reshape(g, og, kg), cols.reshape(n, g, kg, length))
        out = out.reshape((n, g * og) + self.out_hw)
        if bias is not None:
            out += bias.reshape(-1, 1, 1)
        need = self.needs_input_grad
        if need:
            self.save_for_backward(x if need[1] else None, w if need[0] else None)
            self.x_shape, self.w_shape = x.shape, w.shape
        return out

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        x, w = self.saved_tensors
        need = self.needs_input_grad
        n, g, og, kg, length = self._shapes(self.x_shape, self.w_shape)
        g_out = grad.reshape((n, g, og, length))
        grad_x = grad_w = grad_b = None
        if need[0]:
            cols_grad = w.reshape((g, og, kg)).swapaxes(-1, -2) @ g_out
            c = self.x_shape[1]
            grad_x = self.col2im(cols_grad.reshape((n, c) + self.kernel + self.out_hw))
        if need[1]:
            cols = self.im2col(x).reshape((n, g, kg, length))
            grad_w = (g_out @ cols.swapaxes(-1, -2)).sum(0).reshape(self.w_shape)
        if len(need) > 2 and need[2]:
            grad_b = grad.sum((0, 2, 3))
        return grad_x, grad_w, grad_b


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


class MaxPool2d(_Pool):
    """The maximum of each (dilated, ``-inf``-padded) window, and its flat index ``h * W + w``
    into the input plane. The gradient goes to that one element."""

    node_name = "MaxPool2DWithIndicesBackward0"
    raw_ok = True

    def forward(self, x: Any) -> tuple[Any, Any]:
        b = self.backend
        x = self._batched(x)
        n, c = x.shape[:2]
        (kh, kw), (ho, wo) = self.kernel, self.out_hw
        # NOTE: any value <= every element pads correctly (every window holds one element).
        fill = float("-inf") if x.dtype.kind == "f" else (b.min(x) if x.size else 0)
        cols = windows(b, x, self.kernel, self.stride, self.dilation, self.pad, self.out_hw, fill)
        cols = cols.reshape(n, c, kh * kw, ho, wo)
        k = b.argmax(cols, axis=2)
        out = b.take_along_axis(cols, k[:, :, None], 2).reshape(n, c, ho, wo)
        (sh, sw), (dh, dw), (pt, pl), w_in = self.stride, self.dilation, self.pad, self.in_hw[1]
        rows = b.arange(0, ho, 1, "int64").reshape(ho, 1) * sh - pt + (k // kw) * dh
        cols_ = b.arange(0, wo, 1, "int64") * sw - pl + (k % kw) * dw
        self.save_for_backward(k)
        return self._unbatched(out), self._unbatched(rows * w_in + cols_)

    def backward(self, grad: Any, grad_indices: Any = None) -> tuple[Any]:
        (k,) = self.saved_tensors
        b = self.backend
        k = getattr(k, "_data", k)
        (kh, kw), (ho, wo), n, c = self.kernel, self.out_hw, k.shape[0], k.shape[1]
        positions = b.arange(0, kh * kw, 1, "int64").reshape(kh * kw, 1, 1)
        mask = b.equal(k[:, :, None], positions).astype(_dtype(grad))
        if not self._raw:
            mask = self.wrap(mask)
        cols = (mask * grad.reshape((n, c, 1, ho, wo))).reshape((n, c, kh, kw, ho, wo))
        return (self._unbatched(self.col2im(cols)),)


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
