"""Ops behind ``nn.functional``: activations and losses that PyTorch records as one node each
(``GeluBackward0``, ``NllLossBackward0``, ...). Forward on backend arrays; backward with tensor
ops, so it is itself differentiable (higher-order gradients)."""

from __future__ import annotations

import math
from typing import Any

from ..autograd.node import Node
from ..backends.composite import GELU_BETA, GELU_KAPPA, SQRT1_2
from .elementwise import _Unary
from .unary import threshold_grad

_2_SQRTPI = 2.0 / math.sqrt(math.pi)


def _reduce(b: Any, losses: Any, reduction: str, like: tuple[Any, ...] = ()) -> Any:
    """``losses`` reduced: 'none' keeps them (laid out as TensorIterator lays out an op over the
    arrays ``like``, as PyTorch's loss), 'sum' adds them, 'mean' averages (nan if empty)."""
    if reduction == "none":
        return b.iter_layout(losses, like) if like else losses
    total = b.sum(losses)
    if reduction == "sum":
        return total
    return b.true_divide(total, losses.size).astype(losses.dtype, copy=False)


def _scale(grad: Any, x: Any, reduction: str) -> Any:
    """The incoming loss gradient, divided by the count for 'mean' (it broadcasts over ``x``)."""
    return grad / x.numel() if reduction == "mean" else grad


# ---- dropout ----------------------------------------------------------------------------------

class NativeDropout(Node):
    """``x * keep * scale`` with ``keep`` a bool mask (NativeDropoutBackward0): PyTorch's fused
    CUDA dropout, which keeps one byte per element for backward (the mask) where the CPU's
    ``x * noise`` keeps the float noise."""

    node_name = "NativeDropoutBackward0"
    elementwise = True

    def __init__(self, scale: float) -> None:
        self.scale = scale

    def forward(self, x: Any, keep: Any) -> Any:
        if self.needs_input_grad:
            self.save_for_backward(keep)
        b = self.backend
        kept = b.multiply(x, keep)
        if x.dtype == "float16":
            return b.opmath("multiply", kept, self.scale)
        return b.multiply(kept, self.scale).astype(x.dtype, copy=False)

    def backward(self, grad: Any) -> tuple[Any, None]:
        (keep,) = self.saved_tensors
        return grad * keep * self.scale, None


# ---- activations ------------------------------------------------------------------------------

