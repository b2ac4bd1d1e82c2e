"""Special functions on float64 arrays, written once for NumPy and CuPy (``xp``: the array
module): the error function family (``erf``, ``erfc``, ``erfcx``, ``erfinv``, ``ndtri``,
``log_ndtr``), the gamma family (``lgamma``, ``digamma``, ``trigamma``, Hurwitz ``zeta``) and
the modified Bessel functions ``i0``/``i1`` (and their ``e`` scaled forms). No SciPy.

The methods, all classical (each accurate to a few units in the last place of a double):

- ``erf``, and ``erfc`` up to 6, by table and Taylor polynomial (``pointwise_erf``: within
  about 0.6 ulp); ``erfcx = exp(x**2) erfc(x)`` from them below 6, beyond it (and ``erfc``
  beyond 6) by Laplace's continued fraction ``1/(x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))``
  evaluated backwards. ``exp(+-x**2)`` splits ``x`` in two halves so that ``x**2`` is exact.
- ``erfinv``/``ndtri``: an initial guess from a simple closed form (Winitzki's), then Halley
  steps on ``erf(x) - y`` (centre) or Newton steps on ``log(erfc(x)) - log(1 - y)`` (tails).
- ``lgamma``: the Taylor series of ``lgamma(2 + z)`` for ``|z| <= 1/2`` (coefficients from
  ``zeta(k) - 1``), the recurrence ``lgamma(x + 1) = lgamma(x) + log(x)`` into that window,
  Stirling's series for ``x >= 10`` and the reflection formula for ``x < 0``.
- ``digamma``/``trigamma``: the recurrences up to 10 and the asymptotic series (Bernoulli
  numbers); reflection for negative arguments.
- ``zeta(s, q)``: a direct sum up to ``q + n >= 10`` and the Euler-Maclaurin tail.
- ``i0``/``i1``: the power series (positive terms) for ``|x| <= 20``, the asymptotic series of
  ``exp(-x) sqrt(2 pi x) I(x)`` beyond.

Values at poles, infinities and NaN follow PyTorch's kernels (``i0(inf)`` is nan there, as
its Chebyshev evaluation gives; ``trigamma`` at negative integers is the large finite value of
the reflection formula with a rounded ``sin(pi x)``).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

from . import pointwise_erf as E

Array = Any

_SQRT_PI = math.sqrt(math.pi)
_EULER = 0.57721566490153286061  # Euler-Mascheroni constant
_LOG_2PI_HALF = 0.5 * math.log(2 * math.pi)
_INF, _NAN = math.inf, math.nan


def _bernoulli(n: int) -> list[Fraction]:
    """``B_0 .. B_n`` (``B_1 = -1/2``), exactly, by the recurrence ``sum_k C(m+1, k) B_k = 0``."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum((math.comb(m + 1, k) * b[k] for k in range(m)), Fraction(0)) / (m + 1))
    return b


_B = _bernoulli(30)
_B2K = [float(_B[2 * k]) for k in range(16)]  # B_0, B_2, B_4, ...


def _zeta_minus_one(k: int) -> float:
    """``zeta(k) - 1`` for an integer ``k >= 2`` in double precision: ``sum_{n=2}^{9} n**-k`` and
    the Euler-Maclaurin tail from 10 (Python floats, once, at import)."""
    a = 10.0
    terms = [n ** -float(k) for n in range(2, 10)]
    terms += [a ** (1 - k) / (k - 1), 0.5 * a ** -k]
    rising = float(k)  # k (k+1) ... (k + 2j - 2)
    for j in range(1, 12):
        terms.append(_B2K[j] / math.factorial(2 * j) * rising * a ** (-k - 2 * j + 1))
        rising *= (k + 2 * j - 1) * (k + 2 * j)
    return math.fsum(terms)


# lgamma(2 + z) = (1 - gamma) z + sum_{k>=2} (-1)**k (zeta(k) - 1) / k z**k, for |z| <= 1/2
_LGAMMA2 = [1 - _EULER] + [(-1) ** k * _zeta_minus_one(k) / k for k in range(2, 31)]


def _horner(coefs: list[float], z: Array) -> Array:
    """``sum_k coefs[k] * z**k``."""
    out = z * 0 + coefs[-1]
    for c in reversed(coefs[:-1]):
        out = out * z + c
    return out


def _piecewise(xp: Any, x: Array, pieces: list[tuple[Array, Callable[[Array], Array]]],
               out: Array) -> Array:
    """``out`` with ``fn(x[mask])`` written where each ``mask`` holds: every branch runs on
    its own elements only."""
    for mask, fn in pieces:
        sub = x[mask]
        if sub.size:
            out[mask] = fn(sub)
    return out


