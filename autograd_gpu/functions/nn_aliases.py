"""The ``torch.*`` spellings of ``nn.functional`` (``torch.conv1d``, ``torch.batch_norm``,
``torch.dropout``, ...): PyTorch's ATen signatures, which differ from ``F``'s in places (all
arguments positional and required for the norms and dropouts, ``reduction`` as an int: 0
'none', 1 'mean', 2 'sum', ``embedding(weight, indices)``, ``adaptive_max_pool1d`` returning
``(values, indices)``), each forwarding to the ``F`` function.

``nn.functional`` is imported late (inside each function): ``functions/`` sits below ``nn/``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..tensor import Tensor

__all__ = [
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "alpha_dropout_",
    "avg_pool1d", "batch_norm", "bilinear", "binary_cross_entropy_with_logits", "celu", "celu_",
    "channel_shuffle", "constant_pad_nd", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "convolution", "cosine_embedding_loss",
    "cosine_similarity", "ctc_loss", "dropout", "dropout_", "embedding", "embedding_renorm_",
    "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
    "group_norm", "hardshrink", "hinge_embedding_loss", "instance_norm", "kl_div", "layer_norm",
    "margin_ranking_loss", "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool3d",
    "pairwise_distance", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu",
    "rms_norm", "rrelu", "rrelu_", "selu", "selu_", "threshold", "threshold_",
    "triplet_margin_loss", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
    "affine_grid_generator",
]

_REDUCTIONS = ("none", "mean", "sum")


def _F() -> Any:  # noqa: N802
    from ..nn import functional

    return functional


def _reduction(value: Any) -> str:
    """ATen's int reduction as ``F``'s string (a string passes through)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 2:
        raise RuntimeError(f"{value} is not a valid value for reduction")
    return _REDUCTIONS[value]


def _stride(stride: Any) -> Any:
    """ATen's empty stride (the default) as ``F``'s None: the kernel size."""
    return None if stride is None or (not isinstance(stride, int) and len(stride) == 0) else stride


# ---- convolutions ------------------------------------------------------------------------------

def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _F().conv1d(input, weight, bias, stride, padding, dilation, groups)  # type: ignore[no-any-return]


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _F().conv2d(input, weight, bias, stride, padding, dilation, groups)  # type: ignore[no-any-return]


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _F().conv3d(input, weight, bias, stride, padding, dilation, groups)  # type: ignore[no-any-return]


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _F().conv_transpose1d(input, weight, bias, stride, padding, output_padding,  # type: ignore[no-any-return]
                                 groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _F().conv_transpose2d(input, weight, bias, stride, padding, output_padding,  # type: ignore[no-any-return]
                                 groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _F().conv_transpose3d(input, weight, bias, stride, padding, output_padding,  # type: ignore[no-any-return]
                                 groups, dilation)


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None,  # noqa: A002
                stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int],
                transposed: bool, output_padding: Sequence[int], groups: int) -> Tensor:
    """ATen's generic convolution: the N-d (transposed) convolution of ``weight``'s rank."""
    d = weight.ndim - 2
    F = _F()
    if transposed:
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[d - 1]
        return fn(input, weight, bias, tuple(stride), tuple(padding),  # type: ignore[no-any-return]
                  tuple(output_padding), groups, tuple(dilation))
    fn = (F.conv1d, F.conv2d, F.conv3d)[d - 1]
    return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)  # type: ignore[no-any-return]


# ---- pooling and padding -----------------------------------------------------------------------

def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    return _F().avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,  # type: ignore[no-any-return]
                           count_include_pad)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return _F().max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)  # type: ignore[no-any-return]


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = (),  # noqa: A002
                            padding: Any = 0, dilation: Any = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    return _F().max_pool1d_with_indices(input, kernel_size, _stride(stride), padding,  # type: ignore[no-any-return]
                                        dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return _F().max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)  # type: ignore[no-any-return]


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = (), padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False) -> Tensor:
    return _F().max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)  # type: ignore[no-any-return]


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    return _F().adaptive_avg_pool1d(input, output_size)  # type: ignore[no-any-return]


