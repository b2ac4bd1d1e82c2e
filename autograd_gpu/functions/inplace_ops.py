"""In-place ops and how they are recorded.

``inplace`` runs the out-of-place function and writes the result into the tensor's storage; with
autograd involved, the tensor takes the new node as its ``grad_fn``, and for a view the base is
rewired through CopySlices while the view is re-derived from it (``view_writes``).
"""

from __future__ import annotations

import builtins
from typing import Any, Callable

from .. import dtypes
from ..autograd.grad_mode import STATE, no_grad
from ..autograd.node import Node
from ..ops import elementwise as E
from ..tensor import Tensor
from .arith import (
    _check_sub, _is_scalar, _type_name, add, alpha_arg, as_tensor_like, batched, check_alpha,
    clamp, div, mul, operands, pow, sub, wrap_int,
)
from .checks import checked_scalar, invalid_arguments, scalar_arg
from .view_writes import (
    _NO_GRAD_VIEW, _alias, _broadcast_into, _can_cast, _cast_error, _check_overlap,
    _check_view_target, _copy_into, _rebase_view, _set_grad_fn, _shape_error, _write,
    _write_error,
)


# ---- in-place ops ----------------------------------------------------------------------------

_INPLACE_INFERENCE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
    "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
    "for more details."
)


def _check_inplace_target(t: Tensor) -> None:
    if t._is_inference and not STATE.inference:
        raise RuntimeError(_INPLACE_INFERENCE)
    if STATE.grad_enabled and t._base is not None and t._view_fn is None and t._base._requires_grad:
        raise RuntimeError(_NO_GRAD_VIEW)
    if STATE.grad_enabled and t._requires_grad and t.grad_fn is None:
        if t._base is not None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if STATE.grad_enabled and t._base is not None and t._base._requires_grad and t._base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def inplace(t: Tensor, fn: Callable[..., Tensor], *args: Any, _through: Any = None,
            **kwargs: Any) -> Tensor:
    """Run ``fn(t, *args)`` and write the result into ``t``'s storage.

    With autograd involved, ``t`` then takes the new node as its ``grad_fn``; a view's base is
    rewired through CopySlices. Saved copies keep gradients exact even though ``t`` is
    overwritten. ``_through``: the write goes through elements sharing memory (``fill_``: True)
    or writes only where this bool array (of ``t``'s shape) is true (``masked_fill_``); by
    default such a ``t`` is refused (``_check_overlap``).
    """
    if t._level or batched(*args):
        return _batched_inplace(t, fn, *args, **kwargs)
    _check_inplace_target(t)
    recording = STATE.grad_enabled and (
        t._requires_grad or builtins.any(isinstance(a, Tensor) and a._requires_grad for a in args)
        or (t._base is not None and t._base._requires_grad)
    )
    if not recording:
        with no_grad():
            result = fn(t, *args, **kwargs)
        _write(t, result, _through)
        return t
    if t._base is not None:
        _check_view_target(t)
    old = _alias(t)
    result = fn(old, *args, **kwargs)
    if not _can_cast(result.dtype, t.dtype):
        raise _cast_error(result.dtype, t.dtype)
    if result.dtype is not t.dtype:
        result = result.to(t.dtype)
    node = result.grad_fn
    if node is not None:
        node._own_saved_input(old)
    if t._base is not None:
        _rebase_view(t, result, _through)
    else:
        _write(t, result, _through)
        _set_grad_fn(t, node, result._output_nr, result._requires_grad)
    if node is not None and result.shape == t.shape:
        node._saved_output_is(result._data, t)
    return t


def _batched_inplace(t: Tensor, fn: Callable[..., Tensor], *args: Any, **kwargs: Any) -> Tensor:
    """An in-place op under ``vmap``: the out-of-place result, written into the physical
    tensor under ``t``'s wrappers. A result batched where ``t`` is not cannot fit (torch's
    refusal)."""
    from ..func._batched import levels_of, map_physical

    src = t
    if STATE.grad_enabled and (t._requires_grad or builtins.any(
            isinstance(a, Tensor) and a._requires_grad for a in args)):
        # NOTE: backward may read the old value, which the write below overwrites: the op
        # reads a copy (recorded, so gradients still reach the old value).
        src = map_physical(t, lambda p: p.clone())
    result = fn(src, *args, **kwargs)
    extra = set(levels_of(result)) - set(levels_of(t))
    if extra:
        name = getattr(fn, "__name__", "the operator")
        raise RuntimeError(
            "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
            "Tensor `other` in extra_args that has more elements than `self`. This happened due "
            "to `other` being vmapped over but `self` not being vmapped over at level "
            f"{max(extra)}. Please try to use out-of-place operators instead of {name}. If said "
            "operator is being called inside the PyTorch framework, please file a bug report "
            "instead.")
    if not _can_cast(result.dtype, t.dtype):
        raise _cast_error(result.dtype, t.dtype)
    write_batched(t, result if result.dtype is t.dtype else result.to(t.dtype))
    return t


