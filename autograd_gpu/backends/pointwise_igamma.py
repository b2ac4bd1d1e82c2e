"""The regularised incomplete gamma functions ``P(a, x) = gamma(a, x) / Gamma(a)``
(``igamma``, ``special.gammainc``) and ``Q = 1 - P`` (``igammac``, ``special.gammaincc``) on
float64 arrays, written once for NumPy and CuPy (``xp``). No SciPy.

The method (classical, our own code):

- ``x <= max(a, 1.1)``: the series ``P = x**a e**-x / Gamma(a + 1) sum_k x**k / ((a+1)...(a+k))``
  (positive terms), and ``Q = 1 - P``, except for small ``x`` and ``a`` (PyTorch's bounds:
  ``x <= 1.1`` and ``a <= 1.1 x``, or ``a <= -0.4 / log x`` below ``x = 1/2``), where ``P`` is
  near 1 and ``Q = 1 - x**a / Gamma(a+1) - x**a / Gamma(a) sum_{n>=1} (-x)**n / (n! (a + n))``.
- otherwise Legendre's continued fraction for ``Q`` (modified Lentz), and ``P = 1 - Q``.
- the prefactor ``x**a e**-x / Gamma(a + 1)`` from 10 on as ``exp(-a (t - log1p(t)) - c(a)) /
  sqrt(2 pi a)``, ``t = x/a - 1``, ``c`` Stirling's correction, so that no large exponent
  cancels.

The number of terms grows as ``sqrt(a)`` where ``x`` is near ``a`` (about ``9 sqrt(a)``).
NOTE: PyTorch switches to Temme's uniform asymptotic expansion for large ``a`` near ``x``; both
are accurate, they agree to about 1e-13 there (see the tests' bounds).
"""

from __future__ import annotations

import math
from typing import Any

from .pointwise_special import _B2K, _LGAMMA2, _horner, lgamma

Array = Any
_INF, _NAN = math.inf, math.nan
_MAX_TERMS = 100_000  # NOTE: enough for a up to about 1e8 near x = a


def _terms(xp: Any, a: Array) -> int:
    """Terms (series) or steps (continued fraction) enough for every ``a`` given."""
    top = float(a.max()) if a.size else 0.0
    return min(int(9 * math.sqrt(top)) + 60, _MAX_TERMS)


def _lgamma1p(xp: Any, a: Array) -> Array:
    """``lgamma(1 + a)`` for ``0 < a <= 1.5``, without rounding ``1 + a``."""
    z = xp.where(a > 0.5, a - 1, a)  # exact
    near_two = _horner(_LGAMMA2, z) * z  # lgamma(2 + z)
    return xp.where(a > 0.5, near_two, near_two - xp.log1p(a))


def _log1pmx_neg(xp: Any, t: Array) -> Array:
    """``t - log1p(t)`` for ``|t| < 1/2``, by its series (no cancellation)."""
    total = t * 0
    power = t * t
    for k in range(2, 60):
        total = total + (power / k if k % 2 == 0 else -power / k)
        power = power * t
    return total


def _prefactor(xp: Any, a: Array, x: Array) -> Array:
    """``x**a e**-x / Gamma(a + 1)``."""
    direct = xp.exp(a * xp.log(x) - x - lgamma(xp, a + 1))
    big = a >= 10
    ab = xp.where(big, a, 10.0)
    inv2 = 1 / (ab * ab)
    stirling = _horner([_B2K[k] / (2 * k * (2 * k - 1)) for k in range(1, 11)], inv2) / ab
    t = (x - ab) / ab
    near = xp.abs(t) < 0.5
    # NOTE: a log(x / a) - x + a: by the series of log1p near x = a, else from x / a itself
    # (t = x/a - 1 would lose 1 + t's digits where x is far below a)
    expo = xp.where(near, -ab * _log1pmx_neg(xp, xp.where(near, t, 0.0)),
                    ab * xp.log(x / ab) - x + ab)
    scaled = xp.exp(expo - stirling) / xp.sqrt(2 * math.pi * ab)
    return xp.where(big, scaled, direct)


def _series_p(xp: Any, a: Array, x: Array) -> Array:
    """``P(a, x)`` by the series (``x`` not far above ``a``)."""
    term = xp.ones_like(x)
    total = term
    for k in range(1, _terms(xp, a)):
        term = term * (x / (a + k))
        total = total + term
    return _prefactor(xp, a, x) * total


def _series_q_small(xp: Any, a: Array, x: Array) -> Array:
    """``Q(a, x)`` for small ``x`` (``<= 1.1``) and ``a`` (``<= 1.21``), where ``P`` is near 1."""
    term = xp.ones_like(x)
    total = x * 0
    for n in range(1, 40):  # NOTE: 1.1**40 / 40! is below 1e-46
        term = term * (-x / n)
        total = total + term / (a + n)
    log_x = xp.log(x)
    head = -xp.expm1(a * log_x - _lgamma1p(xp, a))
    return head - xp.exp(a * log_x - _lgamma1p(xp, a)) * a * total


def _cf_q(xp: Any, a: Array, x: Array) -> Array:
    """``Q(a, x)`` by Legendre's continued fraction (``x > 1.1``, ``x >= a``): ``Gamma(a, x) =
    e**-x x**a / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / ...))``, modified Lentz."""
    tiny = 1e-300
    b = x + 1 - a
    c = xp.full_like(x, 1 / tiny)
    d = 1 / b
    f = d
    for k in range(1, _terms(xp, a)):
        an = -k * (k - a)
        b = b + 2
        d = an * d + b
        d = xp.where(xp.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < tiny, tiny, c)
        d = 1 / d
        f = f * (d * c)
    return _prefactor(xp, a, x) * a * f


def igamma(xp: Any, a: Array, x: Array, upper: bool) -> Array:
    """``P(a, x)`` (or ``Q`` when ``upper``) with PyTorch's values outside ``a, x > 0``: NaN for
    a negative argument, ``P(0, x > 0) = 1``, ``P(a, 0) = 0``, ``P(inf, x) = 0`` (NaN at
    ``x = inf``), ``P(a, inf) = 1``, and their complements for ``Q``."""
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)  # the values "at x = 0" and "at x = inf"
    special = [
        ((x < 0) | (a < 0), _NAN),
        (a == 0, xp.where(x > 0, hi, _NAN)),
        (x == 0, lo),
        (xp.isinf(a), xp.where(xp.isinf(x), _NAN, lo)),
        (xp.isinf(x), hi),
    ]
    done = xp.zeros(x.shape, dtype=bool)
    out = xp.full(x.shape, _NAN)
    for mask, value in special:
        out = xp.where(mask & ~done, value, out)
        done |= mask
    ok = ~done & (a == a) & (x == x)
    cf = ok & (x > 1.1) & (x >= a)
    small_q = ok & ~cf & (x <= 1.1) & xp.where(
        x <= 0.5, a <= -0.4 / xp.log(xp.where(x <= 0.5, x, 0.5)), a <= 1.1 * x)
    series = ok & ~cf & ~(small_q & upper)
    pairs = xp.stack([a, x], axis=-1)
    for mask, fn in ((series, _series_p), (cf, _cf_q), (small_q, _series_q_small)):
        if not upper and fn is _series_q_small:
            continue
        sub = pairs[mask]
        if not sub.size:
            continue
        v = fn(xp, sub[:, 0], sub[:, 1])
        is_q = fn is not _series_p
        out[mask] = v if is_q == upper else 1 - v
    return out
