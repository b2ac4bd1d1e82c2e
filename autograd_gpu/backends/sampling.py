"""Backend entries of the sampling family (``functions/sampling.py``, ``ops/sampling.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends.

Every sampler draws from the generator ``gen`` (``backend.new_generator``: NumPy's PCG64
``Generator``, or ``CupyGenerator`` over ``cupy.random.RandomState``) through the backend's
``random``/``standard_normal``/``integers`` entries, so that one seed gives one stream on both;
only Poisson draws go to the generator's own ``poisson``. Continuous distributions are
computed in float64 from float64 uniforms, then cast to the requested dtype.
"""

from __future__ import annotations

import math
from typing import Any

Array = Any
Shape = tuple[int, ...]

# NOTE: NumPy refuses Poisson rates near 2**63 (its int64 result would overflow); far below that
# a normal draw (mean lam, variance lam) is indistinguishable from a Poisson one.
_POISSON_NORMAL_FROM = 1e15


class SamplingBackend:
    """The sampling family's primitives; ``self`` is the backend object."""

    xp: Any
    name: str

    def _open_uniform(self: Any, gen: Any, shape: Shape) -> Array:
        """Uniform float64 samples in ``(0, 1]`` (safe to take the log of)."""
        return 1.0 - self.random(gen, shape, "float64")

    def any_true(self: Any, mask: Array) -> bool:
        """Whether any element of the bool array ``mask`` is set (a host sync on CUDA)."""
        return bool(self.xp.any(mask))

    def bernoulli(self: Any, gen: Any, p: Array, dtype: str) -> Array:
        """1 with probability ``p`` (an array, float64 or castable), else 0, in ``dtype``.

        NOTE: the uniform has ``p``'s float dtype (PyTorch's CPU ``bernoulli(p)`` compares a
        float32 uniform with a float32 ``p``)."""
        kind = str(p.dtype)
        u = self.random(gen, tuple(p.shape), kind if kind in ("float16", "float32") else "float64")
        return (u < p).astype(dtype)

    def bernoulli_scalar(self: Any, gen: Any, shape: Shape, p: float, dtype: str) -> Array:
        return (self.random(gen, shape, "float64") < p).astype(dtype)

    def uniform(self: Any, gen: Any, shape: Shape, lo: float, hi: float, dtype: str) -> Array:
        """Samples uniform in ``[lo, hi)`` (``lo`` itself when ``lo == hi``) in ``dtype``."""
        xp = self.xp
        u = self.random(gen, shape, "float64")
        r = (u * (hi - lo) + lo).astype(dtype, copy=False)
        if hi > lo:
            # NOTE: rounding (to the dtype, or of the product) can reach ``hi``; those draws
            # take ``lo``
            r = xp.where(r.astype("float64") >= hi, xp.asarray(lo, dtype=dtype), r)
        return r

    def normal(self: Any, gen: Any, mean: Any, std: Any, shape: Shape, dtype: str) -> Array:
        """``mean + std * z`` with ``z`` standard normal of ``shape``; ``mean``/``std`` are
        numbers or arrays broadcasting to ``shape``."""
        z = self.standard_normal(gen, shape, "float64")
        return (mean + std * z).astype(dtype, copy=False)

    def exponential(self: Any, gen: Any, shape: Shape, lambd: float, dtype: str) -> Array:
        """``-log(u) / lambd``, ``u`` uniform in ``(0, 1]``."""
        return (-self.xp.log(self._open_uniform(gen, shape)) / lambd).astype(dtype, copy=False)

    def geometric(self: Any, gen: Any, shape: Shape, p: float, dtype: str,
                  hi: float | None) -> Array:
        """Trials up to the first success (support 1, 2, ...): ``ceil(log(u) / log(1 - p))``.

        ``hi``: the largest value an integer ``dtype`` holds (results past it saturate there).
        """
        xp = self.xp
        k = xp.ceil(xp.log(self._open_uniform(gen, shape)) / math.log1p(-p))
        k = xp.maximum(k, 1.0)  # NOTE: u == 1 gives 0, outside the support
        if hi is not None:
            k = xp.minimum(k, hi)
        return k.astype(dtype)

    def cauchy(self: Any, gen: Any, shape: Shape, median: float, sigma: float,
               dtype: str) -> Array:
        """``median + sigma * tan(pi * (u - 1/2))``, ``u`` uniform in ``[0, 1)``."""
        xp = self.xp
        u = self.random(gen, shape, "float64")
        return (median + sigma * xp.tan(math.pi * (u - 0.5))).astype(dtype, copy=False)

    def log_normal(self: Any, gen: Any, shape: Shape, mean: float, std: float,
                   dtype: str) -> Array:
        z = self.standard_normal(gen, shape, "float64")
        return self.xp.exp(mean + std * z).astype(dtype, copy=False)

    def random_ints(self: Any, gen: Any, lo: int, hi: int, shape: Shape, dtype: str) -> Array:
        """Integers uniform in ``[lo, hi]`` (both ends included), cast to ``dtype``."""
        if lo == -(1 << 63) and hi == (1 << 63) - 1:
            # NOTE: the full int64 range: 2**64 values, one more than an int64 span holds
            bits = self.integers(gen, 0, 1 << 32, shape + (2,), "int64")
            r = (bits[..., 0] << 32) | bits[..., 1]
            return r.astype(dtype)  # int64 arithmetic wraps: every 64-bit pattern once
        return self.integers(gen, lo, hi + 1, shape, "int64").astype(dtype)

    def poisson(self: Any, gen: Any, lam: Array, dtype: str) -> Array:
        """Poisson counts with rates ``lam`` (non-negative, finite or inf), in ``dtype``."""
        xp = self.xp
        lam = lam.astype("float64")
        big = lam >= _POISSON_NORMAL_FROM
        small = xp.where(big, 0.0, lam)
        if self.name == "cupy":
            k = gen.rs.poisson(small, dtype="int64")
        else:
            k = gen.poisson(small)
        out = xp.asarray(k).astype("float64")  # NOTE: NumPy gives a scalar for 0-d rates
        if self.any_true(big):
            z = self.standard_normal(gen, tuple(lam.shape), "float64")
            out = xp.where(big, xp.floor(lam + xp.sqrt(lam) * z + 0.5), out)
        return out.astype(dtype)

    def binomial(self: Any, gen: Any, count: Array, prob: Array, dtype: str) -> Array:
        """Binomial counts of successes in ``count`` trials of probability ``prob`` (arrays of
        one shape), in ``dtype``; a fractional count is floored. NaN where the arguments are
        outside the distribution's domain (a negative or infinite count, ``prob`` outside
        [0, 1] or NaN), where PyTorch's result is undefined."""
        xp = self.xp
        n = count.astype("float64")
        p = prob.astype("float64")
        ok = (n >= 0) & (n < 2.0 ** 62) & (p >= 0) & (p <= 1)
        trials = xp.where(ok, xp.floor(n), 0).astype("int64")
        p = xp.where(ok, p, 0.0)
        if self.name == "cupy":
            k = gen.rs.binomial(trials, p, dtype="int64")
        else:
            k = gen.binomial(trials, p)
        out = xp.where(ok, xp.asarray(k).astype("float64"), xp.nan)
        return out.astype(dtype)

    def multinomial(self: Any, gen: Any, probs: Array, n: int, replacement: bool) -> Array:
        """``n`` category indices per row of the 2-D weights ``probs`` (non-negative, each row
        with a positive sum), int64 of shape ``(rows, n)``.

        With replacement: inverse-CDF sampling, a vectorised binary search for the first
        category whose normalised cumulative weight exceeds a uniform draw. Zero-weight
        categories are never drawn: their cumulative weight equals their predecessor's.
        Without replacement: the ``n`` smallest of ``E_i / p_i`` (``E_i`` standard exponential),
        which orders the categories as drawing one at a time, each in proportion to its weight
        among those left; zero weights sort last.
        """
        xp = self.xp
        p = self.widen_exact(probs)  # NOTE: float32 subnormal weights kept on CUDA too
        p = p / p.max(axis=1, keepdims=True)  # NOTE: sums of huge weights stay finite
        rows, k = p.shape
        if replacement:
            cdf = xp.cumsum(p, axis=1)
            cdf = cdf / cdf[:, -1:]  # NOTE: exactly 1 from the last positive weight on
            u = self.random(gen, (rows, n), "float64")
            lo = xp.zeros((rows, n), dtype="int64")
            hi = xp.full((rows, n), k - 1, dtype="int64")
            for _ in range(max(k - 1, 1).bit_length()):
                mid = (lo + hi) // 2
                right = xp.take_along_axis(cdf, mid, axis=1) <= u
                lo = xp.where(right, mid + 1, lo)
                hi = xp.where(right, hi, mid)
            return lo
        e = -xp.log(self._open_uniform(gen, (rows, k)))
        keys = xp.where(p > 0, e / xp.where(p > 0, p, 1.0), xp.inf)
        return xp.argsort(keys, axis=1)[:, :n].astype("int64")
