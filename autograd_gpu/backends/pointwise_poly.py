"""The classical orthogonal polynomials of ``torch.special`` on float64 arrays (NumPy and CuPy
through ``xp``): Chebyshev ``T``, ``U``, ``V``, ``W`` (and shifted, on ``[0, 1]``), Hermite
``H`` and ``He``, Laguerre ``L``, Legendre ``P``, each ``f(x, n)`` elementwise.

PyTorch's definitions (``Math.h``), which these follow case by case:

- ``n`` is truncated to an integer; a negative one (NaN and +-inf too, which its cast turns to
  the most negative integer) gives 0, ``n = 0`` gives 1.
- the three-term recurrence from ``n = 0, 1`` up to ``n``, stopped once a value is NaN (so that
  overflowing values end as NaN, or inf at the first overflow).
- exact values at the ends of the interval (``|x| == 1``; ``x`` 0 or 1 for the shifted ones)
  and, for Chebyshev polynomials inside it and ``n`` past a small bound, the closed forms
  (``cos(n acos x)``, ...).
- Hermite: NaN past ``n = 512`` (``n = 128`` for a float32 result).

NOTE: where PyTorch's recurrence never starts (NaN ``x``, ``n >= 2``) its kernel returns an
uninitialised value; here that is NaN.
"""

from __future__ import annotations

from typing import Any, Callable

Array = Any
_NAN = float("nan")


def _int_order(xp: Any, n: Array) -> Array:
    """``n`` as PyTorch's cast to int64: truncated; NaN, +-inf and out of range: negative."""
    ok = xp.isfinite(n) & (xp.abs(n) < 2.0 ** 63)
    return xp.where(ok, xp.trunc(xp.where(ok, n, -1.0)), -1.0)


def _recurrence(xp: Any, n: Array, p: Array, q: Array,
                step: Callable[[Array, Array, Array, Array], Array], first: int,
                stop_nan: bool = True) -> Array:
    """``q`` after ``q, p = step(k, q, p, sel), q`` for ``k = first .. n`` per element (``sel``:
    the indices of the elements still running), stopped early where ``q`` is NaN when
    ``stop_nan``. The active set is compacted at doubling steps, so that a few large ``n``
    cost only their own elements."""
    out = q.copy()
    idx = xp.arange(n.size)
    top = int(n.max()) if n.size else 0
    k = first
    check = max(2 * first, 16)
    while k <= top and idx.size:
        run = k <= n
        if stop_nan:
            run &= q == q
        r = step(float(k), q, p, idx)
        p, q = xp.where(run, q, p), xp.where(run, r, q)
        k += 1
        if k >= check or k > top:
            check *= 2
            live = k <= n
            if stop_nan:
                live &= q == q
            out[idx] = q
            keep = xp.nonzero(live)[0]
            idx, n, p, q = idx[keep], n[keep], p[keep], q[keep]
            top = int(n.max()) if n.size else 0
    out[idx] = q
    return out


def _finish(xp: Any, shape: Any, pieces: list[tuple[Array, Any]]) -> Array:
    """The result: the value of the first of ``pieces`` (mask, value) that holds."""
    out = xp.full(shape, _NAN)
    for mask, value in reversed(pieces):
        out = xp.where(mask, value, out)
    return out


