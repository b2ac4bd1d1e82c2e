"""Comparisons, logic and selection. All but ``where``/``masked_fill`` record no gradient."""

from __future__ import annotations

import builtins
import warnings
from typing import Any, Callable

from .. import dtypes
from ..ops import elementwise as E
from ..ops.util import reduce_grad
from ..tensor import Tensor
from .arith import (
    _is_scalar, _nograd_binary, _nograd_unary, _promote, _scalar_to_tensor, _tensor_arg,
    _type_name, as_tensor_like, batched, laid_out, operands, raw_op,
)
from .checks import checked_scalar, expect_tensor, invalid_arguments, scalar_arg
from .inplace_ops import inplace
from .view_writes import overlaps, warn_expanded
from .shape import _broadcast_shapes


# ---- comparisons and logic (no gradient) -----------------------------------------------------

def _comparison(name: str, backend_name: str, doc: str) -> Callable[..., Tensor]:
    """The ``torch`` function ``name``: the backend's ``backend_name`` on the promoted operands
    (broadcast; ``other`` may be a Python scalar), recording no gradient. PyTorch's argument
    errors: the "invalid combination" one of a comparison, "must be Tensor" for the logical
    ops (``_method``: the call was ``input.name(other)``)."""
    logical = name.startswith("logical")
    ordered = name in ("lt", "le", "gt", "ge")  # NOTE: complex numbers have no order

    def fn(input: Any, other: Any, *, _method: bool = False) -> Tensor:  # noqa: A002
        if type(input) is not Tensor or type(other) is not Tensor:
            if logical:
                _tensor_arg(name, input, other, _method)
            elif not isinstance(input, Tensor):
                raise invalid_arguments(name, (input, other), {})
            else:
                operands(name, input, other, combos=True, method=_method)
        if ordered and (input.dtype.is_complex or isinstance(other, complex) or
                        isinstance(other, Tensor) and other.dtype.is_complex):
            d = input.dtype if input.dtype.is_complex else dtypes.get_default_complex_dtype()
            raise NotImplementedError(f"\"{name}_{input._device.type}\" not implemented for "
                                      f"'{dtypes.scalar_type_name(d)}'")
        return _nograd_binary(backend_name, input, other)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


eq = _comparison("eq", "equal", "``input == other`` element-wise, as a bool tensor.")
ne = _comparison("ne", "not_equal", "``input != other`` element-wise, as a bool tensor.")
lt = _comparison("lt", "less", "``input < other`` element-wise, as a bool tensor.")
le = _comparison("le", "less_equal", "``input <= other`` element-wise, as a bool tensor.")
gt = _comparison("gt", "greater", "``input > other`` element-wise, as a bool tensor.")
ge = _comparison("ge", "greater_equal", "``input >= other`` element-wise, as a bool tensor.")
logical_and = _comparison("logical_and", "logical_and", "Element-wise AND (nonzero is true).")
logical_or = _comparison("logical_or", "logical_or", "Element-wise OR (nonzero is true).")
logical_xor = _comparison("logical_xor", "logical_xor", "Element-wise XOR (nonzero is true).")
logical_not = _nograd_unary("logical_not", "Element-wise logical NOT (nonzero is true).")
isnan = _nograd_unary("isnan", "True where ``input`` is nan.")
isinf = _nograd_unary("isinf", "True where ``input`` is +inf or -inf.")
isfinite = _nograd_unary("isfinite", "True where ``input`` is neither inf nor nan.")


def bitwise_not(input: Tensor) -> Tensor:  # noqa: A002
    """Bitwise NOT of an integer tensor (logical NOT of a bool one), recording no gradient.

    Args:
        input: integer or bool tensor (PyTorch's NotImplementedError for a float one).

    Returns:
        Tensor of ``input``'s shape and dtype.

    Example:
        >>> bitwise_not(tensor([0, 5]))
        tensor([-1, -6])
    """
    expect_tensor("bitwise_not", "input", 1, input)
    if input.dtype.is_floating_point:
        raise NotImplementedError(f"\"bitwise_not_{input._device.type}\" not implemented for "
                                  f"'{_type_name(input.dtype)}'")
    if input._level:
        return raw_op(lambda be, x: ~x, input)
    x = input._data
    out = ~x
    return Tensor._make(laid_out(input.backend, out, x) if out.ndim > 1 else out, input._device)


def bitwise_not_(input: Tensor) -> Tensor:  # noqa: A002
    """``bitwise_not`` in place."""
    return inplace(input, bitwise_not)


def invert(input: Tensor) -> Tensor:  # noqa: A002
    """``~input``: ``bitwise_not``, with Python's TypeError for a float tensor (as PyTorch)."""
    if input.dtype.is_floating_point:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(input)