class Erf(_Unary):
    node_name = "ErfBackward0"

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.erf(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * (_2_SQRTPI * (-(x * x)).exp())


class Gelu(_Unary):
    """``x * Phi(x)`` (``approximate='none'``) or its tanh approximation."""

    node_name = "GeluBackward0"
    raw_ok = True

    def __init__(self, approximate: str) -> None:
        self.approximate = approximate

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.gelu(x, self.approximate)

    def grad_of(self, grad: Any, x: Any) -> Any:
        if self._raw:
            return self.backend.gelu_backward(x, grad, self.approximate)
        if self.approximate == "tanh":
            x_sq = x * x
            th = (GELU_BETA * (x + GELU_KAPPA * x_sq * x)).tanh()
            left = 0.5 * (1 + th)
            right = 0.5 * x * (1 - th * th) * GELU_BETA * (1 + 3 * GELU_KAPPA * x_sq)
            return grad * (left + right)
        cdf = 0.5 * (1 + Erf.apply(x * SQRT1_2))
        pdf = (-0.5 * x * x).exp() * (0.5 * _2_SQRTPI * SQRT1_2)
        return grad * (cdf + x * pdf)


class LeakyRelu(_Unary):
    node_name = "LeakyReluBackward0"
    raw_ok = True

    def __init__(self, negative_slope: float) -> None:
        self.slope = negative_slope

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.leaky_relu(x, self.slope)

    def grad_of(self, grad: Any, x: Any) -> Any:
        if self._raw:
            return self.backend.leaky_relu_backward(x, grad, self.slope)
        # NOTE: the slope at x == 0 and at NaN is negative_slope (x > 0 is false), as in PyTorch.
        return threshold_grad(self, grad, x, x > 0, self.slope, "LeakyReluBackwardBackward0")


class Elu(_Unary):
    node_name = "EluBackward0"

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha

    def forward(self, x: Any) -> Any:
        b = self.backend
        self.save_for_backward(x)
        # NOTE: expm1 of min(x, 0): the branch that is thrown away never overflows.
        return b.where(x > 0, x, self.alpha * b.expm1(b.minimum(x, 0)))

    def grad_of(self, grad: Any, x: Any) -> Any:
        # NOTE: the slope at x == 0 is alpha, and the curvature there 0, as in PyTorch; at NaN
        # the gradient passes unscaled (PyTorch tests x <= 0, false for NaN); exp sees min(x, 0)
        # only, so the discarded branch never overflows.
        return (grad * self.alpha * x.where(x < 0, 0.0).exp()).where(x <= 0, grad)


_NEGATIVE_SLOPE = (
    "In-place {} backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative slope, "
    "please call out-of-place version instead."
)


class LeakyReluResult(LeakyRelu):
    """In-place ``leaky_relu_`` (LeakyReluBackward1): saves its output, not a copy of the
    overwritten input, so that a later write to it makes backward refuse, as PyTorch's.

    NOTE: the slope follows from the output's sign only when ``negative_slope >= 0``; backward
    refuses a negative one, as PyTorch."""

    node_name = "LeakyReluBackward1"

    def forward(self, x: Any) -> Any:
        out = self.backend.leaky_relu(x, self.slope)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        if self.slope < 0:
            raise RuntimeError(_NEGATIVE_SLOPE.format("leakyReLu") + " File an issue at "
                               "https://github.com/pytorch/pytorch if you do require supporting "
                               "in-place leakRelu backward calculation with negative slope")
        return super().grad_of(grad, out)


class EluResult(Elu):
    """In-place ``elu_`` (EluBackward1): saves its output, from which the gradient follows
    (``out + alpha`` where ``out <= 0``), so that a later write to it makes backward refuse."""

    node_name = "EluBackward1"

    def forward(self, x: Any) -> Any:
        out = super().forward(x)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        if self.alpha < 0:
            raise RuntimeError(_NEGATIVE_SLOPE.format("elu"))
        # NOTE: only out < 0 is differentiated (at out == 0 PyTorch's double backward is 0)
        return (grad * (out.where(out < 0, 0.0) + self.alpha)).where(out <= 0, grad)


class Silu(_Unary):
    node_name = "SiluBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self.backend.silu(x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        if self._raw:
            return self.backend.silu_backward(x, grad)
        s = x.sigmoid()
        return grad * s * (1 + x * (1 - s))


class Softplus(_Unary):
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``."""

    node_name = "SoftplusBackward0"

    def __init__(self, beta: float, threshold: float) -> None:
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Any) -> Any:
        b = self.backend
        self.save_for_backward(x)
        bx = x * self.beta
        # NOTE: max(bx, 0) + log1p(exp(-|bx|)) equals log1p(exp(bx)) and never overflows.
        soft = (b.maximum(bx, 0) + b.log1p(b.exp(-b.abs(bx)))) / self.beta
        return b.where(bx > self.threshold, x, soft).astype(x.dtype, copy=False)

    def grad_of(self, grad: Any, x: Any) -> Any:
        bx = x * self.beta
        return grad.where(bx > self.threshold, grad * bx.sigmoid())


class ConstantPadNd(_Unary):
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dimensions."""

    node_name = "ConstantPadNdBackward0"
    elementwise = False  # NOTE: a new shape, C-contiguous as in PyTorch

    def __init__(self, pad: tuple[int, ...], value: Any) -> None:
        self.pad, self.value = pad, value

    def forward(self, x: Any) -> Any:
        shape, src, dst = list(x.shape), [slice(None)] * x.ndim, [slice(None)] * x.ndim
        for i in range(len(self.pad) // 2):
            d = x.ndim - 1 - i
            lo, hi, n = self.pad[2 * i], self.pad[2 * i + 1], x.shape[d]
            shape[d] = n + lo + hi
            if shape[d] < 0:
                raise RuntimeError(
                    f"narrow(): length must be non-negative. (Dimension {d} of size {n} padded "
                    f"by {lo} and {hi}.)"
                )
            start, stop = max(-lo, 0), n - max(-hi, 0)
            length = max(stop - start, 0)
            src[d] = slice(start, start + length)
            dst[d] = slice(max(lo, 0), max(lo, 0) + length)
        out = self.backend.full(tuple(shape), self.value, x.dtype)
        out[tuple(dst)] = x[tuple(src)]
        return out

    def grad_of(self, grad: Any) -> Any:
        # NOTE: the gradient of padding is the opposite crop (and vice versa).
        return ConstantPadNd.apply(grad, pad=tuple(-p for p in self.pad), value=0)


# ---- losses -----------------------------------------------------------------------------------

class MseLoss(Node):
    node_name = "MseLossBackward0"

    def __init__(self, reduction: str) -> None:
        self.reduction = reduction

    def forward(self, x: Any, y: Any) -> Any:
        self.save_for_backward(x, y)
        d = x - y
        return _reduce(self.backend, d * d, self.reduction, (x, y))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        gx = 2 * (x - y) * _scale(grad, x, self.reduction)
        return (gx if self.needs_input_grad[0] else None,
                -gx if self.needs_input_grad[1] else None)


class NllLoss(Node):
    """``-weight[t] * x[n, t]`` per sample ``n`` (class dim 1); ``ignore_index`` targets give 0
    and do not count in the 'mean' denominator (the sum of the picked weights)."""

    node_name = "NllLossBackward0"

    def __init__(self, reduction: str, ignore_index: int) -> None:
        self.reduction, self.ignore_index = reduction, ignore_index

    fast = False  # forward took the common case (see _forward_fast)

    def forward(self, x: Any, target: Any, weight: Any) -> Any:
        b = self.backend
        self.unbatched = x.ndim == 1  # (C,) input, () or (1,) target: one sample, 0-d loss
        if self.unbatched:
            x = x.reshape(1, -1)
        self.n_classes = x.shape[1]
        if weight is None and x.ndim == 2 and self.reduction != "none" and not self.unbatched \
                and 0 < x.shape[0] < 1 << 24 and x.dtype.itemsize >= 4 and x.dtype.kind == "f" \
                and not 0 <= self.ignore_index < x.shape[1]:
            out = self._forward_fast(b, x, target)
            if out is not None:
                return out
        idx, w = self._picks(target, weight, x.dtype)
        bad = b.logical_or(b.less(idx, 0), b.greater_equal(idx, x.shape[1]))
        if b.any(bad):
            raise IndexError(f"Target {int(idx[bad][0])} is out of bounds.")
        losses = -(b.take_along_axis(x, idx, 1).reshape(w.shape) * w)
        total = b.sum(w)
        # NOTE: keep what PyTorch keeps (the target, the weights and the total weight); the
        # picked indices and per-sample weights are recomputed in backward.
        self.save_for_backward(target, weight, total)
        if self.reduction == "mean":
            return (b.sum(losses) / total).astype(x.dtype, copy=False)
        return _reduce(b, losses.reshape(()) if self.unbatched else losses, self.reduction)

    def _forward_fast(self, b: Any, x: Any, target: Any) -> Any:
        """The common case, batched ``(N, C)`` input without weights, every target a class (so
        none is ignored): one gather, the same arithmetic as the general path (every weight 1,
        the total ``N``, exact in float32/64 below 2**24). None when a target is out of
        ``[0, C)`` (ignored or an error: the general path decides)."""
        n, c = x.shape
        if b.out_of_range(target, 0, c) is not None:
            return None
        rows = b.arange(0, n, 1, "int64")
        losses = -x[rows, target]
        total = b.full((), n, x.dtype)  # NOTE: a fill, not a host copy (a CUDA graph takes it)
        self.fast = True
        self.save_for_backward(target, None, total)
        if self.reduction == "mean":
            return (b.sum(losses) / total).astype(x.dtype, copy=False)
        return b.sum(losses)

    def _picks(self, target: Any, weight: Any, dtype: Any) -> tuple[Any, Any]:
        """The class index of each sample, shaped to gather along dim 1 (0 where ignored), and
        its weight (0 where ignored)."""
        b = self.backend
        if self.unbatched:
            target = target.reshape(1)
        ignored = b.equal(target, self.ignore_index)
        safe = b.where(ignored, 0, target)
        w = b.ones(safe.shape, dtype) if weight is None else weight[safe].astype(dtype)
        w = b.where(ignored, 0, w).astype(dtype, copy=False)
        return safe.reshape(safe.shape[:1] + (1,) + safe.shape[1:]), w

    def backward(self, grad: Any) -> tuple[Any, None, None]:
        target, weight, total = self.saved_tensors
        b = self.backend
        if self.fast:
            # NOTE: the general formula's coefficients: -1 at each target (divided by the
            # total for 'mean', as there), 0 elsewhere.
            t = target._data
            coef = b.zeros((t.shape[0], self.n_classes), total._data.dtype)
            minus = b.asarray(-1, total._data.dtype)
            coef[b.arange(0, t.shape[0], 1, "int64"), t] = \
                minus / total._data if self.reduction == "mean" else minus
            return self.wrap(coef) * grad, None, None
        idx, w = self._picks(target._data, None if weight is None else weight._data,
                             total._data.dtype)
        classes = b.arange(0, self.n_classes, 1, "int64").reshape((1, -1) + (1,) * (idx.ndim - 2))
        hot = b.equal(classes, idx)
        coef = hot * (-w.reshape(idx.shape))
        if self.reduction == "mean":
            # NOTE: when every target is ignored (total 0) the gradient is 0, as in PyTorch.
            coef = b.where(coef != 0, coef / total._data, coef)
        if self.unbatched:
            coef = coef.reshape(-1)
        g = grad.unsqueeze(1) if self.reduction == "none" and not self.unbatched else grad
        return self.wrap(coef.astype(w.dtype, copy=False)) * g, None, None


class NllLoss2d(NllLoss):
    """``NllLoss`` on inputs with spatial dimensions ``(N, C, d1, ...)`` (PyTorch's name)."""

    node_name = "NllLoss2DBackward0"


class DivScalar(_Unary):
    """``x / c`` for a Python number ``c``, as ATen's ``div.Scalar`` records it (DivBackward1)."""

    node_name = "DivBackward1"
    raw_ok = True

    def __init__(self, other: float) -> None:
        self.other = other

    def forward(self, x: Any) -> Any:
        return x / self.other

    def grad_of(self, grad: Any) -> Any:
        return grad / self.other


class BinaryCrossEntropy(Node):
    """``-(y log x + (1 - y) log(1 - x))`` with each log clamped at -100, as in PyTorch."""

    node_name = "BinaryCrossEntropyBackward0"

    def __init__(self, reduction: str) -> None:
        self.reduction = reduction

    def forward(self, x: Any, y: Any, weight: Any) -> Any:
        b = self.backend
        if not b.all(b.logical_and(b.greater_equal(x, 0), b.less_equal(x, 1))):
            raise RuntimeError("all elements of input should be between 0 and 1")
        self.save_for_backward(x, y, weight)
        log_x = b.maximum(b.log(x), -100)
        log_1mx = b.maximum(b.log(1 - x), -100)
        losses = (y - 1) * log_1mx - y * log_x
        if weight is not None:
            losses = losses * weight
        # NOTE: laid out like x: PyTorch computes into empty_like(input)
        return _reduce(b, losses.astype(x.dtype, copy=False), self.reduction, (x,))

    def backward(self, grad: Any) -> tuple[Any, Any, None]:
        x, y, weight = self.saved_tensors
        g = _scale(grad, x, self.reduction)
        if weight is not None:
            g = g * weight
        gx = gy = None
        if self.needs_input_grad[0]:
            # NOTE: the denominator is clamped at 1e-12 so x = 0 or 1 gives a finite gradient.
            gx = (x - y) / ((1 - x) * x).clamp(min=1e-12) * g
        if self.needs_input_grad[1]:
            # NOTE: unclamped, as in PyTorch (x = 0 or 1 gives an infinite target gradient).
            gy = ((1 - x).log() - x.log()) * g
        return gx, gy, None


class BinaryCrossEntropyWithLogits(Node):
    """``(1 - y) x - w_pos(y) log(sigmoid(x))`` with ``w_pos(y) = 1 + (pos_weight - 1) y``."""

    node_name = "BinaryCrossEntropyWithLogitsBackward0"

    def __init__(self, reduction: str) -> None:
        self.reduction = reduction

    def forward(self, x: Any, y: Any, weight: Any, pos_weight: Any) -> Any:
        b = self.backend
        self.save_for_backward(x, y, weight, pos_weight)
        # NOTE: log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)): stable for any |x|.
        log_sig = b.minimum(x, 0) - b.log1p(b.exp(-b.abs(x)))
        if pos_weight is not None:
            log_sig = log_sig * ((pos_weight - 1) * y + 1)
        losses = (1 - y) * x - log_sig
        if weight is not None:
            losses = losses * weight
        # NOTE: in the target's dtype, as PyTorch (which computes into 1 - target in place).
        return _reduce(b, losses.astype(y.dtype, copy=False), self.reduction, (y,))

    def backward(self, grad: Any) -> tuple[Any, Any, None, None]:
        x, y, weight, pos_weight = self.saved_tensors
        g = _scale(grad, x, self.reduction)
        if weight is not None:
            g = g * weight
        gx = gy = None
        if self.needs_input_grad[0]:
            if pos_weight is None:
                gx = (x.sigmoid() - y) * g
            else:
                t = pos_weight * y
                gx = ((t + 1 - y) * x.sigmoid() - t) * g
        if self.needs_input_grad[1]:
            gy = -x
            if pos_weight is not None:
                log_sig = -Softplus.apply(-x, beta=1.0, threshold=20.0)
                gy = gy - (pos_weight - 1) * log_sig
            gy = gy * g
        return (None if gx is None else gx.to(x.dtype)), (None if gy is None else gy.to(y.dtype)), \
            None, None
