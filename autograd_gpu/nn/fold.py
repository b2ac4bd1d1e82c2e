"""Fold and Unfold (col2im and im2col)."""

from __future__ import annotations

__all__: list[str] = []
