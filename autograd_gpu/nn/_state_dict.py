"""``Module.state_dict`` and ``load_state_dict``: the walk over the module tree and PyTorch's
error report for keys that do not match."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .parameter import Parameter

if TYPE_CHECKING:
    from .module import Module


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` could not match: ``missing_keys``, ``unexpected_keys``."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")

    def __str__(self) -> str:
        return self.__repr__()


def save(module: Module, destination: Any, prefix: str, keep_vars: bool) -> dict[str, Any]:
    """``module.state_dict()``: parameters, then persistent buffers, then each child's."""
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()  # type: ignore[attr-defined]
    local_metadata = {"version": module._version}
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for name, p in module._parameters.items():
        if p is not None:
            destination[prefix + name] = p if keep_vars else p.detach()
    for name, b in module._buffers.items():
        if b is not None and name not in module._non_persistent_buffers_set:
            destination[prefix + name] = b if keep_vars else b.detach()
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
    for hook in tuple(getattr(module, "_state_dict_hooks", {}).values()):
        hook(module, destination, prefix, local_metadata)
    return destination  # type: ignore[no-any-return]


def load(root: Module, state_dict: Mapping[str, Any], strict: bool,
         assign: bool) -> _IncompatibleKeys:
    """``root.load_state_dict(state_dict)``: each module loads the keys under its prefix; the
    errors are gathered and raised together, in PyTorch's words and order."""
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
    missing: list[str] = []
    unexpected: list[str] = []
    errors: list[str] = []
    metadata = getattr(state_dict, "_metadata", None)

    def visit(module: Module, local: dict[str, Any], prefix: str) -> None:
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        for hook in tuple(getattr(module, "_load_state_dict_pre_hooks", {}).values()):
            hook(local, prefix, local_metadata, True, missing, unexpected, errors)
        module._load_from_state_dict(local, prefix, assign, missing, unexpected, errors)
        for name, child in module._modules.items():
            if child is not None:
                child_prefix = prefix + name + "."
                visit(child, {k: v for k, v in local.items() if k.startswith(child_prefix)},
                      child_prefix)

    visit(root, dict(state_dict), "")
    if strict:
        if unexpected:
            keys = ", ".join(f'"{k}"' for k in unexpected)
            errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
        if missing:
            keys = ", ".join(f'"{k}"' for k in missing)
            errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
    if errors:
        raise RuntimeError(f"Error(s) in loading state_dict for {root._get_name()}:\n\t"
                           + "\n\t".join(errors))
    return _IncompatibleKeys(missing, unexpected)


def load_own(module: Module, state_dict: dict[str, Any], prefix: str, assign: bool,
             missing: list[str], unexpected: list[str], errors: list[str]) -> None:
    """Load ``module``'s own parameters and persistent buffers from ``state_dict`` (keys under
    ``prefix``), noting missing and unexpected keys and errors."""
    local = {k: v for k, v in module._parameters.items() if v is not None}
    local.update((k, v) for k, v in module._buffers.items()
                 if v is not None and k not in module._non_persistent_buffers_set)
    for name, value in local.items():
        key = prefix + name
        if key not in state_dict:
            missing.append(key)
            continue
        src = state_dict[key]
        if not isinstance(src, Tensor):
            errors.append(f'While copying the parameter named "{key}", expected torch.Tensor '
                          f"or Tensor-like object from checkpoint but received {type(src)}")
            continue
        if value.dim() == 0 and src.dim() == 1:
            src = src[0]  # NOTE: old checkpoints stored scalars as 1-element vectors
        if src.shape != value.shape:
            errors.append(f"size mismatch for {key}: copying a param with shape {src.shape} "
                          "from checkpoint, the shape in current model is "
                          f"{value.shape}.")
            continue
        try:
            with no_grad():
                if assign:
                    _assign(module, name, value, src)
                else:
                    value.copy_(src)
        except Exception as ex:  # noqa: BLE001  (reported like PyTorch, all at once)
            errors.append(f'While copying the parameter named "{key}", whose dimensions in '
                          f"the model are {value.shape} and whose dimensions in the "
                          f"checkpoint are {src.shape}, an exception occurred : {ex.args}.")
    for key in state_dict:
        if not key.startswith(prefix):
            continue
        head, *rest = key[len(prefix):].split(".", 1)
        if (rest and head not in module._modules) or (not rest and head not in local):
            unexpected.append(key)


def _assign(module: Module, name: str, old: Tensor, src: Tensor) -> None:
    if name in module._parameters:
        module._parameters[name] = Parameter(src, requires_grad=old.requires_grad)
    else:
        module._buffers[name] = src

