"""The ``torch.*`` functions on tensors: type promotion, scalar handling and shape checks, then
one op (``ops/``). ``Tensor`` methods delegate here."""

from __future__ import annotations

import builtins
import numbers
from typing import Any, Callable, Sequence

from . import dtypes
from .autograd.grad_mode import STATE, no_grad
from .autograd.node import _edge
from .autograd.node import _seq as _node_seq
from .ops import elementwise as E
from .ops import fused, linalg
from .ops import movement as M
from .ops import reduce as R
from .ops.util import normalize_dim, normalize_dims
from .tensor import Size, Tensor

__all__ = ["normalize_dim", "normalize_dims"]

_Number = (int, float, bool)


def _is_scalar(x: Any) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, complex)


def as_tensor_like(x: Any, like: Tensor) -> Tensor:
    """``x`` as a tensor on ``like``'s device (Tensors pass through)."""
    if isinstance(x, Tensor):
        return x
    from .creation import tensor

    return tensor(x, device=like._device)


# ---- binary arithmetic -----------------------------------------------------------------------

def _promote(a: Tensor, b: Any) -> tuple[Any, Any]:
    """Cast ``a`` and ``b`` to PyTorch's result type (NumPy would choose differently)."""
    if isinstance(b, Tensor):
        da, db = a._data.dtype, b._data.dtype
        if da == db:
            return a, b
        ta, tb = a.dtype, b.dtype
        groups: tuple[list[dtypes.dtype], list[dtypes.dtype]] = ([], [])
        groups[a.ndim == 0].append(ta)
        groups[b.ndim == 0].append(tb)
        out = dtypes.result_type(groups[0], groups[1], [])
        return (a if ta is out else a.to(out)), (b if tb is out else b.to(out))
    if not _is_scalar(b):
        raise TypeError(f"unsupported operand type: {type(b).__name__}")
    cat = a.dtype.category
    if isinstance(b, bool) or cat == 2:
        return a, b
    if isinstance(b, int):
        if cat == 0:
            return a.to(dtypes.int64), b
        lo, hi = dtypes.int_bounds(a.dtype)
        if not lo <= b <= hi:
            # NOTE: PyTorch casts the scalar to the tensor's integer dtype, wrapping around
            # (uint8 + -3 adds 253); NumPy would raise OverflowError instead.
            b = (b - lo) % (hi - lo + 1) + lo
        return a, b
    return a.to(dtypes.get_default_dtype()), b


def _broadcast_error(a: Any, b: Any) -> RuntimeError:
    sa, sb = tuple(getattr(a, "shape", ())), tuple(getattr(b, "shape", ()))
    n = builtins.max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    for i in range(n - 1, -1, -1):
        if sa[i] != sb[i] and sa[i] != 1 and sb[i] != 1:
            return RuntimeError(
                f"The size of tensor a ({sa[i]}) must match the size of tensor b ({sb[i]}) at "
                f"non-singleton dimension {i}"
            )
    return RuntimeError(f"shapes {list(sa)} and {list(sb)} are not broadcastable")


def _scalar_to_tensor(s: Any, other: Tensor) -> tuple[Tensor, Tensor]:
    """A Python scalar ``s`` meeting tensor ``other``: both in their result dtype (the scalar
    ranks below every tensor, so ``2 + uint8_tensor`` stays uint8)."""
    from .creation import tensor

    other, _ = _promote(other, s)
    return tensor(s, dtype=other.dtype, device=other._device), other


def _binary(cls: Any, a: Any, b: Any, **params: Any) -> Tensor:
    if not isinstance(a, Tensor):  # a scalar on the left
        a, b = _scalar_to_tensor(a, b)
    a, b = _promote(a, b)
    try:
        return cls.apply(a, b, **params) if params else cls.apply(a, b)
    except ValueError as e:
        if "broadcast" in str(e):
            raise _broadcast_error(a, b) from None
        raise


def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``input + alpha * other``, broadcasting; Python scalars allowed on either side."""
    if alpha != 1:
        return _binary(E.Add, input, other, alpha=alpha)
    return _binary(E.Add, input, other)


def _check_sub(a: Any, b: Any) -> None:
    """PyTorch refuses ``-`` when either side is bool (a bool tensor or a Python bool)."""
    a_bool = isinstance(a, bool) or isinstance(a, Tensor) and a.dtype is dtypes.bool
    b_bool = isinstance(b, bool) or isinstance(b, Tensor) and b.dtype is dtypes.bool
    if a_bool and b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
            "`logical_xor()` operator instead."
        )
    if a_bool or b_bool:
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
            "to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``input - alpha * other``."""
    _check_sub(input, other)
    if alpha != 1:
        return _binary(E.Sub, input, other, alpha=alpha)
    return _binary(E.Sub, input, other)


subtract = sub


