"""Backend entries of the scan family (``functions/scan.py``, ``ops/scan.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations


class ScanBackend:
    """The scan family's primitives; ``self`` is the backend object."""