def write_batched(t: Tensor, value: Tensor) -> None:
    """Copy ``value`` (batched at some of ``t``'s levels) into ``t``: level by level, down to
    its plain tensor, where an ordinary (recorded) ``copy_`` happens."""
    from ..func._batched import expose

    if not t._level:
        copy_(t, value)
        return
    inner, bdim = t._value, t._bdim  # type: ignore[attr-defined]
    v = expose(value, t._level, inner.shape[bdim])
    write_batched(inner, v.movedim(0, bdim) if bdim else v)


def _fast_inplace(t: Tensor, ufunc: str, other: Any, alpha: Any = 1) -> Tensor | None:
    """In-place arithmetic without autograd straight into ``t``'s storage (the optimizer path)."""
    if STATE.grad_enabled and (t._requires_grad or (isinstance(other, Tensor) and other._requires_grad)):
        return None
    if t._level or isinstance(other, Tensor) and other._level:
        return None
    if t._base is not None and t._base._requires_grad and STATE.grad_enabled:
        return None
    _check_inplace_target(t)
    _check_overlap(t)
    b = t.backend
    if isinstance(other, Tensor):
        if other._device is not t._device:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{t._device} and {other._device}!"
            )
        o = other._data
        odt = other.dtype
        if other.ndim == 0 and t.ndim > 0:
            odt = odt if odt.category > t.dtype.category else t.dtype
    elif _is_scalar(other):
        scalar_arg(other)
        o = wrap_int(other, t.dtype) if type(other) is int and t.dtype.category == 1 else other
        odt = dtypes.scalar_type(other)
    else:
        return None
    res = dtypes.promote_types(t.dtype, odt) if isinstance(other, Tensor) else \
        (t.dtype if odt.category <= t.dtype.category else odt)
    if ufunc == "true_divide" and not res.is_floating_point:
        res = dtypes.get_default_dtype()
    if not _can_cast(res, t.dtype):
        raise _cast_error(res, t.dtype)
    if alpha != 1 or type(alpha) is not int:
        alpha = check_alpha(res, alpha, negate=ufunc == "subtract")
    token = b.quiet_fp()  # NOTE: silent on inf/nan, as PyTorch (see Node.apply)
    try:
        if t.dtype is dtypes.float16 and (alpha != 1 or type(other) is not Tensor and ufunc in (
                "multiply", "true_divide")):
            b.opmath(ufunc, t._data, o, alpha, out=t._data)  # NOTE: in float32, as PyTorch's
        else:
            if alpha != 1:
                o = b.multiply(o, alpha)
            getattr(b, ufunc)(t._data, o, out=t._data, casting="unsafe")
    except ValueError as e:
        if "broadcast" in str(e):
            raise _shape_error(t.shape, getattr(o, "shape", ())) from None
        raise _write_error(e) from None
    finally:
        b.restore_fp(token)
    t._counter().bump()
    return t


def method_operand(fn: str, t: Tensor, other: Any, combos: bool = False, **kwargs: Any) -> None:
    """PyTorch's argument error of the method call ``t.fn(other)`` (``add_``, ``pow_``, ...) when
    ``other`` is neither a tensor nor a number (``combos``, ``kwargs``: see ``operands``)."""
    if type(other) is not Tensor and not _is_scalar(other):
        operands(fn, t, other, combos=combos, method=True, **kwargs)


def add_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    method_operand("add_", t, other)
    if type(alpha) is not int or alpha != 1:
        alpha = alpha_arg("add_", alpha)
    out = _fast_inplace(t, "add", other, alpha)
    return inplace(t, add, other, alpha=alpha) if out is None else out


def sub_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    method_operand("sub_", t, other)
    if type(alpha) is not int or alpha != 1:
        alpha = alpha_arg("sub_", alpha)
    _check_sub(t, other)
    out = _fast_inplace(t, "subtract", other, alpha)
    return inplace(t, sub, other, alpha=alpha) if out is None else out


