"""Backend entries of the products family (``functions/products.py``, ``ops/products.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends."""

from __future__ import annotations

from typing import Any


class ProductsBackend:
    """The products family's primitives; ``self`` is the backend object."""

    xp: Any
    name: str

    def cross3(self, x: Any, y: Any, axis: int) -> Any:
        """The cross product of ``x`` and ``y`` (broadcast) along ``axis`` (length 3)."""
        xp = self.xp
        x0, x1, x2 = (xp.take(x, i, axis=axis) for i in range(3))
        y0, y1, y2 = (xp.take(y, i, axis=axis) for i in range(3))
        return xp.stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], axis=axis)

    def diagonal_of(self, x: Any, axis1: int, axis2: int) -> Any:
        """The main diagonal of axes ``axis1``, ``axis2`` as the last axis (a view, read it
        only)."""
        return self.xp.diagonal(x, 0, axis1, axis2)

    def set_diagonal(self, out: Any, values: Any, axis1: int, axis2: int) -> None:
        """Write ``values`` (its last axis along the diagonal) onto the main diagonal of axes
        ``axis1``, ``axis2`` of ``out``, in place."""
        xp = self.xp
        k = min(out.shape[axis1], out.shape[axis2])
        idx = xp.arange(k)
        view = xp.moveaxis(out, (axis1, axis2), (-2, -1))
        view[..., idx, idx] = values
