"""Special functions against torch, and their accuracy against high-precision values: ``erf``,
``erfc``, ``erfinv``, ``lgamma``, ``digamma``, ``polygamma``, ``mvlgamma``, ``i0`` (``torch.*``,
methods, in-place forms) and the ``torch.special`` namespace (its aliases, ``ndtr``, ``ndtri``,
``log_ndtr``, ``erfcx``, ``i0e``, ``i1``, ``i1e``, ``entr``, ``xlogy``, ``xlog1py``, ``zeta``,
``expit``, ``softmax``, ...).

Achieved accuracy (float64, relative, over the ranges of ``ACCURACY``) against mpmath at 40
digits: at most 2e-15 for ``erf``, ``erfcx``, ``lgamma``, ``polygamma``, ``zeta`` and the Bessel
functions, 5e-15 for ``erfc``, ``erfinv`` and ``log_ndtr``, 1e-14 for ``digamma`` (away from its
zero), 1e-13 for ``lgamma`` of negative arguments. Against torch: 1e-13 (``WIDE``, ``UNARY``),
except where torch's own kernel is less accurate: ``polygamma(1, x)`` (torch: 5e-10),
``digamma`` and ``lgamma`` near their zeros (absolute 1e-14). NaN, infinities and poles as
torch's kernels (``test_edges``, ``test_zeta_domain``).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck
from tests.ops.test_pointwise import LAYOUTS, _data, _lib, compare, outcome, same

S = "special"


def _fn(path: str, *args: Any, **kw: Any) -> Callable[[Any, Any], Any]:
    """``m.<path>(x, *args, **kw)``; ``path`` may go through ``special``."""

    def call(m: Any, x: Any) -> Any:
        f: Any = m
        for part in path.split("."):
            f = getattr(f, part)
        return f(x, *args, **kw)

    call.__name__ = path
    return call


# name -> (function, lo, hi, rtol against torch in float64, atol)
UNARY: dict[str, tuple[Callable[[Any, Any], Any], float, float, float, float]] = {
    "erf": (_fn("erf"), -4, 4, 1e-14, 0), "erfc": (_fn("erfc"), -4, 8, 1e-13, 0),
    "erfinv": (_fn("erfinv"), -0.99, 0.99, 1e-14, 0), "lgamma": (_fn("lgamma"), 0.1, 12, 1e-13, 1e-14),
    "lgamma_neg": (_fn("lgamma"), -4.9, -0.1, 1e-12, 1e-13),
    "digamma": (_fn("digamma"), 0.1, 12, 1e-13, 1e-14), "i0": (_fn("i0"), -8, 8, 1e-14, 0),
    "polygamma0": (lambda m, x: m.polygamma(0, x), 0.1, 8, 1e-13, 1e-14),
    "polygamma1": (lambda m, x: m.polygamma(1, x), 0.1, 8, 1e-9, 0),
    "polygamma2": (lambda m, x: m.polygamma(2, x), 0.1, 8, 1e-13, 0),
    "polygamma4": (lambda m, x: m.polygamma(4, x), 0.1, 8, 1e-13, 0),
    "mvlgamma1": (lambda m, x: m.mvlgamma(x, 1), 0.1, 8, 1e-13, 1e-14),
    "mvlgamma3": (lambda m, x: m.mvlgamma(x, 3), 1.1, 8, 1e-13, 1e-14),
    "ndtr": (_fn("special.ndtr"), -6, 6, 1e-14, 0),
    "ndtri": (_fn("special.ndtri"), 0.01, 0.99, 1e-14, 0),
    "log_ndtr": (_fn("special.log_ndtr"), -10, 5, 1e-13, 0),
    "erfcx": (_fn("special.erfcx"), -3, 10, 1e-13, 0),
    "i0e": (_fn("special.i0e"), -10, 10, 1e-14, 0), "i1": (_fn("special.i1"), -8, 8, 1e-14, 0),
    "i1e": (_fn("special.i1e"), -10, 10, 1e-14, 0),
    "entr": (_fn("special.entr"), 0.01, 4, 1e-14, 0),
    "special.erf": (_fn("special.erf"), -3, 3, 1e-14, 0),
    "special.erfc": (_fn("special.erfc"), -3, 3, 1e-13, 0),
    "special.erfinv": (_fn("special.erfinv"), -0.9, 0.9, 1e-14, 0),
    "special.i0": (_fn("special.i0"), -5, 5, 1e-14, 0),
    "special.gammaln": (_fn("special.gammaln"), 0.1, 9, 1e-13, 1e-14),
    "special.digamma": (_fn("special.digamma"), 0.1, 9, 1e-13, 1e-14),
    "special.psi": (_fn("special.psi"), 0.1, 9, 1e-13, 1e-14),
    "special.polygamma": (lambda m, x: m.special.polygamma(3, x), 0.1, 9, 1e-13, 0),
    "special.multigammaln": (lambda m, x: m.special.multigammaln(x, 2), 0.6, 9, 1e-13, 1e-14),
    "special.expit": (_fn("special.expit"), -5, 5, 1e-15, 0),
    "special.expm1": (_fn("special.expm1"), -2, 2, 1e-15, 0),
    "special.exp2": (_fn("special.exp2"), -4, 4, 1e-15, 0),
    "special.log1p": (_fn("special.log1p"), -0.5, 3, 1e-15, 0),
    "special.sinc": (_fn("special.sinc"), -3, 3, 1e-15, 0),
    "special.round": (_fn("special.round"), -4, 4, 0, 0),
    "special.round1": (_fn("special.round", decimals=1), -4, 4, 0, 0),
    "special.logit": (_fn("special.logit"), 0.05, 0.95, 1e-15, 0),
    "special.logit_eps": (_fn("special.logit", 0.2), 0.05, 0.95, 1e-15, 0),
    "special.softmax": (_fn("special.softmax", 0), -3, 3, 1e-14, 0),
    "special.log_softmax": (_fn("special.log_softmax", -1), -3, 3, 1e-14, 0),
    "special.logsumexp": (_fn("special.logsumexp", 0), -3, 3, 1e-14, 0),
}
NO_GRADGRAD = {"special.round", "special.round1"}
CASES = [("float64", "contiguous"), ("float64", "transposed"), ("float32", "sliced"),
         ("float16", "contiguous"), ("int64", "contiguous"), ("bool", "contiguous")]


@pytest.mark.parametrize("dtype,layout", CASES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_values(device: str, name: str, dtype: str, layout: str) -> None:
    fn, lo, hi, rtol, atol = UNARY[name]
    a = _data(lo, hi, dtype, (3, 4))
    if dtype == "float64":
        compare(lambda m: fn(m, LAYOUTS[layout](_lib(m, a, device))), rtol=rtol, atol=atol)
    else:  # NOTE: PyTorch's float32/float16 kernels are their own approximations
        compare(lambda m: fn(m, LAYOUTS[layout](_lib(m, a, device))),
                atol=1e-5 if dtype != "float16" else None)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0)])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_shapes(device: str, name: str, shape: tuple[int, ...]) -> None:
    fn, lo, hi, rtol, atol = UNARY[name]
    a = _data(lo, hi, "float64", shape)
    compare(lambda m: fn(m, _lib(m, a, device)), rtol=rtol, atol=atol)


# values across the whole range, where torch's kernels are accurate (float64)
WIDE: dict[str, tuple[Callable[[Any, Any], Any], list[tuple[float, float]], float, float]] = {
    "erf": (_fn("erf"), [(-7, 7), (-1e-3, 1e-3)], 1e-14, 0),
    "erfc": (_fn("erfc"), [(-7, 27)], 1e-13, 0),
    "erfinv": (_fn("erfinv"), [(-1, 1), (0.999999, 1)], 1e-13, 0),
    "erfcx": (_fn("special.erfcx"), [(-26, 100), (1e3, 1e150)], 1e-13, 0),
    "ndtr": (_fn("special.ndtr"), [(-40, 10)], 1e-13, 1e-30),
    "ndtri": (_fn("special.ndtri"), [(0, 1), (1e-300, 1e-20), (0.99999999, 1)], 1e-13, 0),
    "log_ndtr": (_fn("special.log_ndtr"), [(-1e4, 40)], 1e-13, 0),
    "lgamma": (_fn("lgamma"), [(1e-300, 1e-5), (0.01, 50), (50, 1e300)], 1e-13, 1e-14),
    "digamma": (_fn("digamma"), [(1e-5, 50), (50, 1e300), (-50, 0)], 1e-12, 1e-13),
    "trigamma": (lambda m, x: m.polygamma(1, x), [(0.01, 50), (-20, 0)], 1e-9, 0),
    "polygamma3": (lambda m, x: m.polygamma(3, x), [(0.01, 50), (-20, 0)], 1e-12, 0),
    "i0": (_fn("i0"), [(-700, 700)], 1e-14, 0), "i0e": (_fn("special.i0e"), [(-1e4, 1e4)], 1e-14, 0),
    "i1": (_fn("special.i1"), [(-700, 700)], 1e-14, 0),
    "i1e": (_fn("special.i1e"), [(-1e4, 1e4)], 1e-14, 0),
}


@pytest.mark.parametrize("name", sorted(WIDE))
def test_wide_range(device: str, name: str) -> None:
    fn, ranges, rtol, atol = WIDE[name]
    rng = np.random.default_rng(1)
    parts = []
    for lo, hi in ranges:
        if lo > 0 and hi / lo > 1e3:  # a log-uniform sample
            parts.append(np.exp(rng.uniform(np.log(lo), np.log(hi), 200)))
        else:
            parts.append(rng.uniform(lo, hi, 200))
    a = np.concatenate(parts)
    compare(lambda m: fn(m, _lib(m, a, device)), rtol=rtol, atol=atol)


EDGES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324, 1e-300, -1e-300, 0.5, -0.5, 1.0,
         -1.0, 1.5, -1.5, 2.0, -2.0, -3.0, 1e-8, 26.0, 27.0, 30.0, -27.0, 709.0, 710.0, 713.0,
         714.0, -714.0, 1e20, -1e20, 1e300, -1e300, 0.9999999999999999, -0.9999999999999999]


@pytest.mark.parametrize("name", sorted(UNARY))
def test_edges(device: str, name: str) -> None:
    """NaN, infinities, signed zeros, poles (0 and the negative integers for the gamma family)
    and overflow thresholds: PyTorch's values, signs of zeros included."""
    fn = UNARY[name][0]
    rtol = 1e-9 if name == "polygamma1" else 1e-12
    edges = EDGES
    if name in ("i1", "i1e", "special.log1p"):
        # NOTE: i1(5e-324) is half the smallest subnormal, a tie PyTorch's rounding breaks up
        # and ours to 0; log1p is the core one (PyTorch's flushes the subnormal to 0)
        edges = [v for v in EDGES if v != 5e-324]
    a = np.array(edges)
    compare(lambda m: fn(m, _lib(m, a, device)), rtol=rtol, atol=0, zeros=True)


