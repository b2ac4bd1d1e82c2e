"""Distances, normalisation of vectors, ``bilinear``, ``pixel_shuffle``, ``channel_shuffle`` and other ``nn.functional`` helpers."""

from __future__ import annotations

from .. import dtypes
from ..functions.checks import expect_tensor
from ..functions.pointwise_binary import clamp_min
from ..functions.stats_dist import pdist
from ..ops import nn_activation as A
from ..ops.util import normalize_dims
from ..tensor import Tensor

__all__ = [
    "bilinear", "channel_shuffle", "cosine_similarity", "normalize", "pairwise_distance", "pdist",
    "pixel_shuffle", "pixel_unshuffle",
]

# NOTE: F.pdist is torch.pdist itself, as in PyTorch.


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out: Tensor | None = None) -> Tensor:
    """``x / max(||x||_p, eps)`` along ``dim`` (DivBackward0, as in PyTorch)."""
    denom = clamp_min(input.norm(p, dim, keepdim=True), eps).expand_as(input)
    if out is None:
        return input / denom
    import autograd_gpu

    return autograd_gpu.div(input, denom, out=out)  # type: ignore[no-any-return,call-arg]


def _common_float(name: str, x1: Tensor, x2: Tensor) -> dtypes.dtype:
    groups: tuple[list[dtypes.dtype], list[dtypes.dtype], list[dtypes.dtype]] = ([], [], [])
    for x in (x1, x2):
        groups[0 if x.dim() else 1].append(x.dtype)
    common = dtypes.result_type(*groups)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{dtypes.scalar_type_name(common)}")
    return common


def _clamped_norm(x: Tensor, dim: int, eps: float) -> Tensor:
    """``||x||_2`` along ``dim`` with its value clamped below at ``eps`` but its gradient that of
    the unclamped norm, as PyTorch (which clamps in place under no_grad)."""
    n = x.norm(2, dim, keepdim=True)
    return n + (clamp_min(n.detach(), eps) - n.detach())


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """``sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps), dim)``, the inputs broadcast to a
    common shape and promoted to a common floating dtype (SumBackward1, as in PyTorch)."""
    expect_tensor("cosine_similarity", "x1", 1, x1)
    expect_tensor("cosine_similarity", "x2", 2, x2)
    common = _common_float("cosine_similarity", x1, x2)
    a, b = x1.to(common), x2.to(common)
    shape = tuple((a + b).shape) if a.shape != b.shape else tuple(a.shape)
    a, b = a.expand(shape), b.expand(shape)
    return ((a / _clamped_norm(a, dim, eps)) * (b / _clamped_norm(b, dim, eps))).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """``||x1 - x2 + eps||_p`` along the last dimension of the broadcast shape
    (NormBackward1, as in PyTorch)."""
    expect_tensor("pairwise_distance", "x1", 1, x1)
    expect_tensor("pairwise_distance", "x2", 2, x2)
    inner = max(x1.dim(), x2.dim()) - 1
    diff = x1 - x2 + eps
    return A.PairwiseNorm.apply(diff, dims=normalize_dims(inner, diff.dim()),  # type: ignore[no-any-return]
                                keepdim=keepdim, p=float(p))


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = sum_ij x1[..., i] weight[o, i, j] x2[..., j] + bias[o]``.

    One matrix product of ``x1`` with the weight laid out as ``(in1, out * in2)``, multiplied by
    ``x2`` and summed over ``in2``; viewed back to ``(*, out)`` (ViewBackward0, and
    AddBackward0 with a bias, as in PyTorch).
    """
    for i, (name, v) in enumerate((("input1", input1), ("input2", input2), ("weight", weight))):
        expect_tensor("bilinear", name, i + 1, v)
    expect_tensor("bilinear", "bias", 4, bias, optional=True)
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    for d in range(input1.dim() - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got "
                               f"{input1.shape[d]} and {input2.shape[d]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    n_out, n1, n2 = weight.shape
    lead = tuple(input1.shape[:-1])
    a = input1.reshape(-1, n1)
    b = input2.reshape(-1, n2)
    t = a.mm(weight.permute(1, 0, 2).reshape(n1, n_out * n2)).view(-1, n_out, n2)
    out = (t * b.unsqueeze(1)).sum(-1).view(*lead, n_out)
    return out if bias is None else out + bias


def _shuffle_dims(name: str, input: Tensor) -> None:  # noqa: A002
    if input.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.dim()} dimension(s)")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """``(*, C r^2, H, W) -> (*, C, H r, W r)`` (PixelShuffleBackward0)."""
    expect_tensor("pixel_shuffle", "input", 1, input)
    _shuffle_dims("pixel_shuffle", input)
    r = upscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)={c} is not "
                           f"divisible by {r * r}")
    return A.PixelShuffle.apply(input, r=r)  # type: ignore[no-any-return]


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """``(*, C, H r, W r) -> (*, C r^2, H, W)`` (PixelUnshuffleBackward0)."""
    expect_tensor("pixel_unshuffle", "input", 1, input)
    _shuffle_dims("pixel_unshuffle", input)
    r = downscale_factor
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for what, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({d})={input.shape[d]} is not "
                               f"divisible by {r}")
    return A.PixelUnshuffle.apply(input, r=r)  # type: ignore[no-any-return]


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """``(N, C, *)``: the channels in ``groups`` groups, interleaved (ChannelShuffleBackward0)."""
    expect_tensor("channel_shuffle", "input", 1, input)
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                           f"{groups} groups.")
    return A.ChannelShuffle.apply(input, groups=groups)  # type: ignore[no-any-return]
