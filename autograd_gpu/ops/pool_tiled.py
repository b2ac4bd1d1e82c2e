"""Max pooling over tiled windows on the CPU: the fast path of ``conv.MaxPool2d`` for windows of
1 or 2 elements per axis that tile the input (stride == kernel, no padding), the usual
``MaxPool2d(2)`` and ``MaxPool1d(2)``.

NumPy pays per inner loop, and the general path's window views have inner loops as short as a
window row: comparisons on them ran at a tenth of NumPy's contiguous speed. Here the input is
split once into its window offsets, ``planes[s, r, q]`` = element ``(r, s)`` of output ``q``'s
window, each plane contiguous in output order (two copies whose inner loops are whole planes:
a pair split of the flat input, then a split of the rows with each half-row viewed as one
opaque element), and the rest is a handful of contiguous comparisons:

- along the width ``col = right > left``, then along the height ``row = bottom > top`` on the
  pairs' maxima. One window's pick is PyTorch's scan (row-major, replace when ``v > best`` or
  ``v`` is NaN): the first maximum, or the last NaN. The scan's step is associative, so pairing
  neighbours first gives the same pick; a NaN in the input is rare and reruns the comparisons
  with ``| isnan(v)`` (found from the pairs' ``maximum``, which carries NaN through).
- the pick's flat index ``base[q] + row * W + col``, with ``base`` the windows' corners (the
  same for every step of a training loop: the last few geometries are kept), the value
  gathered at it (exactly the picked element, as PyTorch returns it, signed zeros included).

The backward is one scatter of the gradient into zeros at those flat indices (windows do not
overlap), which the node keeps (int64, as PyTorch keeps its indices; the general path keeps
int8 window offsets). Measured on 64x8x8x8 float32, one thread: forward 0.27 -> 0.08 ms,
forward + backward 0.40 -> 0.11 ms (PyTorch 0.11). CuPy keeps the general path (one kernel per
op is no loop overhead there).
"""

from __future__ import annotations

from typing import Any

Pair = tuple[int, ...]

ENABLED = True  # NOTE: tests turn this off to compare with the general path
_SIZES = ((2, 2), (1, 2), (2, 1))
# NOTE: windows' corners by geometry (read only; at most 8 geometries of at most 2^20 outputs,
# cleared when full: a plain dict, whose get and set are atomic for threads)
_CACHE: dict[tuple[int, ...], tuple[Any, Any]] = {}
_CACHE_ENTRIES, _CACHE_MAX = 8, 1 << 20


def applies(b: Any, x: Any, kernel: Pair, stride: Pair, dilation: Pair, pad: Pair,
            out_hw: Pair) -> bool:
    """Whether the tiled fast path runs: NumPy, floating point, a 1x2, 2x1 or 2x2 kernel with
    stride == kernel, no padding, no dilation along a 2-long axis, every window inside the
    input (``ceil_mode`` may add a partial one) and something to pool."""
    kernel = tuple(kernel)
    # NOTE: ``b.ndarray is b.xp.ndarray`` leaves out the meta backend (NumPy's code on arrays
    # without storage), which these views and gathers need.
    return (ENABLED and b.name == "numpy" and b.ndarray is b.xp.ndarray and x.dtype.kind == "f"
            and kernel in _SIZES
            and tuple(stride) == kernel and not any(pad) and x.size > 0
            and all(d == 1 or k == 1 for d, k in zip(dilation, kernel))
            and all(o * k <= s for o, k, s in zip(out_hw, kernel, x.shape[2:])))


