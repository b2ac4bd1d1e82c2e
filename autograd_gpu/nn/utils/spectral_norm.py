"""Spectral normalization ``W / sigma(W)`` (Miyato et al.): the forward-pre-hook API
(``spectral_norm`` / ``remove_spectral_norm``, superseded in PyTorch by
``parametrizations.spectral_norm``), with PyTorch's buffers, state_dict hooks and versions."""

from __future__ import annotations

from typing import Any, TypeVar

from ...autograd.grad_mode import no_grad
from ...functions.decomp_norms import multi_dot as _multi_dot
from ...functions.decomp_spectral import pinverse
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..module import Module
from ..parameter import Parameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "remove_spectral_norm", "spectral_norm"]

T_module = TypeVar("T_module", bound=Module)


def _conv_transpose_types() -> tuple[type, ...]:
    from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d

    return ConvTranspose1d, ConvTranspose2d, ConvTranspose3d


def default_dim(module: Module) -> int:
    """The output dimension of a module's weight: 1 for transposed convolutions, else 0."""
    return 1 if isinstance(module, _conv_transpose_types()) else 0


class SpectralNorm:
    """The hook: ``module.<name> = <name>_orig / sigma`` before each forward, with ``sigma =
    u . (W v)`` from the buffers ``<name>_u`` and ``<name>_v``, which ``n_power_iterations`` of
    power iteration refine in training mode (in place, without gradient); eval mode uses them as
    stored. ``W`` is the weight with dim ``dim`` moved first, flattened to a matrix."""

    _version: int = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        mat = weight
        if self.dim != 0:
            mat = mat.permute(self.dim, *[d for d in range(mat.dim()) if d != self.dim])
        return mat.reshape(mat.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    # NOTE: written into the buffers (out=), as PyTorch: u and v persist across
                    # forwards; the clones keep the graph off later in-place updates.
                    v = F.normalize(mat.t().mv(u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(mat.mv(v), dim=0, eps=self.eps, out=u)
                u, v = u.clone(), v.clone()
        sigma = u.dot(mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, module.training))

    def _solve_v_and_rescale(self, mat: Tensor, u: Tensor, target_sigma: Tensor) -> Tensor:
        """The ``v`` with ``u . (W v) = target_sigma`` and ``W^T W v ∝ W^T u`` (old
        checkpoints stored no ``v``)."""
        v = _multi_dot([pinverse(mat.t().mm(mat)), mat.t(), u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / u.dot(mat.mv(v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(init.normal_(weight.new_empty(h)), dim=0, eps=fn.eps)
            v = F.normalize(init.normal_(weight.new_empty(w)), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # NOTE: a plain tensor attribute until the first forward recomputes it (PyTorch's
        # ``weight.data``): not a parameter, not in the state_dict.
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Upgrades checkpoints without a version (PyTorch before 1.1: ``weight`` stored, no
    ``weight_v``): ``sigma`` from ``weight_orig / weight``, then ``v`` solved from ``u``."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict: dict[str, Any], prefix: str, local_metadata: dict[str, Any],
                 strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                 error_msgs: list[str]) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        key = prefix + fn.name
        if version is None and all(key + s in state_dict for s in ("_orig", "_u", "_v")) \
                and key not in state_dict:
            return  # NOTE: saved without metadata, but already in the current layout
        missing = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[key + "_orig"]
            weight = state_dict.pop(key)
            sigma = (weight_orig / weight).mean()
            mat = fn.reshape_weight_to_matrix(weight_orig)
            state_dict[key + "_v"] = fn._solve_v_and_rescale(mat, state_dict[key + "_u"], sigma)


class SpectralNormStateDictHook:
    """Records ``metadata['spectral_norm'][name + '.version']`` in the state_dict."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module: Module, state_dict: dict[str, Any], prefix: str,
                 local_metadata: dict[str, Any]) -> None:
        record = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in record:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        record[key] = self.fn._version


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> T_module:
    """Replace parameter ``name`` by ``<name>_orig`` (a parameter) and the power-iteration
    buffers ``<name>_u`` (rows) and ``<name>_v`` (columns); ``module.<name>`` is recomputed as
    ``<name>_orig / sigma`` before every forward. ``dim`` defaults to 0 (1 for transposed
    convolutions).

    Example:
        >>> m = spectral_norm(Linear(20, 40))
        >>> m.weight_u.shape
        torch.Size([40])
    """
    SpectralNorm.apply(module, name, n_power_iterations,
                       default_dim(module) if dim is None else dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo ``spectral_norm``: ``name`` becomes a parameter holding the normalised weight."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for table, kind in ((module._state_dict_hooks, SpectralNormStateDictHook),
                        (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for k, hook in table.items():
            if isinstance(hook, kind) and hook.fn.name == name:
                del table[k]
                break
    return module
