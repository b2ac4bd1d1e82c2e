"""Padding modules: constant, zero, reflection, replication and circular padding."""

from __future__ import annotations

__all__: list[str] = []