def _planes(xp: Any, x: Any, kh: int, kw: int, wo: int) -> Any:
    """``(kw, kh, M)``: element ``(r, s)`` of every window, in output order (``x`` C-contiguous,
    cropped to whole windows)."""
    m = x.size // (kh * kw)
    if kw == 2:  # NOTE: the flat input as (pairs, 2), transposed: (2 columns, ..., 2 rows, wo)
        x = xp.ascontiguousarray(x.reshape(-1, 2).T)
    if kh == 1:
        return x.reshape(kw, 1, m)
    # NOTE: each row of ``wo`` elements viewed as one opaque element, so that splitting the
    # rows of each window is a transpose of whole rows (a tenth of the time of float by float).
    row = xp.dtype((xp.void, wo * x.dtype.itemsize))
    rows = x.reshape(kw, m // wo, 2, wo).view(row).reshape(kw, m // wo, 2)
    return xp.ascontiguousarray(rows.transpose(0, 2, 1)).view(x.dtype).reshape(kw, 2, m)


def _pick(xp: Any, planes: Any, nan: bool) -> tuple[Any, Any, Any]:
    """``(maximum, row, col)`` of each window from its planes (``row``/``col``: bool, ``None``
    along a 1-long axis), by PyTorch's scan rule (see the module docstring)."""
    greater, isnan, maximum = xp.greater, xp.isnan, xp.maximum

    def beats(v: Any, best: Any) -> Any:
        take = greater(v, best)
        return take | isnan(v) if nan else take

    kw, kh = planes.shape[:2]
    col = row = None
    best = planes[0]
    if kw == 2:
        col = beats(planes[1], planes[0])  # (kh, M)
        best = maximum(planes[0], planes[1])
    if kh == 2:
        row = beats(best[1], best[0])
        best = maximum(best[0], best[1])
        if col is not None:
            col = col[0] ^ (row & (col[0] ^ col[1]))
    else:
        best = best[0]
        col = None if col is None else col[0]
    return best, row, col


def _bases(b: Any, nc: int, h: int, w: int, kh: int, kw: int, ho: int, wo: int
           ) -> tuple[Any, Any]:
    """The windows' corners as flat indices, ``(nc * ho * wo,)`` int64: into the whole input
    (``global``) and into each plane (``local``)."""
    key = (nc, h, w, kh, kw, ho, wo)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    xp = b.xp
    local = (xp.arange(ho, dtype=xp.int64).reshape(ho, 1) * (kh * w)
             + xp.arange(wo, dtype=xp.int64) * kw).reshape(-1)
    local = xp.tile(local, nc)
    glob = local + xp.repeat(xp.arange(nc, dtype=xp.int64) * (h * w), ho * wo)
    if local.size <= _CACHE_MAX:
        if len(_CACHE) >= _CACHE_ENTRIES:
            _CACHE.clear()
        _CACHE[key] = (glob, local)
    return glob, local


def forward(b: Any, x: Any, kernel: Pair, out_hw: Pair) -> tuple[Any, Any, Any]:
    """``(values, indices, flat)`` of max pooling ``x (N, C, H, W)``: the maxima and their
    ``h * W + w`` indices ``(N, C, Ho, Wo)``, and the indices into the whole input (flat
    ``(N * C * Ho * Wo,)``, what the backward scatters to)."""
    xp = b.xp
    n, c, h, w = x.shape
    (kh, kw), (ho, wo) = kernel, out_hw
    x = xp.ascontiguousarray(x)
    used = x if (ho * kh, wo * kw) == (h, w) else xp.ascontiguousarray(
        x[:, :, :ho * kh, :wo * kw])
    planes = _planes(xp, used, kh, kw, wo)
    from ..compiler import is_compiling

    # NOTE: a compiled step records the NaN rule (the same picks where there is no NaN) rather
    # than a check its replay could fail part-way
    nan = is_compiling()
    best, row, col = _pick(xp, planes, nan)
    if not nan and xp.isnan(best).any():  # NOTE: maxima carry NaN through: a NaN in a window
        best, row, col = _pick(xp, planes, True)
    glob, local = _bases(b, n * c, h, w, kh, kw, ho, wo)
    if row is None:
        off = col.astype(xp.int64)
    else:
        off = xp.multiply(row, w, dtype=xp.int64)
        if col is not None:
            off += col
    flat = glob + off
    values = xp.take(x.reshape(-1), flat).reshape(n, c, ho, wo)
    return values, (local + off).reshape(n, c, ho, wo), flat


def backward(b: Any, grad: Any, flat: Any, in_shape: tuple[int, ...]) -> Any:
    """The gradient of ``forward``'s values: ``grad (N, C, Ho, Wo)`` placed at ``flat`` in zeros
    of ``in_shape`` (no window overlaps another, so nothing adds up)."""
    out = b.zeros(in_shape, grad.dtype)
    out.reshape(-1)[flat] = grad.reshape(-1)
    return out


def window_offsets(b: Any, flat: Any, shape: tuple[int, ...], kernel: Pair,
                   out_hw: Pair) -> Any:
    """``forward``'s flat indices as offsets ``r * kw + s`` into each window, int8 ``(N, C, Ho,
    Wo)`` (what the general path's graph-recording backward reads)."""
    n, c, h, w = shape
    (kh, kw), (ho, wo) = kernel, out_hw
    glob, _ = _bases(b, n * c, h, w, kh, kw, ho, wo)
    local = flat - glob
    k = (local // w) * kw + local % w
    return k.astype("int8").reshape(n, c, ho, wo)
