"""Distances, normalisation of vectors, ``bilinear``, ``pixel_shuffle``, ``channel_shuffle`` and other ``nn.functional`` helpers."""

from __future__ import annotations

__all__: list[str] = []
