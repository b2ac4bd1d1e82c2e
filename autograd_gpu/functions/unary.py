"""Unary math and activations: ``neg``, ``abs``, ``sign``, ``exp``, ``log``, ``sqrt``, ... (integer
and bool inputs promoted to the default float dtype), ``relu`` and ``clamp``."""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..autograd.node import Node
from ..ops import elementwise as E
from ..ops import unary as U
from ..tensor import Tensor
from .arith import _broadcast_error, _float_input, _is_scalar, as_tensor_like, pow
from .checks import checked_scalar, invalid_arguments


def neg(input: Tensor) -> Tensor:  # noqa: A002
    if input.dtype is dtypes.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return U.Neg.apply(input)


negative = neg


def abs(input: Tensor) -> Tensor:  # noqa: A001,A002
    if input.dtype is dtypes.bool:
        raise NotImplementedError(f"\"abs_{input._device.type}\" not implemented for 'Bool'")
    return U.Abs.apply(input)


def sign(input: Tensor) -> Tensor:  # noqa: A002
    if input.dtype.is_complex:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex "
                                  "numbers. Please use torch.sgn instead.")
    return _Sign.apply(input)


class _Sign(E._Unary):
    node_name = "SignBackward0"

    def forward(self, x: Any) -> Any:
        return self.backend.sign(x)  # NOTE: sign(nan) is 0, as in PyTorch

    def grad_of(self, grad: Any) -> Any:
        return E.zeros_grad(grad)


def _float_math(op: type[Node], doc: str) -> Callable[[Tensor], Tensor]:
    """The ``torch`` function named after ``op`` (``U.Exp`` gives ``exp``): ``op`` applied after
    integer and bool inputs are promoted to the default float dtype, as in PyTorch."""

    def fn(input: Tensor) -> Tensor:  # noqa: A002
        return op.apply(_float_input(input))

    fn.__name__ = fn.__qualname__ = op.__name__.lower()
    fn.__doc__ = doc
    return fn


exp = _float_math(U.Exp, "``e ** x`` element-wise.")
log = _float_math(U.Log, "Natural logarithm; ``log(0)`` is ``-inf``, ``log(-1)`` is nan.")
log1p = _float_math(U.Log1p, "``log(1 + x)``, accurate for small ``x``.")
expm1 = _float_math(U.Expm1, "``exp(x) - 1``, accurate for small ``x``.")
sqrt = _float_math(U.Sqrt, "Square root; negative inputs give nan.")
rsqrt = _float_math(U.Rsqrt, "``1 / sqrt(x)``.")
reciprocal = _float_math(U.Reciprocal, "``1 / x``.")
sin = _float_math(U.Sin, "Sine (radians).")
cos = _float_math(U.Cos, "Cosine (radians).")
tanh = _float_math(U.Tanh, "Hyperbolic tangent.")
sigmoid = _float_math(U.Sigmoid, "Logistic sigmoid ``1 / (1 + exp(-x))``.")


def square(input: Tensor) -> Tensor:  # noqa: A002
    """``x ** 2`` (recorded as PowBackward0, as in PyTorch)."""
    return pow(input, 2)


def relu(input: Tensor) -> Tensor:  # noqa: A002
    """Rectified linear unit, ``max(x, 0)`` element-wise; the gradient at 0 is 0."""
    if input.dtype is dtypes.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    if input.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    return U.Relu.apply(input)


def clamp(input: Tensor, min: Any = None, max: Any = None, *,  # noqa: A001,A002
          _method: bool = False) -> Tensor:
    """Limit ``input`` to ``[min, max]``; the gradient passes where ``min <= x <= max``."""
    bounds = [v for v in (min, max) if v is not None]
    if not all(isinstance(v, Tensor) or _is_scalar(v) for v in bounds):
        # NOTE: the bounds are listed as positional arguments (PyTorch lists keywords apart)
        raise invalid_arguments("clamp", tuple(bounds) if _method else (input, *bounds), {})
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if input.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max)
    out = clamp_dtype(input.dtype, min, max)
    if out is not input.dtype:
        input = input.to(out)
    # NOTE: the bounds are converted to the result dtype, checked (uint8 takes -1 as 255)
    if _is_scalar(min):
        min = checked_scalar(min, input.dtype)
    if _is_scalar(max):
        max = checked_scalar(max, input.dtype)
    return U.Clamp.apply(input, lo=min, hi=max)


clip = clamp


def clamp_dtype(d: dtypes.dtype, lo: Any, hi: Any) -> dtypes.dtype:
    """The dtype ``clamp`` computes in, for input dtype ``d`` and scalar bounds: a float bound
    makes integers the default float dtype; an int bound makes bool int64."""
    if d.category < 2 and (isinstance(lo, float) or isinstance(hi, float)):
        return dtypes.get_default_dtype()
    if d.category == 0 and (type(lo) is int or type(hi) is int):
        return dtypes.int64
    return d


def _clamp_tensor(input: Tensor, lo: Any, hi: Any) -> Tensor:  # noqa: A002
    """``clamp`` with tensor bounds (ClampBackward0): one promoted dtype, broadcast together."""
    bounds = [as_tensor_like(v, input) if v is not None else None for v in (lo, hi)]
    out_dtype = dtypes.result_type(
        [t.dtype for t in (input, *bounds) if t is not None and t.ndim],
        [t.dtype for t in (input, *bounds) if t is not None and not t.ndim], [])
    x, lo, hi = (t.to(out_dtype) if t is not None else None for t in (input, *bounds))
    try:
        return U.ClampTensor.apply(x, lo, hi)  # type: ignore[no-any-return]
    except ValueError as e:
        raise _broadcast_error(x, lo if lo is not None else hi) from e