def rsub(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``other - input`` (the reflected ``-``)."""
    if isinstance(other, Tensor):
        return sub(other, input)
    _check_sub(input, other)
    return _binary(E.Rsub, input, other)


def mul(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input * other``, broadcasting."""
    return _binary(E.Mul, input, other)


multiply = mul


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> Tensor:  # noqa: A002
    """``input / other``: true division, promoting integers to the default float dtype."""
    if rounding_mode is not None:
        out = div(input, other)
        return out.trunc() if rounding_mode == "trunc" else floor(out)  # type: ignore[attr-defined]
    if not isinstance(input, Tensor):
        input = as_tensor_like(input, other)
    if not input.dtype.is_floating_point and (
        not isinstance(other, Tensor) or not other.dtype.is_floating_point
    ):
        input = input.to(dtypes.get_default_dtype())
    return _binary(E.Div, input, other)


divide = true_divide = div


def rdiv(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``other / input``: ``reciprocal(input) * other``, as PyTorch records it."""
    if not input.dtype.is_floating_point:
        input = input.to(dtypes.get_default_dtype())
    return mul(reciprocal(input), other)


def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001,A002
    """``input ** exponent``."""
    if not isinstance(input, Tensor):
        return rpow(exponent, input)
    if isinstance(exponent, Tensor):
        if input.dtype is dtypes.bool and exponent.dtype is dtypes.bool:
            _no_bool_pow()
        return _binary(E.Pow, input, exponent, name="PowBackward1")
    if not input.dtype.is_floating_point and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if input.dtype is dtypes.bool and isinstance(exponent, builtins.bool):
        if exponent:  # NOTE: PyTorch special-cases x ** 1 as a copy, which works for bool
            return clone(input)
        _no_bool_pow()
    return _binary(E.Pow, input, exponent, name="PowBackward0")


def _no_bool_pow() -> None:
    raise NotImplementedError("\"pow\" not implemented for 'Bool'")


def rpow(input: Tensor, base: Any) -> Tensor:  # noqa: A002
    """``base ** input`` for a scalar ``base`` (PowBackward2)."""
    b = as_tensor_like(base, input) if not _is_scalar(base) else base
    if isinstance(b, Tensor):
        return pow(b, input)
    if not input.dtype.is_floating_point and isinstance(base, float):
        input = input.to(dtypes.get_default_dtype())
    return _Rpow.apply(input, base=base)


class _Rpow(E._Unary):
    """``base ** x`` for a scalar ``base`` (PowBackward2)."""

    node_name = "PowBackward2"

    def __init__(self, base: Any) -> None:
        self.base = base

    @E._quiet
    def forward(self, x: Any) -> Any:
        out = self.backend.power(self.base, x)
        out = out.astype(x.dtype, copy=False) if hasattr(out, "astype") else self.backend.asarray(out, x.dtype)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        if self.base == 0:
            # NOTE: 0 ** x has gradient 0 for x >= 0 and -inf for x < 0 (where out is inf), as
            # in PyTorch; a constant factor avoids 0 * -inf.
            return grad * self.wrap(self.backend.where(out._data == float("inf"), -float("inf"), 0.0)
                                    .astype(out._data.dtype))
        return grad * out * E._log_scalar(self.base)


def floor_divide(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    return _nograd_binary("floor_divide", input, other)


def remainder(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    return _nograd_binary("remainder", input, other)


def _nograd_binary(name: str, a: Any, b: Any) -> Tensor:
    a, b = _promote(a, b)
    bd = b._data if isinstance(b, Tensor) else b
    return Tensor._make(getattr(a.backend, name)(a._data, bd), a._device)


def _tensor_arg(name: str, other: Any) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(
            f"{name}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}"
        )


def maximum(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise maximum; ties split the gradient in half."""
    _tensor_arg("maximum", other)
    return _binary(E.Maximum, input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise minimum; ties split the gradient in half."""
    _tensor_arg("minimum", other)
    return _binary(E.Minimum, input, other)


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:  # noqa: A002
    """``input`` where ``condition`` holds, else ``other`` (both broadcast)."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if not isinstance(input, Tensor):
        if isinstance(other, Tensor) and _is_scalar(input):
            input, other = _scalar_to_tensor(input, other)
        elif not isinstance(other, Tensor):
            input = as_tensor_like(input, condition)
    cond = condition._data if isinstance(condition, Tensor) else condition
    if cond.dtype.name != "bool":
        cond = cond.astype("bool")
    input, other = _promote(input, other)
    try:
        return E.Where.apply(input, other, cond=cond)
    except ValueError as e:
        raise _broadcast_error(cond, input._data) from e


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:  # noqa: A002
    """``input`` with ``value`` where ``mask`` is true."""
    if isinstance(value, Tensor):
        value = value.to(input.dtype)
    out = where(mask, value if isinstance(value, Tensor) else as_tensor_like(value, input).to(input.dtype), input)
    return out if out.shape == input.shape else out.expand(input.shape)


# ---- unary -----------------------------------------------------------------------------------

def _float_input(x: Tensor) -> Tensor:
    return x if x.dtype.is_floating_point else x.to(dtypes.get_default_dtype())


def neg(input: Tensor) -> Tensor:  # noqa: A002
    if input.dtype is dtypes.bool:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return E.Neg.apply(input)


negative = neg


def abs(input: Tensor) -> Tensor:  # noqa: A001,A002
    if input.dtype is dtypes.bool:
        raise NotImplementedError(f"\"abs_{input._device.type}\" not implemented for 'Bool'")
    return E.Abs.apply(input)


def sign(input: Tensor) -> Tensor:  # noqa: A002
    return _Sign.apply(input)


class _Sign(E._Unary):
    node_name = "SignBackward0"

    def forward(self, x: Any) -> Any:
        return self.backend.sign(x)

    def grad_of(self, grad: Any) -> Any:
        return grad * 0


def exp(input: Tensor) -> Tensor:  # noqa: A002
    return E.Exp.apply(_float_input(input))


def log(input: Tensor) -> Tensor:  # noqa: A002
    return E.Log.apply(_float_input(input))


def log1p(input: Tensor) -> Tensor:  # noqa: A002
    return E.Log1p.apply(_float_input(input))


def expm1(input: Tensor) -> Tensor:  # noqa: A002
    return E.Expm1.apply(_float_input(input))


def sqrt(input: Tensor) -> Tensor:  # noqa: A002
    return E.Sqrt.apply(_float_input(input))


def rsqrt(input: Tensor) -> Tensor:  # noqa: A002
    return E.Rsqrt.apply(_float_input(input))


def reciprocal(input: Tensor) -> Tensor:  # noqa: A002
    return E.Reciprocal.apply(_float_input(input))


def square(input: Tensor) -> Tensor:  # noqa: A002
    return pow(input, 2)


def sin(input: Tensor) -> Tensor:  # noqa: A002
    return E.Sin.apply(_float_input(input))


def cos(input: Tensor) -> Tensor:  # noqa: A002
    return E.Cos.apply(_float_input(input))


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    return E.Tanh.apply(_float_input(input))


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """Logistic sigmoid ``1 / (1 + exp(-x))``."""
    return E.Sigmoid.apply(_float_input(input))


def relu(input: Tensor) -> Tensor:  # noqa: A002
    """Rectified linear unit, ``max(x, 0)`` element-wise; the gradient at 0 is 0."""
    if input.dtype is dtypes.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    return E.Relu.apply(input)


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A001,A002
    """Limit ``input`` to ``[min, max]``; the gradient passes where ``min <= x <= max``."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max)
    if not input.dtype.is_floating_point and (isinstance(min, float) or isinstance(max, float)):
        input = input.to(dtypes.get_default_dtype())
    return E.Clamp.apply(input, lo=min, hi=max)


clip = clamp


def _clamp_tensor(input: Tensor, lo: Any, hi: Any) -> Tensor:  # noqa: A002
    """``clamp`` with tensor bounds (ClampBackward0): one promoted dtype, broadcast together."""
    bounds = [as_tensor_like(v, input) if v is not None else None for v in (lo, hi)]
    out_dtype = dtypes.result_type(
        [t.dtype for t in (input, *bounds) if t is not None and t.ndim],
        [t.dtype for t in (input, *bounds) if t is not None and not t.ndim], [])
    x, lo, hi = (t.to(out_dtype) if t is not None else None for t in (input, *bounds))
    try:
        return E.ClampTensor.apply(x, lo, hi)  # type: ignore[no-any-return]
    except ValueError as e:
        raise _broadcast_error(x, lo if lo is not None else hi) from e


# ---- comparisons and logic (no gradient) -----------------------------------------------------

def _compare(name: str, a: Any, b: Any) -> Tensor:
    if not isinstance(a, Tensor):
        a = as_tensor_like(a, b)
    if isinstance(b, Tensor) and b._device is not a._device:
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{a._device} and {b._device}!"
        )
    a, b = _promote(a, b)
    bd = b._data if isinstance(b, Tensor) else b
    try:
        return Tensor._make(getattr(a.backend, name)(a._data, bd), a._device)
    except ValueError as e:
        raise _broadcast_error(a._data, bd) from e


def eq(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("equal", input, other)


def ne(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("not_equal", input, other)


def lt(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("less", input, other)


def le(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("less_equal", input, other)


def gt(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("greater", input, other)


def ge(input: Any, other: Any) -> Tensor:  # noqa: A002
    return _compare("greater_equal", input, other)


def logical_and(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    return _compare("logical_and", input, other)


def logical_or(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    return _compare("logical_or", input, other)


def logical_xor(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    return _compare("logical_xor", input, other)


def logical_not(input: Tensor) -> Tensor:  # noqa: A002
    return Tensor._make(input.backend.logical_not(input._data), input._device)


def bitwise_not(input: Tensor) -> Tensor:  # noqa: A002
    if input.dtype.is_floating_point:
        raise TypeError("bitwise_not is only supported for integer and boolean tensors")
    return Tensor._make(~input._data, input._device)


def isnan(input: Tensor) -> Tensor:  # noqa: A002
    return Tensor._make(input.backend.isnan(input._data), input._device)


def isinf(input: Tensor) -> Tensor:  # noqa: A002
    return Tensor._make(input.backend.isinf(input._data), input._device)


def isfinite(input: Tensor) -> Tensor:  # noqa: A002
    return Tensor._make(input.backend.isfinite(input._data), input._device)


def floor(input: Tensor) -> Tensor:  # noqa: A002
    return Tensor._make(input.backend.floor(input._data), input._device)


def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """True when both have the same shape and elements."""
    return input.shape == other.shape and builtins.bool((input._data == other._data).all())


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
             equal_nan: bool = False) -> bool:
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
            equal_nan: bool = False) -> Tensor:
    b = input.backend
    x, y = input._data, as_tensor_like(other, input)._data
    with b.errstate(invalid="ignore"):
        close = b.less_equal(b.abs(x - y), atol + rtol * b.abs(y))
        close = b.logical_or(close, b.equal(x, y))
        if equal_nan:
            close = b.logical_or(close, b.logical_and(b.isnan(x), b.isnan(y)))
    return Tensor._make(close, input._device)


# ---- reductions ------------------------------------------------------------------------------

def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001,A002
    """Sum over ``dim`` (all dims when None): SumBackward0 / SumBackward1."""
    name = "SumBackward0" if dim is None else "SumBackward1"
    out_dtype = None
    if dtype is not None:
        out_dtype = dtype.name
    elif not input.dtype.is_floating_point:
        out_dtype = "int64"  # NOTE: integer and bool sums are int64, as in PyTorch
    return R.Sum.apply(input, dims=normalize_dims(dim, input.ndim), keepdim=keepdim, name=name,
                       dtype=out_dtype)


def sum_to_size(input: Tensor, *size: Any) -> Tensor:  # noqa: A002
    """Sum ``input`` down to ``size`` (the inverse of broadcasting)."""
    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else tuple(size)
    if input.shape == shape:
        return input
    lead = input.ndim - len(shape)
    if lead < 0:
        raise RuntimeError(f"size {{{', '.join(map(str, shape))}}} is not expandable to size "
                           f"{{{', '.join(map(str, input.shape))}}}.")
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and input.shape[lead + i] != 1
    )
    out = R.Sum.apply(input, dims=dims, keepdim=True, name="SumBackward1", dtype=None) if dims else input
    return out.reshape(shape) if out.shape != shape else out


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """Mean over ``dim``: MeanBackward0 (all) / MeanBackward1."""
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {_type_name(input.dtype)}"
        )
    node = R.Mean
    out = node.apply(input, dims=normalize_dims(dim, input.ndim), keepdim=keepdim,
                     name="MeanBackward0" if dim is None else "MeanBackward1")
    return out


def _type_name(d: dtypes.dtype) -> str:
    return {"int64": "Long", "int32": "Int", "bool": "Bool", "int16": "Short", "int8": "Char",
            "uint8": "Byte"}.get(d.name, d.name)


def _correction(unbiased: Any, correction: Any) -> float:
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def var(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
        correction: Any = None) -> Tensor:
    """Variance over ``dim`` with Bessel's ``correction`` (1 by default)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return _var(input, dim, unbiased, keepdim, correction, std=False)


def _var(input: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any,  # noqa: A002
         std: bool) -> Tensor:
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = normalize_dims(dim, input.ndim)
    c = _correction(unbiased, correction)
    n = 1
    for d in dims:
        n *= input.shape[d]
    if n - c <= 0:
        import warnings

        warnings.warn(
            f"{'std' if std else 'var'}(): degrees of freedom is <= 0. Correction should be "
            "strictly less than the reduction factor (input numel divided by output numel).",
            UserWarning, stacklevel=3,
        )
    return R.Var.apply(input, dims=dims, keepdim=keepdim, correction=c, std=std)


def std(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
        correction: Any = None) -> Tensor:
    """Standard deviation over ``dim`` with Bessel's ``correction`` (1 by default)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return _var(input, dim, unbiased, keepdim, correction, std=True)


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    if dtype is not None:
        input = input.to(dtype)
    elif not input.dtype.is_floating_point:
        input = input.to(dtypes.int64)  # NOTE: integer and bool products are int64, as in PyTorch
    name = "ProdBackward0" if dim is None else "ProdBackward1"
    return R.Prod.apply(input, dims=normalize_dims(dim, input.ndim), keepdim=keepdim, name=name)


def _max_min(input: Tensor, dim: Any, keepdim: bool, is_max: bool) -> Any:  # noqa: A002
    if isinstance(dim, Tensor):
        return maximum(input, dim) if is_max else minimum(input, dim)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{'max' if is_max else 'min'}(): Expected reduction dim to be specified for "
                "input.numel() == 0. Specify the reduction dim with the 'dim' argument."
            )
        name = "MaxBackward1" if is_max else "MinBackward1"
        return R.MaxMin.apply(input, dims=normalize_dims(None, input.ndim), keepdim=False,
                              is_max=is_max, name=name)
    from . import return_types

    d = normalize_dim(dim, input.ndim)
    values, indices = R.MaxMinDim.apply(input, dim=d, keepdim=keepdim, is_max=is_max)
    return (return_types.max if is_max else return_types.min)(values, indices)


def max(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001,A002
    """The largest element; with ``dim``, ``(values, indices)``; with a tensor, ``maximum``."""
    return _max_min(input, dim, keepdim, True)


def min(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001,A002
    """The smallest element; with ``dim``, ``(values, indices)``; with a tensor, ``minimum``."""
    return _max_min(input, dim, keepdim, False)


def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """Max over ``dim`` (all when empty); ties share the gradient evenly."""
    return R.MaxMin.apply(input, dims=normalize_dims(dim, input.ndim), keepdim=keepdim,
                          is_max=True, name="AmaxBackward0")


def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    return R.MaxMin.apply(input, dims=normalize_dims(dim, input.ndim), keepdim=keepdim,
                          is_max=False, name="AminBackward0")


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    return _arg(input, dim, keepdim, "argmax")


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    return _arg(input, dim, keepdim, "argmin")


def _arg(input: Tensor, dim: int | None, keepdim: bool, name: str) -> Tensor:  # noqa: A002
    if input.dtype is dtypes.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    b = input.backend
    if dim is None:
        out = getattr(b, name)(input._data.reshape(-1))
        if keepdim:
            out = b.asarray(out).reshape((1,) * input.ndim)
    else:
        out = getattr(b, name)(input._data, axis=normalize_dim(dim, input.ndim), keepdims=keepdim)
    return Tensor._make(b.asarray(out).astype("int64", copy=False), input._device)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    """``log(sum(exp(input), dim))``, computed stably."""
    return R.LogSumExp.apply(_float_input(input), dims=normalize_dims(dim, input.ndim), keepdim=keepdim)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:  # noqa: A002
    """Vector p-norm (2 by default, ``'fro'`` too) over ``dim`` or all elements."""
    if p == "fro" and dim is not None and not isinstance(dim, int) and len(dim) > 2:
        # NOTE: PyTorch sends 'fro' over more than two dims to matrix_norm, which refuses.
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise RuntimeError(f"norm: unsupported p={p!r} in this version; use a number or 'fro'")
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
            f"{_type_name2(input.dtype)}"
        )
    return R.Norm.apply(input, dims=normalize_dims(dim, input.ndim), keepdim=keepdim, p=float(p))


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001,A002
    axis = None if dim is None else normalize_dims(dim, input.ndim)
    return Tensor._make(input.backend.any(input._data, axis=axis, keepdims=keepdim), input._device)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001,A002
    axis = None if dim is None else normalize_dims(dim, input.ndim)
    return Tensor._make(input.backend.all(input._data, axis=axis, keepdims=keepdim), input._device)


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:  # noqa: A002
    """``exp(x) / sum(exp(x), dim)``, with the max subtracted first for stability."""
    if dtype is not None:
        input = input.to(dtype)
    d = normalize_dim(dim, input.ndim)
    _check_softmax_dtype(input, d, "softmax")
    return fused.Softmax.apply(input, dim=d)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:  # noqa: A002
    """``x - logsumexp(x, dim)``, stable for large inputs."""
    if dtype is not None:
        input = input.to(dtype)
    d = normalize_dim(dim, input.ndim)
    _check_softmax_dtype(input, d, "log_softmax")
    return fused.LogSoftmax.apply(input, dim=d)


def _check_softmax_dtype(input: Tensor, dim: int, name: str) -> None:  # noqa: A002
    if not input.dtype.is_floating_point:
        kernel = f"{name}_lastdim_kernel_impl" if dim == builtins.max(input.ndim - 1, 0) else \
            f"{name}_kernel_impl"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_type_name2(input.dtype)}'"
        )


# ---- matrix products -------------------------------------------------------------------------

def _check_same_dtype(a: Tensor, b: Tensor, op: str) -> None:
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}"
            if op == "mm" else f"expected scalar type {_type_name2(a.dtype)} but found {_type_name2(b.dtype)}"
        )


def _type_name2(d: dtypes.dtype) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half"}.get(d.name, _type_name(d))


def mm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002
    """Matrix product of two 2-D tensors."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    _check_same_dtype(input, mat2, "mm")
    return linalg.Mm.apply(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:  # noqa: A002
    _check_same_dtype(input, vec, "mv")
    return linalg.Mv.apply(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors"
        )
    _check_same_dtype(input, other, "dot")
    return linalg.Dot.apply(input, other)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_same_dtype(input, mat2, "bmm")
    return linalg.Bmm.apply(input, mat2)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * (mat1 @ mat2)`` (AddmmBackward0)."""
    _check_same_dtype(mat1, mat2, "mm")
    if beta == 1 and alpha == 1:
        return linalg.Addmm.apply(input, mat1, mat2)
    return linalg.Addmm.apply(input, mat1, mat2, beta=beta, alpha=alpha)


def matmul(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Matrix product with NumPy's rules: dot, mv, mm, and broadcast batched products."""
    a, b = input, other
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError("matmul(): argument 'other' must be Tensor")
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        out = mm(a.unsqueeze(0), b)
        return M.UnsafeView.apply(out, shape=out.shape[1:], name="SqueezeBackward4")
    if da == 2 and db == 2:
        return mm(a, b)
    if da == 3 and db == 3 and a.shape[0] != b.shape[0] and 1 in (a.shape[0], b.shape[0]):
        # NOTE: PyTorch drops a batch of one here and folds the other operand.
        if a.shape[0] == 1:
            a, da = a.squeeze(0), 2
        else:
            b, db = b.squeeze(0), 2
    if da >= 3 and db <= 2:
        # NOTE: fold the batch into the rows: one mm (or mv), as PyTorch does.
        folded = a.reshape(-1, a.shape[-1])
        out = mm(folded, b) if db == 2 else mv(folded, b)
        return M.UnsafeView.apply(out, shape=a.shape[:-1] + b.shape[1:])
    if db >= 3 and da <= 2 and a.requires_grad:
        # NOTE: PyTorch folds b^T instead, so that a's gradient needs no batch sum.
        bt = b.mT
        folded = bt.reshape(-1, bt.shape[-1])
        if da == 1:
            return M.UnsafeView.apply(mv(folded, a), shape=bt.shape[:-1])
        out = M.UnsafeView.apply(mm(folded, a.t()), shape=bt.shape[:-1] + (a.shape[0],))
        return out.mT.contiguous()
    a2 = a.unsqueeze(0) if da == 1 else a
    b2 = b.unsqueeze(-1) if db == 1 else b
    batch = _broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    n, k, m = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    nb = Size(batch).numel()
    if k != b2.shape[-2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{nb}, {k}] but got: "
            f"[{nb}, {b2.shape[-2]}]."
        )
    a3 = a2.expand(batch + (n, k)).reshape(nb, n, k)
    b3 = b2.expand(batch + (k, m)).reshape(nb, k, m)
    shape = batch + ((n,) if da > 1 else ()) + ((m,) if db > 1 else ())
    return M.UnsafeView.apply(bmm(a3, b3), shape=shape)


def _broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    n = builtins.max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        s = (1,) * (n - len(s)) + tuple(s)
        for i, d in enumerate(s):
            if d != 1:
                if out[i] != 1 and out[i] != d:
                    raise RuntimeError(
                        f"The size of tensor a ({out[i]}) must match the size of tensor b ({d}) at "
                        f"non-singleton dimension {i}"
                    )
                out[i] = d
    return tuple(out)


def broadcast_shapes(*shapes: Sequence[int]) -> Size:
    return Size(_broadcast_shapes(*shapes))


# ---- shape -----------------------------------------------------------------------------------

def _shape_arg(shape: tuple[Any, ...]) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def _infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size {numel}")
    return shape


def reshape(input: Tensor, *shape: Any) -> Tensor:  # noqa: A002
    """``input`` with a new shape: a view when strides allow, else a copy."""
    s = _infer_shape(_shape_arg(shape), input.numel())
    return M.Reshape.apply(input, shape=s)


def view(input: Tensor, *shape: Any) -> Tensor:  # noqa: A002
    """A view of ``input`` with a new shape; errors when the strides don't allow one."""
    if len(shape) == 1 and isinstance(shape[0], dtypes.dtype):
        raise NotImplementedError("view(dtype) is not supported")
    s = _infer_shape(_shape_arg(shape), input.numel())
    return M.Reshape.apply(input, shape=s, copy_ok=False)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:  # noqa: A002
    if input.ndim == 0:
        return reshape(input, 1)
    s, e = normalize_dim(start_dim, input.ndim), normalize_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input.shape
    n = 1
    for d in shape[s:e + 1]:
        n *= d
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


def unflatten(input: Tensor, dim: int, sizes: Any) -> Tensor:  # noqa: A002
    d = normalize_dim(dim, input.ndim)
    sizes = _infer_shape(tuple(sizes), input.shape[d])
    return view(input, input.shape[:d] + sizes + input.shape[d + 1:])


def squeeze(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    if dim is None:
        dims = tuple(i for i, s in enumerate(input.shape) if s == 1)
        return M.Squeeze.apply(input, dims=dims, name="SqueezeBackward0")
    dims = normalize_dims(dim, input.ndim) if input.ndim else ()
    dims = tuple(d for d in dims if input.shape[d] == 1)
    name = "SqueezeBackward1" if isinstance(dim, int) else "SqueezeBackward2"
    return M.Squeeze.apply(input, dims=dims, name=name)


def unsqueeze(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    return M.Unsqueeze.apply(input, dim=normalize_dim(dim, input.ndim + 1))


def expand(input: Tensor, *sizes: Any) -> Tensor:  # noqa: A002
    """A broadcast view of ``input`` to ``sizes`` (-1 keeps a dimension)."""
    shape = _shape_arg(sizes)
    nd = input.ndim
    if len(shape) < nd:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{[{', '.join(map(str, input.shape))}]}}, size=[{', '.join(map(str, shape))}]): "
            "the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)"
            % (len(shape), nd)
        )
    lead = len(shape) - nd
    out = []
    for i, s in enumerate(shape):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}")
            out.append(s)
            continue
        have = input.shape[i - lead]
        if s == -1:
            s = have
        if have != s and have != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, shape))}].  "
                f"Tensor sizes: [{', '.join(map(str, input.shape))}]"
            )
        out.append(s)
    target = tuple(out)
    if target == input.shape:
        return M.Expand.apply(input, shape=target)
    return M.Expand.apply(input, shape=target)


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:  # noqa: A002
    nd = input.ndim
    d0, d1 = normalize_dim(dim0, nd), normalize_dim(dim1, nd)
    axes = list(range(nd))
    if nd:
        axes[d0], axes[d1] = axes[d1], axes[d0]
    return M.Permute.apply(input, axes=tuple(axes), name="TransposeBackward0")


