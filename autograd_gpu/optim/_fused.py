"""The optimizers' fused CUDA updates: one kernel launch per group (not yet wired: ``usable`` is
False, and CUDA parameters take ``_foreach``'s array path)."""

from __future__ import annotations

from typing import Any


def usable(p: Any) -> bool:
    """Whether the fused kernel serves parameter ``p``."""
    return False


def adam(*args: Any) -> None:
    raise NotImplementedError


sgd = rmsprop = adam
