"""``autograd_gpu.amp`` (``torch.amp``): ``GradScaler``, dynamic loss scaling.

``torch.cuda.amp.GradScaler`` and ``torch.cpu.amp.GradScaler`` are PyTorch's deprecated
aliases (``autograd_gpu.cuda.amp``, ``autograd_gpu.cpu.amp``: ``_aliases.py``).
"""

from __future__ import annotations

from . import grad_scaler  # noqa: F401  (torch.amp.grad_scaler)
from .grad_scaler import GradScaler

__all__ = ["GradScaler"]
