"""``conv2d`` for ``nn.functional``: argument checks with PyTorch's messages, output sizes, then
one op from ``ops/conv.py``."""

from __future__ import annotations

from typing import Any

from ..dtypes import float32, scalar_type_name
from ..functions.checks import invalid_arguments
from ..ops import conv
from ..tensor import Tensor

__all__ = ["conv2d"]

Pair = tuple[int, int]
_SCALAR_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half"}


def _conv_pair(value: Any, name: str, dims: int = 2) -> Pair:
    """An int or a 1- or 2-sequence as a pair, with the convolution's message otherwise."""
    vals = [value] * dims if isinstance(value, int) else [int(v) for v in value]
    if len(vals) == 1:
        vals = vals * dims
    if len(vals) != 2 or dims != 2:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {dims} values to match "
            f"the convolution dimensions, but got {name}={vals}"
        )
    return vals[0], vals[1]


def _conv_padding(padding: Any, kernel: Pair, stride: Pair, dilation: Pair) -> tuple[Pair, Pair]:
    """``((top, left), (bottom, right))`` padding from an int, a sequence, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0), (0, 0)
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if stride != (1, 1):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        # NOTE: an even total goes half each side; the odd one out goes bottom/right (PyTorch).
        totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
        lo = (totals[0] // 2, totals[1] // 2)
        return lo, (totals[0] - lo[0], totals[1] - lo[1])
    pad = _conv_pair(padding, "padding")
    return pad, pad


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of ``input`` with ``weight`` (PyTorch's ``conv2d``).

    ``out[n, o, y, x] = bias[o] + sum_{c, i, j} weight[o, c, i, j] *
    input_padded[n, g * C/groups + c, stride * y + dilation * i, stride * x + dilation * x]``
    where ``g`` is the group of output channel ``o``. Computed as one batched matmul of the
    weight with the input's windows (im2col); recorded as ConvolutionBackward0.

    Args:
        input: ``(N, C, H, W)`` or unbatched ``(C, H, W)``.
        weight: ``(O, C / groups, kh, kw)``.
        bias: ``(O,)`` or None.
        stride, dilation: int or pair. padding: int, pair, 'valid' or 'same' (stride 1 only).
        groups: ``C`` and ``O`` are split into this many independent groups.

    Returns:
        ``(N, O, Ho, Wo)`` (or ``(O, Ho, Wo)``) with ``Ho = (H + pads - dilation (kh - 1) - 1)
        // stride + 1``.

    Example:
        >>> conv2d(ones(1, 1, 4, 4), ones(2, 1, 3, 3), padding=1).shape
        torch.Size([1, 2, 4, 4])
    """
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)
            and (bias is None or isinstance(bias, Tensor))):
        raise invalid_arguments("conv2d", (input, weight) + (() if bias is None else (bias,)), {})
    if input.dim() not in (3, 4):
        raise RuntimeError("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got "
                           f"input of size: {list(input.shape)}")
    if weight.dim() != 4:
        n = weight.dim() - 2
        raise RuntimeError(
            "expected stride to be a single integer value or a list of "
            f"{n} values to match the convolution dimensions, but got stride={[stride] * 2}"
        )
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    kernel = (weight.shape[2], weight.shape[3])
    stride_, dilation_ = _conv_pair(stride, "stride"), _conv_pair(dilation, "dilation")
    (pt, pl), (pb, pr) = _conv_padding(padding, kernel, stride_, dilation_)
    if min(pt, pl, pb, pr) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(stride_) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation_) <= 0:
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    w_size = list(weight.shape)
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{w_size}] instead")
    if x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {w_size}, expected input{list(x.shape)} to "
            f"have {weight.shape[1] * groups} channels, but got {x.shape[1]} channels instead"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(
            f"Given weight of size {w_size}, expected bias to be 1-dimensional with "
            f"{weight.shape[0]} elements, but got bias of size {list(bias.shape)} instead"
        )
    if x.dtype is not weight.dtype:
        raise _dtype_error(x, weight, stride_, dilation_, groups)
    if bias is not None and bias.dtype is not x.dtype:
        names = [_SCALAR_NAMES.get(str(t.dtype)[6:], str(t.dtype)[6:]) for t in (x, bias)]
        raise RuntimeError(f"Input type ({names[0]}) and bias type ({names[1]}) should be the "
                           "same")
    h, w = x.shape[2] + pt + pb, x.shape[3] + pl + pr
    eff = ((kernel[0] - 1) * dilation_[0] + 1, (kernel[1] - 1) * dilation_[1] + 1)
    if h < eff[0] or w < eff[1]:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({h} x {w}). Kernel size: ({eff[0]} x "
            f"{eff[1]}). Kernel size can't be greater than actual input size"
        )
    out_hw = ((h - eff[0]) // stride_[0] + 1, (w - eff[1]) // stride_[1] + 1)
    out = conv.Convolution.apply(
        x, weight, bias, groups=groups, kernel=kernel, stride=stride_, dilation=dilation_,
        pad=(pt, pl), in_hw=(x.shape[2], x.shape[3]), out_hw=out_hw,
    )
    return out.squeeze(0) if unbatched else out


def _dtype_error(x: Tensor, weight: Tensor, stride: Pair, dilation: Pair,
                 groups: int) -> RuntimeError:
    """PyTorch's error for an input and a weight of different dtypes, which depends on the
    backend it picks: MKLDNN's check (a float32 CPU input, as PyTorch's ``use_mkldnn`` chooses
    for one thread), the generic one otherwise, or CUDA's."""
    if x.device.type != "cpu":
        return RuntimeError(f"Input type ({x.type()}) and weight type ({weight.type()}) should "
                            "be the same")
    n, kh, kw = x.shape[0], weight.shape[2], weight.shape[3]
    mkldnn = x.dtype is float32 and (
        stride != (1, 1) or dilation != (1, 1) or n >= 16 or (kh, kw) != (1, 1)) and (
        groups > 1 or (kh > 3 and kw > 3) or n > 1 or x.numel() > 20480)
    if mkldnn:
        return RuntimeError(f"Input type ({x.type()}) and weight type ({weight.type()}) should "
                            "be the same or input should be a MKLDNN tensor and weight is a dense "
                            "tensor")
    return RuntimeError(f"expected scalar type {scalar_type_name(x.dtype)} but found "
                        f"{scalar_type_name(weight.dtype)}")
