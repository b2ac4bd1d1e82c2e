"""Convolution of small images on the CPU with the batch as the innermost axis: the path of
``conv.Convolution`` (not transposed) where each image has few output positions.

im2col copies every window of ``x (N, C, *in)``; in NumPy the copy runs one inner loop per window
row, of ``out_w`` elements, and for an 8x8 or 4x4 image that loop is too short to pay for
itself (0.15 ms for a 64x8x4x4 input). With the batch last, ``x_t (C, *padded, N)``, a window row
is ``out_w * N`` contiguous elements, and the copy runs ten times faster. So here:

- ``x`` is transposed to ``(C, *padded, N)`` (zero padding in the same copy), its windows
  copied to ``cols (g, C/g * K, L * N)`` (``K = prod(kernel)``, ``L = prod(out)``) and the weight
  ``(g, O/g, C/g * K)`` multiplies them: ``out_t (O, L, N)``, plus the bias along its rows,
  transposed back to ``(N, O, *out)`` (a 2-D transpose).
- the weight gradient is ``grad_t (g, O/g, L * N) @ cols^T`` (``cols`` recomputed, as
  PyTorch keeps only ``x``), the bias gradient the sum of ``grad_t``'s rows, and the input
  gradient the correlation of the padded gradient with the flipped, transposed weight (stride
  1 and padding within the dilated kernel: the same product again, on ``grad_t``), else
  ``conv.col2im`` of ``w^T @ grad_t`` (any stride).

The sums run over the same terms as the general path, grouped as one product per group instead
of one per image: a result of ``n`` terms may differ from the general path's by the rounding
of a reordered sum, at most ``2 (n - 1) u sum|terms|`` (``u`` the unit roundoff; pinned by
``tests/nn/test_cnn_fast.py``). Only the first-order backward runs here; under
``create_graph`` the general path's backward of Tensor ops records the graph, as before.

NOTE: products are split into column blocks of at most ``_BLOCK`` multiply-adds: OpenBLAS runs a
small-matrix kernel below about 10^6 (``M * N * K``) and a packed one above, and for these
skinny shapes (16 x 72 x 1024) the small one measured 2.4x faster. Blocks are one stacked
``matmul`` (no Python loop); with another BLAS they only cost a few calls.
"""

from __future__ import annotations

import math
from typing import Any

Pair = tuple[int, ...]

ENABLED = True  # NOTE: tests turn this off to compare with the general path
# NOTE: measured against the general path (fwd + bwd, one thread): an output of at most 4x4
# positions per image always gains (0.3-0.8x), one of at most 8x8 while the products are
# small (0.55-0.9x up to 4.7M multiply-adds, 1.05-1.5x at 19M: there conv_shifted's many
# small products win), larger images never (1.2-2.2x at 16x16).
_SMALL, _MEDIUM, _MEDIUM_WORK = 16, 64, 1 << 23
_BLOCK = 1 << 19  # multiply-adds per product block (see the module docstring)
_MIN_COLUMNS = 256  # columns per block at least


def applies(b: Any, transposed: bool, x_shape: Any, w_shape: Any, out_hw: Pair) -> bool:
    """Whether this path runs: NumPy, not transposed, few output positions per image (the
    rule above ``_SMALL``), and something to compute."""
    # NOTE: ``b.ndarray is b.xp.ndarray`` leaves out the meta backend (no storage to view)
    if not (ENABLED and b.name == "numpy" and b.ndarray is b.xp.ndarray and not transposed
            and x_shape[0] > 0):
        return False
    positions, work = math.prod(out_hw), math.prod(w_shape)
    if positions == 0 or work == 0:
        return False
    return positions <= _SMALL or (positions <= _MEDIUM
                                   and work * positions * x_shape[0] <= _MEDIUM_WORK)


