"""PyTorch's argument checks that many entry points share: the type of a tensor argument, and
the dtype messages of the matrix products."""

from __future__ import annotations

from typing import Any

from ..dtypes import c_type_name, scalar_type_name
from ..tensor import Tensor


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
    one of:``."""
    got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return TypeError(f"{fn}() received an invalid combination of arguments - got "
                     f"({', '.join(got)}), but expected one of:")


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