swapaxes = transpose


def permute(input: Tensor, dims: Any, name: str = "PermuteBackward0") -> Tensor:  # noqa: A002
    dims = _shape_arg(tuple(dims)) if not isinstance(dims, int) else (dims,)
    nd = input.ndim
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
            f"to len(dims) = {len(dims)}"
        )
    axes = tuple(normalize_dim(d, nd) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return M.Permute.apply(input, axes=axes, name=name)


def t(input: Tensor) -> Tensor:  # noqa: A002
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    axes = tuple(range(input.ndim))[::-1]
    return M.Permute.apply(input, axes=axes, name="TBackward0")


def contiguous(input: Tensor) -> Tensor:  # noqa: A002
    if input.is_contiguous():
        return input
    return M.Contiguous.apply(input)


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:  # noqa: A002
    return E.Clone.apply(input)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along ``dim``; every other dimension must match."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # NOTE: PyTorch skips 1-D empty tensors (legacy behaviour).
    ref = next((t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)), tensors[0])
    nd = ref.ndim
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = normalize_dim(dim, nd)
    parts = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0) or t is ref]
    for i, t in enumerate(parts):
        if t.ndim != nd:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {nd} and {t.ndim}"
            )
        for j in range(nd):
            if j != d and t.shape[j] != ref.shape[j]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[j]} but got size {t.shape[j]} for tensor number {i} in the list."
                )
    out_dtype = parts[0].dtype
    for t in parts[1:]:
        out_dtype = dtypes.promote_types(out_dtype, t.dtype)
    parts = [t if t.dtype is out_dtype else t.to(out_dtype) for t in parts]
    return M.Cat.apply(*parts, dim=d)


