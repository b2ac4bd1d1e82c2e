"""The pieces of ``utils.benchmark`` under PyTorch's module paths (``utils.common``,
``utils.timer``, ``utils.compare``)."""

from __future__ import annotations

from . import common, compare, timer

__all__ = ["common", "compare", "timer"]
