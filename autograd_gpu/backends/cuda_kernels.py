"""Our CUDA kernels (``kernels/*.cu``) and the launchers the CuPy backend calls.

Each ``.cu`` file is compiled by NVRTC through ``cupy.RawModule`` once per (device, file, dtype)
and cached; kernels are looked up by ``get_kernel("unary", "float32")``. The launchers take
``cupy.ndarray`` inputs of any strides (transposed, sliced, broadcast views), handle size 0 and
0-d arrays without launching, and return new arrays: elementwise results laid out as PyTorch's
TensorIterator lays them out (C order for C-contiguous inputs; the kernel itself always writes a
C-contiguous buffer, permuted views of the inputs make that so), the others C-contiguous. Every
launcher has a reference twin, the plain CuPy expression, that
``tests/backends/test_cuda_kernels.py`` compares against.

CuPy is imported on first use only: importing this module needs neither CuPy nor a GPU.
"""

from __future__ import annotations

import math
import pathlib
from typing import Any, NamedTuple

import numpy as np

from .composite import broadcast_strides, inverse_perm, iter_order

KERNEL_DTYPES = ("float16", "float32", "float64")
# C element type per dtype (half_t: float16's bits, see kernels/common.cuh) and the dtype that
# reductions accumulate (and keep their partial results) in.
_CTYPE = {"float16": "half_t", "float32": "float", "float64": "double"}
_ACC = {"float16": "float32", "float32": "float32", "float64": "float64"}

# Every kernel a launcher may request, by file: RawModule name_expressions are built from this.
KERNELS: dict[str, tuple[str, ...]] = {
    "elementwise.cu": ("unary", "unary_strided", "unary_backward", "unary_backward_strided",
                       "binary", "binary_strided", "compare", "compare_strided",
                       "where", "where_strided"),
    "reduce.cu": ("reduce_rows", "reduce_finish", "reduce_cols", "arg_reduce_rows",
                  "arg_reduce_cols"),
    "softmax.cu": ("softmax_rows", "softmax_cols", "softmax_backward_rows",
                   "softmax_backward_cols", "cross_entropy_forward", "cross_entropy_backward"),
}
_FILE_OF = {name: file for file, names in KERNELS.items() for name in names}
_OPTIONS = ("-std=c++17",)
_INCLUDE = '#include "common.cuh"'

# Op codes are positions in these tuples; they match the enums of elementwise.cu / reduce.cu
# (a CPU test checks the two stay in step).
UNARY_OPS: tuple[str, ...] = (
    "neg", "abs", "sign", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal",
    "sin", "cos", "tanh", "sigmoid", "relu", "silu", "gelu", "gelu_tanh", "erf", "floor",
    "leaky_relu", "elu",
)
# What each op's backward reads: the forward input ("x") or output ("out").
UNARY_BACKWARD_OPS: dict[str, str] = {
    "neg": "x", "abs": "x", "sign": "x", "exp": "out", "log": "x", "log1p": "x", "expm1": "out",
    "sqrt": "out", "rsqrt": "out", "reciprocal": "out", "sin": "x", "cos": "x", "tanh": "out",
    "sigmoid": "out", "relu": "out", "silu": "x", "gelu": "x", "gelu_tanh": "x", "erf": "x",
    "floor": "x", "leaky_relu": "x", "elu": "x",
}
BINARY_OPS: tuple[str, ...] = (
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
)
_FIRST_COMPARISON = BINARY_OPS.index("eq")
_OPMATH_CODES = (BINARY_OPS.index("mul"), BINARY_OPS.index("div"))  # see _scalar
REDUCE_OPS = ("sum", "mean", "max", "min", "prod")
_REDUCE_CODES = {"sum": 0, "mean": 1, "max": 2, "min": 3, "prod": 4, "logsumexp": 5}
_R_MAX, _R_LOGSUMEXP = _REDUCE_CODES["max"], _REDUCE_CODES["logsumexp"]

_THREADS = 256
_MAX_DIMS = 6  # collapsed dims the *_strided kernels address
_MAX_SPLITS = 8192  # chunks one reduction item may be cut into (partials per item)


# ---- loading -------------------------------------------------------------------------------