concat = concatenate = cat


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Stack equal-shaped tensors along a new dimension ``dim``."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                f"entry 0 and {list(t.shape)} at entry {i}"
            )
    d = normalize_dim(dim, tensors[0].ndim + 1)
    out_dtype = tensors[0].dtype
    for t in tensors[1:]:
        out_dtype = dtypes.promote_types(out_dtype, t.dtype)
    tensors = [t if t.dtype is out_dtype else t.to(out_dtype) for t in tensors]
    return M.Stack.apply(*tensors, dim=d)


def split(input: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """Pieces of ``split_size`` (the last may be smaller), or of the listed sizes."""
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
        if size == 0:
            if n != 0:
                raise RuntimeError(
                    f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
                )
            sizes = [0]
        else:
            sizes = [size] * (n // size) + ([n % size] if n % size else [])
            if not sizes:
                sizes = [0]
        name = "SplitBackward0"
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if builtins.sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                f"dimension {d}), but got split_sizes={sizes}"
            )
        name = "SplitWithSizesBackward0"
    return M.Split.apply(input, sizes=sizes, dim=d, name=name)  # type: ignore[no-any-return]


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = normalize_dim(dim, input.ndim)
    n = input.shape[d]
    size = -(-n // chunks) if n else 0
    if size == 0:
        return split(input, [0] * 1 if n == 0 else [n], d) if n == 0 else (input,)
    return split(input, size, d)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    d = normalize_dim(dim, input.ndim)
    out = M.Split.apply(input, sizes=[1] * input.shape[d], dim=d, name="UnbindBackward0", squeeze=True)
    return out if isinstance(out, tuple) else (out,)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    d = normalize_dim(dim, input.ndim)
    key = (slice(None),) * d + (index._data,)
    return M.Index.apply(input, key=key, name="IndexSelectBackward0", advanced=True)


def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    return M.Gather.apply(input, dim=normalize_dim(dim, input.ndim), index=index._data)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:  # noqa: A002
    idx = input.backend.nonzero(input._data)
    if as_tuple:
        return tuple(Tensor._make(i.astype("int64"), input._device) for i in idx)
    return Tensor._make(input.backend.stack(idx, axis=1).astype("int64") if idx else
                        input.backend.zeros((0, 0), "int64"), input._device)


def repeat(input: Tensor, *sizes: Any) -> Tensor:  # noqa: A002
    reps = _shape_arg(sizes)
    if len(reps) < input.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    return M.Repeat.apply(input, reps=reps)


# ---- indexing --------------------------------------------------------------------------------

def _index_key(t: Tensor, key: Any) -> tuple[tuple[Any, ...], bool]:
    """The user's key as a NumPy key (Tensors become arrays), and whether it is advanced."""
    if not isinstance(key, tuple):
        key = (key,)
    out: list[Any] = []
    advanced = False
    for k in key:
        if isinstance(k, Tensor):
            if k.ndim == 0 and not k.dtype.is_floating_point and k.dtype is not dtypes.bool:
                out.append(int(k.item()))
                continue
            if k.dtype.is_floating_point:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if k._device is not t._device and k._device.type != "cpu":
                raise RuntimeError("indices should be either on cpu or on the same device as the indexed tensor (cpu)")
            arr = k._data if k._device is t._device else t.backend.asarray(k.backend.to_host(k._data))
            out.append(arr)
            advanced = True
        elif isinstance(k, (list, range)) or hasattr(k, "__array_interface__") and not isinstance(k, (int, slice)):
            arr = t.backend.asarray(list(k) if isinstance(k, range) else k)
            if arr.size == 0 and arr.dtype.kind == "f":  # x[[]]: an empty integer index
                arr = arr.astype("int64")
            if arr.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            out.append(arr)
            advanced = True
        elif k is None or k is Ellipsis or isinstance(k, slice):
            if isinstance(k, slice) and k.step is not None and k.step < 0:
                raise ValueError("step must be greater than zero")
            out.append(k)
        elif isinstance(k, bool):
            out.append(t.backend.asarray(k))
            advanced = True
        elif isinstance(k, int) or hasattr(k, "__index__"):
            out.append(int(k))
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                "are valid indices (got " + type(k).__name__ + ")"
            )
    return tuple(out), advanced


def _check_bounds(shape: tuple[int, ...], key: tuple[Any, ...]) -> None:
    """PyTorch's IndexError for an integer out of range (NumPy's says 'axis')."""
    n_real = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    dim = 0
    for k in key:
        if k is Ellipsis:
            dim += len(shape) - n_real
        elif k is None:
            continue
        else:
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            if isinstance(k, int) and not -shape[dim] <= k < shape[dim]:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {shape[dim]}")
            dim += 1


def _check_masks(shape: tuple[int, ...], key: tuple[Any, ...]) -> None:
    """PyTorch's IndexError for a boolean mask whose shape does not match the dims it covers."""
    def width(k: Any) -> int:
        if k is None or k is Ellipsis:
            return 0
        return int(k.ndim) if getattr(k, "dtype", None) is not None and k.dtype.kind == "b" else 1

    real = builtins.sum(width(k) for k in key)
    full: list[int] = []  # the indexed shape with the None dims inserted, as PyTorch reports it
    dim = 0
    for k in key:
        if k is None:
            full.append(1)
        elif k is Ellipsis:
            n = builtins.max(len(shape) - real, 0)
            full += shape[dim:dim + n]
            dim += n
        else:
            full += shape[dim:dim + width(k)]
            dim += width(k)
    full += shape[dim:]
    pos = 0
    for k in key:
        w = width(k)
        if k is Ellipsis:
            pos += builtins.max(len(shape) - real, 0)
        elif k is None:
            pos += 1
        elif getattr(k, "dtype", None) is not None and k.dtype.kind == "b" and k.ndim:
            for j in range(w):
                if pos + j < len(full) and k.shape[j] != full[pos + j]:
                    raise IndexError(
                        f"The shape of the mask {list(k.shape)} at index {j} does not match the "
                        f"shape of the indexed tensor {full} at index {pos + j}"
                    )
        pos += w


def getitem(t: Tensor, key: Any) -> Tensor:
    """``t[key]``: ints select (SelectBackward0), slices slice (SliceBackward0), None adds a
    dimension; integer/bool tensors and lists index (IndexBackward0)."""
    npkey, advanced = _index_key(t, key)
    if advanced:
        _check_masks(t.shape, npkey)
        try:
            return M.Index.apply(t, key=npkey, name="IndexBackward0", advanced=True)
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension")) from None
    if npkey.count(Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    _check_bounds(t.shape, npkey)
    # NOTE: one node per index entry, as PyTorch records them (x[0, 1:] is Slice(Select(x))).
    n_real = builtins.sum(1 for k in npkey if k is not None and k is not Ellipsis)
    out = t
    dim = 0
    recorded = False
    for k in npkey:
        if k is Ellipsis:
            dim += t.ndim - n_real
            continue
        pre = (slice(None),) * dim
        if k is None:
            out = M.Unsqueeze.apply(out, dim=dim)
            dim += 1
            recorded = True
        elif isinstance(k, int):
            out = M.Index.apply(out, key=pre + (k, Ellipsis), name="SelectBackward0", advanced=False)
            recorded = True
        else:
            # NOTE: full slices inside a tuple are skipped; a bare x[:] is recorded, as PyTorch.
            if k != slice(None) or isinstance(key, slice):
                out = M.Index.apply(out, key=pre + (k, Ellipsis), name="SliceBackward0",
                                    advanced=False)
                recorded = True
            dim += 1
    if not recorded:  # x[...], x[()], x[:, :]: an alias
        out = M.Index.apply(out, key=(Ellipsis,), name="AliasBackward0", advanced=False)
    return out


def setitem(t: Tensor, key: Any, value: Any) -> None:
    """``t[key] = value``, in place; recorded as CopySlices when autograd is involved."""
    value_t = value if isinstance(value, Tensor) else None
    recording = STATE.grad_enabled and (t._requires_grad or (value_t is not None and value_t._requires_grad))
    npkey, advanced = _index_key(t, key)
    if not recording:
        _check_inplace_target(t)
        v = value_t._data if value_t is not None else value
        if value_t is not None and value_t._device is not t._device:
            v = t.backend.asarray(value_t.backend.to_host(value_t._data))
        if not advanced:
            _check_bounds(t.shape, npkey)
        try:
            t._data[npkey] = v
        except ValueError as e:
            raise _write_error(e) from None
        t._counter().bump()
        return
    if value_t is None:
        value_t = as_tensor_like(value, t)
    if advanced:
        inplace(t, _index_put, npkey, value_t)
        return
    copy_(getitem(t, key), value_t)


def _index_put(t: Tensor, npkey: Any, value: Tensor) -> Tensor:
    return _IndexPut.apply(t, value.to(t.dtype), key=npkey)


class _IndexPut(E.Node):
    """``t`` with ``value`` written at an advanced ``key`` (out of place; IndexPutBackward0)."""

    node_name = "IndexPutBackward0"

    def __init__(self, key: Any) -> None:
        self.key = key

    def forward(self, x: Any, v: Any) -> Any:
        out = self.backend.copy(x)
        out[self.key] = v
        self.v_shape = v.shape
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        mask = self.backend.ones(grad.shape, grad._data.dtype)
        mask[self.key] = 0
        gx = grad * self.wrap(mask) if self.needs_input_grad[0] else None
        gv = None
        if self.needs_input_grad[1]:
            gv = M.Index.apply(grad, key=self.key, name="IndexBackward0", advanced=True)
            gv = gv.sum_to_size(self.v_shape)
        return gx, gv


def _write_error(e: ValueError) -> RuntimeError:
    if "read-only" in str(e):
        return RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )
    return RuntimeError(str(e))


# ---- in-place ops ----------------------------------------------------------------------------

_INPLACE_INFERENCE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
    "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
    "for more details."
)


