"""Integer and bit-level functions: ``gcd``, ``lcm``, ``bitwise_left_shift``,
``bitwise_right_shift`` (and ``<<``/``>>`` on any operand order), ``frexp``, ``unravel_index``.

Shifts follow PyTorch's semantics where C leaves them undefined: a shift by the type's width or
more, or by a negative amount, gives 0 to the left and the sign (0 or -1) to the right.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..autograd.node import Node
from ..tensor import Tensor
from .arith import _is_scalar, _promote, as_tensor_like, operands
from .checks import expect_tensor
from .inplace_ops import inplace
from .out import with_out

__all__ = ["gcd", "gcd_", "lcm", "lcm_", "bitwise_left_shift", "bitwise_right_shift", "frexp",
           "unravel_index"]


def _int_pair(fn: str, kernel: str, input: Any, other: Any, method: bool) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``input`` and ``other`` promoted to their integer result dtype, or PyTorch's errors."""
    if type(input) is not Tensor or type(other) is not Tensor:
        input, other = operands(fn, input, other, method=method)
    if not isinstance(input, Tensor):
        input = as_tensor_like(input, other)
    a, b = _promote(input, other)
    b = as_tensor_like(b, a) if _is_scalar(b) else b
    if a.dtype.is_floating_point or b.dtype.is_floating_point:
        name = a.dtype if a.dtype.is_floating_point else b.dtype
        raise NotImplementedError(f"\"{kernel}_{a.device.type}\" not implemented for "
                                  f"'{_type_name(name)}'")
    return a, b


def _type_name(d: dtypes.dtype) -> str:
    from .arith import _type_name as name

    return name(d)


def _binary_int(fn: str, kernel: str, compute: Callable[[Any, Any, Any, dtypes.dtype], Any],
                bool_ok: bool) -> Callable[..., Tensor]:
    def run(input: Any, other: Any, *, _method: bool = False) -> Tensor:  # noqa: A002
        if fn in ("gcd", "lcm"):
            if not _method:
                expect_tensor(fn, "input", 1, input)
            expect_tensor(fn, "other", 1 if _method else 2, other)
        a, b = _int_pair(fn, kernel, input, other, _method)
        if not bool_ok and a.dtype is dtypes.bool:
            raise NotImplementedError(f"\"{kernel}_{a.device.type}\" not implemented for 'Bool'")
        if a.dtype is dtypes.bool:  # NOTE: shifts of bools compute in int64, as PyTorch's
            a, b = a.to(dtypes.int64), b.to(dtypes.int64)
        be = a.backend
        try:
            x, y = be.xp.broadcast_arrays(a._data, b._data)
        except ValueError:
            from .arith import _broadcast_error

            raise _broadcast_error(a, b) from None
        out = compute(be, x, y, a.dtype)
        return Tensor._make(be.ascontiguousarray(out).astype(a.dtype.name, copy=False), a._device)

    run.__name__ = run.__qualname__ = fn
    return run


def _gcd(be: Any, x: Any, y: Any, dt: dtypes.dtype) -> Any:
    return be.xp.gcd(x, y)


def _lcm(be: Any, x: Any, y: Any, dt: dtypes.dtype) -> Any:
    return be.xp.abs(be.xp.lcm(x, y))


def _shift(left: bool) -> Callable[[Any, Any, Any, dtypes.dtype], Any]:
    def compute(be: Any, x: Any, y: Any, dt: dtypes.dtype) -> Any:
        xp = be.xp
        bits = 8 * x.itemsize
        ok = (y >= 0) & (y < bits)
        safe = xp.where(ok, y, 0).astype(x.dtype)
        if left:
            return xp.where(ok, xp.left_shift(x, safe), 0)
        past = xp.where(x < 0, -1, 0) if dt.name != "uint8" else 0  # NOTE: the sign
        return xp.where(ok, xp.right_shift(x, safe), past)

    return compute


# NOTE: ``out=`` as PyTorch's TensorIterator ops take it (any dtype the result casts to).
gcd = with_out(_binary_int("gcd", "gcd", _gcd, False), "gcd")
lcm = with_out(_binary_int("lcm", "lcm", _lcm, False), "lcm")
bitwise_left_shift = with_out(_binary_int("bitwise_left_shift", "lshift", _shift(True), True),
                              "bitwise_left_shift")
