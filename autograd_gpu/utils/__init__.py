"""``autograd_gpu.utils``: data loading (``utils.data``), checkpoint files (``save``/``load``
in ``utils.serialization``) and activation checkpointing (``utils.checkpoint``)."""

from __future__ import annotations

from . import checkpoint, data, serialization

__all__ = ["checkpoint", "data", "serialization"]
