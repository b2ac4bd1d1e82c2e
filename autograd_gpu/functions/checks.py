"""PyTorch's argument checks that many entry points share: the type of a tensor argument, a
Python number converted to a dtype, and the dtype messages of the matrix products."""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..dtypes import c_type_name, scalar_type_name
from ..tensor import Tensor

_INT64_MIN, _UINT64_MAX = -(1 << 63), (1 << 64) - 1
# NOTE: the names PyTorch's Scalar conversions print (C types), and the float types' largest
# finite values (float64 holds every Python float).
_SCALAR_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                   "int64": "int64_t", "float16": "c10::Half", "float32": "float",
                   "float64": "double"}
_FLOAT_MAX = {"float16": 65504.0, "float32": 3.4028234663852886e38}


def scalar_arg(value: Any) -> None:
    """PyTorch's ``OverflowError`` for a Python int that no C++ Scalar holds (outside
    ``[-2**63, 2**64)``), raised wherever a number argument is taken (``x + 2**64``)."""
    if type(value) is int and not _INT64_MIN <= value <= _UINT64_MAX:
        raise OverflowError("int too big to convert" if value > 0 else
                            "can't convert negative int to unsigned")


def checked_scalar(value: Any, dtype: dtypes.dtype, *, check_half: bool = True,
                   type_name: str | None = None) -> Any:
    """The Python number ``value`` converted to ``dtype`` as PyTorch converts a Scalar argument
    (``fill_``, ``full``, ``masked_fill``, scalar ``setitem``, ``clamp`` bounds, ``alpha``, ...),
    or its ``RuntimeError`` when ``dtype`` cannot hold it, e.g. ``value cannot be converted to
    type int8_t without overflow``.

    The rules are C++'s ``checked_convert``: a float outside the target's finite range
    overflows (inf and nan fit the float types, no integer type); an integer type takes a
    float's integer part; an unsigned type takes a negative integer down to ``-max``, wrapping
    around (uint8 gets 255 for -1); bool takes anything. ``check_half=False`` skips the float16
    check (PyTorch's one-element fills, ``setitem`` and ``where`` round silently, to inf past
    65504). ``type_name`` replaces the C type name in the message (``torch.tensor`` says
    ``int8``).

    Returns:
        ``value`` as a bool, an int (for the integer types) or unchanged (float types).

    Example:
        >>> checked_scalar(300, int8)
        Traceback (most recent call last):
        RuntimeError: value cannot be converted to type int8_t without overflow
    """
    if not isinstance(value, (int, float)) and hasattr(value, "item"):
        value = value.item()  # a NumPy scalar or a one-element tensor
    scalar_arg(value)
    if dtype.is_complex:
        return complex(value)
    if isinstance(value, complex):
        # NOTE: a complex value fits a real dtype only with a zero imaginary part
        if value.imag != 0:
            raise RuntimeError("value cannot be converted to type "
                               f"{type_name or _SCALAR_C_NAMES.get(dtype.name, dtype.name)} "
                               "without overflow")
        value = value.real if dtype.category >= 2 else int(value.real)
    if dtype is dtypes.bool:
        return bool(value)
    if isinstance(value, bool):
        return int(value) if not dtype.is_floating_point else value
    name = dtype.name
    if dtype.is_floating_point:
        limit = _FLOAT_MAX.get(name)
        if limit is None or -limit <= value <= limit:
            return value
        if isinstance(value, float) and (math.isinf(value) or value != value):
            return value
        if not check_half and name == "float16":
            # NOTE: rounded here (what the cast would give), so that NumPy does not warn
            return math.copysign(65504.0 if abs(value) < 65520 else math.inf, value)
    else:
        lo, hi = dtypes.int_bounds(dtype)
        if isinstance(value, float):
            # NOTE: compared as doubles, as in C++ (float(2**63 - 1) is 2**63: it passes, and
            # the conversion wraps to -2**63, as PyTorch's does on x86).
            if math.isfinite(value) and float(lo) <= value <= float(hi):
                v = int(value)
                return v if v <= hi else v - (hi - lo + 1)
        elif lo <= value <= hi:
            return value
        elif lo == 0 and -hi <= value < 0:
            return value & hi
    raise RuntimeError(f"value cannot be converted to type {type_name or _SCALAR_C_NAMES[name]} "
                       "without overflow")


def expect_tensor(fn: str, name: str, position: int, value: Any, optional: bool = False) -> None:
    """PyTorch's ``TypeError`` when argument ``name`` of ``fn`` is not a tensor (None passes when
    ``optional``), e.g. ``linear(): argument 'input' (position 1) must be Tensor, not int``.

    Example:
        >>> expect_tensor("relu", "input", 1, 3)
        Traceback (most recent call last):
        TypeError: relu(): argument 'input' (position 1) must be Tensor, not int
    """
    if isinstance(value, Tensor) or (optional and value is None):
        return
    raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                    f"{type(value).__name__}")


def invalid_arguments(fn: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError:
    """PyTorch's ``TypeError`` for a call no overload of ``fn`` accepts (its first line):
    ``conv2d() received an invalid combination of arguments - got (int, Tensor), but expected
    one of:``. ``args`` are the positional arguments as given (a method's leave out ``self``),
    ``kwargs`` the keyword ones that were passed.

    NOTE: PyTorch lists the keywords last in reverse order, each followed by ", " when there is
    no positional argument: ``t.clamp(min='a', max=2)`` gives ``(max=int, min=str, )``."""
    got = [type(a).__name__ for a in args]
    named = [f"{k}={type(v).__name__}" for k, v in reversed(kwargs.items())]
    text = ", ".join(got + named) if got else "".join(n + ", " for n in named)
    return TypeError(f"{fn}() received an invalid combination of arguments - got ({text}), "
                     "but expected one of:")


def arg_position(position: int, method: bool) -> int:
    """The position PyTorch's argument parser reports for argument ``position`` of a function
    (``input`` is 1): a method call (``_method=True``, ``t.mm(2)``) does not count ``self``."""
    return position - 1 if method else position


def matmul_dtype_error(op: str, a: Tensor, b: Tensor) -> RuntimeError | None:
    """PyTorch's error for operands ``a`` and ``b`` of different dtypes in ``op`` (``mm``,
    ``mv``, ``dot``, ``bmm``), or None when the dtypes agree."""
    if a._data.dtype == b._data.dtype:
        return None
    da, db = a.dtype, b.dtype
    if op == "mm":
        return RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                            f"{c_type_name(da)} != {c_type_name(db)}")
    if op == "mv":  # NOTE: PyTorch's mv is addmv into a result of the vector's dtype
        return RuntimeError("addmv input tensors must have the same dtype, but got "
                            f"{scalar_type_name(db)}, {scalar_type_name(da)}, and "
                            f"{scalar_type_name(db)}")
    if op == "dot":
        return RuntimeError("dot : expected both vectors to have same dtype, but found "
                            f"{scalar_type_name(da)} and {scalar_type_name(db)}")
    return RuntimeError(f"expected scalar type {scalar_type_name(da)} but found "
                        f"{scalar_type_name(db)}")


def addmm_dtype_error(c: Tensor, a: Tensor, b: Tensor) -> RuntimeError | None:
    """PyTorch's error for ``addmm(c, a, b)`` with mixed dtypes (``c`` against ``b`` first),
    or None."""
    for first, name in ((c, "self"), (a, "mat1")):
        if first._data.dtype != b._data.dtype:
            return RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                                f"{scalar_type_name(first.dtype)} and "
                                f"{scalar_type_name(b.dtype)}")
    return None
