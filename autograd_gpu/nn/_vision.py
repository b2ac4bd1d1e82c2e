"""``interpolate``/``upsample*``, ``grid_sample`` and ``affine_grid`` for ``nn.functional``."""

from __future__ import annotations

__all__: list[str] = []
