"""Pooling modules: the pooling functions of ``nn.functional`` with fixed arguments, PyTorch's
attributes and reprs."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d",
    "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d",
]


class MaxPool2d(Module):
    """``F.max_pool2d`` with fixed arguments (``stride`` defaults to ``kernel_size``).

    Example:
        >>> MaxPool2d(2)
        MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """``F.avg_pool2d`` with fixed arguments (``stride`` defaults to ``kernel_size``).

    Example:
        >>> AvgPool2d(2)
        AvgPool2d(kernel_size=2, stride=2, padding=0)
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool1d(MaxPool2d):
    """``F.max_pool1d`` with fixed arguments.

    Example:
        >>> MaxPool1d(2)
        MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool3d(MaxPool2d):
    """``F.max_pool3d`` with fixed arguments."""

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


def _single(v: Any) -> tuple[int, ...]:
    return (v,) if isinstance(v, int) else tuple(v)


class AvgPool1d(Module):
    """``F.avg_pool1d`` with fixed arguments (kept as 1-tuples, as PyTorch does).

    Example:
        >>> AvgPool1d(3)
        AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """``F.avg_pool3d`` with fixed arguments."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptiveAvgPoolNd(Module):
    fn = "adaptive_avg_pool1d"

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return getattr(F, self.fn)(input, self.output_size)  # type: ignore[no-any-return]

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """``F.adaptive_avg_pool1d`` to a fixed output size.

    Example:
        >>> AdaptiveAvgPool1d(3)
        AdaptiveAvgPool1d(output_size=3)
    """


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """``F.adaptive_avg_pool2d`` to a fixed output size (``None`` keeps a dimension)."""

    fn = "adaptive_avg_pool2d"


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """``F.adaptive_avg_pool3d`` to a fixed output size."""

    fn = "adaptive_avg_pool3d"


class _AdaptiveMaxPoolNd(_AdaptiveAvgPoolNd):
    fn = "adaptive_max_pool1d"

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return getattr(F, self.fn)(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """``F.adaptive_max_pool1d`` to a fixed output size (``return_indices`` as there)."""


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """``F.adaptive_max_pool2d`` to a fixed output size."""

    fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """``F.adaptive_max_pool3d`` to a fixed output size."""

    fn = "adaptive_max_pool3d"


class _LPPoolNd(Module):
    fn = "lp_pool1d"

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return getattr(F, self.fn)(  # type: ignore[no-any-return]
            input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """``F.lp_pool1d`` with fixed arguments.

    Example:
        >>> LPPool1d(2, 3)
        LPPool1d(norm_type=2, kernel_size=3, stride=None, ceil_mode=False)
    """


class LPPool2d(_LPPoolNd):
    """``F.lp_pool2d`` with fixed arguments."""

    fn = "lp_pool2d"


class LPPool3d(_LPPoolNd):
    """``F.lp_pool3d`` with fixed arguments."""

    fn = "lp_pool3d"


class _MaxUnpoolNd(Module):
    dims = 1

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()

        def tup(v: Any) -> tuple[int, ...]:
            return tuple([v] * self.dims) if isinstance(v, int) else tuple(v)

        self.kernel_size = tup(kernel_size)
        self.stride = tup(stride if stride is not None else kernel_size)
        self.padding = tup(padding)

    def forward(self, input: Tensor, indices: Tensor,  # noqa: A002
                output_size: Any = None) -> Tensor:
        fn = getattr(F, f"max_unpool{self.dims}d")
        return fn(input, indices, self.kernel_size, self.stride,  # type: ignore[no-any-return]
                  self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """``F.max_unpool1d`` with fixed arguments.

    Example:
        >>> MaxUnpool1d(2)
        MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """


class MaxUnpool2d(_MaxUnpoolNd):
    """``F.max_unpool2d`` with fixed arguments."""

    dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """``F.max_unpool3d`` with fixed arguments."""

    dims = 3


class FractionalMaxPool2d(Module):
    """``F.fractional_max_pool2d`` with fixed arguments; ``_random_samples`` (a buffer, may be
    None) fixes the windows. Its repr has no arguments, as PyTorch's.

    Example:
        >>> FractionalMaxPool2d(3, output_ratio=0.5)
        FractionalMaxPool2d()
    """

    dims = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Tensor | None = None) -> None:
        super().__init__()
        name = f"FractionalMaxPool{self.dims}d"
        if self.dims == 3 and (isinstance(kernel_size, int) and kernel_size <= 0 or
                               isinstance(kernel_size, (tuple, list)) and
                               not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = self._tuple(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = self._tuple(output_size) if output_size is not None else None
        self.output_ratio = self._tuple(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             "ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def _tuple(self, v: Any) -> tuple[Any, ...]:
        return tuple(v) if isinstance(v, (tuple, list)) else (v,) * self.dims

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        fn = getattr(F, f"fractional_max_pool{self.dims}d")
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool3d(FractionalMaxPool2d):
    """``F.fractional_max_pool3d`` with fixed arguments (``kernel_size`` must be positive)."""

    dims = 3