def kernel_dir() -> pathlib.Path:
    """The folder holding the ``.cu`` files: the installed package's ``autograd_gpu/_kernels``
    (a wheel maps ``kernels/`` there), else the repository's top-level ``kernels/``."""
    package = pathlib.Path(__file__).resolve().parent.parent
    for candidate in (package / "_kernels", package.parent / "kernels"):
        if (candidate / "common.cuh").is_file():
            return candidate
    raise FileNotFoundError(
        f"CUDA kernel sources not found in {package / '_kernels'} or {package.parent / 'kernels'};"
        " reinstall autograd_gpu (the wheel ships them as autograd_gpu/_kernels)"
    )


_sources: dict[str, str] = {}


def kernel_source(file: str) -> str:
    """The text NVRTC compiles for ``file``: the file with ``common.cuh`` pasted in.

    NOTE: pasted rather than passed as an include path, because CuPy's on-disk kernel cache is
    keyed by the source text: an edit of common.cuh must change that key.
    """
    text = _sources.get(file)
    if text is None:
        folder = kernel_dir()
        text = (folder / file).read_text()
        text = text.replace(_INCLUDE, (folder / "common.cuh").read_text())
        _sources[file] = text
    return text


def name_expressions(file: str, dtype: str) -> list[str]:
    """The template instantiations one module provides, e.g. ``["unary<float>", ...]``."""
    return [f"{name}<{_CTYPE[dtype]}>" for name in KERNELS[file]]


_cupy_module: list[Any] = []


def _cupy() -> Any:
    if not _cupy_module:
        import cupy

        _cupy_module.append(cupy)
    return _cupy_module[0]


def _cupy_or_none() -> Any:
    try:
        return _cupy()
    except ImportError:
        return None


_modules: dict[tuple[int, str, str], Any] = {}
_functions: dict[tuple[int, str, str], Any] = {}
_sm_counts: dict[int, int] = {}


def get_kernel(name: str, dtype: str) -> Any:
    """The ``cupy.RawKernel`` ``name<T>`` for ``dtype`` on the current device.

    Its file is compiled once per (device, file, dtype), on first use; NVRTC errors name the file.
    """
    file = _FILE_OF.get(name)
    if file is None:
        raise ValueError(f"unknown kernel {name!r}; known kernels: {sorted(_FILE_OF)}")
    if dtype not in _CTYPE:
        raise ValueError(f"kernel {name!r} has no {dtype} version; dtypes: {KERNEL_DTYPES}")
    cp = _cupy()
    device = cp.cuda.runtime.getDevice()
    fn = _functions.get((device, name, dtype))
    if fn is not None:
        return fn
    module = _modules.get((device, file, dtype))
    if module is None:
        module = cp.RawModule(code=kernel_source(file), options=_OPTIONS,
                              name_expressions=name_expressions(file, dtype))
        _modules[(device, file, dtype)] = module
    try:
        fn = module.get_function(f"{name}<{_CTYPE[dtype]}>")
    except Exception as e:  # noqa: BLE001  (cupy's CompileException and friends)
        raise RuntimeError(f"NVRTC could not compile kernels/{file} for {dtype}: {e}") from e
    _functions[(device, name, dtype)] = fn
    return fn


def _sm_count() -> int:
    cp = _cupy()
    device = cp.cuda.runtime.getDevice()
    count = _sm_counts.get(device)
    if count is None:
        count = int(cp.cuda.runtime.getDeviceProperties(device)["multiProcessorCount"])
        _sm_counts[device] = count
    return count