def exp_neg_sq(xp: Any, x: Array) -> Array:
    """``exp(-x**2)`` with ``x**2`` exact: ``x = h + l`` with ``h`` of 24 significant bits."""
    h = _high_half(xp, x)
    return xp.exp(-h * h) * xp.exp(-(x - h) * (x + h))


def exp_sq(xp: Any, x: Array) -> Array:
    """``exp(x**2)``, as ``exp_neg_sq``."""
    h = _high_half(xp, x)
    return xp.exp(h * h) * xp.exp((x - h) * (x + h))


def _high_half(xp: Any, x: Array) -> Array:
    """``x`` rounded to 24 significant bits (its square is exact); ``x`` itself from 1e4 on
    (where ``exp(+-x**2)`` is 0 or inf anyway)."""
    return xp.where(xp.abs(x) < 1e4, x.astype("float32").astype("float64"), x)


# ---- the error function family --------------------------------------------------------------

erf = E.erf  # NOTE: the table of pointwise_erf (also NumPy's backend.erf): one erf for all


def _erfcx_far(a: Array) -> Array:
    """``exp(a**2) erfc(a)`` for ``a >= 6`` by Laplace's continued fraction, evaluated
    backwards (20 terms: 1e-16 from 5 on)."""
    f = a
    for k in range(20, 0, -1):
        f = a + (0.5 * k) / f
    return (1 / _SQRT_PI) / f  # NOTE: not 1 / (sqrt(pi) f), which overflows near the top


def erfcx_pos(xp: Any, a: Array) -> Array:
    """``exp(a**2) erfc(a)`` for ``a >= 0`` (and nan)."""
    return _piecewise(xp, a, [
        (a < 6, lambda s: exp_sq(xp, s) * E.erfc_table(xp, s)),
        (a >= 6, _erfcx_far),
    ], xp.full_like(a, _NAN))


def erfc(xp: Any, x: Array) -> Array:
    def far(s: Array) -> Array:
        s = xp.minimum(s, 30.0)  # NOTE: erfc is 0 from 27.3 on; no inf * 0 in exp_neg_sq
        return exp_neg_sq(xp, s) * _erfcx_far(s)

    return _piecewise(xp, x, [(x > 6, far)], E.erfc_table(xp, x))


def erfcx(xp: Any, x: Array) -> Array:
    """``exp(x**2) erfc(x)``: 0 at inf, inf below about -26.6 (PyTorch's values)."""
    a = xp.abs(x)
    pos = erfcx_pos(xp, xp.where(a == _INF, 0.0, a))
    pos = xp.where(a == _INF, 0.0, pos)
    # NOTE: erfcx(-a) = 2 exp(a**2) - erfcx(a)
    neg = xp.where(a == _INF, _INF, 2 * exp_sq(xp, a) - pos)
    return xp.where(x < 0, neg, pos)


def _inverse_erf(xp: Any, a: Array, q: Array) -> Array:
    """The ``x >= 0`` with ``erf(x) = a`` and ``erfc(x) = q`` for ``0 <= a < 1``, ``q = 1 - a``
    given accurately where ``a >= 1/2`` (the tail: ``q`` may be far below ``1 - a``'s
    rounding)."""
    out = xp.empty_like(a)
    central = a < 0.5

    def guess(a: Array, log_q: Array) -> Array:
        # NOTE: Winitzki's closed form, relative error < 2e-3, in terms of log(1 - a**2)
        k = 0.147
        lg = log_q + xp.log1p(a)
        t = 2 / (math.pi * k) + 0.5 * lg
        return xp.sqrt(xp.sqrt(t * t - lg / k) - t)

    def centre(a: Array) -> Array:
        x = guess(a, xp.log1p(-a))
        for _ in range(3):  # Halley on erf(x) - a: cubic convergence
            f = erf(xp, x) - a
            d = (2 / _SQRT_PI) * exp_neg_sq(xp, x)
            x = x - f / (d + x * f)
        return x

    def tail(pair: Array) -> Array:
        a, q = pair[:, 0], pair[:, 1]
        log_q = xp.log(q)
        x = guess(a, log_q)
        for _ in range(5):  # Newton on log(erfc(x)) - log(q) = log(erfcx(x)) - x**2 - log(q)
            c = erfcx_pos(xp, x)
            x = x + (xp.log(c) - x * x - log_q) * (0.5 * _SQRT_PI) * c
        return x

    out = _piecewise(xp, a, [(central, centre)], out)
    pair = xp.stack([a, q], axis=-1)
    sub = pair[~central]
    if sub.size:
        out[~central] = tail(sub)
    return out