def _check_inplace_target(t: Tensor) -> None:
    if t._is_inference and not STATE.inference:
        raise RuntimeError(_INPLACE_INFERENCE)
    if STATE.grad_enabled and t._base is not None and t._view_fn is None and t._base._requires_grad:
        raise RuntimeError(_NO_GRAD_VIEW)
    if STATE.grad_enabled and t._requires_grad and t.grad_fn is None:
        if t._base is not None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if STATE.grad_enabled and t._base is not None and t._base._requires_grad and t._base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def _can_cast(src: dtypes.dtype, dst: dtypes.dtype) -> bool:
    return src.category <= dst.category


def _cast_error(src: dtypes.dtype, dst: dtypes.dtype) -> RuntimeError:
    return RuntimeError(
        f"result type {_type_name2(src)} can't be cast to the desired output type {_type_name2(dst)}"
    )


def inplace(t: Tensor, fn: Callable[..., Tensor], *args: Any, **kwargs: Any) -> Tensor:
    """Run ``fn(t, *args)`` and write the result into ``t``'s storage.

    With autograd involved, ``t`` then takes the new node as its ``grad_fn``; a view's base is
    rewired through CopySlices. Saved copies keep gradients exact even though ``t`` is
    overwritten.
    """
    _check_inplace_target(t)
    recording = STATE.grad_enabled and (
        t._requires_grad or builtins.any(isinstance(a, Tensor) and a._requires_grad for a in args)
        or (t._base is not None and t._base._requires_grad)
    )
    if not recording:
        with no_grad():
            result = fn(t, *args, **kwargs)
        _write(t, result)
        return t
    if t._base is not None:
        _check_view_target(t)
    old = _alias(t)
    result = fn(old, *args, **kwargs)
    if not _can_cast(result.dtype, t.dtype):
        raise _cast_error(result.dtype, t.dtype)
    if result.dtype is not t.dtype:
        result = result.to(t.dtype)
    node = result.grad_fn
    if node is not None:
        node._own_saved_input(old)
    if t._base is not None:
        _rebase_view(t, result)
        return t
    _write(t, result)
    _set_grad_fn(t, result.grad_fn, result._output_nr, result._requires_grad)
    return t


