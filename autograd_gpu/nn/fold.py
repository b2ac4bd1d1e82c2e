"""``Fold`` and ``Unfold``: ``F.fold`` (col2im) and ``F.unfold`` (im2col) as modules."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Columns ``(N, C * prod(kernel_size), L)`` summed into images ``(N, C, *output_size)``
    (``F.fold``); no parameters.

    Example:
        >>> Fold(4, 2)
        Fold(output_size=4, kernel_size=2, dilation=1, padding=0, stride=1)
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size, self.dilation = output_size, kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.fold(input, self.output_size, self.kernel_size, self.dilation,  # type: ignore[no-any-return]
                      self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """The sliding blocks of images ``(N, C, H, W)`` as columns ``(N, C * prod(kernel_size),
    L)`` (``F.unfold``); no parameters.

    Example:
        >>> Unfold(2, stride=(1, 2))
        Unfold(kernel_size=2, dilation=1, padding=0, stride=(1, 2))
    """

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.unfold(input, self.kernel_size, self.dilation, self.padding,  # type: ignore[no-any-return]
                        self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
