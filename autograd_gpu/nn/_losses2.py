"""The losses of ``nn.functional`` beyond those in ``_losses.py``."""

from __future__ import annotations

__all__: list[str] = []
