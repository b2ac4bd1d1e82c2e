"""Fused primitives written with a backend's own one-liners.

These are the entries a GPU serves with one kernel each (activations and their backwards,
row-wise softmax, logsumexp, max/min with indices, cross-entropy): the NumPy backend inherits them
as they are, the CuPy backend overrides them with RawKernels and falls back here for the dtypes
its kernels do not cover. ``self`` is the backend object; every method takes and returns arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import cuda_support
from .base import Array, Axis

SQRT1_2 = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
GELU_BETA = math.sqrt(2.0 / math.pi)  # the tanh approximation's sqrt(2 / pi)
GELU_KAPPA = 0.044715


def _is_array(k: Any) -> bool:
    return getattr(k, "ndim", None) is not None and not isinstance(k, int)


def key_width(k: Any) -> int:
    """How many dimensions an entry of a NumPy index key covers: a boolean mask its ndim, None
    and Ellipsis none here (the caller spreads Ellipsis), anything else one."""
    if k is None or k is Ellipsis:
        return 0
    return int(k.ndim) if _is_array(k) and k.dtype.kind == "b" else 1


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The shape ``shapes`` broadcast to (they are known to broadcast)."""
    n = max(len(s) for s in shapes)
    return tuple(max(s[i - n + len(s)] if i - n + len(s) >= 0 else 1 for s in shapes)
                 for i in range(n))


