"""PyTorch's other names and in-place forms of ops that exist: ``greater``/``less``/
``not_equal`` ..., ``multiply_``/``divide_``/``subtract_``, the comparisons and logical ops in
place (``x.eq_(y)`` keeps ``x``'s dtype), ``torch.abs_``-style in-place math, the metadata
in-place view ops (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``, ``swapaxes_``) and the
dtype shorthands (``byte``, ``char``, ``short``).

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..autograd.grad_mode import STATE
from ..autograd.node import named_type
from ..tensor import Tensor
from . import arith, compare, rounding, shape, unary
from .inplace_ops import clamp_, fill_, inplace, zero_
from .out import found_dtype, with_out
from .view_writes import _check_overlap

__all__ = [
    "greater", "greater_equal", "less", "less_equal", "not_equal", "absolute", "fill", "zero_",
    "abs_", "cos_", "exp_", "log_", "sin_", "sqrt_", "square_", "neg_", "negative_",
    "reciprocal_", "relu_", "rsqrt_", "sigmoid_", "tanh_", "floor_", "expm1_", "log1p_",
    "clamp_", "clip_", "fill_", "detach", "detach_", "argwhere", "split_with_sizes",
    "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes",
]


def _alias(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    def alias(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = name
    alias.__doc__ = f"``{name}``: PyTorch's other name of ``{fn.__name__}``."
    return alias


# NOTE: with ``out=``, as the functions they name (out_variants.py).
greater = _alias(with_out(compare.gt, "greater"), "greater")
greater_equal = _alias(with_out(compare.ge, "greater_equal"), "greater_equal")
less = _alias(with_out(compare.lt, "less"), "less")
less_equal = _alias(with_out(compare.le, "less_equal"), "less_equal")
not_equal = _alias(with_out(compare.ne, "not_equal"), "not_equal")
absolute = _alias(with_out(unary.abs, "absolute", check=found_dtype), "absolute")


def argwhere(input: Tensor) -> Tensor:  # noqa: A002
    """The indices of the nonzero elements, one row each (``nonzero``)."""
    return compare.nonzero(input)


def split_with_sizes(input: Tensor, split_sizes: Any, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    return tuple(shape.split(input, list(split_sizes), dim))


unsafe_split = _alias(shape.split, "unsafe_split")
unsafe_chunk = _alias(shape.chunk, "unsafe_chunk")
unsafe_split_with_sizes = _alias(split_with_sizes, "unsafe_split_with_sizes")


def _inplace_of(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """``t.name(...)``: ``fn(t, ...)`` written into ``t`` (recorded, version-counted)."""

    def method(t: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return inplace(t, fn, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place ``{fn.__name__}``."
    return method


def _compare_inplace(fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """``t.eq_(other)``: the comparison written into ``t`` as 0/1 in ``t``'s dtype."""

    def method(t: Tensor, other: Any) -> Tensor:
        return inplace(t, lambda x, o: fn(x, o).to(x.dtype), other)

    method.__name__ = method.__qualname__ = name
    return method


# torch.abs_(x) & co: PyTorch's in-place functions at top level
def _abs_real(input: Tensor) -> Tensor:  # noqa: A002
    if input.dtype.is_complex:  # NOTE: |z| is real: PyTorch refuses to write it into z
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return unary.abs(input)


