"""``torch.backends.openmp``: whether this build runs on OpenMP.

NOTE: False here: autograd_gpu has no OpenMP code of its own (NumPy's BLAS keeps its own
thread pool, which ``set_num_threads`` limits).
"""

from __future__ import annotations

__all__ = ["is_available"]


def is_available() -> bool:
    return False
