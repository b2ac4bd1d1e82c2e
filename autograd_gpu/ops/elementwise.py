"""Elementwise ops: forward on backend arrays, backward with tensor ops (differentiable).

Binary ops broadcast like NumPy/PyTorch; ``_Binary`` remembers the input shapes and dtypes and
reduces each gradient back to its input's shape and dtype. Python scalars arrive as constants.
"""

from __future__ import annotations

from typing import Any, Callable

from ..autograd import node as node_mod
from ..autograd.node import Node
from .util import reduce_grad


def _quiet(forward: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``forward`` with NumPy's floating-point warnings off: poles and overflow give inf or
    nan silently, as in PyTorch (``log(0)`` is ``-inf``, ``sqrt(-1)`` is ``nan``)."""

    def quiet_forward(self: Node, *arrays: Any) -> Any:
        with self.backend.errstate(all="ignore"):
            return forward(self, *arrays)

    return quiet_forward


class _Binary(Node):
    """Base of broadcasting binary ops; inputs arrive already in the promoted dtype."""

    def forward(self, x: Any, y: Any) -> Any:
        if self.needs_input_grad:  # only backward reads them
            self.shapes = (_shape(x), _shape(y))
        return self.compute(x, y)

    def compute(self, x: Any, y: Any) -> Any:
        raise NotImplementedError

    def reduce(self, g: Any, i: int) -> Any:
        """``g`` summed back to input ``i``'s shape (undoing broadcasting)."""
        return reduce_grad(g, self.shapes[i])


def _shape(x: Any) -> tuple[int, ...] | None:
    return x.shape if hasattr(x, "shape") else None


class Add(_Binary):
    node_name = "AddBackward0"
    raw_ok = True

    def __init__(self, alpha: Any = 1) -> None:
        self.alpha = alpha

    def compute(self, x: Any, y: Any) -> Any:
        b = self.backend
        return _keep_dtype(b.add(x, y if self.alpha == 1 else _scaled(b, y, self.alpha)), x)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gy = grad if self.alpha == 1 else grad * self.alpha
        return self.reduce(grad, 0), self.reduce(gy, 1)


def _scaled(b: Any, y: Any, alpha: Any) -> Any:
    """``alpha * y``; a Python scalar ``y`` stays a Python scalar (NumPy would make it a float64
    that promotes a float32 tensor)."""
    return y * alpha if not hasattr(y, "dtype") else b.multiply(y, alpha)


def _keep_dtype(out: Any, x: Any) -> Any:
    """``out`` in ``x``'s dtype: ``bool + bool * 2`` stays bool (True), as in PyTorch."""
    return out if out.dtype == x.dtype else out.astype(x.dtype)


class Sub(_Binary):
    node_name = "SubBackward0"
    raw_ok = True

    def __init__(self, alpha: Any = 1) -> None:
        self.alpha = alpha

    def compute(self, x: Any, y: Any) -> Any:
        b = self.backend
        return _keep_dtype(b.subtract(x, y if self.alpha == 1 else _scaled(b, y, self.alpha)), x)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gy = -grad if self.alpha == 1 else grad * -self.alpha
        return self.reduce(grad, 0), self.reduce(gy, 1)


class Rsub(_Binary):
    """``other - x`` with ``x`` a tensor and ``other`` a scalar (PyTorch's rsub)."""

    node_name = "RsubBackward1"
    raw_ok = True

    def compute(self, x: Any, y: Any) -> Any:
        return self.backend.subtract(y, x)

    def backward(self, grad: Any) -> tuple[Any, None]:
        return self.reduce(-grad, 0), None


class Mul(_Binary):
    node_name = "MulBackward0"
    raw_ok = True

    def compute(self, x: Any, y: Any) -> Any:
        need = self.needs_input_grad
        if need:  # NOTE: keep each factor only if the other one needs its gradient; saved in
            # PyTorch's order (other, then self), which saved-tensor hooks observe
            self.save_for_backward(y if need[0] else None, x if need[1] else None)
        return self.backend.multiply(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        y, x = self.saved_tensors
        return (self.reduce(grad * y, 0) if y is not None else None,
                self.reduce(grad * x, 1) if x is not None else None)


class Div(_Binary):
    node_name = "DivBackward0"
    raw_ok = True
    raw_quiet = True

    def compute(self, x: Any, y: Any) -> Any:
        need = self.needs_input_grad
        if need:
            self.save_for_backward(x if need[1] else None, y)
        # NOTE: x / 0 is inf or nan without a warning, as in PyTorch.
        with self.backend.errstate(divide="ignore", invalid="ignore"):
            return self.backend.true_divide(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        need = self.needs_input_grad
        gx = self.reduce(grad / y, 0) if need[0] else None
        gy = self.reduce(-grad * x / (y * y), 1) if need[1] else None
        return gx, gy


class Pow(_Binary):
    """``x ** y``: PowBackward0 (scalar exponent), PowBackward1 (tensor exponent),
    PowBackward2 (scalar base)."""

    def __init__(self, name: str) -> None:
        self.node_name = name

    @_quiet
    def compute(self, x: Any, y: Any) -> Any:
        out = self.backend.power(x, y)
        need = self.needs_input_grad
        # NOTE: the output is read only by the exponent's gradient; kept only then (as PyTorch)
        self.save_for_backward(x, y, out if need and need[1] else None)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y, out = self.saved_tensors
        gx = gy = None
        if self.needs_input_grad[0]:
            # NOTE: exponent 0 gives gradient 0 everywhere (x ** -1 would be inf at x == 0).
            if isinstance(y, (int, float)):
                gx = grad * 0 if y == 0 else grad * y * x ** (y - 1)
            else:
                # NOTE: where y == 0 the exponent is swapped for 1, so 0 * inf never happens.
                gx = grad * y * x ** (y - 1).where(y != 0, 1.0)
            gx = self.reduce(gx, 0)
        if self.needs_input_grad[1]:
            # NOTE: d/dy x**y = x**y log x; where x == 0 and y >= 0 PyTorch defines it as 0.
            if isinstance(x, (int, float)):
                gy = grad * out * _log_scalar(x)
            else:
                # NOTE: log is taken of 1 instead of 0 there, so 0 * -inf never happens.
                gy = grad * out * x.where((x != 0) | (y < 0), 1.0).log()
            gy = self.reduce(gy, 1)
        return gx, gy


def _log_scalar(x: float) -> float:
    import math

    return math.log(x) if x > 0 else (float("-inf") if x == 0 else float("nan"))


class Maximum(_Binary):
    node_name = "MaximumBackward0"

    def compute(self, x: Any, y: Any) -> Any:
        self.save_for_backward(x, y)
        return self.backend.maximum(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        return _select_grads(self, grad, x < y, x > y, x == y)


class Minimum(_Binary):
    node_name = "MinimumBackward0"

    def compute(self, x: Any, y: Any) -> Any:
        self.save_for_backward(x, y)
        return self.backend.minimum(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        return _select_grads(self, grad, x > y, x < y, x == y)


def _select_grads(node: _Binary, grad: Any, x_loses: Any, y_loses: Any,
                  ties: Any) -> tuple[Any, Any]:
    # NOTE: as PyTorch: on ties each input gets half the gradient; an input gets none only where
    # it loses, so with a NaN (no comparison holds) both inputs get all of it.
    shared = grad.where(~ties, grad * 0.5)
    gx = shared.where(~x_loses, 0.0) if node.needs_input_grad[0] else None
    gy = shared.where(~y_loses, 0.0) if node.needs_input_grad[1] else None
    return node.reduce(gx, 0) if gx is not None else None, node.reduce(gy, 1) if gy is not None else None


class Where(_Binary):
    """``where(cond, x, y)``; ``cond`` is a parameter, not an input (it has no gradient)."""

    node_name = "WhereBackward0"

    def __init__(self, cond: Any) -> None:
        self.cond = cond

    def compute(self, x: Any, y: Any) -> Any:
        return self.backend.where(self.cond, x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        cond = self.wrap(self.cond)
        gx = self.reduce(grad.where(cond, 0.0), 0) if self.needs_input_grad[0] else None
        gy = self.reduce(grad.where(~cond, 0.0), 1) if self.needs_input_grad[1] else None
        return gx, gy


# ---- rounding divisions: //, %, div(rounding_mode=...) --------------------------------------

NOT_IMPLEMENTED = "torch::autograd::NotImplemented"  # PyTorch's node for a missing derivative


def check_divisor(backend: Any, out: Any, y: Any) -> None:
    """PyTorch's ``RuntimeError: ZeroDivisionError`` when an integer division that produced
    ``out`` divided by zero (NumPy returns 0 with a warning). An empty result divided nothing."""
    if out.dtype.kind not in "iu" or not out.size:
        return
    # NOTE: on CUDA this costs one reduction and one host sync, for integer divisions only (a
    # float division never gets here). PyTorch's CUDA kernels skip the check and return garbage
    # (pytorch/pytorch#135330, #165650, open); we raise as PyTorch does on the CPU, everywhere.
    # Every element of ``y`` reaches a non-empty broadcast result, so checking all of it is exact.
    if (bool(backend.any(y == 0)) if hasattr(y, "shape") else y == 0):
        raise RuntimeError("ZeroDivisionError")


class _RoundingDiv(_Binary):
    """Base of ``//``, ``%`` and ``div(rounding_mode=...)``: ``divide`` runs quietly (a float
    division by zero gives inf or nan, as in PyTorch), then an integer one by zero raises."""

    def compute(self, x: Any, y: Any) -> Any:
        b = self.backend
        with b.errstate(all="ignore"):
            out = self.divide(b, x, y)
        check_divisor(b, out, y)
        return out

    def divide(self, b: Any, x: Any, y: Any) -> Any:
        raise NotImplementedError


def _no_derivative(aten: str) -> RuntimeError:
    return RuntimeError(f"derivative for aten::{aten} is not implemented")


class FloorDivide(_RoundingDiv):
    """``x // y`` rounding toward -inf. PyTorch records a node that refuses to differentiate."""

    node_name = NOT_IMPLEMENTED

    def divide(self, b: Any, x: Any, y: Any) -> Any:
        return b.floor_divide(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        raise _no_derivative("floor_divide")


class Remainder(_RoundingDiv):
    """``x % y`` with the sign of ``y``, as Python's ``%``. ``d/dx = 1``, ``d/dy = -floor(x / y)``
    (RemainderBackward0 for a scalar ``y``, 1 for a tensor; a scalar ``x`` has no derivative in
    PyTorch)."""

    def __init__(self, name: str) -> None:
        self.node_name = name

    def divide(self, b: Any, x: Any, y: Any) -> Any:
        if self.needs_input_grad and self.needs_input_grad[1]:
            self.save_for_backward(x, y)
        return b.remainder(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        if self.node_name == NOT_IMPLEMENTED:
            raise _no_derivative("remainder")
        need = self.needs_input_grad
        gy = None
        if need[1]:
            x, y = self.saved_tensors
            gy = self.reduce(-grad * x.div(y, rounding_mode="floor"), 1)
        return (self.reduce(grad, 0) if need[0] else None), gy


class DivRounding(_RoundingDiv):
    """``div(x, y, rounding_mode=mode)``: ``'floor'`` as ``//``, ``'trunc'`` rounding toward 0
    (DivBackward2). Piecewise constant: both gradients are 0, as in PyTorch."""

    node_name = "DivBackward2"

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def divide(self, b: Any, x: Any, y: Any) -> Any:
        if self.mode == "floor":
            return b.floor_divide(x, y)
        if x.dtype.kind == "f":
            return b.trunc(b.true_divide(x, y))
        # NOTE: integers stay exact (no float round trip): the floor quotient, plus one where
        # the division is inexact and the exact quotient is negative.
        return b.floor_divide(x, y) + ((b.remainder(x, y) != 0) & ((x < 0) != (y < 0)))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        return tuple(  # type: ignore[return-value]
            self.wrap(self.backend.zeros(s if s is not None else (), grad.dtype.name))
            if need else None for need, s in zip(self.needs_input_grad, self.shapes))


# ---- unary ---------------------------------------------------------------------------------

class _Unary(Node):
    def backward(self, grad: Any) -> tuple[Any]:
        return (self.grad_of(grad, *self.saved_tensors),)

    def grad_of(self, grad: Any, *saved: Any) -> Any:
        raise NotImplementedError


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
        # NOTE: the gradient at 0 is 0 (sign(0) = 0), as in PyTorch.
        return grad * x.sign()


class Exp(_Unary):
    node_name = "ExpBackward0"
    raw_ok = True

    @_quiet
    def forward(self, x: Any) -> Any:
        out = self.backend.exp(x)
        self.save_for_backward(out)  # d exp = exp: keep the output, not the input
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad * out


class Log(_Unary):
    node_name = "LogBackward0"
    raw_ok = True
    raw_quiet = True

    @_quiet
    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.log(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad / x


class Log1p(_Unary):
    node_name = "Log1PBackward0"
    raw_ok = True
    raw_quiet = True

    @_quiet
    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.log1p(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad / (x + 1)


class Expm1(_Unary):
    node_name = "Expm1Backward0"
    raw_ok = True

    @_quiet
    def forward(self, x: Any) -> Any:
        out = self.backend.expm1(x)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad * (out + 1)


class Sqrt(_Unary):
    node_name = "SqrtBackward0"
    raw_ok = True
    raw_quiet = True

    @_quiet
    def forward(self, x: Any) -> Any:
        out = self.backend.sqrt(x)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad / (out * 2)


class Rsqrt(_Unary):
    node_name = "RsqrtBackward0"

    @_quiet
    def forward(self, x: Any) -> Any:
        b = self.backend
        out = b.true_divide(1, b.sqrt(x)).astype(x.dtype, copy=False)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        return grad * out.pow(3) * -0.5


class Reciprocal(_Unary):
    node_name = "ReciprocalBackward0"
    raw_ok = True
    raw_quiet = True

    @_quiet
    def forward(self, x: Any) -> Any:
        out = self.backend.true_divide(1, x).astype(x.dtype, copy=False)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        return -grad * out * out


class Sin(_Unary):
    node_name = "SinBackward0"

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.sin(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * x.cos()


class Cos(_Unary):
    node_name = "CosBackward0"

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.cos(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * -x.sin()


class Tanh(_Unary):
    node_name = "TanhBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        out = self.backend.tanh(x)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        if self._raw:  # bare arrays: one fused kernel on the GPU
            return self.backend.tanh_backward(out, grad)
        return grad * (1 - out * out)


class Sigmoid(_Unary):
    node_name = "SigmoidBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        out = self.backend.sigmoid(x).astype(x.dtype, copy=False)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        if self._raw:
            return self.backend.sigmoid_backward(out, grad)
        return grad * out * (1 - out)


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
        # NOTE: the gradient at x == 0 is 0, as in PyTorch (out > 0 is false there).
        return threshold_grad(self, grad, out, out > 0, 0.0, "ThresholdBackwardBackward0")


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
        return out if hi is None else b.minimum(out, hi)

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


class ToCopy(_Unary):
    """A dtype conversion (``to(dtype)``, ``float()``, ``double()``)."""

    node_name = "ToCopyBackward0"

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype

    def forward(self, x: Any) -> Any:
        self.in_dtype = x.dtype.name
        return x.astype(self.dtype)

    def grad_of(self, grad: Any) -> Any:
        from ..dtypes import from_name

        return grad.to(from_name(self.in_dtype))


class Clone(_Unary):
    node_name = "CloneBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        return preserve_format_copy(self.backend, x)

    def grad_of(self, grad: Any) -> Any:
        return grad


def preserve_format_copy(b: Any, x: Any) -> Any:
    """A copy of ``x`` laid out as PyTorch's ``clone()`` lays it out (``preserve_format``).

    A dense, non-overlapping ``x`` keeps its strides (NumPy's order 'K' does that). Any other
    (expanded, strided) gets dense strides that follow the order of ``x``'s own, C order where
    that order is ambiguous (a zero stride): NumPy's 'K' would put an expanded dim innermost.
    NOTE: the layout decides whether a later ``reshape`` is a view, so it changes what an in-place
    op on that view writes.
    """
    if x.ndim < 2 or not x.size:
        return b.copy(x)
    shape = x.shape
    strides = [st // x.itemsize for st in x.strides]
    inner_first = _dense_order(shape, strides)
    if inner_first is None:
        return b.copy(x)
    outer_first = inner_first[::-1]
    out = b.empty(tuple(shape[d] for d in outer_first), x.dtype)
    out = b.transpose(out, tuple(outer_first.index(d) for d in range(x.ndim)))
    out[...] = x
    return out


def _dense_order(shape: tuple[int, ...], strides: list[int]) -> list[int] | None:
    """The dims of a strided array from innermost to outermost, by stride (insertion sort that
    leaves the C order alone where a stride is 0, and puts the larger of two equal-stride dims
    outside); None when the array is already dense and non-overlapping."""
    expect = 1
    for st, n in sorted((st, n) for st, n in zip(strides, shape) if n != 1):
        if st != expect:
            break
        expect *= n
    else:
        return None
    order = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(order)):
        j = i
        for k in range(i - 1, -1, -1):
            a, c = order[k], order[j]
            if strides[a] == 0 or strides[c] == 0:
                continue
            if strides[a] > strides[c] or (strides[a] == strides[c] and shape[a] > shape[c]):
                order[k], order[j] = order[j], order[k]
                j = k
            elif strides[a] < strides[c]:
                break
    return order
