"""Stride-1 convolution as products of the weight with shifted blocks of the padded input's
flat rows (no im2col copy): the CPU path of ``Convolution`` where it pays.

With stride 1, output element ``q`` (a position of the padded image's grid, flattened row-major
with the padded row strides ``pst``) reads the input at ``q + off`` for kernel offset ``i``, where
``off = sum_d i_d * dilation_d * pst_d``. So the whole output, computed on the padded grid (the
``out_hw`` box plus the padding columns, which are dropped at the end), is
``sum_i w[:, :, i] @ x_flat[:, off_i : off_i + span]``: each operand a block of contiguous rows
that BLAS reads in place, and all the blocks together one strided view (an offset axis per
kernel dimension). That is one stacked product of ``(O/g, C/g) @ (C/g, span)`` per offset and
a sum over offsets, instead of one ``(O/g, C/g * K) @ (C/g * K, L)`` on a copied, ``K`` times
larger window matrix: the same multiply-adds (plus the padding columns) without writing and
reading the copy, 1.4-1.7x faster in NumPy for 3x3 kernels on 32 channels (bench/bench_nn.py's
U-Net). The weight gradient is the same product read the other way:
``dw[:, :, i] = sum_n g_grid @ x_flat[:, off_i : off_i + span]^T``.

``applies`` says when: the NumPy backend (CuPy keeps im2col and one large product: fewer
launches), stride 1, and enough input channels per group that each product is a real matrix
product (with one input channel, im2col's single product is far better).
"""

from __future__ import annotations

import math
from typing import Any

Pair = tuple[int, ...]

_MIN_CHANNELS = 8  # input channels per group below which im2col's one product wins


def applies(b: Any, stride: Pair, channels_per_group: int, out_hw: Pair) -> bool:
    """Whether the shifted products beat im2col here (see the module docstring)."""
    return (b.name == "numpy" and all(s == 1 for s in stride)
            and channels_per_group >= _MIN_CHANNELS and math.prod(out_hw) > 0)


def spatial(starts: Pair, sizes: Pair) -> tuple[slice, ...]:
    """``[:, :, start:start + size, ...]`` as an index."""
    return (slice(None), slice(None)) + tuple(slice(a, a + n) for a, n in zip(starts, sizes))


def pad_to(b: Any, x: Any, full: Pair, pad: Pair, fill: Any = 0) -> Any:
    """``x (N, C, *in_hw)`` in a new ``(N, C, *full)`` array filled with ``fill``, shifted by
    the leading ``pad`` (and cropped where ``full`` ends first)."""
    sizes = tuple(x.shape[2:])
    xp = b.full((x.shape[0], x.shape[1]) + tuple(full), fill, x.dtype)
    keep = tuple(max(min(s, f - p), 0) for s, f, p in zip(sizes, full, pad))
    xp[spatial(pad, keep)] = x[spatial((0,) * len(keep), keep)]
    return xp


class Grid:
    """The padded grid of one geometry: padded sizes ``full``, their row-major strides ``pst``
    (in elements) and the flat ``span`` the outputs cover."""

    def __init__(self, kernel: Pair, dilation: Pair, out_hw: Pair) -> None:
        self.kernel, self.out_hw = tuple(kernel), tuple(out_hw)
        self.full = tuple(o + d * (k - 1) for o, d, k in zip(out_hw, dilation, kernel))
        pst = [1] * len(self.full)
        for i in range(len(self.full) - 2, -1, -1):
            pst[i] = pst[i + 1] * self.full[i + 1]
        self.pst = tuple(pst)
        self.length = math.prod(self.full)
        self.span = sum((o - 1) * s for o, s in zip(out_hw, self.pst)) + 1
        # NOTE: rows of the grid the outputs occupy: the first dimension cut to out_hw[0]
        self.rows = (self.out_hw[0],) + self.full[1:]

    def padded(self, b: Any, x: Any, pad: Pair) -> Any:
        """``x (N, C, *in_hw)`` zero-padded (leading ``pad``) or cropped to ``(N, C, *full)``,
        as a C-contiguous array."""
        if not any(pad) and tuple(x.shape[2:]) == self.full and x.flags.c_contiguous:
            return x
        return pad_to(b, x, self.full, pad)

    def crop(self, b: Any, flat: Any) -> Any:
        """``(N, C, span)`` outputs on the grid to a contiguous ``(N, C, *out_hw)``."""
        shape = tuple(flat.shape[:2]) + self.out_hw
        if self.rows == self.out_hw:  # NOTE: no padding columns: the span is the output
            return flat.reshape(shape)
        if not flat.size:  # NOTE: an empty view counts as contiguous: it would not be copied
            return b.zeros(shape, flat.dtype)
        st = flat.strides
        return b.ascontiguousarray(b.as_strided(
            flat, shape, st[:2] + tuple(p * st[2] for p in self.pst)))

    def on_grid(self, b: Any, g: Any) -> Any:
        """``g (N, C, *out_hw)`` spread onto the grid's rows with zeros in the padding
        columns: ``(N, C, prod(rows))``."""
        if self.rows == self.out_hw:
            return b.ascontiguousarray(g).reshape(g.shape[:2] + (math.prod(self.rows),))
        z = b.zeros(tuple(g.shape[:2]) + self.rows, g.dtype)
        z[(slice(None),) * 2 + tuple(slice(0, o) for o in self.out_hw)] = g
        return z.reshape(g.shape[:2] + (math.prod(self.rows),))


