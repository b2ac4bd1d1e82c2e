"""Elementwise ops: the bases (``_Binary``, ``_Unary``), binary arithmetic, ``where``, dtype
conversion and ``clone``. Forward on backend arrays, backward with tensor ops (differentiable).

Binary ops broadcast like NumPy/PyTorch; ``_Binary`` remembers the input shapes and dtypes and
reduces each gradient back to its input's shape and dtype. Python scalars arrive as constants.
The families live beside this module: ``unary`` (math and activations) and ``rounding``
(``//``, ``%``, ``div(rounding_mode=...)``); their names also resolve here (``E.Relu``).
"""

from __future__ import annotations

import cmath
from typing import Any, Callable

from ..autograd.node import Node
from .complex import conj
from .util import reduce_grad


class _Binary(Node):
    """Base of broadcasting binary ops; inputs arrive already in the promoted dtype."""

    elementwise = True

    def forward(self, x: Any, y: Any) -> Any:
        if self.needs_input_grad:  # only backward reads them
            self.shapes = (getattr(x, "shape", None), getattr(y, "shape", None))
        return self.compute(x, y)

    def compute(self, x: Any, y: Any) -> Any:
        raise NotImplementedError

    def reduce(self, g: Any, i: int) -> Any:
        """``g`` summed back to input ``i``'s shape (undoing broadcasting)."""
        return reduce_grad(g, self.shapes[i])


def _shape(x: Any) -> tuple[int, ...] | None:
    return x.shape if hasattr(x, "shape") else None


# NOTE: float16 times or over a Python number, and float16 plus or minus a scaled operand,
# compute in float32 as PyTorch's CPU kernels do (``backend.opmath``).
_HALF = "float16"
_NUMBERS = (float, int)


