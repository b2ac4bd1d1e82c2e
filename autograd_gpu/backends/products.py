"""Backend entries of the products family (``functions/products.py``, ``ops/products.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations


class ProductsBackend:
    """The products family's primitives; ``self`` is the backend object."""
