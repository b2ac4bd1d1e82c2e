"""Loss ops that PyTorch records as one node each: ``SmoothL1LossBackward0``,
``HuberLossBackward0``, ``SoftMarginLossBackward0``, ``MultiMarginLossBackward0`` and
``MultilabelMarginLossBackward0`` (CTC is in ``nn_ctc.py``). Forward on backend arrays; the
backward of the first three is written with tensor ops (double backward works, as PyTorch's);
the two margin losses have no second derivative in PyTorch, and their gradient says so."""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .nn_ops import _reduce, _scale
from .rounding import NOT_IMPLEMENTED


def _no_second_derivative(fn: Any, name: str, *inputs: Any) -> Any:
    """``fn(backend, *arrays)`` as a node whose own backward raises PyTorch's RuntimeError for
    the ATen backward op ``name`` (PyTorch's ``NotImplemented`` node)."""
    from .sort import NoDerivative  # late: a sibling family

    return NoDerivative.apply(*inputs, fn=fn, name=NOT_IMPLEMENTED, error=RuntimeError,
                              message=f"derivative for aten::{name} is not implemented")


class SmoothL1Loss(Node):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = x - y``)."""

    node_name = "SmoothL1LossBackward0"

    def __init__(self, reduction: str, beta: float) -> None:
        self.reduction, self.beta = reduction, beta

    def forward(self, x: Any, y: Any) -> Any:
        b = self.backend
        self.save_for_backward(x, y)
        d = x - y
        ad = b.abs(d)
        losses = b.where(ad < self.beta, 0.5 * d * d / self.beta, ad - 0.5 * self.beta)
        return _reduce(b, losses.astype(x.dtype, copy=False), self.reduction, (x, y))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        d = x - y
        # NOTE: d / beta inside the quadratic zone, sign(d) outside: as PyTorch's backward, whose
        # own derivative is 1 / beta inside and 0 outside.
        gx = (d / self.beta).where(d.abs() < self.beta, d.sign()) * _scale(grad, x, self.reduction)
        return (gx if self.needs_input_grad[0] else None,
                -gx if self.needs_input_grad[1] else None)


class HuberLoss(Node):
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)`` (``d = x - y``)."""

    node_name = "HuberLossBackward0"

    def __init__(self, reduction: str, delta: float) -> None:
        self.reduction, self.delta = reduction, delta

    def forward(self, x: Any, y: Any) -> Any:
        b = self.backend
        self.save_for_backward(x, y)
        d = x - y
        ad = b.abs(d)
        losses = b.where(ad < self.delta, 0.5 * d * d, self.delta * (ad - 0.5 * self.delta))
        return _reduce(b, losses.astype(x.dtype, copy=False), self.reduction, (x, y))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        d = x - y
        gx = d.where(d.abs() < self.delta, d.sign() * self.delta) * _scale(grad, x, self.reduction)
        return (gx if self.needs_input_grad[0] else None,
                -gx if self.needs_input_grad[1] else None)


class SoftMarginLoss(Node):
    """``log(1 + exp(-y x))``, computed as PyTorch does (``log1p(exp(-x y))``)."""

    node_name = "SoftMarginLossBackward0"

    def __init__(self, reduction: str) -> None:
        self.reduction = reduction

    def forward(self, x: Any, y: Any) -> Any:
        b = self.backend
        self.save_for_backward(x, y)
        losses = b.log1p(b.exp(-x * y)).astype(x.dtype, copy=False)
        return _reduce(b, losses, self.reduction, (x, y))

    def backward(self, grad: Any) -> tuple[Any, None]:
        x, y = self.saved_tensors
        z = (-(y * x)).exp()
        return -y * z / (1 + z) * _scale(grad, x, self.reduction), None


