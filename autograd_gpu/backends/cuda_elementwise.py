"""Our elementwise kernels' launchers (``kernels/elementwise.cu``): ``unary``, ``unary_backward``,
``binary`` and ``where``, re-exported by ``cuda_kernels`` (loading, dtype checks and the launch
helpers are there; the layout work is ``cuda_layout``'s).

The launchers take operands of any strides (transposed, sliced, broadcast views) and give a new
result PyTorch's layout (see ``kernels/README.md``). What a launch needs besides the operands'
pointers depends only on the operands' layouts (shapes, strides), the out= array's layout and
dtype, the kernel's dtype and the device: the result's shape and order, the kernel (flat or
strided), the grid, the collapsed shape/stride arguments. ``cuda_layout._into`` works that out
on every call; ``_execute`` works it out once per such key and keeps it (``_PLANS``), so that
a launch is a dict lookup, one allocation and the kernel call. ``cuda_kernels.USE_PLANS =
False`` sends every call through ``_into`` (the reference the plans are tested against).

The public launchers check their arguments; their ``_`` twins (``_unary``,
``binary_if_supported``) are what the CuPy backend calls once its own checks have passed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import cuda_kernels as _kernels
from .composite import inverse_perm
from .cuda_kernels import (
    _BLOCK, _CTYPE, _DTYPE_NAMES, _PLAN_LIMIT, _THREADS, BINARY_OPS, UNARY_BACKWARD_OPS,
    UNARY_OPS, _common_dtype, _cupy, _entry, _ndarray, dtype_name,
)
from .cuda_layout import (
    _broadcast_shape, _check_out, _dense_outer, _element_strides, _into, _is_flat, _iter_outer,
    _layout, _span, _views,
)


_FIRST_COMPARISON = BINARY_OPS.index("eq")
_OPMATH_CODES = (BINARY_OPS.index("mul"), BINARY_OPS.index("div"))  # see _scalar
_BINARY_CODES = {op: k for k, op in enumerate(BINARY_OPS)}
_UNARY_CODES = {op: k for k, op in enumerate(UNARY_OPS)}
# The kernels' int/double arguments that never change, made once (NumPy scalars cost ~0.1 us)
_I32 = [np.int32(k) for k in range(max(len(BINARY_OPS), len(UNARY_OPS)))]
_ZERO, _ONE = np.float64(0.0), np.float64(1.0)
_BOOL = np.dtype(np.bool_)
_DTYPES = {name: np.dtype(name) for name in ("float16", "float32", "float64")}


# ---- plans (the cached path) -----------------------------------------------------------------


class _Unplanned(Exception):
    """A layout the plans do not cover (over 6 dims after merging): ``_into`` serves it."""


class _Launch:
    """How to launch into a C-contiguous destination of ``dest_shape`` whatever the pointers:
    the kernel function, grid, element count and the collapsed layout arguments (empty for
    the flat kernel). The operands are passed as they are: a broadcast or transposed view has
    its array's pointer, and the layout arguments carry the view's strides."""

    __slots__ = ("fn", "grid", "n", "tail")

    def __init__(self, kernel: str, dtype: str, dest_shape: tuple[int, ...],
                 operands: list[Any]) -> None:
        n = math.prod(dest_shape)
        tail: tuple[Any, ...] = ()
        if not _is_flat(operands, dest_shape):
            layout = _layout(dest_shape, operands)
            if layout is None:
                raise _Unplanned
            kernel, tail = kernel + "_strided", layout
        fn, cap = _entry(kernel, dtype)
        self.fn, self.n, self.tail = fn, np.int64(n), tail
        self.grid = (max(1, min(-(-n // _THREADS), cap)),)


class _NewPlan:
    """A new result: ``empty(dest_shape)``, one launch, ``transpose(inverse)`` if set."""

    __slots__ = ("empty", "out_dtype", "dest_shape", "inverse", "launch")

    def __init__(self, kernel: str, dtype: str, out_dtype: Any, shape: tuple[int, ...],
                 operands: list[Any]) -> None:
        outer = None if _is_flat(operands, shape) else _iter_outer(shape, operands)
        self.empty, self.out_dtype = _cupy().empty, out_dtype
        self.dest_shape = shape if outer is None else tuple(shape[d] for d in outer)
        self.inverse = None if outer is None else inverse_perm(outer)
        self.launch = _Launch(kernel, dtype, self.dest_shape, _views(operands, outer, shape))

    def run(self, operands: tuple[Any, ...], params: tuple[Any, ...], out: Any) -> Any:
        launch = self.launch
        dest = self.empty(self.dest_shape, self.out_dtype)
        launch.fn(launch.grid, _BLOCK, (*operands, dest, launch.n, *params, *launch.tail))
        return dest if self.inverse is None else dest.transpose(self.inverse)


class _OutPlan:
    """A result written into ``out``: in place when no operand aliases it unsafely (``direct``:
    out itself is the C-contiguous destination, or a permutation of it is), else through a new
    C-contiguous buffer (``buffered``). ``spans`` (offsets from each array's pointer) and
    ``same`` (an operand read at exactly the element written) decide aliasing per call."""

    __slots__ = ("shape", "out_dtype", "direct", "buffered", "out_span", "spans", "same")

    def __init__(self, kernel: str, dtype: str, out_dtype: Any, shape: tuple[int, ...],
                 operands: list[Any], out: Any) -> None:
        self.shape, self.out_dtype = shape, out_dtype
        self.direct: _Launch | None = None
        if out.flags.c_contiguous:
            self.direct = _Launch(kernel, dtype, shape, operands)
        else:
            outer = _dense_outer(out)
            if outer is not None:
                self.direct = _Launch(kernel, dtype, out.transpose(outer).shape,
                                      _views(operands, outer, shape))
        self.buffered = _Launch(kernel, dtype, shape, operands)
        self.out_span = _span(out)
        self.spans: tuple[Any, ...] = tuple(None if a is None else _span(a) for a in operands)
        out_strides = _element_strides(out, shape)
        self.same = tuple(a is not None and _element_strides(a, shape) == out_strides
                          for a in operands)

    def in_place(self, out: Any, operands: tuple[Any, ...]) -> bool:
        """No operand overlaps ``out`` other than element for element (``_unsafe_alias``)."""
        ptr = lo = hi = 0
        for a, span, same in zip(operands, self.spans, self.same):
            if a is None or (a is out and same):
                continue
            if not ptr:
                ptr = out.data.ptr
                lo, hi = ptr + self.out_span[0], ptr + self.out_span[1]
            a_ptr = a.data.ptr
            if a_ptr + span[1] <= lo or hi <= a_ptr + span[0]:
                continue
            if not (same and a_ptr == ptr):
                return False
        return True

    def run(self, operands: tuple[Any, ...], params: tuple[Any, ...], out: Any) -> Any:
        if self.direct is not None and self.in_place(out, operands):
            launch = self.direct
            launch.fn(launch.grid, _BLOCK, (*operands, out, launch.n, *params, *launch.tail))
            return out
        launch = self.buffered
        cp = _cupy()
        dest = cp.empty(self.shape, self.out_dtype)
        launch.fn(launch.grid, _BLOCK, (*operands, dest, launch.n, *params, *launch.tail))
        cp.copyto(out, dest)
        return out


class _OtherPlan:
    """An empty result (``empty``: out itself, or a new empty array), or a layout the plans do
    not cover (``_into`` serves it)."""

    __slots__ = ("kernel", "dtype", "out_dtype", "shape", "empty")

    def __init__(self, kernel: str, dtype: str, out_dtype: Any, shape: tuple[int, ...],
                 empty: bool) -> None:
        self.kernel, self.dtype, self.out_dtype = kernel, dtype, out_dtype
        self.shape, self.empty = shape, empty

    def run(self, operands: tuple[Any, ...], params: tuple[Any, ...], out: Any) -> Any:
        if not self.empty:
            return _into(self.kernel, self.dtype, self.shape, self.out_dtype, list(operands),
                         params, out)
        return out if out is not None else _cupy().empty(self.shape, self.out_dtype)


_PLANS: dict[tuple[Any, ...], Any] = {}


def _execute(key: tuple[Any, ...], dtype: str, out_dtype: Any, operands: tuple[Any, ...],
         params: tuple[Any, ...], out: Any) -> Any:
    """Launch ``key[0]`` (the kernel) on ``operands`` through the plan kept for ``key``, made
    on first use; with ``USE_PLANS`` off, through ``_into`` every time.

    NOTE: a key is everything a plan depends on besides pointers: kernel, dtype (every operand
    has it, except ``where``'s condition, always bool), device, out's shape, strides and dtype
    (None without out), each operand's shape and strides (None for a Python scalar).
    """
    use_plans = _kernels.USE_PLANS
    plan = _PLANS.get(key) if use_plans else None
    if plan is None:
        kernel = key[0]
        ops = list(operands)
        shape = _broadcast_shape(*(a.shape for a in ops if a is not None))
        if not use_plans:
            return _into(kernel, dtype, shape, out_dtype, ops, params, out)
        if out is not None:
            shape = _check_out(shape, out_dtype, out)
        try:
            if math.prod(shape) == 0:
                plan = _OtherPlan(kernel, dtype, out_dtype, shape, True)
            elif out is None:
                plan = _NewPlan(kernel, dtype, out_dtype, shape, ops)
            else:
                plan = _OutPlan(kernel, dtype, out_dtype, shape, ops, out)
        except _Unplanned:
            plan = _OtherPlan(kernel, dtype, out_dtype, shape, False)
        if len(_PLANS) >= _PLAN_LIMIT:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan.run(operands, params, out)


# ---- scalars and checks ----------------------------------------------------------------------

_NP_FLOAT: dict[str, Any] = {"float16": np.float16, "float32": np.float32}
_FINITE_MAX = {"float16": 65504.0, "float32": 3.4028234663852886e38}
_SCALARS: dict[tuple[float, str, bool], np.float64] = {}


def _scalar(v: Any, dtype: str, opmath: bool = False) -> np.float64:
    """A Python scalar operand as the double the kernels take, first rounded to ``dtype`` (as
    torch gives a Python scalar the tensor's dtype), or with ``opmath`` (float16 ``*`` and
    ``/``) to float32, the type the kernels compute float16 in, as PyTorch's CPU kernels take
    it (``x * 1e-8`` in float16 is not 0; ``x + 1e-8`` adds the float16 0). Kept per value."""
    value = float(v)
    key = (value, dtype, opmath)
    # NOTE: 0.0 and -0.0 are one dict key: zeros are not kept (their sign matters: x * -0.0)
    out = _SCALARS.get(key) if value else None
    if out is not None:
        return out
    if dtype == "float64":
        out = np.float64(value)
    else:
        target = "float32" if opmath else dtype
        if abs(value) <= _FINITE_MAX[target] or not math.isfinite(value):
            out = np.float64(_NP_FLOAT[target](value))
        else:
            with np.errstate(over="ignore"):
                out = np.float64(_NP_FLOAT[target](value))
    if value:
        if len(_SCALARS) >= 1024:
            _SCALARS.clear()
        _SCALARS[key] = out
    return out


def _f64(v: Any) -> np.float64:
    """``np.float64(v)``; the common +0.0 made once."""
    return _ZERO if v.__class__ is float and v == 0.0 and math.copysign(1.0, v) > 0 else \
        np.float64(v)


def _op_code(codes: dict[str, int], op: str, what: str) -> int:
    code = codes.get(op)
    if code is None:
        raise ValueError(f"unknown {what} op {op!r}; expected one of {tuple(codes)}")
    return code


def array_dtype(x: Any) -> str | None:
    """The kernel dtype name of ``x`` when it is a cupy array of one (``supported(x)``), else
    None."""
    if isinstance(x, _ndarray()):
        name = _DTYPE_NAMES.get(x.dtype) or dtype_name(x.dtype)
        if name in _CTYPE:
            return name
    return None


# ---- the launchers ---------------------------------------------------------------------------
# Each public launcher checks its arguments and calls its ``_`` twin, which the CuPy backend
# calls directly once it has checked them itself.


def unary(op: str, x: Any, param: float = 0.0) -> Any:
    """``op(x)`` elementwise (``param``: leaky_relu's slope, elu's alpha)."""
    return _unary(_op_code(_UNARY_CODES, op, "unary"), x, _common_dtype(x), param)


def _unary(code: int, x: Any, dtype: str, param: float = 0.0) -> Any:
    key = ("unary", dtype, _kernels._get_device(), None, (x.shape, x.strides))
    return _execute(key, dtype, x.dtype, (x,), (_I32[code], _f64(param)), None)


def unary_backward(op: str, saved: Any, grad: Any, param: float = 0.0) -> Any:
    """grad_x of ``op`` from ``saved`` (x or out, per ``UNARY_BACKWARD_OPS[op]``) and ``grad``."""
    if op not in UNARY_BACKWARD_OPS:
        raise ValueError(f"no backward kernel for {op!r}; "
                         f"expected one of {list(UNARY_BACKWARD_OPS)}")
    if saved.shape != grad.shape:
        raise ValueError(f"saved shape {saved.shape} != grad shape {grad.shape} in {op} backward")
    dtype = _common_dtype(saved, grad)
    key = ("unary_backward", dtype, _kernels._get_device(), None, (saved.shape, saved.strides),
           (grad.shape, grad.strides))
    return _execute(key, dtype, saved.dtype, (saved, grad),
                (_I32[_UNARY_CODES[op]], _f64(param)), None)


def binary(op: str, x: Any, y: Any, alpha: float | None = None, out: Any = None) -> Any:
    """``x op y`` with NumPy broadcasting; x or y may be a Python scalar (not both).

    add/sub take ``alpha``: ``x + alpha * y`` / ``x - alpha * y``. Comparisons return bool.
    maximum/minimum propagate NaN. ``out`` (broadcast shape, result dtype) receives the result,
    also when it is ``x`` itself (in-place ops).
    """
    code = _op_code(_BINARY_CODES, op, "binary")
    if alpha is not None and op not in ("add", "sub"):
        raise ValueError(f"alpha is only for add and sub, not {op!r}")
    nd = _ndarray()
    xa = x if isinstance(x, nd) else None
    ya = y if isinstance(y, nd) else None
    return _binary(code, x, y, xa, ya, _common_dtype(xa, ya), alpha, out)


def binary_if_supported(code: int, x: Any, y: Any, alpha: float | None = None,
                        out: Any = None) -> Any:
    """``binary`` (op by code) when ``supported(x, y)`` and ``out`` is None or a cupy array of
    their dtype; else None (the caller's fallback serves it). ``alpha`` only for add/sub."""
    nd = _ndarray()
    names = _DTYPE_NAMES
    if isinstance(x, nd):
        xa, dtype = x, names.get(x.dtype) or dtype_name(x.dtype)
        if isinstance(y, nd):
            ya = y
            if (names.get(y.dtype) or dtype_name(y.dtype)) != dtype:
                return None
        elif isinstance(y, (int, float)):
            ya = None
        else:
            return None
    elif isinstance(x, (int, float)) and isinstance(y, nd):
        xa, ya, dtype = None, y, names.get(y.dtype) or dtype_name(y.dtype)
    else:
        return None
    if dtype not in _CTYPE or (out is not None and not (
            isinstance(out, nd) and (names.get(out.dtype) or dtype_name(out.dtype)) == dtype)):
        return None
    return _binary(code, x, y, xa, ya, dtype, alpha, out)


def _binary(code: int, x: Any, y: Any, xa: Any, ya: Any, dtype: str, alpha: float | None,
            out: Any) -> Any:
    opmath = code in _OPMATH_CODES
    xv = _ZERO if xa is not None else _scalar(x, dtype, opmath)
    yv = _ZERO if ya is not None else _scalar(y, dtype, opmath)
    flags = _I32[(xa is None) | (ya is None) << 1]
    compare = code >= _FIRST_COMPARISON
    key = ("compare" if compare else "binary", dtype, _kernels._get_device(),
           None if out is None else (out.shape, out.strides, out.dtype),
           None if xa is None else (xa.shape, xa.strides),
           None if ya is None else (ya.shape, ya.strides))
    if compare:
        return _execute(key, dtype, _BOOL, (xa, ya), (_I32[code], xv, yv, flags), out)
    # NOTE: alpha rounded to the dtype first, as PyTorch's CPU kernels take it
    alpha_ = _ONE if alpha is None else _scalar(alpha, dtype)
    return _execute(key, dtype, _DTYPES[dtype], (xa, ya), (_I32[code], alpha_, xv, yv, flags), out)


def where(cond: Any, x: Any, y: Any) -> Any:
    """``cond ? x : y`` elementwise with broadcasting; x or y may be a Python scalar."""
    nd = _ndarray()
    xa = x if isinstance(x, nd) else None
    ya = y if isinstance(y, nd) else None
    dtype = _common_dtype(xa, ya)
    if cond.dtype != np.bool_:
        cond = cond.astype(np.bool_)
    params = (_scalar(x, dtype) if xa is None else _ZERO,
              _scalar(y, dtype) if ya is None else _ZERO, _I32[(xa is None) | (ya is None) << 1])
    key = ("where", dtype, _kernels._get_device(), None, (cond.shape, cond.strides),
           None if xa is None else (xa.shape, xa.strides),
           None if ya is None else (ya.shape, ya.strides))
    return _execute(key, dtype, _DTYPES[dtype], (cond, xa, ya), params, None)


def clear_caches() -> None:
    """Forget the plans and scalars (tests; ``cuda_kernels.clear_caches`` calls this)."""
    _PLANS.clear()
    _SCALARS.clear()
