"""The CUDA backend: CuPy, in the order of ``base.Backend``, with the float elementwise and
reduction entries routed to our RawKernels (``cuda_kernels``, CUDA C in ``kernels/*.cu``).

Everything here mirrors ``numpy_backend.py``: same names, same broadcasting and dtype rules. Float
arrays of one dtype (float16/32/64) go to our kernels; integer and bool arrays, mixed dtypes and
anything the kernels do not cover fall back to CuPy's own functions, which follow NumPy's rules.
Set ``AUTOGRAD_GPU_KERNELS=0`` to run on CuPy's functions only (for comparing against them).

Imported only when a CUDA tensor is first asked for (``cuda_support.backend_for``), so CuPy is
never imported on a CPU-only program.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable

import cupy as cp
import cupyx
import numpy as np

from . import cuda_kernels as K
from . import cuda_support
from .base import Array, Axis, OutOfMemoryError, Shape
from .composite import Composite
from .families import Families
from .numpy_backend import _QUIET_FP, _RESTORE_FP
from .scatter import Determinism

USE_KERNELS = os.environ.get("AUTOGRAD_GPU_KERNELS", "1") != "0"


def _kernels_for(*xs: Any) -> bool:
    return USE_KERNELS and K.supported(*xs)


def _unary(op: str, fallback: Callable[[Array], Array]) -> Any:
    """A backend entry: our kernel for float arrays, else CuPy's ``fallback``."""
    code = K.UNARY_OPS.index(op)

    def run(x: Array) -> Array:
        if USE_KERNELS:
            dtype = K.array_dtype(x)
            if dtype is not None:
                return K._unary(code, x, dtype)
        return fallback(x)

    run.__name__ = op
    return staticmethod(run)


def _binary(op: str, fallback: Any) -> Any:
    """A broadcasting binary entry with NumPy's ``out=``: our kernel when both operands are
    float arrays of one dtype (or one is a Python scalar), else CuPy's ufunc."""

    code = K.BINARY_OPS.index(op)

    def run(x: Any, y: Any, out: Array | None = None, casting: str = "same_kind") -> Array:
        if USE_KERNELS:  # NOTE: None when not supported(x, y) or out is not of their dtype
            result = K.binary_if_supported(code, x, y, None, out)
            if result is not None:
                return result  # type: ignore[no-any-return]
        return fallback(x, y) if out is None else fallback(x, y, out=out, casting=casting)

    run.__name__ = op
    return staticmethod(run)


