"""Backend entries of the sort family (``functions/sort.py``, ``ops/sort.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations


class SortBackend:
    """The sort family's primitives; ``self`` is the backend object."""