def _view(xp: Any, a: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> Any:
    """A strided view of the C-contiguous ``a`` (``as_strided`` without its wrapper's cost)."""
    if type(a) is not xp.ndarray:
        # NOTE: a subclass (compile's recording array): as_strided, which it records
        return xp.lib.stride_tricks.as_strided(a, shape, strides)
    return xp.ndarray(shape, a.dtype, a, 0, strides)


def to_last(b: Any, x: Any, full: Pair, pad: Pair) -> Any:
    """``x (N, C, *sizes)`` as ``(C, *full, N)``: shifted by the leading ``pad``, zero-filled
    around (and cropped where ``full`` ends first), C-contiguous."""
    n, c, nd = x.shape[0], x.shape[1], len(full)
    moved = x.transpose((1,) + tuple(range(2, 2 + nd)) + (0,))
    if not any(pad) and tuple(x.shape[2:]) == tuple(full):
        return b.ascontiguousarray(moved)
    out = b.zeros((c,) + tuple(full) + (n,), x.dtype)
    keep = tuple(max(min(s, f - p), 0) for s, f, p in zip(x.shape[2:], full, pad))
    out[(slice(None),) + tuple(slice(p, p + k) for p, k in zip(pad, keep))] = moved[
        (slice(None),) + tuple(slice(0, k) for k in keep)]
    return out


def _cols(b: Any, xt: Any, kernel: Pair, stride: Pair, dilation: Pair, out_hw: Pair,
          groups: int) -> Any:
    """The windows of ``xt (C, *full, N)`` as ``(g, C/g * K, L * N)``, one copy."""
    s, nd = xt.strides, len(kernel)
    shape = (xt.shape[0],) + tuple(kernel) + tuple(out_hw) + (xt.shape[-1],)
    strides = ((s[0],) + tuple(s[1 + i] * dilation[i] for i in range(nd))
               + tuple(s[1 + i] * stride[i] for i in range(nd)) + (s[-1],))
    cols = b.ascontiguousarray(_view(b.xp, xt, shape, strides))
    return cols.reshape(groups, -1, math.prod(out_hw) * xt.shape[-1])


def _blocks(total: int, work: int) -> int:
    """How many column blocks to split ``total`` columns into (a divisor of ``total``), so
    that a block's ``work * columns`` stays within ``_BLOCK``; 1 when the blocks would be
    narrower than ``_MIN_COLUMNS`` (a large ``work`` runs best in one packed product)."""
    want = -(-work * total // _BLOCK)
    for n in range(max(want, 2), total // _MIN_COLUMNS + 1):
        if total % n == 0:
            return n
    return 1


def product(b: Any, a: Any, m: Any) -> Any:
    """``a (g, r, k) @ m (g, k, q)`` as ``(g, r, q)``, in column blocks (module NOTE)."""
    g, r, k = a.shape
    q = m.shape[-1]
    n = _blocks(q, r * k)
    if n == 1:
        return b.matmul(a, m)
    out = b.empty((g, r, q), a.dtype)
    b.matmul(a[:, None], m.reshape(g, k, n, q // n).transpose(0, 2, 1, 3),
             out=out.reshape(g, r, n, q // n).transpose(0, 2, 1, 3))
    return out


def _gram(b: Any, gt: Any, cols: Any) -> Any:
    """``gt (g, r, q) @ cols (g, k, q)^T`` as ``(g, r, k)``: the sum over ``q`` in blocks
    (partial products added in block order)."""
    g, r, q = gt.shape
    k = cols.shape[1]
    n = _blocks(q, r * k)
    if n == 1:
        return b.matmul(gt, cols.swapaxes(-1, -2))
    parts = b.matmul(gt.reshape(g, r, n, q // n).transpose(0, 2, 1, 3),
                     cols.reshape(g, k, n, q // n).transpose(0, 2, 3, 1))
    return b.sum(parts, axis=1)


def transposed(b: Any, a: Any) -> Any:
    """The 2-D ``a`` transposed, C-contiguous.

    NOTE: NumPy reads the source row by row and writes the columns of the result; when the
    source's rows are a multiple of 512 bytes apart, the rows' elements land in the same few
    cache sets and the copy ran 5x slower (64 x 512 float32: 72 us). Such a source is first
    copied (fast, row by row) into rows 64 bytes longer."""
    rows, cols = a.shape
    if rows >= 8 and (cols * a.dtype.itemsize) % 512 == 0:
        pad = 64 // a.dtype.itemsize
        buf = b.empty((rows, cols + pad), a.dtype)
        buf[:, :cols] = a
        a = buf[:, :cols]
    return b.ascontiguousarray(a.T)


def _to_first(b: Any, out_t: Any, n: int, out_hw: Pair) -> Any:
    """``(g, O/g, L * N)`` as a C-contiguous ``(N, O, *out_hw)`` (one 2-D transpose)."""
    return transposed(b, out_t.reshape(-1, n)).reshape((n, -1) + tuple(out_hw))


def _padded(kernel: Pair, stride: Pair, dilation: Pair, out_hw: Pair) -> Pair:
    return tuple((o - 1) * s + (k - 1) * d + 1
                 for k, s, d, o in zip(kernel, stride, dilation, out_hw))


def forward(b: Any, x: Any, w: Any, bias: Any, groups: int, kernel: Pair, stride: Pair,
            dilation: Pair, pad: Pair, out_hw: Pair) -> Any:
    """``conv(x, w) + bias`` (``bias`` may be None): ``(N, O, *out_hw)``, C-contiguous."""
    full = _padded(kernel, stride, dilation, out_hw)
    xt = to_last(b, x, full, pad)
    cols = _cols(b, xt, kernel, stride, dilation, out_hw, groups)
    w3 = w.reshape(groups, w.shape[0] // groups, -1)
    out_t = product(b, w3, cols)
    if bias is not None:  # NOTE: along the rows of the batch-last result (2x faster)
        out_t += bias.reshape(groups, -1, 1)
    return _to_first(b, out_t, x.shape[0], out_hw)


def grads(b: Any, x: Any, w: Any, grad: Any, need: tuple[bool, ...], w_shape: Any,
          groups: int, kernel: Pair, stride: Pair, dilation: Pair, pad: Pair, in_hw: Pair,
          out_hw: Pair) -> tuple[Any, Any, Any]:
    """``(grad_x, grad_w, grad_bias)`` of ``forward`` plus a bias (``None`` where ``need``
    says so; ``x`` is read for ``grad_w`` only, ``w`` for ``grad_x`` only) from the output
    gradient ``(N, O, *out_hw)``."""
    n, nd = grad.shape[0], len(kernel)
    o, cg = w_shape[0], w_shape[1]
    # NOTE: the gradient batch-last, ``(O, *out_hw, N)``: one 2-D transpose
    gt = transposed(b, grad.reshape(n, -1))
    grad_x = grad_w = grad_b = None
    if len(need) > 2 and need[2]:  # NOTE: a sum along contiguous rows (5x faster)
        grad_b = b.sum(gt.reshape(o, -1), axis=1)
    if need[1]:
        full = _padded(kernel, stride, dilation, out_hw)
        cols = _cols(b, to_last(b, x, full, pad), kernel, stride, dilation, out_hw, groups)
        grad_w = _gram(b, gt.reshape(groups, o // groups, -1), cols).reshape(w_shape)
    if need[0]:
        c = cg * groups
        if all(s == 1 for s in stride) and all(
                p <= d * (k - 1) for p, d, k in zip(pad, dilation, kernel)):
            flipped = w[(slice(None),) * 2 + (slice(None, None, -1),) * nd]
            wt = b.ascontiguousarray(flipped.reshape(
                (groups, o // groups, cg) + tuple(kernel)).swapaxes(1, 2)).reshape(
                groups, cg, -1)
            lead = tuple(d * (k - 1) - p for p, d, k in zip(pad, dilation, kernel))
            full = _padded(kernel, stride, dilation, in_hw)
            gl = gt.reshape((o,) + tuple(out_hw) + (n,))
            # NOTE: to_last on a batch-last array: pad the spatial axes only
            gp = b.zeros((o,) + full + (n,), grad.dtype)
            keep = tuple(max(min(s, f - p), 0) for s, f, p in zip(out_hw, full, lead))
            gp[(slice(None),) + tuple(slice(p, p + k) for p, k in zip(lead, keep))] = gl[
                (slice(None),) + tuple(slice(0, k) for k in keep)]
            cols_g = _cols(b, gp, kernel, stride, dilation, in_hw, groups)
            grad_x = _to_first(b, product(b, wt, cols_g), n, in_hw)
        else:
            from .conv import col2im

            w3 = w.reshape(groups, o // groups, -1)
            cg_t = product(b, b.ascontiguousarray(w3.swapaxes(-1, -2)),
                           gt.reshape(groups, o // groups, -1))
            cols_x = cg_t.reshape((c,) + tuple(kernel) + tuple(out_hw) + (n,))
            cols_x = cols_x.transpose((2 * nd + 1, 0) + tuple(range(1, 2 * nd + 1)))
            grad_x = col2im(b, cols_x, kernel, stride, dilation, pad, in_hw, out_hw)
    return grad_x, grad_w, grad_b
