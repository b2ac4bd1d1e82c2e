"""Our CUDA kernels (``kernels/*.cu``) and the launchers the CuPy backend calls.

Each ``.cu`` file is compiled by NVRTC through ``cupy.RawModule`` once per (device, file, dtype)
and cached; kernels are looked up by ``get_kernel("unary", "float32")``. The launchers take
``cupy.ndarray`` inputs of any strides (transposed, sliced, broadcast views), handle size 0 and
0-d arrays without launching, and return new arrays: elementwise results laid out as PyTorch's
TensorIterator lays them out (C order for C-contiguous inputs; the kernel itself always writes a
C-contiguous buffer, permuted views of the inputs make that so), the others C-contiguous. Every
launcher has a reference twin, the plain CuPy expression, that
``tests/backends/test_cuda_kernels.py`` compares against.

This module holds the loading, the launch helpers and the dtype checks; the launchers live in
their family modules (``cuda_elementwise``, ``cuda_reduce``) and are this module's names too.

The launch path is kept short (a launch is what a small op costs on the host): the kernel and
the grid cap are kept per (kernel, dtype, device) (``_entry``: one runtime call per launch for
the current device), and the elementwise launchers and ``reduce`` keep a plan per layout key
(everything but the pointers: see ``cuda_elementwise``), so that a launch is a dict lookup, the
allocation and the kernel call. ``USE_PLANS = False`` works every launch out from scratch (the
reference the plans are tested against, ``tests/backends/test_cuda_launch.py``);
``clear_caches()`` forgets them.

CuPy is imported on first use only: importing this module needs neither CuPy nor a GPU.
"""

from __future__ import annotations

import importlib
import pathlib
from typing import TYPE_CHECKING, Any

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
_array_type: list[Any] = []  # cupy.ndarray, once CuPy is imported


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


def _first_device() -> int:
    global _get_device
    _get_device = _cupy().cuda.runtime.getDevice
    return int(_get_device())


_get_device: Any = _first_device  # cupy.cuda.runtime.getDevice, bound on first use


def _device() -> int:
    """The current CUDA device (one runtime call)."""
    return _get_device()  # type: ignore[no-any-return]


_modules: dict[tuple[int, str, str], Any] = {}
_functions: dict[tuple[int, str, str], Any] = {}
_sm_counts: dict[int, int] = {}
# (kernel, dtype, device) -> (RawKernel, most blocks a 1-D launch uses): what a launch looks up
_entries: dict[tuple[str, str, int], tuple[Any, int]] = {}


def get_kernel(name: str, dtype: str) -> Any:
    """The ``cupy.RawKernel`` ``name<T>`` for ``dtype`` on the current device.

    Its file is compiled once per (device, file, dtype), on first use; NVRTC errors name the file.
    """
    file = _FILE_OF.get(name)
    if file is None:
        raise ValueError(f"unknown kernel {name!r}; known kernels: {sorted(_FILE_OF)}")
    if dtype not in _CTYPE:
        raise ValueError(f"kernel {name!r} has no {dtype} version; dtypes: {KERNEL_DTYPES}")
    device = _device()
    fn = _functions.get((device, name, dtype))
    if fn is not None:
        return fn
    module = _modules.get((device, file, dtype))
    if module is None:
        module = _cupy().RawModule(code=kernel_source(file), options=_OPTIONS,
                                   name_expressions=name_expressions(file, dtype))
        _modules[(device, file, dtype)] = module
    try:
        fn = module.get_function(f"{name}<{_CTYPE[dtype]}>")
    except Exception as e:  # noqa: BLE001  (cupy's CompileException and friends)
        raise RuntimeError(f"NVRTC could not compile kernels/{file} for {dtype}: {e}") from e
    _functions[(device, name, dtype)] = fn
    return fn


def _sm_count() -> int:
    device = _device()
    count = _sm_counts.get(device)
    if count is None:
        props = _cupy().cuda.runtime.getDeviceProperties(device)
        count = _sm_counts[device] = int(props["multiProcessorCount"])
    return count


def _entry(name: str, dtype: str) -> tuple[Any, int]:
    """(``get_kernel(name, dtype)``, the grid cap ``_blocks`` applies) on the current device,
    kept per (kernel, dtype, device): one runtime call and one dict lookup per launch."""
    key = (name, dtype, _device())
    entry = _entries.get(key)
    if entry is None:
        entry = _entries[key] = (get_kernel(name, dtype), _sm_count() * 32)
    return entry


