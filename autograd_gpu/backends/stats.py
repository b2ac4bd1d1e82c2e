"""Backend entries of the stats family (``functions/stats.py``, ``ops/stats.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations


class StatsBackend:
    """The stats family's primitives; ``self`` is the backend object."""