class MultiMarginLoss(Node):
    """Per sample ``n`` with class ``t``: ``sum_{i != t} w[t] max(0, margin - x[t] + x[i])^p / C``
    (``p`` 1 or 2); ``x`` is ``(N, C)`` here (the caller folds 0-d and 1-d inputs)."""

    node_name = "MultiMarginLossBackward0"

    def __init__(self, p: int, margin: float, reduction: str, out_shape: tuple[int, ...]) -> None:
        self.p, self.margin, self.reduction, self.out_shape = p, margin, reduction, out_shape

    def _hinge(self, x: Any, target: Any, weight: Any) -> tuple[Any, Any]:
        """The positive parts ``max(0, margin - x[t] + x[i])`` (0 at ``i = t``) and the
        per-sample weight ``w[t]`` as a column (or None)."""
        b = self.backend
        idx = target.reshape(-1, 1)
        z = self.margin - b.take_along_axis(x, idx, 1) + x
        classes = b.arange(0, x.shape[1], 1, "int64").reshape(1, -1)
        z = b.where(b.logical_and(z > 0, b.not_equal(classes, idx)), z, 0).astype(x.dtype)
        w = None if weight is None else weight[target].reshape(-1, 1).astype(x.dtype)
        return z, w

    def forward(self, x: Any, target: Any, weight: Any) -> Any:
        b = self.backend
        if target.size and bool(b.any(b.logical_or(target < 0, target >= x.shape[1]))):
            raise RuntimeError("target out of range")
        self.save_for_backward(x, target, weight)
        z, w = self._hinge(x, target, weight)
        h = z if self.p == 1 else z * z
        if w is not None:
            h = h * w
        losses = (b.sum(h, axis=1) / x.shape[1]).astype(x.dtype, copy=False)
        if self.reduction == "none":
            return losses.reshape(self.out_shape)
        total = b.sum(losses)
        if self.reduction == "sum":
            return total
        # NOTE: an empty batch gives 0 for 'mean' in PyTorch's kernel, not nan.
        return (total / max(x.shape[0], 1)).astype(x.dtype, copy=False)

    def backward(self, grad: Any) -> tuple[Any, None, None]:
        x, target, weight = self.saved_tensors

        def fn(b: Any, g: Any, xa: Any, t: Any, *w: Any) -> Any:
            z, wt = self._hinge(xa, t, w[0] if w else None)
            h = (z > 0).astype(xa.dtype) if self.p == 1 else 2 * z
            if wt is not None:
                h = h * wt
            classes = b.arange(0, xa.shape[1], 1, "int64").reshape(1, -1)
            h = h - b.equal(classes, t.reshape(-1, 1)) * b.sum(h, axis=1, keepdims=True)
            scale = xa.shape[1] * (max(xa.shape[0], 1) if self.reduction == "mean" else 1)
            g = g.reshape(-1, 1) if self.reduction == "none" else g
            return (h * g / scale).astype(xa.dtype, copy=False)

        extra = () if weight is None else (weight,)
        return _no_second_derivative(fn, "multi_margin_loss_backward", grad, x, target,
                                     *extra), None, None


class MultilabelMarginLoss(Node):
    """Per sample: the targets are ``y[0..k)`` up to the first -1; the loss is
    ``sum_{j < k} sum_{i not a target} max(0, 1 - x[y_j] + x[i]) / C`` (a repeated target counts
    each time, as in PyTorch's loop). ``x`` and ``y`` are ``(N, C)`` here."""

    node_name = "MultilabelMarginLossBackward0"

    def __init__(self, reduction: str, out_shape: tuple[int, ...]) -> None:
        self.reduction, self.out_shape = reduction, out_shape

    def _active(self, x: Any, target: Any) -> tuple[Any, Any]:
        """The (N, K, C) mask of positive hinge terms (target slot ``j``, class ``i``) and the
        (N, K, C) one-hot of the target class in each counted slot."""
        b = self.backend
        counted = b.equal(b.cumsum(b.equal(target, -1).astype("int64"), axis=1), 0)
        safe = b.where(counted, target, 0)
        classes = b.arange(0, x.shape[1], 1, "int64").reshape(1, 1, -1)
        hot = b.logical_and(b.equal(safe[:, :, None], classes), counted[:, :, None])
        is_target = b.any(hot, axis=1)
        z = 1 - b.take_along_axis(x, safe, 1)[:, :, None] + x[:, None, :]
        active = b.logical_and(b.logical_and(z > 0, counted[:, :, None]),
                               b.logical_not(is_target)[:, None, :])
        return b.where(active, z, 0).astype(x.dtype), hot

    def forward(self, x: Any, target: Any) -> Any:
        b = self.backend
        if target.size and bool(b.any(b.logical_or(target < -1, target >= x.shape[1]))):
            raise RuntimeError("argument #2 'target' is out of range")
        self.save_for_backward(x, target)
        z, _ = self._active(x, target)
        losses = (b.sum(z, axis=(1, 2)) / x.shape[1]).astype(x.dtype, copy=False)
        if self.reduction == "none":
            return losses.reshape(self.out_shape)
        total = b.sum(losses)
        if self.reduction == "sum":
            return total
        return (total / x.shape[0]).astype(x.dtype, copy=False)

    def backward(self, grad: Any) -> tuple[Any, None]:
        x, target = self.saved_tensors

        def fn(b: Any, g: Any, xa: Any, t: Any) -> Any:
            z, hot = self._active(xa, t)
            pos = (z > 0).astype(xa.dtype)
            gx = b.sum(pos, axis=1) - b.sum(hot * b.sum(pos, axis=2, keepdims=True), axis=1)
            scale = xa.shape[1] * (xa.shape[0] if self.reduction == "mean" else 1)
            g = g.reshape(-1, 1) if self.reduction == "none" else g
            return (gx * g / scale).astype(xa.dtype, copy=False)

        return _no_second_derivative(fn, "multilabel_margin_loss_backward", grad, x,
                                     target), None