def _alias(t: Tensor) -> Tensor:
    """A stand-in for ``t`` before an in-place op: same storage and graph position."""
    a = Tensor._make(t._data, t._device)
    a.grad_fn, a._output_nr, a._requires_grad = t.grad_fn, t._output_nr, t._requires_grad
    if t.grad_fn is None and t._requires_grad:
        a._acc_ref = t._acc_ref
    return a


def _write(t: Tensor, result: Tensor) -> None:
    if not _can_cast(result.dtype, t.dtype):
        raise _cast_error(result.dtype, t.dtype)
    if result.shape != t.shape:
        try:
            src = t.backend.broadcast_to(result._data, t._data.shape)
        except ValueError:
            raise RuntimeError(
                f"output with shape {list(t.shape)} doesn't match the broadcast shape {list(result.shape)}"
            ) from None
    else:
        src = result._data
    try:
        t.backend.copyto(t._data, src, casting="unsafe")
    except ValueError as e:
        raise _write_error(e) from None
    t._counter().bump()


_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the no_grad block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)


def _check_view_target(view: Tensor) -> None:
    """PyTorch's refusals for recorded in-place ops on views it cannot replay."""
    chain = view._view_fn
    if chain is None:
        raise RuntimeError(_NO_GRAD_VIEW)
    cls, params, i = chain[-1]
    if i is not None:
        name = params.get("name") or cls.node_name or cls.__name__
        name = name[: name.rfind("Backward")] if "Backward" in name else name
        raise RuntimeError(
            f"Output {i} of {name} is a view and is being modified inplace. This view is the "
            "output of a function that returns multiple views. Such functions do not allow the "
            "output views to be modified inplace. You should replace the inplace operation by an "
            "out-of-place one."
        )


