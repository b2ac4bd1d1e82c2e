"""``torch.backends.cudnn``: cuDNN's switches, accepted and readable back as in PyTorch.

NOTE: autograd_gpu never calls cuDNN (convolutions are CuPy matrix products and our kernels),
so ``is_available()`` is False and ``version()`` None, as on a PyTorch build without cuDNN;
``benchmark``, ``deterministic`` and ``allow_tf32`` change nothing here (our convolutions are
deterministic and run in full float32), but programs may set and read them.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator

from ._flags import Flag, FlagModule, as_flag_module

__all__ = ["flags", "is_acceptable", "is_available", "set_flags", "version"]

enabled: bool
benchmark: bool
deterministic: bool
allow_tf32: bool
benchmark_limit: Any = None  # PyTorch's value where cuDNN is not available


def is_available() -> bool:
    """False: autograd_gpu does not use cuDNN."""
    return False


def version() -> int | None:
    """None: no cuDNN is loaded (PyTorch's answer where cuDNN is not available)."""
    return None


def is_acceptable(tensor: Any) -> bool:
    """Whether cuDNN would take ``tensor``: never here."""
    return False


def set_flags(_enabled: bool | None = None, _benchmark: bool | None = None,
              _benchmark_limit: int | None = None, _deterministic: bool | None = None,
              _allow_tf32: bool | None = None) -> tuple[Any, ...]:
    """Set the given switches; returns the previous values (PyTorch's order)."""
    mod: Any = sys.modules[__name__]
    old = (mod.enabled, mod.benchmark, None, mod.deterministic, mod.allow_tf32)
    for name, value in (("enabled", _enabled), ("benchmark", _benchmark),
                        ("deterministic", _deterministic), ("allow_tf32", _allow_tf32)):
        if value is not None:
            setattr(mod, name, value)
    return old


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10,
          deterministic: bool = False, allow_tf32: bool = True) -> Iterator[None]:
    """Set the switches for the duration of the block (PyTorch's defaults), then restore them."""
    old = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    try:
        yield
    finally:
        set_flags(*old)


class _Cudnn(FlagModule):
    enabled = Flag(True, "set_enabled_cudnn")
    benchmark = Flag(False, "set_benchmark_cudnn")
    deterministic = Flag(False, "set_deterministic_cudnn")
    allow_tf32 = Flag(True, "set_allow_tf32_cublas")


as_flag_module(__name__, _Cudnn)
