"""PyTorch's CPU random streams, reproduced: the same seed gives the same numbers as
``torch.manual_seed`` for the draws programs make most (``rand``, ``randn``, ``randint``,
``randperm``, ``uniform_``/``normal_`` and so every default initialisation, ``bernoulli_`` and
so ``dropout``, ``random_``).

PyTorch's CPU generator is a 32-bit Mersenne Twister (mt19937) seeded with the low 32 bits of
the seed; NumPy's ``MT19937`` bit generator, given the same state, yields the same 32-bit words.
On top of it, PyTorch's transformations (facts about its CPU kernels, checked against torch
2.13 in ``tests/test_torch_rng.py``):

- a 64-bit draw is two words, the first the high half;
- uniform ``[0, 1)``: ``(word & (2**24 - 1)) * 2**-24`` for float32 and float16 (rounded),
  ``(u64 & (2**53 - 1)) * 2**-53`` for float64; ``uniform_(a, b)`` is ``x * (b - a) + a`` with
  ``b - a`` in the tensor's dtype and the product-sum in double (fused for float64);
- normal, 16 or more elements: every element first gets a uniform, then each block of 16 becomes
  8 Box-Muller pairs (``u1 = 1 - d[j]``, ``u2 = d[j + 8]``, ``r = sqrt(-2 log u1)``, ``d[j] =
  r cos(2 pi u2)``, ``d[j + 8] = r sin(2 pi u2)``); a ragged tail redraws the last 16 elements
  and transforms them again. Fewer elements: double Box-Muller pairs
  (``r = sqrt(-2 log1p(-u2))``, ``theta = 2 pi u1``), the sine kept for the next draw (the
  generator's cached normal, reset by seeding);
- ``randint``: ``word % range`` (``u64 % range`` from 2**32 on) plus ``low``; ``randperm(n)``:
  ``n - 1`` Fisher-Yates swaps with ``word % (n - i)``; ``random_()`` on int64: ``u64 % 2**63``;
  ``bernoulli_(p)``: ``uniform64 < p``; ``bernoulli(p_tensor)``: a uniform of ``p``'s dtype
  below ``p``.

NOTE: PyTorch computes float32 normals with its own vectorised float math (SLEEF); here they are
computed with NumPy's float32 functions, so about one float32 sample in five differs from
PyTorch's in the last bit or two (float64 ones are equal). Not reproduced: float16 normals of
16 or more elements, and ``normal_`` into a non-contiguous tensor (PyTorch then draws one at a
time in memory order). The
other distributions (exponential, geometric, Cauchy, log-normal, Poisson, binomial,
multinomial) draw from this stream with their own transformations: reproducible, not PyTorch's
numbers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_MASK32 = 0xFFFFFFFF
_DIGITS = {"float16": 24, "float32": 24, "float64": 53}  # NOTE: float16 draws as float32
_FILL = 16  # PyTorch's normal_fill block


def _mt_state(seed: int) -> Any:
    """mt19937's state for ``seed`` (its ``init_genrand``), as NumPy's ``MT19937`` takes it."""
    key = [seed & _MASK32]
    for i in range(1, 624):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + i) & _MASK32)
    return {"bit_generator": "MT19937",
            "state": {"key": np.array(key, dtype=np.uint32), "pos": 624}}


def _two_sum(a: np.ndarray, b: Any) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fma(x: np.ndarray, d: float, c: float) -> np.ndarray:
    """``x * d + c`` rounded once (float64), by error-free transformations (Dekker's product,
    Knuth's sum): PyTorch's compiled ``uniform_`` contracts the expression into an FMA."""
    split = 134217729.0  # 2**27 + 1
    xh = x * split
    xh = xh - (xh - x)
    xl = x - xh
    dh = d * split
    dh = dh - (dh - d)
    dl = d - dh
    p = x * d
    e = ((xh * dh - p) + xh * dl + xl * dh) + xl * dl
    s, t = _two_sum(p, c)
    return s + (t + e)


class TorchCPUGenerator:
    """One PyTorch CPU stream: mt19937 words and the cached normal, with the draws the NumPy
    backend's sampling entries make. ``bit_generator.state`` is its (picklable) state."""

    def __init__(self, seed: int) -> None:
        self.bit_generator = self
        self._mt: Any = np.random.MT19937(0)
        self._mt.state = _mt_state(seed)
        self._next_normal: float | None = None

    # ---- state --------------------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        return {"bit_generator": "torch.cpu.mt19937", "mt19937": self._mt.state,
                "next_normal": self._next_normal}

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        if not isinstance(value, dict) or value.get("bit_generator") != "torch.cpu.mt19937":
            raise RuntimeError("set_state: expected a state from this generator's get_state")
        self._mt.state = value["mt19937"]
        self._next_normal = value["next_normal"]

    # ---- words --------------------------------------------------------------------------------
    def _words(self, n: int) -> np.ndarray:
        """``n`` 32-bit words (uint64 array)."""
        return self._mt.random_raw(n) if n else np.zeros(0, np.uint64)

    def _words64(self, n: int) -> np.ndarray:
        w = self._words(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def _unit(self, n: int, dtype: str) -> np.ndarray:
        """``n`` uniforms in [0, 1) as PyTorch draws them for ``dtype`` (float64 values)."""
        digits = _DIGITS.get(dtype, 24)
        bits = self._words64(n) if digits > 32 else self._words(n)
        return (bits & np.uint64((1 << digits) - 1)).astype(np.float64) * 2.0 ** -digits

    # ---- distributions ------------------------------------------------------------------------
    def random(self, shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
        return self.uniform(shape, 0.0, 1.0, dtype)

    def uniform(self, shape: tuple[int, ...], lo: float, hi: float, dtype: str) -> np.ndarray:
        x = self._unit(math.prod(shape), dtype)
        t = np.dtype(dtype).type
        if (lo, hi) != (0.0, 1.0):
            x = _fma(x, hi - lo, lo) if dtype == "float64" else (
                x * float(t(hi) - t(lo)) + float(t(lo)))
        out = x.reshape(shape).astype(dtype)  # NOTE: astype copies: the result owns its data
        if dtype != "float64" and hi > lo:
            # NOTE: a draw that rounds up to ``hi`` (float16) becomes ``lo``, as PyTorch's
            out[out >= t(hi)] = t(lo)
        return out

    def normal(self, shape: tuple[int, ...], mean: float, std: float,
               dtype: str) -> np.ndarray:
        n = math.prod(shape)
        z = self._fill(n, dtype) if n >= _FILL else self._pairs(n)
        if std == 1.0 and mean == 0.0:
            return z.reshape(shape).astype(dtype)
        # NOTE: float64 ``z * std + mean`` fused, as PyTorch's compiled kernel
        out = _fma(z, std, mean) if dtype == "float64" else z * std + mean
        return out.reshape(shape).astype(dtype)

    def standard_normal(self, shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
        return self.normal(shape, 0.0, 1.0, dtype)

    @staticmethod
    def _box_muller16(d: np.ndarray) -> None:
        """``normal_fill_16`` on each row of ``d`` (rows of 16 uniforms), in place, in ``d``'s
        precision."""
        t = d.dtype.type
        r = np.sqrt(t(-2) * np.log(t(1) - d[:, :8]))
        theta = t(2 * math.pi) * d[:, 8:]
        d[:, :8], d[:, 8:] = r * np.cos(theta), r * np.sin(theta)

    def _uniforms_as(self, n: int, dtype: str) -> np.ndarray:
        """``n`` uniforms stored in ``dtype`` (as the tensor holds them), in the kernel's
        working precision (float64 for float64, else float32)."""
        work = "float64" if dtype == "float64" else "float32"
        return self._unit(n, dtype).astype(dtype).astype(work)

    def _fill(self, n: int, dtype: str) -> np.ndarray:
        data = self._uniforms_as(n, dtype)
        whole = n - n % _FILL
        self._box_muller16(data[:whole].reshape(-1, _FILL))
        if n % _FILL:
            tail = self._uniforms_as(_FILL, dtype).reshape(1, _FILL)
            self._box_muller16(tail)
            data[n - _FILL:] = tail[0]
        return data.astype(np.float64)

    def _pairs(self, n: int) -> np.ndarray:
        """``n`` normals one at a time (PyTorch's ``normal_distribution<double>``), using and
        leaving the cached sine half of a pair."""
        out = np.empty(n)
        start = 0
        if n and self._next_normal is not None:
            out[0], self._next_normal, start = self._next_normal, None, 1
        pairs = (n - start + 1) // 2
        u = self._unit(2 * pairs, "float64").reshape(pairs, 2)
        r = np.sqrt(-2.0 * np.log1p(-u[:, 1]))
        theta = 2.0 * math.pi * u[:, 0]
        both = np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1).reshape(-1)
        out[start:] = both[:n - start]
        if (n - start) % 2:
            self._next_normal = float(both[-1])
        return out

    def integers(self, low: int, high: int, size: tuple[int, ...] = (),
                 dtype: str = "int64") -> np.ndarray:
        span = high - low
        n = math.prod(size)
        if span >= 1 << 64:
            raise RuntimeError("random_ range must fit in 64 bits")
        bits = self._words64(n) if span >= 1 << 32 else self._words(n)
        vals = [int(v) % span + low for v in bits] if span >= 1 << 63 else (
            (bits % np.uint64(span)).astype(np.int64) + low)
        return np.asarray(vals, dtype=np.int64).reshape(size).astype(dtype)

    def permutation(self, n: int) -> np.ndarray:
        perm = list(range(n))
        if n > 1:
            small = n < _MASK32 // 20
            draws = self._words(n - 1) if small else self._words64(n - 1)
            for i, w in enumerate(draws.tolist()):
                z = i + w % (n - i)
                perm[i], perm[z] = perm[z], perm[i]
        return np.asarray(perm, dtype=np.int64)

    def _numpy(self) -> np.random.Generator:
        """A NumPy generator seeded from this stream, for the distributions PyTorch's stream is
        not reproduced for (Poisson, binomial)."""
        return np.random.Generator(np.random.PCG64(int(self._words64(1)[0])))

    def poisson(self, lam: Any) -> Any:
        return self._numpy().poisson(lam)

    def binomial(self, n: Any, p: Any) -> Any:
        return self._numpy().binomial(n, p)