def _rebase_view(view: Tensor, result: Tensor) -> None:
    """In-place op on a view whose base is in the graph: the base's new grad_fn is CopySlices,
    and the view is re-derived from the new base."""
    base = view._base
    assert base is not None and view._view_fn is not None
    old_base = _alias(base)
    _write(view, result)
    new = _CopySlices.apply(old_base, result, chain=view._view_fn)
    _set_grad_fn(base, new.grad_fn, 0, new._requires_grad)
    refresh_view_grad_fn(view)


def refresh_view_grad_fn(view: Tensor) -> None:
    """Give ``view`` a grad_fn derived from its base's current one: one AsStridedBackward0 node
    (PyTorch's name) whose backward scatters the gradient into the base's shape."""
    base = view._base
    assert base is not None and view._view_fn is not None
    view._view_version = view._counter().value
    if not base._requires_grad:
        return
    node = _AsStridedView(view._view_fn, tuple(base.shape))
    node.backend, node.backend_device = base.backend, base._device
    node.needs_input_grad = (True,)
    node.next_functions = (_edge(base, Tensor),)
    node._seq = next(_node_seq)
    _set_grad_fn(view, node, 0, True)


def _set_grad_fn(t: Tensor, fn: Any, output_nr: int, requires_grad: bool) -> None:
    """Point ``t`` at a new node after an in-place op; ``retain_grad`` follows it (hooks stay
    with the old node and see the gradient of the old value, as in PyTorch)."""
    old = t._grad_fn
    if old is not None and old._retain_grad:
        ref = old._retain_grad.get(t._output_nr)
        if ref is not None and ref() is t:
            del old._retain_grad[t._output_nr]
            if fn is not None:
                if fn._retain_grad is None:
                    fn._retain_grad = {}
                fn._retain_grad[output_nr] = ref
    t._grad_fn, t._output_nr, t._requires_grad = fn, output_nr, requires_grad


class _AsStridedView(E.Node):
    """A view re-derived from its base after an in-place op (AsStridedBackward0)."""

    node_name = "AsStridedBackward0"

    def __init__(self, chain: tuple[Any, ...], base_shape: tuple[int, ...]) -> None:
        self.chain = chain
        self.base_shape = base_shape

    def backward(self, grad: Any) -> tuple[Any]:
        return (_ViewScatter.apply(grad, chain=self.chain, base_shape=self.base_shape),)


class _ViewScatter(E.Node):
    """Zeros of the base's shape with ``grad`` in the view's region; backward reads the region."""

    node_name = "AsStridedBackwardBackward0"

    def __init__(self, chain: tuple[Any, ...], base_shape: tuple[int, ...]) -> None:
        self.chain = chain
        self.base_shape = base_shape

    def forward(self, grad: Any) -> Any:
        out = self.backend.zeros(self.base_shape, grad.dtype)
        _replay_array(self, out, self.chain)[...] = grad
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        return (replay_view(grad, self.chain),)


def replay_view(base: Tensor, chain: tuple[Any, ...]) -> Tensor:
    """Re-derive a view of ``base`` from its chain of view ops (tensor ops: recorded)."""
    out: Any = base
    for cls, params, i in chain:
        out = cls.apply(out, **params) if params else cls.apply(out)
        if i is not None:
            out = out[i]
    return out


def _replay_array(node: E.Node, arr: Any, chain: tuple[Any, ...]) -> Any:
    for cls, params, i in chain:
        n = cls(**params) if params else cls()
        n.backend = node.backend
        out = n.forward(arr)
        arr = out[i] if i is not None else out
    return arr


class _CopySlices(E.Node):
    """The base of a view after an in-place op on the view: ``base`` with ``result`` in the view's
    region. Backward: the region's gradient goes to ``result``, the rest to the old base."""

    node_name = "torch::autograd::CopySlices"

    def __init__(self, chain: tuple[Any, ...]) -> None:
        self.chain = chain

    def __repr__(self) -> str:
        return f"<CopySlices object at {hex(id(self))}>"

    def forward(self, base: Any, result: Any) -> Any:
        # NOTE: the write already happened (the view shares the base's storage); the output
        # is the base's own storage, so other views stay valid.
        self.shape = base.shape
        return base

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gb = gr = None
        if self.needs_input_grad[0]:
            mask = self.backend.ones(self.shape, grad._data.dtype)
            _replay_array(self, mask, self.chain)[...] = 0
            gb = grad * self.wrap(mask)
        if self.needs_input_grad[1]:
            gr = replay_view(grad, self.chain)
        return gb, gr


