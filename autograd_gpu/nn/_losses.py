"""Loss functions of ``nn.functional`` (re-exported there), each with PyTorch's ``reduction``
('mean' | 'sum' | 'none') and argument checks."""

from __future__ import annotations

import warnings
from typing import Any

from .. import dtypes
from ..dtypes import int64, uint8
from ..functions import broadcast_shapes
from ..functions.checks import expect_tensor
from ..autograd.saved import SAVED_HOOKS
from ..ops import cross_entropy as cross_entropy_ops
from ..ops import nn_ops
from ..tensor import Tensor


__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "l1_loss", "mse_loss", "nll_loss"]

_TYPE_NAMES = {"int64": "Long", "uint8": "Byte", "int32": "Int", "int16": "Short", "int8": "Char",
               "float32": "Float", "float64": "Double", "float16": "Half", "bool": "Bool"}


def _legacy_reduction(size_average: bool | None, reduce: bool | None) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    out = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{out}' instead.",
        UserWarning,
        stacklevel=3,
    )
    return out


def _reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The reduction to use: the legacy ``size_average``/``reduce`` flags win when given."""
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", UserWarning, stacklevel=3)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _apply_reduction(losses: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def _broadcast_pair(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:  # noqa: A002
    # NOTE: size() as PyTorch calls it: a non-tensor fails with its AttributeError ('size')
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )
        shape = broadcast_shapes(input.shape, target.shape)
        return input.expand(*shape), target.expand(*shape)
    return input, target


def _weighted(errors: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:  # noqa: A002
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    errors = errors * weight
    if reduction == "none":
        return errors
    return errors.sum() if reduction == "sum" else errors.sum() / weight.sum()


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
             reduce: bool | None = None, reduction: str = "mean",
             weight: Tensor | None = None) -> Tensor:
    """Mean squared error ``(input - target)^2``, reduced (with ``weight``: the weighted sum,
    divided by ``weight.sum()`` for 'mean')."""
    x, y = _broadcast_pair(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted((x - y).pow(2), weight, input, reduction)
    return nn_ops.MseLoss.apply(x, y, reduction=reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
            reduce: bool | None = None, reduction: str = "mean",
            weight: Tensor | None = None) -> Tensor:
    """Mean absolute error ``|input - target|``, reduced (composite, as in PyTorch)."""
    x, y = _broadcast_pair(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted((x - y).abs(), weight, input, reduction)
    return _apply_reduction((x - y).abs(), reduction)


def _name(t: Tensor) -> str:
    return _TYPE_NAMES.get(t.dtype.name, t.dtype.name)


def _check_loss_args(fn: str, input: Any, target: Any, weight: Any) -> None:  # noqa: A002
    """PyTorch's TypeErrors for the tensor arguments of ``fn`` (its C++ name)."""
    expect_tensor(fn, "input", 1, input)
    expect_tensor(fn, "target", 2, target)
    expect_tensor(fn, "weight", 3, weight, optional=True)


def _check_nll_shapes(input: Tensor, target: Tensor) -> None:  # noqa: A002
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() == 1:
        if target.dim() == 1 and target.shape[0] != 1:
            raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                             f"{target.shape[0]}")
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    else:
        if target.dim() == 0 or input.shape[0] != target.shape[0]:
            n = target.shape[0] if target.dim() else 1
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({n}).")
        if input.dim() == 2 and target.dim() != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        expected = [input.shape[0], *input.shape[2:]]
        if input.dim() > 2 and list(target.shape) != expected:
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    if target.dtype is not int64 and target.dtype is not uint8:
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{_TYPE_NAMES.get(target.dtype.name, target.dtype.name)}")


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             size_average: bool | None = None, ignore_index: int = -100,
             reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of log-probabilities ``input`` (``(N, C, *)`` or ``(C,)``) at
    class indices ``target`` (``(N, *)`` or ``()``): ``-weight[t] * input[n, t]``.

    Targets equal to ``ignore_index`` contribute 0 and are left out of the 'mean' denominator,
    which is the sum of the weights of the counted targets (nan when nothing is counted).
    """
    reduction = _reduction(size_average, reduce, reduction)
    _check_loss_args("nll_loss_nd", input, target, weight)
    _check_nll_shapes(input, target)
    n_classes = input.shape[0] if input.dim() == 1 else input.shape[1]
    if weight is not None:
        if weight.dim() != 1 or weight.numel() != n_classes:
            raise RuntimeError(
                f"weight tensor should be defined either for all {n_classes} classes or no "
                f"classes but got weight tensor of shape: {list(weight.shape)}"
            )
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"expected scalar type {_name(input)} but found {_name(weight)}")
        weight = weight.detach()
    if input.dim() <= 2:
        return nn_ops.NllLoss.apply(input, target, weight, reduction=reduction,
                                    ignore_index=ignore_index)
    out = nn_ops.NllLoss2d.apply(input, target, weight, reduction=reduction,
                                 ignore_index=ignore_index)
    # NOTE: PyTorch folds inputs other than 4-D to (N, C, 1, -1) and views the unreduced loss
    # back; the view keeps its graph (ViewBackward0) the same.
    return out.view(out.shape) if reduction == "none" and input.dim() != 4 else out


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                  size_average: bool | None = None, ignore_index: int = -100,
                  reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` (``(N, C, *)`` or ``(C,)``) against class indices or,
    when ``target`` has the input's shape, class probabilities.

    Computed as ``nll_loss(log_softmax(input))``, so large logits are stable. With
    ``label_smoothing`` ``e`` the target mixes ``1 - e`` of itself with ``e`` of the uniform
    distribution.
    """
    reduction = _reduction(size_average, reduce, reduction)
    _check_loss_args("cross_entropy_loss", input, target, weight)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if label_smoothing > 0.0 and weight is None and _fusable(input, target, ignore_index,
                                                             reduction):
        def composition(x: Tensor, t: Tensor) -> Tensor:
            return _cross_entropy(x, t, None, ignore_index, reduction, label_smoothing)

        return cross_entropy_ops.SmoothedCrossEntropy.apply(  # type: ignore[no-any-return]
            input, target, fn=composition, reduction=reduction, smoothing=label_smoothing)
    return _cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)


