"""Ops behind the activations of ``nn.functional`` beyond ``nn_ops`` (hardtanh, hardsigmoid,
hardswish, mish, selu/celu, prelu, rrelu, glu, logsigmoid, the shrinks, threshold) and the
shuffles (``pixel_shuffle``, ``pixel_unshuffle``, ``channel_shuffle``). Each is the one node
PyTorch records (``HardtanhBackward0``, ``PreluKernelBackward0``, ...). Forward on backend arrays;
backward with tensor ops (differentiable) or, for the piecewise-linear ones, ``threshold_grad``.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .elementwise import _Unary
from .nn_ops import _NEGATIVE_SLOPE, Softplus
from .reduce import Norm
from .unary import threshold_grad


def _same_dtype(out: Any, x: Any) -> Any:
    """``out`` in ``x``'s dtype (a float bound or fill value must not promote an int input)."""
    return out if out.dtype == x.dtype else out.astype(x.dtype)


# NOTE: PyTorch's hardsigmoid gradient multiplies by 1/6 as a float32 constant (1.0f / 6.0f),
# whatever the dtype.
_SIXTH_F32 = 0.1666666716337204


# ---- piecewise-linear activations ------------------------------------------------------------

class Hardtanh(_Unary):
    """``clamp(x, min_val, max_val)``; gradient 1 strictly inside the bounds, else 0."""

    node_name = "HardtanhBackward0"
    raw_ok = True

    def __init__(self, lo: float, hi: float) -> None:
        self.lo, self.hi = lo, hi

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        b = self.backend
        # NOTE: maximum/minimum propagate NaN, as PyTorch's kernel.
        return _same_dtype(b.minimum(b.maximum(x, self.lo), self.hi), x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        keep = (x > self.lo) & (x < self.hi)
        return threshold_grad(self, grad, x, keep, 0.0, "HardtanhBackwardBackward0")


class Hardsigmoid(_Unary):
    """``min(max(x + 3, 0), 6) / 6``; gradient ``1/6`` on ``(-3, 3)``, else 0."""

    node_name = "HardsigmoidBackward0"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        b = self.backend
        return b.minimum(b.maximum(x + 3, 0), 6) / 6

    def grad_of(self, grad: Any, x: Any) -> Any:
        keep = (x > -3) & (x < 3)
        return threshold_grad(self, grad * _SIXTH_F32, x, keep, 0.0, "HardsigmoidBackwardBackward0")


class Softshrink(_Unary):
    """``x - l`` above ``l``, ``x + l`` below ``-l``, else 0 (NaN stays NaN)."""

    node_name = "SoftshrinkBackward0"
    raw_ok = True

    def __init__(self, lambd: float) -> None:
        self.lambd = lambd

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        b, lam = self.backend, self.lambd
        return _same_dtype(b.where(x > lam, x - lam, b.where(x < -lam, x + lam, x * 0)), x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        keep = (x < -self.lambd) | (x > self.lambd)
        return threshold_grad(self, grad, x, keep, 0.0, "SoftshrinkBackwardBackward0")


class Hardshrink(_Unary):
    """``x`` outside ``[-l, l]``, else 0 (NaN stays NaN)."""

    node_name = "HardshrinkBackward0"
    raw_ok = True

    def __init__(self, lambd: float) -> None:
        self.lambd = lambd

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        inside = (x >= -self.lambd) & (x <= self.lambd)
        return _same_dtype(self.backend.where(inside, 0, x), x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        keep = ~((x >= -self.lambd) & (x <= self.lambd))
        return threshold_grad(self, grad, x, keep, 0.0, "HardshrinkBackwardBackward0")


class Threshold(_Unary):
    """``value`` where ``x <= threshold``, else ``x``; the gradient is 0 where ``x <= threshold``
    (NaN passes: the comparison is false)."""

    node_name = "ThresholdBackward0"
    raw_ok = True

    def __init__(self, threshold: float, value: float) -> None:
        self.threshold, self.value = threshold, value

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return _same_dtype(self.backend.where(x <= self.threshold, self.value, x), x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        keep = ~(x <= self.threshold)
        return threshold_grad(self, grad, x, keep, 0.0, "ThresholdBackwardBackward0")


class ThresholdResult(Threshold):
    """In-place ``threshold_`` (ThresholdBackward1): as PyTorch's, it keeps the input (the
    mask comes from it, not from the output)."""

    node_name = "ThresholdBackward1"


# ---- smooth activations ----------------------------------------------------------------------

class Hardswish(_Unary):
    """``x * min(max(x + 3, 0), 6) / 6``."""

    node_name = "HardswishBackward0"

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        b = self.backend
        return x * b.minimum(b.maximum(x + 3, 0), 6) / 6

    def grad_of(self, grad: Any, x: Any) -> Any:
        # NOTE: 0 up to -3, x/3 + 1/2 on (-3, 3), 1 from 3 on, as PyTorch's gradient.
        return grad * (x / 3 + 0.5).where(x < 3, 1.0).where(x > -3, 0.0)


class Mish(_Unary):
    """``x * tanh(softplus(x))``."""

    node_name = "MishBackward0"

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        b = self.backend
        # NOTE: softplus as max(x, 0) + log1p(exp(-|x|)), which never overflows.
        return x * b.tanh(b.maximum(x, 0) + b.log1p(b.exp(-b.abs(x))))

    def grad_of(self, grad: Any, x: Any) -> Any:
        tsp = Softplus.apply(x, beta=1.0, threshold=20.0).tanh()
        return grad * (tsp + x * x.sigmoid() * (1 - tsp * tsp))


class LogSigmoid(_Unary):
    """``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``."""

    node_name = "LogSigmoidBackward0"

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        b = self.backend
        return b.minimum(x, 0) - b.log1p(b.exp(-b.abs(x)))

    def grad_of(self, grad: Any, x: Any) -> Any:
        return grad * (-x).sigmoid()


class EluScaled(_Unary):
    """PyTorch's general elu: ``scale * x`` for ``x > 0``, else
    ``scale * alpha * (exp(input_scale * x) - 1)``; ``selu`` (EluBackward0) and ``celu``
    (CeluBackward0, ``input_scale = 1 / alpha``) record it under their own names.

    NOTE: ``grad_input_scale`` is the input scale backward uses: for celu PyTorch's derivative
    takes ``1 / float32(alpha)``, a little off ``1 / alpha`` unless alpha is exact in float32."""

    def __init__(self, alpha: float, scale: float, input_scale: float, name: str,
                 grad_input_scale: float | None = None) -> None:
        self.alpha, self.scale, self.input_scale = alpha, scale, input_scale
        self.grad_input_scale = input_scale if grad_input_scale is None else grad_input_scale
        self.node_name = name

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return self._value(x)

    def _value(self, x: Any) -> Any:
        b = self.backend
        # NOTE: expm1 of min(x, 0): the discarded branch never overflows; NaN takes x's branch.
        neg = b.expm1(b.minimum(x, 0) * self.input_scale) * (self.alpha * self.scale)
        return _same_dtype(b.where(x <= 0, neg, x * self.scale), x)

    def grad_of(self, grad: Any, x: Any) -> Any:
        coef = self.grad_input_scale * self.alpha * self.scale
        return (grad * coef * (x.where(x < 0, 0.0) * self.grad_input_scale).exp()).where(
            x <= 0, grad * self.scale)


class EluScaledResult(EluScaled):
    """In-place ``selu_`` / ``celu_`` (EluBackward1 / CeluBackward1): saves the output, from
    which the gradient follows (``input_scale * (out + scale * alpha)`` where ``out <= 0``)."""

    def forward(self, x: Any) -> Any:
        out = self._value(x)
        self.save_for_backward(out)
        return out

    def grad_of(self, grad: Any, out: Any) -> Any:
        if self.alpha < 0:
            raise RuntimeError(_NEGATIVE_SLOPE.format("elu"))
        neg = grad * self.grad_input_scale * (out.where(out < 0, 0.0) + self.alpha * self.scale)
        return neg.where(out <= 0, grad * self.scale)


class PreluKernel(Node):
    """``x`` where ``x > 0``, else ``weight * x``, the weight along dim 1 (or one shared)."""

    node_name = "PreluKernelBackward0"
    elementwise = True

    def _shape(self, ndim: int, numel: int) -> tuple[int, ...]:
        return (1, numel) + (1,) * (ndim - 2) if numel > 1 else ()

    def forward(self, x: Any, w: Any) -> Any:
        self.save_for_backward(x, w)
        wb = w.reshape(self._shape(x.ndim, w.size))
        return self.backend.where(x > 0, x, wb * x)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, w = self.saved_tensors
        wb = w.reshape(self._shape(x.dim(), w.numel()))
        pos = x > 0
        gx = grad.where(pos, wb * grad) if self.needs_input_grad[0] else None
        gw = None
        if self.needs_input_grad[1]:
            terms = (x * grad).where(~pos, 0.0)
            if w.numel() > 1:
                dims = [0] + list(range(2, x.dim()))
                gw = terms.sum(dims).reshape(w.shape)
            else:
                gw = terms.sum().reshape(w.shape)
        return gx, gw


class RreluWithNoise(_Unary):
    """``x * noise`` with the slopes drawn (training) or fixed (eval) by ``F.rrelu``: the
    gradient is ``grad * noise``."""

    node_name = "RreluWithNoiseBackward0"
    raw_ok = True

    def __init__(self, noise: Any) -> None:
        self.noise = noise

    def forward(self, x: Any) -> Any:
        return _same_dtype(x * self.noise, x)

    def grad_of(self, grad: Any) -> Any:
        return grad * (self.noise if self._raw else self.wrap(self.noise))


class RreluWithNoiseResult(RreluWithNoise):
    """In-place ``rrelu_`` (RreluWithNoiseBackward1)."""

    node_name = "RreluWithNoiseBackward1"


class Glu(_Unary):
    """``a * sigmoid(b)`` with ``a, b`` the halves of ``x`` along ``dim``."""

    node_name = "GluBackward0"
    elementwise = False  # NOTE: NumPy lays the halves' product out as the input

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        half = x.shape[self.dim] // 2
        lead = (slice(None),) * (self.dim % x.ndim)
        a, b = x[lead + (slice(0, half),)], x[lead + (slice(half, None),)]
        return a * self.backend.sigmoid(b)

    def grad_of(self, grad: Any, x: Any) -> Any:
        a, b = x.chunk(2, self.dim)
        s = b.sigmoid()
        ga = grad * s
        from ..functions import cat

        return cat([ga, ga * a * (1 - s)], self.dim)


class PairwiseNorm(Norm):
    """The p-norm of ``pairwise_distance``: ATen's ``norm`` (NormBackward1)."""

    node_name = "NormBackward1"


# ---- shuffles --------------------------------------------------------------------------------

def _pixel_shuffle(b: Any, x: Any, r: int) -> Any:
    *lead, c, h, w = x.shape
    y = x.reshape((*lead, c // (r * r), r, r, h, w))
    n = len(lead)
    y = y.transpose(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return b.ascontiguousarray(y).reshape((*lead, c // (r * r), h * r, w * r))


def _pixel_unshuffle(b: Any, x: Any, r: int) -> Any:
    *lead, c, h, w = x.shape
    y = x.reshape((*lead, c, h // r, r, w // r, r))
    n = len(lead)
    y = y.transpose(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return b.ascontiguousarray(y).reshape((*lead, c * r * r, h // r, w // r))


class PixelShuffle(_Unary):
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``, contiguous."""

    node_name = "PixelShuffleBackward0"
    elementwise = False  # NOTE: a new, C-contiguous layout, as in PyTorch

    def __init__(self, r: int) -> None:
        self.r = r

    def forward(self, x: Any) -> Any:
        return _pixel_shuffle(self.backend, x, self.r)

    def grad_of(self, grad: Any) -> Any:
        return PixelUnshuffle.apply(grad, r=self.r)


class PixelUnshuffle(_Unary):
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``, contiguous."""

    node_name = "PixelUnshuffleBackward0"
    elementwise = False  # NOTE: a new, C-contiguous layout, as in PyTorch

    def __init__(self, r: int) -> None:
        self.r = r

    def forward(self, x: Any) -> Any:
        return _pixel_unshuffle(self.backend, x, self.r)

    def grad_of(self, grad: Any) -> Any:
        return PixelShuffle.apply(grad, r=self.r)


class ChannelShuffle(_Unary):
    """``(N, C, *)``: channels viewed as ``(groups, C / groups)``, transposed, flattened."""

    node_name = "ChannelShuffleBackward0"
    elementwise = False  # NOTE: a new, C-contiguous layout, as in PyTorch

    def __init__(self, groups: int) -> None:
        self.groups = groups

    def forward(self, x: Any) -> Any:
        n, c, *rest = x.shape
        g = self.groups
        y = x.reshape((n, g, c // g, *rest)).swapaxes(1, 2)
        return self.backend.ascontiguousarray(y).reshape(x.shape)

    def grad_of(self, grad: Any) -> Any:
        return ChannelShuffle.apply(grad, groups=max(grad.shape[1] // self.groups, 1))