def iter_order(shape: tuple[int, ...], strides: list[tuple[int, ...]]) -> list[int]:
    """The order of dimensions, innermost first, in which PyTorch's TensorIterator lays out the
    output of an op over inputs with ``strides`` (in elements, each input broadcast to
    ``shape``: 0 along a broadcast dimension). An insertion sort: the first input that tells
    two dimensions apart puts the one with the smaller stride inside; equal strides put the
    smaller dimension inside; an input broadcast along either has no say; no say at all keeps
    the C order."""
    perm = list(range(len(shape) - 1, -1, -1))

    def outer(d0: int, d1: int) -> int:  # 1: d0 goes outside d1; -1: inside; 0: no say
        for st in strides:
            if st[d0] == 0 or st[d1] == 0:
                continue
            if st[d0] != st[d1]:
                return 1 if st[d0] > st[d1] else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, len(perm)):
        j = i
        for k in range(i - 1, -1, -1):
            c = outer(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    return perm


def inverse_perm(perm: list[int] | tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes ``transpose(x, perm)``."""
    inverse = [0] * len(perm)
    for i, d in enumerate(perm):
        inverse[d] = i
    return tuple(inverse)


def broadcast_strides(x: Array, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``x``'s strides in elements as an input broadcast to ``shape`` (0 where broadcast)."""
    lead = len(shape) - x.ndim
    own = [s // x.itemsize for s in x.strides]
    return tuple(0 if i < lead or (x.shape[i - lead] == 1 and n != 1) else own[i - lead]
                 for i, n in enumerate(shape))


class Composite:
    """Mixin of fused primitives built from the backend's elementwise and reduction entries."""

    # ---- indexing ---------------------------------------------------------------------------
    def check_index(self: Any, shape: tuple[int, ...], key: tuple[Any, ...]) -> bool:
        """PyTorch's IndexError for index arrays that cannot index ``shape``, before indexing
        (CuPy would wrap an entry around silently and NumPy names the axis). As in PyTorch:

        - an index array over a dimension of size 0 is refused ("index is out of bounds for
          dimension with size 0") unless the index arrays broadcast to an empty shape;
        - entries are checked only when the result is not empty (PyTorch's kernel reads none
          otherwise: ``zeros(1, 0)[tensor([0, 2])]`` has shape (2, 0)); the n-th index array (a
          mask counting one per dimension it covers) is 'dimension n'.

        Returns True when the result is empty and ``key`` may hold entries NumPy refuses: the
        caller must not index with it (``empty_index`` gives the result). Costs one device-to-host
        copy (one bool: are the integer arrays' extremes in range), only when the key has one
        (and of the masks' counts when it meets an empty dimension or result)."""
        n_real = sum(key_width(k) for k in key)
        checked: list[tuple[Array, int, int]] = []  # (array, size of its dimension, ordinal)
        arrays: list[Array] = []
        over_empty_dim = False
        kept = 1  # the result's size in the dimensions no index array covers
        dim = ordinal = 0
        for k in key:
            if k is Ellipsis:
                n = len(shape) - n_real
                kept *= math.prod(shape[dim:dim + n])
                dim += n
            elif isinstance(k, slice):
                kept *= len(range(*k.indices(shape[dim])))
                dim += 1
            elif _is_array(k):
                arrays.append(k)
                over_empty_dim = over_empty_dim or 0 in shape[dim:dim + key_width(k)]
                if k.dtype.kind in "iu" and k.size and dim < len(shape):
                    checked.append((k, shape[dim], ordinal))
                ordinal += key_width(k)
                dim += key_width(k)
            elif k is not None:  # an integer
                dim += 1
        kept *= math.prod(shape[dim:])

        def no_index() -> bool:  # the index arrays broadcast to an empty shape
            if any(k.dtype.kind != "b" and not k.size for k in arrays):
                return True
            masks = [k.any() for k in arrays if k.dtype.kind == "b"]
            return bool(masks) and not bool(self.to_host(self.stack(masks).all()))

        if over_empty_dim:
            if not no_index():
                raise IndexError("index is out of bounds for dimension with size 0")
            return True
        if not checked:
            return False
        if not kept or no_index():
            return True
        inside = None  # NOTE: one bool read back (``_in_range``)
        for k, n, _ in checked:
            ok = self._in_range(k, -n, n)
            inside = ok if inside is None else inside & ok
        if bool(self.to_host(inside)):
            return False
        # NOTE: PyTorch reports the first entry read: at the first position (C order) of the
        # broadcast index shape where an array is out of range, the first such array.
        shape_b = _broadcast([k.shape for k, _, _ in checked])
        flat = [self.broadcast_to(k, shape_b).reshape(-1) for k, _, _ in checked]
        bad = self.stack([(f < -n) | (f >= n) for f, (_, n, _) in zip(flat, checked)])
        pos = int(bad.any(axis=0).argmax())
        j = int(bad[:, pos].argmax())
        raise IndexError(f"index {int(flat[j][pos])} is out of bounds for dimension "
                         f"{checked[j][2]} with size {checked[j][1]}")

    def empty_index(self: Any, shape: tuple[int, ...], key: tuple[Any, ...], dtype: Any) -> Array:
        """Zeros of the shape ``x[key]`` has (``x`` of ``shape``), for a key whose result
        ``check_index`` found empty: the integer arrays are read as 0 on a zero-strided stand-in
        for ``x`` (at least 1 long where they index), so no entry can be out of range."""
        n_real = sum(key_width(k) for k in key)
        stand_in = list(shape)
        safe: list[Any] = []
        dim = 0
        for k in key:
            if k is Ellipsis:
                dim += len(shape) - n_real
            elif _is_array(k) and k.dtype.kind in "iu":
                stand_in[dim] = max(stand_in[dim], 1)
                k = self.zeros(k.shape, k.dtype)
            safe.append(k)
            dim += key_width(k)
        out = self.broadcast_to(self.zeros((), dtype), tuple(stand_in))[tuple(safe)]
        return self.zeros(out.shape, dtype)

    def _in_range(self: Any, index: Array, lo: int, hi: int) -> Array:
        """Whether the non-empty integer array ``index`` lies in ``[lo, hi)``: its extremes
        compared as arrays, a 0-d bool for the caller to read back (a compiled step's replay
        checks that bool, which holds from batch to batch, where the extremes change)."""
        least, most = index.min(), index.max()
        if index.dtype.kind != "i" or index.dtype.itemsize != 8:
            least, most = least.astype("int64"), most.astype("int64")
        return (least >= lo) & (most < hi)

    def out_of_range(self: Any, index: Array, lo: int, hi: int) -> int | None:
        """The first entry of the integer array ``index`` (in C order) outside ``[lo, hi)``, or
        None: what PyTorch's index checks report. Costs one reduction and one device-to-host
        copy (CuPy would wrap a bad entry around silently, NumPy would wrap a negative one)."""
        if not index.size:
            return None
        if self.name == "cupy" and cuda_support.CAPTURE[0] is not None:
            # NOTE: a CUDA graph capture cannot read back: the check is captured as device work
            # and read after each replay (``cuda_graph.Capture.defer``), as PyTorch's CUDA
            # kernels assert on the device
            flat = index.reshape(-1)
            bad = (flat < lo) | (flat >= hi)
            cuda_support.CAPTURE[0].defer(bad.any(), flat[bad.argmax()], lo, hi, index)
            return None
        if lo == 0 and index.dtype.kind == "i":
            # NOTE: a negative entry read unsigned is above any bound: one reduction for both;
            # compared as arrays, read back as one bool (a compiled step's replay checks
            # that bool, which holds from batch to batch, not the largest index)
            if bool(self.max(index.view(f"u{index.dtype.itemsize}")) < hi):
                return None
        elif bool(self.to_host(self._in_range(index, lo, hi))):
            return None
        flat = index.reshape(-1)
        return int(flat[((flat < lo) | (flat >= hi)).argmax()])

    def along_axis_key(self: Any, index: Array, axis: int) -> tuple[Any, ...]:
        """The advanced-indexing key that pairs ``index`` along ``axis`` with positions
        ``0 .. index.shape[d] - 1`` of every other dimension ``d`` (NumPy's
        ``indices(index.shape, sparse=True)`` with ``index`` put in)."""
        nd = index.ndim
        key: list[Any] = []
        for d, n in enumerate(index.shape):
            if d == axis:
                key.append(index)
            else:
                shape = [1] * nd
                shape[d] = n
                key.append(self.arange(0, n, 1, "int64").reshape(shape))
        return tuple(key)

    def gather(self: Any, x: Array, index: Array, axis: int) -> Array:
        """PyTorch's ``gather``: ``out[i][j] = x[index[i][j]][j]`` for ``axis == 0``, with
        ``out`` of ``index``'s shape; a 0-d ``x`` or ``index`` counts as 1-d.

        NOTE: ``index`` may be smaller than ``x`` outside ``axis``; ``take_along_axis`` would
        broadcast it against ``x`` instead and return wrong values."""
        if x.ndim == 0 or index.ndim == 0:
            return self.gather(x.reshape(-1), index.reshape(-1), 0).reshape(index.shape)
        return x[self.along_axis_key(index, axis)]

    def scatter_add(self: Any, out: Array, index: Array, src: Array, axis: int) -> None:
        """``gather``'s adjoint, in place: ``out[index[i][j]][j] += src[i][j]`` for
        ``axis == 0`` (repeated indices accumulate); ``src`` has ``index``'s shape."""
        if out.ndim == 0 or index.ndim == 0:
            # NOTE: reshape(-1) of a contiguous ``out`` is a view, so the sum lands in ``out``.
            self.scatter_add(out.reshape(-1), index.reshape(-1), src.reshape(-1), 0)
            return
        self.index_add(out, self.along_axis_key(index, axis), src)

    def torch_order(self: Any, out: Array, inputs: tuple[Any, ...]) -> list[int]:
        """``iter_order`` for an elementwise op's output ``out`` over ``inputs`` (arrays that
        broadcast to it; anything else has no say)."""
        return iter_order(out.shape, [broadcast_strides(a, out.shape) for a in inputs
                                      if getattr(a, "ndim", 0)])

    def with_order(self: Any, x: Array, order: list[int]) -> Array:
        """``x`` laid out with its dimensions ``order`` innermost first (``iter_order``):
        ``x`` itself when it already is, else a copy."""
        outer = order[::-1]
        y = self.transpose(x, outer)
        if y.flags.c_contiguous:
            return x
        return self.transpose(self.ascontiguousarray(y), inverse_perm(outer))

    def iter_layout(self: Any, out: Array, inputs: tuple[Any, ...] | list[Any]) -> Array:
        """``out``, the result of an elementwise op over ``inputs`` (arrays that broadcast to it,
        or scalars), laid out as PyTorch's TensorIterator lays it out (``iter_order``): ``out``
        itself when it is, else a copy. C-contiguous inputs give a C-contiguous result.

        NOTE: NumPy's ufuncs differ from TensorIterator where two inputs disagree (NumPy lets C
        order win, PyTorch the first input) and on some inputs with zero strides; CuPy's
        ufuncs always return C order. The layout decides whether a later ``view`` works and
        whether ``reshape`` is a view (so where an in-place write through it lands)."""
        if out.ndim < 2 or not out.size:
            return out
        arrays = [a for a in inputs if getattr(a, "ndim", 0)]
        if len(arrays) == 1:
            x = arrays[0]
            # NOTE: one dense input whose strides the result already has (NumPy's order='K'
            # copies them): TensorIterator's result too; no ordering to compute.
            if x.strides == out.strides and x.shape == out.shape and x.itemsize == out.itemsize:
                return out
        if all(a.flags.c_contiguous for a in arrays):
            return out if out.flags.c_contiguous else self.ascontiguousarray(out)
        return self.with_order(out, iter_order(out.shape, [broadcast_strides(a, out.shape)
                                                           for a in arrays]))

    def like_order(self: Any, x: Array) -> list[int] | None:
        """The order of dimensions, innermost first, of a new tensor made like ``x`` with
        PyTorch's ``preserve_format`` (``empty_like``, ``clone``, ``to``): ``x``'s own when it is
        dense and non-overlapping, else dense strides in the order of ``x``'s (C order where a
        zero stride leaves it open). None for C order."""
        if x.ndim < 2 or x.flags.c_contiguous:
            return None
        order = iter_order(x.shape, [tuple(s // x.itemsize for s in x.strides)])
        return None if order == list(range(x.ndim - 1, -1, -1)) else order

    def empty_in_order(self: Any, shape: tuple[int, ...], dtype: Any, order: list[int] | None,
                       make: Any = None) -> Array:
        """``make(shape, dtype)`` (``empty`` by default) laid out in ``order`` (``like_order``;
        None: C order), without a copy: made in the permuted shape, then transposed back."""
        make = make or self.empty
        if order is None:
            return make(shape, dtype)
        outer = order[::-1]
        return self.transpose(make(tuple(shape[d] for d in outer), dtype), inverse_perm(outer))

    def index_layout(self: Any, x: Array, key: tuple[Any, ...], out: Array) -> Array:
        """``out = x[key]`` (``key``: index arrays and full slices) laid out as PyTorch's index
        kernel lays it out: TensorIterator's order (``iter_order``) over ``x`` restrided to
        the result (0 along the index dimensions) and the index arrays (0 elsewhere; a mask
        counts as its nonzero positions, one contiguous array per dimension it covers)."""
        if out.ndim < 2 or not out.size:
            return out
        dims: list[int] = []  # x's dimensions no index array covers
        arrays: list[tuple[Array, int]] = []  # (array or mask, dimensions it covers)
        first = last = -1
        dim = 0
        for k in key:
            if _is_array(k):
                w = key_width(k)
                first = dim if first < 0 else first
                last = dim + w
                arrays.append((k, w))
                dim += w
            else:
                dims.append(dim)
                dim += 1
        dims += range(dim, x.ndim)
        # NOTE: index arrays apart from each other put their dimensions in front (as NumPy).
        apart = any(first < d < last for d in dims)
        before = [] if apart else [d for d in dims if d < first]
        after = [d for d in dims if d not in before]
        nb = out.ndim - len(dims)  # the index arrays' broadcast dimensions
        own = [s // x.itemsize for s in x.strides]
        src = tuple([own[d] for d in before] + [0] * nb + [own[d] for d in after])
        pad = ([0] * len(before), [0] * len(after))
        bshape = out.shape[len(before):len(before) + nb]
        strides = [src]
        for k, w in arrays:
            if k.dtype.kind == "b":  # NOTE: nonzero() gives w contiguous 1-d arrays
                st = (0,) * (nb - 1) + (1,)
                strides += [tuple(pad[0]) + st + tuple(pad[1])] * w
            else:
                strides.append(tuple(pad[0]) + broadcast_strides(k, bshape) + tuple(pad[1]))
        return self.with_order(out, iter_order(out.shape, strides))

    # ---- float16 arithmetic with a number or a scale ------------------------------------------
    def opmath(self: Any, name: str, x: Any, y: Any, alpha: Any = 1, out: Array | None = None
               ) -> Array:
        """``x + alpha * y`` / ``x - alpha * y`` / ``x * y`` / ``x / y`` (``name``: ``add``,
        ``subtract``, ``multiply``, ``true_divide``) for float16 operands, ``y`` maybe a Python
        number, as PyTorch's CPU kernels compute them: in float32 (their opmath type) from a
        number ``y`` of ``*`` and ``/`` taken as float32 and an ``alpha`` rounded to float16,
        the result rounded once to float16 (into ``out``).

        NOTE: NumPy would round the number to float16 first (``x * 1e-8`` would be 0 and
        ``0 * 1e10`` nan, where PyTorch gives 1e-5 for x = 1000, and 0), and round
        ``alpha * y`` before adding it (one float16 ulp off in a fifth of the elements)."""
        f32 = "float32"
        xs = x.astype(f32) if hasattr(x, "dtype") else x
        ys = y.astype(f32) if hasattr(y, "dtype") else y
        if alpha != 1:
            ys = ys * float(np.float16(alpha))
        r = getattr(self, name)(xs, ys)
        if out is None:
            return r.astype("float16")
        out[...] = r
        return out

    # ---- activations and their backwards (``grad`` is the incoming gradient) ------------------
    def relu(self: Any, x: Array) -> Array:
        # NOTE: zero first: NumPy's maximum of two equal zeros returns the second, so
        # relu(-0.0) is -0.0 and NaN stays NaN, as PyTorch's clamp_min(x, 0).
        return self.maximum(0, x).astype(x.dtype, copy=False)

    def relu_backward(self: Any, out: Array, grad: Array) -> Array:
        # NOTE: 0 where out <= 0 (so at x == 0), grad elsewhere, NaN included, as PyTorch's
        # threshold_backward.
        return self.where(out <= 0, 0, grad).astype(grad.dtype, copy=False)

    def leaky_relu(self: Any, x: Array, slope: float) -> Array:
        return self.where(x > 0, x, x * slope)

    def leaky_relu_backward(self: Any, x: Array, grad: Array, slope: float) -> Array:
        # NOTE: the slope at x == 0 and at NaN is negative_slope (x > 0 is false), as in PyTorch.
        return self.where(x > 0, grad, grad * slope)

    def sigmoid_backward(self: Any, out: Array, grad: Array) -> Array:
        return grad * out * (1 - out)

    def tanh_backward(self: Any, out: Array, grad: Array) -> Array:
        return grad * (1 - out * out)

    def gelu(self: Any, x: Array, approximate: str) -> Array:
        if approximate == "tanh":
            inner = GELU_BETA * (x + GELU_KAPPA * x * x * x)
            return 0.5 * x * (1 + self.tanh(inner))
        return 0.5 * x * (1 + self.erf(x * SQRT1_2))

    def gelu_backward(self: Any, x: Array, grad: Array, approximate: str) -> Array:
        if approximate == "tanh":
            x_sq = x * x
            th = self.tanh(GELU_BETA * (x + GELU_KAPPA * x_sq * x))
            left = 0.5 * (1 + th)
            right = 0.5 * x * (1 - th * th) * GELU_BETA * (1 + 3 * GELU_KAPPA * x_sq)
            return grad * (left + right)
        cdf = 0.5 * (1 + self.erf(x * SQRT1_2))
        pdf = self.exp(-0.5 * x * x) * _INV_SQRT_2PI
        return grad * (cdf + x * pdf)

    def silu(self: Any, x: Array) -> Array:
        return x * self.sigmoid(x).astype(x.dtype, copy=False)

    def silu_backward(self: Any, x: Array, grad: Array) -> Array:
        s = self.sigmoid(x).astype(x.dtype, copy=False)
        return grad * s * (1 + x * (1 - s))

    # ---- row-wise softmax along one axis ----------------------------------------------------
    def softmax(self: Any, x: Array, axis: int) -> Array:
        if not x.size:
            return self.copy(x)
        # NOTE: subtract the row max so that exp never overflows.
        e = self.exp(x - self.max(x, axis=axis, keepdims=True))
        return e / self.sum(e, axis=axis, keepdims=True)

    def log_softmax(self: Any, x: Array, axis: int) -> Array:
        if not x.size:
            return self.copy(x)
        # NOTE: x - max - log(sum(exp(x - max))): stable for large |x|.
        shifted = x - self.max(x, axis=axis, keepdims=True)
        lse = self.log(self.sum(self.exp(shifted), axis=axis, keepdims=True))
        # NOTE: in place (one array fewer); a 0-d input made NumPy scalars
        return self.subtract(shifted, lse, out=shifted) if x.ndim else shifted - lse

    def softmax_backward(self: Any, out: Array, grad: Array, axis: int) -> Array:
        return out * (grad - self.sum(grad * out, axis=axis, keepdims=True))

    def log_softmax_backward(self: Any, out: Array, grad: Array, axis: int) -> Array:
        return grad - self.exp(out) * self.sum(grad, axis=axis, keepdims=True)

    # ---- reductions -------------------------------------------------------------------------
    def logsumexp(self: Any, x: Array, axis: Axis, keepdims: bool = False) -> Array:
        m = self.max(x, axis=axis, keepdims=True) if x.size else self.zeros((1,) * x.ndim, x.dtype)
        # NOTE: subtract the max for stability; an infinite max is replaced by 0 so that
        # inf - inf never makes NaN (the result is then inf or -inf, as it should be).
        m = self.where(self.isfinite(m), m, 0)
        s = self.sum(self.exp(x - m), axis=axis, keepdims=True)
        with self.errstate(divide="ignore"):
            out = self.log(s) + m
        if not keepdims:
            out = self.squeeze(out, axis=axis)
        return out.astype(x.dtype, copy=False)

    def arg_reduce(self: Any, x: Array, axis: int, is_max: bool) -> tuple[Array, Array]:
        """The max (or min) along ``axis`` and its first index, both with ``axis`` kept; NaN
        wins, as in PyTorch."""
        idx = (self.argmax if is_max else self.argmin)(x, axis=axis, keepdims=True)
        return self.take_along_axis(x, idx, axis), idx.astype("int64", copy=False)

    # ---- cross-entropy over class-index targets (rows of logits) ------------------------------
    def cross_entropy(self: Any, logits: Array, target: Array,
                      ignore_index: int = -100) -> tuple[Array, Array]:
        """Per-row ``logsumexp(logits[n]) - logits[n, target[n]]`` (0 where the target is
        ignored) and the per-row logsumexp, for ``(N, C)`` logits and ``(N,)`` int64 targets."""
        lse = self.logsumexp(logits, 1)
        ignored = self.equal(target, ignore_index)
        safe = self.where(ignored, 0, target).reshape(-1, 1)
        picked = self.take_along_axis(logits, safe, 1).reshape(-1)
        return self.where(ignored, 0, lse - picked).astype(logits.dtype, copy=False), lse

    def cross_entropy_backward(self: Any, logits: Array, target: Array, lse: Array,
                               grad_loss: Array, ignore_index: int = -100) -> Array:
        """``(softmax(logits) - onehot(target)) * grad_loss[n]``, zero rows where ignored."""
        classes = self.arange(0, logits.shape[1], 1, "int64").reshape(1, -1)
        hot = self.equal(classes, target.reshape(-1, 1))
        coef = self.where(self.equal(target, ignore_index), 0, grad_loss).reshape(-1, 1)
        soft = self.exp(logits - lse.reshape(-1, 1))
        return ((soft - hot) * coef).astype(logits.dtype, copy=False)