def erfinv(xp: Any, y: Array) -> Array:
    a = xp.abs(y)
    inside = a < 1
    safe = xp.where(inside, a, 0.0)
    x = _inverse_erf(xp, safe, 1 - safe)
    x = xp.where(inside, x, xp.where(a == 1, _INF, _NAN))
    return xp.copysign(x, y)  # NOTE: erfinv(-0.0) is -0.0; nan stays nan


def ndtri(xp: Any, p: Array) -> Array:
    """The standard normal quantile: ``sqrt(2) erfinv(2p - 1)``, with ``q = 2 min(p, 1 - p)``
    exact in both tails."""
    inside = (p > 0) & (p < 1)
    safe = xp.where(inside, p, 0.5)
    low = safe < 0.5
    q = 2 * xp.where(low, safe, 1 - safe)
    x = _inverse_erf(xp, 1 - q, q) * math.sqrt(2)
    x = xp.where(low, -x, x)
    edge = xp.where(p == 0, -_INF, xp.where(p == 1, _INF, _NAN))
    return xp.where(inside, x, edge)


def log_ndtr(xp: Any, x: Array) -> Array:
    """``log(ndtr(x))``: ``log(erfcx(-x/sqrt 2) / 2) - x**2 / 2`` for ``x < -1``, else
    ``log1p(-erfc(x/sqrt 2) / 2)`` (PyTorch's split)."""
    t = x * math.sqrt(0.5)
    low = x < -1
    a = xp.where(low, -t, 0.0)
    left = xp.log(erfcx_pos(xp, xp.where(a == _INF, 0.0, a)) / 2) - a * a
    left = xp.where(a == _INF, -_INF, left)
    right = xp.log1p(-erfc(xp, xp.where(low, 0.0, t)) / 2)
    return xp.where(low, left, right)


# ---- the gamma family ----------------------------------------------------------------------

def _sinpi_abs(xp: Any, x: Array) -> Array:
    """``|sin(pi x)|`` with the argument reduced exactly (0 at the integers)."""
    r = xp.abs(x - 2 * xp.round(0.5 * x))  # in [0, 1], exact
    r = xp.where(r > 0.5, 1 - r, r)
    return xp.sin(math.pi * r)


def _stirling(xp: Any, x: Array) -> Array:
    """``lgamma(x)`` for ``x >= 10``."""
    inv = 1 / x
    inv2 = inv * inv
    series = _horner([_B2K[k] / (2 * k * (2 * k - 1)) for k in range(1, 11)], inv2) * inv
    return (x - 0.5) * xp.log(x) - x + _LOG_2PI_HALF + series


def _lgamma_pos(xp: Any, x: Array) -> Array:
    """``lgamma(x)`` for ``x > 0`` finite."""

    def near_two(x: Array) -> Array:  # x in [1.5, 2.5]
        return _horner(_LGAMMA2, x - 2) * (x - 2)

    def near_one(x: Array) -> Array:  # x in [0.5, 1.5): lgamma(x) = lgamma(x + 1) - log(x)
        z = x - 1  # exact
        return _horner(_LGAMMA2, z) * z - xp.log1p(z)

    def small(x: Array) -> Array:  # x in (0, 0.5): lgamma(x) = lgamma(x + 2) - log(x (1 + x))
        return _horner(_LGAMMA2, x) * x - xp.log1p(x) - xp.log(x)

    def middle(x: Array) -> Array:  # x in (2.5, 10): down to [1.5, 2.5]
        prod = x * 0 + 1.0
        z = x
        for _ in range(8):
            down = z > 2.5
            z = xp.where(down, z - 1, z)  # exact
            prod = xp.where(down, prod * z, prod)
        return near_two(z) + xp.log(prod)

    return _piecewise(xp, x, [
        (x < 0.5, small), ((x >= 0.5) & (x < 1.5), near_one), ((x >= 1.5) & (x <= 2.5), near_two),
        ((x > 2.5) & (x < 10), middle), (x >= 10, lambda s: _stirling(xp, s)),
    ], xp.empty_like(x))


