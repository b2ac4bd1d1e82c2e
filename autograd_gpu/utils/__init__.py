"""``autograd_gpu.utils``: data loading (``utils.data``), checkpoint files (``save``/``load``
in ``utils.serialization``), activation checkpointing (``utils.checkpoint``), timing
(``utils.benchmark``) and ``.safetensors`` files (``utils.safetensors``, loaded on first use:
the ``safetensors`` extra)."""

from __future__ import annotations

from . import benchmark, checkpoint, data, serialization

__all__ = ["benchmark", "checkpoint", "data", "safetensors", "serialization"]


def __getattr__(name: str) -> object:
    if name == "safetensors":
        import importlib

        return importlib.import_module(".safetensors", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
