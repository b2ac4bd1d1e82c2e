"""``unfold`` (im2col) and ``fold`` (col2im) for ``nn.functional`` (listed in ``_conv``'s
``__all__``): PyTorch's checks and messages, then one ``Im2col`` / ``Col2im`` node."""

from __future__ import annotations

import math
from typing import Any

from ..functions.checks import expect_tensor
from ..ops import conv
from ..tensor import Tensor

Pair = tuple[int, int]


def _pair(value: Any, name: str) -> Pair:
    vals = [int(value)] * 2 if isinstance(value, int) else [int(v) for v in value]
    if len(vals) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(vals)}")
    return vals[0], vals[1]


def _check_params(kernel: Pair, dilation: Pair, padding: Pair, stride: Pair) -> None:
    """PyTorch's im2col/col2im parameter checks, in its order."""
    if min(kernel) <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got kernel_height: "
                           f"{kernel[0]} kernel_width: {kernel[1]}")
    if min(stride) <= 0:
        raise RuntimeError("stride should be greater than zero, but got stride_height: "
                           f"{stride[0]} stride_width: {stride[1]}")
    if min(dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero, but got dilation_height: "
                           f"{dilation[0]} dilation_width: {dilation[1]}")
    if min(padding) < 0:
        raise RuntimeError("padding should be non-negative, but got pad_height: "
                           f"{padding[0]} pad_width: {padding[1]}")


def _blocks(size: Pair, kernel: Pair, dilation: Pair, padding: Pair, stride: Pair) -> Pair:
    """The number of sliding blocks along each dimension."""
    b = [(n + 2 * p - d * (k - 1) - 1) // s + 1
         for n, k, d, p, s in zip(size, kernel, dilation, padding, stride)]
    return b[0], b[1]


def _not_float(name: str, x: Tensor) -> None:
    if not x.dtype.is_floating_point and not x.dtype.is_complex:
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for '
                                  f"'{x.dtype.name.capitalize()}'")


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,  # noqa: A002
           stride: Any = 1) -> Tensor:
    """The sliding blocks of ``input (N, C, H, W)`` (or ``(C, H, W)``) as columns:
    ``(N, C * kh * kw, L)``, ``L`` the number of blocks (im2col; Im2ColBackward0).

    Example:
        >>> unfold(ones(1, 2, 4, 4), 2).shape
        torch.Size([1, 8, 9])
    """
    expect_tensor("im2col", "input", 1, input)
    kernel, dilation_ = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding_, stride_ = _pair(padding, "padding"), _pair(stride, "stride")
    _check_params(kernel, dilation_, padding_, stride_)
    if input.dim() < 3:
        d = input.dim()
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(d, 1)}, "
                         f"{max(d, 1) - 1}], but got 2)")
    shape = tuple(input.shape)
    if input.dim() > 4 or min(shape[-3:]) == 0:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(shape)}")
    size = (shape[-2], shape[-1])
    blocks = _blocks(size, kernel, dilation_, padding_, stride_)
    if min(blocks) < 1:
        raise RuntimeError(
            f"Given input with spatial size {size}, kernel_size={kernel}, dilation={dilation_}, "
            f"padding={padding_}, calculated shape of the array of sliding blocks as {blocks}, "
            "but its components must be at least one.")
    _not_float("im2col", input)
    return conv.Im2col.apply(input, kernel=kernel, stride=stride_, dilation=dilation_,
                             pad=padding_, in_hw=size, out_hw=blocks, flat=True)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,  # noqa: A002
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """Columns ``(N, C * kh * kw, L)`` (or ``(C * kh * kw, L)``) summed into an image ``(N, C,
    *output_size)``, overlaps adding up (col2im, the adjoint of ``unfold``; Col2ImBackward0).

    Example:
        >>> fold(ones(1, 8, 9), 4, 2).shape
        torch.Size([1, 2, 4, 4])
    """
    expect_tensor("col2im", "input", 1, input)
    size = _pair(output_size, "output_size")
    kernel, dilation_ = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding_, stride_ = _pair(padding, "padding"), _pair(stride, "stride")
    if min(size) <= 0:
        raise RuntimeError("output size should be greater than zero, but got output_height: "
                           f"{size[0]} output_width: {size[1]}")
    _check_params(kernel, dilation_, padding_, stride_)
    shape = tuple(input.shape)
    if input.dim() not in (2, 3) or min(shape[-2:]) == 0:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: {list(shape)}")
    k = math.prod(kernel)
    if shape[-2] % k:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={shape[-2]} and "
                           f"kernel_size={kernel}.")
    blocks = _blocks(size, kernel, dilation_, padding_, stride_)
    geometry = (f"Given output_size={size}, kernel_size={kernel}, dilation={dilation_}, "
                f"padding={padding_}, stride={stride_}, ")
    if shape[-1] != blocks[0] * blocks[1]:
        raise RuntimeError(
            f"{geometry}expected size of input's dimension 2 to match the calculated number of "
            f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, but got "
            f"input.size(2)={shape[-1]}.")
    if min(blocks) < 1:
        raise RuntimeError(f"{geometry}calculated shape of the array of sliding blocks as "
                           f"{blocks}, which is too small (non-positive).")
    _not_float("col2im", input)
    return conv.Col2im.apply(input, kernel=kernel, stride=stride_, dilation=dilation_,
                             pad=padding_, in_hw=size, out_hw=blocks, flat=True)
