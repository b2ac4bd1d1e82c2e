"""Our CUDA reduction, softmax and cross-entropy kernels' launchers (``kernels/reduce.cu``,
``kernels/softmax.cu``): ``reduce``, ``logsumexp``, ``arg_reduce``, the softmax family and the
fused cross-entropy. Loading, dtype checks and the launch helpers are ``cuda_kernels``'; the
names are re-exported there, where the CuPy backend calls them.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from . import cuda_kernels as _kernels
from .cuda_kernels import (
    _ACC, _MAX_SPLITS, _PLAN_LIMIT, _R_LOGSUMEXP, _R_MAX, _REDUCE_CODES, REDUCE_OPS,
    _common_dtype, _contiguous, _cupy, _launch, _launch_groups, _launch_spec, _sm_count,
    dtype_name,
)


# ---- reductions --------------------------------------------------------------------------


class _Plan(NamedTuple):
    """A reduction seen as a C-contiguous (outer, r, inner) array ``base``; results come out in
    the order of the ``kept`` axes (the non-size-1 kept axes, in memory order)."""

    base: Any
    outer: int
    r: int
    inner: int
    kept: list[int]


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if ndim == 0:  # as torch: dim 0 / -1 of a 0-d tensor is the tensor itself
        if any(int(a) not in (0, -1) for a in axes):
            raise ValueError(f"axis {axis} is out of bounds for a 0-d array")
        return ()
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for an array of dimension {ndim}")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in axis {axis}")
    return tuple(sorted(out))


def _out_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    if keepdims:
        return tuple(1 if k in axes else s for k, s in enumerate(shape))
    return tuple(s for k, s in enumerate(shape) if k not in axes)


def _plan(x: Any, axes: tuple[int, ...]) -> _Plan:
    """No copy when x is a permutation of a C-contiguous array (transposes included) whose
    reduced axes sit next to each other in memory; else one contiguous copy, reduced axes last."""
    shape = x.shape
    dims = [k for k in range(x.ndim) if shape[k] != 1]
    strides = {k: x.strides[k] // x.itemsize for k in dims}
    order = sorted(dims, key=lambda k: -strides[k])  # memory order, outermost first
    expected, dense = 1, True
    for k in reversed(order):
        dense = dense and strides[k] == expected
        expected *= shape[k]
    reduced = [i for i, k in enumerate(order) if k in axes]
    if dense and reduced and reduced == list(range(reduced[0], reduced[-1] + 1)):
        first, last = reduced[0], reduced[-1] + 1
        return _Plan(x, math.prod(shape[k] for k in order[:first]),
                     math.prod(shape[k] for k in order[first:last]),
                     math.prod(shape[k] for k in order[last:]), order[:first] + order[last:])
    kept = [k for k in range(x.ndim) if k not in axes]
    base = _cupy().ascontiguousarray(x.transpose(kept + list(axes)))
    return _Plan(base, math.prod(shape[k] for k in kept), math.prod(shape[k] for k in axes), 1,
                 [k for k in kept if shape[k] != 1])


def _restore(flat: Any, shape: tuple[int, ...], kept: list[int], out_shape: tuple[int, ...]) -> Any:
    """The per-item results ``flat`` (in ``kept`` order) as a C-contiguous array of out_shape."""
    if kept == sorted(kept):
        return flat.reshape(out_shape)
    perm = sorted(range(len(kept)), key=lambda j: kept[j])
    moved = flat.reshape([shape[k] for k in kept]).transpose(perm)
    return _cupy().ascontiguousarray(moved).reshape(out_shape)


def _split(items: int, r: int, target: int, min_chunk: int) -> tuple[int, int]:
    """(splits, chunk): cut each item's r so that about ``target`` units run, each of at least
    ``min_chunk`` elements; no chunk is empty."""
    if items >= target // 2 or r < 2 * min_chunk:
        return 1, r
    splits = min(-(-target // items), -(-r // min_chunk), _MAX_SPLITS)
    chunk = -(-r // splits)
    return -(-r // chunk), chunk


def _group_for(length: int) -> int:
    """Threads per row: one warp, or a whole block for long rows."""
    return 256 if length > 2048 else 32


_Spec = tuple  # (kernel, grid, block, tail): see cuda_kernels._launch_spec


def _schedule(code: int, plan: _Plan, dtype: str, scale: float) -> tuple[int, _Spec, _Spec | None]:
    """The launches that reduce ``plan``'s items: ``(partial size, first, finish)``. ``first``
    takes ``(base, out, partial, shift, *tail)``, ``finish`` (None when each item is one chunk)
    ``(partial, out, shift, *tail)``; partial holds ``partial size`` values (0: none)."""
    items = plan.outer * plan.inner
    sms = _sm_count()
    tail = (np.int32(code), np.float64(scale))
    if plan.inner == 1:
        splits, chunk = _split(items, plan.r, sms * 64, 1024)
        first = _launch_spec("reduce_rows", dtype, items * splits, _group_for(chunk),
                             (np.int64(items), np.int64(plan.r), np.int64(splits),
                              np.int64(chunk), *tail))
    else:
        splits, chunk = _split(items, plan.r, sms * 2048, 32)
        first = _launch_spec("reduce_cols", dtype, items * splits, None,
                             (np.int64(plan.outer), np.int64(plan.r), np.int64(plan.inner),
                              np.int64(splits), np.int64(chunk), *tail))
    if splits == 1:
        return 0, first, None
    finish = _launch_spec("reduce_finish", dtype, items, _group_for(splits),
                          (np.int64(items), np.int64(splits), *tail))
    return items * splits, first, finish


def _reduce_items(code: int, plan: _Plan, dtype: str, scale: float, shift: Any = None,
                  out_shape: tuple[int, ...] | None = None) -> Any:
    """One value per (outer, inner) item, as a flat array of ``dtype`` (or, C-contiguous, of
    ``out_shape``)."""
    cp = _cupy()
    size, first, finish = _schedule(code, plan, dtype, scale)
    out = cp.empty(plan.outer * plan.inner if out_shape is None else out_shape, dtype)
    partial = cp.empty(size, _ACC[dtype]) if size else None
    fn, grid, block, tail = first
    fn(grid, block, (plan.base, out, partial, shift, *tail))
    if finish is not None:
        fn, grid, block, tail = finish
        fn(grid, block, (partial, out, shift, *tail))
    return out


class _ReducePlan:
    """``reduce`` of an array read in place whose results come out in order: ``first`` (and
    ``finish``) of ``_schedule`` into a new array of ``out_shape``."""

    __slots__ = ("empty", "out_shape", "dtype", "acc", "size", "first", "finish")

    def __init__(self, code: int, plan: _Plan, dtype: str, scale: float,
                 out_shape: tuple[int, ...]) -> None:
        self.empty, self.out_shape, self.dtype, self.acc = _cupy().empty, out_shape, dtype, \
            _ACC[dtype]
        self.size, self.first, self.finish = _schedule(code, plan, dtype, scale)

    def run(self, x: Any) -> Any:
        out = self.empty(self.out_shape, self.dtype)
        partial = self.empty(self.size, self.acc) if self.size else None
        fn, grid, block, tail = self.first
        fn(grid, block, (x, out, partial, None, *tail))
        if self.finish is not None:
            fn, grid, block, tail = self.finish
            fn(grid, block, (partial, out, None, *tail))
        return out


_PLANS: dict[tuple[Any, ...], Any] = {}
_REFERENCE = object()  # the plan of a reduction ``_reduce`` serves each time


def _plan_reduce(key: tuple[Any, ...], op: str, x: Any, axis: Any, keepdims: bool,
                 dtype: str) -> Any:
    """Make and keep the plan for ``key``: a ``_ReducePlan``, or ``_REFERENCE`` for the rare
    cases (empty, single-element or copied reductions, results out of order)."""
    axes = _axes(axis, x.ndim)
    out_shape = _out_shape(x.shape, axes, keepdims)
    r = math.prod(x.shape[k] for k in axes)
    plan: Any = _REFERENCE
    if r > 1 and math.prod(out_shape) > 0:
        layout = _plan(x, axes)
        if layout.base is x and layout.kept == sorted(layout.kept):
            plan = _ReducePlan(_REDUCE_CODES[op], layout, dtype, 1.0 / r, out_shape)
    if len(_PLANS) >= _PLAN_LIMIT:
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


def clear_caches() -> None:
    """Forget the reduction plans (``cuda_kernels.clear_caches`` calls this)."""
    _PLANS.clear()


def _copy_as(x: Any, out_shape: tuple[int, ...]) -> Any:
    return _cupy().array(x, order="C", copy=True).reshape(out_shape)


def reduce(op: str, x: Any, axis: int | tuple[int, ...] | None = None,
           keepdims: bool = False) -> Any:
    """sum, mean, max, min or prod of ``x`` over ``axis`` (None: all), as NumPy's.

    Empty reduced extent: sum 0, prod 1, mean NaN; max and min raise ValueError as NumPy does.
    float16 accumulates in float32. max/min propagate NaN.
    """
    if op not in REDUCE_OPS:
        raise ValueError(f"unknown reduction {op!r}; expected one of {REDUCE_OPS}")
    dtype = _common_dtype(x)
    plan: Any
    if _kernels.USE_PLANS:
        try:  # NOTE: everything the plan depends on but the pointer
            key = (op, dtype, _kernels._get_device(), x.shape, x.strides, axis, keepdims)
            plan = _PLANS.get(key)
        except TypeError:  # an unhashable axis (a list)
            plan = _REFERENCE
        else:
            if plan is None:
                plan = _plan_reduce(key, op, x, axis, keepdims, dtype)
        if plan is not _REFERENCE:
            return plan.run(x)
    return _reduce(op, x, axis, keepdims, dtype)


def _reduce(op: str, x: Any, axis: Any, keepdims: bool, dtype: str) -> Any:
    """``reduce``, worked out from scratch."""
    cp = _cupy()
    axes = _axes(axis, x.ndim)
    out_shape = _out_shape(x.shape, axes, keepdims)
    r = math.prod(x.shape[k] for k in axes)
    if r == 0 and math.prod(out_shape) > 0:
        if op in ("max", "min"):
            name = "maximum" if op == "max" else "minimum"
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        return cp.full(out_shape, {"sum": 0.0, "prod": 1.0, "mean": math.nan}[op], dtype)
    if math.prod(out_shape) == 0:
        return cp.empty(out_shape, dtype)
    if r == 1:
        return _copy_as(x, out_shape)
    plan = _plan(x, axes)
    if plan.kept == sorted(plan.kept):  # results in order: written in out_shape directly
        return _reduce_items(_REDUCE_CODES[op], plan, dtype, 1.0 / r, out_shape=out_shape)
    flat = _reduce_items(_REDUCE_CODES[op], plan, dtype, 1.0 / r)
    return _restore(flat, x.shape, plan.kept, out_shape)


def logsumexp(x: Any, axis: int | tuple[int, ...] | None, keepdims: bool = False) -> Any:
    """``log(sum(exp(x)))`` over ``axis``, computed as ``max + log(sum(exp(x - max)))``.

    An empty reduced extent gives -inf, as torch.logsumexp.
    """
    cp = _cupy()
    dtype = _common_dtype(x)
    axes = _axes(axis, x.ndim)
    out_shape = _out_shape(x.shape, axes, keepdims)
    r = math.prod(x.shape[k] for k in axes)
    if math.prod(out_shape) == 0:
        return cp.empty(out_shape, dtype)
    if r == 0:
        return cp.full(out_shape, -math.inf, dtype)
    if r == 1:
        return _copy_as(x, out_shape)
    plan = _plan(x, axes)
    row_max = _reduce_items(_R_MAX, plan, dtype, 1.0)
    flat = _reduce_items(_R_LOGSUMEXP, plan, dtype, 1.0, shift=row_max)
    return _restore(flat, x.shape, plan.kept, out_shape)


def arg_reduce(op: str, x: Any, axis: int | None,
               keepdims: bool = False) -> tuple[Any, Any]:
    """(values, int64 indices) of the max (``op="max"``) or min along ``axis``; None: over the
    flattened array. NaN wins (the first NaN); ties give the first index, as torch."""
    if op not in ("max", "min"):
        raise ValueError(f"arg_reduce op must be 'max' or 'min', not {op!r}")
    cp = _cupy()
    dtype = _common_dtype(x)
    if axis is None:
        out_shape: tuple[int, ...] = (1,) * x.ndim if keepdims else ()
        if x.size == 0:
            raise ValueError(f"attempt to get arg{op} of an empty sequence")
        plan = _Plan(_contiguous(x), 1, x.size, 1, [])
    else:
        axes = _axes(axis, x.ndim)
        out_shape = _out_shape(x.shape, axes, keepdims)
        r = math.prod(x.shape[k] for k in axes)
        if math.prod(out_shape) == 0:
            return cp.empty(out_shape, dtype), cp.empty(out_shape, np.int64)
        if r == 0:
            raise ValueError(f"attempt to get arg{op} of an empty sequence")
        if r == 1:
            return _copy_as(x, out_shape), cp.zeros(out_shape, np.int64)
        plan = _plan(x, axes)
    values, indices = _arg_items(op == "max", plan, dtype)
    return (_restore(values, x.shape, plan.kept, out_shape),
            _restore(indices, x.shape, plan.kept, out_shape))


def _arg_items(is_max: bool, plan: _Plan, dtype: str) -> tuple[Any, Any]:
    cp = _cupy()
    items = plan.outer * plan.inner
    sms = _sm_count()
    flag = np.int32(is_max)
    if plan.inner == 1:
        splits, chunk = _split(items, plan.r, sms * 64, 1024)
        values, indices = cp.empty(items * splits, dtype), cp.empty(items * splits, np.int64)
        _launch_groups("arg_reduce_rows", dtype, items * splits, _group_for(chunk),
                       (plan.base, None, values, indices, np.int64(items), np.int64(plan.r),
                        np.int64(splits), np.int64(chunk), flag))
    else:
        splits, chunk = _split(items, plan.r, sms * 2048, 32)
        values, indices = cp.empty(items * splits, dtype), cp.empty(items * splits, np.int64)
        _launch("arg_reduce_cols", dtype, items * splits,
                (plan.base, values, indices, np.int64(plan.outer), np.int64(plan.r),
                 np.int64(plan.inner), np.int64(splits), np.int64(chunk), flag))
    if splits == 1:
        return values, indices
    final_values, final_indices = cp.empty(items, dtype), cp.empty(items, np.int64)
    _launch_groups("arg_reduce_rows", dtype, items, _group_for(splits),
                   (values, indices, final_values, final_indices, np.int64(items),
                    np.int64(splits), np.int64(1), np.int64(splits), flag))
    return final_values, final_indices


# ---- softmax and cross-entropy -----------------------------------------------------------


def _along(x: Any, axis: int) -> tuple[Any, int, int, int]:
    """(C-contiguous x, outer, C, inner) for normalising over ``axis``."""
    if x.ndim == 0:
        _axes(axis, 0)
        return _contiguous(x), 1, 1, 1
    (axis,) = _axes(axis, x.ndim)
    shape = x.shape
    return (_contiguous(x), math.prod(shape[:axis]), shape[axis],
            math.prod(shape[axis + 1:]))


def _softmax(x: Any, axis: int, log: bool) -> Any:
    dtype = _common_dtype(x)
    out = _cupy().empty(x.shape, dtype)
    if x.size == 0:
        return out
    base, outer, c, inner = _along(x, axis)
    if inner == 1:
        _launch_groups("softmax_rows", dtype, outer, _group_for(c),
                       (base, out, np.int64(outer), np.int64(c), np.int32(log)))
    else:
        _launch("softmax_cols", dtype, outer * inner,
                (base, out, np.int64(outer), np.int64(c), np.int64(inner), np.int32(log)))
    return out


def _softmax_backward(out: Any, grad: Any, axis: int, log: bool) -> Any:
    cp = _cupy()
    dtype = _common_dtype(out, grad)
    if out.shape != grad.shape:
        raise ValueError(f"grad shape {grad.shape} != output shape {out.shape} in softmax backward")
    grad_x = cp.empty(out.shape, dtype)
    if out.size == 0:
        return grad_x
    base, outer, c, inner = _along(out, axis)
    grad = _contiguous(grad)
    if inner == 1:
        _launch_groups("softmax_backward_rows", dtype, outer, _group_for(c),
                       (base, grad, grad_x, np.int64(outer), np.int64(c), np.int32(log)))
    else:
        _launch("softmax_backward_cols", dtype, outer * inner,
                (base, grad, grad_x, np.int64(outer), np.int64(c), np.int64(inner),
                 np.int32(log)))
    return grad_x


def softmax(x: Any, axis: int) -> Any:
    """``exp(x - max) / sum(exp(x - max))`` along ``axis``."""
    return _softmax(x, axis, False)


def log_softmax(x: Any, axis: int) -> Any:
    """``(x - max) - log(sum(exp(x - max)))`` along ``axis``."""
    return _softmax(x, axis, True)


def softmax_backward(out: Any, grad: Any, axis: int) -> Any:
    """grad_x of softmax from its output: ``out * (grad - sum(grad * out, axis))``."""
    return _softmax_backward(out, grad, axis, False)


def log_softmax_backward(out: Any, grad: Any, axis: int) -> Any:
    """grad_x of log_softmax from its output: ``grad - exp(out) * sum(grad, axis)``."""
    return _softmax_backward(out, grad, axis, True)


def _target(target: Any, n: int) -> Any:
    if target.shape != (n,):
        raise ValueError(f"target shape {target.shape} != ({n},) for {n} rows of logits")
    return _contiguous(target if target.dtype == np.int64 else target.astype(np.int64))


def cross_entropy(logits: Any, target: Any, ignore_index: int = -100) -> tuple[Any, Any]:
    """Per-row ``loss = logsumexp(logits[i]) - logits[i, target[i]]`` and the row logsumexp.

    logits: (N, C); target: (N,) integer class indices. Rows whose target is ``ignore_index``
    get loss 0; a target outside [0, C) gives NaN. Returns (loss, lse), both (N,) of logits'
    dtype; lse is what the backward needs.
    """
    cp = _cupy()
    dtype = _common_dtype(logits)
    if logits.ndim != 2:
        raise ValueError(f"cross_entropy expects logits of shape (N, C), got {logits.shape}")
    n, c = logits.shape
    target = _target(target, n)
    loss, lse = cp.empty(n, dtype), cp.empty(n, dtype)
    if n == 0:
        return loss, lse
    if c == 0:
        raise ValueError("cross_entropy needs at least one class (C == 0)")
    _launch_groups("cross_entropy_forward", dtype, n, _group_for(c),
                   (_contiguous(logits), target, loss, lse, np.int64(n), np.int64(c),
                    np.int64(ignore_index)))
    return loss, lse


def cross_entropy_backward(logits: Any, target: Any, lse: Any, grad_loss: Any,
                           ignore_index: int = -100) -> Any:
    """grad_logits = ``(softmax(logits) - onehot(target)) * grad_loss[:, None]``, 0 on ignored
    rows. ``lse`` is cross_entropy's second result; ``grad_loss`` is (N,) or 0-d (broadcast)."""
    cp = _cupy()
    dtype = _common_dtype(logits)
    n, c = logits.shape
    target = _target(target, n)
    grad_logits = cp.empty((n, c), dtype)
    if n * c == 0:
        return grad_logits
    if dtype_name(grad_loss.dtype) != dtype:
        grad_loss = grad_loss.astype(dtype)
    if grad_loss.ndim == 0:
        stride = 0
    elif grad_loss.shape == (n,):
        stride = grad_loss.strides[0] // grad_loss.itemsize
    else:
        raise ValueError(f"grad_loss shape {grad_loss.shape} is neither () nor ({n},)")
    lse = _contiguous(lse if dtype_name(lse.dtype) == dtype else lse.astype(dtype))
    _launch("cross_entropy_backward", dtype, n * c,
            (_contiguous(logits), target, lse, grad_loss, np.int64(stride),
             grad_logits, np.int64(n), np.int64(c), np.int64(ignore_index)))
    return grad_logits
