"""Arithmetic: PyTorch's type promotion, Python scalars, then one elementwise op.

``_promote`` casts both operands to PyTorch's result dtype (NumPy would choose differently);
the unary math functions promote integer inputs to the default float dtype first.
"""

from __future__ import annotations

import builtins
import numbers
from typing import Any, Callable

from .. import dtypes
from ..autograd.node import Node
from ..ops import elementwise as E
from ..tensor import Tensor
from .shape import _broadcast_shapes


def _is_scalar(x: Any) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, complex)


def as_tensor_like(x: Any, like: Tensor) -> Tensor:
    """``x`` as a tensor on ``like``'s device (Tensors pass through)."""
    if isinstance(x, Tensor):
        return x
    from ..creation import tensor

    return tensor(x, device=like._device)


def _type_name(d: dtypes.dtype) -> str:
    """PyTorch's scalar type name of ``d`` (``Float``, ``Long``, ...), used in its messages."""
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "bool": "Bool", "int16": "Short", "int8": "Char",
            "uint8": "Byte"}.get(d.name, d.name)


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
    from ..creation import tensor

    other, _ = _promote(other, s)
    return tensor(s, dtype=other.dtype, device=other._device), other


def _binary(cls: Any, a: Any, b: Any, **params: Any) -> Tensor:
    if type(b) is not Tensor or type(a) is not Tensor or a._data.dtype != b._data.dtype:
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
    if alpha != 1 or isinstance(alpha, bool):
        return _with_alpha(E.Add, input, other, alpha)
    return _binary(E.Add, input, other)


def _with_alpha(cls: Any, a: Any, b: Any, alpha: Any) -> Tensor:
    """``cls`` (Add or Sub) with a scaled ``b``; PyTorch's checks of ``alpha`` against the
    result dtype."""
    if not isinstance(a, Tensor):
        a, b = _scalar_to_tensor(a, b)
    a, b = _promote(a, b)
    if isinstance(alpha, bool) and a.dtype is not dtypes.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, float) and not a.dtype.is_floating_point:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    return _binary(cls, a, b, alpha=alpha)


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
    if alpha != 1 or isinstance(alpha, bool):
        return _with_alpha(E.Sub, input, other, alpha)
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
    """``input / other``: true division, promoting integers to the default float dtype.

    With ``rounding_mode='trunc'`` (toward 0) or ``'floor'`` (toward -inf, as ``//``) the result
    keeps the promoted dtype (integers stay integers), integer division by zero raises PyTorch's
    ``RuntimeError: ZeroDivisionError``, and the gradient is 0 (DivBackward2).
    """
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                               f"but found '{rounding_mode}'")
        return _rounding(f"div_{rounding_mode}", E.DivRounding, input, other, mode=rounding_mode)
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
        # NOTE: PyTorch special-cases x ** 1 as a copy and x ** 0 as ones, which work for bool
        if exponent:
            return clone(input)
        return Tensor._make(input.backend.ones(input.shape, "bool"), input._device)
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


