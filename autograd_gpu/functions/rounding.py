"""Rounding divisions and ``floor``: ``floor_divide`` (``//``), ``remainder`` (``%``), their
in-place forms, and the ``_rounding`` helper that ``div(rounding_mode=...)`` shares. Integer
division by zero raises PyTorch's ``RuntimeError: ZeroDivisionError`` on every device."""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..ops import elementwise as E
from ..ops import rounding as R
from ..tensor import Tensor
from .arith import _binary, _promote, _scalar_to_tensor, operands
from .shape import _broadcast_shapes


def floor_divide(input: Any, other: Any, *, _method: bool = False) -> Tensor:  # noqa: A002
    """``input // other``, rounding toward -inf, in the promoted dtype.

    Integer division by zero raises PyTorch's ``RuntimeError: ZeroDivisionError`` on every
    device; float division by zero gives inf or nan. A float result records PyTorch's
    ``NotImplemented`` node: backward through it raises.

    Example:
        >>> floor_divide(tensor([7, -7]), 2)
        tensor([ 3, -4])
    """
    if type(input) is not Tensor or type(other) is not Tensor:
        input, other = operands("floor_divide", input, other, combos=True, method=_method)
    return _rounding("div_floor", R.FloorDivide, input, other)


def remainder(input: Any, other: Any, *, _method: bool = False) -> Tensor:  # noqa: A002
    """``input % other`` with the sign of ``other``, as Python's ``%``; a float zero keeps the
    sign of ``input`` (``-4.0 % 2`` is ``-0.0``), as in PyTorch.

    Integer division by zero raises PyTorch's ``RuntimeError: ZeroDivisionError``. The gradient is
    ``grad`` for ``input`` and ``-grad * floor(input / other)`` for a tensor ``other``
    (RemainderBackward0/1); a Python scalar ``input`` has no derivative, as in PyTorch.

    Example:
        >>> remainder(tensor([7, -7]), 3)
        tensor([1, 2])
    """
    if type(input) is not Tensor or type(other) is not Tensor:
        input, other = operands("remainder", input, other, combos=True, two_numbers=False,
                                method=_method)
    if not isinstance(input, Tensor):
        name = R.NOT_IMPLEMENTED
    else:
        name = "RemainderBackward1" if isinstance(other, Tensor) else "RemainderBackward0"
    return _rounding("remainder", R.Remainder, input, other, name=name)


def _rounding(kernel: str, cls: Any, a: Any, b: Any, **params: Any) -> Tensor:
    """A rounding division ``cls`` on the promoted operands; PyTorch has no kernel ``kernel``
    for two bools."""
    if not isinstance(a, Tensor):
        a, b = _scalar_to_tensor(a, b)
    a, b = _promote(a, b)
    if a.dtype is dtypes.bool or a.dtype.is_complex:
        raise NotImplementedError(f"\"{kernel}_{a._device.type}\" not implemented for "
                                  f"'{dtypes.scalar_type_name(a.dtype)}'")
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
    from .inplace_ops import inplace, method_operand  # late: inplace_ops imports arith
    from .view_writes import _can_cast, _cast_error, _shape_error

    method_operand(fn.__name__ + "_", t, other, combos=True, **kw)
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


def floor(input: Tensor) -> Tensor:  # noqa: A002
    """The largest integer-valued number <= ``x``; integers pass unchanged. The gradient is 0
    everywhere (FloorBackward0), as in PyTorch."""
    if input.dtype.is_complex:
        raise NotImplementedError("floor is not supported for complex inputs")
    if input.dtype is dtypes.bool:
        kernel = "floor_vml_cpu" if input._device.type == "cpu" else f"floor_{input._device.type}"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return _Floor.apply(input)


class _Floor(E._Unary):
    node_name = "FloorBackward0"

    def forward(self, x: Any) -> Any:
        return self.backend.floor(x) if x.dtype.kind == "f" else self.backend.copy(x)

    def grad_of(self, grad: Any) -> Any:
        return E.zeros_grad(grad)
