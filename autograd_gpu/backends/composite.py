"""Fused primitives written with a backend's own one-liners.

These are the entries a GPU serves with one kernel each (activations and their backwards,
row-wise softmax, logsumexp, max/min with indices, cross-entropy): the NumPy backend inherits them
as they are, the CuPy backend overrides them with RawKernels and falls back here for the dtypes
its kernels do not cover. ``self`` is the backend object; every method takes and returns arrays.
"""

from __future__ import annotations

import math
from typing import Any

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


class Composite:
    """Mixin of fused primitives built from the backend's elementwise and reduction entries."""

    # ---- indexing ---------------------------------------------------------------------------
    def check_index(self: Any, shape: tuple[int, ...], key: tuple[Any, ...]) -> None:
        """PyTorch's IndexError for an index array with an entry out of range, before indexing:
        CuPy would wrap the entry around silently and NumPy names the axis. As in PyTorch, the
        n-th index array (a mask counting one per dimension it covers) is 'dimension n'. Costs
        one device-to-host copy of each integer array's extremes, only when the key has one."""
        n_real = sum(key_width(k) for k in key)
        checked: list[tuple[Array, int, int]] = []  # (array, size of its dimension, ordinal)
        dim = ordinal = 0
        for k in key:
            if k is Ellipsis:
                dim += len(shape) - n_real
                continue
            if _is_array(k):
                if k.dtype.kind in "iu" and k.size and dim < len(shape):
                    checked.append((k, shape[dim], ordinal))
                ordinal += key_width(k)
            dim += key_width(k)
        if not checked:
            return
        ends = self.to_host(self.stack([self.stack([k.min(), k.max()]).astype("int64")
                                        for k, _, _ in checked]))
        for (k, n, ordinal), (lo, hi) in zip(checked, ends.tolist()):
            if lo < -n or hi >= n:
                flat = k.reshape(-1)
                first = int(((flat < -n) | (flat >= n)).argmax())
                raise IndexError(f"index {int(flat[first])} is out of bounds for dimension "
                                 f"{ordinal} with size {n}")

    def out_of_range(self: Any, index: Array, lo: int, hi: int) -> int | None:
        """The first entry of the integer array ``index`` (in C order) outside ``[lo, hi)``, or
        None: what PyTorch's index checks report. Costs one reduction and one device-to-host
        copy (CuPy would wrap a bad entry around silently, NumPy would wrap a negative one)."""
        if not index.size:
            return None
        ends = self.to_host(self.stack([index.min(), index.max()]).astype("int64")).tolist()
        if lo <= ends[0] and ends[1] < hi:
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

    # ---- activations and their backwards (``grad`` is the incoming gradient) ------------------
    def relu(self: Any, x: Array) -> Array:
        return self.maximum(x, 0).astype(x.dtype, copy=False)

    def relu_backward(self: Any, out: Array, grad: Array) -> Array:
        # NOTE: the gradient at x == 0 is 0, as in PyTorch (out > 0 is false there).
        return self.where(out > 0, grad, 0).astype(grad.dtype, copy=False)

    def leaky_relu(self: Any, x: Array, slope: float) -> Array:
        return self.where(x > 0, x, x * slope)

    def leaky_relu_backward(self: Any, x: Array, grad: Array, slope: float) -> Array:
        # NOTE: the slope at x == 0 is negative_slope, as in PyTorch.
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
        return shifted - self.log(self.sum(self.exp(shifted), axis=axis, keepdims=True))

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