def _blocks(units: int, per_block: int = _THREADS) -> int:
    """Grid size for a grid-stride loop: enough blocks to fill the GPU, no more than needed."""
    return max(1, min(-(-units // per_block), _sm_count() * 32))


_BLOCK = (_THREADS,)
# NOTE: a switch for tests and benchmarks: False makes every launcher work its launch out from
# scratch (the reference the kept plans of cuda_elementwise and cuda_reduce are tested against).
USE_PLANS = True
_PLAN_LIMIT = 4096  # plans kept per family; past it the cache starts again (a program with ever
# new layouts pays the planning each call, as without the cache)


def _launch(name: str, dtype: str, units: int, args: tuple[Any, ...]) -> None:
    """1-D launch: one thread per unit (grid-stride, 256 threads per block)."""
    fn, cap = _entry(name, dtype)
    fn((max(1, min(-(-units // _THREADS), cap)),), _BLOCK, args)


def _launch_groups(name: str, dtype: str, units: int, group: int, args: tuple[Any, ...]) -> None:
    """Launch with a group of ``group`` threads (32 or 256) per unit, 256 threads per block."""
    per_block = _THREADS // group
    fn, cap = _entry(name, dtype)
    fn((max(1, min(-(-units // per_block), cap)),), (group, per_block), args)


def _launch_spec(name: str, dtype: str, units: int, group: int | None,
                 tail: tuple[Any, ...]) -> tuple[Any, tuple[int], tuple[int, ...], tuple[Any, ...]]:
    """``(kernel, grid, block, tail)`` of the launch ``_launch`` (``group`` None) or
    ``_launch_groups`` would make: kept by plans, run as ``kernel(grid, block, (*arrays,
    *tail))``."""
    fn, cap = _entry(name, dtype)
    block: tuple[int, ...]
    if group is None:
        per_block, block = _THREADS, _BLOCK
    else:
        per_block, block = _THREADS // group, (group, _THREADS // group)
    return fn, (max(1, min(-(-units // per_block), cap)),), block, tail


_DTYPE_NAMES: dict[Any, str] = {}


def dtype_name(dt: Any) -> str:
    """``dt.name``, cached by the dtype object: NumPy computes ``.name`` in Python on every
    access (microseconds, several times per launch otherwise)."""
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        name = _DTYPE_NAMES[dt] = dt.name
    return name


def _ndarray() -> Any:
    """``cupy.ndarray``, or a type nothing is an instance of when CuPy is missing."""
    if not _array_type:
        cp = _cupy_or_none()
        if cp is None:
            return _NoArray
        _array_type.append(cp.ndarray)
    return _array_type[0]


class _NoArray:
    """What ``_ndarray`` gives without CuPy: nothing is an instance of it."""


def supported(*xs: Any) -> bool:
    """True when the kernels can serve these operands: each a cupy array or a Python int/float,
    at least one array, and all arrays of one dtype in ``KERNEL_DTYPES``."""
    nd = _ndarray()
    dtype = None
    for x in xs:
        if isinstance(x, nd):
            name = _DTYPE_NAMES.get(x.dtype) or dtype_name(x.dtype)
            if name not in _CTYPE or (dtype is not None and name != dtype):
                return False
            dtype = name
        elif not isinstance(x, (int, float)):
            return False
    return dtype is not None


def _contiguous(a: Any) -> Any:
    """``cupy.ascontiguousarray(a)``: ``a`` itself when it is C-contiguous already (checked
    here: the flag costs less than CuPy's call)."""
    return a if a.flags.c_contiguous else _cupy().ascontiguousarray(a)


def _common_dtype(*arrays: Any) -> str:
    """The one kernel dtype of the arrays (None entries: scalars), else TypeError."""
    name = None
    for a in arrays:
        if a is not None:
            n = _DTYPE_NAMES.get(a.dtype) or dtype_name(a.dtype)
            if name is None:
                name = n
            elif n != name:
                name = ""
    if name and name in _CTYPE:
        return name
    dtypes = {dtype_name(a.dtype) for a in arrays if a is not None}
    if not dtypes:
        raise TypeError("at least one operand must be a cupy array (both are scalars)")
    raise TypeError(f"kernels need operands of one dtype in {KERNEL_DTYPES}; got {dtypes}")


def clear_caches() -> None:
    """Forget every launch cache (kernel entries, elementwise and reduction plans, scalars);
    compiled modules stay. Tests call it to check that kept launches equal fresh ones."""
    from . import cuda_elementwise, cuda_reduce

    _entries.clear()
    cuda_elementwise.clear_caches()
    cuda_reduce.clear_caches()


# The launchers live in their family modules, which import the helpers above; they are this
# module's names too (where the CuPy backend and the tests find them), loaded on first access
# so that either side may be imported first.
_FAMILIES = {
    "cuda_elementwise": ("_broadcast_shape", "_into", "_layout", "_scalar", "_unary",
                         "array_dtype", "binary", "binary_if_supported", "unary",
                         "unary_backward", "where"),
    "cuda_reduce": ("arg_reduce", "cross_entropy", "cross_entropy_backward", "log_softmax",
                    "log_softmax_backward", "logsumexp", "reduce", "softmax",
                    "softmax_backward"),
}
_FAMILY_OF = {name: family for family, names in _FAMILIES.items() for name in names}
if TYPE_CHECKING:  # what __getattr__ gives, for the type checker
    from .cuda_elementwise import (  # noqa: F401
        _broadcast_shape, _into, _layout, _scalar, _unary, array_dtype, binary,
        binary_if_supported, unary, unary_backward, where,
    )
    from .cuda_reduce import (  # noqa: F401
        arg_reduce, cross_entropy, cross_entropy_backward, log_softmax, log_softmax_backward,
        logsumexp, reduce, softmax, softmax_backward,
    )


def __getattr__(name: str) -> Any:
    family = _FAMILY_OF.get(name)
    if family is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__package__}.{family}"), name)
    globals()[name] = value  # NOTE: found directly from now on
    return value
