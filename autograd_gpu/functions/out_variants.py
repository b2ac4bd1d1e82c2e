"""``out=`` on the ``torch.*`` functions of the core modules (``add``, ``sum``, ``cat``,
``mm``, ...), each with PyTorch's rule for the out tensor's dtype:

- ``cast``: TensorIterator's ops (elementwise math, comparisons, most reductions, ``cat``):
  any dtype the result can be cast to;
- ``exact``: the result's dtype exactly, ``Expected out tensor to have dtype float, but got
  double instead`` (matrix products, ``max``/``min`` with ``dim``, ``argmax``, ``norm``,
  ``gather``, the softmax family);
- a few ops word the refusal their own way (``amax``, ``where``, ``clamp``, ``index_select``,
  ``dot``, ``all``, ``nonzero``, ...): the check says it as they do.

The wrapped functions are what ``autograd_gpu.<name>`` exports; ``Tensor`` methods (which take
no ``out=``) call the plain ones, so the operators pay nothing for this.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..tensor import Tensor
from . import arith, compare, index, linalg, reduce, rounding, shape, unary
from .arith import _type_name
from .out import Check, _outs, found_dtype, with_out

def _same_dtype(message: Callable[[dtypes.dtype, dtypes.dtype], str],
                error: type[Exception] = RuntimeError) -> Check:
    """Refuse an out tensor whose dtype is not the result's, with ``message(result, out)``."""

    def check(result: Any, out: Any, args: tuple[Any, ...]) -> None:
        r = result[0] if isinstance(result, tuple) else result
        o = _outs(out)[0]
        if isinstance(o, Tensor) and o.dtype is not r.dtype:
            raise error(message(r.dtype, o.dtype))

    return check


def _bool_result(name: str) -> Check:
    def check(result: Any, out: Any, args: tuple[Any, ...]) -> None:
        o = _outs(out)[0]
        if isinstance(o, Tensor) and o.dtype.name not in ("bool", "uint8"):
            raise RuntimeError(f"{name} only supports bool tensor for result, got: "
                               f"{_type_name(o.dtype)}")

    return check


def _cat_cast(result: Any, out: Any, args: tuple[Any, ...]) -> None:
    o = _outs(out)[0]
    if isinstance(o, Tensor) and result.dtype.category > o.dtype.category:
        raise TypeError("torch.cat(): input types can't be cast to the desired output type "
                        f"{_type_name(o.dtype)}")


def _nonzero(result: Any, out: Any, args: tuple[Any, ...]) -> None:
    o = _outs(out)[0]
    if isinstance(o, Tensor) and o.dtype is not dtypes.int64:
        raise RuntimeError("nonzero: Expected out tensor to have scalar type Long but got scalar "
                           f"type{_type_name(o.dtype)}")


def _float_result(name: str) -> Check:
    def check(result: Any, out: Any, args: tuple[Any, ...]) -> None:
        o = _outs(out)[0]
        if isinstance(o, Tensor) and not o.dtype.is_floating_point:
            raise RuntimeError(f"{name}(): Expected floating point type for result tensor, but "
                               f"got: {_type_name(o.dtype)}")

    return check


def _mv(result: Any, out: Any, args: tuple[Any, ...]) -> None:
    """addmv checks an out of the right shape as an input (its message), else after resizing
    as a structured op's out."""
    o = _outs(out)[0]
    if isinstance(o, Tensor) and o.dtype is not result.dtype:
        r, d = _type_name(result.dtype), _type_name(o.dtype)
        if tuple(o.shape) == tuple(result.shape):
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {d}, {r}, "
                               f"and {r}")
        raise RuntimeError(f"Expected out tensor to have dtype {dtypes.c_type_name(result.dtype)}, but got "
                           f"{dtypes.c_type_name(o.dtype)} instead")


_AMAX = _same_dtype(lambda r, o: f"Expected the dtype for input and out to match, but got "
                                 f"{_type_name(r)} for input's dtype and {_type_name(o)} for "
                                 "out's dtype.")
