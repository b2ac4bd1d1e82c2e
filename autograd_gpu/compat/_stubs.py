"""Stand-ins for PyTorch functions autograd_gpu does not have, in the modules programs import
only to have them at hand (``torch.jit``, ``torch.hub``, ``torch.onnx``): importing works, a call
raises ``NotImplementedError`` naming the function."""

from __future__ import annotations

from typing import Any, Callable, NoReturn


def unsupported(qualname: str, why: str) -> Callable[..., NoReturn]:
    """A function that raises ``NotImplementedError`` naming ``qualname`` (``torch.hub.load``)
    and saying ``why`` when called."""
    message = f"autograd_gpu does not implement {qualname}: {why}"

    def stub(*args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(message)

    module, _, name = qualname.rpartition(".")
    stub.__name__ = stub.__qualname__ = name
    stub.__module__ = module.replace("torch", "autograd_gpu", 1)
    stub.__doc__ = f"Not implemented here: calling it raises ``NotImplementedError`` ({why})."
    return stub
