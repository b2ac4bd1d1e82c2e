"""Data types and PyTorch's type-promotion rules.

A ``dtype`` carries the NumPy-style name that both NumPy and CuPy accept (``'float32'``), so the
backends need no translation table. ``repr(float32)`` is ``torch.float32``: with
``import autograd_gpu as torch`` that is how user code spells it.
"""

from __future__ import annotations

import builtins
from typing import Any


class dtype:  # noqa: N801  (PyTorch's name)
    """A tensor element type: ``float32``, ``int64``, ``bool``, ..."""

    __slots__ = ("name", "itemsize", "is_floating_point", "is_signed", "category", "_rank")

    def __init__(self, name: str, itemsize: builtins.int, category: builtins.int,
                 rank: builtins.int, signed: builtins.bool = True) -> None:
        self.name = name  # NumPy's name, accepted by NumPy and CuPy alike
        self.itemsize = itemsize
        self.category = category  # 0 bool, 1 integer, 2 floating, 3 complex
        self.is_floating_point = category == 2
        self.is_signed = signed
        self._rank = rank

    @property
    def is_complex(self) -> builtins.bool:
        return self.category == 3

    def __repr__(self) -> str:
        return "torch." + _TORCH_NAME.get(self.name, self.name)

    def __reduce__(self) -> str:
        return _TORCH_NAME.get(self.name, self.name)

    def to_real(self) -> dtype:
        """The real dtype of a complex one's parts (``complex64`` -> ``float32``); else itself."""
        return _REAL_OF.get(self.name, self)

    def to_complex(self) -> dtype:
        """The complex dtype with parts of this floating dtype (``float64`` -> ``complex128``).

        NOTE: PyTorch's ``complex32`` (float16 parts) is not supported: float16 gives complex64.
        """
        return _COMPLEX_OF.get(self.name, self)


bool = dtype("bool", 1, 0, 0, signed=False)  # noqa: A001  (PyTorch's name)
uint8 = dtype("uint8", 1, 1, 1, signed=False)
int8 = dtype("int8", 1, 1, 2)
int16 = dtype("int16", 2, 1, 3)
int32 = dtype("int32", 4, 1, 4)
int64 = dtype("int64", 8, 1, 5)
float16 = dtype("float16", 2, 2, 6)
float32 = dtype("float32", 4, 2, 7)
float64 = dtype("float64", 8, 2, 8)
complex64 = dtype("complex64", 8, 3, 9)
complex128 = dtype("complex128", 16, 3, 10)

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

ALL = (bool, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128)
_REAL_OF = {"complex64": float32, "complex128": float64}
_COMPLEX_OF = {"float16": complex64, "float32": complex64, "float64": complex128}
_TORCH_NAME = {"bool": "bool"}
BY_NAME: dict[str, dtype] = {d.name: d for d in ALL}

_default_float = float32


def get_default_dtype() -> dtype:
    """The floating dtype factories use when none is given (``float32`` unless changed)."""
    return _default_float


def get_default_complex_dtype() -> dtype:
    """The complex dtype Python complex numbers take: ``complex128`` when the default dtype is
    ``float64``, else ``complex64``."""
    return complex128 if _default_float is float64 else complex64


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (``float32``, ``float64`` or ``float16``).

    It is what float factories (``tensor([1.5])``, ``zeros``, ``rand``) and Python floats in
    mixed arithmetic produce. Non-floating dtypes raise ``TypeError``, as in PyTorch.
    """
    global _default_float
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


# PyTorch's ScalarType names (used in its "not implemented for 'Long'" messages) and C type names
# (used in its bounds messages).
_SCALAR_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                 "int64": "Long", "float16": "Half", "float32": "Float", "float64": "Double",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
            "int32": "int", "int64": "long int", "float16": "c10::Half", "float32": "float",
            "float64": "double", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}


def scalar_type_name(d: dtype) -> str:
    """PyTorch's ScalarType name of ``d`` (``'Long'`` for int64), as its messages print it."""
    return _SCALAR_NAMES[d.name]


def c_type_name(d: dtype) -> str:
    """The C++ type name of ``d`` (``'signed char'`` for int8), as PyTorch's messages print it."""
    return _C_NAMES[d.name]


def int_bounds(d: dtype) -> tuple[builtins.int, builtins.int]:
    """The smallest and largest value of the integer (or bool) dtype ``d``."""
    if d is bool:
        return 0, 1
    bits = 8 * d.itemsize
    if not d.is_signed:
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def check_dtype(fn: str, d: Any) -> None:
    """Raise PyTorch's ``TypeError`` when a ``dtype=`` argument is not a dtype (or None)."""
    if d is not None and not isinstance(d, dtype):
        raise TypeError(f"{fn}(): argument 'dtype' must be torch.dtype, not {type(d).__name__}")


def from_name(name: str) -> dtype:
    """Our dtype for a backend array's dtype name; unsupported names raise ``TypeError``."""
    d = BY_NAME.get(name)
    if d is None:
        raise TypeError(
            f"can't convert an array of type {name}; the only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
            "uint8, and bool."
        )
    return d


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both ``a`` and ``b`` convert to safely (``torch.promote_types``).

    Example:
        >>> promote_types(uint8, int8)
        torch.int16
    """
    for pos, x in ((1, a), (2, b)):
        if not isinstance(x, dtype):
            raise TypeError(f"promote_types(): argument 'type{pos}' (position {pos}) must be "
                            f"torch.dtype, not {type(x).__name__}")
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == 3 and lo.category == 2:  # NOTE: complex64 with float64: complex128
            return hi if hi.to_real()._rank >= lo._rank else lo.to_complex()
        return hi
    if a.category == 1 and a.is_signed != b.is_signed:  # uint8 with a signed int
        signed = b if a is uint8 else a
        return int16 if signed is int8 else signed
    return a if a._rank > b._rank else b


def scalar_type(value: Any) -> dtype:
    """The dtype a Python scalar takes when it meets tensors (PyTorch's 'wrapped number')."""
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    if isinstance(value, builtins.complex):
        return get_default_complex_dtype()
    return _default_float


def result_type(dims: list[dtype], zero_dims: list[dtype], scalars: list[dtype]) -> dtype:
    """PyTorch's ``result_type``: dimensioned tensors outrank 0-d tensors outrank Python scalars,
    unless the lower-priority group has a higher category (bool < integer < floating <
    complex)."""
    out = None
    for group in (dims, zero_dims, scalars):
        if not group:
            continue
        g = group[0]
        for d in group[1:]:
            g = promote_types(g, d)
        if out is None:
            out = g
        elif g.category > out.category:
            # NOTE: a higher category from a lower priority group sets the category; bool and
            # integer results take the group's dtype, a floating result keeps its own width
            # (float64 with a complex64 0-d tensor or a Python complex is complex128).
            out = g if out.category < 2 else out.to_complex()
    assert out is not None
    return out


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` in type-promoting ops: never
    floating to integer or bool, never non-bool to bool (``torch.can_cast``)."""
    return from_.category <= to.category


def is_floating_point(d: dtype) -> builtins.bool:
    return d.is_floating_point