def adaptive_max_pool1d(input: Tensor, output_size: Any) -> tuple[Tensor, Tensor]:  # noqa: A002
    """``(values, indices)``, as ATen's (``F``'s returns the values unless asked)."""
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)  # type: ignore[no-any-return]


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:  # noqa: A002
    return _F().pad(input, tuple(pad), "constant", value)  # type: ignore[no-any-return]


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    return _F().pixel_shuffle(input, upscale_factor)  # type: ignore[no-any-return]


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    return _F().pixel_unshuffle(input, downscale_factor)  # type: ignore[no-any-return]


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    return _F().channel_shuffle(input, groups)  # type: ignore[no-any-return]


# ---- normalisation and embedding ---------------------------------------------------------------

def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training,  # type: ignore[no-any-return]
                           momentum, eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,  # noqa: A002
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    return _F().instance_norm(input, running_mean, running_var, weight, bias,  # type: ignore[no-any-return]
                              use_input_stats, momentum, eps)


def layer_norm(input: Tensor, normalized_shape: Sequence[int],  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enable: bool = True) -> Tensor:
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)  # type: ignore[no-any-return]


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5,
               cudnn_enabled: bool = True) -> Tensor:
    return _F().group_norm(input, num_groups, weight, bias, eps)  # type: ignore[no-any-return]


def rms_norm(input: Tensor, normalized_shape: Sequence[int],  # noqa: A002
             weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    return _F().rms_norm(input, normalized_shape, weight, eps)  # type: ignore[no-any-return]


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """ATen's ``embedding(weight, indices)``: ``padding_idx`` -1 means none."""
    return _F().embedding(indices, weight, None if padding_idx == -1 else padding_idx,  # type: ignore[no-any-return]
                          None, 2.0, scale_grad_by_freq, sparse)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,  # noqa: A002
                      norm_type: float) -> Tensor:
    """The rows of ``input`` that ``indices`` names, scaled in place to norms of at most
    ``max_norm`` (``norm_type``-norms), as ``embedding(..., max_norm=)`` does."""
    from ..nn._f_embedding import _host_ok
    from ..nn._normalization import _renorm_

    _renorm_(input, _host_ok(indices, input), max_norm, norm_type)
    return input


# ---- dropout -----------------------------------------------------------------------------------

def dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return _F().dropout(input, p, train)  # type: ignore[no-any-return]


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return _F().dropout(input, p, train, inplace=True)  # type: ignore[no-any-return]


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return _feature(input, p, train, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return _feature(input, p, train, True)


def _feature(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:  # noqa: A002
    """Channel dropout of any rank >= 2 (ATen's ``feature_dropout``: whole ``(N, C)`` planes)."""
    F = _F()
    fn = F.dropout3d if input.ndim == 5 else F.dropout1d if input.ndim == 3 else F.dropout2d
    return fn(input, p, train, inplace)  # type: ignore[no-any-return]


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return _F().alpha_dropout(input, p, train)  # type: ignore[no-any-return]


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return _F().alpha_dropout(input, p, train, inplace=True)  # type: ignore[no-any-return]


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return _F().feature_alpha_dropout(input, p, train)  # type: ignore[no-any-return]


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
    return _F().feature_alpha_dropout(input, p, train, inplace=True)  # type: ignore[no-any-return]


# ---- activations -------------------------------------------------------------------------------

def celu(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    return _F().celu(input, alpha)  # type: ignore[no-any-return]


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    return _F().celu_(input, alpha)  # type: ignore[no-any-return]


def selu(input: Tensor) -> Tensor:  # noqa: A002
    return _F().selu(input)  # type: ignore[no-any-return]


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    return _F().selu_(input)  # type: ignore[no-any-return]


def rrelu(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, generator: Any = None) -> Tensor:
    return _F().rrelu(input, lower, upper, training)  # type: ignore[no-any-return]


def rrelu_(input: Tensor, lower: float = 0.125, upper: float = 1.0 / 3,  # noqa: A002
           training: bool = False, generator: Any = None) -> Tensor:
    return _F().rrelu_(input, lower, upper, training)  # type: ignore[no-any-return]


def threshold(input: Tensor, threshold: float, value: float, *,  # noqa: A002
              out: Tensor | None = None) -> Tensor:
    result = _F().threshold(input, threshold, value)
    if out is None:
        return result  # type: ignore[no-any-return]
    from .out import write_out

    return write_out("threshold", result, out, inputs=(input,))  # type: ignore[no-any-return]


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    return _F().threshold_(input, threshold, value)  # type: ignore[no-any-return]


def hardshrink(input: Tensor, lambd: float = 0.5, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    result = _F().hardshrink(input, lambd)
    if out is None:
        return result  # type: ignore[no-any-return]
    from .out import write_out

    return write_out("hardshrink", result, out, inputs=(input,))  # type: ignore[no-any-return]


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    return _F().prelu(input, weight)  # type: ignore[no-any-return]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    return _F().bilinear(input1, input2, weight, bias)  # type: ignore[no-any-return]


# ---- distances and losses ----------------------------------------------------------------------

def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    return _F().cosine_similarity(x1, x2, dim, eps)  # type: ignore[no-any-return]


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    return _F().pairwise_distance(x1, x2, p, eps, keepdim)  # type: ignore[no-any-return]


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,  # noqa: A002
                                     weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: Any = 1) -> Tensor:
    return _F().binary_cross_entropy_with_logits(input, target, weight,  # type: ignore[no-any-return]
                                                 reduction=_reduction(reduction),
                                                 pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: Any = 1) -> Tensor:
    return _F().cosine_embedding_loss(input1, input2, target, margin,  # type: ignore[no-any-return]
                                      reduction=_reduction(reduction))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,  # noqa: A002
                         reduction: Any = 1) -> Tensor:
    return _F().hinge_embedding_loss(input, target, margin, reduction=_reduction(reduction))  # type: ignore[no-any-return]


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: Any = 1) -> Tensor:
    return _F().margin_ranking_loss(input1, input2, target, margin,  # type: ignore[no-any-return]
                                    reduction=_reduction(reduction))


def kl_div(input: Tensor, target: Tensor, reduction: Any = 1, *,  # noqa: A002
           log_target: bool = False) -> Tensor:
    return _F().kl_div(input, target, reduction=_reduction(reduction), log_target=log_target)  # type: ignore[no-any-return]


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool,  # noqa: A002
                     eps: float, reduction: Any) -> Tensor:
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps,  # type: ignore[no-any-return]
                                 reduction=_reduction(reduction))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        reduction: Any = 1) -> Tensor:
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,  # type: ignore[no-any-return]
                                    reduction=_reduction(reduction))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: Any = 1, zero_infinity: bool = False) -> Tensor:
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,  # type: ignore[no-any-return]
                         _reduction(reduction), zero_infinity)


# ---- sampling grids ----------------------------------------------------------------------------

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int,  # noqa: A002
                 padding_mode: int, align_corners: bool) -> Tensor:
    """ATen's ``grid_sampler``: ``F.grid_sample`` with the modes as ints (interpolation 0
    bilinear, 1 nearest, 2 bicubic; padding 0 zeros, 1 border, 2 reflection)."""
    return _F().grid_sample(input, grid, _MODES[interpolation_mode],  # type: ignore[no-any-return]
                            _PADDINGS[padding_mode], align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int,  # noqa: A002
                    padding_mode: int, align_corners: bool) -> Tensor:
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int,  # noqa: A002
                    padding_mode: int, align_corners: bool) -> Tensor:
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    return _F().affine_grid(theta, list(size), align_corners)  # type: ignore[no-any-return]


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "prelu": prelu, "hardshrink": lambda t, lambd=0.5: hardshrink(t, lambd),
}
