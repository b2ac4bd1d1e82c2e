"""``torch.special``'s Bessel functions (``bessel_j0/j1/y0/y1``, ``modified_bessel_k0/k1``,
``scaled_modified_bessel_k0/k1``, ``airy_ai``), orthogonal polynomials (Chebyshev, shifted
Chebyshev, Hermite, Laguerre, Legendre) and the incomplete gamma functions (``igamma``,
``igammac``, ``special.gammainc``/``gammaincc``) against torch.

Bounds (float64, against torch): the Bessel functions and Airy's use PyTorch's approximations:
1e-12 relative with 1e-15 absolute (near their zeros the absolute error is what is meaningful);
the polynomials follow PyTorch's recurrences: 1e-12 relative, 1e-13 absolute. ``igamma``:
1e-12 relative where torch's own kernel is accurate; torch's Temme expansion (``20 < a < 200``
with ``|x - a| < 0.3 a``, and near ``x = a`` for larger ``a``) is off by up to 2e-9, so there the
test is against mpmath (ours: 5e-13).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck
from tests.ops.test_pointwise import _data, _lib, compare, outcome, same

BESSEL = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
          "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
          "airy_ai"]
POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]
EDGES = [0.0, -0.0, 1e-300, 1e-6, 1.0, 2.0, 2.09, -2.09, 5.0, 5.000001, 8.0, 8.33, 100.0,
         104.0, 1e10, 1e300, -1e-6, -1.0, -5.0, -30.0, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("name", BESSEL)
def test_bessel(device: str, name: str) -> None:
    """Values (a grid and the edges), dtypes, layouts, ``out=``, float16 refused, no grad."""
    fn = getattr(ag.special, name)
    grid = np.concatenate([np.linspace(-40, 40, 161), np.geomspace(1e-3, 700, 40), EDGES])
    compare(lambda m: getattr(m.special, name)(_lib(m, grid, device)), rtol=1e-12, atol=1e-15)
    for dtype in ("float32", "int64", "bool"):
        a = _data(-12, 12, dtype, (3, 4))
        compare(lambda m, a=a: getattr(m.special, name)(_lib(m, a, device).t()))
    a = _data(0.5, 12, "float64", (3, 4))
    for dt in ("float32", "int64"):
        def with_out(m: Any, dt: str = dt) -> Any:
            out = m.empty(3, 4, dtype=getattr(m, dt), device=device if m is ag else "cpu")
            assert getattr(m.special, name)(_lib(m, a, device), out=out) is out
            return out
        compare(with_out, rtol=1e-6)
    compare(lambda m: getattr(m.special, name)(_lib(m, a.astype("float16"), device)))
    compare(lambda m: getattr(m.special, name)(1.5))
    x = ag.tensor([0.5, 2.0], device=device, requires_grad=True)
    y = fn(x)
    assert not y.requires_grad and y.grad_fn is None


XS = [math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 0.3, -0.7, 0.999, 1.2, 0.25,
      0.75, 1e-3]
NS = [math.nan, math.inf, -math.inf, -1.0, 0.0, 1.0, 2.0, 2.7, -0.5, 3, 4, 5, 6, 7.0, 9, 10.0,
      13, 40, 129, 600.0, 1e20]


@pytest.mark.parametrize("name", POLYS)
def test_polynomial(device: str, name: str) -> None:
    """Every case of PyTorch's definition (``n`` NaN, infinite, negative, not an integer,
    large; the ends of the interval; the closed forms), promotion, broadcasting, ``out=``."""
    x, n = (v.ravel() for v in np.meshgrid(np.array(XS), np.array(NS)))
    for pick, rtol in ((~(n > 100), 1e-12), (n > 100, 1e-10)):
        # NOTE: n > 100: cos(n acos x) and long recurrences carry n ulps of rounding (with
        # PyTorch's fused multiply-adds: 1e-11 apart at n = 600)
        u, v = x[pick], n[pick]
        compare(lambda m, u=u, v=v: getattr(m.special, name)(_lib(m, u, device),
                                                             _lib(m, v, device)),
                rtol=rtol, atol=1e-13)
    # NOTE: a NaN x with n >= 2 leaves PyTorch's kernel value uninitialised: only n < 2 here
    nan_x = np.full(5, math.nan)
    compare(lambda m: getattr(m.special, name)(_lib(m, nan_x, device),
                                               _lib(m, np.array([-1.0, 0, 1, 0.5, 1.7]), device)))
    a, k = _data(-1.5, 1.5, "float32", (3, 1)), _data(0, 12, "int64", (4,))
    f = getattr(ag.special, name)
    compare(lambda m: getattr(m.special, name)(_lib(m, a, device), _lib(m, k, device)))
    compare(lambda m: getattr(m.special, name)(_lib(m, k, device), 2.5))
    compare(lambda m: getattr(m.special, name)(0.3, _lib(m, k, device)))
    compare(lambda m: getattr(m.special, name)(_lib(m, a.astype("float64"), device), 5))
    compare(lambda m: getattr(m.special, name)(_lib(m, a.astype("float16"), device), 3))
    compare(lambda m: getattr(m.special, name)(0.5, 2.0))

    def with_out(m: Any) -> Any:
        out = m.empty(3, 4, dtype=m.float64, device=device if m is ag else "cpu")
        assert getattr(m.special, name)(_lib(m, a, device), _lib(m, k, device), out=out) is out
        return out

    compare(with_out, rtol=1e-6, atol=1e-6)  # NOTE: a float32 result (torch's in float32)
    y = f(ag.tensor([0.5, 0.2], device=device, requires_grad=True), 3)
    assert not y.requires_grad and y.grad_fn is None


IGAMMA = {"igamma": lambda m: m.igamma, "igammac": lambda m: m.igammac,
          "gammainc": lambda m: m.special.gammainc, "gammaincc": lambda m: m.special.gammaincc}


@pytest.mark.parametrize("name", sorted(IGAMMA))
def test_igamma(device: str, name: str) -> None:
    """Values against torch away from its Temme region, the edge cases, dtypes (float16 in,
    integers refused), broadcasting, ``out=``, methods and in-place forms."""
    A = [1e-3, 0.1, 0.5, 1.0, 1.5, 3.0, 9.9, 10.0, 15.0, 250.0, 1e4]
    X = [1e-5, 0.01, 0.3, 0.7, 1.0, 1.1, 1.2, 3.0, 8.0, 30.0, 100.0, 700.0]
    a, x = (v.ravel() for v in np.meshgrid(np.array(A), np.array(X)))
    keep = ~(((a > 20) & (a < 200) & (np.abs(x - a) < 0.3 * a)) |
             ((a > 200) & (np.abs(x - a) < 4.5 * np.sqrt(a))))
    a, x = np.concatenate([a[keep], [-1, 0, 0, 0, 1, math.inf, math.inf, 2, math.nan, 1, 2]]), \
        np.concatenate([x[keep], [1, 0, 1, -1, 0, 1, math.inf, math.inf, 1, math.nan, -0.0]])
    f = IGAMMA[name]
    compare(lambda m: f(m)(_lib(m, a, device), _lib(m, x, device)), rtol=1e-12, atol=1e-300)
    p, q = _data(0.1, 5, "float32", (3, 1)), _data(0.1, 5, "float64", (4,), seed=1)
    compare(lambda m: f(m)(_lib(m, p, device), _lib(m, q, device)))
    compare(lambda m: f(m)(_lib(m, p, device), _lib(m, q.astype("float32"), device)))
    compare(lambda m: f(m)(_lib(m, p.astype("float16"), device),
                           _lib(m, q.astype("float16"), device)))
    compare(lambda m: f(m)(_lib(m, np.array([1, 2]), device), _lib(m, np.array([1, 3]), device)))
    compare(lambda m: f(m)(_lib(m, p, device), 2.0))
    compare(lambda m: f(m)(2.0, _lib(m, p, device)))

    def with_out(m: Any) -> Any:
        out = m.empty(3, 4, dtype=m.float64, device=device if m is ag else "cpu")
        assert f(m)(_lib(m, p, device), _lib(m, q, device), out=out) is out
        return out

    compare(with_out)
    short = name.replace("gammaincc", "igammac").replace("gammainc", "igamma")
    compare(lambda m: getattr(_lib(m, p, device), short)(_lib(m, q.astype("float32"), device)))
    compare(lambda m: getattr(_lib(m, p, device).clone(), short + "_")(
        _lib(m, np.array([1.0]), device)))
    compare(lambda m: getattr(_lib(m, np.array([1, 2]), device), short + "_")(
        _lib(m, np.array([1.0, 2.0], dtype="float32"), device)))


@pytest.mark.parametrize("upper", [False, True])
def test_igamma_grad(device: str, upper: bool) -> None:
    """The derivative in ``x`` (torch's values, gradcheck and gradgradcheck); ``a``'s raises
    PyTorch's error at backward."""
    name = "igammac" if upper else "igamma"
    a, x = _data(0.5, 4, "float64", (3, 4)), _data(0.2, 5, "float64", (4,), seed=2)

    def run(m: Any) -> Any:
        t = _lib(m, x, device, grad=True)
        out = getattr(m, name)(_lib(m, a, device), t)
        out.backward(_lib(m, np.linspace(-1, 1, 12).reshape(3, 4), device))
        return out.grad_fn.name(), t.grad

    ours, theirs = outcome(run)
    assert ours[0] == theirs[0]
    same(ours[1], theirs[1], rtol=1e-12, atol=1e-15)
    ta = ag.tensor(a, device=device)
    fn = lambda u: getattr(ag, name)(ta, u)  # noqa: E731
    u = ag.tensor(x, device=device, requires_grad=True)
    assert gradcheck(fn, (u,))
    assert gradgradcheck(fn, (u,))

    def bad(m: Any) -> Any:
        getattr(m, name)(_lib(m, a, device, grad=True), _lib(m, x, device)).sum().backward()

    ours, theirs = outcome(bad)
    assert ours == theirs, (ours, theirs)


def test_igamma_accuracy(device: str) -> None:
    """Against mpmath where torch's Temme expansion is less accurate (2e-9): 5e-13."""
    import mpmath  # NOTE: a dependency of the oracle (torch -> sympy -> mpmath)
    rng = np.random.default_rng(3)
    a = np.exp(rng.uniform(math.log(20), math.log(1e4), 60))
    x = a * (1 + rng.uniform(-0.3, 0.3, 60))
    for upper in (False, True):
        ours = ag.igamma(ag.tensor(a, device=device), ag.tensor(x, device=device)) if not upper \
            else ag.igammac(ag.tensor(a, device=device), ag.tensor(x, device=device))
        with mpmath.workdps(30):
            exact = np.array([float(mpmath.gammainc(s, t, mpmath.inf, regularized=True) if upper
                                    else mpmath.gammainc(s, 0, t, regularized=True))
                              for s, t in zip(a, x)])
        err = np.abs(ours.cpu().numpy() - exact) / exact
        assert err.max() <= 5e-13, (upper, err.max())


def test_names() -> None:
    """The names are torch's, and ``torch.igamma``/``igammac`` and the methods exist."""
    for name in BESSEL + POLYS + ["gammainc", "gammaincc"]:
        assert hasattr(torch.special, name) and callable(getattr(ag.special, name)), name
    assert callable(ag.igamma) and callable(ag.Tensor.igammac_)
