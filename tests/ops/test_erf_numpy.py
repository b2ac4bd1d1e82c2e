"""The vectorised ``erf`` (``backends/pointwise_erf``: table and Taylor polynomial), the NumPy
backend's ``erf`` and the base of ``pointwise_special``'s erf family, against the C library's
``math.erf``, high-precision values (mpmath) and torch.

Measured when it was written (float64): at most 1 ulp from ``math.erf`` on 10**7 points of
[-7, 7], 10**7 uniform on [-6, 6], log-spaced magnitudes 1e-320..1e308 and subnormals; against
mpmath at most 0.94 ulp below ``|x| = 5/512``, 0.63 below 0.05 and 0.54 beyond; ``erfc`` (the
table, ``|x| <= 6``) 0.53 ulp. float32: every positive float32 up to 4 (1.08e9 values; erf rounds
to 1 beyond 3.92) equals ``math.erf`` rounded to float32, no exceptions; torch's float32 kernel
differs from that in 5.5% of them (its own float32 approximation).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu.backends import pointwise_erf as E
from autograd_gpu.backends import pointwise_special as S
from autograd_gpu.backends.numpy_backend import NumpyBackend
from tests.ops.test_pointwise import _lib, compare

_MATH_ERF: Any = np.frompyfunc(math.erf, 1, 1)
_INF, _NAN = math.inf, math.nan
_BIG = np.finfo(np.float64).max


def _libm(x: np.ndarray) -> np.ndarray:
    return _MATH_ERF(x).astype(np.float64)


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between float64 arrays, across zero too (bits on a line)."""
    ia, ib = a.view(np.int64), b.view(np.int64)
    low = np.int64(-(2**63))
    ia = np.where(ia < 0, low - ia, ia)
    ib = np.where(ib < 0, low - ib, ib)
    return np.abs(ia - ib)


def _ulp_error(ours: np.ndarray, x: np.ndarray, expr: str) -> np.ndarray:
    """``|ours - f(x)|`` in units of the last place of ``f(x)``, ``f`` in mpmath at 40 digits."""
    mpmath = pytest.importorskip("mpmath")
    fn = getattr(mpmath, expr)
    with mpmath.workdps(40):
        exact = [fn(mpmath.mpf(float(v))) for v in x]
        return np.array([float(abs(mpmath.mpf(float(o)) - e) / np.spacing(abs(float(e))))
                         for o, e in zip(ours, exact)])


def test_erf_within_one_ulp_of_math_erf() -> None:
    rng = np.random.default_rng(0)
    sign = rng.choice([-1.0, 1.0], 20_000)
    x = np.concatenate([
        np.linspace(-7, 7, 200_001), rng.uniform(-6, 6, 50_000),
        10.0 ** rng.uniform(-320, 0, 20_000) * sign, 10.0 ** rng.uniform(0, 308, 20_000) * sign,
        rng.integers(1, 2**52, 20_000).view(np.float64) * sign,  # subnormals
    ])
    assert _ulp_distance(E.erf(np, x), _libm(x)).max() <= 1


@pytest.mark.parametrize("lo, hi, bound", [
    (0, 5 / 512, 0.95), (5 / 512, 0.05, 0.64), (0.05, 6.5, 0.55),
])
def test_erf_ulp_error(lo: float, hi: float, bound: float) -> None:
    """Against mpmath: below ``5/512`` the correction ``h`` is as large as ``x0`` itself."""
    x = np.random.default_rng(1).uniform(lo, hi, 300) * np.resize([1.0, -1.0], 300)
    assert _ulp_error(E.erf(np, x), x, "erf").max() <= bound


def test_erfc_ulp_error() -> None:
    """The table's ``erfc`` on [-6, 6] (half an ulp and a bit), the continued fraction beyond."""
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-6, 6, 300), rng.uniform(0, 1.5, 100)])
    assert _ulp_error(E.erfc_table(np, x), x, "erfc").max() <= 0.53
    assert _ulp_error(S.erfc(np, x), x, "erfc").max() <= 0.53
    far = rng.uniform(6, 27, 100)
    assert _ulp_error(S.erfc(np, far), far, "erfc").max() <= 4


