"""``torch.backends.cpu``: what the CPU supports."""

from __future__ import annotations

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """The widest SIMD instruction set NumPy dispatches to here (``AVX512``, ``AVX2``, ...), or
    ``DEFAULT``; PyTorch names its own kernels' level the same way."""
    import numpy as np

    try:
        found = np._core._multiarray_umath.__cpu_features__  # type: ignore[attr-defined]
    except AttributeError:
        return "DEFAULT"
    for name, flag in (("AVX512", "AVX512F"), ("AVX2", "AVX2")):
        if found.get(flag):
            return name
    return "DEFAULT"
