"""The fake ``cupy.random``: ``RandomState(seed)`` over NumPy's PCG64, with CuPy's signatures
(float32/float64 ``dtype`` arguments, 0-d arrays for ``size=None``, device arrays out), and
``poisson`` with device-array rates."""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from . import _array as A

_FLOATS = (np.dtype("float32"), np.dtype("float64"))


def _float_dtype(dtype: Any) -> np.dtype:
    dt = np.dtype(dtype)
    if dt not in _FLOATS:
        raise TypeError(f"cupy.random only supports float32 and float64 (got {dt})")
    return dt


def _shape(size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    return (int(size),) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)


class RandomState:
    """A seeded stream (CuPy's is cuRAND's; the numbers differ, the contract does not)."""

    def __init__(self, seed: Any = None, method: Any = None) -> None:
        self.seed(seed)

    def seed(self, seed: Any = None) -> None:
        if seed is None:
            self._gen = np.random.Generator(np.random.PCG64())
            return
        seed = int(seed)
        if seed < 0 or seed >= 1 << 64:
            raise ValueError(f"seed must be an integer in [0, 2**64), got {seed}")
        self._gen = np.random.Generator(np.random.PCG64(seed))

    def random_sample(self, size: Any = None, dtype: Any = float) -> A.ndarray:
        dt = _float_dtype(dtype)
        return A.new(np.asarray(self._gen.random(_shape(size), dtype=dt)))

    def rand(self, *size: int, dtype: Any = float) -> A.ndarray:
        return self.random_sample(size, dtype)

    def standard_normal(self, size: Any = None, dtype: Any = float) -> A.ndarray:
        dt = _float_dtype(dtype)
        return A.new(np.asarray(self._gen.standard_normal(_shape(size), dtype=dt)))

    def randn(self, *size: int, dtype: Any = float) -> A.ndarray:
        return self.standard_normal(size, dtype)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None,
               dtype: Any = float) -> A.ndarray:
        return self.standard_normal(size, dtype) * scale + loc

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None,
                dtype: Any = float) -> A.ndarray:
        return self.random_sample(size, dtype) * (high - low) + low

    def randint(self, low: int, high: int | None = None, size: Any = None,
                dtype: Any = "l") -> A.ndarray:
        dt = np.dtype(dtype)
        if dt.kind not in "iu":
            raise TypeError(f"cupy.random.randint: dtype must be an integer type (got {dt})")
        if high is None:
            low, high = 0, low
        r = self._gen.integers(int(low), int(high), size=_shape(size), dtype=dt)
        return A.new(np.asarray(r))

    def poisson(self, lam: Any = 1.0, size: Any = None, dtype: Any = "l") -> A.ndarray:
        """CuPy's: ``lam`` a number or a device array (``size=None``: its shape); int32 or
        int64 counts."""
        dt = np.dtype(dtype)
        if dt not in (np.dtype("int32"), np.dtype("int64")):
            raise TypeError("cupy.random.poisson: only int32 and int64 are supported (got "
                            f"{dt})")
        if isinstance(lam, np.ndarray):
            raise A.unsupported(lam)
        rates = lam._a if isinstance(lam, A.ndarray) else lam
        shape = np.shape(rates) if size is None else _shape(size)
        return A.new(np.asarray(self._gen.poisson(rates, size=shape)).astype(dt))

    def binomial(self, n: Any, p: Any, size: Any = None, dtype: Any = int) -> A.ndarray:
        """CuPy's: ``n`` and ``p`` numbers or device arrays (``size=None``: their broadcast
        shape); integer counts of ``dtype``."""
        if isinstance(n, np.ndarray) or isinstance(p, np.ndarray):
            raise A.unsupported(n if isinstance(n, np.ndarray) else p)
        nv = n._a if isinstance(n, A.ndarray) else n
        pv = p._a if isinstance(p, A.ndarray) else p
        shape = np.broadcast_shapes(np.shape(nv), np.shape(pv)) if size is None else _shape(size)
        return A.new(np.asarray(self._gen.binomial(nv, pv, size=shape)).astype(np.dtype(dtype)))

    def permutation(self, num: Any) -> A.ndarray:
        if isinstance(num, A.ndarray):
            return A.new(self._gen.permutation(num._a))
        if isinstance(num, np.ndarray):
            raise A.unsupported(num)
        return A.new(self._gen.permutation(int(num)).astype(np.int64))

    def shuffle(self, a: A.ndarray) -> None:
        if not isinstance(a, A.ndarray):
            raise TypeError("The array must be cupy.ndarray")
        self._gen.shuffle(a._a)


_default = [RandomState()]


def get_random_state() -> RandomState:
    return _default[0]


def seed(seed: Any = None) -> None:
    _default[0].seed(seed)


random = types.ModuleType("cupy.random", "Fake cupy.random: RandomState over NumPy.")
random.RandomState = RandomState  # type: ignore[attr-defined]
random.get_random_state = get_random_state  # type: ignore[attr-defined]
random.seed = seed  # type: ignore[attr-defined]
for _name in ("random_sample", "rand", "standard_normal", "randn", "normal", "uniform", "randint",
              "poisson", "binomial", "permutation", "shuffle"):
    setattr(random, _name,
            lambda *a, _n=_name, **k: getattr(_default[0], _n)(*a, **k))
