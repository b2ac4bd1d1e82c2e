"""Backend entries of the scatter family (``functions/scatter.py``, ``ops/scatter.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations


class ScatterBackend:
    """The scatter family's primitives; ``self`` is the backend object."""
