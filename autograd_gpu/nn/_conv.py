"""``conv2d``, ``max_pool2d`` and ``avg_pool2d`` for ``nn.functional``: argument checks with
PyTorch's messages, output sizes, then one op from ``ops/conv.py``."""

from __future__ import annotations

from typing import Any

from ..dtypes import float32, scalar_type_name
from ..functions.checks import expect_tensor, invalid_arguments
from ..ops import conv
from ..tensor import Tensor

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


# ---- pooling -------------------------------------------------------------------------------

def _pool_pair(value: Any, message: str, default: Any = None) -> Pair:
    if default is not None and (value is None or (not isinstance(value, int) and not value)):
        value = default
    vals = [value] * 2 if isinstance(value, int) else [int(v) for v in value]
    if len(vals) == 1:
        vals = vals * 2
    if len(vals) != 2:
        raise RuntimeError(message)
    return vals[0], vals[1]


def _pool_out(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size: with ``ceil_mode`` the last window must start inside the
    input or its left padding."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pool_geometry(name: str, input: Tensor, kernel_size: Any, stride: Any,  # noqa: A002
                   padding: Any, dilation: Any, ceil_mode: bool) -> dict[str, Any]:
    kernel = _pool_pair(kernel_size, f"{name}: kernel_size must either be a single int, or a "
                        "tuple of two ints")
    stride_ = _pool_pair(stride, f"{name}: stride must either be omitted, a single int, or a "
                         "tuple of two ints", default=kernel)
    pad = _pool_pair(padding, f"{name}: padding must either be a single int, or a tuple of two "
                     "ints")
    dil = _pool_pair(dilation, f"{name}: dilation must be either a single int, or a tuple of two "
                     "ints")
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} "
                           f"kW: {kernel[1]}")
    if min(stride_) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(dil) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dil[0]} "
                           f"dilationW: {dil[1]}")
    if min(pad) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(pad)}")
    for d in (0, 1):
        if pad[d] > ((kernel[d] - 1) * dil[d] + 1) // 2:
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={pad[d]}, kernel_size={kernel[d]} and dilation={dil[d]}"
            )
    if pad[0] > kernel[0] // 2 or pad[1] > kernel[1] // 2:
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {pad[1]}, padH = {pad[0]}, kW = {kernel[1]}, kH = {kernel[0]}"
        )
    if name == "avg_pool2d" and input.dim() < 3:
        d = max(input.dim(), 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-d}, {d - 1}], "
                         "but got -3)")
    if input.dim() not in (3, 4) or any(s == 0 for s in input.shape[-3:]):
        if name == "max_pool2d" and input.dim() not in (3, 4):
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    c, h, w = input.shape[-3:]
    out_hw = tuple(_pool_out(n, kernel[d], stride_[d], pad[d], dil[d], ceil_mode)
                   for d, n in enumerate((h, w)))
    if min(out_hw) < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out_hw[0]}x{out_hw[1]}). Output size is too small")
    return {"kernel": kernel, "stride": stride_, "dilation": dil, "pad": pad, "in_hw": (h, w),
            "out_hw": out_hw, "unbatched": input.dim() == 3}


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """The maximum over each ``kernel_size`` window (padding counts as ``-inf``).

    The gradient goes to the element that was picked (the first maximum of the window, in
    row-major order). Recorded as MaxPool2DWithIndicesBackward0.

    Args:
        input: ``(N, C, H, W)`` or ``(C, H, W)``.
        kernel_size, stride (default: ``kernel_size``), padding (at most half the dilated
            kernel), dilation: int or pair.
        ceil_mode: round the output size up (the last window must start inside the input or
            its left padding).
        return_indices: also return the int64 flat indices ``h * W + w`` of the maxima.

    Example:
        >>> max_pool2d(arange(16.0).reshape(1, 4, 4), 2)
        tensor([[[ 5.,  7.],
                 [13., 15.]]])
    """
    expect_tensor("max_pool2d_with_indices" if return_indices else "max_pool2d", "input", 1,
                  input)
    geometry = _pool_geometry("max_pool2d", input, kernel_size, stride, padding, dilation,
                              ceil_mode)
    out, indices = conv.MaxPool2d.apply(input, **geometry)
    return (out, indices) if return_indices else out


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean over each ``kernel_size`` window (zero padding).

    The divisor is the window's size clipped to the padded input (``count_include_pad``), the
    count of its elements inside the input (otherwise), or ``divisor_override``. Recorded as
    AvgPool2DBackward0.

    Example:
        >>> avg_pool2d(arange(16.0).reshape(1, 4, 4), 2)
        tensor([[[ 2.5000,  4.5000],
                 [10.5000, 12.5000]]])
    """
    expect_tensor("avg_pool2d", "input", 1, input)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geometry = _pool_geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    return conv.AvgPool2d.apply(input, count_include_pad=count_include_pad,
                                divisor_override=divisor_override, **geometry)
