"""``torch.nn.utils.parametrize``: tensors of a module computed by small modules from stored
"original" tensors (``module.weight`` becomes ``parametrization(module.parametrizations.weight
.original)``), as in PyTorch.

Registering the first parametrization swaps the module's class for a subclass
``Parametrized<Class>`` that holds one property per parametrized name; the originals live in
``module.parametrizations[name]`` (a ``ParametrizationList``), so ``state_dict`` keys read
``parametrizations.weight.original`` as PyTorch's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..container import ModuleDict, ModuleList
from ..module import Module
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Within this context, each parametrized tensor is computed once (on first access) and
    reused: a network that reads ``weight`` many times evaluates the parametrization once."""
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_in_place(dest: Tensor, value: Tensor) -> None:
    """``dest.set_(value)``: ``dest`` (keeping its identity) now shares ``value``'s storage.

    NOTE: as PyTorch's ``set_``, not a copy: arrays read from ``dest`` before stay unchanged.
    """
    dest.data = value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its ``original`` tensor (or
    ``original0``, ``original1``, ... when the first ``right_inverse`` returns a sequence).

    Args:
        modules: the parametrizations (one, at registration).
        original: the tensor being parametrized (a Parameter stays a Parameter).
        unsafe: skip the dtype/shape consistency checks.
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with no_grad():
            new: Any = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, Tensor) and not isinstance(new, Sequence):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(original).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if isinstance(new, Tensor) else len(new)
        if isinstance(new, Tensor):
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the "
                                 f"dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _set_in_place(original, new)
            _register(self, "original", original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(t).__name__}.")
                if isinstance(original, Parameter):
                    t = Parameter(t, original.requires_grad)
                _register(self, f"original{i}", t)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            if z.dtype != dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the "
                                 "tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {dtype}\nparametrized dtype: {z.dtype}")
            if z.shape != shape:
                raise ValueError("Registering a parametrization may not change the shape of the "
                                 "tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized shape: {shape}\nparametrized shape: {z.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Set the originals so that the parametrized tensor becomes ``value`` (each
        parametrization's ``right_inverse`` applied in reverse order)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError("The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_in_place(self.original, value)
            else:
                for i, t in enumerate(value):
                    _set_in_place(getattr(self, f"original{i}"), t)

    def forward(self) -> Tensor:  # type: ignore[override]
        """The parametrized tensor: the parametrizations chained on the original(s)."""
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for i in range(1, len(self)):
            x = self[i](x)
        return x


def _inject_new_class(module: Module) -> None:
    cls = module.__class__

    def getstate(self: Any) -> Any:
        raise RuntimeError("Serialization of parametrized modules is only supported through "
                           "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                           "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                           "inference-and-or-resuming-training")

    param_cls = type(f"Parametrized{cls.__name__}", (cls,), {"__getstate__": getstate})
    module.__class__ = param_cls


def _inject_property(module: Module, tensor_name: str) -> None:
    def get_parametrized(self: Any) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            value = _cache.get(key)
            if value is None:
                value = parametrization()
                _cache[key] = value
            return value
        return parametrization()

    def set_original(self: Any, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` the output of ``parametrization`` applied to the stored
    original (a second registration on the same name chains after the first).

    If ``parametrization`` has ``right_inverse``, the original is initialised with
    ``right_inverse(tensor)`` and assigning ``module.<tensor_name> = value`` calls it.

    Raises:
        ValueError: the module has no parameter, buffer or parametrized tensor of that name, or
            (unless ``unsafe``) the parametrization changes the tensor's dtype or shape.

    Example:
        >>> register_parametrization(linear, "weight", Symmetric())
        >>> linear.parametrizations.weight.original  # the stored tensor
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError("Registering a parametrization may not change the dtype of the "
                                 "tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.dtype: {y.dtype}\n"
                                 f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
            if x.shape != y.shape:
                raise ValueError("Registering a parametrization may not change the shape of the "
                                 "tensor, unless the `unsafe` flag is enabled.\n"
                                 f"module.{tensor_name}.shape: {y.shape}\n"
                                 f"parametrization(module.{tensor_name}).shape: {x.shape}")
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = plist
        _inject_property(module, tensor_name)
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Remove the parametrizations on ``tensor_name``; the tensor becomes a plain parameter (or
    buffer) holding the parametrized value (``leave_parametrized``) or the original.

    Raises:
        ValueError: no parametrization on ``tensor_name``, or ``leave_parametrized=False`` for
            a tensor parametrized by a sequence of originals.
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                _set_in_place(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name)
        original = Parameter(value, value.requires_grad) if value.requires_grad else value
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before ``register_parametrization`` replaced it."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)
