"""``autograd_gpu.cuda``: CUDA availability and device queries (CuPy loads on first use).

Without CuPy or without a GPU, ``is_available()`` is False and everything else that needs a
device raises a clear error saying how to install the ``cuda12``/``cuda13`` extra.
"""

from __future__ import annotations

from typing import Any

from .backends import cuda_support


def is_available() -> bool:
    """True when CuPy is installed and sees at least one CUDA device."""
    return cuda_support.is_available()


def device_count() -> int:
    return cuda_support.device_count()


def current_device() -> int:
    return cuda_support.current_device()


def set_device(device: Any) -> None:
    from .device import device as _device

    cuda_support.check_cuda_available()
    idx = device if isinstance(device, int) else _device(device).index or 0
    cuda_support._cupy().cuda.Device(idx).use()


def get_device_name(device: Any = None) -> str:
    cuda_support.check_cuda_available()
    cp = cuda_support._cupy()
    idx = current_device() if device is None else (device if isinstance(device, int) else device.index or 0)
    name = cp.cuda.runtime.getDeviceProperties(idx)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def synchronize(device: Any = None) -> None:
    cuda_support.check_cuda_available()
    cuda_support._cupy().cuda.Device().synchronize()


def manual_seed(seed: int) -> None:
    """Seed the default generator of every CUDA device (a no-op without CUDA, as in PyTorch)."""
    if not is_available():
        return
    from .device import device as _device
    from .random import default_generator

    for i in range(device_count()):
        default_generator(_device("cuda", i)).manual_seed(seed)


manual_seed_all = manual_seed