def lgamma(xp: Any, x: Array) -> Array:
    """``log|gamma(x)|``: inf at 0, the negative integers and +-inf (PyTorch's values)."""
    finite = xp.isfinite(x)
    pos = finite & (x > 0)
    out = xp.full(x.shape, _INF, dtype=x.dtype)
    out = _piecewise(xp, x, [(pos, lambda s: _lgamma_pos(xp, s))], out)
    neg = finite & (x < 0)

    def reflect(s: Array) -> Array:
        # NOTE: gamma(x) gamma(1 - x) = pi / sin(pi x); inf where sin(pi x) is 0
        return math.log(math.pi) - xp.log(_sinpi_abs(xp, s)) - _lgamma_pos(xp, 1 - s)

    out = _piecewise(xp, x, [(neg, reflect)], out)
    return xp.where(x != x, x, out)


def _psi_series(xp: Any, x: Array, order: int) -> Array:
    """``digamma`` (order 0) or ``trigamma`` (order 1) for ``x >= 10``: the asymptotic series."""
    inv = 1 / x
    inv2 = inv * inv
    if order == 0:
        tail = _horner([_B2K[k] / (2 * k) for k in range(1, 10)], inv2) * inv2
        return xp.log(x) - 0.5 * inv - tail
    tail = _horner([_B2K[k] for k in range(1, 10)], inv2) * inv2 * inv
    return inv + 0.5 * inv2 + tail


def _psi_pos(xp: Any, x: Array, order: int) -> Array:
    """``digamma``/``trigamma`` for ``x > 0`` finite: recurrence up to 10."""
    total = x * 0
    z = x
    n = 10 - int(math.floor(float(x.min()))) if x.size else 0
    for _ in range(max(n, 0)):
        up = z < 10
        total = total + xp.where(up, 1 / z if order == 0 else 1 / (z * z), 0.0)
        z = xp.where(up, z + 1, z)
    series = _psi_series(xp, z, order)
    return series - total if order == 0 else series + total


def digamma(xp: Any, x: Array) -> Array:
    """``d lgamma / dx``: -inf at +0, inf at -0, nan at the negative integers and -inf."""
    pos = (x > 0) & (x < _INF)
    out = xp.where(x == 0, xp.copysign(_INF, -x), xp.where(x == _INF, _INF, _NAN))
    out = _piecewise(xp, x, [(pos, lambda s: _psi_pos(xp, s, 0))], out)
    neg = (x < 0) & (x > -_INF) & (x != xp.floor(x))

    def reflect(s: Array) -> Array:
        r = s - xp.trunc(s)  # NOTE: psi(1 - x) - psi(x) = pi / tan(pi x)
        return _psi_pos(xp, 1 - s, 0) - math.pi / xp.tan(math.pi * r)

    return _piecewise(xp, x, [(neg, reflect)], out)


def trigamma(xp: Any, x: Array) -> Array:
    """``d**2 lgamma / dx**2``; below 1/2 by the reflection ``pi**2 / sin(pi x)**2 -
    trigamma(1 - x)`` with a plain ``sin(pi * x)``, as PyTorch (finite at the negative
    integers)."""
    pos = (x >= 0.5) & (x < _INF)
    out = xp.where(x == _INF, 0.0, _NAN)
    out = _piecewise(xp, x, [(pos, lambda s: _psi_pos(xp, s, 1))], out)
    low = (x < 0.5) & (x > -_INF)

    def reflect(s: Array) -> Array:
        return (math.pi ** 2) / xp.sin(math.pi * s) ** 2 - _psi_pos(xp, 1 - s, 1)

    return _piecewise(xp, x, [(low, reflect)], out)


def zeta(xp: Any, s: Array, q: Array) -> Array:
    """Hurwitz's ``zeta(s, q) = sum_k (q + k)**-s`` with PyTorch's domain: inf at ``s == 1``
    and at integer ``q <= 0``, nan for ``s < 1`` and for non-integer ``s`` with ``q < 0``."""
    s, q = xp.broadcast_arrays(s, q)
    ok = (s > 1) & (q > 0) & (q < _INF) & (s < _INF)
    # NOTE: a negative non-integer q sums its terms straight through (integer s only)
    ok |= (s > 1) & (s < _INF) & (q < 0) & (q > -_INF) & (q != xp.floor(q)) & (s == xp.floor(s))
    out = xp.where(s == 1, _INF, _NAN)
    # NOTE: PyTorch's order of checks: s == 1, s < 1, then the poles (a nan s included)
    out = xp.where((s != 1) & ~(s < 1) & (q <= 0) & (q == xp.floor(q)), _INF, out)
    # NOTE: s = inf leaves the terms (q + k)**-inf: 1 for q + k == 1, inf below 1, else 0
    some_below_one = ((q > 0) & (q < 1)) | ((q < 0) & (q > -_INF) & (q != xp.floor(q)))
    out = xp.where((s == _INF) & some_below_one, _INF, xp.where((s == _INF) & (q == 1), 1.0, out))
    pair = xp.stack([s, q], axis=-1)[ok]
    if pair.size:
        out[ok] = _zeta_ok(xp, pair[:, 0], pair[:, 1])
    return out


