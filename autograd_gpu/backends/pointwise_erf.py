"""``erf`` and ``erfc`` on float64 arrays by table and Taylor polynomial, written once for
NumPy and CuPy (``xp``): no per-element Python, no branches, no ``exp``.

The method: ``x`` clipped to ``[-6, 6]`` is ``x0 + h`` with ``x0 = k/256`` the nearest grid point
(``|h| <= 1/512``), and ``erf(x0 + h) = erf(x0) + sum_j t_j h**j`` with the Taylor coefficients
``t_j = erf^(j)(x0) / j! = (2/sqrt(pi)) exp(-x0**2) (-1)**(j-1) H_{j-1}(x0) / j!`` (``H`` the
physicists' Hermite polynomials); ``erfc(x0 + h) = erfc(x0) - sum_j t_j h**j``. ``erf`` sums
five terms (``t_6 h**6`` is below 1e-19 of ``erf(x)``), ``erfc`` seven (it needs them relative
to its own small value up to 6). ``erf(x0)`` and ``erfc(x0)`` are held as two doubles (``hi +
lo``, to ~2**-106 relative), computed once with Python integers (the series ``sum (-1)**n
x**(2n+1) / (n! (2n+1))`` in 256-bit fixed point), so that ``hi + (lo + correction)`` rounds
about once. Measured against mpmath: ``erf`` within 0.54 ulp from ``|x| = 0.05`` on, 0.63 from
``5/512`` (where ``h`` is no longer small next to ``x0``), 0.94 below; ``erfc`` within 0.53 ulp.
Against the C library's ``math.erf``: see tests/ops/test_erf_numpy.py.

Rows are indexed by ``round(256 x) mod 4096`` read from the low bits of ``256 x + 1.5 * 2**52``
(the float's mantissa holds the rounded integer), so negative ``x`` find their rows at the top
of the table; ``erf(6)`` rounds to 1 and ``erfc(6)`` is 2e-17 (``erfc`` beyond 6 is the
caller's: see ``pointwise_special.erfc``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

Array = Any

_N = 256  # grid points per unit
_X_MAX = 6.0  # the table covers [-6, 6]
_SIZE = 4096  # rows: a power of two above 2 * 6 * 256 + 1
_TERMS = 7  # t_1 .. t_7 in the table: erf reads t_1 .. t_5, erfc all seven
_MAGIC = 1.5 * 2.0**52  # y + _MAGIC holds round(y) in its low mantissa bits, |y| < 2**51
_BITS = 256  # fixed-point fraction bits of the table's construction
# NOTE: pi to 70 digits (a fact); the constants below follow from it with integer arithmetic
_PI_DIGITS = "3141592653589793238462643383279502884197169399375105820974944592307816"


def _erf_fixed(k: int, two_over_sqrt_pi: int) -> int:
    """``erf(k / _N) * 2**_BITS`` for ``k >= 0``: the alternating series, each term's truncation
    carried into the next at most by the terms' largest ratio (``e**36 < 2**52`` at ``x = 6``),
    so the error stays near ``2**-200``, far below the ``2**-165`` that ``erfc(6)``'s 106 bits
    need."""
    term = (k << _BITS) // _N  # x**(2n+1) / n!
    total = term
    n, k2, n2 = 0, k * k, _N * _N
    while term:
        n += 1
        term = term * k2 // (n2 * n)
        total += (-term if n & 1 else term) // (2 * n + 1)
    return two_over_sqrt_pi * total >> _BITS


def _split(value: int) -> tuple[float, float]:
    """``value * 2**-_BITS`` as ``hi + lo``: ``hi`` rounded to nearest, ``lo`` the rest rounded
    (Python's integer division rounds correctly; ``hi * 2**_BITS`` is an exact integer)."""
    hi = value / (1 << _BITS)
    return hi, (value - int(hi * 2.0**_BITS)) / (1 << _BITS)


def _build() -> dict[str, np.ndarray]:
    """The table (NumPy arrays of ``_SIZE`` rows): ``erf_hi``, ``erf_lo``, ``erfc_hi``,
    ``erfc_lo``, ``t1`` .. ``t7`` and ``t1m`` (``t1 - 1``: ``erf`` adds ``h`` itself, so near 0
    the leading ``(2/sqrt(pi)) h`` keeps its last bit)."""
    one = 1 << _BITS
    pi = int(_PI_DIGITS) * one // 10 ** (len(_PI_DIGITS) - 1)
    two_over_sqrt_pi = (2 << (2 * _BITS)) // math.isqrt(pi << _BITS)
    c0 = 2 / math.sqrt(math.pi)
    c0_minus_one = (two_over_sqrt_pi - one) / one  # rounded once
    names = ["erf_hi", "erf_lo", "erfc_hi", "erfc_lo", "t1m"]
    names += [f"t{j}" for j in range(1, _TERMS + 1)]
    tab = {name: np.zeros(_SIZE) for name in names}
    last = int(_X_MAX * _N)
    for k in range(last + 1):
        e = _erf_fixed(k, two_over_sqrt_pi)
        x0 = k / _N
        g = c0 * math.exp(-x0 * x0)
        # NOTE: t1 - 1 = (c0 - 1) + c0 (exp(-x0**2) - 1): correctly rounded at x0 = 0
        t1m = c0_minus_one + c0 * math.expm1(-x0 * x0)
        hermite, prev, fact = 1.0, 0.0, 1.0  # H_{j-1}(x0), H_{j-2}(x0), j!
        coefs = []
        for j in range(1, _TERMS + 1):
            fact *= j
            coefs.append(g * hermite / fact * (1 if j % 2 else -1))
            hermite, prev = 2 * x0 * hermite - 2 * (j - 1) * prev, hermite
        for sign in (1, -1) if k else (1,):
            row = (sign * k) % _SIZE
            tab["erf_hi"][row], tab["erf_lo"][row] = _split(sign * e)
            tab["erfc_hi"][row], tab["erfc_lo"][row] = _split(one - sign * e)
            for j, c in enumerate(coefs, 1):
                # NOTE: erf is odd: t_j(-x0) = (-1)**(j+1) t_j(x0), exactly
                tab[f"t{j}"][row] = c if sign > 0 or j % 2 else -c
            tab["t1m"][row] = t1m
    # NOTE: row 0 holds -0.0: hi + (lo + s) then keeps the sign of s, so erf(-0.0) is -0.0
    tab["erf_hi"][0] = tab["erf_lo"][0] = -0.0
    return tab


_TABLES: dict[tuple[str, int], dict[str, Array]] = {}


def _table(xp: Any) -> dict[str, Array]:
    """The table as ``xp`` arrays, built on first use (about 0.1 s) and kept per array module
    and device (copied to a GPU once)."""
    cuda = getattr(xp, "cuda", None)
    key = (xp.__name__, cuda.runtime.getDevice() if cuda is not None else 0)
    if key not in _TABLES:
        host = _TABLES.get(("numpy", 0)) or _build()
        _TABLES["numpy", 0] = host
        _TABLES[key] = {name: xp.asarray(a) for name, a in host.items()}
    return _TABLES[key]


def _lookup(xp: Any, x: Array) -> tuple[Array, Array]:
    """``(row, h)``: the rows of the grid points ``x0`` nearest to ``x`` clipped to ``[-6, 6]``
    and ``h = x - x0`` (exact). NaN gives some row and a NaN ``h``."""
    c = xp.clip(x, -_X_MAX, _X_MAX)
    u = c * _N
    u += _MAGIC
    row = u.view(xp.int64) & (_SIZE - 1)
    u -= _MAGIC
    u *= 1.0 / _N
    return row, c - u


def _poly(xp: Any, tab: dict[str, Array], row: Array, h: Array, first: str,
          terms: int) -> Array:
    """``first + t2 h + ... + t_terms h**(terms - 1)`` at ``row``, by Horner's rule."""
    # NOTE: ``xp.take(table, row)``, not ``table.take(row)``: the function dispatches on ``row``
    # (compile's recording sees the lookup; the table's method would not)
    p = xp.take(tab[f"t{terms}"], row)
    for j in range(terms - 1, 1, -1):
        p *= h
        p += xp.take(tab[f"t{j}"], row)
    p *= h
    p += xp.take(tab[first], row)
    return p


def erf(xp: Any, x: Array) -> Array:
    """``erf(x)`` for float64 ``x``: +-1 at +-inf, NaN at NaN, ``erf(-0.0) = -0.0``."""
    tab = _table(xp)
    row, h = _lookup(xp, x)
    s = _poly(xp, tab, row, h, "t1m", 5)
    s *= h
    s += h
    s += xp.take(tab["erf_lo"], row)
    s += xp.take(tab["erf_hi"], row)
    return s


def erfc_table(xp: Any, x: Array) -> Array:
    """``erfc(x)`` for float64 ``x <= 6`` (2 below -6, NaN at NaN); beyond 6 it holds
    ``erfc(6)``, the caller's to replace."""
    tab = _table(xp)
    row, h = _lookup(xp, x)
    s = _poly(xp, tab, row, h, "t1", _TERMS)
    s *= h
    s = xp.take(tab["erfc_lo"], row) - s
    s += xp.take(tab["erfc_hi"], row)
    return s
