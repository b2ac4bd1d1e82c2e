"""Pointwise unary ops beyond the basics: trigonometric and hyperbolic functions and their
inverses, logarithms and powers of base 2 and 10, rounding (``trunc``, ``ceil``, ``round``,
``frac``), ``sgn``/``angle``, ``deg2rad``/``rad2deg``, ``nan_to_num``, ``sinc`` and ``logit``.
Forward on backend arrays, backward with tensor ops (PyTorch's derivative formulas), so double
backward works. Binary and ternary ops are in ``pointwise_binary``, special functions in
``pointwise_special``."""

from __future__ import annotations

import math
from typing import Any

from .complex import conj
from .elementwise import _Unary, zeros_grad


class _Math(_Unary):
    """``out = backend.<entry>(x)``, saving ``x`` and/or ``out`` (``saves``) for ``grad_of``."""

    entry = ""
    saves = "x"

    def forward(self, x: Any) -> Any:
        out = getattr(self.backend, self.entry)(x)
        if self.saves == "x":
            self.save_for_backward(x)
        elif self.saves == "out":
            self.save_for_backward(out)
        elif self.saves:
            self.save_for_backward(x, out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        # NOTE: each grad_of is grad * f'(saved) with f real-analytic, so conjugating the saved
        # values gives grad * conj(f'(z)), PyTorch's convention for complex input (no-op on real).
        return (self.grad_of(grad, *[conj(t) for t in self.saved_tensors]),)


class Tan(_Math):
    node_name, entry, saves = "TanBackward0", "tan", "out"

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad * (1 + out * out)


class Sinh(_Math):
    node_name, entry = "SinhBackward0", "sinh"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * x.cosh()


class Cosh(_Math):
    node_name, entry = "CoshBackward0", "cosh"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * x.sinh()


class Asin(_Math):
    node_name, entry = "AsinBackward0", "arcsin"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * (1 - x * x).rsqrt()  # NOTE: nan outside [-1, 1], inf at +-1


class Acos(_Math):
    node_name, entry = "AcosBackward0", "arccos"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * -(1 - x * x).rsqrt()


class Atan(_Math):
    node_name, entry = "AtanBackward0", "arctan"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad / (x * x + 1)


class _NoInplaceGrad(_Math):
    """PyTorch records the in-place ``asinh_``/``acosh_``/``atanh_`` as ``<Op>Backward1``, a
    node whose backward refuses (``inplace=True``)."""

    node_name = ""

    def __init__(self, inplace: bool = False) -> None:
        if inplace:
            self.node_name = self.node_name.replace("Backward0", "Backward1")

    def backward(self, grad: Any) -> tuple[Any]:
        if self.node_name.endswith("1"):
            name = self.node_name[:-len("Backward1")].lower()
            raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not "
                                      "implemented.")
        return super().backward(grad)


class Asinh(_NoInplaceGrad):
    node_name, entry = "AsinhBackward0", "arcsinh"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * (x * x + 1).rsqrt()


class Acosh(_NoInplaceGrad):
    node_name, entry = "AcoshBackward0", "arccosh"

    def grad_of(self, grad: Any, x: Any) -> Any:
        if x.dtype.is_complex:  # NOTE: the principal branch: 1 / (sqrt(x - 1) sqrt(x + 1))
            return grad * ((x - 1).rsqrt() * (x + 1).rsqrt())
        return grad * (x * x - 1).rsqrt()


class Atanh(_NoInplaceGrad):
    node_name, entry = "AtanhBackward0", "arctanh"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad / (1 - x * x)


class Log2(_Math):
    node_name, entry = "Log2Backward0", "log2"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad / (x * math.log(2))


class Log10(_Math):
    node_name, entry = "Log10Backward0", "log10"

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad / (x * math.log(10))


class Exp2(_Math):
    node_name, entry, saves = "Exp2Backward0", "exp2", "out"

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad * out * math.log(2)