def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """True when both have the same shape and elements."""
    if batched(input, other):  # NOTE: a Python bool per sample: data-dependent control flow
        return input.shape == other.shape and builtins.bool(eq(input, other).all())
    return input.shape == other.shape and builtins.bool((input._data == other._data).all())


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
             equal_nan: bool = False) -> bool:
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
            equal_nan: bool = False, *, _method: bool = False) -> Tensor:
    if not _method:
        expect_tensor("isclose", "input", 1, input)
    expect_tensor("isclose", "other", 1 if _method else 2, other)

    def close(b: Any, x: Any, y: Any) -> Any:
        with b.errstate(invalid="ignore"):
            out = b.logical_or(b.less_equal(b.abs(x - y), atol + rtol * b.abs(y)), b.equal(x, y))
            if equal_nan:
                out = b.logical_or(out, b.logical_and(b.isnan(x), b.isnan(y)))
        return out

    if batched(input, other):
        return raw_op(close, input, other)
    return Tensor._make(close(input.backend, input._data, other._data), input._device)


def _arg_names(*args: Any) -> str:
    """The argument types as PyTorch's parser lists them: ``(Tensor, list, float)``."""
    return ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)


def _is_value(x: Any) -> bool:
    return isinstance(x, Tensor) or _is_scalar(x)


def where(condition: Tensor, input: Any = None, other: Any = None, *,  # noqa: A002
          _method: bool = False) -> Any:
    """``input`` where ``condition`` holds, else ``other``; all three broadcast together.

    ``condition`` must be a bool tensor (uint8 still works, with PyTorch's deprecation
    warning); ``input``/``other`` are tensors or Python scalars, promoted to their result type.
    ``where(condition)`` is ``nonzero(condition, as_tuple=True)``.

    Args:
        condition: bool tensor.
        input: values where ``condition`` is true.
        other: values where it is false.

    Returns:
        Tensor of the broadcast shape (WhereBackward0).

    Example:
        >>> where(tensor([True, False]), tensor([1., 2.]), 0.)
        tensor([1., 0.])
    """
    args: tuple[Any, ...] = (condition, input, other)
    if input is None and other is None:
        args = (condition,)
    if not isinstance(condition, Tensor) or not builtins.all(_is_value(a) for a in args[1:]):
        while len(args) > 1 and args[-1] is None:
            args = args[:-1]
        if _method:  # NOTE: input.where(condition, other) lists no input
            args = (condition, other)
        raise TypeError(f"where() received an invalid combination of arguments - got "
                        f"({_arg_names(*args)}), but expected one of:")
    if len(args) == 1:
        return nonzero(condition, as_tuple=True)
    _check_condition(condition)
    _broadcast_shapes(*(getattr(a, "shape", ()) for a in args))
    scalars = [v for v in (input, other) if not isinstance(v, Tensor)]
    for v in scalars:
        scalar_arg(v)
    if not isinstance(input, Tensor):
        if isinstance(other, Tensor):
            input, other = _scalar_to_tensor(input, other)
        else:
            input = as_tensor_like(input, condition)
    input, other = _promote(input, other)
    for v in scalars:  # NOTE: PyTorch rounds a scalar into float16 unchecked, as in setitem
        checked_scalar(v, input.dtype, check_half=False)
    if condition._level:
        cond_t = condition if condition.dtype is dtypes.bool else condition.bool()
        return WhereT.apply(input, other, cond_t)
    cond = condition._data
    if cond.dtype.kind != "b":
        cond = cond.astype("bool")
    return E.Where.apply(input, other, cond=cond)


def _check_condition(condition: Tensor) -> None:
    """PyTorch's refusal of a condition that is not bool (uint8 passes with a warning)."""
    if condition.dtype is dtypes.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and "
                      "will be removed in a future version of PyTorch. Use a boolean condition "
                      "instead.", UserWarning, stacklevel=3)
    elif condition.dtype is not dtypes.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {dtypes.scalar_type_name(condition.dtype)}")


class WhereT(E.Where):
    """``where`` with the condition as a (third, gradient-free) input: what ``vmap`` needs
    when the condition is batched."""

    def __init__(self) -> None:
        pass

    def forward(self, x: Any, y: Any, cond: Any) -> Any:  # type: ignore[override]
        self.cond = cond
        return super().forward(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any, None]:  # type: ignore[override]
        return super().backward(grad) + (None,)


def _check_masked_fill(input: Tensor, mask: Any, value: Any, fn: str,  # noqa: A002
                       method: bool) -> None:
    """PyTorch's refusals of ``fn`` (``masked_fill``, ``masked_fill_``) arguments that are not a
    tensor and a number; a ``method`` call lists no ``input``."""
    if not isinstance(mask, Tensor) or not _is_value(value):
        args = (mask, value) if method else (input, mask, value)
        raise TypeError(f"{fn}() received an invalid combination of arguments - got "
                        f"({_arg_names(*args)}), but expected one of:")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")


def _check_mask(mask: Tensor) -> None:
    if mask.dtype is not dtypes.bool:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{dtypes.c_type_name(mask.dtype)}")


