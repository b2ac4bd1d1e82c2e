"""Convolution layers: ``Conv1d/2d/3d`` and ``ConvTranspose1d/2d/3d`` with PyTorch's parameters,
initialisation and repr."""

from __future__ import annotations

from typing import Any

from ..creation import empty
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter


__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(v: Any, n: int) -> tuple[Any, ...]:
    """PyTorch's ``_single/_pair/_triple``: an iterable as a tuple, anything else repeated."""
    if isinstance(v, str):
        return (v,) * n
    try:
        return tuple(v)
    except TypeError:
        return (v,) * n


class _ConvNd(Module):
    """What every convolution layer shares (PyTorch's ``_ConvNd``): checks, a learned
    ``weight`` (``(out, in / groups, *kernel)``, transposed ``(in, out / groups, *kernel)``) and
    ``bias (out,)``, initialised as PyTorch does: ``kaiming_uniform_(weight, a=sqrt(5))`` and
    the bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with ``fan_in = weight.shape[1] * prod(kernel)``.
    """

    _dims = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None,
                 output_padding: Any = 0) -> None:
        super().__init__()
        n = self._dims
        if self._transposed and padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {type(self).__name__}')
        kernel, stride_, dilation_ = (_ntuple(v, n) for v in (kernel_size, stride, dilation))
        padding_ = padding if isinstance(padding, str) else _ntuple(padding, n)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding_, str):
            if padding_ not in ("valid", "same"):
                raise ValueError(f"Invalid padding string {padding_!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding_ == "same" and any(s != 1 for s in stride_):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel, stride_, padding_
        self.dilation, self.groups, self.padding_mode = dilation_, groups, padding_mode
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, n)
        if isinstance(padding_, str):
            # NOTE: PyTorch's _reversed_padding_repeated_twice: (left, right) per dimension,
            # last dimension first; 'same' puts the odd one out on the right.
            pads: Any = [0, 0] * n  # NOTE: a list here, a tuple below (as PyTorch)
            if padding_ == "same":
                for i, (d, k) in enumerate(zip(dilation_, kernel)):
                    total = d * (k - 1)
                    pads[2 * (n - 1 - i)], pads[2 * (n - 1 - i) + 1] = total // 2, total - total // 2
        else:
            pads = tuple(p for p in reversed(padding_) for _ in range(2))
        self._reversed_padding_repeated_twice = pads
        lead = (in_channels, out_channels // groups) if self._transposed else \
            (out_channels, in_channels // groups)
        self.weight = Parameter(empty(*lead, *kernel, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init._reset_affine(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        n = len(self.kernel_size)
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """A convolution layer: ``F.conv{n}d``, after ``F.pad`` for a non-zeros ``padding_mode``."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)

    def _conv(self, *args: Any) -> Tensor:
        return (F.conv1d, F.conv2d, F.conv3d)[self._dims - 1](*args)  # type: ignore[no-any-return]

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if self.padding_mode != "zeros":
            # NOTE: PyTorch pads explicitly (last dimension first), then convolves unpadded.
            x = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return self._conv(x, self.weight, self.bias, self.stride, (0,) * self._dims,
                              self.dilation, self.groups)
        return self._conv(input, self.weight, self.bias, self.stride, self.padding,
                          self.dilation, self.groups)


class Conv1d(_Conv):
    """``F.conv1d`` with a learned ``weight (out, in / groups, k)`` and ``bias (out,)``.

    Example:
        >>> Conv1d(1, 8, 3, padding=1)
        Conv1d(1, 8, kernel_size=(3,), stride=(1,), padding=(1,))
    """

    _dims = 1


class Conv2d(_Conv):
    """``F.conv2d`` with a learned ``weight (out, in / groups, kh, kw)`` and ``bias (out,)``.

    Example:
        >>> Conv2d(1, 8, 3, padding=1)
        Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    """

    _dims = 2


class Conv3d(_Conv):
    """``F.conv3d`` with a learned ``weight (out, in / groups, kd, kh, kw)`` and ``bias (out,)``.

    Example:
        >>> Conv3d(1, 8, 3)
        Conv3d(1, 8, kernel_size=(3, 3, 3), stride=(1, 1, 1))
    """

    _dims = 3


class _ConvTranspose(_ConvNd):
    """A transposed convolution layer: ``F.conv_transpose{n}d``; ``forward(input,
    output_size=None)`` picks the output padding that gives ``output_size``."""

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input: Tensor, output_size: Any) -> list[int]:  # noqa: A002
        """PyTorch's ``_output_padding``: ``output_size`` (spatial, or with the batch and
        channel dimensions) minus the smallest output size, which must lie within a stride."""
        n = self._dims
        if output_size is None:
            return list(self.output_padding)
        non_spatial = 2 if input.dim() == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {input.dim()}D input, output_size must have {n} or "
                f"{non_spatial + n} elements (got {len(output_size)})")
        sizes = input.shape[non_spatial:]
        lo = [(sizes[d] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        hi = [lo[d] + self.stride[d] - 1 for d in range(n)]
        for size, a, b in zip(output_size, lo, hi):
            if size < a or size > b:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from "
                    f"{lo} to {hi} (for an input of {input.shape[2:]})")
        return [output_size[d] - lo[d] for d in range(n)]

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        if self.padding_mode != "zeros":
            raise ValueError("Only `zeros` padding mode is supported for "
                             f"{type(self).__name__}")
        output_padding = self._output_padding(input, output_size)
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._dims - 1]
        return fn(input, self.weight, self.bias, self.stride, self.padding,  # type: ignore[no-any-return]
                  output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """``F.conv_transpose1d`` with a learned ``weight (in, out / groups, k)`` and ``bias``.

    Example:
        >>> ConvTranspose1d(4, 2, 3, stride=2)
        ConvTranspose1d(4, 2, kernel_size=(3,), stride=(2,))
    """

    _dims = 1


class ConvTranspose2d(_ConvTranspose):
    """``F.conv_transpose2d`` with a learned ``weight (in, out / groups, kh, kw)`` and ``bias``.

    Example:
        >>> ConvTranspose2d(4, 2, 3, stride=2, output_padding=1)
        ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))
    """

    _dims = 2


class ConvTranspose3d(_ConvTranspose):
    """``F.conv_transpose3d`` with a learned ``weight (in, out / groups, kd, kh, kw)`` and
    ``bias``.

    Example:
        >>> ConvTranspose3d(4, 2, 3)
        ConvTranspose3d(4, 2, kernel_size=(3, 3, 3), stride=(1, 1, 1))
    """

    _dims = 3
