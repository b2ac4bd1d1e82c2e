"""``torch.linalg``: norms, inverses, solves, decompositions and matrix functions, with PyTorch's
gradient formulas (LAPACK through NumPy on the CPU, cuSOLVER through CuPy on CUDA; the ops live
in ``ops/decomp.py``, the argument handling in ``functions/decomp.py``)."""

from __future__ import annotations

__all__: list[str] = []