def masked_fill(input: Tensor, mask: Tensor, value: Any, *,  # noqa: A002
                _method: bool = False) -> Tensor:
    """``input`` with ``value`` where ``mask`` is true; ``mask`` and ``input`` broadcast
    together (the result has their broadcast shape).

    Args:
        input: tensor of any shape and dtype.
        mask: bool tensor that broadcasts with ``input``.
        value: a Python number or a 0-d tensor, cast to ``input``'s dtype.

    Returns:
        Tensor of ``input``'s dtype.

    Example:
        >>> masked_fill(tensor([1., 2.]), tensor([True, False]), 0.)
        tensor([0., 2.])
    """
    _check_masked_fill(input, mask, value, "masked_fill", _method)
    shape = _broadcast_shapes(mask.shape, input.shape)
    _check_mask(mask)
    return _masked_fill(input, mask, value, shape)


def masked_fill_(input: Tensor, mask: Tensor, value: Any) -> Tensor:  # noqa: A002
    """``masked_fill`` in place: ``mask`` must broadcast to ``input``'s shape."""
    _check_masked_fill(input, mask, value, "masked_fill_", True)
    _check_mask(mask)
    shape = _broadcast_shapes(input.shape, mask.shape)
    if shape != tuple(input.shape):
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    through = None
    if not input._level and overlaps(input._data):
        # NOTE: PyTorch warns, then writes the masked elements only
        warn_expanded("masked_fill_")
        through = True if mask._device is not input._device or mask._level else \
            input.backend.broadcast_to(mask._data, shape)
    return inplace(input, _masked_fill, mask, value, shape, _through=through)


def _masked_fill(input: Tensor, mask: Tensor, value: Any,  # noqa: A002
                 shape: tuple[int, ...]) -> Tensor:
    if mask._device is not input._device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {input._device} and {mask._device}!")
    is_tensor = isinstance(value, Tensor)
    if not is_tensor:
        value = checked_scalar(value, input.dtype)
    elif value.dtype is not input.dtype and not value._level:
        checked_scalar(value.item(), input.dtype)  # NOTE: PyTorch fills with value.item()
    value = as_tensor_like(value, input).to(input.dtype)
    if mask._level:  # NOTE: a batched mask is a batched condition (vmap): where's own node
        out = where(mask, value, input)
        return out if tuple(out.shape) == shape else out.expand(shape)
    if is_tensor:
        return MaskedFill.apply(input, value, cond=mask._data)  # type: ignore[no-any-return]
    return MaskedFillScalar.apply(input, cond=mask._data,  # type: ignore[no-any-return]
                                  value=value._data)


def _contiguous(backend: Any, out: Any) -> Any:
    """``out`` C-contiguous: PyTorch's masked_fill fills a C-contiguous clone (NumPy's where
    keeps the input's layout). NOTE: ascontiguousarray would make a 0-d array 1-d."""
    return backend.ascontiguousarray(out) if out.ndim > 1 else out


class MaskedFill(E._Binary):
    """``x`` with the 0-d tensor ``v`` where ``cond`` holds, all three broadcast
    (MaskedFillBackward1: the gradient of ``v`` sums ``grad`` where ``cond`` holds)."""

    node_name = "MaskedFillBackward1"
    elementwise = False  # NOTE: C-contiguous (see _contiguous)

    def __init__(self, cond: Any) -> None:
        self.cond = cond

    def compute(self, x: Any, v: Any) -> Any:
        return _contiguous(self.backend, self.backend.where(self.cond, v, x))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        cond = self.wrap(self.cond)
        gx = self.reduce(grad.where(~cond, 0.0), 0) if self.needs_input_grad[0] else None
        gv = self.reduce(grad.where(cond, 0.0), 1) if self.needs_input_grad[1] else None
        return gx, gv


class MaskedFillScalar(E._Unary):
    """``x`` with the constant ``value`` (a 0-d array of ``x``'s dtype) where ``cond`` holds,
    broadcast (MaskedFillBackward0: ``x`` is the only input)."""

    node_name = "MaskedFillBackward0"
    elementwise = False  # NOTE: C-contiguous (see _contiguous)

    def __init__(self, cond: Any, value: Any) -> None:
        self.cond = cond
        self.value = value

    def forward(self, x: Any) -> Any:
        self.shape = x.shape
        return _contiguous(self.backend, self.backend.where(self.cond, self.value, x))

    def grad_of(self, grad: Any) -> Any:
        return reduce_grad(grad.where(~self.wrap(self.cond), 0.0), self.shape)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:  # noqa: A002
    if input._level:
        raise RuntimeError(
            "vmap: We do not support batching operators that can output dynamic shape. "
            "Attempted to vmap over aten::nonzero. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature.")
    b = input.backend
    if input.ndim == 0:  # NOTE: one match of zero coordinates, as PyTorch (NumPy refuses 0-d)
        hit = int(bool(input.item()))
        if as_tuple:
            return (Tensor._make(b.zeros((hit,), "int64"), input._device),)
        return Tensor._make(b.zeros((hit, 0), "int64"), input._device)
    idx = b.nonzero(input._data)
    if as_tuple:
        return tuple(Tensor._make(i.astype("int64"), input._device) for i in idx)
    return Tensor._make(input.backend.stack(idx, axis=1).astype("int64") if idx else
                        input.backend.zeros((0, 0), "int64"), input._device)
