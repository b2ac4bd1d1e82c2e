"""Activation functions of ``nn.functional`` beyond those in ``functional.py``."""

from __future__ import annotations

__all__: list[str] = []