@pytest.mark.parametrize("name", sorted(set(UNARY) - {"special.round", "special.round1"}))
def test_grad(device: str, name: str) -> None:
    fn, lo, hi, _, _ = UNARY[name]
    a = _data(lo, hi, "float64", (5,), seed=3)
    res = []
    for m in (torch, ag):
        x = _lib(m, a, device, grad=True)
        y = fn(m, x)
        y.backward(_lib(m, np.linspace(-1, 2, y.numel()).reshape(y.shape), device))
        res.append((y.grad_fn.name(), x.grad))
    assert res[1][0] == res[0][0]
    rtol = 1e-8 if name in ("digamma", "polygamma0", "lgamma", "lgamma_neg", "special.gammaln",
                            "special.digamma", "special.psi", "mvlgamma1", "mvlgamma3",
                            "special.multigammaln") else 1e-12
    same(res[1][1], res[0][1], rtol=rtol, atol=1e-13)  # NOTE: torch's trigamma: 5e-10
    x = ag.tensor(a, device=device, requires_grad=True)
    assert gradcheck(lambda t: fn(ag, t), (x,))
    if name not in NO_GRADGRAD:
        assert gradgradcheck(lambda t: fn(ag, t), (x,))


def test_zero_derivatives(device: str) -> None:
    """``i1``/``i1e`` at and near 0 (1/2), ``erfinv`` at 0, ``entr`` at 0 (inf), ``logit`` at
    the edges, as torch."""
    cases = {"special.i1": [0.0, 1e-17, -1e-17, 1.0], "special.i1e": [0.0, -1e-17, 1.0],
             "special.i0e": [0.0, -1.0, 1.0], "erfinv": [0.0, 0.5, -0.999],
             "special.entr": [0.0, 1.0, 2.0], "special.ndtri": [0.5, 1e-300, 0.999],
             "special.log_ndtr": [-40.0, 0.0, 30.0], "special.erfcx": [-5.0, 0.0, 10.0]}
    for name, vals in cases.items():
        res = []
        for m in (torch, ag):
            x = _lib(m, np.array(vals), device, grad=True)
            _fn(name)(m, x).sum().backward()
            res.append(x.grad)
        same(res[1], res[0], rtol=1e-13, atol=0)


