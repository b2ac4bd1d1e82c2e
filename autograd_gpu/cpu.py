"""``autograd_gpu.cpu`` (``torch.cpu``): only ``amp`` (the deprecated ``GradScaler`` alias) so
far; PyTorch's other ``torch.cpu`` functions are not provided yet."""

from __future__ import annotations

from .amp._aliases import cpu_amp as amp

__all__ = ["amp"]
__path__: list[str] = []  # ``import torch.cpu.amp`` under the runner (see cuda.py)
