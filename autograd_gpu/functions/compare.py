"""Comparisons, logic and selection. All but ``where``/``masked_fill`` record no gradient."""

from __future__ import annotations

import builtins
from typing import Any, Callable

from ..ops import elementwise as E
from ..tensor import Tensor
from .arith import (
    _broadcast_error, _is_scalar, _nograd_binary, _nograd_unary, _promote, _scalar_to_tensor,
    as_tensor_like, batched, raw_op,
)


# ---- comparisons and logic (no gradient) -----------------------------------------------------

def _comparison(name: str, backend_name: str, doc: str) -> Callable[[Any, Any], Tensor]:
    """The ``torch`` function ``name``: the backend's ``backend_name`` on the promoted operands
    (broadcast; a Python scalar may stand on either side), recording no gradient."""

    def fn(input: Any, other: Any) -> Tensor:  # noqa: A002
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
    if input.dtype.is_floating_point:
        raise TypeError("bitwise_not is only supported for integer and boolean tensors")
    if input._level:
        return raw_op(lambda be, x: ~x, input)
    return Tensor._make(~input._data, input._device)


def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """True when both have the same shape and elements."""
    if batched(input, other):  # NOTE: a Python bool per sample: data-dependent control flow
        return input.shape == other.shape and builtins.bool(eq(input, other).all())
    return input.shape == other.shape and builtins.bool((input._data == other._data).all())


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
             equal_nan: bool = False) -> bool:
    return builtins.bool(isclose(input, other, rtol, atol, equal_nan).all())


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8,  # noqa: A002
            equal_nan: bool = False) -> Tensor:
    other = as_tensor_like(other, input)

    def close(b: Any, x: Any, y: Any) -> Any:
        with b.errstate(invalid="ignore"):
            out = b.logical_or(b.less_equal(b.abs(x - y), atol + rtol * b.abs(y)), b.equal(x, y))
            if equal_nan:
                out = b.logical_or(out, b.logical_and(b.isnan(x), b.isnan(y)))
        return out

    if batched(input, other):
        return raw_op(close, input, other)
    return Tensor._make(close(input.backend, input._data, other._data), input._device)


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:  # noqa: A002
    """``input`` where ``condition`` holds, else ``other`` (both broadcast)."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if not isinstance(input, Tensor):
        if isinstance(other, Tensor) and _is_scalar(input):
            input, other = _scalar_to_tensor(input, other)
        elif not isinstance(other, Tensor):
            input = as_tensor_like(input, condition)
    if isinstance(condition, Tensor) and condition._level:
        input, other = _promote(input, other)
        cond_t = condition if condition.dtype.name == "bool" else condition.bool()
        return WhereT.apply(input, other, cond_t)
    cond = condition._data if isinstance(condition, Tensor) else condition
    if cond.dtype.name != "bool":
        cond = cond.astype("bool")
    input, other = _promote(input, other)
    try:
        return E.Where.apply(input, other, cond=cond)
    except ValueError as e:
        raise _broadcast_error(cond, input._data) from e


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


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:  # noqa: A002
    """``input`` with ``value`` where ``mask`` is true."""
    if isinstance(value, Tensor):
        value = value.to(input.dtype)
    out = where(mask, value if isinstance(value, Tensor) else as_tensor_like(value, input).to(input.dtype), input)
    return out if out.shape == input.shape else out.expand(input.shape)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:  # noqa: A002
    if input._level:
        raise RuntimeError(
            "vmap: We do not support batching operators that can output dynamic shape. "
            "Attempted to vmap over aten::nonzero. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature.")
    idx = input.backend.nonzero(input._data)
    if as_tuple:
        return tuple(Tensor._make(i.astype("int64"), input._device) for i in idx)
    return Tensor._make(input.backend.stack(idx, axis=1).astype("int64") if idx else
                        input.backend.zeros((0, 0), "int64"), input._device)