bitwise_right_shift = with_out(_binary_int("bitwise_right_shift", "rshift", _shift(False), True),
                               "bitwise_right_shift")


def gcd_(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    return inplace(input, gcd, other)


def lcm_(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    return inplace(input, lcm, other)


class _Frexp(Node):
    """``(mantissa, exponent)`` with ``x = mantissa * 2 ** exponent``; the mantissa's gradient
    is ``grad / 2 ** exponent`` (FrexpBackward0)."""

    node_name = "FrexpBackward0"

    def forward(self, x: Any) -> Any:
        m, e = self.backend.frexp(x)
        self.exponent = e
        return m, e

    def backward(self, grad: Any, grad_e: Any = None) -> tuple[Any]:
        scale = self.backend.xp.ldexp(self.backend.xp.ones_like(self.exponent, dtype="float64"),
                                      -self.exponent)
        return (grad * self.wrap(scale.astype(grad.dtype.name)),)


def _frexp(input: Tensor) -> Any:  # noqa: A002
    """The mantissa in ``[0.5, 1)`` (signed) and the int32 exponent of each element; ``out=``
    takes a mantissa of the input's dtype and an int32 exponent."""
    expect_tensor("frexp", "input", 1, input)
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    from ..return_types import frexp as result

    m, e = _Frexp.apply(input)
    return result(m, e)


def _frexp_out(result: Any, out: Any, args: tuple[Any, ...]) -> None:
    m, e = tuple(out)[:2] if isinstance(out, (tuple, list)) and len(out) == 2 else (None, None)
    if isinstance(m, Tensor) and m.dtype is not result[0].dtype:
        raise RuntimeError(f"torch.frexp() expects mantissa to have dtype "
                           f"{dtypes.c_type_name(result[0].dtype)} but got "
                           f"{dtypes.c_type_name(m.dtype)}")
    if isinstance(e, Tensor) and e.dtype is not dtypes.int32:
        raise RuntimeError("torch.frexp() expects exponent to have int dtype but got "
                           f"{dtypes.c_type_name(e.dtype)}")


frexp = with_out(_frexp, "frexp", check=_frexp_out)


def unravel_index(indices: Tensor, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates in ``shape`` of flat ``indices`` (int64 tensors, one per dim; indices out
    of range wrap around, as PyTorch's)."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be a Tensor, but got {type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype is dtypes.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"'shape' cannot have negative values, but got {dims}")
    if not dims:
        return ()
    n = 1
    for d in dims:
        n *= d
    flat = indices.to(dtypes.int64) % n
    coords = []
    for d in reversed(dims):
        coords.append(flat % d)
        flat = flat // d
    return tuple(reversed(coords))


def _method(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def method(t: Tensor, other: Any) -> Tensor:
        return fn(t, other, _method=True)

    method.__name__ = method.__qualname__ = fn.__name__
    return method


def _operator(fn: Callable[[Tensor, Any], Tensor]) -> Callable[[Tensor, Any], Any]:
    """A binary operator: NotImplemented for operands no tensor op takes, so that Python
    raises its own ``unsupported operand type(s)``, as for PyTorch."""

    def op(t: Tensor, other: Any) -> Any:
        return fn(t, other) if isinstance(other, Tensor) or _is_scalar(other) else NotImplemented

    return op


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "gcd": _method(gcd), "lcm": _method(lcm), "gcd_": gcd_, "lcm_": lcm_,
    "bitwise_left_shift": _method(bitwise_left_shift),
    "bitwise_right_shift": _method(bitwise_right_shift),
    "bitwise_left_shift_": lambda t, other: inplace(t, bitwise_left_shift, other),
    "bitwise_right_shift_": lambda t, other: inplace(t, bitwise_right_shift, other),
    "frexp": frexp,
    "__lshift__": _operator(lambda t, o: bitwise_left_shift(t, o)),
    "__rshift__": _operator(lambda t, o: bitwise_right_shift(t, o)),
    "__rlshift__": _operator(lambda t, o: bitwise_left_shift(o, t)),
    "__rrshift__": _operator(lambda t, o: bitwise_right_shift(o, t)),
    "__ilshift__": _operator(lambda t, o: inplace(t, bitwise_left_shift, o)),
    "__irshift__": _operator(lambda t, o: inplace(t, bitwise_right_shift, o)),
}
