"""The CPU backend: NumPy one-liners, in the order of ``base.Backend``."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys
from typing import Any

import numpy as np

from .base import Array, Axis, Shape
from .composite import Composite
from .families import Families
from .pointwise_erf import erf as _erf
from .torch_rng import TorchCPUGenerator


# Typed as Any: NumPy's stubs want a literal for ``keepdims`` in ``reduce``.
_ADD: Any = np.add
_MULTIPLY: Any = np.multiply
_MAXIMUM: Any = np.maximum
_MINIMUM: Any = np.minimum
# Unsigned integer views by item size, for ``where``'s bit blend.
_BITS: dict[int, Any] = {1: np.dtype("u1"), 2: np.dtype("u2"), 4: np.dtype("u4"), 8: np.dtype("u8")}
_BLEND_MIN = 8192  # NOTE: below this np.where is as fast (the branch predictor keeps up)


def _fp_switches() -> tuple[Any, Any]:
    """``(quiet, restore)``: ``token = quiet()`` silences NumPy's floating-point errors (PyTorch
    never warns on inf/nan) until ``restore(token)``.

    NOTE: since NumPy 2 the error state is a context variable: setting and resetting it costs a
    fifth of ``np.errstate``, and every op pays it (``Node.apply``).
    """
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as state  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - NumPy < 2
        return (staticmethod(lambda: np.seterr(all="ignore")),
                staticmethod(lambda token: np.seterr(**token)))
    with np.errstate(all="ignore"):
        quiet = state.get()
    return functools.partial(state.set, quiet), state.reset


_QUIET_FP, _RESTORE_FP = _fp_switches()


class NumpyBackend(Composite, Families):
    """NumPy behind the backend interface. Ufuncs are stored as-is: they do not bind as methods,
    so ``backend.add(x, y)`` costs exactly one NumPy call."""

    name = "numpy"
    xp: Any = np  # the array module (the op families' mixins call it)
    ndarray = np.ndarray
    generic = np.generic

    # creation
    asarray = staticmethod(np.asarray)
    empty = staticmethod(np.empty)
    zeros = staticmethod(np.zeros)
    full = staticmethod(np.full)

    @staticmethod
    def ones(shape: Any, dtype: Any = None, order: Any = "C") -> Array:
        # NOTE: np.ones is Python (empty, then copyto): a third of its cost for small arrays
        # (every backward() of a scalar makes one).
        out = np.empty(shape, dtype, order)
        out.fill(1)
        return out
    linspace = staticmethod(np.linspace)
    zeros_like = staticmethod(np.zeros_like)
    ones_like = staticmethod(np.ones_like)
    ascontiguousarray = staticmethod(np.ascontiguousarray)

    @staticmethod
    def arange(start: Any, stop: Any, step: Any, dtype: str) -> Array:
        return np.arange(start, stop, step, dtype=dtype)

    @staticmethod
    def eye(n: int, m: int, dtype: str) -> Array:
        return np.eye(n, m, dtype=dtype)

    @staticmethod
    def copy(x: Array) -> Array:
        return np.array(x, copy=True)

    @staticmethod
    def astype(x: Array, dtype: str) -> Array:
        return x.astype(dtype)

    @staticmethod
    def to_host(x: Array) -> np.ndarray:
        return x

    @staticmethod
    def from_host(x: np.ndarray) -> Array:
        return x

    from_dlpack = staticmethod(np.from_dlpack)

    # elementwise
    add = np.add
    subtract = np.subtract
    multiply = np.multiply
    true_divide = np.true_divide
    floor_divide = np.floor_divide
    remainder = np.remainder
    fmod = np.fmod
    power = np.power
    negative = np.negative
    abs = np.abs

    @staticmethod
    def sign(x: Array) -> Array:
        out = np.sign(x)
        # NOTE: PyTorch's sign(nan) is 0; NumPy's is nan.
        return np.where(out != out, 0, out) if out.dtype.kind == "f" else out

    exp = np.exp
    log = np.log
    log1p = np.log1p
    expm1 = np.expm1
    sqrt = np.sqrt
    sin = np.sin
    cos = np.cos
    tanh = np.tanh
    maximum = np.maximum
    minimum = np.minimum
    fmax = np.fmax
    @staticmethod
    def where(cond: Array, x: Any, y: Any) -> Array:
        """``np.where``, with a large boolean ``cond`` done as a bit blend:
        ``y ^ ((x ^ y) & -cond)`` on the values' bits. Exact (NaN payloads, -0.0), and 6-7x
        faster than ``np.where`` on a random mask, whose per-element branch mispredicts."""
        if not (isinstance(cond, np.ndarray) and cond.dtype == np.bool_
                and cond.size >= _BLEND_MIN):
            return np.where(cond, x, y)
        dt = np.result_type(x, y)
        bits = _BITS.get(dt.itemsize)
        if bits is None or dt.kind not in "biuf":
            return np.where(cond, x, y)
        xb, yb = np.asarray(x, dt).view(bits), np.asarray(y, dt).view(bits)
        mask = cond.astype(bits)
        np.negative(mask, out=mask)  # NOTE: unsigned: True -> all bits set
        out = np.bitwise_and(np.bitwise_xor(xb, yb), mask)
        np.bitwise_xor(out, yb, out=out)
        return out.view(dt)

    clip = staticmethod(np.clip)
    floor = np.floor
    trunc = np.trunc
    isnan = np.isnan
    isinf = np.isinf
    isfinite = np.isfinite
    equal = np.equal
    not_equal = np.not_equal
    less = np.less
    less_equal = np.less_equal
    greater = np.greater
    greater_equal = np.greater_equal
    logical_not = np.logical_not
    logical_and = np.logical_and
    logical_or = np.logical_or
    logical_xor = np.logical_xor
    bitwise_and = np.bitwise_and
    bitwise_or = np.bitwise_or
    bitwise_xor = np.bitwise_xor
    copyto = staticmethod(np.copyto)

    @staticmethod
    def sigmoid(x: Array) -> Array:
        # NOTE: 1 / (1 + exp(-x)) overflows exp for x << 0 only to inf, which gives the right 0;
        # the ops call it with floating-point warnings off (Node.apply), so no branch is needed.
        return 1.0 / (1.0 + np.exp(-x))

    @staticmethod
    def erf(x: Array) -> Array:
        # NOTE: NumPy has no erf: pointwise_erf's table in float64 (within 1.1 ulp, and 2 of the
        # C library's math.erf), rounded once to x's dtype.
        return np.asarray(_erf(np, x.astype(np.float64, copy=False)), dtype=x.dtype)

    # reductions
    # NOTE: the ufuncs' reduce directly: np.sum & co. add ~2 us of Python per call. Their
    # default axis is 0, so the wrappers pass axis explicitly.
    @staticmethod
    def sum(x: Array, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Array:
        return _ADD.reduce(x, axis, dtype, None, keepdims)

    @staticmethod
    def prod(x: Array, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Array:
        return _MULTIPLY.reduce(x, axis, dtype, None, keepdims)

    @staticmethod
    def max(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:
        return _MAXIMUM.reduce(x, axis, None, None, keepdims)

    @staticmethod
    def min(x: Array, axis: Axis = None, keepdims: bool = False) -> Array:
        return _MINIMUM.reduce(x, axis, None, None, keepdims)

    argmax = staticmethod(np.argmax)
    argmin = staticmethod(np.argmin)
    any = staticmethod(np.any)
    all = staticmethod(np.all)
    cumsum = staticmethod(np.cumsum)
    sort = staticmethod(np.sort)

    # movement
    reshape = staticmethod(np.reshape)
    transpose = staticmethod(np.transpose)
    broadcast_to = staticmethod(np.broadcast_to)

    @staticmethod
    def expand(x: Array, shape: Shape) -> Array:
        """``x`` broadcast to ``shape``, writable where ``x`` is: PyTorch's ``expand``, whose
        views take writes (``x.expand(2, 3)[0].mul_(2)``); in-place ops refuse an overlapping
        destination themselves (``_check_overlap``), as on CuPy, which has no read-only flag."""
        out = np.broadcast_to(x, shape)
        if x.flags.writeable:
            out.flags.writeable = True
        return out

    @staticmethod
    def as_strided(x: Array, shape: Shape, strides: Shape, writeable: bool = False) -> Array:
        """A view of ``x``'s buffer with ``shape`` and byte ``strides`` (sliding windows for
        convolution and pooling), read-only unless ``writeable`` (``Tensor.as_strided``,
        ``empty_strided``); the caller keeps it inside the buffer."""
        return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=writeable)
    concatenate = staticmethod(np.concatenate)
    stack = staticmethod(np.stack)
    take_along_axis = staticmethod(np.take_along_axis)
    put_along_axis = staticmethod(np.put_along_axis)
    nonzero = staticmethod(np.nonzero)
    shares_memory = staticmethod(np.shares_memory)
    expand_dims = staticmethod(np.expand_dims)
    squeeze = staticmethod(np.squeeze)
    moveaxis = staticmethod(np.moveaxis)

    @staticmethod
    def view(x: Array, shape: Shape) -> Array | None:
        """``x`` reshaped without copying, or None when its strides make that impossible."""
        # NOTE: reshape(copy=False) raises instead of copying; NumPy 2.5 deprecates the older
        # way (assigning to a view's .shape), and NumPy < 2.1 has no copy argument.
        try:
            return x.reshape(shape, copy=False)
        except ValueError:
            return None
        except TypeError:  # NumPy < 2.1
            out = x.view()
            try:
                out.shape = shape
            except AttributeError:
                return None
            return out

    @staticmethod
    def index_add(x: Array, key: Any, values: Array) -> None:
        np.add.at(x, key, values)

    @staticmethod
    def is_contiguous(x: Array) -> bool:
        return bool(x.flags.c_contiguous)

    @staticmethod
    def owns_writable(x: Array) -> bool:
        """True when ``x`` owns its buffer and may be written in place."""
        return x.base is None and x.flags.writeable

    # linear algebra
    matmul = np.matmul
    dot = staticmethod(np.dot)

    # random: PyTorch's CPU streams (``torch_rng``: mt19937 and PyTorch's transformations)
    @staticmethod
    def new_generator(seed: int) -> TorchCPUGenerator:
        return TorchCPUGenerator(seed)

    @staticmethod
    def random(gen: Any, shape: Shape, dtype: str) -> Array:
        return gen.random(tuple(shape), dtype)

    @staticmethod
    def standard_normal(gen: Any, shape: Shape, dtype: str) -> Array:
        return gen.standard_normal(tuple(shape), dtype)

    @staticmethod
    def integers(gen: Any, low: int, high: int, shape: Shape, dtype: str) -> Array:
        return gen.integers(low, high, tuple(shape), dtype)

    @staticmethod
    def permutation(gen: Any, n: int) -> Array:
        return gen.permutation(n)

    @staticmethod
    def uniform(gen: Any, shape: Shape, lo: float, hi: float, dtype: str) -> Array:
        """``uniform_(lo, hi)`` as PyTorch's CPU kernel computes it (see ``torch_rng``)."""
        return gen.uniform(tuple(shape), lo, hi, dtype)

    def normal(self, gen: Any, mean: Any, std: Any, shape: Shape, dtype: str) -> Array:
        """``normal_(mean, std)`` as PyTorch's CPU kernel for numbers; arrays of means or
        deviations scale standard normals (PyTorch's ``normal`` with tensors does the same)."""
        if isinstance(mean, (int, float)) and isinstance(std, (int, float)):
            return gen.normal(tuple(shape), float(mean), float(std), dtype)
        z = gen.standard_normal(tuple(shape), dtype).astype("float64")
        return (mean + std * z).astype(dtype, copy=False)

    @staticmethod
    def errstate(**kw: Any) -> Any:
        return np.errstate(**kw)

    # ---- relu: Composite's results, bit for bit, without NumPy's slow paths ----------------------
    def relu(self, x: Array) -> Array:
        if x.__class__ is np.ndarray and x.dtype.kind == "f" and x.flags.c_contiguous:
            # NOTE: maximum against a scalar does not vectorise in NumPy 2.4 (2-3x slower than
            # against an array): the zeros become the result, first operand as in Composite
            out = np.zeros(x.shape, x.dtype)
            return np.maximum(out, x, out=out)
        return Composite.relu(self, x)  # NOTE: also the meta device's (no data to compute)

    def relu_backward(self, out: Array, grad: Array) -> Array:
        dtype = grad.dtype
        if grad.__class__ is np.ndarray and out.__class__ is np.ndarray and dtype.kind == "f" \
                and out.dtype == dtype and out.shape == grad.shape \
                and out.flags.c_contiguous and grad.flags.c_contiguous:
            # NOTE: where's bit blend with one side zero: the bits of grad and-ed with all ones
            # where out > 0 or NaN, with zeros (+0.0) where out <= 0; half the passes (2x)
            bits = _BITS[dtype.itemsize]
            keep = np.less_equal(out, 0).astype(bits)
            keep -= 1
            keep &= grad.view(bits)
            return keep.view(dtype)
        return Composite.relu_backward(self, out, grad)

    quiet_fp: Any = _QUIET_FP  # NOTE: neither binds as a method (see _fp_switches)
    restore_fp: Any = _RESTORE_FP


numpy_backend = NumpyBackend()


def _keep_freed_buffers() -> bool:
    """Ask glibc to serve large blocks from its heap and keep freed memory there.

    NOTE: by default glibc gives each multi-megabyte array fresh pages from mmap and returns them
    on free, so every new temporary of a 10^6-element op page-faults (about 2 ms per 4 MB).
    Keeping freed blocks, as PyTorch's and CuPy's caching allocators do, makes the next
    temporary reuse warm pages: about 8x faster forward+backward at 10^6 elements. The process
    keeps the memory it used at its peak. Set AUTOGRAD_GPU_SYSTEM_MALLOC=1 to opt out.
    """
    if os.environ.get("AUTOGRAD_GPU_SYSTEM_MALLOC") or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        ok_mmap = libc.mallopt(m_mmap_threshold, 1 << 30)
        ok_trim = libc.mallopt(m_trim_threshold, (1 << 31) - 1)
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(ok_mmap and ok_trim)


MALLOC_TUNED = _keep_freed_buffers()
