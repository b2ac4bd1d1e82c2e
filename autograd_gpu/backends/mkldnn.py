"""``torch.backends.mkldnn``: oneDNN's switches, accepted and readable back as in PyTorch.

NOTE: autograd_gpu does not use oneDNN (the CPU runs NumPy's BLAS), so ``is_available()`` is
False; ``enabled`` and ``deterministic`` are recorded only.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator

from ._flags import Flag, FlagModule, as_flag_module

__all__ = ["flags", "is_available", "set_flags"]

enabled: bool
deterministic: bool


def is_available() -> bool:
    """False: autograd_gpu does not use oneDNN."""
    return False


def set_flags(_enabled: bool | None = None, _deterministic: bool | None = None) -> tuple[Any, ...]:
    mod: Any = sys.modules[__name__]
    old = (mod.enabled, mod.deterministic)
    if _enabled is not None:
        mod.enabled = _enabled
    if _deterministic is not None:
        mod.deterministic = _deterministic
    return old


@contextlib.contextmanager
def flags(enabled: bool = False, deterministic: bool = False) -> Iterator[None]:
    """Set the switches for the duration of the block, then restore them."""
    old = set_flags(enabled, deterministic)
    try:
        yield
    finally:
        set_flags(*old)


class _Mkldnn(FlagModule):
    enabled = Flag(True, "set_enabled_mkldnn")
    deterministic = Flag(False, "set_deterministic_mkldnn")


as_flag_module(__name__, _Mkldnn)
