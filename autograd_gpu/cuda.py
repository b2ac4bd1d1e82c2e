"""``autograd_gpu.cuda``: CUDA availability and device queries (CuPy loads on first use).

Without CuPy or without a GPU, ``is_available()`` is False and everything else that needs a
device raises a clear error saying how to install the ``cuda12``/``cuda13`` extra.
"""

from __future__ import annotations

from typing import Any

from .backends import cuda_support
from .backends.base import OutOfMemoryError

__all__ = ["OutOfMemoryError", "current_device", "device_count", "get_device_name",
           "is_available", "manual_seed", "manual_seed_all", "set_device", "synchronize"]


def is_available() -> bool:
    """True when CuPy is installed and sees at least one CUDA device."""
    return cuda_support.is_available()


def device_count() -> int:
    return cuda_support.device_count()


def current_device() -> int:
    return cuda_support.current_device()


def _index(device: Any) -> int:
    """The CUDA device index meant by ``device``: an int, ``'cuda:1'``, ``device('cuda', 1)``, or
    None / ``'cuda'`` for the current device (PyTorch's ``_get_device_index``)."""
    from .device import device as _device

    cuda_support.check_cuda_available()
    if device is None:
        return current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    dev = _device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return current_device() if dev.index is None else dev.index


def set_device(device: Any) -> None:
    cuda_support._cupy().cuda.Device(_index(device)).use()


def get_device_name(device: Any = None) -> str:
    idx = _index(device)
    name = cuda_support._cupy().cuda.runtime.getDeviceProperties(idx)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize(device: Any = None) -> None:
    """Wait for all work queued on ``device`` (the current one by default) to finish."""
    cuda_support._cupy().cuda.Device(_index(device)).synchronize()


def manual_seed(seed: int) -> None:
    """Seed the default generator of every CUDA device (a no-op without CUDA, as in PyTorch)."""
    if not is_available():
        return
    from .device import device as _device
    from .random import default_generator

    for i in range(device_count()):
        default_generator(_device("cuda", i)).manual_seed(seed)


manual_seed_all = manual_seed
