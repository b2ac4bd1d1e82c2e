"""Unary ops: math (``exp``, ``log``, ``sqrt``, ``sin``, ...) and the activations PyTorch records
under their own names (``relu``, ``sigmoid``, ``tanh``, ``clamp``). Forward on backend arrays,
backward with tensor ops; ``_Unary`` (in ``elementwise``) passes ``grad_of`` the saved tensors."""

from __future__ import annotations

from typing import Any

from ..autograd import node as node_mod
from ..autograd.node import Node
from .complex import conj
from .elementwise import _shape, _Unary
from .util import reduce_grad


class Neg(_Unary):
    node_name = "NegBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        return self.backend.negative(x)

    def grad_of(self, grad: Any) -> Any:
        return -grad


class Abs(_Unary):
    node_name = "AbsBackward0"

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.abs(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        # NOTE: the gradient at 0 is 0 (sign(0) = 0), as in PyTorch; complex z gets
        # grad * z / |z| (0 at z == 0).
        if x.dtype.is_complex:
            r = x.abs()
            return (grad / r.where(r != 0, 1.0)).where(r != 0, 0.0) * x
        return grad * x.sign()


class Exp(_Unary):
    node_name = "ExpBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        out = self.backend.exp(x)
        self.save_for_backward(out)  # d exp = exp: keep the output, not the input
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad * conj(out)


class Log(_Unary):
    node_name = "LogBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.log(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad / conj(x)


class Log1p(_Unary):
    node_name = "Log1PBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.log1p(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad / conj(x + 1)


class Expm1(_Unary):
    node_name = "Expm1Backward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        out = self.backend.expm1(x)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad * conj(out + 1)


class Sqrt(_Unary):
    node_name = "SqrtBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        out = self.backend.sqrt(x)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad / (conj(out) * 2)


class Rsqrt(_Unary):
    node_name = "RsqrtBackward0"

    def forward(self, x: Any) -> Any:
        b = self.backend
        out = b.true_divide(1, b.sqrt(x)).astype(x.dtype, copy=False)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad * conj(out.pow(3) * -0.5)


class Reciprocal(_Unary):
    node_name = "ReciprocalBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        out = self.backend.true_divide(1, x).astype(x.dtype, copy=False)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        return -grad * conj(out * out)


class Sin(_Unary):
    node_name = "SinBackward0"

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.sin(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * conj(x.cos())


class Cos(_Unary):
    node_name = "CosBackward0"

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.cos(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * conj(-x.sin())


class Tanh(_Unary):
    node_name = "TanhBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        out = self.backend.tanh(x)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        if self._raw and out.dtype.kind != "c":  # bare arrays: one fused kernel on the GPU
            return self.backend.tanh_backward(out, grad)
        return grad * conj(1 - out * out)


class Sigmoid(_Unary):
    node_name = "SigmoidBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        out = self.backend.sigmoid(x).astype(x.dtype, copy=False)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        if self._raw and out.dtype.kind != "c":
            return self.backend.sigmoid_backward(out, grad)
        return grad * conj(out * (1 - out))


class Relu(_Unary):
    node_name = "ReluBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        out = self.backend.relu(x)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        if self._raw:
            return self.backend.relu_backward(out, grad)
        # NOTE: PyTorch's threshold_backward: the gradient is 0 where out <= 0 (so at x == 0)
        # and passes everywhere else, at NaN too (NaN <= 0 is false).
        return threshold_grad(self, grad, out, ~(out <= 0), 0.0, "ThresholdBackwardBackward0")


def threshold_grad(node: Node, grad: Any, x: Any, keep: Any, slope: float, name: str) -> Any:
    """``grad`` where ``keep``, else ``grad * slope``: the backward of relu-like ops. Recorded as
    one node that also depends on ``x`` (with derivative 0), so that under ``create_graph`` the
    result requires grad whenever ``x`` does, as PyTorch's threshold_backward does."""
    if not isinstance(grad, node_mod.Tensor_):  # the raw path: bare arrays
        return node.backend.where(keep, grad, grad * slope if slope else 0)
    return ThresholdGrad.apply(grad, x, keep=keep._data, slope=slope, name=name)


class ThresholdGrad(Node):
    """``where(keep, g, g * slope)`` with an (ignored) second input ``x``; see threshold_grad."""

    def __init__(self, keep: Any, slope: float, name: str) -> None:
        self.keep = keep
        self.slope = slope
        self.node_name = name

    def forward(self, g: Any, x: Any) -> Any:
        return self.backend.where(self.keep, g, g * self.slope if self.slope else 0)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        keep = self.wrap(self.keep)
        gg = grad.where(keep, grad * self.slope) if self.slope else grad.where(keep, 0.0)
        return gg if self.needs_input_grad[0] else None, grad * 0 if self.needs_input_grad[1] else None


class Clamp(_Unary):
    """``clamp(x, min, max)`` with scalar bounds (ClampBackward1)."""

    node_name = "ClampBackward1"

    def __init__(self, lo: Any, hi: Any) -> None:
        self.lo, self.hi = lo, hi

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        b = self.backend
        out = x
        if self.lo is not None:
            out = b.maximum(out, self.lo)
        if self.hi is not None:
            out = b.minimum(out, self.hi)
        return out.astype(x.dtype, copy=False) if out is not x else b.copy(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        # NOTE: the gradient passes where lo <= x <= hi, bounds included, as in PyTorch.
        keep = None
        if self.lo is not None:
            keep = x >= self.lo
        if self.hi is not None:
            keep = x <= self.hi if keep is None else keep & (x <= self.hi)
        return grad.where(keep, 0.0)


class ClampTensor(Node):
    """``clamp(x, min, max)`` with tensor bounds (either may be None), all broadcast together
    (ClampBackward0). ``out = minimum(maximum(x, min), max)``, so ``max`` wins when
    ``min > max``."""

    node_name = "ClampBackward0"

    def forward(self, x: Any, lo: Any, hi: Any) -> Any:
        b = self.backend
        self.shapes = (x.shape, _shape(lo), _shape(hi))
        self.save_for_backward(x, lo, hi)
        out = x if lo is None else b.maximum(x, lo)
        out = out if hi is None else b.minimum(out, hi)
        return b.iter_layout(out, (x, lo, hi))  # NOTE: TensorIterator's, over (x, min, max)

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        x, lo, hi = self.saved_tensors
        need = self.needs_input_grad
        # NOTE: as PyTorch: x gets the gradient where lo <= x <= hi (bounds included); lo where
        # x < lo (and lo < hi); hi where x > hi, or wherever hi < lo (then out is hi).
        keep = _both(x >= lo if lo is not None else None, x <= hi if hi is not None else None)
        gx = reduce_grad(grad.where(keep, 0.0), self.shapes[0]) if need[0] else None
        g_lo = g_hi = None
        if need[1]:
            take = _both(x < lo, lo < hi if hi is not None else None)
            g_lo = reduce_grad(grad.where(take, 0.0), self.shapes[1])
        if need[2]:
            take = x > hi if lo is None else (x > hi) | (hi < lo)
            g_hi = reduce_grad(grad.where(take, 0.0), self.shapes[2])
        return gx, g_lo, g_hi


def _both(a: Any, b: Any) -> Any:
    return a if b is None else b if a is None else a & b