_abs_real.__name__ = "abs"
abs_ = _inplace_of(_abs_real, "abs_")
cos_ = _inplace_of(unary.cos, "cos_")
exp_ = _inplace_of(unary.exp, "exp_")
log_ = _inplace_of(unary.log, "log_")
sin_ = _inplace_of(unary.sin, "sin_")
sqrt_ = _inplace_of(unary.sqrt, "sqrt_")
square_ = _inplace_of(unary.square, "square_")
neg_ = _inplace_of(unary.neg, "neg_")
negative_ = _inplace_of(unary.neg, "negative_")
reciprocal_ = _inplace_of(unary.reciprocal, "reciprocal_")
relu_ = _inplace_of(unary.relu, "relu_")
rsqrt_ = _inplace_of(unary.rsqrt, "rsqrt_")
sigmoid_ = _inplace_of(unary.sigmoid, "sigmoid_")
tanh_ = _inplace_of(unary.tanh, "tanh_")
floor_ = _inplace_of(rounding.floor, "floor_")
expm1_ = _inplace_of(unary.expm1, "expm1_")
log1p_ = _inplace_of(unary.log1p, "log1p_")


clip_ = _alias(clamp_, "clip_")


def fill(input: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A new tensor like ``input`` filled with ``value`` (differentiable w.r.t. a tensor
    ``value``, as PyTorch's ``torch.fill``)."""
    return input.clone().fill_(value) if not isinstance(value, Tensor) else \
        value.expand(input.shape).to(input.dtype).clone()


def detach(input: Tensor) -> Tensor:  # noqa: A002
    return input.detach()


def detach_(input: Tensor) -> Tensor:  # noqa: A002
    return input.detach_()


# ---- in-place metadata changes: the tensor itself becomes the view -------------------------

def view_inplace(t: Tensor, view: Callable[[Tensor], Tensor], node_name: str) -> Tensor:
    """``t`` given the shape and strides of ``view(t)`` (same storage), and, when recorded, its
    node, renamed ``node_name`` as PyTorch names the in-place form."""
    if STATE.grad_enabled and t._requires_grad and t.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    v = view(t)
    t._data = v._data
    fn = v.grad_fn
    if v._requires_grad and fn is not None:
        fn.node_name = node_name
        fn.__class__ = named_type(fn)
        t._grad_fn, t._output_nr = fn, v._output_nr
    t._counter().bump()  # NOTE: as PyTorch's (metadata changes count as writes)
    if t._base is not None:  # NOTE: a view stays a view of its base, one step further
        t._view_fn, t._view_version = v._view_fn, t._counter().value
    return t


def _view_inplace(view: Callable[..., Tensor], name: str,
                  node: Callable[..., str]) -> Callable[..., Tensor]:
    """``t.name(...)``: ``t`` takes the shape and strides of ``view(t, ...)`` (same storage),
    and, when recorded, its node, renamed ``node(*args)`` as PyTorch names the in-place form
    (``TBackward1``, ``SqueezeBackward3``, ...)."""

    def method(t: Tensor, *args: Any) -> Tensor:
        return view_inplace(t, lambda u: view(u, *args), node(*args))

    method.__name__ = method.__qualname__ = name
    return method


def _dtype_method(dt: dtypes.dtype, name: str) -> Callable[..., Tensor]:
    def method(t: Tensor, memory_format: Any = None) -> Tensor:
        return t.to(dt)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``self.to({dt})``."
    return method


def _fill_diagonal_(t: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """``t``'s main diagonal (all dims equal, or a 2-D matrix, ``wrap``: tall matrices restart
    below every square block) set to ``fill_value`` in place, as ``Tensor.fill_diagonal_``."""
    if t.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if t.ndim > 2 and len(set(t.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    _check_overlap(t)
    rows = t.shape[0]
    n = min(t.shape) if t.ndim > 2 or not wrap else rows
    cols = t.shape[1]
    from .index import setitem  # late: index builds on inplace_ops

    idx = [i for i in range(n) if t.ndim > 2 or i % (cols + 1) < cols]
    if t.ndim == 2 and wrap:
        key_rows = [i for i in range(rows) if i % (cols + 1) < cols]
        key_cols = [i % (cols + 1) for i in key_rows]
    else:
        key_rows = key_cols = idx[:min(t.shape)]
    from ..creation import tensor

    keys = tuple(tensor(key_rows if d == 0 else key_cols, dtype=dtypes.int64, device=t.device)
                 for d in range(t.ndim))
    setitem(t, keys, fill_value)
    return t


def _method_form(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``t.fn(...)`` for a function whose messages count the arguments of the method form."""

    def method(t: Tensor, *args: Any, **kwargs: Any) -> Any:
        return fn(t, *args, _method=True, **kwargs)

    method.__name__ = method.__qualname__ = fn.__name__
    return method


def _TRANSPOSE1(a: Any, b: Any) -> str:
    return "TransposeBackward1"


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "greater": greater, "greater_equal": greater_equal, "less": less, "less_equal": less_equal,
    "not_equal": not_equal, "absolute": absolute, "negative": unary.neg,
    "multiply": arith.mul, "divide": arith.div, "subtract": arith.sub,
    "true_divide": arith.div, "logical_and": compare.logical_and, "logical_or": compare.logical_or,
    "logical_xor": compare.logical_xor, "isclose": _method_form(compare.isclose), "isinf": compare.isinf,
    "multiply_": _inplace_of(arith.mul, "multiply_"),
    "divide_": _inplace_of(arith.div, "divide_"),
    "true_divide_": _inplace_of(arith.div, "true_divide_"),
    "subtract_": _inplace_of(arith.sub, "subtract_"),
    "absolute_": _inplace_of(_abs_real, "absolute_"), "abs_": abs_, "cos_": cos_, "log_": log_,
    "sin_": sin_, "square_": square_, "negative_": negative_, "reciprocal_": reciprocal_,
    "rsqrt_": rsqrt_, "floor_": floor_, "expm1_": expm1_, "log1p_": log1p_,
    "sign_": _inplace_of(unary.sign, "sign_"),
    "logical_and_": _inplace_of(compare.logical_and, "logical_and_"),
    "logical_or_": _inplace_of(compare.logical_or, "logical_or_"),
    "logical_xor_": _inplace_of(compare.logical_xor, "logical_xor_"),
    "logical_not_": _inplace_of(compare.logical_not, "logical_not_"),
    "t_": _view_inplace(lambda t: t.t(), "t_", lambda: "TBackward1"),
    "transpose_": _view_inplace(lambda t, a, b: t.transpose(a, b), "transpose_", _TRANSPOSE1),
    "swapaxes_": _view_inplace(lambda t, a, b: t.transpose(a, b), "swapaxes_", _TRANSPOSE1),
    "swapdims_": _view_inplace(lambda t, a, b: t.transpose(a, b), "swapdims_", _TRANSPOSE1),
    "squeeze_": _view_inplace(lambda t, *d: t.squeeze(*d), "squeeze_",
                              lambda *d: "SqueezeBackward" + ("3" if not d else "5" if
                                                              isinstance(d[0], (tuple, list))
                                                              else "4")),
    "unsqueeze_": _view_inplace(lambda t, d: t.unsqueeze(d), "unsqueeze_",
                                lambda d: "UnsqueezeBackward1"),
    "byte": _dtype_method(dtypes.uint8, "byte"), "char": _dtype_method(dtypes.int8, "char"),
    "short": _dtype_method(dtypes.int16, "short"),
    "fill_diagonal_": _fill_diagonal_, "argwhere": argwhere,
    "split_with_sizes": split_with_sizes, "unsafe_split": unsafe_split,
    "unsafe_chunk": unsafe_chunk, "unsafe_split_with_sizes": unsafe_split_with_sizes,
}
for _name, _fn in (("eq_", compare.eq), ("ne_", compare.ne), ("lt_", compare.lt),
                   ("le_", compare.le), ("gt_", compare.gt), ("ge_", compare.ge),
                   ("greater_", compare.gt), ("greater_equal_", compare.ge),
                   ("less_", compare.lt), ("less_equal_", compare.le),
                   ("not_equal_", compare.ne)):
    TENSOR_METHODS[_name] = _compare_inplace(_fn, _name)
