"""``torch.backends.mkl``: whether the CPU's BLAS is Intel's MKL (NumPy's BLAS here)."""

from __future__ import annotations

import functools

__all__ = ["is_available"]


@functools.cache
def is_available() -> bool:
    """True when NumPy is linked against MKL (read from ``numpy.show_config``'s data)."""
    import numpy as np

    try:
        config = np.show_config(mode="dicts")
    except TypeError:  # NOTE: NumPy < 1.26 has no ``mode``; it then counts as not MKL
        return False
    blas = (config or {}).get("Build Dependencies", {}).get("blas", {})
    return "mkl" in str(blas.get("name", "")).lower()