class Sinc(_Math):
    node_name, entry = "SincBackward0", "sinc"

    def grad_of(self, grad: Any, x: Any) -> Any:
        # NOTE: (pi x cos(pi x) - sin(pi x)) / (pi x**2); 0 at x == 0, as PyTorch
        px = x * math.pi
        d = (px * px.cos() - px.sin()) / (px * x)
        return d.where(x != 0, 0.0) * grad


class Deg2Rad(_Unary):
    """``x * (pi / 180)`` (``Rad2DegBackward0`` with ``180 / pi``)."""

    def __init__(self, name: str, factor: float) -> None:
        self.node_name, self.factor = name, factor

    def forward(self, x: Any) -> Any:
        b = self.backend
        if x.dtype == "float16":
            return b.opmath("multiply", x, self.factor)
        return b.multiply(x, self.factor)

    def grad_of(self, grad: Any) -> Any:
        return grad * self.factor


class NanToNum(_Unary):
    node_name = "NanToNumBackward0"

    def __init__(self, nan: float, posinf: float | None, neginf: float | None) -> None:
        self.args = (nan, posinf, neginf)

    def forward(self, x: Any) -> Any:
        if x.dtype.kind != "f":
            return self.backend.copy(x)
        self.save_for_backward(x)
        return self.backend.nan_to_num(x, *self.args)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * x.isfinite()  # NOTE: a product, as PyTorch's (nan * 0 is nan)


class Logit(_Unary):
    node_name = "LogitBackward0"

    def __init__(self, eps: float | None) -> None:
        self.eps = eps

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.logit(x, self.eps)

    def grad_of(self, grad: Any, x: Any) -> Any:
        d = grad / (x * (1 - x))
        # NOTE: as PyTorch: without eps nan outside [0, 1]; with eps 0 outside [eps, 1 - eps]
        # (a nan x fails both tests: its gradient stays nan)
        if self.eps is None:
            return d.where(~((x < 0) | (x > 1)), math.nan)
        return d.where(~((x < self.eps) | (x > 1 - self.eps)), 0.0)


# ---- piecewise constant: the gradient is 0 (PyTorch's zeros, even where grad is inf) ----------

class _Flat(_Unary):
    def grad_of(self, grad: Any) -> Any:
        return zeros_grad(grad)


class Trunc(_Flat):
    node_name = "TruncBackward0"

    def forward(self, x: Any) -> Any:
        return self.backend.trunc(x) if x.dtype.kind == "f" else self.backend.copy(x)


class Ceil(_Flat):
    node_name = "CeilBackward0"

    def forward(self, x: Any) -> Any:
        return self.backend.ceil(x) if x.dtype.kind == "f" else self.backend.copy(x)


class Round(_Flat):
    """``round(x)`` half to even (RoundBackward0), with ``decimals`` RoundBackward1."""

    def __init__(self, decimals: int | None) -> None:
        self.decimals = decimals
        self.node_name = "RoundBackward0" if decimals is None else "RoundBackward1"

    def forward(self, x: Any) -> Any:
        b = self.backend
        if x.dtype.kind != "f":
            return b.copy(x)
        return b.rint(x) if not self.decimals else b.round_decimals(x, self.decimals)


class Sgn(_Flat):
    node_name = "SgnBackward0"

    def forward(self, x: Any) -> Any:
        return self.backend.sgn(x)


class Angle(_Flat):
    """The argument of a real number: pi below 0, else 0 (nan stays nan)."""

    node_name = "AngleBackward0"

    def forward(self, x: Any) -> Any:
        b = self.backend
        return b.where(x < 0, math.pi, b.where(x != x, x, 0.0)).astype(x.dtype, copy=False)


class Frac(_Unary):
    node_name = "FracBackward0"

    def forward(self, x: Any) -> Any:
        return self.backend.frac(x)

    def grad_of(self, grad: Any) -> Any:
        return grad
