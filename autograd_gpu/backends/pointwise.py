"""Backend entries of the pointwise family (``functions/pointwise.py``, ``ops/pointwise.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations


class PointwiseBackend:
    """The pointwise family's primitives; ``self`` is the backend object."""