@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv", "lgamma", "digamma", "i0", "sinc"])
def test_forms(device: str, name: str) -> None:
    """``x.name()``, ``x.name_()`` (refused for integer tensors), ``torch.name_`` and
    ``out=``."""
    a = _data(0.1, 0.9, "float64", (2, 3))
    compare(lambda m: getattr(_lib(m, a, device), name)())
    compare(lambda m: getattr(_lib(m, a, device), name + "_")())
    compare(lambda m: getattr(_lib(m, _data(1, 3, "int64", (3,)), device), name + "_")())
    if hasattr(torch, name + "_"):
        compare(lambda m: getattr(m, name + "_")(_lib(m, a, device)))
    for path in (name, "special." + name) if hasattr(torch.special, name) else (name,):
        for dt in ("float64", "float32", "int64"):
            def with_out(m: Any, dt: str = dt, path: str = path) -> Any:
                out = m.empty(2, 3, dtype=getattr(m, dt), device=device if m is ag else "cpu")
                assert _fn(path, out=out)(m, _lib(m, a, device)) is out
                return out
            compare(with_out, rtol=1e-6)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 12, -1])
def test_polygamma_forms(device: str, n: int) -> None:
    a = _data(0.2, 5, "float64", (2, 3))
    rtol = 1e-9 if n == 1 else 1e-12
    compare(lambda m: m.polygamma(n, _lib(m, a, device)), rtol=rtol)
    compare(lambda m: _lib(m, a, device).polygamma(n), rtol=rtol)
    compare(lambda m: _lib(m, a, device).polygamma_(n), rtol=rtol)
    compare(lambda m: m.special.polygamma(n, _lib(m, a, device)), rtol=rtol)
    # NOTE: integer inputs compute in float32, where PyTorch's kernel is a few ulps off
    compare(lambda m: m.polygamma(n, _lib(m, np.array([1, 2, 3]), device)), rtol=1e-6)

    def grads(m: Any) -> Any:
        x = _lib(m, a, device, grad=True)
        y = x * 1
        y.polygamma_(n)
        y.sum().backward()
        return y.grad_fn.name(), x.grad

    ours, theirs = outcome(grads)
    if isinstance(theirs[1], str):
        assert ours == theirs
    else:
        assert ours[0] == theirs[0]
        same(ours[1], theirs[1], rtol=1e-8)


