"""Arithmetic: PyTorch's type promotion, Python scalars, then one elementwise op.

``_promote`` casts both operands to PyTorch's result dtype (NumPy would choose differently).
The families beside this module build on it: ``unary`` (math and activations, which promote
integer inputs to the default float dtype first) and ``rounding`` (``//``, ``%``, ``floor``);
their names also resolve here (``arith.clamp``).
"""

from __future__ import annotations

import builtins
import numbers
from typing import Any, Callable

from .. import dtypes
from ..autograd.node import Node
from ..ops import elementwise as E
from ..ops import rounding as R
from ..ops.util import c_order
from .. import tensor_methods as _methods
from ..tensor import Tensor
from .checks import arg_position, checked_scalar, invalid_arguments, scalar_arg


def _is_scalar(x: Any) -> bool:
    return isinstance(x, numbers.Number)


def as_tensor_like(x: Any, like: Tensor) -> Tensor:
    """``x`` as a tensor on ``like``'s device (Tensors pass through)."""
    if isinstance(x, Tensor):
        return x
    from ..creation import tensor

    return tensor(x, device=like._device)


def operands(fn: str, a: Any, b: Any, combos: bool = False, two_numbers: bool = True,
             method: bool = False, **kwargs: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` for the binary ``torch`` function ``fn``, with PyTorch's argument rules:
    a tensor and a tensor or real number pass; two numbers make ``a`` a 0-d CPU tensor (or,
    without ``two_numbers``, are refused); anything else raises PyTorch's TypeError for ``fn``:
    the "invalid combination" one where ``fn`` has several overloads (``combos``; ``kwargs``:
    the keyword arguments given), else the one naming the argument. ``method``: the call was
    ``a.fn(b)``, whose messages leave out ``a`` (``add(): argument 'other' (position 1)``)."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor) or _is_scalar(b):
            return a, b
    elif isinstance(b, Tensor):
        if _is_scalar(a):
            return a, b
    elif _is_scalar(a) and _is_scalar(b) and two_numbers:
        from ..creation import tensor  # late: creation imports the functions

        return tensor(a), b
    if combos or _is_scalar(a) and _is_scalar(b):
        raise invalid_arguments(fn, (b,) if method else (a, b), kwargs)
    name, position, bad = ("other", 2, b) if isinstance(a, Tensor) or _is_scalar(a) else \
        ("input", 1, a)
    raise TypeError(f"{fn}(): argument '{name}' (position {arg_position(position, method)}) "
                    f"must be Tensor, not {type(bad).__name__}")


def _type_name(d: dtypes.dtype) -> str:
    """PyTorch's scalar type name of ``d`` (``Float``, ``Long``, ...), used in its messages."""
    return dtypes.scalar_type_name(d)


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
    scalar_arg(b)
    cat = a.dtype.category
    if isinstance(b, complex):
        if cat == 3:
            return a, b
        return a.to(a.dtype.to_complex() if cat == 2 else dtypes.get_default_complex_dtype()), b
    if isinstance(b, bool) or cat >= 2:
        return a, b
    if isinstance(b, int):
        if cat == 0:
            return a.to(dtypes.int64), b
        return a, wrap_int(b, a.dtype)
    return a.to(dtypes.get_default_dtype()), b


def wrap_int(b: int, dtype: dtypes.dtype) -> int:
    """The Python int ``b`` as an operand of an integer tensor of ``dtype``.

    NOTE: PyTorch casts the scalar to the tensor's integer dtype unchecked, wrapping around
    (``uint8 + -3`` adds 253, ``int8 + 300`` adds 44); NumPy would raise OverflowError."""
    lo, hi = dtypes.int_bounds(dtype)
    return b if lo <= b <= hi else (b - lo) % (hi - lo + 1) + lo


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

    other, s = _promote(other, s)  # NOTE: an int wraps around into an integer dtype
    return tensor(s, dtype=other.dtype, device=other._device), other


def _binary(cls: Any, a: Any, b: Any, **params: Any) -> Tensor:
    if type(b) is not Tensor or type(a) is not Tensor or a._data.dtype != b._data.dtype:
        if not isinstance(a, Tensor):  # a scalar on the left
            a, b = _scalar_to_tensor(a, b)
        elif (cls is E.Mul or cls is E.Div) and a.dtype is dtypes.float16 and a.ndim \
                and type(b) is Tensor and not b.ndim and not b._requires_grad:
            # NOTE: PyTorch's CPU kernels take a 0-d second operand of float16 * and / by its
            # value as float32 (``x * tensor(1e-8)`` is not 0), as a Python number (opmath)
            b = b.item()
        a, b = _promote(a, b)
    try:
        return cls.apply(a, b, **params) if params else cls.apply(a, b)
    except ValueError as e:
        if "broadcast" in str(e):
            raise _broadcast_error(a, b) from None
        raise


def add(input: Any, other: Any, *, alpha: Any = 1,  # noqa: A002
        _method: bool = False) -> Tensor:
    """``input + alpha * other``, broadcasting; Python scalars allowed on either side."""
    if type(input) is not Tensor or type(other) is not Tensor:
        input, other = operands("add", input, other, method=_method)
    if type(alpha) is not int or alpha != 1:
        return _with_alpha(E.Add, input, other, alpha_arg("add", alpha))
    return _binary(E.Add, input, other)


def _with_alpha(cls: Any, a: Any, b: Any, alpha: Any) -> Tensor:
    """``cls`` (Add or Sub) with a scaled ``b``; PyTorch's checks of ``alpha`` against the
    result dtype."""
    if not isinstance(a, Tensor):
        a, b = _scalar_to_tensor(a, b)
    a, b = _promote(a, b)
    alpha = check_alpha(a.dtype, alpha, negate=cls is E.Sub)
    return _binary(cls, a, b, alpha=alpha)


def alpha_arg(fn: str, alpha: Any) -> Any:
    """``alpha`` as PyTorch's argument parser reads a Number (a 0-d tensor gives its value), or
    its ``TypeError`` for ``fn``."""
    if isinstance(alpha, numbers.Number):
        return alpha
    if isinstance(alpha, Tensor) and alpha.ndim == 0:
        return alpha.item()
    raise TypeError(f"{fn}(): argument 'alpha' must be Number, not {type(alpha).__name__}")


def check_alpha(dtype: dtypes.dtype, alpha: Any, negate: bool = False) -> Any:
    """PyTorch's checks of add's and sub's ``alpha`` against the dtype they compute in (also
    for ``add_``/``sub_``), then that it fits the dtype (``sub`` adds ``-alpha``: ``negate``).
    Returns ``alpha`` to compute with (an int wrapped into an integer dtype)."""
    scalar_arg(alpha)
    if isinstance(alpha, bool):
        if dtype is not dtypes.bool:
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif isinstance(alpha, complex) and not dtype.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    elif isinstance(alpha, float) and dtype.category < 2:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    elif _is_scalar(alpha) and not isinstance(alpha, complex):
        checked_scalar(-alpha if negate else alpha, dtype)
        if type(alpha) is int and dtype.category == 1:
            return wrap_int(alpha, dtype)  # NOTE: the same sum modulo 2**bits
    return alpha


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


def sub(input: Any, other: Any, *, alpha: Any = 1,  # noqa: A002
        _method: bool = False) -> Tensor:
    """``input - alpha * other``."""
    if type(input) is not Tensor or type(other) is not Tensor:
        input, other = operands("sub", input, other, method=_method)
    _check_sub(input, other)
    if type(alpha) is not int or alpha != 1:
        return _with_alpha(E.Sub, input, other, alpha_arg("sub", alpha))
    return _binary(E.Sub, input, other)


subtract = sub


def rsub(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``other - input`` (the reflected ``-``)."""
    if isinstance(other, Tensor):
        return sub(other, input)
    if not isinstance(input, Tensor) or not _is_scalar(other):
        raise invalid_arguments("rsub", (input, other), {})
    _check_sub(input, other)
    return _binary(E.Rsub, input, other)


def mul(input: Any, other: Any, *, _method: bool = False) -> Tensor:  # noqa: A002
    """``input * other``, broadcasting."""
    if type(input) is not Tensor or type(other) is not Tensor:
        input, other = operands("mul", input, other, method=_method)
    return _binary(E.Mul, input, other)


multiply = mul


def div(input: Any, other: Any, *, rounding_mode: str | None = None,  # noqa: A002
        _method: bool = False) -> Tensor:
    """``input / other``: true division, promoting integers to the default float dtype.

    With ``rounding_mode='trunc'`` (toward 0) or ``'floor'`` (toward -inf, as ``//``) the result
    keeps the promoted dtype (integers stay integers), integer division by zero raises PyTorch's
    ``RuntimeError: ZeroDivisionError``, and the gradient is 0 (DivBackward2).
    """
    if type(input) is not Tensor or type(other) is not Tensor:
        kw: dict[str, Any] = {} if rounding_mode is None else {"rounding_mode": rounding_mode}
        input, other = operands("div", input, other, combos=bool(kw), method=_method, **kw)
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                               f"but found '{rounding_mode}'")
        from .rounding import _rounding  # late: rounding builds on this module

        return _rounding(f"div_{rounding_mode}", R.DivRounding, input, other, mode=rounding_mode)
    if not isinstance(input, Tensor):
        input = as_tensor_like(input, other)
    if input.dtype.category < 2 and (
        not isinstance(other, Tensor) or other.dtype.category < 2
    ) and not isinstance(other, complex):
        input = input.to(dtypes.get_default_dtype())
    return _binary(E.Div, input, other)


divide = true_divide = div


def rdiv(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``other / input``: ``reciprocal(input) * other``, as PyTorch records it."""
    from .unary import reciprocal  # late: unary builds on this module

    if input.dtype.category < 2:
        input = input.to(dtypes.get_default_dtype())
    return mul(reciprocal(input), other)


def pow(input: Any, exponent: Any, *, _method: bool = False) -> Tensor:  # noqa: A001,A002
    """``input ** exponent``."""
    if type(input) is not Tensor or type(exponent) is not Tensor:
        input, exponent = operands("pow", input, exponent, combos=True, two_numbers=False,
                                   method=_method)
    if not isinstance(input, Tensor):
        return rpow(exponent, input)
    if isinstance(exponent, Tensor):
        if input.dtype is dtypes.bool and exponent.dtype is dtypes.bool:
            _no_bool_pow()
        return _binary(E.Pow, input, exponent, name="PowBackward1")
    if input.dtype.category < 2 and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if input.dtype.category == 1 and type(exponent) is int or input.dtype is dtypes.float16:
        # NOTE: PyTorch converts the exponent to these dtypes checked (to double otherwise)
        checked_scalar(exponent, input.dtype)
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
    scalar_arg(base)
    if isinstance(base, complex) and not input.dtype.is_complex:
        input = input.to(input.dtype.to_complex() if input.dtype.category == 2 else
                         dtypes.get_default_complex_dtype())
    if input.dtype.category < 2 and isinstance(base, float):
        input = input.to(dtypes.get_default_dtype())
    elif type(base) is int and input.dtype.category == 1:
        base = wrap_int(base, input.dtype)
    return _Rpow.apply(input, base=base)


class _Rpow(E._Unary):
    """``base ** x`` for a scalar ``base`` (PowBackward2)."""

    node_name = "PowBackward2"
    elementwise = False  # NOTE: PyTorch's pow(Scalar, Tensor) result is C-contiguous

    def __init__(self, base: Any) -> None:
        self.base = base

    def forward(self, x: Any) -> Any:
        out = self.backend.power(self.base, x)
        out = out.astype(x.dtype, copy=False) if hasattr(out, "astype") else self.backend.asarray(out, x.dtype)
        out = c_order(self.backend, out)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        if isinstance(self.base, complex) or out.dtype.is_complex:
            import cmath

            from ..ops.complex import conj

            return grad * conj(out * cmath.log(self.base))
        if self.base == 0:
            # NOTE: 0 ** x has gradient 0 for x >= 0 and -inf for x < 0 (where out is inf), as
            # in PyTorch; a constant factor avoids 0 * -inf.
            return grad * self.wrap(self.backend.where(out._data == float("inf"), -float("inf"), 0.0)
                                    .astype(out._data.dtype))
        return grad * out * E._log_scalar(self.base)


def _bitwise(name: str, doc: str) -> Callable[..., Tensor]:
    """The ``torch`` function ``name`` (``bitwise_and``, ...): integers and bools only, in the
    promoted dtype (``&`` on int64 tensors is bitwise, not logical)."""

    def fn(input: Tensor, other: Any, *, _method: bool = False) -> Tensor:  # noqa: A002
        if type(input) is not Tensor or type(other) is not Tensor:
            input, other = operands(name, input, other, combos=True, two_numbers=False,
                                    method=_method)
        a, b = _promote(input, other) if isinstance(input, Tensor) else _scalar_to_tensor(
            input, other)
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


def _bitwise_inplace(fn: Callable[..., Tensor]) -> Callable[[Tensor, Any], Tensor]:
    def fn_(input: Tensor, other: Any) -> Tensor:  # noqa: A002
        from .inplace_ops import inplace  # late: inplace_ops imports arith

        if not isinstance(other, Tensor) and not _is_scalar(other):
            raise invalid_arguments(fn.__name__ + "_", (other,), {})
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
    be = a.backend
    token = be.quiet_fp()  # NOTE: x == 1e10 casts 1e10 to float16 (inf) silently, as PyTorch
    try:
        out = getattr(be, name)(a._data, bd)
    except ValueError as e:
        raise _broadcast_error(a._data, bd) from e
    finally:
        be.restore_fp(token)
    return Tensor._make(laid_out(be, out, a._data, bd) if out.ndim > 1 else out, a._device)


def laid_out(be: Any, out: Any, *inputs: Any) -> Any:
    """``out``, an elementwise result over ``inputs`` (arrays or scalars) computed with no node,
    laid out as PyTorch's TensorIterator lays it out (``backend.iter_layout``, as
    ``Node.elementwise`` does for ops with a node); C-contiguous inputs need no look."""
    for a in inputs:
        if a.__class__ is out.__class__ and not a.flags.c_contiguous:
            return be.iter_layout(out, inputs)
    return out


def _nograd_unary(name: str, doc: str) -> Callable[[Tensor], Tensor]:
    """The ``torch`` function ``name``: the backend's ``name`` on the data, recording no
    gradient."""

    def fn(input: Tensor) -> Tensor:  # noqa: A002
        if input._level:
            return raw_op(lambda be, x: getattr(be, name)(x), input)
        be, x = input.backend, input._data
        out = getattr(be, name)(x)
        return Tensor._make(laid_out(be, out, x) if out.ndim > 1 else out, input._device)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _tensor_arg(name: str, input: Any, other: Any, method: bool) -> None:  # noqa: A002
    for arg, position, value in (("input", 1, input), ("other", 2, other)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position "
                            f"{arg_position(position, method)}) must be Tensor, not "
                            f"{type(value).__name__}")


def _no_complex_extremum(name: str, a: Tensor, b: Tensor) -> None:
    if a.dtype.is_complex or b.dtype.is_complex:
        raise RuntimeError(f"{name} not implemented for complex tensors.")


def maximum(input: Tensor, other: Tensor, *, _method: bool = False) -> Tensor:  # noqa: A002
    """Elementwise maximum; ties split the gradient in half."""
    _tensor_arg("maximum", input, other, _method)
    _no_complex_extremum("maximum", input, other)
    return _binary(E.Maximum, input, other)


def minimum(input: Tensor, other: Tensor, *, _method: bool = False) -> Tensor:  # noqa: A002
    """Elementwise minimum; ties split the gradient in half."""
    _tensor_arg("minimum", input, other, _method)
    _no_complex_extremum("minimum", input, other)
    return _binary(E.Minimum, input, other)


# ---- unary (the math functions are in ``unary``) ----------------------------------------------

def _float_input(x: Tensor) -> Tensor:
    return x if x.dtype.category >= 2 else x.to(dtypes.get_default_dtype())


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


def __getattr__(name: str) -> Any:
    """The functions that moved to the family modules, under their old names."""
    from . import rounding, unary  # NOTE: late: both build on this module

    for family in (unary, rounding):
        if name in family.__dict__:
            return family.__dict__[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_methods._T, _methods._binary, _methods._MUL, _methods._ADD = Tensor, _binary, E.Mul, E.Add
