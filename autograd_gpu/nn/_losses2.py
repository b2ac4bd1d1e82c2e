"""The losses of ``nn.functional`` beyond those in ``_losses.py``: regression (smooth L1, Huber,
Poisson and Gaussian NLL), KL divergence, the margin and embedding losses, and ``ctc_loss``
(written in ``_losses_ctc.py``, listed here).

Each follows PyTorch's Python wrapper (legacy ``size_average``/``reduce`` flags, argument checks
and warnings) and then either one op (where PyTorch records one node: ``SmoothL1LossBackward0``,
``HuberLossBackward0``, ``SoftMarginLossBackward0``, ``MultiMarginLossBackward0``,
``MultilabelMarginLossBackward0``) or PyTorch's composite formula.
"""

from __future__ import annotations

import math
import warnings
from typing import Callable

from ..autograd.grad_mode import STATE, no_grad
from ..creation import ones_like, zeros_like
from ..dtypes import int64
from ..functions import clamp_min, minimum, xlogy
from ..ops import nn_losses, nn_ops
from ..tensor import Tensor
from ._losses_ctc import ctc_loss
from ._losses import (_apply_reduction, _broadcast_pair, _legacy_reduction, _name, _reduction,
                      l1_loss)

__all__ = [
    "cosine_embedding_loss", "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss", "kl_div",
    "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss",
    "multilabel_soft_margin_loss", "poisson_nll_loss", "smooth_l1_loss", "soft_margin_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss", "linear_cross_entropy",
]


def _sizes(t: Tensor) -> str:
    """A shape as PyTorch's C++ messages print it: ``[2, 3]``."""
    return str(list(t.shape))


# ---- regression -----------------------------------------------------------------------------

def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
                   reduce: bool | None = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input - target``),
    reduced. ``beta = 0`` is ``l1_loss``, as in PyTorch."""
    x, y = _broadcast_pair(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta == 0.0:
        return l1_loss(x, y, reduction=reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return nn_losses.SmoothL1Loss.apply(x, y, reduction=reduction, beta=float(beta))


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Tensor | None = None) -> Tensor:
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``, reduced; with
    ``weight`` (the input's shape) the element losses are weighted and 'mean' is their mean."""
    x, y = _broadcast_pair(input, target)
    if weight is None:
        reduction = _reduction(None, None, reduction)
    elif weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return nn_losses.HuberLoss.apply(x, y, reduction=reduction, delta=float(delta))
    losses = nn_losses.HuberLoss.apply(x, y, reduction="none", delta=float(delta)) * weight
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                         "'sum'.")
    return _apply_reduction(losses, reduction)


def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
           reduce: bool | None = None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """Pointwise KL divergence of log-probabilities ``input`` from ``target`` (probabilities, or
    log-probabilities with ``log_target``): ``target (log target - input)``, reduced.

    'batchmean' divides the sum by ``input.size(0)`` (the KL divergence's definition); 'mean'
    averages over every element and warns, as PyTorch does.
    """
    if size_average is not None or reduce is not None:
        red = _legacy_reduction(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.", UserWarning, stacklevel=2)
        red = _reduction(None, None, "sum" if reduction == "batchmean" else reduction)
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not input.is_floating_point() or not target.is_floating_point():
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        losses = target.exp() * (target - input)
    else:
        losses = xlogy(target, target) - target * input
    out = _apply_reduction(losses, red)
    # NOTE: as PyTorch, the reduction *argument* decides the division, even under legacy flags.
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True,  # noqa: A002
                     full: bool = False, size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Poisson negative log-likelihood: ``exp(input) - target input`` (``log_input``) or
    ``input - target log(input + eps)``; ``full`` adds Stirling's term
    ``t log t - t + 0.5 log(2 pi t)`` where ``target > 1``."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float,  # noqa: A002
                      full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log-likelihood ``0.5 (log var + (input - target)^2 / var)`` (plus
    ``0.5 log(2 pi)`` with ``full``); ``var`` is clamped at ``eps`` without stopping its gradient.

    ``var`` has the input's shape, or that shape without its last dimension, or it differs from
    it in one dimension of size 1 (homoscedastic cases, broadcast), or is a float.
    """
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):  # NOTE: one host sync, as in PyTorch
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(
                v for i, v in zip(input.size(), var.size(), strict=True) if i != v) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


# ---- margin and embedding losses ------------------------------------------------------------

def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Two-class logistic loss ``log(1 + exp(-target input))`` (targets +-1), reduced. As in
    PyTorch it has no gradient for ``target``, which must not require one."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.requires_grad and STATE.grad_enabled:  # NOTE: no_grad lets it pass, as PyTorch
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    return nn_losses.SoftMarginLoss.apply(input, target, reduction=reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where
    ``target == -1`` (0 elsewhere); the cosine's squared norms get ``1e-12`` each, as PyTorch."""
    reduction = _reduction(size_average, reduce, reduction)
    dim = target.dim()
    if dim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != dim + 1 or input2.dim() != dim + 1:
        raise RuntimeError(
            f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
            f"{_sizes(input1)} and {_sizes(input2)}.")
    eps = 1e-12
    prod = (input1 * input2).sum(dim)
    mag1 = (input1 * input1).sum(dim) + eps
    mag2 = (input2 * input2).sum(dim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    zeros = zeros_like(cos)
    pos = (1 - cos).where(target == 1, zeros)
    neg = clamp_min(cos - margin, 0).where(target == -1, zeros)
    return _apply_reduction(pos + neg, reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target (input1 - input2) + margin)`` (targets +-1), reduced."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _apply_reduction(clamp_min(-target * (input1 - input2) + margin, 0), reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``;
    PyTorch's formula adds both parts where the target is neither."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = zeros_like(input)
    below = clamp_min(margin - input, 0).where(target != 1, zeros)
    above = input.where(target != -1, zeros)
    return _apply_reduction(below + above, reduction)


def _pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6) -> Tensor:
    """``||x1 - x2 + eps||_p`` over the last dimension (PyTorch's ``pairwise_distance``)."""
    return (x1 - x2 + eps).norm(p, max(x1.dim(), x2.dim()) - 1)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6, swap: bool = False,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, margin + d(a, p) - d(a, n))`` with the p-norm distance ``d`` over the last
    dimension; ``swap`` uses ``min(d(a, n), d(p, n))`` for the negative distance."""
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs")
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    return _apply_reduction(clamp_min(margin + d_pos - d_neg, 0), reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor, positive: Tensor, negative: Tensor, *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None, margin: float = 1.0,
    swap: bool = False, reduction: str = "mean",
) -> Tensor:
    """``triplet_margin_loss`` with any ``distance_function(x1, x2)`` (default: the pairwise
    Euclidean distance)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs")
    dist = _pairwise_distance if distance_function is None else distance_function
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, dist(positive, negative))
    return _apply_reduction(clamp_min(margin + d_pos - d_neg, 0), reduction)