@pytest.mark.parametrize("p", [1, 2, 3, 5])
def test_mvlgamma(device: str, p: int) -> None:
    a = _data((p - 1) / 2 + 0.05, 6, "float64", (2, 3))
    compare(lambda m: m.mvlgamma(_lib(m, a, device), p), rtol=1e-13, atol=1e-14)
    compare(lambda m: _lib(m, a, device).mvlgamma_(p), rtol=1e-13, atol=1e-14)
    compare(lambda m: m.special.multigammaln(_lib(m, a, device), p), rtol=1e-13, atol=1e-14)
    compare(lambda m: m.mvlgamma(_lib(m, np.array([3, 4]), device), p), rtol=1e-6)
    compare(lambda m: _lib(m, np.array([3, 4]), device).mvlgamma_(p))
    compare(lambda m: m.mvlgamma(_lib(m, a - 1, device), p))  # below (p - 1) / 2: refused
    compare(lambda m: m.mvlgamma(_lib(m, np.zeros((0,)), device), p))


# ---- binary: xlogy, xlog1py, zeta ----------------------------------------------------------------

BINARY = {
    "special.xlogy": ((-3, 3), (0.1, 4)), "special.xlog1py": ((-3, 3), (-0.9, 4)),
    "special.zeta": ((1.1, 6), (0.2, 4)), "xlogy": ((-3, 3), (0.1, 4)),
}


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("float32", "float64"),
                                    ("int64", "int64"), ("bool", "float32"),
                                    ("float16", "float16"), ("float16", "float32")], ids="-".join)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(device: str, name: str, dtypes: tuple[str, str]) -> None:
    (lo, hi), (lo2, hi2) = BINARY[name]
    a, b = _data(lo, hi, dtypes[0], (3, 4)), _data(lo2, hi2, dtypes[1], (4,), seed=2)
    if name == "special.zeta" and dtypes[1] == "int64":
        b = np.maximum(b, 1)
    compare(lambda m: _fn(name)(m, _lib(m, a, device), _lib(m, b, device)),
            rtol=1e-13 if dtypes == ("float64", "float64") else None)
    for scalar in (2.5, 2):
        compare(lambda m, v=scalar: _fn(name)(m, _lib(m, a, device), v))
        compare(lambda m, v=scalar: _fn(name)(m, v, _lib(m, b, device)))
    compare(lambda m: _fn(name)(m, 2.5, 1.5))


