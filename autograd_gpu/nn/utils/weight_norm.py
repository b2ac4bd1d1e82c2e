"""Weight normalization ``w = g * v / ||v||``: the forward-pre-hook API (``weight_norm``,
deprecated in PyTorch) and the shared norm helpers."""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from ...tensor import Tensor
from ..module import Module
from ..parameter import Parameter

T_module = TypeVar("T_module", bound=Module)


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """``torch.norm_except_dim``: the ``pow``-norm over every dim but ``dim``, kept with size 1
    (``dim == -1``: the norm of the whole tensor, a 0-d tensor, as in PyTorch)."""
    if dim == -1:
        return v.norm(pow)
    others = tuple(d for d in range(v.dim()) if d != dim % max(v.dim(), 1))
    return v.norm(pow, dim=others, keepdim=True) if others else v.abs()


def _weight_norm(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)`` with the norm taken over every dim but ``dim``."""
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Tensor:
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                            self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                                   f"{name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Replace parameter ``name`` by a magnitude ``<name>_g`` and a direction ``<name>_v``
    (``w = g * v / ||v||``, the norm over every dim but ``dim``; ``None``: the whole tensor),
    recomputed before every forward. Deprecated: use ``parametrizations.weight_norm``.

    Example:
        >>> m = weight_norm(Linear(20, 40))
        >>> m.weight_g.shape, m.weight_v.shape
        (torch.Size([40, 1]), torch.Size([40, 20]))
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo ``weight_norm``: ``name`` becomes a plain parameter holding the current weight."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