def floor_divide(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input // other``, rounding toward -inf, in the promoted dtype.

    Integer division by zero raises PyTorch's ``RuntimeError: ZeroDivisionError`` on every
    device; float division by zero gives inf or nan. A float result records PyTorch's
    ``NotImplemented`` node: backward through it raises.

    Example:
        >>> floor_divide(tensor([7, -7]), 2)
        tensor([ 3, -4])
    """
    return _rounding("div_floor", E.FloorDivide, input, other)


def remainder(input: Any, other: Any) -> Tensor:  # noqa: A002
    """``input % other`` with the sign of ``other``, as Python's ``%``.

    Integer division by zero raises PyTorch's ``RuntimeError: ZeroDivisionError``. The gradient is
    ``grad`` for ``input`` and ``-grad * floor(input / other)`` for a tensor ``other``
    (RemainderBackward0/1); a Python scalar ``input`` has no derivative, as in PyTorch.

    Example:
        >>> remainder(tensor([7, -7]), 3)
        tensor([1, 2])
    """
    if not isinstance(input, Tensor):
        name = E.NOT_IMPLEMENTED
    else:
        name = "RemainderBackward1" if isinstance(other, Tensor) else "RemainderBackward0"
    return _rounding("remainder", E.Remainder, input, other, name=name)


def _rounding(kernel: str, cls: Any, a: Any, b: Any, **params: Any) -> Tensor:
    """A rounding division ``cls`` on the promoted operands; PyTorch has no kernel ``kernel``
    for two bools."""
    if not isinstance(a, Tensor):
        a, b = _scalar_to_tensor(a, b)
    a, b = _promote(a, b)
    if a.dtype is dtypes.bool:
        raise NotImplementedError(f"\"{kernel}_{a._device.type}\" not implemented for 'Bool'")
    return _binary(cls, a, b, **params)


def floor_divide_(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """In-place ``input //= other``."""
    return rounding_inplace(input, floor_divide, other)


def remainder_(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """In-place ``input %= other``."""
    return rounding_inplace(input, remainder, other)


def rounding_inplace(t: Tensor, fn: Callable[..., Tensor], other: Any, **kw: Any) -> Tensor:
    """``fn(t, other, **kw)``, a rounding division, written into ``t``.

    As in PyTorch, a bool ``t`` whose result would not be bool is refused for the cast before
    anything is divided (``t //= 0`` reports the cast, not the zero)."""
    from .inplace_ops import _can_cast, _cast_error, _shape_error, inplace  # late: imports arith

    if t.dtype is dtypes.bool:
        res = _promote(t, other)[0].dtype
        if not _can_cast(res, t.dtype):
            raise _cast_error(res, t.dtype)
    if isinstance(other, Tensor) and other.shape != t.shape:
        # NOTE: as the dtype, the shape is checked before dividing (then a zero is never seen).
        try:
            fits = _broadcast_shapes(t.shape, other.shape) == tuple(t.shape)
        except RuntimeError:
            fits = False
        if not fits:
            raise _shape_error(t.shape, other.shape)
    return inplace(t, fn, other, **kw)


def _bitwise(name: str, doc: str) -> Callable[[Tensor, Any], Tensor]:
    """The ``torch`` function ``name`` (``bitwise_and``, ...): integers and bools only, in the
    promoted dtype (``&`` on int64 tensors is bitwise, not logical)."""

    def fn(input: Tensor, other: Any) -> Tensor:  # noqa: A002
        a, b = _promote(input, other)
        if a.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"{name}_{a._device.type}\" not implemented for '{_type_name(a.dtype)}'")
        return _nograd_binary(name, a, b)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


bitwise_and = _bitwise("bitwise_and", "Bitwise AND of integer or bool tensors (``&``).")
bitwise_or = _bitwise("bitwise_or", "Bitwise OR of integer or bool tensors (``|``).")
bitwise_xor = _bitwise("bitwise_xor", "Bitwise XOR of integer or bool tensors (``^``).")


def _bitwise_inplace(fn: Callable[[Tensor, Any], Tensor]) -> Callable[[Tensor, Any], Tensor]:
    def fn_(input: Tensor, other: Any) -> Tensor:  # noqa: A002
        from .inplace_ops import inplace  # late: inplace_ops imports arith

        return inplace(input, fn, other)

    fn_.__name__ = fn_.__qualname__ = fn.__name__ + "_"
    fn_.__doc__ = f"In-place ``{fn.__name__}``."
    return fn_


bitwise_and_ = _bitwise_inplace(bitwise_and)
bitwise_or_ = _bitwise_inplace(bitwise_or)
bitwise_xor_ = _bitwise_inplace(bitwise_xor)


def _nograd_binary(name: str, a: Any, b: Any) -> Tensor:
    """The backend's binary ``name`` on the promoted operands, recording no gradient."""
    if not isinstance(a, Tensor):
        a = as_tensor_like(a, b)
    if isinstance(b, Tensor) and b._device is not a._device:
        raise RuntimeError(
            "Expected all tensors to be on the same device, but found at least two devices, "
            f"{a._device} and {b._device}!"
        )
    a, b = _promote(a, b)
    if batched(a, b):
        return raw_op(lambda be, x, y: getattr(be, name)(x, y), a, b)
    bd = b._data if isinstance(b, Tensor) else b
    try:
        return Tensor._make(getattr(a.backend, name)(a._data, bd), a._device)
    except ValueError as e:
        raise _broadcast_error(a._data, bd) from e


def _nograd_unary(name: str, doc: str) -> Callable[[Tensor], Tensor]:
    """The ``torch`` function ``name``: the backend's ``name`` on the data, recording no
    gradient."""

    def fn(input: Tensor) -> Tensor:  # noqa: A002
        if input._level:
            return raw_op(lambda be, x: getattr(be, name)(x), input)
        return Tensor._make(getattr(input.backend, name)(input._data), input._device)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


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


def _float_math(op: type[Node], doc: str) -> Callable[[Tensor], Tensor]:
    """The ``torch`` function named after ``op`` (``E.Exp`` gives ``exp``): ``op`` applied after
    integer and bool inputs are promoted to the default float dtype, as in PyTorch."""

    def fn(input: Tensor) -> Tensor:  # noqa: A002
        return op.apply(_float_input(input))

    fn.__name__ = fn.__qualname__ = op.__name__.lower()
    fn.__doc__ = doc
    return fn


exp = _float_math(E.Exp, "``e ** x`` element-wise.")
log = _float_math(E.Log, "Natural logarithm; ``log(0)`` is ``-inf``, ``log(-1)`` is nan.")
log1p = _float_math(E.Log1p, "``log(1 + x)``, accurate for small ``x``.")
expm1 = _float_math(E.Expm1, "``exp(x) - 1``, accurate for small ``x``.")
sqrt = _float_math(E.Sqrt, "Square root; negative inputs give nan.")
rsqrt = _float_math(E.Rsqrt, "``1 / sqrt(x)``.")
reciprocal = _float_math(E.Reciprocal, "``1 / x``.")
sin = _float_math(E.Sin, "Sine (radians).")
cos = _float_math(E.Cos, "Cosine (radians).")
tanh = _float_math(E.Tanh, "Hyperbolic tangent.")
sigmoid = _float_math(E.Sigmoid, "Logistic sigmoid ``1 / (1 + exp(-x))``.")


def square(input: Tensor) -> Tensor:  # noqa: A002
    """``x ** 2`` (recorded as PowBackward0, as in PyTorch)."""
    return pow(input, 2)


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


def floor(input: Tensor) -> Tensor:  # noqa: A002
    """The largest integer-valued number <= ``x``; integers pass unchanged. The gradient is 0
    everywhere (FloorBackward0), as in PyTorch."""
    if input.dtype is dtypes.bool:
        kernel = "floor_vml_cpu" if input._device.type == "cpu" else f"floor_{input._device.type}"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return _Floor.apply(input)


class _Floor(E._Unary):
    node_name = "FloorBackward0"

    def forward(self, x: Any) -> Any:
        return self.backend.floor(x) if x.dtype.kind == "f" else self.backend.copy(x)

    def grad_of(self, grad: Any) -> Any:
        return grad * 0


def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:  # noqa: A002
    """A copy of ``input`` with its own storage (CloneBackward0)."""
    return E.Clone.apply(input)


# ---- backend functions with no gradient, as ops (so that vmap can batch them) ----------------

class RawOp(Node):
    """``fn(backend, *arrays)``, an elementwise function recording no gradient (comparisons,
    ``isnan``, integer arithmetic). Used when an input is batched under ``vmap``, which batches
    it like any elementwise op."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def forward(self, *arrays: Any) -> Any:
        return self.fn(self.backend, *arrays)


class RawReduce(Node):
    """``fn(backend, x, dims, keepdim)``, a reduction recording no gradient (``argmax``,
    ``any``); used under ``vmap``, which shifts ``dims`` past the batch dim."""

    def __init__(self, fn: Callable[..., Any], dims: tuple[int, ...], keepdim: bool) -> None:
        self.fn, self.dims, self.keepdim = fn, dims, keepdim

    def forward(self, x: Any) -> Any:
        return self.fn(self.backend, x, self.dims, self.keepdim)


def batched(*xs: Any) -> bool:
    """Whether any of ``xs`` is a tensor batched under ``vmap``."""
    return builtins.any(isinstance(x, Tensor) and x._level for x in xs)


def raw_op(fn: Callable[..., Any], *inputs: Any) -> Tensor:
    """``RawOp`` on ``inputs``, with no gradient."""
    from ..autograd.grad_mode import no_grad

    with no_grad():
        return RawOp.apply(*inputs, fn=fn)  # type: ignore[no-any-return]


def raw_reduce(fn: Callable[..., Any], x: Tensor, dims: tuple[int, ...], keepdim: bool) -> Tensor:
    """``RawReduce`` of ``x`` over ``dims``, with no gradient."""
    from ..autograd.grad_mode import no_grad

    with no_grad():
        return RawReduce.apply(x, fn=fn, dims=dims, keepdim=keepdim)  # type: ignore[no-any-return]
