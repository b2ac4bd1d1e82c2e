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
from typing import Any

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
    "norm.cu": ("norm_forward", "norm_backward_input", "norm_backward_params"),
    "rnn.cu": ("lstm_cell_forward", "lstm_cell_backward", "gru_cell_forward",
               "gru_cell_backward"),
    "attention.cu": ("attention_forward", "attention_delta", "attention_backward_kv",
                     "attention_backward_q"),
    "optim.cu": ("sgd_step", "adam_step", "rmsprop_step"),
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
    "add", "sub", "mul", "div", "pow", "maximum", "minimum", "floor_divide", "eq", "ne", "lt",
    "le", "gt", "ge",
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


from .cuda_reduce import (  # noqa: E402,F401  (the reductions build on the helpers above)
    arg_reduce, cross_entropy, cross_entropy_backward, log_softmax, log_softmax_backward,
    logsumexp, reduce, softmax, softmax_backward,
)