def _check_margin_input(input: Tensor) -> None:  # noqa: A002
    if not ((input.dim() == 2 and input.shape[1] != 0) or (input.dim() == 1 and input.shape[0])
            or input.dim() == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {_sizes(input)}")


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1,  # noqa: A002
                      margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss: per sample with class ``t``,
    ``sum_{i != t} weight[t] max(0, margin - input[t] + input[i])^p / C`` (``p`` 1 or 2)."""
    reduction = _reduction(size_average, reduce, reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _check_margin_input(input)
    n = input.shape[0] if input.dim() == 2 else 1
    c = input.shape[-1] if input.dim() else 1
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got {_sizes(target)}. "
            f"Input has shape {_sizes(input)}.")
    if weight is not None and (weight.dim() > 1 or weight.numel() != c):
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {_sizes(weight)}")
    if target.dtype is not int64:
        raise RuntimeError(f"expected scalar type Long but found {_name(target)}")
    out_shape = (n,) if target.dim() > 0 else ()
    return nn_losses.MultiMarginLoss.apply(
        input if input.dim() == 2 else input.reshape(n, c), target.reshape(n), None if weight is None else weight.detach(),
        p=p, margin=float(margin), reduction=reduction, out_shape=out_shape)


def multilabel_margin_loss(input: Tensor, target: Tensor,  # noqa: A002
                           size_average: bool | None = None, reduce: bool | None = None,
                           reduction: str = "mean") -> Tensor:
    """Multi-label hinge loss: the targets of a sample are ``target[:k]`` up to the first -1;
    ``sum_{j < k} sum_{i not a target} max(0, 1 - input[target[j]] + input[i]) / C``."""
    reduction = _reduction(size_average, reduce, reduction)
    _check_margin_input(input)
    if input.dim() <= 1:
        n, c = 1, (input.shape[0] if input.dim() else 1)
        ok = target.dim() <= 1 and target.numel() == c
    else:
        n, c = input.shape
        ok = target.dim() == 2 and tuple(target.shape) == (n, c)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {_sizes(target)} for input of size: "
                           f"{_sizes(input)}")
    if target.dtype is not int64:
        raise RuntimeError(f"expected scalar type Long but found {_name(target)}")
    out_shape = (n,) if input.dim() == 2 else ()
    x = input if input.dim() == 2 else input.reshape(n, c)
    return nn_losses.MultilabelMarginLoss.apply(x, target.reshape(n, c),
                                                reduction=reduction, out_shape=out_shape)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor,  # noqa: A002
                                weight: Tensor | None = None, size_average: bool | None = None,
                                reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-label logistic loss ``-(t log sigmoid(x) + (1 - t) log sigmoid(-x))`` (times
    ``weight``), averaged over the classes (last dimension), then reduced over samples."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _apply_reduction(loss, reduction)


def _logsigmoid(x: Tensor) -> Tensor:
    # NOTE: -softplus(-x) with no threshold: the softplus op is stable for any |x|, and its
    # gradient sigmoid(x) is exact, as PyTorch's log_sigmoid.
    return -nn_ops.Softplus.apply(-x, beta=1.0, threshold=math.inf)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,  # noqa: A002
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: object = None) -> Tensor:
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; a
    ``linear_weight`` of shape ``(C, *out_features, in_features)`` gives a K-dimensional loss
    (logits ``(N, C, *out_features)``).

    NOTE: ``options`` (PyTorch's batch-chunked path, which saves memory) is accepted and the
    reference computation runs: the same loss and gradients, without the memory saving."""
    from .functional import linear
    from ._losses import cross_entropy

    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and {linear_weight.shape[-1]}, "
                           "respectively")
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if out_features:
        rows = math.prod(out_features, start=classes)
        linear_weight = linear_weight.reshape((rows, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape((rows,))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
