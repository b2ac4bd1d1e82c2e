"""Pointwise binary and ternary ops: ``atan2``, ``hypot``, ``logaddexp(2)``, ``copysign``,
``fmod``, ``fmax``/``fmin``, ``nextafter``, ``ldexp``, ``heaviside``, ``clamp_min``/``clamp_max``,
``xlogy``/``xlog1py``, ``lerp``, ``addcmul``/``addcdiv``. Inputs arrive promoted; ``_Binary``
reduces each gradient back to its input's shape. Backward with tensor ops (PyTorch's
formulas), so double backward works."""

from __future__ import annotations

import math
from typing import Any

from ..autograd.node import Node
from .complex import conj
from .elementwise import _Binary, _shape, zeros_grad
from .rounding import NOT_IMPLEMENTED, check_divisor
from .util import reduce_grad


class _Saving(_Binary):
    """``out = backend.<entry>(x, y)``, saving both inputs (and ``out`` with ``keep_out``)."""

    entry = ""
    keep_out = False

    def compute(self, x: Any, y: Any) -> Any:
        out = getattr(self.backend, self.entry)(x, y)
        if self.needs_input_grad:
            self.save_for_backward(x, y, out if self.keep_out else None)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y, out = self.saved_tensors
        need = self.needs_input_grad
        gx = self.reduce(self.grad_x(grad, x, y, out), 0) if need[0] else None
        gy = self.reduce(self.grad_y(grad, x, y, out), 1) if need[1] else None
        return gx, gy

    def grad_x(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        raise NotImplementedError

    def grad_y(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        raise NotImplementedError


class Atan2(_Saving):
    node_name, entry = "Atan2Backward0", "arctan2"

    def grad_x(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad * y * _recip_norm(x, y)

    def grad_y(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad * -x * _recip_norm(x, y)


def _recip_norm(x: Any, y: Any) -> Any:
    """``1 / (x**2 + y**2)``, 0 where that is inf (at the origin both gradients are 0, as
    PyTorch's)."""
    r = (x * x + y * y).reciprocal()
    return r.where(r != math.inf, 0.0)


class Hypot(_Saving):
    node_name, entry, keep_out = "HypotBackward0", "hypot", True

    def grad_x(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad * x / out  # NOTE: nan at (0, 0), as PyTorch

    def grad_y(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad * y / out


class Logaddexp(_Saving):
    node_name, entry = "LogaddexpBackward0", "logaddexp"

    def grad_x(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad / (1 + (y - x).exp())

    def grad_y(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad / (1 + (x - y).exp())


class Logaddexp2(_Saving):
    node_name, entry = "Logaddexp2Backward0", "logaddexp2"

    def grad_x(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad / (1 + (y - x).exp2())

    def grad_y(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad / (1 + (x - y).exp2())


class Copysign(_Saving):
    """``|x|`` with the sign of ``y`` (CopysignBackward0; a scalar ``y`` CopysignBackward1)."""

    entry, keep_out = "copysign", True

    def __init__(self, name: str = "CopysignBackward0") -> None:
        self.node_name = name

    def grad_x(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad * (out / x).where(x != 0, 0.0)

    def grad_y(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return zeros_grad(grad)


class Nextafter(_Saving):
    """The next float after ``x`` toward ``y``; PyTorch passes the gradient to ``x`` only."""

    node_name, entry = "NextafterBackward0", "nextafter"

    def grad_x(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad

    def grad_y(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return zeros_grad(grad)


class Ldexp(_Saving):
    """``x * 2**e``."""

    node_name, entry, keep_out = "LdexpBackward0", "ldexp", True

    def grad_x(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad * y.to(x.dtype).exp2()

    def grad_y(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad * out * math.log(2)


class Fmax(_Saving):
    """The larger of ``x`` and ``y``, ignoring a nan; ties give ``x`` the whole gradient."""

    node_name, entry = "FmaxBackward0", "fmax_first"

    def grad_x(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad.where((x >= y) | y.isnan(), 0.0)

    def grad_y(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad.where(~((x >= y) | y.isnan()), 0.0)


class Fmin(_Saving):
    node_name, entry = "FminBackward0", "fmin_first"

    def grad_x(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad.where((x <= y) | y.isnan(), 0.0)

    def grad_y(self, grad: Any, x: Any, y: Any, out: Any) -> Any:
        return grad.where(~((x <= y) | y.isnan()), 0.0)


class Fmod(_Binary):
    """``x - trunc(x / y) * y`` (C's fmod: the sign of ``x``). FmodBackward0 for a scalar
    ``y``, 1 for a tensor; integer division by zero raises PyTorch's ZeroDivisionError."""

    def __init__(self, name: str) -> None:
        self.node_name = name

    def compute(self, x: Any, y: Any) -> Any:
        if self.needs_input_grad and self.needs_input_grad[1]:
            self.save_for_backward(x, y)
        out = self.backend.fmod(x, y)
        check_divisor(self.backend, out, y)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        need = self.needs_input_grad
        gy = None
        if need[1]:
            x, y = self.saved_tensors
            gy = self.reduce(-grad * x.div(y, rounding_mode="trunc"), 1)
        return (self.reduce(grad, 0) if need[0] else None), gy


class Heaviside(_Binary):
    """``values`` where ``x == 0``, else ``x > 0``; PyTorch has no derivative."""

    node_name = NOT_IMPLEMENTED

    def compute(self, x: Any, y: Any) -> Any:
        return self.backend.heaviside(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        raise RuntimeError("derivative for aten::heaviside is not implemented")


class ClampMin(_Binary):
    """``max(x, bound)`` propagating nan (``clamp_min``; ``upper``: ``clamp_max``).
    ClampMinBackward0 for a scalar bound, 1 for a tensor; the bound takes the gradient where it
    wins (strictly)."""

    def __init__(self, upper: bool, name: str) -> None:
        self.upper, self.node_name = upper, name

    def compute(self, x: Any, y: Any) -> Any:
        b = self.backend
        if self.needs_input_grad:
            self.save_for_backward(x, y)
        # NOTE: NumPy's maximum/minimum propagate nan from either side, as PyTorch's clamp
        out = b.minimum(x, y) if self.upper else b.maximum(x, y)
        return out.astype(x.dtype, copy=False)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        keep = (x <= y) if self.upper else (x >= y)
        gx = self.reduce(grad.where(keep, 0.0), 0) if self.needs_input_grad[0] else None
        gy = None
        if self.needs_input_grad[1]:
            take = (x > y) if self.upper else (x < y)
            gy = self.reduce(grad.where(take, 0.0), 1)
        return gx, gy


class Xlogy(_Binary):
    """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is nan); ``log1p``: ``xlog1py``.
    Either side may be a Python scalar (PyTorch's ``XlogyBackward1``/``2``)."""

    def __init__(self, name: str, log1p: bool = False) -> None:
        self.node_name, self.log1p = name, log1p

    def compute(self, x: Any, y: Any) -> Any:
        if self.needs_input_grad:
            self.save_for_backward(x, y)
        b = self.backend
        return b.xlog1py(x, y) if self.log1p else b.xlogy(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        need = self.needs_input_grad
        gx = gy = None
        if need[0]:
            from ..functions import pointwise_binary as PB  # late: functions build on ops
            from ..functions import pointwise_special as PS

            nonzero = (x != 0).to(grad.dtype)
            f = PS.xlog1py if self.log1p else PB.xlogy
            gx = self.reduce(grad * f(nonzero, y), 0)
        if need[1]:
            gy = self.reduce(grad * x / ((y + 1) if self.log1p else y), 1)
        return gx, gy


class Lerp(Node):
    """``x + w (end - x)`` (PyTorch's two-sided formula): a scalar weight (LerpBackward0) or a
    tensor one (LerpBackward1), all broadcast together."""

    elementwise = True

    def __init__(self, weight: Any = None) -> None:
        self.weight = weight
        self.node_name = "LerpBackward1" if weight is None else "LerpBackward0"

    def forward(self, x: Any, end: Any, w: Any = None) -> Any:
        w = self.weight if w is None else w
        self.shapes = (x.shape, end.shape, _shape(w))
        if self.needs_input_grad:
            self.save_for_backward(x, end, w if self.weight is None else None)
        return self.backend.lerp(x, end, w)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        x, end, w = self.saved_tensors
        w = self.weight if w is None else w
        need = self.needs_input_grad
        gx = reduce_grad(grad * (1 - w), self.shapes[0]) if need[0] else None
        ge = reduce_grad(grad * w, self.shapes[1]) if need[1] else None
        if self.weight is not None:
            return gx, ge
        gw = reduce_grad(grad * (end - x), self.shapes[2]) if need[2] else None
        return gx, ge, gw


class Addcmul(Node):
    """``x + value * t1 * t2`` (``div``: ``x + value * t1 / t2``, AddcdivBackward0)."""

    elementwise = True

    def __init__(self, value: Any, div: bool) -> None:
        self.value, self.div = value, div
        self.node_name = "AddcdivBackward0" if div else "AddcmulBackward0"

    def forward(self, x: Any, t1: Any, t2: Any) -> Any:
        b = self.backend
        self.shapes = (x.shape, t1.shape, t2.shape)
        if self.needs_input_grad:
            self.save_for_backward(t1 if self.needs_input_grad[2] or self.div else None,
                                   t2 if self.needs_input_grad[1] or self.div else None)
        dtype = x.dtype
        if dtype == "float16":  # NOTE: in float32, as PyTorch's CPU kernel
            x, t1, t2 = (a.astype("float32") for a in (x, t1, t2))
        prod = b.true_divide(t1, t2) if self.div else b.multiply(t1, t2)
        if self.value != 1:
            prod = b.multiply(prod, self.value)
        return b.add(x, prod).astype(dtype, copy=False)

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        t1, t2 = map(conj, self.saved_tensors)  # NOTE: complex factors enter conjugated
        need, v = self.needs_input_grad, conj(self.value)
        gx = reduce_grad(grad, self.shapes[0]) if need[0] else None
        g1 = g2 = None
        if self.div:
            if need[1]:
                g1 = reduce_grad(grad * v / t2, self.shapes[1])
            if need[2]:
                g2 = reduce_grad(-grad * v * t1 / (t2 * t2), self.shapes[2])
        else:
            if need[1]:
                g1 = reduce_grad(grad * t2 * v, self.shapes[1])
            if need[2]:
                g2 = reduce_grad(grad * t1 * v, self.shapes[2])
        return gx, g1, g2
