"""Backend entries of the manip family (``functions/manip.py``, ``ops/manip.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations


class ManipBackend:
    """The manip family's primitives; ``self`` is the backend object."""
