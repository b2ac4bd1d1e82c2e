"""The pointwise family against torch: trigonometric and hyperbolic functions and their
inverses, ``log2``/``log10``/``exp2``, rounding (``trunc``, ``fix``, ``ceil``, ``round`` with
``decimals``, ``frac``), ``sgn``, ``angle``, ``signbit``, ``positive``, ``deg2rad``/``rad2deg``,
``nan_to_num``, ``sinc``, ``logit``, ``float_power``; the binary ops ``atan2``,
``hypot``, ``logaddexp(2)``, ``xlogy``, ``copysign``, ``heaviside``, ``fmod``, ``fmax``,
``fmin``, ``nextafter``, ``ldexp``, ``clamp_min``/``clamp_max``; the ternary ``lerp``,
``addcmul``, ``addcdiv``.

Values, dtypes (integer and bool inputs promoted as PyTorch), shapes (0-d, empty) and strides
(transposed and sliced inputs); NaN, infinities, signed zeros and domain edges; gradients
against torch's ``.grad``, ``gradcheck`` and ``gradgradcheck`` in float64; ``out=``, methods,
in-place forms and grad_fn names. Float64 values match torch to 1e-13 relative (most exactly:
the same formulas); float32 to 1e-5, float16 to 2e-3. Argument errors: tests/misuse.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.ops._same import same as _same, to_numpy
from autograd_gpu.autograd import gradcheck, gradgradcheck

LAYOUTS: dict[str, Callable[[Any], Any]] = {
    "contiguous": lambda x: x,
    "transposed": lambda x: x.transpose(0, -1) if x.ndim > 1 else x,
    "sliced": lambda x: x[..., ::2] if x.ndim else x,
}
RTOL = {"float64": 1e-13, "float32": 1e-5, "float16": 2e-3}
ATOL = {"float64": 1e-15, "float32": 1e-6, "float16": 1e-3}
SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 1e-300,
           -1e-300, 5e-324, 1e300, -1e300, 710.0, -710.0, 1e-8]


_np = to_numpy


def same(ours: Any, theirs: Any, rtol: float = 1e-13, atol: float = 1e-15,
         strides: bool = True, zeros: bool = False) -> None:
    """``tests.ops._same.same`` with this family's default tolerances."""
    _same(ours, theirs, rtol, atol, strides, zeros)


def outcome(fn: Callable[[Any], Any]) -> tuple[Any, Any]:
    """``fn(ag)`` and ``fn(torch)``, or an exception's (type name, first line) for either."""
    res = []
    for m in (ag, torch):
        try:
            res.append(fn(m))
        except Exception as e:  # noqa: BLE001  (comparing failures too)
            # NOTE: kernel names differ by device (ceil_vml_cpu, ceil_cuda): compare the op's
            msg = re.sub(r'"([a-z0-9]+)_[a-z_0-9]*" not implemented', r'"\1" not implemented',
                         str(e).split("\n")[0].split(". ")[0]).replace("torch.cuda.", "torch.")
            res.append((type(e).__name__, msg))
    return res[0], res[1]


def compare(fn: Callable[[Any], Any], rtol: float | None = None, atol: float | None = None,
            **kw: Any) -> None:
    """``fn`` under both libraries: the same values (``same``; by default within the result
    dtype's ``RTOL``/``ATOL``) or the same error."""
    ours, theirs = outcome(fn)
    if isinstance(theirs, tuple) or isinstance(ours, tuple):
        assert ours == theirs, (ours, theirs)
        return
    name = str(theirs.dtype).replace("torch.", "")
    same(ours, theirs, RTOL.get(name, 0) if rtol is None else rtol,
         ATOL.get(name, 0) if atol is None else atol, **kw)


def _lib(m: Any, a: np.ndarray, device: str, grad: bool = False) -> Any:
    if m is torch:
        return torch.from_numpy(a.copy()).requires_grad_(grad)
    return ag.tensor(a, device=device, requires_grad=grad)