@pytest.mark.parametrize("form", ["tensors", "scalar_first", "scalar_second"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_grad(device: str, name: str, form: str) -> None:
    (lo, hi), (lo2, hi2) = BINARY[name]
    a, b = _data(lo, hi, "float64", (3, 4), seed=4), _data(lo2, hi2, "float64", (4,), seed=5)
    zeta = name == "special.zeta"

    def run(m: Any) -> Any:
        x = _lib(m, a, device, grad=not zeta) if form != "scalar_first" else 2.5
        y = _lib(m, b, device, grad=True) if form != "scalar_second" else 1.5
        out = _fn(name)(m, x, y)
        out.backward(_lib(m, np.linspace(-1, 1, 12).reshape(3, 4), device))
        return out.grad_fn.name(), [t.grad for t in (x, y) if isinstance(t, m.Tensor) and
                                    t.requires_grad]

    ours, theirs = outcome(run)
    if isinstance(theirs[1], str):  # zeta's x has no derivative
        assert ours == theirs, (ours, theirs)
        return
    assert ours[0] == theirs[0]
    for g, h in zip(ours[1], theirs[1]):
        same(g, h, rtol=1e-12, atol=1e-14)
    x = ag.tensor(a, device=device, requires_grad=not zeta) if form != "scalar_first" else 2.5
    y = ag.tensor(b, device=device, requires_grad=True) if form != "scalar_second" else 1.5
    args = tuple(t for t in (x, y) if isinstance(t, ag.Tensor) and t.requires_grad)
    if not args:
        return
    f = _fn(name)
    if form == "tensors":
        fn = (lambda u: f(ag, x, u)) if zeta else (lambda u, v: f(ag, u, v))
    elif form == "scalar_first":
        fn = lambda u: f(ag, 2.5, u)  # noqa: E731
    else:
        fn = lambda u: f(ag, u, 1.5)  # noqa: E731
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


def test_zeta_domain(device: str) -> None:
    """PyTorch's values on the whole grid of special arguments: poles, s < 1, negative q
    (summed straight through for integer s), infinities and NaN."""
    s = [-math.inf, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 10.0, 100.0, math.inf, math.nan]
    q = [-math.inf, -50.5, -2.0, -1.5, -0.0, 0.0, 1e-300, 0.5, 1.0, 2.0, 1e9, 1e20, math.inf,
         math.nan]
    a, b = (np.array(v).ravel() for v in np.meshgrid(s, q))
    # NOTE: the GPU's pow/exp are within 2 ulp, not correctly rounded: a few 1e-12 apart
    rtol = 1e-12 if device == "cpu" else 1e-11
    compare(lambda m: m.special.zeta(_lib(m, a, device), _lib(m, b, device)), rtol=rtol, atol=0)


@pytest.mark.parametrize("n", [2, 3, 7])
def test_polygamma_negative_arguments(device: str, n: int) -> None:
    """Through zeta's direct sum, as PyTorch (poles at the non-positive integers)."""
    a = np.array([-0.5, -1.5, -7.25, -30.3, -2.0, -0.0, 0.0])
    compare(lambda m: m.polygamma(n, _lib(m, a, device)), rtol=1e-11, atol=0)


# ---- accuracy against high-precision values (mpmath, which torch installs) ----------------------

ACCURACY: dict[str, tuple[Callable[[Any, Any], Any], str, list[tuple[float, float]], float]] = {
    # name: (ours, mpmath expression of x, ranges, max relative error achieved)
    "erf": (_fn("erf"), "erf(x)", [(-6, 6)], 2e-15),
    "erfc": (_fn("erfc"), "erfc(x)", [(-6, 27)], 5e-15),
    "erfcx": (_fn("special.erfcx"), "exp(x*x)*erfc(x)", [(-20, 1e4)], 2e-15),
    "erfinv": (_fn("erfinv"), "erfinv(x)", [(-0.9999, 0.9999)], 5e-15),
    "log_ndtr": (_fn("special.log_ndtr"), "log(ncdf(x))", [(-100, 6)], 5e-15),
    "lgamma": (_fn("lgamma"), "loggamma(x)", [(1e-5, 60), (0.9, 1.1), (1.9, 2.1)], 2e-15),
    "lgamma_neg": (_fn("lgamma"), "log(abs(gamma(x)))", [(-20, -2.6)], 1e-13),
    "digamma": (_fn("digamma"), "digamma(x)", [(1e-3, 1.4), (1.5, 60)], 1e-14),
    "trigamma": (lambda m, x: m.polygamma(1, x), "polygamma(1, x)", [(1e-3, 60)], 2e-15),
    "polygamma3": (lambda m, x: m.polygamma(3, x), "polygamma(3, x)", [(1e-3, 60)], 2e-15),
    "zeta": (lambda m, x: m.special.zeta(x, 1.7), "zeta(x, 1.7)", [(1.01, 60)], 2e-15),
    "i0": (_fn("i0"), "besseli(0, x)", [(-60, 60)], 2e-15),
    "i0e": (_fn("special.i0e"), "besseli(0, x) * exp(-abs(x))", [(-200, 200)], 2e-15),
    "i1": (_fn("special.i1"), "besseli(1, x)", [(-60, 60)], 2e-15),
    "i1e": (_fn("special.i1e"), "besseli(1, x) * exp(-abs(x))", [(-200, 200)], 2e-15),
}


@pytest.mark.parametrize("name", sorted(ACCURACY))
def test_accuracy(device: str, name: str) -> None:
    mpmath = pytest.importorskip("mpmath")
    fn, expr, ranges, bound = ACCURACY[name]
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(lo, hi, 40) for lo, hi in ranges])
    ours = fn(ag, ag.tensor(x, device=device)).cpu().numpy()
    with mpmath.workdps(40):
        exact = np.array([float(eval(expr, vars(mpmath), {"x": mpmath.mpf(float(v))}))
                          for v in x])
    err = np.abs(ours - exact) / np.abs(exact)
    assert err.max() <= bound, (name, err.max(), x[err.argmax()])