def chebyshev(xp: Any, kind: str, x: Array, n: Array, shifted: bool) -> Array:
    """Chebyshev polynomials of the first to fourth kinds (``kind`` "t", "u", "v", "w"),
    shifted (``T*_n(x) = T_n(2x - 1)``) or not."""
    n = _int_order(xp, n)
    y = x + x - 1.0 if shifted else x
    start = {"t": y, "u": y + y, "v": y + y - 1.0, "w": y + y + 1.0}[kind]
    even = n % 2 == 0
    sign_n = xp.where(even, 1.0, -1.0)
    # the ends: |x| == 1, or x == 1 and x == 0 when shifted
    right, left = (x == 1.0, x == 0.0) if shifted else (x == 1.0, x == -1.0)
    end_right = {"t": 1.0, "u": n + 1.0, "v": 1.0, "w": 2.0 * n + 1.0}[kind]
    end_left = {"t": sign_n, "u": sign_n * (n + 1.0), "v": sign_n * (2.0 * n + 1.0),
                "w": sign_n}[kind]
    # the closed forms inside (-1, 1), past a bound on n
    bound = {"t": 6, "u": 8, "v": 8, "w": 8}[kind] if not shifted else \
        {"t": 6, "u": 6, "v": 6, "w": 4}[kind]
    inside = (xp.abs(y) < 1.0) & (n > bound)
    theta = xp.arccos(xp.where(inside, y, 0.0))
    if kind == "t":
        closed = xp.cos(n * theta)
    elif kind == "u":
        s = xp.sin(theta)
        closed = xp.where(s != 0, xp.sin((n + 1) * theta) / xp.where(s != 0, s, 1.0),
                          (n + 1) * xp.cos((n + 1) * theta) / y)
    elif kind == "v":
        closed = xp.where(xp.sin(theta / 2) != 1.0,
                          xp.cos((n + 0.5) * theta) / xp.cos(theta / 2), end_left)
    else:
        closed = xp.where(xp.cos(theta / 2) != 1.0,
                          xp.sin((n + 0.5) * theta) / xp.sin(theta / 2),
                          sign_n if shifted else xp.where(y > 0, 2.0 * n + 1.0, sign_n))
    two_y = y + y
    run = n >= 2
    rec = _recurrence(xp, xp.where(run, n, 0.0), xp.ones_like(x), start,
                      lambda k, q, p, i: two_y[i] * q - p, 2)
    return _finish(xp, x.shape, [
        (n < 0, 0.0), (right, end_right), (left, end_left), (inside, closed),
        (n == 0, 1.0), (n == 1, start), (run, rec),
    ])


def hermite(xp: Any, x: Array, n: Array, physicists: bool, limit: int) -> Array:
    """Hermite ``H_n`` (``physicists``) or ``He_n``; NaN past ``n = limit``."""
    n = _int_order(xp, n)
    start = x + x if physicists else x
    run = (n >= 2) & (n <= limit)
    if physicists:
        def step(k: float, q: Array, p: Array, i: Array) -> Array:
            return start[i] * q - (2.0 * (k - 1)) * p  # H_k = 2x H_{k-1} - 2(k-1) H_{k-2}
    else:
        def step(k: float, q: Array, p: Array, i: Array) -> Array:
            return x[i] * q - (k - 1) * p
    rec = _recurrence(xp, xp.where(run, n, 0.0), xp.ones_like(x), start, step, 2, stop_nan=False)
    return _finish(xp, x.shape, [
        (n < 0, 0.0), (n == 0, 1.0), (n == 1, start), (n > limit, _NAN), (run, rec),
    ])


def laguerre(xp: Any, x: Array, n: Array) -> Array:
    """Laguerre ``L_n``: ``L_k = ((2k - 1 - x) L_{k-1} - (k - 1) L_{k-2}) / k``; 1 at 0."""
    n = _int_order(xp, n)
    one_minus = 1.0 - x
    run = n >= 2

    def step(k: float, q: Array, p: Array, i: Array) -> Array:
        j = k - 1
        return ((j + j + one_minus[i]) * q - j * p) / (j + 1)

    rec = _recurrence(xp, xp.where(run, n, 0.0), xp.ones_like(x), one_minus, step, 2)
    return _finish(xp, x.shape, [
        (n < 0, 0.0), (x == 0, 1.0), (n == 0, 1.0), (n == 1, one_minus), (run, rec),
    ])


def legendre(xp: Any, x: Array, n: Array) -> Array:
    """Legendre ``P_n``: ``P_k = ((2k - 1) x P_{k-1} - (k - 1) P_{k-2}) / k``; +-1 at +-1."""
    n = _int_order(xp, n)
    run = n >= 2

    def step(k: float, q: Array, p: Array, i: Array) -> Array:
        j = k - 1
        return ((j + j + 1) * x[i] * q - j * p) / (j + 1)

    rec = _recurrence(xp, xp.where(run, n, 0.0), xp.ones_like(x), x, step, 2)
    end = xp.where((x > 0) | (n % 2 == 0), 1.0, -1.0)
    return _finish(xp, x.shape, [
        (n < 0, 0.0), (xp.abs(x) == 1.0, end), (n == 0, 1.0), (n == 1, x), (run, rec),
    ])
