"""Backend entries of the sampling family (``functions/sampling.py``, ``ops/sampling.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations


class SamplingBackend:
    """The sampling family's primitives; ``self`` is the backend object."""