def _fast_inplace(t: Tensor, ufunc: str, other: Any, alpha: Any = 1) -> Tensor | None:
    """In-place arithmetic without autograd straight into ``t``'s storage (the optimizer path)."""
    if STATE.grad_enabled and (t._requires_grad or (isinstance(other, Tensor) and other._requires_grad)):
        return None
    if t._base is not None and t._base._requires_grad and STATE.grad_enabled:
        return None
    _check_inplace_target(t)
    b = t.backend
    if isinstance(other, Tensor):
        if other._device is not t._device:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{t._device} and {other._device}!"
            )
        o = other._data
        odt = other.dtype
        if other.ndim == 0 and t.ndim > 0:
            odt = odt if odt.category > t.dtype.category else t.dtype
    elif _is_scalar(other):
        o = other
        odt = dtypes.scalar_type(other)
    else:
        return None
    res = dtypes.promote_types(t.dtype, odt) if isinstance(other, Tensor) else \
        (t.dtype if odt.category <= t.dtype.category else odt)
    if ufunc == "true_divide" and not res.is_floating_point:
        res = dtypes.get_default_dtype()
    if not _can_cast(res, t.dtype):
        raise _cast_error(res, t.dtype)
    if alpha != 1:
        o = b.multiply(o, alpha)
    try:
        getattr(b, ufunc)(t._data, o, out=t._data, casting="unsafe")
    except ValueError as e:
        if "broadcast" in str(e):
            raise RuntimeError(
                f"output with shape {list(t.shape)} doesn't match the broadcast shape "
                f"{list(_broadcast_shapes(t.shape, getattr(o, 'shape', ())))}"
            ) from None
        raise _write_error(e) from None
    t._counter().bump()
    return t


def add_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    out = _fast_inplace(t, "add", other, alpha)
    return inplace(t, add, other, alpha=alpha) if out is None else out


def sub_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    _check_sub(t, other)
    out = _fast_inplace(t, "subtract", other, alpha)
    return inplace(t, sub, other, alpha=alpha) if out is None else out


def mul_(t: Tensor, other: Any) -> Tensor:
    out = _fast_inplace(t, "multiply", other)
    return inplace(t, mul, other) if out is None else out


def div_(t: Tensor, other: Any) -> Tensor:
    out = _fast_inplace(t, "true_divide", other)
    return inplace(t, div, other) if out is None else out


def clamp_(t: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return inplace(t, clamp, min, max)


class _Fill(E._Unary):
    """``fill_``/``zero_`` recorded: the old values get no gradient."""

    def __init__(self, value: Any, name: str) -> None:
        self.value = value
        self.node_name = name

    def forward(self, x: Any) -> Any:
        return self.backend.full(x.shape, self.value, x.dtype)

    def grad_of(self, grad: Any) -> Any:
        return grad * 0


def zero_(t: Tensor) -> Tensor:
    return fill_(t, 0, name="ZeroBackward0")


def fill_(t: Tensor, value: Any, name: str = "FillBackward0") -> Tensor:
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
            )
        return copy_(t, value.expand(t.shape) if t.ndim else value)
    if not STATE.grad_enabled or not (t._requires_grad or (t._base is not None and t._base._requires_grad)):
        _check_inplace_target(t)
        try:
            t._data[...] = value
        except ValueError as e:
            raise _write_error(e) from None
        t._counter().bump()
        return t
    return inplace(t, lambda x: _Fill.apply(x, value=value, name=name if name != "FillBackward0" else "FillBackward2"))


class _CopyFrom(E.Node):
    """``dst.copy_(src)`` recorded: the gradient goes to ``src`` (summed to its shape)."""

    node_name = "torch::autograd::CopyBackwards"

    def __repr__(self) -> str:
        return f"<CopyBackwards object at {hex(id(self))}>"

    def forward(self, dst: Any, src: Any) -> Any:
        self.src_shape = src.shape
        self.src_dtype = src.dtype
        try:
            return self.backend.broadcast_to(src, dst.shape).astype(dst.dtype)
        except ValueError:
            raise RuntimeError(
                f"The size of tensor a ({dst.shape[-1] if dst.ndim else 1}) must match the size of "
                f"tensor b ({src.shape[-1] if src.ndim else 1}) at non-singleton dimension "
                f"{builtins.max(dst.ndim - 1, 0)}"
            ) from None

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gd = grad * 0 if self.needs_input_grad[0] else None
        gs = None
        if self.needs_input_grad[1]:
            gs = grad.sum_to_size(self.src_shape).to(dtypes.from_name(self.src_dtype.name))
        return gd, gs


def copy_(t: Tensor, src: Any) -> Tensor:
    """Copy ``src`` (broadcast, converted) into ``t``."""
    if not isinstance(src, Tensor):
        src = as_tensor_like(src, t)
    if src._device is not t._device:
        src = src.to(t._device)
    recording = STATE.grad_enabled and (src._requires_grad or t._requires_grad or
                                         (t._base is not None and t._base._requires_grad))
    if not recording:
        _check_inplace_target(t)
        try:
            t.backend.copyto(t._data, t.backend.broadcast_to(src._data, t._data.shape), casting="unsafe")
        except ValueError as e:
            if "broadcast" in str(e):
                raise RuntimeError(
                    f"output with shape {list(t.shape)} doesn't match the broadcast shape {list(src.shape)}"
                ) from None
            raise _write_error(e) from None
        t._counter().bump()
        return t
    return inplace(t, lambda x, s: _CopyFrom.apply(x, s), src)


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    from .random import uniform_array

    with no_grad():
        t._data[...] = uniform_array(t, a, b, generator)
    t._counter().bump()
    return t


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    from .random import normal_array

    with no_grad():
        t._data[...] = normal_array(t, mean, std, generator)
    t._counter().bump()
    return t


# ---- conversion ------------------------------------------------------------------------------

def to(t: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other)``; returns ``t`` itself
    when nothing changes."""
    dev = kwargs.pop("device", None)
    dt = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    for a in args:
        if isinstance(a, dtypes.dtype):
            dt = a
        elif isinstance(a, Tensor):
            dev, dt = a._device, a.dtype
        elif a is not None:
            dev = a
    from .device import as_device

    target_dev = as_device(dev) if dev is not None else t._device
    out = t
    if target_dev is not t._device:
        out = _ToDevice.apply(out, target=target_dev)
    if dt is not None and dt is not out.dtype:
        out = E.ToCopy.apply(out, dtype=dt.name)
    if copy and out is t:
        out = clone(t)
    return out


class _ToDevice(E._Unary):
    node_name = "ToCopyBackward0"

    def __init__(self, target: Any) -> None:
        self.target = target

    def forward(self, x: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def apply(cls, x: Any, target: Any = None) -> Any:  # type: ignore[override]
        src_dev = x._device
        host = x.backend.to_host(x._data)
        data = target.backend.from_host(host)
        out = Tensor._make(data, target)
        if STATE.grad_enabled and x._requires_grad:
            node = cls(target=src_dev)
            node.backend = target.backend
            node.backend_device = target
            node.needs_input_grad = (True,)
            from .autograd.node import _edge, _seq

            node.next_functions = (_edge(x, Tensor),)
            node._seq = next(_seq)
            out.grad_fn, out._output_nr, out._requires_grad = node, 0, True
        return out

    def grad_of(self, grad: Any) -> Any:
        return grad.to(self.target)


class Storage:
    """The minimal ``untyped_storage()``: identity and size of a tensor's memory."""

    def __init__(self, t: Tensor) -> None:
        base = t._data
        while getattr(base, "base", None) is not None:
            base = base.base
        self._base = base

    def data_ptr(self) -> int:
        return int(self._base.__array_interface__["data"][0])

    def nbytes(self) -> int:
        return int(self._base.nbytes)

    def size(self) -> int:
        return int(self._base.nbytes)
