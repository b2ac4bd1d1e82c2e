"""``autograd_gpu.utils``: data loading (``utils.data``), checkpoint files (``save``/``load``
in ``utils.serialization``), activation checkpointing (``utils.checkpoint``) and timing
(``utils.benchmark``)."""

from __future__ import annotations

from . import benchmark, checkpoint, data, serialization

__all__ = ["benchmark", "checkpoint", "data", "serialization"]
