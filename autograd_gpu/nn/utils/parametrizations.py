"""``torch.nn.utils.parametrizations``: ready-made parametrizations (``weight_norm``)."""

from __future__ import annotations

from typing import TypeVar

from ...tensor import Tensor
from ..module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["weight_norm"]

T_module = TypeVar("T_module", bound=Module)


class _WeightNorm(Module):
    """``weight = g * v / ||v||`` from the originals ``(g, v)`` = ``original0, original1``."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:  # type: ignore[override]
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Parametrize ``module.<name>`` as ``g * v / ||v||`` (PyTorch's parametrization form):
    the originals are ``parametrizations.<name>.original0`` (``g``, the norm over every dim but
    ``dim``) and ``original1`` (``v``).

    Example:
        >>> m = weight_norm(Linear(20, 40))
        >>> m.parametrizations.weight.original0.shape
        torch.Size([40, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