_FOUND = found_dtype

_CAST: dict[str, Callable[..., Any]] = {
    "add": arith.add, "sub": arith.sub, "subtract": arith.sub, "mul": arith.mul,
    "multiply": arith.mul, "div": arith.div, "divide": arith.div, "true_divide": arith.div,
    "pow": arith.pow, "maximum": arith.maximum, "minimum": arith.minimum,
    "bitwise_and": arith.bitwise_and, "bitwise_or": arith.bitwise_or,
    "bitwise_xor": arith.bitwise_xor,
    "exp": unary.exp, "expm1": unary.expm1, "log": unary.log, "log1p": unary.log1p,
    "sqrt": unary.sqrt, "rsqrt": unary.rsqrt, "sin": unary.sin, "cos": unary.cos,
    "tanh": unary.tanh, "sigmoid": unary.sigmoid, "reciprocal": unary.reciprocal,
    "square": unary.square,
    "floor_divide": rounding.floor_divide,
    "remainder": rounding.remainder,
    "eq": compare.eq, "ne": compare.ne, "lt": compare.lt, "le": compare.le, "gt": compare.gt,
    "ge": compare.ge, "logical_and": compare.logical_and, "logical_or": compare.logical_or,
    "logical_xor": compare.logical_xor, "logical_not": compare.logical_not,
    "mean": reduce.mean, "std": reduce.std,
    "var": reduce.var,
}
_EXACT: dict[str, Callable[..., Any]] = {
    "mm": linalg.mm, "bmm": linalg.bmm, "addmm": linalg.addmm, "max": reduce.max,
    "min": reduce.min, "argmax": reduce.argmax, "argmin": reduce.argmin, "norm": reduce.norm,
    "gather": index.gather, "softmax": reduce.softmax, "log_softmax": reduce.log_softmax,
}
_CUSTOM: dict[str, tuple[Callable[..., Any], Check]] = {
    "amax": (reduce.amax, _AMAX), "amin": (reduce.amin, _AMAX),
    "all": (reduce.all, _bool_result("all")), "any": (reduce.any, _bool_result("any")),
    "cat": (shape.cat, _cat_cast), "concat": (shape.cat, _cat_cast),
    "concatenate": (shape.cat, _cat_cast), "stack": (shape.stack, _cat_cast),
    "where": (compare.where, _same_dtype(lambda r, o: f"Expected out type to be "
                                                      f"{_type_name(r)} but got {_type_name(o)}")),
    "clamp": (unary.clamp, _FOUND), "abs": (unary.abs, _FOUND), "sign": (unary.sign, _FOUND),
    "floor": (rounding.floor, _FOUND), "bitwise_not": (compare.bitwise_not, _FOUND),
    "logsumexp": (reduce.logsumexp, _float_result("logsumexp")), "clip": (unary.clamp, _FOUND), "neg": (unary.neg, _FOUND),
    "negative": (unary.neg, _FOUND),
    "index_select": (index.index_select, _same_dtype(
        lambda r, o: "index_select(): self and result must have the same scalar type")),
    "dot": (linalg.dot, _same_dtype(lambda r, o: f"result dtype {_type_name(o)} does not "
                                                 f"match input dtype {_type_name(r)}")),
    "mv": (linalg.mv, _mv),
    "nonzero": (compare.nonzero, _nonzero),
}

_CAST_ANY: dict[str, Callable[..., Any]] = {"sum": reduce.sum, "prod": reduce.prod}  # NOTE: even a float into an int out

_WRAPPED: dict[str, Callable[..., Any]] = {
    **{n: with_out(f, n) for n, f in _CAST.items()},
    **{n: with_out(f, n, exact=True) for n, f in _EXACT.items()},
    **{n: with_out(f, n, check=c) for n, (f, c) in _CUSTOM.items()},
    **{n: with_out(f, n, cast_any=True) for n, f in _CAST_ANY.items()},
}
__all__ = sorted(_WRAPPED)
globals().update(_WRAPPED)