def _zeta_ok(xp: Any, s: Array, q: Array) -> Array:
    """``zeta(s, q)`` for ``s > 1`` finite and ``q`` finite away from the poles."""
    lift = xp.maximum(xp.ceil(10 - q), 0)  # terms summed directly: then q + lift >= 10
    n = int(lift.max())
    total = s * 0
    chunk = max(1, min(n, (1 << 20) // max(s.size, 1)))
    for start in range(0, n, chunk):
        k = xp.arange(start, min(start + chunk, n), dtype=s.dtype)
        terms = (q[:, None] + k) ** -s[:, None]
        total = total + xp.where(k < lift[:, None], terms, 0.0).sum(axis=1)
    a = q + lift
    # NOTE: Euler-Maclaurin from a: a**(1-s)/(s-1) + a**-s/2 + sum_j B_2j/(2j)! (s)_(2j-1)
    # a**(-s-2j+1); a >= 10 makes 12 terms enough.
    power = a ** -s
    tail = a * power / (s - 1) + 0.5 * power
    factor = s * power / a  # s a**(-s-1)
    inv2 = 1 / (a * a)
    for j in range(1, 13):
        tail = tail + (_B2K[j] / math.factorial(2 * j)) * factor
        factor = factor * (s + 2 * j - 1) * (s + 2 * j) * inv2
    return total + tail


def polygamma(xp: Any, n: int, x: Array) -> Array:
    """``d**(n+1) lgamma / dx**(n+1)`` for ``n >= 2``: ``(-1)**(n+1) n! zeta(n + 1, x)``."""
    sign = 1.0 if n % 2 else -1.0
    return sign * float(math.factorial(n)) * zeta(xp, xp.full(x.shape, n + 1.0), x)


# ---- modified Bessel functions -------------------------------------------------------------

def _bessel_series(xp: Any, a: Array, nu: int) -> Array:
    """``I_nu(a) / (a/2)**nu`` for ``0 <= a <= 20``: ``sum_k (a**2/4)**k / (k! (k + nu)!)``."""
    t = a * a * 0.25
    term = a * 0 + 1.0
    total = term
    for k in range(1, 40):
        term = term * t / (k * (k + nu))
        total = total + term
    return total


def _bessel_asymptotic(xp: Any, a: Array, nu: int) -> Array:
    """``sqrt(2 pi a) exp(-a) I_nu(a)`` for ``a > 20``: ``sum_k (-1)**k a_k(nu) / a**k``,
    ``a_k = prod_{j<=k} (4 nu**2 - (2j - 1)**2) / (8j)``."""
    mu = 4.0 * nu * nu
    term = a * 0 + 1.0
    total = term
    for k in range(1, 36):
        term = term * -(mu - (2 * k - 1) ** 2) / (8 * k * a)
        total = total + term
    return total


def bessel_i(xp: Any, x: Array, nu: int, scaled: bool) -> Array:
    """``I_nu(x)`` (``nu`` 0 or 1), times ``exp(-|x|)`` when ``scaled``."""
    a = xp.abs(x)
    small = a <= 20
    finite = a < _INF

    def series(s: Array) -> Array:
        out = _bessel_series(xp, s, nu) * (0.5 * s if nu else 1.0)
        return out * xp.exp(-s) if scaled else out

    def asymptotic(s: Array) -> Array:
        out = _bessel_asymptotic(xp, s, nu) / xp.sqrt(2 * math.pi * s)
        # NOTE: inf once exp(|x|) overflows (past 709.78), as PyTorch's
        return out if scaled else out * xp.exp(s)

    out = xp.where(a == _INF, 0.0 if scaled else _NAN, _NAN)
    out = _piecewise(xp, a, [(small, series), (~small & finite, asymptotic)], out)
    return xp.where(x < 0, -out, out) if nu else out  # NOTE: i1(-0.0) is +0.0, as PyTorch's


def spherical_j0(xp: Any, x: Array) -> Array:
    """``sin(x) / x``: its Taylor series below 1/2, 0 at +-inf."""
    x2 = x * x
    series = _horner([(-1) ** k / math.factorial(2 * k + 1) for k in range(10)], x2)
    out = xp.where(xp.abs(x) < 0.5, series, xp.sin(x) / xp.where(x == 0, 1.0, x))
    return xp.where(xp.isinf(x), 0.0, out)
