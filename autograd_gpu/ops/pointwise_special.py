"""Special-function ops: the error function family (``erf``, ``erfc``, ``erfinv``, ``erfcx``,
``ndtr``, ``ndtri``, ``log_ndtr``), the gamma family (``lgamma``, ``digamma``, ``polygamma``,
``mvlgamma``, ``zeta``), modified Bessel functions (``i0``, ``i0e``, ``i1``, ``i1e``) and
``entr``. Forward on backend arrays (``backends/pointwise_special``), backward with tensor ops
(PyTorch's derivative formulas), so double backward works."""

from __future__ import annotations

import math
from typing import Any

from .elementwise import _Binary
from .pointwise import _Math
from .util import c_order

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


class Erf(_Math):
    node_name, entry = "ErfBackward0", "erf"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * (-x * x).exp() * _TWO_OVER_SQRT_PI


class Erfc(_Math):
    node_name, entry = "ErfcBackward0", "erfc"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * (-x * x).exp() * -_TWO_OVER_SQRT_PI


class Erfinv(_Math):
    node_name, entry, saves = "ErfinvBackward0", "erfinv", "out"

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad * (out * out).exp() * (math.sqrt(math.pi) / 2)


class Erfcx(_Math):
    node_name, entry, saves = "SpecialErfcxBackward0", "erfcx", "x out"

    def grad_of(self, grad: Any, x: Any, out: Any) -> Any:
        return grad * (2 * x * out - _TWO_OVER_SQRT_PI)


class Ndtr(_Math):
    """``(1 + erf(x / sqrt 2)) / 2``; PyTorch records its last step, a MulBackward1."""

    node_name, entry = "MulBackward1", "ndtr"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * (x * x * -0.5).exp() / _SQRT_2PI


class Ndtri(_Math):
    node_name, entry, saves = "SpecialNdtriBackward0", "ndtri", "out"

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad * (out * out * 0.5).exp() * _SQRT_2PI


class LogNdtr(_Math):
    node_name, entry, saves = "SpecialLogNdtrBackward0", "log_ndtr", "x out"

    def grad_of(self, grad: Any, x: Any, out: Any) -> Any:
        return grad * (-(out + x * x * 0.5)).exp() / _SQRT_2PI


class Lgamma(_Math):
    node_name, entry = "LgammaBackward0", "lgamma"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * x.digamma()


class Digamma(_Math):
    node_name, entry = "DigammaBackward0", "digamma"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * x.polygamma(1)


