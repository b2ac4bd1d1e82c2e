"""Backend entries of the pointwise family (``functions/pointwise*.py``, ``ops/pointwise*.py``),
written once for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name``
tells them apart where they differ). Mixed into both backends.

Every function here exists in NumPy and CuPy alike (CuPy has no ``erfinv`` or ``lgamma`` in its
main namespace): the special functions are our own (``pointwise_special``), computed in float64
and rounded to the input's dtype. Formulas PyTorch's kernels spell out (``logaddexp``, ``sinc``,
``logit``, ``lerp``, ...) are written as they are, in the input's dtype (float16 in float32, as
PyTorch's CPU kernels compute), so that the rounding matches too.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from . import pointwise_bessel as BE
from . import pointwise_igamma as IG
from . import pointwise_poly as PO
from . import pointwise_special as S

Array = Any


class PointwiseBackend:
    """The pointwise family's primitives; ``self`` is the backend object."""

    xp: Any
    copy: Any  # the backend's own entries these build on
    sign: Any

    # ---- exact widening -----------------------------------------------------------------------
    def widen_exact(self, x: Array) -> Array:
        """``x`` as float64, exactly. NOTE: CuPy compiles its kernels with ``-ftz=true``, so its
        float32 kernels (a cast too) read subnormals as zero; here they are rebuilt from their
        bits (``mantissa * 2**-149``), which needs no float32 arithmetic."""
        xp = self.xp
        wide = x.astype("float64")
        if getattr(self, "name", "numpy") == "numpy" or x.dtype != xp.float32:
            return wide
        bits = x.view(xp.int32)
        frac = bits & 0x7FFFFF
        tiny = ((bits & 0x7F800000) == 0) & (frac != 0)
        mag = frac.astype("float64") * 2.0**-149
        return xp.where(tiny, xp.where(bits < 0, -mag, mag), wide)

    def frexp(self, x: Array) -> tuple[Array, Array]:
        """``(mantissa, exponent)`` of float ``x``: the mantissa in ``x``'s dtype, in
        ``[0.5, 1)`` (or 0, inf, NaN as ``x``), the exponent int32; subnormals too (see
        ``widen_exact``)."""
        xp = self.xp
        m, e = xp.frexp(self.widen_exact(x) if x.dtype == xp.float32 else x)
        return m.astype(x.dtype, copy=False), e.astype("int32", copy=False)

    # ---- NumPy's ufuncs, as they are ---------------------------------------------------------
    def tan(self, x: Array) -> Array:
        return self.xp.tan(x)

    def sinh(self, x: Array) -> Array:
        return self.xp.sinh(x)

    def cosh(self, x: Array) -> Array:
        return self.xp.cosh(x)

    def arcsin(self, x: Array) -> Array:
        return self.xp.arcsin(x)

    def arccos(self, x: Array) -> Array:
        return self.xp.arccos(x)

    def arctan(self, x: Array) -> Array:
        return self.xp.arctan(x)

    def arcsinh(self, x: Array) -> Array:
        return self.xp.arcsinh(x)

    def arccosh(self, x: Array) -> Array:
        return self.xp.arccosh(x)

    def arctanh(self, x: Array) -> Array:
        return self.xp.arctanh(x)

    def log2(self, x: Array) -> Array:
        return self.xp.log2(x)

    def log10(self, x: Array) -> Array:
        return self.xp.log10(x)

    def exp2(self, x: Array) -> Array:
        return self.xp.exp2(x)

    def ceil(self, x: Array) -> Array:
        return self.xp.ceil(x)

    def rint(self, x: Array) -> Array:
        return self.xp.rint(x)  # NOTE: half to even, as PyTorch's round

    def signbit(self, x: Array) -> Array:
        return self.xp.signbit(x)

    def arctan2(self, y: Array, x: Array) -> Array:
        return self.xp.arctan2(y, x)

    def hypot(self, x: Array, y: Array) -> Array:
        return self.xp.hypot(x, y)

    def copysign(self, x: Array, y: Any) -> Array:
        return self.xp.copysign(x, y).astype(x.dtype, copy=False)

    def nextafter(self, x: Array, y: Array) -> Array:
        return self.xp.nextafter(x, y)

    def fmax_first(self, x: Array, y: Array) -> Array:
        """The larger, ignoring a nan; ``x`` on ties (``fmax(-0.0, 0.0)`` is -0.0, as PyTorch's)."""
        xp = self.xp
        return xp.where((x >= y) | (y != y), x, y)

    def fmin_first(self, x: Array, y: Array) -> Array:
        xp = self.xp
        return xp.where((x <= y) | (y != y), x, y)

    def isfinite_mask(self, x: Array) -> Array:
        return self.xp.isfinite(x)

    # ---- PyTorch's formulas ------------------------------------------------------------------
    def frac(self, x: Array) -> Array:
        return x - self.xp.trunc(x)  # NOTE: frac(+-inf) is nan, as PyTorch's

    def round_decimals(self, x: Array, decimals: int) -> Array:
        """``round(x, decimals)`` as PyTorch: scale by a power of ten (in ``x``'s dtype), round
        half to even, scale back."""
        xp = self.xp
        t = _opmath(x)
        # NOTE: 10 ** |decimals| in double, inf past 1e308 (then the result is nan), as PyTorch
        ten = xp.power(xp.asarray(10.0), float(abs(decimals))).astype(t.dtype)
        out = xp.rint(t * ten) / ten if decimals > 0 else xp.rint(t / ten) * ten
        return out.astype(x.dtype, copy=False)

    def heaviside(self, x: Array, values: Array) -> Array:
        """``values`` where ``x == 0``, else ``x > 0`` (nan gives 0, as PyTorch's)."""
        xp = self.xp
        return xp.where(x == 0, values, x > 0).astype(x.dtype, copy=False)

    def nan_to_num(self, x: Array, nan: float, posinf: float | None,
                   neginf: float | None) -> Array:
        """nan, +inf and -inf replaced; the infinities by ``x``'s dtype's extremes by default."""
        xp = self.xp
        info = xp.finfo(x.dtype)
        hi = info.max if posinf is None else posinf
        lo = info.min if neginf is None else neginf
        out = xp.where(x != x, xp.asarray(nan).astype(x.dtype), x)
        out = xp.where(out == math.inf, xp.asarray(hi).astype(x.dtype), out)
        return xp.where(out == -math.inf, xp.asarray(lo).astype(x.dtype), out)

    def sgn(self, x: Array) -> Array:
        return self.copy(x) if x.dtype == "bool" else self.sign(x)

    def sinc(self, x: Array) -> Array:
        """``sin(pi x) / (pi x)``, 1 at 0, as PyTorch computes it (in ``x``'s dtype)."""
        xp = self.xp
        t = _opmath(x)
        y = t * xp.asarray(math.pi, dtype=t.dtype)
        return xp.where(t == 0, 1.0, xp.sin(y) / y).astype(x.dtype, copy=False)

    def logit(self, x: Array, eps: float | None) -> Array:
        """``log(z / (1 - z))``, ``z`` = ``x`` clamped to ``[eps, 1 - eps]`` when given."""
        xp = self.xp
        t = _opmath(x)
        if eps is not None:
            lo = xp.asarray(eps, dtype=t.dtype)
            t = xp.where(t < lo, lo, xp.where(t > 1 - lo, 1 - lo, t))
        return xp.log(t / (1 - t)).astype(x.dtype, copy=False)

    def logaddexp(self, x: Array, y: Array) -> Array:
        """``max + log1p(exp(-|x - y|))``; equal infinities give themselves."""
        return self._logaddexp(x, y, self.xp.exp, 1.0)

    def logaddexp2(self, x: Array, y: Array) -> Array:
        return self._logaddexp(x, y, self.xp.exp2, 1 / math.log(2))

    def _logaddexp(self, x: Array, y: Array, exp: Callable[[Array], Array], scale: float) -> Array:
        xp = self.xp
        a, b = _opmath(x), _opmath(y)
        m = xp.maximum(a, b)
        out = m + xp.log1p(exp(-xp.abs(a - b))) * scale
        out = xp.where(xp.isinf(a) & (a == b), a, out)
        return out.astype(x.dtype, copy=False)

    def xlogy(self, x: Any, y: Any) -> Array:
        """``x * log(y)``: 0 where ``x == 0`` unless ``y`` is nan."""
        return self._xlog(x, y, self.xp.log)

    def xlog1py(self, x: Any, y: Any) -> Array:
        return self._xlog(x, y, self.xp.log1p)

    def _xlog(self, x: Any, y: Any, log: Callable[[Array], Array]) -> Array:
        xp = self.xp
        dtype = (x if hasattr(x, "dtype") else y).dtype
        a, b = xp.asarray(x, dtype=dtype), xp.asarray(y, dtype=dtype)
        out = xp.where(b != b, b, xp.where(a == 0, 0.0, a * log(b)))
        return out.astype(dtype, copy=False)

    def entr(self, x: Array) -> Array:
        """``-x log(x)``; 0 at 0, -inf below."""
        xp = self.xp
        out = xp.where(x > 0, -x * xp.log(xp.where(x > 0, x, 1)), xp.where(x == 0, 0.0, -math.inf))
        return xp.where(x != x, x, out).astype(x.dtype, copy=False)

    def ldexp(self, x: Array, e: Array) -> Array:
        return x * self.xp.exp2(e.astype(x.dtype))

    def lerp(self, x: Array, end: Array, w: Any) -> Array:
        """``x + w (end - x)`` for ``|w| < 1/2``, else ``end - (end - x)(1 - w)``, as PyTorch."""
        xp = self.xp
        a, b = _opmath(x), _opmath(end)
        w = _opmath(w) if hasattr(w, "dtype") else w
        d = b - a
        small = xp.abs(w) < 0.5
        out = xp.where(small, a + w * d, b - d * (1 - w))
        return out.astype(x.dtype, copy=False)

    # ---- special functions (pointwise_special), in float64 -----------------------------------
    def erfc(self, x: Array) -> Array:
        return self._double(S.erfc, x)

    def erfcx(self, x: Array) -> Array:
        return self._double(S.erfcx, x)

    def erfinv(self, x: Array) -> Array:
        return self._double(S.erfinv, x)

    def ndtr(self, x: Array) -> Array:
        """``(1 + erf(x / sqrt 2)) / 2``, PyTorch's formula (so its left tail is 0 below about
        -8.3, as there)."""
        xp = self.xp
        t = _opmath(x)
        half = xp.asarray(math.sqrt(0.5), dtype=t.dtype)
        e = self._double(S.erf, t * half)
        return ((1 + e) * 0.5).astype(x.dtype, copy=False)

    def ndtri(self, x: Array) -> Array:
        return self._double(S.ndtri, x)

    def log_ndtr(self, x: Array) -> Array:
        return self._double(S.log_ndtr, x)

    def lgamma(self, x: Array) -> Array:
        return self._double(S.lgamma, x)

    def digamma(self, x: Array) -> Array:
        return self._double(S.digamma, x)

    def polygamma(self, n: int, x: Array) -> Array:
        if n == 0:
            return self._double(S.digamma, x)
        if n == 1:
            return self._double(S.trigamma, x)
        return self._double(lambda xp, t: S.polygamma(xp, n, t), x)

    def zeta(self, s: Array, q: Array) -> Array:
        xp = self.xp
        s, q = xp.broadcast_arrays(s, q)
        dtype = s.dtype
        out = S.zeta(xp, xp.ravel(s).astype("float64"), xp.ravel(q).astype("float64"))
        return out.reshape(s.shape).astype(dtype, copy=False)

    def i0(self, x: Array) -> Array:
        return self._double(lambda xp, t: S.bessel_i(xp, t, 0, False), x)

    def i0e(self, x: Array) -> Array:
        return self._double(lambda xp, t: S.bessel_i(xp, t, 0, True), x)

    def i1(self, x: Array) -> Array:
        return self._double(lambda xp, t: S.bessel_i(xp, t, 1, False), x)

    def i1e(self, x: Array) -> Array:
        return self._double(lambda xp, t: S.bessel_i(xp, t, 1, True), x)

    def spherical_bessel_j0(self, x: Array) -> Array:
        return self._double(S.spherical_j0, x)

    # ---- Bessel functions, Airy, orthogonal polynomials, incomplete gamma (no derivative but
    # igamma's in x): pointwise_bessel, pointwise_poly, pointwise_igamma ------------------------
    def bessel_j0(self, x: Array) -> Array:
        return self._double(lambda xp, t: BE.bessel_j(xp, t, 0), x)

    def bessel_j1(self, x: Array) -> Array:
        return self._double(lambda xp, t: BE.bessel_j(xp, t, 1), x)

    def bessel_y0(self, x: Array) -> Array:
        return self._double(lambda xp, t: BE.bessel_y(xp, t, 0), x)

    def bessel_y1(self, x: Array) -> Array:
        return self._double(lambda xp, t: BE.bessel_y(xp, t, 1), x)

    def modified_bessel_k0(self, x: Array) -> Array:
        return self._double(lambda xp, t: BE.bessel_k(xp, t, 0, False), x)

    def modified_bessel_k1(self, x: Array) -> Array:
        return self._double(lambda xp, t: BE.bessel_k(xp, t, 1, False), x)

    def scaled_modified_bessel_k0(self, x: Array) -> Array:
        return self._double(lambda xp, t: BE.bessel_k(xp, t, 0, True), x)

    def scaled_modified_bessel_k1(self, x: Array) -> Array:
        return self._double(lambda xp, t: BE.bessel_k(xp, t, 1, True), x)

    def airy_ai(self, x: Array) -> Array:
        return self._double(BE.airy_ai, x)

    def orthogonal_polynomial(self, name: str, x: Array, n: Array) -> Array:
        """``torch.special.<name>(x, n)`` (``pointwise_poly``), ``x`` and ``n`` arrays of the
        result dtype, broadcast."""
        kind = name[-1]
        if name.startswith("hermite"):
            # NOTE: PyTorch gives NaN past n = 512, or 128 for float32 results
            limit = 128 if x.dtype == self.xp.float32 else 512
            return self._double2(lambda xp, a, b: PO.hermite(xp, a, b, kind == "h", limit),
                                 x, n)
        if name.startswith("laguerre"):
            return self._double2(PO.laguerre, x, n)
        if name.startswith("legendre"):
            return self._double2(PO.legendre, x, n)
        shifted = name.startswith("shifted")
        return self._double2(lambda xp, a, b: PO.chebyshev(xp, kind, a, b, shifted), x, n)

    def igamma(self, a: Array, x: Array, upper: bool) -> Array:
        """``P(a, x)`` or (``upper``) ``Q(a, x)``, the regularised incomplete gamma functions."""
        return self._double2(lambda xp, s, t: IG.igamma(xp, s, t, upper), a, x)

    def _double2(self, fn: Callable[[Any, Array, Array], Array], a: Array, b: Array) -> Array:
        """``fn(xp, a, b)`` on ``a`` and ``b`` broadcast and flat in float64, returned in their
        shape and ``a``'s dtype."""
        xp = self.xp
        a, b = xp.broadcast_arrays(a, b)
        out = fn(xp, xp.ravel(a).astype("float64"), xp.ravel(b).astype("float64"))
        return out.reshape(a.shape).astype(a.dtype, copy=False)

    def _double(self, fn: Callable[[Any, Array], Array], x: Array) -> Array:
        """``fn(xp, x)`` on ``x`` as a flat float64 array, returned in ``x``'s shape and dtype."""
        xp = self.xp
        flat = xp.ravel(x).astype("float64")
        return fn(xp, flat).reshape(x.shape).astype(x.dtype, copy=False)


def _opmath(x: Array) -> Array:
    """``x`` in the dtype PyTorch's CPU kernels compute in: float16 in float32."""
    return x.astype("float32") if x.dtype == "float16" else x
