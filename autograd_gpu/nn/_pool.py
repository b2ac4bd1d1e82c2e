"""``max_pool2d`` and ``avg_pool2d`` for ``nn.functional``: argument checks with PyTorch's
messages, output sizes, then one op from ``ops/conv.py``."""

from __future__ import annotations

from typing import Any

from ..functions.checks import expect_tensor
from ..ops import conv
from ..tensor import Tensor

__all__ = ["avg_pool2d", "max_pool2d"]

Pair = tuple[int, int]


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
