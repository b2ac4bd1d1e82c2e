"""``torch.backends.mps``: Apple's Metal backend, which autograd_gpu does not have."""

from __future__ import annotations

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    """False: no MPS device can hold autograd_gpu tensors."""
    return False


def is_built() -> bool:
    """False, as on a PyTorch built without MPS."""
    return False
