"""``autograd_gpu.utils``: data loading (``utils.data``) and checkpoint files (``save``/``load``
in ``utils.serialization``)."""

from __future__ import annotations

from . import data, serialization

__all__ = ["data", "serialization"]
