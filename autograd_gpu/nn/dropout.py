"""The dropout modules: ``Dropout``, the channel-wise ``Dropout1d``/``2d``/``3d``, and the
SELU-preserving ``AlphaDropout`` and ``FeatureAlphaDropout``. All are the identity in eval mode."""

from __future__ import annotations

from ..tensor import Tensor
from . import _f_dropout
from . import functional as F
from .module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    """Shared by the dropout modules: ``p`` (checked) and ``inplace``.

    Raises:
        ValueError: ``p`` outside ``[0, 1]``.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """In training, zero each element with probability ``p`` and scale the rest by
    ``1 / (1 - p)``; in eval mode, the identity."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """``dropout1d``: whole channels of ``(N, C, L)`` or ``(C, L)`` inputs."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _f_dropout.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """``dropout2d``: whole channels of ``(N, C, H, W)`` inputs."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _f_dropout.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """``dropout3d``: whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _f_dropout.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """``alpha_dropout`` per element (keeps SELU's zero mean and unit variance)."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _f_dropout.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """``feature_alpha_dropout``: alpha dropout of whole channels."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _f_dropout.feature_alpha_dropout(input, self.p, self.training)
