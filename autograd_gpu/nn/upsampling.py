"""Upsample, UpsamplingNearest2d and UpsamplingBilinear2d."""

from __future__ import annotations

__all__: list[str] = []