def test_ndtri_tails(device: str) -> None:
    """``ndtri`` far into both tails (``p`` down to the smallest subnormal), against torch."""
    p = np.concatenate([10.0 ** -np.arange(1, 324, 7.3), [5e-324], 1 - 10.0 ** -np.arange(1, 16)])
    compare(lambda m: m.special.ndtri(_lib(m, p, device)), rtol=2e-15, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
@pytest.mark.parametrize("name", ["modified_bessel_i0", "modified_bessel_i1",
                                  "spherical_bessel_j0"])
def test_no_derivative(device: str, name: str, dtype: str) -> None:
    """The functions PyTorch gives no derivative: values (edges too), layouts, ``out=``, and a
    result that does not require grad."""
    a = _data(-12, 12, dtype, (3, 4))
    compare(lambda m: getattr(m.special, name)(_lib(m, a, device).t()),
            rtol=1e-14 if dtype == "float64" else None)
    edges = [v for v in EDGES if v != 5e-324]  # NOTE: i1's subnormal tie, see test_edges
    compare(lambda m: getattr(m.special, name)(_lib(m, np.array(edges), device)), rtol=1e-13,
            atol=0, zeros=True)
    for dt in ("float64", "int64"):
        def with_out(m: Any, dt: str = dt) -> Any:
            out = m.empty(3, 4, dtype=getattr(m, dt), device=device if m is ag else "cpu")
            assert getattr(m.special, name)(_lib(m, a, device).t().t(), out=out) is out
            return out
        compare(with_out, rtol=1e-6)
    x = ag.tensor([0.5, 2.0], device=device, requires_grad=True)
    y = getattr(ag.special, name)(x)
    assert not y.requires_grad and y.grad_fn is None


def test_special_namespace() -> None:
    """Every name listed in ``ag.special.__all__`` is PyTorch's."""
    for name in ag.special.__all__:
        assert hasattr(torch.special, name), name
        assert callable(getattr(ag.special, name))
