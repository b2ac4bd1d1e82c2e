"""``GridCoord``: grid coordinates in ``[-1, 1]`` to input pixel coordinates, as PyTorch's grid
sampler computes them (``grid_sampler_compute_source_index``): unnormalise, then clip
('border') or reflect and clip ('reflection'). The map is piecewise linear; its slope (the
unnormalising scale, 0 where a coordinate was clipped, its sign flipped by each reflection) is
kept from the forward, so the backward is ``grad * slope`` and gradients of every order follow.
``nn/_grid.py`` builds ``grid_sample`` on it.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node


class GridCoord(Node):
    """Source coordinates along one axis of ``size`` pixels (see the module docstring).

    ``generic`` picks PyTorch's scalar formulas (its 3-D CPU kernel); otherwise the vectorised
    2-D kernel's, which round differently: ``(g + 1) * (size / 2) - 0.5`` as one fused
    multiply-add against ``((g + 1) * size - 1) / 2`` in steps.
    """

    node_name = "GridCoordBackward0"

    def __init__(self, size: int, padding: str, align_corners: bool, generic: bool,
                 unnormalize: bool = True) -> None:
        self.size, self.padding, self.align, self.generic = size, padding, align_corners, generic
        self.unnormalize = unnormalize

    def forward(self, g: Any) -> Any:
        b, n = self.backend, self.size
        scale = (n - 1) / 2 if self.align else n / 2
        if not self.unnormalize:  # NOTE: bicubic's tap positions, already in pixels
            x, scale = g, 1.0
        elif self.generic:
            x = ((g + 1) / 2) * (n - 1) if self.align else ((g + 1) * n - 1) / 2
        elif self.align:
            x = (g + 1) * scale
        else:
            x = self._fused(g + 1)
        slope = b.full(tuple(g.shape), scale, g.dtype)
        if self.padding == "reflection":
            x, slope = self._reflect(x, slope)
        if self.padding != "zeros":
            # NOTE: PyTorch counts the borders themselves as clipped (slope 0 there).
            lo = b.maximum(x, 0)
            x = b.minimum(lo, n - 1)
            slope = b.where(b.logical_and(lo != 0, x != n - 1), slope, 0)
        self.slope = slope
        return x

    def _fused(self, a: Any) -> Any:
        """``a * (size / 2) - 0.5`` rounded once, as PyTorch's 2-D CPU kernel computes it (a
        fused multiply-add): ``(a * size - 1) / 2`` with the product and difference exact."""
        b, n = self.backend, self.size
        if a.dtype.itemsize < 8:  # NOTE: float32: exact in float64, one rounding back
            return ((a.astype("float64") * n - 1).astype(a.dtype)) / 2
        p = a * n
        c = a * 134217729.0  # NOTE: Dekker's split (2**27 + 1): p + e == a * n exactly
        hi = c - (c - a)
        e = (hi * n - p) + (a - hi) * n
        s = p - 1  # NOTE: Knuth's two-sum: s + r == p - 1 exactly
        bb = s - p
        r = (p - (s - bb)) + (-1 - bb)
        fused = (s + (r + e)) / 2
        return b.where(b.isfinite(fused), fused, (p - 1) / 2)

    def _reflect(self, x: Any, slope: Any) -> tuple[Any, Any]:
        """Fold ``x`` into ``[low, low + span]``: ``low = 0, span = size - 1`` with
        ``align_corners``, else ``low = -0.5, span = size``; each fold flips the slope."""
        b, n = self.backend, self.size
        if self.align and n <= 1:
            return b.zeros(tuple(x.shape), x.dtype), b.zeros(tuple(x.shape), x.dtype)
        low = 0.0 if self.align else -0.5
        twice = 2.0 * (n - 1) if self.align else 2.0 * n
        shifted = x - low
        neg = shifted < 0
        a = b.abs(shifted)
        extra = a - b.trunc(a / twice) * twice
        back = twice - extra
        flip = extra > back
        x = b.where(flip, back, extra) + low
        return x, b.where(b.logical_xor(flip, neg), -slope, slope)

    def backward(self, grad: Any) -> tuple[Any]:
        return (grad * self.wrap(self.slope),)
