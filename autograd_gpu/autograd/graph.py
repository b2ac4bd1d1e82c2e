"""``autograd.graph``: the ``Node`` type, hook handles and saved-tensor hooks.

``saved_tensors_hooks(pack, unpack)`` intercepts every tensor an op (or a custom ``Function``'s
``ctx.save_for_backward``) saves for backward: ``pack(tensor)`` runs when it is saved and its
result is kept instead of the tensor; ``unpack(packed)`` runs when backward reads it and must
return a Tensor. Hooks are per thread and nest; the innermost pair wins. ``save_on_cpu`` and
``utils.checkpoint`` are built on them.
"""

from __future__ import annotations

from typing import Any, Callable

from .grad_mode import no_grad
from .node import SAVED_HOOKS, Node, RemovableHandle

__all__ = [
    "Node", "RemovableHandle", "disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks",
]


class saved_tensors_hooks:  # noqa: N801  (PyTorch's name)
    """Context manager: pack/unpack hooks for the tensors saved for backward inside it.

    ``pack_hook(tensor)`` is called once per saved tensor, in saving order, with the saved Tensor
    (an op's input or output); it may return anything. ``unpack_hook(packed)`` is called when
    backward needs the tensor (once per access) and must return a Tensor with the original's
    values. The hooks used are the ones active when the tensor was saved.

    Example:
        >>> calls = []
        >>> x = tensor([1.0, 2.0], requires_grad=True)
        >>> with saved_tensors_hooks(lambda t: calls.append("pack") or t, lambda t: t):
        ...     y = x.exp()
        >>> calls
        ['pack']
    """

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if SAVED_HOOKS.disabled is not None:
            raise RuntimeError(SAVED_HOOKS.disabled)
        SAVED_HOOKS.stack = SAVED_HOOKS.stack + ((self.pack_hook, self.unpack_hook),)

    def __exit__(self, *exc: object) -> None:
        SAVED_HOOKS.stack = SAVED_HOOKS.stack[:-1]


class save_on_cpu(saved_tensors_hooks):  # noqa: N801  (PyTorch's name)
    """Saved tensors live on the host: CUDA tensors are copied to the CPU when saved and back to
    their device when backward reads them; CPU tensors are kept as they are (no copy).

    NOTE: a memory/time trade-off: device memory held by the graph drops to the parameters'
    share; every saved activation crosses the bus twice. ``pin_memory`` is accepted for
    PyTorch compatibility; the host copy is an ordinary (pageable) NumPy array.

    Example:
        >>> x = tensor([1.0, 2.0], requires_grad=True)
        >>> with save_on_cpu():
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad
        tensor([2., 4.])
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(_pack_to_cpu, _unpack_from_cpu)
        self.pin_memory = pin_memory
        self.device_type = device_type


def _pack_to_cpu(t: Any) -> tuple[Any, Any]:
    # NOTE: detached, so the packed value holds no graph (no reference cycle through an output).
    dev = t._device
    if dev.type == "cpu":
        return dev, t.detach()
    with no_grad():
        return dev, t.detach().to("cpu")


def _unpack_from_cpu(packed: tuple[Any, Any]) -> Any:
    dev, t = packed
    if t._device is dev:
        return t
    with no_grad():
        return t.to(dev)


class disable_saved_tensors_hooks:  # noqa: N801  (PyTorch's name)
    """Context manager: entering ``saved_tensors_hooks`` inside it raises
    ``RuntimeError(error_message)``; so does entering it while hooks are active."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if SAVED_HOOKS.stack:
            raise RuntimeError(self.error_message)
        self._prev = SAVED_HOOKS.disabled
        SAVED_HOOKS.disabled = self.error_message

    def __exit__(self, *exc: object) -> None:
        SAVED_HOOKS.disabled = self._prev