def _data(lo: float, hi: float, dtype: str, shape: tuple[int, ...] = (3, 4),
          seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    a = rng.uniform(lo, hi, shape)
    if dtype.startswith("float"):
        return a.astype(dtype)
    return np.clip(np.round(a), math.ceil(lo), math.floor(hi)).astype(dtype)


# ---- unary -------------------------------------------------------------------------------------
# name -> (lo, hi): a domain where the function and its derivatives are smooth
UNARY: dict[str, tuple[float, float]] = {
    "tan": (-1.4, 1.4), "sinh": (-4, 4), "cosh": (-4, 4), "asin": (-0.9, 0.9),
    "acos": (-0.9, 0.9), "atan": (-4, 4), "asinh": (-4, 4), "acosh": (1.1, 5),
    "atanh": (-0.9, 0.9), "arcsin": (-0.9, 0.9), "arccos": (-0.9, 0.9), "arctan": (-4, 4),
    "arcsinh": (-4, 4), "arccosh": (1.1, 5), "arctanh": (-0.9, 0.9), "log2": (0.1, 9),
    "log10": (0.1, 9), "exp2": (-4, 4), "trunc": (-4, 4), "fix": (-4, 4), "frac": (-4, 4),
    "ceil": (-4, 4), "round": (-4, 4), "sinc": (-2.5, 2.5), "sgn": (-4, 4),
    "deg2rad": (-400, 400), "rad2deg": (-4, 4), "angle": (-4, 4),
    "nan_to_num": (-4, 4), "logit": (0.05, 0.95), "signbit": (-4, 4), "positive": (-4, 4),
}
NO_GRAD = {"signbit"}
NO_INPLACE = {"signbit", "positive", "angle"}
UNARY_CASES = [("float64", "contiguous"), ("float64", "transposed"), ("float64", "sliced"),
               ("float32", "transposed"), ("float16", "contiguous"), ("int64", "contiguous"),
               ("uint8", "sliced"), ("bool", "contiguous")]


@pytest.mark.parametrize("dtype,layout", UNARY_CASES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values(device: str, name: str, dtype: str, layout: str) -> None:
    lo, hi = UNARY[name]
    if dtype == "uint8":
        lo = max(lo, 0)
    a = _data(lo, hi, dtype, (3, 4))
    atol = 1e-5 if dtype != "float64" and name == "sinc" else None  # NOTE: sin(pi x) near
    # integer x: float32's rounding of pi shows
    compare(lambda m: getattr(m, name)(LAYOUTS[layout](_lib(m, a, device))), atol=atol)


@pytest.mark.parametrize("shape", [(), (0,), (1,), (2, 0, 3)])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_shapes(device: str, name: str, shape: tuple[int, ...]) -> None:
    a = _data(*UNARY[name], "float32", shape)
    compare(lambda m: getattr(m, name)(_lib(m, a, device)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_special_values(device: str, name: str) -> None:
    """NaN, infinities, signed zeros, subnormals, huge values and domain edges as PyTorch."""
    a = np.array(SPECIAL + [1.5, -1.5, 0.9999999, 90.0, 180.0], dtype="float64")
    compare(lambda m: getattr(m, name)(_lib(m, a, device)), rtol=1e-13, atol=0, zeros=True)


@pytest.mark.parametrize("name", sorted(set(UNARY) - NO_GRAD))
def test_unary_grad(device: str, name: str) -> None:
    a = _data(*UNARY[name], "float64", (5,), seed=1)
    outs = {}
    for m in (torch, ag):
        x = _lib(m, a, device, grad=True)
        y = getattr(m, name)(x)
        y.backward(_lib(m, np.linspace(-1, 2, 5), device))
        outs[m] = (y.grad_fn.name() if y.grad_fn is not None else None, x.grad)
    assert outs[ag][0] == outs[torch][0]
    if outs[torch][1] is None:  # positive: the input itself
        assert outs[ag][1] is None
        return
    same(outs[ag][1], outs[torch][1], rtol=1e-12, atol=1e-14)
    x = ag.tensor(a, device=device, requires_grad=True)
    fn = getattr(ag, name)
    if name != "positive":
        assert gradcheck(fn, (x,))
        assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_forms(device: str, name: str) -> None:
    """``x.name()``, ``x.name_()``, ``torch.name_(x)`` and ``out=``, as PyTorch."""
    a = _data(*UNARY[name], "float64", (2, 3), seed=2)
    compare(lambda m: getattr(_lib(m, a, device), name)())
    if name not in NO_INPLACE:
        compare(lambda m: getattr(_lib(m, a, device), name + "_")())
        ints = _data(*UNARY[name], "int64", (3,))
        compare(lambda m: getattr(_lib(m, ints, device), name + "_")())
        if hasattr(torch, name + "_"):
            compare(lambda m: getattr(m, name + "_")(_lib(m, a, device)))
    if name == "positive":
        x = ag.tensor(a, device=device)
        assert ag.positive(x) is x
        return
    for out_dtype in ("float64", "float32", "int64", "bool"):
        def with_out(m: Any, dt: str = out_dtype) -> Any:
            out = m.empty(2, 3, dtype=getattr(m, dt), device=device if m is ag else "cpu")
            r = getattr(m, name)(_lib(m, a, device), out=out)
            assert r is out
            return out
        compare(with_out, rtol=1e-6)


@pytest.mark.parametrize("chain", [("tan_",), ("sinh_",), ("exp2_",), ("erf_",), ("tan_", "sinh_"),
                                   ("sinh_", "exp2_"), ("asinh_",), ("acosh_",), ("atanh_",),
                                   ("arcsinh_",), ("arccosh_",), ("arctanh_",), ("logit_",),
                                   ("round_",), ("sgn_",), ("nan_to_num_",)])
def test_unary_inplace_autograd(device: str, chain: tuple[str, ...]) -> None:
    """In-place forms record their nodes (gradients flow, or a saved tensor overwritten later
    is refused); PyTorch's ``asinh_``/``acosh_``/``atanh_`` record ``<Op>Backward1``, which
    refuses backward."""
    a = np.array([0.1, 0.2, 0.3])

    def run(m: Any) -> Any:
        x = _lib(m, a, device, grad=True)
        y = x * 2 + (1.5 if "cosh" in chain[0] else 0)
        for name in chain:
            getattr(y, name)()
        names = y.grad_fn.name()
        y.sum().backward()
        return names, x.grad

    ours, theirs = outcome(run)
    if isinstance(theirs[1], str) or isinstance(ours[1], str):  # an error
        assert ours == theirs, (ours, theirs)
    else:
        assert ours[0] == theirs[0]
        same(ours[1], theirs[1], rtol=1e-12)


@pytest.mark.parametrize("decimals", [None, 0, 1, 2, 3, -1, -2, 20, -400])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64"])
def test_round_decimals(device: str, decimals: int | None, dtype: str) -> None:
    """Half to even, also after scaling; PyTorch's float scaling (0.125 to 2 places: 0.12)."""
    vals = [0.5, 1.5, 2.5, -0.5, -2.5, 0.125, 0.375, 1.2345, 1250.0, 1350.0, -1e-3, 123.456]
    a = np.array(vals).astype(dtype)
    kw = {} if decimals is None else {"decimals": decimals}
    compare(lambda m: m.round(_lib(m, a, device), **kw), rtol=0, atol=0)
    compare(lambda m: _lib(m, a, device).round(**kw), rtol=0, atol=0)
    compare(lambda m: _lib(m, a, device).round_(**kw), rtol=0, atol=0)


@pytest.mark.parametrize("kw", [{}, {"nan": 1.5}, {"nan": 2, "posinf": 7.0},
                                {"neginf": -1e10, "posinf": 1e10}, {"posinf": True}])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "bool"])
def test_nan_to_num(device: str, kw: dict[str, Any], dtype: str) -> None:
    a = np.array([math.nan, math.inf, -math.inf, 1.0, -2.0, 0.0])
    a = a.astype(dtype) if dtype.startswith("float") else np.array([1, 0, 1]).astype(dtype)
    compare(lambda m: m.nan_to_num(_lib(m, a, device), **kw), rtol=0, atol=0)
    compare(lambda m: _lib(m, a, device).nan_to_num_(**kw), rtol=0, atol=0)
    args = tuple(kw.get(k, d) for k, d in (("nan", 0.0), ("posinf", None), ("neginf", None)))
    compare(lambda m: _lib(m, a, device).nan_to_num(*args), rtol=0, atol=0)


@pytest.mark.parametrize("eps", [None, 0.0, 0.1, 0.3, 0.6])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64"])
def test_logit_eps(device: str, eps: float | None, dtype: str) -> None:
    a = np.array([-0.5, 0.0, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0, 1.5, math.nan])
    a = a.astype(dtype) if dtype != "int64" else np.array([0, 1, 2]).astype(dtype)
    compare(lambda m: m.logit(_lib(m, a, device), eps))
    if dtype == "float64":
        grads = []
        for m in (torch, ag):
            x = _lib(m, a, device, grad=True)
            m.logit(x, eps).backward(_lib(m, np.ones_like(a), device))
            grads.append(x.grad)
        same(grads[1], grads[0], rtol=1e-13)


@pytest.mark.parametrize("exp", [2, 0.5, -1.5, 3, "tensor", "int_tensor", "scalar_base"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_float_power(device: str, exp: Any, dtype: str) -> None:
    """Computed in float64 whatever the dtypes (PowBackward0/1/2 after a ToCopy)."""
    a = _data(0.5, 3, dtype, (4,))
    e = np.array([0.5, 2.0, -1.0, 3.0])

    def run(m: Any, grad: bool = False) -> Any:
        x = _lib(m, a, device, grad=grad)
        if exp == "tensor":
            return m.float_power(x, _lib(m, e, device))
        if exp == "int_tensor":
            return m.float_power(x, _lib(m, e.astype("int64"), device))
        if exp == "scalar_base":
            return m.float_power(2.5, x)
        return x.float_power(exp)

    compare(run)
    if dtype == "float64":
        grads = []
        for m in (torch, ag):
            x = _lib(m, a, device, grad=True)
            y = m.float_power(x, _lib(m, e, device)) if exp == "tensor" else x.float_power(2.5)
            y.sum().backward()
            grads.append((y.grad_fn.name(), x.grad))
        assert grads[0][0] == grads[1][0]
        same(grads[1][1], grads[0][1], rtol=1e-12)
    compare(lambda m: _lib(m, a, device).float_power_(2))


# ---- binary ------------------------------------------------------------------------------------
# name -> (domain of input, domain of other, accepts a number as other)
BINARY: dict[str, tuple[tuple[float, float], tuple[float, float], bool]] = {
    "atan2": ((-3, 3), (-3, 3), False), "arctan2": ((-3, 3), (0.5, 3), False),
    "hypot": ((-3, 3), (-3, 3), False), "logaddexp": ((-3, 3), (-3, 3), False),
    "logaddexp2": ((-3, 3), (-3, 3), False), "xlogy": ((-3, 3), (0.5, 4), True),
    "copysign": ((0.5, 3), (-3, 3), True), "heaviside": ((-3, 3), (-3, 3), False),
    "fmod": ((-5, 5), (1, 3), True), "fmax": ((-3, 3), (-3, 3), False),
    "fmin": ((-3, 3), (-3, 3), False), "nextafter": ((-3, 3), (-3, 3), False),
    "ldexp": ((-3, 3), (-4, 4), False), "clamp_min": ((-3, 3), (-3, 3), True),
    "clamp_max": ((-3, 3), (-3, 3), True),
}
NO_GRAD_BINARY = {"heaviside"}
DTYPE_PAIRS = [("float64", "float64"), ("float32", "float64"), ("float16", "float16"),
               ("float16", "float32"), ("int64", "int64"), ("int64", "float32"),
               ("bool", "bool"), ("uint8", "int64"), ("int32", "float16"), ("bool", "float64")]


@pytest.mark.parametrize("dtypes", DTYPE_PAIRS, ids="-".join)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values(device: str, name: str, dtypes: tuple[str, str]) -> None:
    (lo, hi), (lo2, hi2), _ = BINARY[name]
    a = _data(lo, hi, dtypes[0], (3, 4))
    b = _data(lo2, hi2, dtypes[1], (3, 4), seed=1)
    if name == "fmod" and not dtypes[1].startswith("float"):
        b = np.where(b == 0, 1, b).astype(b.dtype)
    compare(lambda m: getattr(m, name)(_lib(m, a, device), _lib(m, b, device)))


@pytest.mark.parametrize("shapes", [((3, 1), (4,)), ((), (2, 3)), ((2, 3), ()), ((0,), (1,)),
                                    ((2, 1, 3), (4, 1))], ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_broadcast(device: str, name: str, shapes: Any) -> None:
    """Broadcast shapes, 0-d operands (a 0-d float64 other does not promote a float32 input)
    and a transposed input's layout."""
    (lo, hi), (lo2, hi2), _ = BINARY[name]
    a, b = _data(lo, hi, "float32", shapes[0]), _data(lo2, hi2, "float64", shapes[1], seed=3)
    if name == "heaviside":
        b = b.astype("float32")
    compare(lambda m: getattr(m, name)(_lib(m, a, device), _lib(m, b, device)), rtol=1e-6,
            atol=1e-6)
    t = _data(lo, hi, "float64", (4, 3))
    u = _data(lo2, hi2, "float64", (3,), seed=4)
    compare(lambda m: getattr(m, name)(_lib(m, t, device).t(), _lib(m, u, device)[:, None]))


@pytest.mark.parametrize("other", [2.0, 2, -1.5, True, 0.0])
@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", "bool"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_scalars(device: str, name: str, dtype: str, other: Any) -> None:
    """A number as ``other`` (refused where PyTorch wants a tensor), and as ``input``."""
    (lo, hi), _, _ = BINARY[name]
    a = _data(lo, hi, dtype, (4,))
    compare(lambda m: getattr(m, name)(_lib(m, a, device), other), rtol=2e-3, atol=1e-3)
    compare(lambda m: getattr(_lib(m, a, device), name)(other), rtol=2e-3, atol=1e-3)
    compare(lambda m: getattr(m, name)(other, _lib(m, a, device)), rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_special_values(device: str, name: str) -> None:
    vals = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -2.5, 1e308, 5e-324]
    if name == "fmod":
        vals.pop()  # NOTE: PyTorch's fmod by a subnormal is nan (its kernel flushes it to 0)
    a, b = (np.array(v, dtype="float64").ravel() for v in np.meshgrid(vals, vals))
    compare(lambda m: getattr(m, name)(_lib(m, a, device), _lib(m, b, device)), rtol=1e-15,
            atol=0, zeros=True)


@pytest.mark.parametrize("name,other", [
    (n, o) for n in sorted(set(BINARY) - NO_GRAD_BINARY) for o in ("tensor", "scalar", "broadcast")
    if o != "scalar" or BINARY[n][2]])  # NOTE: a scalar other only where PyTorch takes one
def test_binary_grad(device: str, name: str, other: str) -> None:
    (lo, hi), (lo2, hi2), _ = BINARY[name]
    a = _data(lo, hi, "float64", (3, 4), seed=5)
    b = _data(lo2, hi2, "float64", (4,) if other == "broadcast" else (3, 4), seed=6)
    # NOTE: keep x away from y where the derivative has a kink there (fmax, fmod, clamp_*)
    b = np.where(np.abs(a - b) < 0.05, b + 0.2, b)
    res = {}
    for m in (torch, ag):
        x = _lib(m, a, device, grad=True)
        y = 1.25 if other == "scalar" else _lib(m, b, device, grad=True)
        out = getattr(m, name)(x, y)
        out.backward(_lib(m, np.linspace(-1, 1, 12).reshape(3, 4), device))
        res[m] = (out.grad_fn.name(), x.grad, None if other == "scalar" else y.grad)
    assert res[ag][0] == res[torch][0]
    same(res[ag][1], res[torch][1], rtol=1e-12, atol=1e-14)
    if other != "scalar":
        same(res[ag][2], res[torch][2], rtol=1e-12, atol=1e-14)
    x = ag.tensor(a, device=device, requires_grad=True)
    y = 1.25 if other == "scalar" else ag.tensor(b, device=device, requires_grad=True)
    args = (x,) if other == "scalar" else (x, y)
    fn = (lambda t: getattr(ag, name)(t, 1.25)) if other == "scalar" else getattr(ag, name)
    assert gradcheck(fn, args)
    assert gradgradcheck(fn, args)


def test_binary_edge_grads(device: str) -> None:
    """Gradients at the edges PyTorch defines: hypot at (0, 0) (nan), xlogy at x == 0, copysign
    at 0, logaddexp of equal infinities (nan), fmax/fmin with NaN, ties of clamp_min/max."""
    cases = {
        "hypot": ([0.0, 1.0], [0.0, 0.0]), "xlogy": ([0.0, 0.0, 1.0, 2.0], [0.0, math.nan, 0.0, -1.0]),
        "copysign": ([0.0, 1.0, -2.0, -0.0], [-1.0, -1.0, 3.0, 1.0]),
        "logaddexp": ([math.inf, -math.inf, 1.0], [math.inf, -math.inf, math.nan]),
        "fmax": ([1.0, 2.0, math.nan, 1.0], [2.0, 2.0, 1.0, math.nan]),
        "fmin": ([1.0, 2.0, math.nan, 1.0], [2.0, 2.0, 1.0, math.nan]),
        "clamp_min": ([1.0, 2.0, 3.0, math.nan], [2.0, 2.0, 2.0, 1.0]),
        "clamp_max": ([1.0, 2.0, 3.0, 1.0], [2.0, 2.0, 2.0, math.nan]),
        "atan2": ([0.0, 0.0], [0.0, -0.0]), "fmod": ([5.5, -5.5, 1.0], [2.0, 2.0, 0.0]),
        "nextafter": ([0.5, -1.5], [1.0, -3.0]), "ldexp": ([1.5, -2.0], [2.0, -1.0]),
    }
    for name, (u, v) in cases.items():
        res = []
        for m in (torch, ag):
            x, y = _lib(m, np.array(u), device, True), _lib(m, np.array(v), device, True)
            getattr(m, name)(x, y).sum().backward()
            res.append((x.grad, y.grad))
        same(res[1][0], res[0][0], rtol=1e-15, atol=0)
        same(res[1][1], res[0][1], rtol=1e-15, atol=0)


def test_heaviside_no_derivative(device: str) -> None:
    """PyTorch records a node that refuses backward."""
    def run(m: Any) -> Any:
        x = _lib(m, np.array([-1.0, 0.0, 2.0]), device, True)
        y = m.heaviside(x, _lib(m, np.array([0.5]), device))
        name = y.grad_fn.name()
        y.sum().backward()
        return name
    assert outcome(run) == (("RuntimeError", "derivative for aten::heaviside is not "
                             "implemented"),) * 2


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_forms(device: str, name: str) -> None:
    """``x.name(y)``, ``x.name_(y)`` (where PyTorch has it, with its cast refusals) and
    ``out=``."""
    (lo, hi), (lo2, hi2), _ = BINARY[name]
    a, b = _data(lo, hi, "float64", (2, 3)), _data(lo2, hi2, "float64", (3,), seed=7)
    compare(lambda m: getattr(_lib(m, a, device), name)(_lib(m, b, device)))
    if hasattr(torch.Tensor, name + "_"):
        compare(lambda m: getattr(_lib(m, a, device), name + "_")(_lib(m, b, device)))
        ints = _data(lo, hi, "int64", (2, 3))
        compare(lambda m: getattr(_lib(m, ints, device), name + "_")(_lib(m, b, device)))
        compare(lambda m: getattr(_lib(m, b, device), name + "_")(_lib(m, a, device)))
    else:
        assert not hasattr(ag.Tensor, name + "_")
    if hasattr(torch, name + "_"):
        compare(lambda m: getattr(m, name + "_")(_lib(m, a, device), _lib(m, b, device)))
    for out_dtype in ("float64", "float32", "int64"):
        def with_out(m: Any, dt: str = out_dtype) -> Any:
            out = m.empty(2, 3, dtype=getattr(m, dt), device=device if m is ag else "cpu")
            r = getattr(m, name)(_lib(m, a, device), _lib(m, b, device), out=out)
            assert r is out
            return out
        compare(with_out, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_fmod_integers(device: str, dtype: str) -> None:
    """C's sign rule on integers, and PyTorch's ZeroDivisionError."""
    a = np.array([7, -7, 5, 0, 9]).astype(dtype) if dtype != "uint8" else \
        np.array([7, 200, 5, 0, 9], dtype=dtype)
    b = np.array([3, 3, -2, 4, 1]).astype(dtype) if dtype != "uint8" else \
        np.array([3, 7, 2, 4, 1], dtype=dtype)
    compare(lambda m: m.fmod(_lib(m, a, device), _lib(m, b, device)))
    compare(lambda m: m.fmod(_lib(m, a, device), 4))
    compare(lambda m: m.fmod(_lib(m, a, device), 0))
    compare(lambda m: m.fmod(_lib(m, a, device), _lib(m, np.zeros(5, dtype), device)))


# ---- ternary -----------------------------------------------------------------------------------

@pytest.mark.parametrize("weight", [0.3, 0.75, -0.5, 1.5, "tensor", "tensor_0d", "broadcast"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_lerp(device: str, weight: Any, dtype: str) -> None:
    a, b = _data(-3, 3, dtype, (3, 4)), _data(-3, 3, dtype, (4,), seed=8)
    w = _data(-0.5, 1.5, dtype, (3, 4) if weight == "tensor" else () if weight == "tensor_0d"
              else (3, 1), seed=9)

    def run(m: Any, grad: bool = False) -> Any:
        x, e = _lib(m, a, device, grad), _lib(m, b, device, grad)
        ww = _lib(m, w, device, grad) if isinstance(weight, str) else weight
        return (x, e, ww), m.lerp(x, e, ww)

    compare(lambda m: run(m)[1])
    compare(lambda m: _lib(m, a, device).lerp_(_lib(m, b, device), 0.25))
    if dtype != "float64":
        return
    res = []
    for m in (torch, ag):
        ins, out = run(m, True)
        out.backward(_lib(m, np.linspace(-1, 1, 12).reshape(3, 4), device))
        res.append([out.grad_fn.name()] + [t.grad for t in ins if not isinstance(t, float)])
    assert res[0][0] == res[1][0]
    for ours, theirs in zip(res[1][1:], res[0][1:]):
        same(ours, theirs, rtol=1e-12, atol=1e-14)
    ins, _ = run(ag, True)
    tensors = tuple(t for t in ins if not isinstance(t, float))
    fn = (lambda *ts: ag.lerp(*ts)) if len(tensors) == 3 else (lambda x, e: ag.lerp(x, e, weight))
    assert gradcheck(fn, tensors)
    assert gradgradcheck(fn, tensors)


@pytest.mark.parametrize("value", [1, 0.5, -2, 2.7, True])
@pytest.mark.parametrize("dtypes", [("float64",) * 3, ("float32", "float64", "float32"),
                                    ("float16",) * 3, ("int64",) * 3, ("int64", "float32", "int64"),
                                    ("float16", "float32", "float32"), ("uint8",) * 3,
                                    ("bool",) * 3], ids="-".join)
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv(device: str, name: str, dtypes: tuple[str, ...], value: Any) -> None:
    a = _data(-3, 3, dtypes[0], (3, 4) if dtypes[0] != "float16" else ())
    b = _data(0.5, 3, dtypes[1], (4,), seed=10)
    c = _data(0.5, 3, dtypes[2], (3, 1), seed=11)
    compare(lambda m: getattr(m, name)(_lib(m, a, device), _lib(m, b, device),
                                       _lib(m, c, device), value=value), rtol=2e-3, atol=2e-3)
    compare(lambda m: getattr(_lib(m, np.broadcast_to(a, (3, 4)).copy(), device), name + "_")(
        _lib(m, b, device), _lib(m, c, device), value=value), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_addcmul_addcdiv_grad(device: str, name: str) -> None:
    a, b, c = (_data(0.5, 3, "float64", s, seed=i) for i, s in enumerate([(3, 4), (4,), (3, 1)]))
    res = []
    for m in (torch, ag):
        ts = [_lib(m, v, device, True) for v in (a, b, c)]
        out = getattr(m, name)(*ts, value=-1.5)
        out.backward(_lib(m, np.linspace(-1, 1, 12).reshape(3, 4), device))
        res.append([out.grad_fn.name()] + [t.grad for t in ts])
    assert res[0][0] == res[1][0]
    for ours, theirs in zip(res[1][1:], res[0][1:]):
        same(ours, theirs, rtol=1e-12)
    ts = tuple(ag.tensor(v, device=device, requires_grad=True) for v in (a, b, c))
    fn = lambda *t: getattr(ag, name)(*t, value=0.5)  # noqa: E731
    assert gradcheck(fn, ts)
    assert gradgradcheck(fn, ts)


def test_clamp_min_max_scalar_bounds(device: str) -> None:
    """Scalar bounds converted checked to the result dtype (as ``clamp``), nan propagating."""
    cases = [("bool", True), ("bool", 1), ("bool", 0.5), ("int8", 300), ("int8", 0.5),
             ("uint8", -1), ("float16", 1e10), ("float32", math.nan), ("float32", math.inf),
             ("int64", math.inf), ("float32", 2), ("int64", 2)]
    a = np.array([1.0, -5.0, math.nan, 3.0])
    for dtype, bound in cases:
        x = a if dtype.startswith("float") else np.array([1, 0, 1, 3])
        x = x.astype(dtype)
        for name in ("clamp_min", "clamp_max"):
            compare(lambda m, f=name, x=x, v=bound: getattr(m, f)(_lib(m, x, device), v), rtol=0,
                    atol=0)
            compare(lambda m, f=name, x=x, v=bound: getattr(_lib(m, x, device), f + "_")(v),
                    rtol=0, atol=0)