class Polygamma(_Math):
    def __init__(self, n: int, inplace: bool = False) -> None:
        self.n = n
        self.node_name = "PolygammaBackward1" if inplace else "PolygammaBackward0"  # PyTorch's

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.polygamma(self.n, x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * x.polygamma(self.n + 1)


class Mvlgamma(_Math):
    """``sum_{j<p} lgamma(x - j/2) + p (p - 1) / 4 log(pi)``."""

    node_name = "MvlgammaBackward0"
    elementwise = False  # NOTE: PyTorch's is a sum over a new last dim: C-contiguous

    def __init__(self, p: int) -> None:
        self.p = p

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        b = self.backend
        out = b.lgamma(x)
        for j in range(1, self.p):
            out = out + b.lgamma(x - 0.5 * j)
        out = out + self.p * (self.p - 1) / 4 * math.log(math.pi)
        return c_order(b, out.astype(x.dtype, copy=False))

    def grad_of(self, grad: Any, x: Any) -> Any:
        d = x.digamma()
        for j in range(1, self.p):
            d = d + (x - 0.5 * j).digamma()
        return grad * d


class I0(_Math):
    node_name, entry = "I0Backward0", "i0"

    def grad_of(self, grad: Any, x: Any) -> Any:
        from ..functions.pointwise_special import i1  # late: functions build on ops

        return grad * i1(x)


class I0e(_Math):
    node_name, entry, saves = "SpecialI0EBackward0", "i0e", "x out"

    def grad_of(self, grad: Any, x: Any, out: Any) -> Any:
        from ..functions.pointwise_special import i1e

        return grad * (i1e(x) - x.sgn() * out)


class I1(_Math):
    """``I_1``; the gradient ``i0(x) - i1(x) / x`` is 1/2 for ``|x| <= eps``, as PyTorch's."""

    node_name, entry, saves = "SpecialI1Backward0", "i1", "x out"

    def grad_of(self, grad: Any, x: Any, out: Any) -> Any:
        big, safe = _away_from_zero(x)
        return grad * (safe.i0() - out / safe).where(big, 0.5)


class I1e(_Math):
    node_name, entry, saves = "SpecialI1EBackward0", "i1e", "x out"

    def grad_of(self, grad: Any, x: Any, out: Any) -> Any:
        from ..functions.pointwise_special import i0e

        big, safe = _away_from_zero(x)
        return grad * (i0e(safe) - out * (safe.sgn() + 1 / safe)).where(big, 0.5)


def _away_from_zero(x: Any) -> tuple[Any, Any]:
    """``|x| > eps`` and ``x`` with eps where not (the formulas' 1/x stays finite there)."""
    eps = {"float64": 2.220446049250313e-16, "float32": 1.1920928955078125e-07}.get(
        x.dtype.name, 0.0009765625)
    big = x.abs() > eps
    return big, x.where(big, eps)


class NoDerivative(_Math):
    """``backend.<entry>(x)`` for the functions PyTorch gives no derivative (``modified_bessel_i0``,
    ``spherical_bessel_j0``, ...): applied without recording, the result never requires grad."""

    saves = ""

    def __init__(self, entry: str) -> None:
        self.entry = entry


class Entr(_Math):
    node_name, entry = "SpecialEntrBackward0", "entr"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * -(1 + x.log())


class Zeta(_Binary):
    """Hurwitz's ``zeta(x, q)``; only ``q`` has a derivative, ``-x zeta(x + 1, q)``
    (SpecialZetaBackward0; 1 and 2 with a scalar ``x`` or ``q``)."""

    def __init__(self, name: str) -> None:
        self.node_name = name

    def compute(self, x: Any, y: Any) -> Any:
        if self.needs_input_grad and self.needs_input_grad[1]:
            self.save_for_backward(x, y)
        b = self.backend
        xs = x if hasattr(x, "dtype") else b.asarray(x, dtype=y.dtype)
        ys = y if hasattr(y, "dtype") else b.asarray(y, dtype=x.dtype)
        return b.zeta(xs, ys)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        if self.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        from ..functions.pointwise_special import zeta  # late: functions build on ops

        x, y = self.saved_tensors
        return None, self.reduce(grad * -x * zeta(x + 1, y), 1)



class Polynomial(_Binary):
    """``torch.special``'s orthogonal polynomials ``f(x, n)`` (``backend.orthogonal_polynomial``):
    applied without recording, PyTorch defines no derivative."""

    def __init__(self, name: str) -> None:
        self.polynomial = name

    def compute(self, x: Any, y: Any) -> Any:
        return self.backend.orthogonal_polynomial(self.polynomial, x, y)


class Igamma(_Binary):
    """``P(a, x)`` (IgammaBackward0) or ``Q(a, x)`` (``upper``, IgammacBackward0); only ``x`` has
    a derivative, ``+-x**(a-1) e**-x / Gamma(a)``, PyTorch's formula."""

    def __init__(self, upper: bool) -> None:
        self.upper = upper
        self.node_name = "IgammacBackward0" if upper else "IgammaBackward0"

    def compute(self, x: Any, y: Any) -> Any:
        if self.needs_input_grad and self.needs_input_grad[1]:
            self.save_for_backward(x, y)
        return self.backend.igamma(x, y, self.upper)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        if self.needs_input_grad[0]:
            raise NotImplementedError(
                f"the derivative for '{'igammac' if self.upper else 'igamma'}: input' is not "
                "implemented.")
        a, x = self.saved_tensors
        d = ((a - 1) * x.log() - x - a.lgamma()).exp()
        return None, self.reduce(grad * (-d if self.upper else d), 1)