class Add(_Binary):
    node_name = "AddBackward0"
    raw_ok = True

    def __init__(self, alpha: Any = 1) -> None:
        self.alpha = alpha

    def compute(self, x: Any, y: Any) -> Any:
        b = self.backend
        if self.alpha != 1 and x.dtype == _HALF:
            return b.opmath("add", x, y, self.alpha)
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
        if self.alpha != 1 and x.dtype == _HALF:
            return b.opmath("subtract", x, y, self.alpha)
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
        if y.__class__ in _NUMBERS and x.dtype == _HALF:
            return self.backend.opmath("multiply", x, y)
        return self.backend.multiply(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        y, x = self.saved_tensors
        # NOTE: complex factors are conjugated (grad_x = grad * conj(y), PyTorch's convention)
        return (self.reduce(grad * conj(y), 0) if y is not None else None,
                self.reduce(grad * conj(x), 1) if x is not None else None)


class Div(_Binary):
    node_name = "DivBackward0"
    raw_ok = True

    def compute(self, x: Any, y: Any) -> Any:
        need = self.needs_input_grad
        if need:
            self.save_for_backward(x if need[1] else None, y)
        # NOTE: x / 0 is inf or nan without a warning, as in PyTorch (Node.apply silences
        # NumPy's floating-point warnings around every forward and backward).
        if y.__class__ in _NUMBERS and x.dtype == _HALF:
            return self.backend.opmath("true_divide", x, y)
        return self.backend.true_divide(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        need = self.needs_input_grad
        x, y = conj(x), conj(y)
        gx = self.reduce(grad / y, 0) if need[0] else None
        gy = self.reduce(-grad * x / (y * y), 1) if need[1] else None
        return gx, gy


class Pow(_Binary):
    """``x ** y``: PowBackward0 (scalar exponent), PowBackward1 (tensor exponent),
    PowBackward2 (scalar base)."""

    def __init__(self, name: str) -> None:
        self.node_name = name

    def compute(self, x: Any, y: Any) -> Any:
        special = _POW_SPECIAL.get(y) if type(y) in (int, float) and x.dtype.kind == "f" else None
        out = special(self.backend, x) if special is not None else self.backend.power(x, y)
        need = self.needs_input_grad
        # NOTE: the output is read only by the exponent's gradient; kept only then (as PyTorch)
        self.save_for_backward(x, y, out if need and need[1] else None)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y, out = self.saved_tensors
        if _is_complex(x) or _is_complex(y):
            return self._complex_grads(grad, x, y, out)
        gx = gy = None
        if self.needs_input_grad[0]:
            # NOTE: exponent 0 gives gradient 0 everywhere (x ** -1 would be inf at x == 0).
            # NOTE: exponent 0 gives gradient 0 even where grad or x ** -1 is inf (PyTorch's
            # zeros there, not grad * 0).
            if isinstance(y, (int, float)):
                gx = zeros_grad(grad) if y == 0 else grad * y * x ** (y - 1)
            else:
                # NOTE: where y == 0 the exponent is swapped for 1, so 0 * inf never happens.
                gx = (grad * y * x ** (y - 1).where(y != 0, 1.0)).where(y != 0, 0.0)
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


    def _complex_grads(self, grad: Any, x: Any, y: Any, out: Any) -> tuple[Any, Any]:
        """``grad * conj(y x^(y-1))`` and ``grad * conj(x^y log x)`` (PyTorch's convention)."""
        gx = gy = None
        if self.needs_input_grad[0]:
            gx = self.reduce(grad * conj(y * x ** (y - 1)), 0)
        if self.needs_input_grad[1]:
            log_x = cmath.log(x) if isinstance(x, (int, float, complex)) else x.log()
            gy = self.reduce(grad * conj(out * log_x), 1)
        return gx, gy


def _is_complex(v: Any) -> bool:
    return isinstance(v, complex) or getattr(getattr(v, "dtype", None), "is_complex", False)


# NOTE: PyTorch computes these scalar exponents with the named function, not pow(), and the
# results differ at the edges: (-inf) ** 0.5 is nan (pow gives inf), (-0.0) ** -0.5 is -inf.
_POW_SPECIAL: dict[float, Callable[[Any, Any], Any]] = {
    0.5: lambda b, x: b.sqrt(x),
    -0.5: lambda b, x: b.true_divide(1, b.sqrt(x)).astype(x.dtype, copy=False),
    -1: lambda b, x: b.true_divide(1, x).astype(x.dtype, copy=False),
    2: lambda b, x: b.multiply(x, x),
    3: lambda b, x: b.multiply(b.multiply(x, x), x),
    -2: lambda b, x: b.true_divide(1, b.multiply(x, x)).astype(x.dtype, copy=False),
}


def zeros_grad(grad: Any) -> Any:
    """A zero gradient shaped like ``grad``: PyTorch's ``zeros_like`` for piecewise-constant ops
    (``grad * 0`` would be nan where ``grad`` is inf or nan)."""
    return grad.new_zeros(grad.shape)


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
    elementwise = False  # NOTE: laid out in compute: cond, a parameter, has a say too

    def __init__(self, cond: Any) -> None:
        self.cond = cond

    def compute(self, x: Any, y: Any) -> Any:
        b = self.backend
        out = b.where(self.cond, x, y)
        # NOTE: laid out as PyTorch's TensorIterator over (cond, x, y) lays it out.
        return b.with_order(out, b.torch_order(out, (self.cond, x, y))) if out.ndim > 1 else out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        cond = self.wrap(self.cond)
        gx = self.reduce(grad.where(cond, 0.0), 0) if self.needs_input_grad[0] else None
        gy = self.reduce(grad.where(~cond, 0.0), 1) if self.needs_input_grad[1] else None
        return gx, gy


# ---- unary base ----------------------------------------------------------------------------

class _Unary(Node):
    elementwise = True

    def backward(self, grad: Any) -> tuple[Any]:
        return (self.grad_of(grad, *self.saved_tensors),)

    def grad_of(self, grad: Any, *saved: Any) -> Any:
        raise NotImplementedError


class ToCopy(_Unary):
    """A dtype conversion (``to(dtype)``, ``float()``, ``double()``)."""

    node_name = "ToCopyBackward0"
    elementwise = False  # NOTE: laid out by preserve_format_copy

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype

    def forward(self, x: Any) -> Any:
        self.in_dtype = x.dtype.name
        if x.dtype.kind == "c" and self.dtype not in ("complex64", "complex128"):
            x = x.real  # NOTE: complex to real keeps the real parts (NumPy would warn)
        return preserve_format_copy(self.backend, x, self.dtype)

    def grad_of(self, grad: Any) -> Any:
        from ..dtypes import from_name

        to = from_name(self.in_dtype)
        if grad.dtype.is_complex and not to.is_complex:
            grad = grad.real  # NOTE: a real input's gradient is the real part, without a warning
        return grad.to(to)


class Clone(_Unary):
    node_name = "CloneBackward0"
    raw_ok = True
    elementwise = False  # NOTE: laid out by preserve_format_copy

    def forward(self, x: Any) -> Any:
        return preserve_format_copy(self.backend, x)

    def grad_of(self, grad: Any) -> Any:
        return grad


def preserve_format_copy(b: Any, x: Any, dtype: Any = None) -> Any:
    """A copy of ``x`` (in ``dtype`` if given) laid out as PyTorch's ``clone()`` and ``to()``
    lay it out (``preserve_format``, ``backend.like_order``).

    A dense, non-overlapping ``x`` keeps its strides. Any other (expanded, strided) gets dense
    strides that follow the order of ``x``'s own, C order where a zero stride leaves it open
    (NumPy's order 'K' would put an expanded dim innermost).
    NOTE: the layout decides whether a later ``view`` works and whether ``reshape`` is a view,
    so it changes what an in-place op on that view writes.
    """
    if x.ndim < 2 or x.flags.c_contiguous:
        return b.copy(x) if dtype is None else x.astype(dtype)
    out = b.empty_in_order(x.shape, x.dtype if dtype is None else dtype, b.like_order(x))
    out[...] = x
    return out


def __getattr__(name: str) -> Any:
    """The ops that moved to the family modules, under their old names (``E.Relu``)."""
    from . import rounding, unary  # NOTE: late: both build on this module's bases

    for family in (unary, rounding):
        if name in family.__dict__:
            return family.__dict__[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