def mul_(t: Tensor, other: Any) -> Tensor:
    method_operand("mul_", t, other)
    out = _fast_inplace(t, "multiply", other)
    return inplace(t, mul, other) if out is None else out


def div_(t: Tensor, other: Any) -> Tensor:
    method_operand("div_", t, other)
    out = _fast_inplace(t, "true_divide", other)
    return inplace(t, div, other) if out is None else out


def pow_(t: Tensor, exponent: Any) -> Tensor:
    method_operand("pow_", t, exponent, combos=True)
    return inplace(t, pow, exponent)


def clamp_(t: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    from .unary import clamp_dtype  # late: unary builds on arith, as this module does

    bounds = [v for v in (min, max) if v is not None]
    if not builtins.all(isinstance(v, Tensor) or _is_scalar(v) for v in bounds):
        raise invalid_arguments("clamp_", tuple(bounds), {})
    if not isinstance(min, Tensor) and not isinstance(max, Tensor):
        out = clamp_dtype(t.dtype, min, max)
        if out is not t.dtype:  # NOTE: PyTorch's clamp_ names the C type here
            raise RuntimeError(f"result type {_type_name(out)} can't be cast to the desired "
                               f"output type {dtypes.c_type_name(t.dtype)}")
    return inplace(t, clamp, min, max)


class _Fill(E._Unary):
    """``fill_``/``zero_`` recorded: the old values get no gradient."""

    def __init__(self, value: Any, name: str) -> None:
        self.value = value
        self.node_name = name

    def forward(self, x: Any) -> Any:
        return self.backend.full(x.shape, self.value, x.dtype)

    def grad_of(self, grad: Any) -> Any:
        return grad * 0


def zero_(t: Tensor) -> Tensor:
    return fill_(t, 0, name="ZeroBackward0")


def fill_(t: Tensor, value: Any, name: str = "FillBackward0") -> Tensor:
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
            )
        return copy_(t, value.expand(t.shape) if t.ndim else value)
    if _is_scalar(value):  # NOTE: PyTorch fills one element without checking float16's range
        value = checked_scalar(value, t.dtype, check_half=t.numel() != 1)
    if t._level:
        return _batched_inplace(t, lambda x: _Fill.apply(x, value=value, name=name))
    if not STATE.grad_enabled or not (t._requires_grad or (t._base is not None and t._base._requires_grad)):
        _check_inplace_target(t)
        try:
            t._data[...] = value  # NOTE: through elements that share memory, as PyTorch
        except ValueError as e:
            raise _write_error(e) from None
        t._counter().bump()
        return t
    return inplace(t, lambda x: _Fill.apply(x, value=value, name=name if name != "FillBackward0" else "FillBackward2"), _through=True)


class _CopyFrom(Node):
    """``dst.copy_(src)`` recorded: the gradient goes to ``src`` (summed to its shape)."""

    node_name = "torch::autograd::CopyBackwards"

    def __repr__(self) -> str:
        return f"<CopyBackwards object at {hex(id(self))}>"

    def forward(self, dst: Any, src: Any) -> Any:
        self.src_shape = src.shape
        self.src_dtype = src.dtype
        return _broadcast_into(self.backend, src, dst.shape).astype(dst.dtype)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gd = grad * 0 if self.needs_input_grad[0] else None
        gs = None
        if self.needs_input_grad[1]:
            gs = grad.sum_to_size(self.src_shape).to(dtypes.from_name(self.src_dtype.name))
        return gd, gs


def copy_(t: Tensor, src: Any) -> Tensor:
    """Copy ``src`` (broadcast, converted) into ``t``."""
    if not isinstance(src, Tensor):
        src = as_tensor_like(src, t)
    if src._device is not t._device:
        src = src.to(t._device)
    if t._level or src._level:
        return _batched_inplace(t, lambda x, s: s.expand(x.shape), src)
    recording = STATE.grad_enabled and (src._requires_grad or t._requires_grad or
                                         (t._base is not None and t._base._requires_grad))
    if not recording:
        _check_inplace_target(t)
        _check_overlap(t)
        _copy_into(t, _broadcast_into(t.backend, src._data, t._data.shape))
        return t
    return inplace(t, lambda x, s: _CopyFrom.apply(x, s), src)
