"""``torch.serialization``: ``save``/``load`` and the ``weights_only`` allowlist API.

The implementation lives in ``autograd_gpu.utils.serialization`` (see its docstring for the
file format); this module gives it PyTorch's import path, so that a program's
``torch.serialization.add_safe_globals([...])`` or ``with torch.serialization.safe_globals(...)``
works unchanged.
"""

from __future__ import annotations

from .utils.serialization import (
    DEFAULT_PROTOCOL,
    SerializationError,
    SourceChangeWarning,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    get_unsafe_globals_in_checkpoint,
    load,
    safe_globals,
    save,
)

__all__ = ["DEFAULT_PROTOCOL", "SerializationError", "SourceChangeWarning", "add_safe_globals",
           "clear_safe_globals", "get_safe_globals", "get_unsafe_globals_in_checkpoint", "load",
           "safe_globals", "save"]