def _cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None,  # noqa: A002
                   ignore_index: int, reduction: str, label_smoothing: float) -> Tensor:
    """``cross_entropy`` after its checks, composed as PyTorch composes it."""
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = input.log_softmax(class_dim)
    w_view = None
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = n_classes
        w_view = weight.view(*shape)
    if target.shape == input.shape:
        return _cross_entropy_probs(logp, target, w_view, ignore_index, reduction,
                                    label_smoothing, class_dim)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    ignored = target == ignore_index
    smooth = -(logp if w_view is None else logp * w_view).sum(class_dim)
    smooth = smooth.masked_fill(ignored, 0.0)
    if reduction == "mean":
        if weight is None:
            denom: Any = (~ignored).sum()
        else:
            picked = weight.index_select(0, target.masked_fill(ignored, 0).flatten())
            denom = picked.masked_fill(ignored.flatten(), 0.0).sum()
        smooth = smooth.sum() / denom
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)


FUSED = True  # label smoothing's common case as one node (ops/cross_entropy.py); tests turn it off


def _fusable(input: Tensor, target: Tensor, ignore_index: int,  # noqa: A002
             reduction: str) -> bool:
    """Whether ``SmoothedCrossEntropy`` computes this cross-entropy (unweighted, smoothed) as
    the composition would: ``(N, C)`` float32/64 logits of a CPU or CUDA tensor, ``(N,)`` int64
    targets all in ``[0, C)`` (none ignored), a reduction, no vmap, no saved-tensor hooks (they
    would see the node's saved tensors, not the composition's)."""
    if not FUSED or type(input) is not Tensor or type(target) is not Tensor \
            or reduction == "none" or input.ndim != 2 or target.ndim != 1 \
            or input._data.dtype.kind != "f" or input._data.dtype.itemsize < 4 \
            or target.dtype is not int64 or SAVED_HOOKS.stack:
        return False
    n, c = input.shape
    dev = input._device
    return 0 < n < 1 << 24 and n * c <= cross_entropy_ops.FUSE_BELOW and target.shape[0] == n \
        and not 0 <= ignore_index < c and dev is target._device and dev.type != "meta" \
        and input.backend.out_of_range(target._data, 0, c) is None


def _cross_entropy_probs(logp: Tensor, target: Tensor, w_view: Tensor | None, ignore_index: int,
                         reduction: str, label_smoothing: float, class_dim: int) -> Tensor:
    if not target.is_floating_point():
        raise RuntimeError("Expected floating point type for target with class probabilities, "
                           f"got {_TYPE_NAMES.get(target.dtype.name, target.dtype.name)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    n_classes = logp.shape[class_dim]
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target if w_view is None else logp * target * w_view
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    if logp.numel() == 0:
        return -prod.sum() * float("nan")
    return nn_ops.DivScalar.apply(-prod.sum(), other=logp.numel() / n_classes)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``-(t log x + (1 - t) log(1 - x))`` for probabilities ``x`` in [0, 1]; each log is
    clamped at -100 (as in PyTorch), so ``x = 0`` or ``1`` gives a finite loss."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        shape = broadcast_shapes(target.shape, weight.size())  # NOTE: size() first, as PyTorch
        weight = weight.detach().expand(*shape)
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_name(target)} but expected {_name(input)}")
    return nn_ops.BinaryCrossEntropy.apply(input, target, weight, reduction=reduction)


def binary_cross_entropy_with_logits(
    input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
    size_average: bool | None = None, reduce: bool | None = None, reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """``binary_cross_entropy(sigmoid(input), target)`` computed stably from logits;
    ``pos_weight`` (broadcast over the last dimension) weighs the positive term."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    expect_tensor("binary_cross_entropy_with_logits", "weight", 3, weight, optional=True)
    expect_tensor("binary_cross_entropy_with_logits", "pos_weight", 4, pos_weight, optional=True)
    if not target.is_floating_point():
        # NOTE: PyTorch computes the loss into ``1 - target`` in place: of the target's dtype
        res = dtypes.result_type([input.dtype, target.dtype], [], [])
        raise RuntimeError(f"result type {_TYPE_NAMES[res.name]} can't be cast to the desired "
                           f"output type {_name(target)}")
    weight = None if weight is None else weight.detach()
    pos_weight = None if pos_weight is None else pos_weight.detach()
    return nn_ops.BinaryCrossEntropyWithLogits.apply(input, target, weight, pos_weight,
                                                     reduction=reduction)