def _float_reduce(op: str, fallback: Any) -> Any:
    def run(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:
        if USE_KERNELS and K.array_dtype(x) is not None and x.size:
            return K.reduce(op, x, axis, keepdims)
        return fallback(x, axis=axis, keepdims=keepdims)

    run.__name__ = op
    return staticmethod(run)


_GELU_OPS = {"none": "gelu", "tanh": "gelu_tanh"}


def _fused(name: str, kernel: Callable[..., Array], arrays: int = 1) -> Any:
    """A fused entry: ``kernel`` when its first ``arrays`` arguments are non-empty float arrays
    of one dtype, else ``Composite``'s formula of the same name."""
    fallback = getattr(Composite, name)

    def run(self: Any, *args: Any) -> Any:
        if _kernels_for(*args[:arrays]) and args[0].size:
            return kernel(*args)
        return fallback(self, *args)

    def run_one(self: Any, x: Any, *rest: Any) -> Any:  # NOTE: run, one array checked
        if USE_KERNELS and K.array_dtype(x) is not None and x.size:
            return kernel(x, *rest)
        return fallback(self, x, *rest)

    chosen = run_one if arrays == 1 else run
    chosen.__name__ = name
    return chosen


def _fused_unary(name: str, op: str) -> Any:
    """``_fused(name, lambda x, *param: K.unary(op, x, *param))``, the op's code found once."""
    fallback = getattr(Composite, name)
    code = K.UNARY_OPS.index(op)

    def run(self: Any, x: Any, *param: Any) -> Any:
        if USE_KERNELS:
            dtype = K.array_dtype(x)
            if dtype is not None and x.size:
                return K._unary(code, x, dtype, *param)
        return fallback(self, x, *param)

    run.__name__ = name
    return run


def _add_at(x: Array, key: Any, values: Array) -> None:
    """``x[key] += values`` with repeated indices accumulating: ``cupy.add.at`` (CuPy >= 13;
    CuPy 14 deprecates the older ``cupyx.scatter_add``, which serves CuPy 12)."""
    if hasattr(cp.add, "at"):
        cp.add.at(x, key, values)
    else:  # pragma: no cover - CuPy 12
        cupyx.scatter_add(x, key, values)


class _NoErrstate(contextlib.AbstractContextManager):
    """CuPy has no floating-point error state: inf and nan arise silently, as in PyTorch."""

    def __exit__(self, *exc: object) -> None:
        return None


_NO_ERRSTATE = _NoErrstate()


class CupyGenerator:
    """A seeded CuPy random stream with NumPy's ``bit_generator.state`` protocol, whose state
    can be read without disturbing it.

    NOTE: CuPy's generators cannot report their position in the stream. So every draw (each
    ``rs`` access: one sampling call) reseeds one Philox generator with the stream's current
    seed and moves that seed on by a SplitMix64 step on the host; the state is that seed. Reading
    it changes nothing (a checkpoint's stash, then its replay, draws what an unchecked run
    draws), and ``set_state(get_state())`` replays the same numbers. Philox (counter-based)
    makes the reseed two host calls, without XORWOW's per-seed setup.
    """

    def __init__(self, seed: int) -> None:
        self.bit_generator = self
        method = getattr(getattr(cp.cuda, "curand", None), "CURAND_RNG_PSEUDO_PHILOX4_32_10",
                         None)
        self._rs = (cp.random.RandomState(0) if method is None
                    else cp.random.RandomState(0, method=method))
        self._next = int(seed) & _UINT64

    @property
    def rs(self) -> Any:
        """The generator, seeded for one draw."""
        if cuda_support.CAPTURE[0] is not None:
            from .cuda_graph import refuse_draw

            refuse_draw()
        self._rs.seed(self._next)
        self._next = _splitmix64(self._next)
        return self._rs

    @property
    def state(self) -> dict[str, Any]:
        return {"bit_generator": "cupy.RandomState", "seed": self._next}

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        self._next = int(value["seed"]) & _UINT64


_UINT64 = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    """One step of the SplitMix64 sequence (Steele, Lea and Flood, 2014): the next draw's seed."""
    z = (x + 0x9E3779B97F4A7C15) & _UINT64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _UINT64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _UINT64
    return z ^ (z >> 31)


class CupyBackend(Composite, Families):
    """CuPy behind the backend interface, with RawKernels for the float elementwise and
    reduction work (see the module docstring)."""

    name = "cupy"
    xp: Any = cp  # the array module (the op families' mixins call it)
    ndarray = cp.ndarray
    generic = ()  # CuPy returns 0-d arrays, never scalars

    # creation
    @staticmethod
    def asarray(obj: Any, dtype: Any = None) -> Array:
        if type(obj) in (int, float, bool):
            # NOTE: a Python number by a fill kernel, not a host-to-device copy (which waits
            # for the host, and which a CUDA graph capture refuses)
            return cp.full((), obj, dtype=np.asarray(obj).dtype if dtype is None else dtype)
        return cp.asarray(obj, dtype=dtype)

    @staticmethod
    def empty(shape: Shape, dtype: Any = "float32") -> Array:
        return cp.empty(shape, dtype=dtype)

    @staticmethod
    def zeros(shape: Shape, dtype: Any = "float32") -> Array:
        return cp.zeros(shape, dtype=dtype)

    @staticmethod
    def ones(shape: Shape, dtype: Any = "float32") -> Array:
        return cp.ones(shape, dtype=dtype)

    @staticmethod
    def full(shape: Shape, fill_value: Any, dtype: Any = None) -> Array:
        return cp.full(shape, fill_value, dtype=dtype)

    @staticmethod
    def linspace(start: float, stop: float, num: int, dtype: Any = None) -> Array:
        return cp.linspace(start, stop, num, dtype=dtype)

    @staticmethod
    def zeros_like(x: Array, dtype: Any = None) -> Array:
        return cp.zeros_like(x, dtype=dtype)

    @staticmethod
    def ones_like(x: Array, dtype: Any = None) -> Array:
        return cp.ones_like(x, dtype=dtype)

    @staticmethod
    def ascontiguousarray(x: Array, dtype: Any = None) -> Array:
        return cp.ascontiguousarray(x, dtype=dtype)

    @staticmethod
    def arange(start: Any, stop: Any, step: Any, dtype: str) -> Array:
        return cp.arange(start, stop, step, dtype=dtype)

    @staticmethod
    def eye(n: int, m: int, dtype: str) -> Array:
        return cp.eye(n, m, dtype=dtype)

    @staticmethod
    def copy(x: Array) -> Array:
        return cp.array(x, copy=True)

    @staticmethod
    def astype(x: Array, dtype: str) -> Array:
        return x.astype(dtype)

    @staticmethod
    def to_host(x: Array) -> np.ndarray:
        cuda_support.refuse_during_capture(_HOST_COPY)
        return cp.asnumpy(x)

    @staticmethod
    def from_host(x: np.ndarray) -> Array:
        return cp.asarray(x)

    @staticmethod
    def from_dlpack(x: Any) -> Array:
        return cp.from_dlpack(x)

    # name -> (kernel op code, takes alpha)
    _KERNEL_ARITH = {name: (K.BINARY_OPS.index(op), op in ("add", "sub")) for name, op in (
        ("add", "add"), ("subtract", "sub"), ("multiply", "mul"), ("true_divide", "div"))}

    def opmath(self, name: str, x: Any, y: Any, alpha: Any = 1, out: Array | None = None
               ) -> Array:
        """``Composite.opmath`` with our kernels where they serve: they compute float16 in
        float32 and take the number and ``alpha`` as ``Composite.opmath`` says."""
        code, takes_alpha = self._KERNEL_ARITH[name]
        if USE_KERNELS and (alpha == 1 or takes_alpha):
            result = K.binary_if_supported(code, x, y, None if alpha == 1 else float(alpha), out)
            if result is not None:
                return result  # type: ignore[no-any-return]
        return Composite.opmath(self, name, x, y, alpha, out)

    # elementwise
    add = _binary("add", cp.add)
    subtract = _binary("sub", cp.subtract)
    multiply = _binary("mul", cp.multiply)
    true_divide = _binary("div", cp.true_divide)
    # NOTE: CuPy's float floor_divide is floor(x / y), which rounds where PyTorch's is exact
    floor_divide = _binary("floor_divide", cp.floor_divide)
    remainder = staticmethod(cp.remainder)
    fmod = staticmethod(cp.fmod)
    power = _binary("pow", cp.power)
    negative = _unary("neg", cp.negative)
    abs = _unary("abs", cp.abs)
    sign = _unary("sign", lambda x: _nan_sign(cp.sign(x)))
    exp = _unary("exp", cp.exp)
    log = _unary("log", cp.log)
    log1p = _unary("log1p", cp.log1p)
    expm1 = _unary("expm1", cp.expm1)
    sqrt = _unary("sqrt", cp.sqrt)
    sin = _unary("sin", cp.sin)
    cos = _unary("cos", cp.cos)
    tanh = _unary("tanh", cp.tanh)
    floor = _unary("floor", cp.floor)
    trunc = staticmethod(cp.trunc)

    maximum = _binary("maximum", cp.maximum)
    minimum = _binary("minimum", cp.minimum)
    fmax = staticmethod(cp.fmax)

    @staticmethod
    def where(cond: Array, x: Any, y: Any) -> Array:
        if _kernels_for(x, y) and isinstance(cond, cp.ndarray) and cond.dtype == cp.bool_:
            return K.where(cond, x, y)
        return cp.where(cond, x, y)

    @staticmethod
    def clip(x: Array, lo: Any, hi: Any) -> Array:
        return cp.clip(x, lo, hi)

    isnan = staticmethod(cp.isnan)
    isinf = staticmethod(cp.isinf)
    isfinite = staticmethod(cp.isfinite)
    equal = _binary("eq", cp.equal)
    not_equal = _binary("ne", cp.not_equal)
    less = _binary("lt", cp.less)
    less_equal = _binary("le", cp.less_equal)
    greater = _binary("gt", cp.greater)
    greater_equal = _binary("ge", cp.greater_equal)
    logical_not = staticmethod(cp.logical_not)
    logical_and = staticmethod(cp.logical_and)
    logical_or = staticmethod(cp.logical_or)
    logical_xor = staticmethod(cp.logical_xor)
    bitwise_and = staticmethod(cp.bitwise_and)
    bitwise_or = staticmethod(cp.bitwise_or)
    bitwise_xor = staticmethod(cp.bitwise_xor)

    @staticmethod
    def copyto(dst: Array, src: Any, casting: str = "same_kind", where: Any = True) -> None:
        cp.copyto(dst, src, casting=casting, where=where)

    sigmoid = _unary("sigmoid", lambda x: 1.0 / (1.0 + cp.exp(-x)))
    erf = _unary("erf", lambda x: _special().erf(x))

    # reductions
    @staticmethod
    def sum(x: Array, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Array:
        if dtype is None and USE_KERNELS and K.array_dtype(x) is not None and x.size:
            return K.reduce("sum", x, axis, keepdims)
        return cp.sum(x, axis=axis, dtype=dtype, keepdims=keepdims)

    @staticmethod
    def prod(x: Array, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Array:
        return cp.prod(x, axis=axis, dtype=dtype, keepdims=keepdims)

    max = _float_reduce("max", cp.amax)
    min = _float_reduce("min", cp.amin)

    @staticmethod
    def argmax(x: Array, axis: int | None = None, keepdims: bool = False) -> Array:
        if _kernels_for(x) and x.size:
            return K.arg_reduce("max", x, axis, keepdims)[1]
        return _keep(cp.argmax(x, axis=axis), x, axis, keepdims)

    @staticmethod
    def argmin(x: Array, axis: int | None = None, keepdims: bool = False) -> Array:
        if _kernels_for(x) and x.size:
            return K.arg_reduce("min", x, axis, keepdims)[1]
        return _keep(cp.argmin(x, axis=axis), x, axis, keepdims)

    @staticmethod
    def any(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:
        return cp.any(x, axis=axis, keepdims=keepdims)

    @staticmethod
    def all(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:
        return cp.all(x, axis=axis, keepdims=keepdims)

    @staticmethod
    def cumsum(x: Array, axis: int | None = None, dtype: Any = None) -> Array:
        return cp.cumsum(x, axis=axis, dtype=dtype)

    @staticmethod
    def sort(x: Array, axis: int = -1, **_: Any) -> Array:
        return cp.sort(x, axis=axis)

    # movement
    @staticmethod
    def reshape(x: Array, shape: Shape) -> Array:
        return cp.reshape(x, shape)

    @staticmethod
    def transpose(x: Array, axes: tuple[int, ...] | None = None) -> Array:
        return cp.transpose(x, axes)

    @staticmethod
    def broadcast_to(x: Array, shape: Shape) -> Array:
        return cp.broadcast_to(x, shape)

    expand = broadcast_to  # NOTE: CuPy's broadcast views are writable, as PyTorch's expand

    @staticmethod
    def as_strided(x: Array, shape: Shape, strides: Shape, writeable: bool = False) -> Array:
        """A view of ``x``'s buffer with ``shape`` and byte ``strides`` (the caller keeps it
        inside the buffer; CuPy has no read-only flag: it writes through it only when
        ``writeable``)."""
        return cp.lib.stride_tricks.as_strided(x, shape, strides)

    @staticmethod
    def concatenate(xs: list[Array], axis: int = 0) -> Array:
        return cp.concatenate(xs, axis=axis)

    @staticmethod
    def stack(xs: list[Array], axis: int = 0) -> Array:
        return cp.stack(xs, axis=axis)

    @staticmethod
    def take_along_axis(x: Array, idx: Array, axis: int) -> Array:
        return cp.take_along_axis(x, idx, axis)

    def put_along_axis(self, x: Array, idx: Array, values: Any, axis: int) -> None:
        x[self.along_axis_key(idx, axis % idx.ndim if idx.ndim else 0)] = values

    @staticmethod
    def nonzero(x: Array) -> tuple[Array, ...]:
        cuda_support.refuse_during_capture("nonzero (its result's shape depends on the data, "
                                           "which CuPy reads back to the host)")
        return cp.nonzero(x)

    @staticmethod
    def shares_memory(x: Array, y: Array) -> bool:
        return bool(cp.shares_memory(x, y))

    @staticmethod
    def expand_dims(x: Array, axis: Any) -> Array:
        return cp.expand_dims(x, axis)

    @staticmethod
    def squeeze(x: Array, axis: Any = None) -> Array:
        return cp.squeeze(x, axis=axis)

    @staticmethod
    def moveaxis(x: Array, source: Any, destination: Any) -> Array:
        return cp.moveaxis(x, source, destination)

    @staticmethod
    def view(x: Array, shape: Shape) -> Array | None:
        """``x`` reshaped without copying, or None when its strides make that impossible."""
        out = x.reshape(shape)
        # NOTE: CuPy's reshape returns a view when it can and a copy otherwise; a copy has a
        # buffer of its own.
        if x.size and out.data.ptr != x.data.ptr:
            return None
        return out

    def index_add(self, x: Array, key: Any, values: Array) -> None:
        """``x[key] += values``, repeated positions accumulating: atomic adds, in any order (as
        PyTorch's CUDA index_add_), or, under ``use_deterministic_algorithms(True)``, float sums
        in sorted runs, the same bits every run."""
        if Determinism.on and x.dtype.kind == "f":
            self._segment_combine(x, key if isinstance(key, tuple) else (key,), values, "sum")
        else:
            _add_at(x, key, values)

    @staticmethod
    def is_contiguous(x: Array) -> bool:
        return bool(x.flags.c_contiguous)

    @staticmethod
    def owns_writable(x: Array) -> bool:
        """True when ``x`` owns its buffer (CuPy arrays are always writable)."""
        return x.base is None

    # linear algebra (cuBLAS through CuPy)
    matmul = staticmethod(cp.matmul)

    @staticmethod
    def dot(x: Array, y: Array) -> Array:
        return cp.dot(x, y)

    # random
    @staticmethod
    def new_generator(seed: int) -> CupyGenerator:
        return CupyGenerator(seed)

    @staticmethod
    def random(gen: CupyGenerator, shape: Shape, dtype: str) -> Array:
        if dtype in ("float32", "float64"):
            return gen.rs.random_sample(shape, dtype=dtype)
        return gen.rs.random_sample(shape).astype(dtype)

    @staticmethod
    def standard_normal(gen: CupyGenerator, shape: Shape, dtype: str) -> Array:
        if dtype in ("float32", "float64"):
            return gen.rs.standard_normal(shape, dtype=dtype)
        return gen.rs.standard_normal(shape).astype(dtype)

    @staticmethod
    def integers(gen: CupyGenerator, low: int, high: int, shape: Shape, dtype: str) -> Array:
        return gen.rs.randint(low, high, size=shape, dtype=dtype)

    @staticmethod
    def permutation(gen: CupyGenerator, n: int) -> Array:
        return gen.rs.permutation(n)

    @staticmethod
    def errstate(**kw: Any) -> Any:
        return _NO_ERRSTATE

    # NOTE: CuPy casts Python numbers to an array's dtype on the host, through NumPy, which warns
    # when they overflow it (1e10 to float16): silenced as the NumPy backend's arithmetic is
    quiet_fp: Any = _QUIET_FP
    restore_fp: Any = _RESTORE_FP

    # fused primitives: one kernel each (Composite's formulas for other dtypes)
    relu = _fused_unary("relu", "relu")
    relu_backward = _fused("relu_backward", lambda out, g: K.unary_backward("relu", out, g), 2)
    leaky_relu = _fused_unary("leaky_relu", "leaky_relu")
    leaky_relu_backward = _fused(
        "leaky_relu_backward", lambda x, g, slope: K.unary_backward("leaky_relu", x, g, slope), 2)
    sigmoid_backward = _fused("sigmoid_backward",
                              lambda out, g: K.unary_backward("sigmoid", out, g), 2)
    tanh_backward = _fused("tanh_backward", lambda out, g: K.unary_backward("tanh", out, g), 2)
    gelu = _fused("gelu", lambda x, approximate: K.unary(_GELU_OPS[approximate], x))
    gelu_backward = _fused(
        "gelu_backward", lambda x, g, approximate: K.unary_backward(_GELU_OPS[approximate], x, g), 2)
    silu = _fused_unary("silu", "silu")
    silu_backward = _fused("silu_backward", lambda x, g: K.unary_backward("silu", x, g), 2)
    softmax = _fused("softmax", lambda x, axis: K.softmax(x, axis))
    log_softmax = _fused("log_softmax", lambda x, axis: K.log_softmax(x, axis))
    softmax_backward = _fused("softmax_backward",
                              lambda out, g, axis: K.softmax_backward(out, g, axis), 2)
    log_softmax_backward = _fused("log_softmax_backward",
                                  lambda out, g, axis: K.log_softmax_backward(out, g, axis), 2)
    logsumexp = _fused("logsumexp", lambda x, axis, keepdims=False: K.logsumexp(x, axis, keepdims))
    arg_reduce = _fused("arg_reduce",
                        lambda x, axis, is_max: K.arg_reduce("max" if is_max else "min", x, axis,
                                                             True))

    def cross_entropy(self, logits: Array, target: Array,
                      ignore_index: int = -100) -> tuple[Array, Array]:
        if _kernels_for(logits) and target.dtype == cp.int64 and logits.size:
            return K.cross_entropy(logits, target, ignore_index)
        return Composite.cross_entropy(self, logits, target, ignore_index)

    def cross_entropy_backward(self, logits: Array, target: Array, lse: Array,
                               grad_loss: Array, ignore_index: int = -100) -> Array:
        if _kernels_for(logits, lse, grad_loss) and target.dtype == cp.int64 and logits.size:
            return K.cross_entropy_backward(logits, target, lse, grad_loss, ignore_index)
        return Composite.cross_entropy_backward(self, logits, target, lse, grad_loss,
                                                ignore_index)


_HOST_COPY = ("a copy of CUDA memory to the host (.item(), .tolist(), .cpu(), .numpy(), printing, "
              "bool() or a value check that needs the data, a data-dependent shape)")


def _nan_sign(out: Array) -> Array:
    """CuPy's ``sign`` result with NaN made 0, as PyTorch's ``sign`` (the kernel does so too)."""
    return cp.where(out != out, 0, out) if out.dtype.kind == "f" else out


def _keep(out: Array, x: Array, axis: int | None, keepdims: bool) -> Array:
    """``out`` of an arg-reduction with the reduced axis kept as size 1 when asked."""
    if not keepdims:
        return out
    if axis is None:
        return out.reshape((1,) * x.ndim)
    return cp.expand_dims(out, axis)


def _special() -> Any:
    import cupyx.scipy.special

    return cupyx.scipy.special


# ---- memory: the allocator every CuPy allocation of ours goes through -------------------------

class DeviceMemory:
    """The memory tracker's counters for one CUDA device (the fields of ``memory.Counters``,
    plus the highest reserved figure seen)."""

    __slots__ = ("current", "peak", "allocated", "freed", "count", "count_peak",
                 "count_allocated", "count_freed", "num_alloc_retries", "num_ooms",
                 "reserved_peak")

    def __init__(self) -> None:
        self.current = self.peak = self.allocated = self.freed = 0
        self.count = self.count_peak = self.count_allocated = self.count_freed = 0
        self.num_alloc_retries = self.num_ooms = self.reserved_peak = 0


MEMORY: dict[int, DeviceMemory] = {}


def device_memory(index: int) -> DeviceMemory:
    """The counters of CUDA device ``index`` (made on first use)."""
    c = MEMORY.get(index)
    if c is None:
        c = MEMORY[index] = DeviceMemory()
    return c


class _Block:
    """The owner of one pool block lent to CuPy: holds the pool's pointer and, when the last
    array using the block is gone, takes the block off its device's counters (the pool then gets
    the block back, as before)."""

    __slots__ = ("_ptr", "_size", "_counters", "_pool")

    def __init__(self, ptr: Any, size: int, counters: DeviceMemory, pool: Any) -> None:
        self._ptr, self._size, self._counters = ptr, size, counters
        self._pool = pool  # NOTE: a CUDA graph's private pool lives while its blocks do

    def __del__(self) -> None:
        c = self._counters
        c.current -= self._size
        c.freed += self._size
        c.count -= 1
        c.count_freed += 1


def _install_allocator() -> None:
    """Serve allocations from CuPy's default pool; on out-of-memory free the pool's cached
    blocks and retry once, then raise ``OutOfMemoryError`` naming the bytes asked for and held.

    Every block is counted for the memory tracker at its pool size (CuPy rounds requests up to
    512 bytes) and handed to CuPy wrapped in ``UnownedMemory`` whose owner (``_Block``) uncounts
    it when the last array using it dies; so ``MEMORY[i].current`` equals ``pool.used_bytes()``
    for our allocations, and the peak is kept here (CuPy's pool has none).

    NOTE: a Python allocator costs one or two microseconds per allocation; it is the one place
    that sees every allocation. ``pool.used_bytes()`` itself walks all live blocks, which is why
    the counters are kept here instead of read from the pool.
    """
    serving = SERVING
    oom = cp.cuda.memory.OutOfMemoryError
    unowned = cp.cuda.memory.UnownedMemory
    pointer = cp.cuda.memory.MemoryPointer
    counters = MEMORY.get

    def malloc(nbytes: int) -> Any:
        pool = serving[0]
        try:
            ptr = pool.malloc(nbytes)
        except oom:
            c = device_memory(cp.cuda.runtime.getDevice())
            c.num_alloc_retries += 1
            pool.free_all_blocks()
            try:
                ptr = pool.malloc(nbytes)
            except oom:
                c.num_ooms += 1
                raise OutOfMemoryError(_oom_message(nbytes, pool)) from None
        size = ptr.mem.size
        if not size:
            return ptr
        dev = ptr.device_id
        c = counters(dev) or device_memory(dev)
        c.current += size
        c.allocated += size
        c.count += 1
        c.count_allocated += 1
        if c.current > c.peak:
            c.peak = c.current
            if c.current > c.reserved_peak:  # NOTE: reserved >= allocated; a cheap lower bound
                c.reserved_peak = c.current
        if c.count > c.count_peak:
            c.count_peak = c.count
        return pointer(unowned(ptr.ptr, size, _Block(ptr, size, c, pool), dev), 0)

    cp.cuda.set_allocator(malloc)


# The pool allocations come from: CuPy's default one, a CUDA graph's private one while it captures.
SERVING: list[Any] = [cp.get_default_memory_pool()]


def serve_from(pool: Any) -> Any:
    """Serve allocations from ``pool`` from now on; the pool served until now."""
    previous, SERVING[0] = SERVING[0], pool
    return previous


def memory_reserved(index: int) -> int:
    """Bytes CuPy's default pool and the CUDA graph pools hold on device ``index``."""
    from .cuda_graph import HANDLES

    with cp.cuda.Device(index):
        reserved = int(cp.get_default_memory_pool().total_bytes())
        reserved += sum(h.reserved() for h in list(HANDLES))
    c = device_memory(index)
    c.reserved_peak = max(c.reserved_peak, reserved)
    return reserved


def empty_cache(index: int) -> None:
    """Give the cached (unused) blocks of CuPy's pools on device ``index`` back to the driver."""
    with cp.cuda.Device(index):
        cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_pinned_memory_pool().free_all_blocks()


def mem_get_info(index: int) -> tuple[int, int]:
    """``(free, total)`` bytes of device ``index``, as the driver reports them."""
    with cp.cuda.Device(index):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(free), int(total)


def _oom_message(nbytes: int, pool: Any) -> str:
    dev = cp.cuda.Device()
    free, total = cp.cuda.runtime.memGetInfo()
    return (f"CUDA out of memory. Tried to allocate {_human(nbytes)} ({nbytes} bytes). GPU "
            f"{dev.id} has a total capacity of {_human(total)} of which {_human(free)} is free. "
            f"Of the allocated memory {pool.used_bytes()} bytes are allocated by autograd_gpu "
            f"tensors and {pool.total_bytes() - pool.used_bytes()} bytes are reserved but "
            "unallocated. Free tensors you no longer need (del, or no_grad for inference) and "
            "try again, or use a smaller batch.")


def _human(n: int) -> str:
    """``n`` bytes as PyTorch prints them in its OOM message (``2.00 GiB``)."""
    if n < 1024:
        return f"{n} bytes"
    size, units = n / 1024, ["KiB", "MiB", "GiB", "TiB"]
    while size >= 1024 and len(units) > 1:
        size, units = size / 1024, units[1:]
    return f"{size:.2f} {units[0]}"


_install_allocator()
cupy_backend = CupyBackend()