def _shifted_rows(b: Any, grid: Grid, x: Any, groups: int, pad: Pair, dilation: Pair) -> Any:
    """The padded input's shifted row blocks, ``(N, g, *kernel, C/g, span)``: element
    ``[n, g, i, c, q]`` is ``x_pad_flat[n, g, c, q + off_i]``. One strided view, no copy."""
    n, c = x.shape[:2]
    xf = grid.padded(b, x, pad).reshape(n, groups, c // groups, grid.length)
    st = xf.strides
    steps = tuple(d * p * st[3] for d, p in zip(dilation, grid.pst))
    return b.as_strided(xf, (n, groups) + grid.kernel + (c // groups, grid.span),
                        st[:2] + steps + st[2:])


def forward(b: Any, x: Any, w: Any, groups: int, kernel: Pair, dilation: Pair, pad: Pair,
            out_hw: Pair) -> Any:
    """``conv(x, w)`` with stride 1: ``(N, O, *out_hw)``, C-contiguous, no bias.

    NOTE: one stacked product over every kernel offset (no Python loop), then a sum over the
    offsets: the products take ``prod(kernel)`` times the output's memory for a moment, about
    what im2col's window matrix takes; it measured as fast as accumulating offset by offset."""
    grid = Grid(kernel, dilation, out_hw)
    n, o, nd = x.shape[0], w.shape[0], len(kernel)
    cg = w.shape[1]
    wk = b.ascontiguousarray(w.reshape((groups, o // groups, cg) + tuple(kernel)).transpose(
        (0,) + tuple(range(3, 3 + nd)) + (1, 2)))  # (g, *kernel, O/g, C/g)
    parts = b.matmul(wk, _shifted_rows(b, grid, x, groups, pad, dilation))
    summed = b.sum(parts, axis=tuple(range(2, 2 + nd))).reshape(n, o, grid.span)
    return grid.crop(b, summed)


def weight_grad(b: Any, x: Any, grad: Any, groups: int, kernel: Pair, dilation: Pair,
                pad: Pair, out_hw: Pair) -> Any:
    """``dL/dw (O, C/g, *kernel)`` of a stride-1 convolution, from ``x`` and the output
    gradient: the gradient on the grid times each offset's shifted rows, summed over the
    batch (one stacked product, no Python loop)."""
    grid = Grid(kernel, dilation, out_hw)
    n, c, o, nd = x.shape[0], x.shape[1], grad.shape[1], len(kernel)
    gq = grid.on_grid(b, grad).reshape(n, groups, o // groups, math.prod(grid.rows))
    gq = gq[..., :grid.span].reshape((n, groups) + (1,) * nd + (o // groups, grid.span))
    rows = _shifted_rows(b, grid, x, groups, pad, dilation)
    dw = b.sum(b.matmul(gq, rows.swapaxes(-1, -2)), axis=0)  # (g, *kernel, O/g, C/g)
    return b.ascontiguousarray(dw.transpose((0, nd + 1, nd + 2) + tuple(range(1, nd + 1)))
                               ).reshape((o, c // groups) + tuple(kernel))
