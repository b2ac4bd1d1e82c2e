"""Padding modules (constant, zero, reflection, replication and circular), and the non-constant
modes of ``F.pad`` (``pad_modes``): one gather per padded dimension (``ops/pool.py: Taps``)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..ops.pool import Taps
from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]

_SUPPORTED = ("Supported combinations for non-constant padding:\n"
              "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
              "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
              "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
_NAMES = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0",
          "circular": "CopySlices"}


def pad_modes(input: Tensor, pad: Sequence[int], mode: str) -> Tensor:  # noqa: A002
    """``F.pad`` with ``mode`` 'reflect' (mirror without repeating the edge), 'replicate' (repeat
    the edge) or 'circular' (wrap around), PyTorch's checks and messages. Negative amounts crop.

    PyTorch's rule: ``len(pad) // 2`` (1, 2 or 3) trailing dimensions of a ``k + 1`` or
    ``k + 2``-D input; reflection needs each amount below the dimension's size, circular at most
    its size. Recorded as Reflection/ReplicationPad{k}DBackward0 (circular: CopySlices, as
    PyTorch builds it from slice copies)."""
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.dim() not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                  f"{input.dim()}D input tensor.\n{_SUPPORTED}")
    shape = list(input.shape)
    if mode != "circular" and 0 in (shape[1:] if input.dim() == k + 2 else shape):
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
            f"other non-zero dimensions for input, but got: {shape}")
    taps = []
    for i in range(k):
        d = input.dim() - 1 - i
        lo, hi, n = int(pad[2 * i]), int(pad[2 * i + 1]), shape[d]
        out = n + lo + hi
        if mode == "reflect" and (lo >= n or hi >= n):
            raise RuntimeError(
                f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                f"{shape}")
        if mode == "circular":
            if lo > n or hi > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if out < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
        elif out < 1:
            raise RuntimeError(f"input (W: {n}) is too small. Calculated output W: {out}")
        src = np.arange(out, dtype=np.int64) - lo
        if mode == "reflect":
            src = np.abs(src)
            src = np.where(src >= n, 2 * (n - 1) - src, src)
        elif mode == "replicate":
            src = np.clip(src, 0, n - 1)
        else:
            # NOTE: PyTorch crops first (negative amounts), then wraps within what is left.
            first, last = max(-lo, 0), n - max(-hi, 0)
            src = first + np.mod(src + lo - max(lo, 0), max(last - first, 1))
        taps.append((-1 - i, src.reshape(-1, 1), None, None))
    name = _NAMES[mode].format(k)
    return Taps.apply(input, taps=tuple(reversed(taps)), in_sizes=tuple(shape[-k:]),  # type: ignore[no-any-return]
                      name=name)


def _tuple(padding: Any, n: int) -> tuple[int, ...]:
    return tuple([padding] * n) if isinstance(padding, int) else tuple(padding)


class _PadNd(Module):
    """``F.pad(input, self.padding, mode)``; ``padding`` an int (every side) or a tuple
    ``(left, right, top, bottom, front, back)`` cut to ``2 * dims``."""

    mode = "constant"
    dims = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _tuple(padding, 2 * self.dims)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: Any, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dimension with ``value``.

    Example:
        >>> ConstantPad1d(2, 3.5)
        ConstantPad1d(padding=(2, 2), value=3.5)
    """

    dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dimensions with ``value``."""

    dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dimensions with ``value``."""

    dims = 3


class _ZeroPad:
    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)  # type: ignore[call-arg]

    def extra_repr(self) -> str:
        return f"{self.padding}"  # type: ignore[attr-defined]


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pads the last dimension with zeros.

    Example:
        >>> ZeroPad1d((1, 2))
        ZeroPad1d((1, 2))
    """


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pads the last 2 dimensions with zeros."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pads the last 3 dimensions with zeros."""


class ReflectionPad1d(_PadNd):
    """Reflects the last dimension at its edges (``F.pad(mode='reflect')``).

    Example:
        >>> ReflectionPad1d(2)
        ReflectionPad1d((2, 2))
    """

    mode, dims = "reflect", 1


class ReflectionPad2d(_PadNd):
    """Reflects the last 2 dimensions at their edges."""

    mode, dims = "reflect", 2


class ReflectionPad3d(_PadNd):
    """Reflects the last 3 dimensions at their edges."""

    mode, dims = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Repeats the edge values of the last dimension (``F.pad(mode='replicate')``)."""

    mode, dims = "replicate", 1


class ReplicationPad2d(_PadNd):
    """Repeats the edge values of the last 2 dimensions."""

    mode, dims = "replicate", 2


class ReplicationPad3d(_PadNd):
    """Repeats the edge values of the last 3 dimensions."""

    mode, dims = "replicate", 3


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dim() not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"expected {self.dims + 1}D or {self.dims + 2}D input (got "
                             f"{input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Wraps the last dimension around (``F.pad(mode='circular')``)."""

    dims = 1


class CircularPad2d(_CircularPadNd):
    """Wraps the last 2 dimensions around."""

    dims = 2


class CircularPad3d(_CircularPadNd):
    """Wraps the last 3 dimensions around."""

    dims = 3