def _blocks(units: int, per_block: int = _THREADS) -> int:
    """Grid size for a grid-stride loop: enough blocks to fill the GPU, no more than needed."""
    return max(1, min(-(-units // per_block), _sm_count() * 32))


def _launch(name: str, dtype: str, units: int, args: tuple[Any, ...]) -> None:
    """1-D launch: one thread per unit (grid-stride, 256 threads per block)."""
    get_kernel(name, dtype)((_blocks(units),), (_THREADS,), args)


def _launch_groups(name: str, dtype: str, units: int, group: int, args: tuple[Any, ...]) -> None:
    """Launch with a group of ``group`` threads (32 or 256) per unit, 256 threads per block."""
    per_block = _THREADS // group
    get_kernel(name, dtype)((_blocks(units, per_block),), (group, per_block), args)


_DTYPE_NAMES: dict[Any, str] = {}


def dtype_name(dt: Any) -> str:
    """``dt.name``, cached by the dtype object: NumPy computes ``.name`` in Python on every
    access (microseconds, several times per launch otherwise)."""
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = dt.name
    return name


def supported(*xs: Any) -> bool:
    """True when the kernels can serve these operands: each a cupy array or a Python int/float,
    at least one array, and all arrays of one dtype in ``KERNEL_DTYPES``."""
    cp = _cupy_or_none()
    if cp is None:
        return False
    dtype = None
    for x in xs:
        if isinstance(x, cp.ndarray):
            name = dtype_name(x.dtype)
            if name not in KERNEL_DTYPES or (dtype is not None and name != dtype):
                return False
            dtype = name
        elif not isinstance(x, (int, float)):
            return False
    return dtype is not None


# ---- elementwise -------------------------------------------------------------------------


def _broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for k, size in enumerate(s, ndim - len(s)):
            if size != 1:
                if out[k] not in (1, size):
                    raise ValueError(f"shapes {shapes} cannot be broadcast together")
                out[k] = size
    return tuple(out)


def _element_strides(a: Any, shape: tuple[int, ...]) -> list[int]:
    """``a``'s strides in elements within the broadcast frame ``shape`` (0 where broadcast)."""
    strides = [0] * len(shape)
    first, itemsize = len(shape) - a.ndim, a.itemsize
    for k, (size, stride) in enumerate(zip(a.shape, a.strides)):
        if size != 1:
            strides[first + k] = stride // itemsize
    return strides


def _layout(shape: tuple[int, ...], operands: list[Any]) -> tuple[Any, ...] | None:
    """Kernel args ``nd, d0..d5, <6 strides per operand>`` for a C-contiguous output of
    ``shape``, dims of size 1 dropped and neighbours merged where every operand allows; None if
    more than 6 dims remain. A None operand (a scalar) gets stride 0."""
    per_operand = [[0] * len(shape) if a is None else _element_strides(a, shape) for a in operands]
    dims: list[int] = []
    cols: list[list[int]] = [[] for _ in operands]
    for k, size in enumerate(shape):
        if size == 1:
            continue
        if dims and all(c[-1] == s[k] * size for c, s in zip(cols, per_operand)):
            dims[-1] *= size
            for c, s in zip(cols, per_operand):
                c[-1] = s[k]
        else:
            dims.append(size)
            for c, s in zip(cols, per_operand):
                c.append(s[k])
    if len(dims) > _MAX_DIMS:
        return None
    if not dims:
        dims, cols = [1], [[0] for _ in operands]
    pad = _MAX_DIMS - len(dims)
    args: list[Any] = [np.int32(len(dims))]
    args += [np.int64(d) for d in [1] * pad + dims]
    for c in cols:
        args += [np.int64(s) for s in [0] * pad + c]
    return tuple(args)


def _extent(a: Any) -> tuple[int, int]:
    lo = hi = a.data.ptr
    for size, stride in zip(a.shape, a.strides):
        if size > 1:
            if stride < 0:
                lo += (size - 1) * stride
            else:
                hi += (size - 1) * stride
    return lo, hi + a.itemsize


def _unsafe_alias(out: Any, a: Any, shape: tuple[int, ...]) -> bool:
    """True when writing ``out`` element by element could change what is later read from ``a``:
    they overlap and ``a`` is not read at exactly the element being written."""
    lo, hi = _extent(out)
    a_lo, a_hi = _extent(a)
    if hi <= a_lo or a_hi <= lo:
        return False
    return not (a.data.ptr == out.data.ptr
                and _element_strides(a, shape) == _element_strides(out, shape))


def _run(kernel: str, dtype: str, out: Any, operands: list[Any], params: tuple[Any, ...],
         flat: bool | None = None) -> None:
    """Launch ``kernel`` (all operands C-contiguous with the output's shape: ``flat``, found
    here when None) or ``kernel_strided`` writing the C-contiguous ``out``; None operands are
    scalars in params."""
    n = out.size
    if flat is None:
        flat = all(a is None or (a.shape == out.shape and a.flags.c_contiguous) for a in operands)
    if flat:
        _launch(kernel, dtype, n, (*operands, out, np.int64(n), *params))
        return
    layout = _layout(out.shape, operands)
    if layout is None:  # over 6 dims even after merging: materialise the operands (rare)
        cp = _cupy()
        operands = [None if a is None else cp.ascontiguousarray(cp.broadcast_to(a, out.shape))
                    for a in operands]
        _launch(kernel, dtype, n, (*operands, out, np.int64(n), *params))
        return
    _launch(kernel + "_strided", dtype, n, (*operands, out, np.int64(n), *params, *layout))


def _run_in_order(kernel: str, dtype: str, dest: Any, outer: tuple[int, ...] | None,
                  shape: tuple[int, ...], operands: list[Any], params: tuple[Any, ...]) -> None:
    """``_run`` into the C-contiguous ``dest``, which holds the result of ``shape`` with its
    dimensions permuted to ``outer`` (None: not permuted): the operands are viewed the same way,
    so the kernel writes its output in order whatever layout the result has."""
    if outer is not None:
        cp = _cupy()
        operands = [None if a is None else cp.broadcast_to(a, shape).transpose(outer)
                    for a in operands]
    _run(kernel, dtype, dest, operands, params)


def _iter_outer(shape: tuple[int, ...], operands: list[Any]) -> tuple[int, ...] | None:
    """The dimensions of a new result, outermost first, as PyTorch's TensorIterator lays it out
    over ``operands`` (``composite.iter_order``); None for C order."""
    if all(a is None or a.flags.c_contiguous for a in operands):
        return None
    order = iter_order(shape, [broadcast_strides(a, shape) for a in operands if a is not None])
    outer = tuple(order[::-1])
    return None if outer == tuple(range(len(shape))) else outer


def _dense_outer(out: Any) -> tuple[int, ...] | None:
    """The permutation that makes the dense, non-overlapping ``out`` C-contiguous (its
    dimensions by decreasing stride), or None when there is none (``out`` overlaps or has
    gaps)."""
    outer = tuple(sorted(range(out.ndim), key=lambda d: -out.strides[d]))
    return outer if out.transpose(outer).flags.c_contiguous else None


def _into(kernel: str, dtype: str, shape: tuple[int, ...], out_dtype: Any, operands: list[Any],
          params: tuple[Any, ...], out: Any = None) -> Any:
    """Run an elementwise kernel into ``out`` (or a new array) of ``shape`` and ``out_dtype``.

    As with NumPy's ``out=``, the operands broadcast to ``out``'s shape, never ``out`` to theirs.
    A new array is laid out as PyTorch's TensorIterator lays it out (C order for C-contiguous
    operands; else the first operand that tells two dimensions apart orders them), so
    ``(x.t() * 2).t()`` is C-contiguous as in PyTorch.
    """
    cp = _cupy()
    if out is not None:
        full = _broadcast_shape(shape, tuple(out.shape))
        if full != tuple(out.shape):
            raise ValueError(f"non-broadcastable output operand with shape {tuple(out.shape)} "
                             f"doesn't match the broadcast shape {full}")
        if out.dtype != out_dtype:
            raise ValueError(f"out has dtype {out.dtype}; this op makes {np.dtype(out_dtype)}")
        shape = full
    if math.prod(shape) == 0:
        return out if out is not None else cp.empty(shape, out_dtype)
    if out is None:
        if all(a is None or (a.shape == shape and a.flags.c_contiguous) for a in operands):
            dest = cp.empty(shape, out_dtype)  # NOTE: the common case: one flat launch
            _run(kernel, dtype, dest, operands, params, flat=True)
            return dest
        outer = _iter_outer(shape, operands)
        if outer is None:
            dest = cp.empty(shape, out_dtype)
            _run(kernel, dtype, dest, operands, params)
            return dest
        dest = cp.empty(tuple(shape[d] for d in outer), out_dtype)
        _run_in_order(kernel, dtype, dest, outer, shape, operands, params)
        return dest.transpose(inverse_perm(outer))
    # NOTE: an out overlapping an input other than element for element (x += x.T), or one with
    # gaps or overlaps, is computed into a fresh array and copied, as NumPy buffers such cases.
    if not any(a is not None and _unsafe_alias(out, a, shape) for a in operands):
        if out.flags.c_contiguous:
            _run(kernel, dtype, out, operands, params)
            return out
        outer = _dense_outer(out)
        if outer is not None:  # a permuted dense out: written in its own order, in place
            _run_in_order(kernel, dtype, out.transpose(outer), outer, shape, operands, params)
            return out
    dest = cp.empty(shape, out_dtype)
    _run(kernel, dtype, dest, operands, params)
    cp.copyto(out, dest)
    return out


_NP_FLOAT: dict[str, Any] = {"float16": np.float16, "float32": np.float32}
_FINITE_MAX = {"float16": 65504.0, "float32": 3.4028234663852886e38}


def _scalar(v: Any, dtype: str, opmath: bool = False) -> np.float64:
    """A Python scalar operand as the double the kernels take, first rounded to ``dtype`` (as
    torch gives a Python scalar the tensor's dtype), or with ``opmath`` (float16 ``*`` and
    ``/``) to float32, the type the kernels compute float16 in, as PyTorch's CPU kernels take
    it (``x * 1e-8`` in float16 is not 0; ``x + 1e-8`` adds the float16 0)."""
    value = float(v)
    if dtype == "float64":
        return np.float64(value)
    if opmath:
        dtype = "float32"
    if abs(value) <= _FINITE_MAX[dtype] or not math.isfinite(value):
        return np.float64(_NP_FLOAT[dtype](value))
    with np.errstate(over="ignore"):
        return np.float64(_NP_FLOAT[dtype](value))


def _op_code(ops: tuple[str, ...], op: str, what: str) -> int:
    try:
        return ops.index(op)
    except ValueError:
        raise ValueError(f"unknown {what} op {op!r}; expected one of {ops}") from None


def _operand(cp: Any, v: Any) -> Any:
    return v if isinstance(v, cp.ndarray) else None


def _common_dtype(*arrays: Any) -> str:
    dtypes = {dtype_name(a.dtype) for a in arrays if a is not None}
    if not dtypes:
        raise TypeError("at least one operand must be a cupy array (both are scalars)")
    if len(dtypes) > 1 or next(iter(dtypes)) not in KERNEL_DTYPES:
        raise TypeError(f"kernels need operands of one dtype in {KERNEL_DTYPES}; got {dtypes}")
    return dtypes.pop()


def unary(op: str, x: Any, param: float = 0.0) -> Any:
    """``op(x)`` elementwise (``param``: leaky_relu's slope, elu's alpha)."""
    code = _op_code(UNARY_OPS, op, "unary")
    dtype = _common_dtype(x)
    return _into("unary", dtype, tuple(x.shape), x.dtype, [x],
                 (np.int32(code), np.float64(param)))


def unary_backward(op: str, saved: Any, grad: Any, param: float = 0.0) -> Any:
    """grad_x of ``op`` from ``saved`` (x or out, per ``UNARY_BACKWARD_OPS[op]``) and ``grad``."""
    if op not in UNARY_BACKWARD_OPS:
        raise ValueError(f"no backward kernel for {op!r}; "
                         f"expected one of {list(UNARY_BACKWARD_OPS)}")
    if saved.shape != grad.shape:
        raise ValueError(f"saved shape {saved.shape} != grad shape {grad.shape} in {op} backward")
    dtype = _common_dtype(saved, grad)
    return _into("unary_backward", dtype, tuple(saved.shape), saved.dtype, [saved, grad],
                 (np.int32(UNARY_OPS.index(op)), np.float64(param)))


def binary(op: str, x: Any, y: Any, alpha: float | None = None, out: Any = None) -> Any:
    """``x op y`` with NumPy broadcasting; x or y may be a Python scalar (not both).

    add/sub take ``alpha``: ``x + alpha * y`` / ``x - alpha * y``. Comparisons return bool.
    maximum/minimum propagate NaN. ``out`` (broadcast shape, result dtype) receives the result,
    also when it is ``x`` itself (in-place ops).
    """
    cp = _cupy()
    code = _op_code(BINARY_OPS, op, "binary")
    if alpha is not None and op not in ("add", "sub"):
        raise ValueError(f"alpha is only for add and sub, not {op!r}")
    xa, ya = _operand(cp, x), _operand(cp, y)
    dtype = _common_dtype(xa, ya)
    shape = _broadcast_shape(*(a.shape for a in (xa, ya) if a is not None))
    compare = code >= _FIRST_COMPARISON
    scalars = (xa is None) | (ya is None) << 1
    opmath = code in _OPMATH_CODES
    values = (_scalar(x, dtype, opmath) if xa is None else np.float64(0),
              _scalar(y, dtype, opmath) if ya is None else np.float64(0), np.int32(scalars))
    if compare:
        return _into("compare", dtype, shape, np.bool_, [xa, ya], (np.int32(code), *values), out)
    # NOTE: alpha rounded to the dtype first, as PyTorch's CPU kernels take it
    alpha_ = np.float64(1.0) if alpha is None else _scalar(alpha, dtype)
    return _into("binary", dtype, shape, np.dtype(dtype), [xa, ya],
                 (np.int32(code), alpha_, *values), out)


def where(cond: Any, x: Any, y: Any) -> Any:
    """``cond ? x : y`` elementwise with broadcasting; x or y may be a Python scalar."""
    cp = _cupy()
    xa, ya = _operand(cp, x), _operand(cp, y)
    dtype = _common_dtype(xa, ya)
    if cond.dtype != np.bool_:
        cond = cond.astype(np.bool_)
    shape = _broadcast_shape(cond.shape, *(a.shape for a in (xa, ya) if a is not None))
    scalars = (xa is None) | (ya is None) << 1
    params = (_scalar(x, dtype) if xa is None else np.float64(0),
              _scalar(y, dtype) if ya is None else np.float64(0), np.int32(scalars))
    return _into("where", dtype, shape, np.dtype(dtype), [cond, xa, ya], params)


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


def _reduce_items(code: int, plan: _Plan, dtype: str, scale: float, shift: Any = None) -> Any:
    """One value per (outer, inner) item, as a flat array of ``dtype``."""
    cp = _cupy()
    items = plan.outer * plan.inner
    out = cp.empty(items, dtype)
    sms = _sm_count()
    tail = (np.int32(code), np.float64(scale))
    if plan.inner == 1:
        splits, chunk = _split(items, plan.r, sms * 64, 1024)
        partial = cp.empty(items * splits, _ACC[dtype]) if splits > 1 else None
        _launch_groups("reduce_rows", dtype, items * splits, _group_for(chunk),
                       (plan.base, out, partial, shift, np.int64(items), np.int64(plan.r),
                        np.int64(splits), np.int64(chunk), *tail))
    else:
        splits, chunk = _split(items, plan.r, sms * 2048, 32)
        partial = cp.empty(items * splits, _ACC[dtype]) if splits > 1 else None
        _launch("reduce_cols", dtype, items * splits,
                (plan.base, out, partial, shift, np.int64(plan.outer), np.int64(plan.r),
                 np.int64(plan.inner), np.int64(splits), np.int64(chunk), *tail))
    if splits > 1:
        _launch_groups("reduce_finish", dtype, items, _group_for(splits),
                       (partial, out, shift, np.int64(items), np.int64(splits), *tail))
    return out


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
    cp = _cupy()
    dtype = _common_dtype(x)
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
        plan = _Plan(cp.ascontiguousarray(x), 1, x.size, 1, [])
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
        return _cupy().ascontiguousarray(x), 1, 1, 1
    (axis,) = _axes(axis, x.ndim)
    shape = x.shape
    return (_cupy().ascontiguousarray(x), math.prod(shape[:axis]), shape[axis],
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
    grad = cp.ascontiguousarray(grad)
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
    return _cupy().ascontiguousarray(target.astype(np.int64, copy=False))


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
                   (cp.ascontiguousarray(logits), target, loss, lse, np.int64(n), np.int64(c),
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
    lse = cp.ascontiguousarray(lse.astype(dtype, copy=False))
    _launch("cross_entropy_backward", dtype, n * c,
            (cp.ascontiguousarray(logits), target, lse, grad_loss, np.int64(stride),
             grad_logits, np.int64(n), np.int64(c), np.int64(ignore_index)))
    return grad_logits
