"""Backend entries of the decomp family (``functions/decomp.py``, ``ops/decomp.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations


class DecompBackend:
    """The decomp family's primitives; ``self`` is the backend object."""