def test_special_values() -> None:
    x = np.array([0.0, -0.0, _INF, -_INF, _NAN, 5e-324, -5e-324, _BIG, -_BIG, 6.0, -6.0])
    out = E.erf(np, x)
    expect = np.array([0.0, -0.0, 1.0, -1.0, _NAN, 5e-324, -5e-324, 1.0, -1.0, 1.0, -1.0])
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(expect))  # erf(-0.0) = -0.0
    with np.errstate(all="ignore"):  # NOTE: as the ops run it (Node.apply)
        c = S.erfc(np, x)
    # NOTE: erfc(6) correctly rounded (math.erfc gives the next double up)
    np.testing.assert_array_equal(c, [1, 1, 0, 2, _NAN, 1, 1, 0, 2, 2.1519736712498913e-17, 2])


def test_erf_is_odd_bit_for_bit() -> None:
    x = np.random.default_rng(3).uniform(0, 7, 100_000)
    np.testing.assert_array_equal(E.erf(np, -x), -E.erf(np, x))


def test_float32_rounds_once() -> None:
    """Computed in float64, rounded once: equal to ``math.erf`` rounded to float32 (every
    positive float32 up to 4 was checked once; here a stride through them and their negatives)."""
    bits = np.arange(1, 0x40800000, 4099, dtype=np.uint32)
    x = np.concatenate([bits.view(np.float32), -bits.view(np.float32)])
    ours = NumpyBackend.erf(x)
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours, _libm(x.astype(np.float64)).astype(np.float32))


def test_float16_every_value() -> None:
    x = np.arange(2**16, dtype=np.uint16).view(np.float16)
    with np.errstate(all="ignore"):  # NOTE: signalling NaNs among them; as Node.apply runs it
        ours = NumpyBackend.erf(x)
    assert ours.dtype == np.float16
    with np.errstate(all="ignore"):
        expect = _libm(x.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(ours, expect)


def test_one_erf() -> None:
    """The backend's erf, ``torch.erf``'s, is pointwise_special's (``ndtr``, ``erfinv``)."""
    assert S.erf is E.erf
    x = np.random.default_rng(4).standard_normal((3, 5))
    np.testing.assert_array_equal(NumpyBackend.erf(x), E.erf(np, x))
    assert NumpyBackend.erf(np.array(0.5)).shape == ()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_and_erf_family_against_torch(device: str, dtype: str) -> None:
    """Exact GELU forward and backward, ``erf``, ``erfc``, ``erfcx``, ``erfinv``, ``ndtr`` on
    wide inputs against torch (the CUDA path runs ``pointwise_erf`` on CuPy's arrays)."""
    rng = np.random.default_rng(5)
    a = np.concatenate([rng.standard_normal(2000) * 3, [0.0, -0.0, 8.0, -8.0, 30.0]]).astype(dtype)
    p = rng.uniform(-1, 1, 500).astype(dtype)

    def gelu(m: Any) -> Any:
        x = _lib(m, a, device, grad=True)
        y = m.nn.functional.gelu(x)
        (g,) = m.autograd.grad(y, x, m.ones_like(y))
        return m.stack([y, g])

    compare(gelu)
    rtol = 1e-13 if dtype == "float64" else None
    for path in ["erf", "erfc", "special.erfcx", "special.ndtr"]:
        compare(lambda m, path=path: _call(m, path)(_lib(m, a, device)), rtol=rtol)
    compare(lambda m: m.erfinv(_lib(m, p, device)), rtol=rtol)


def _call(m: Any, path: str) -> Any:
    f: Any = m
    for part in path.split("."):
        f = getattr(f, part)
    return f


def test_cpu_and_device_agree(device: str) -> None:
    """The same table on both: ``erfc`` (no ``exp`` in it) within 1e-15 of the CPU's."""
    x = np.random.default_rng(6).uniform(-6, 6, 1000)
    cpu = ag.erfc(ag.tensor(x)).numpy()
    np.testing.assert_allclose(ag.erfc(ag.tensor(x, device=device)).cpu().numpy(), cpu,
                               rtol=1e-15, atol=0)
