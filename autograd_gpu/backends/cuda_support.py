"""CUDA availability. CuPy is imported here only, lazily, and only when CUDA is asked for.

The CuPy backend itself arrives with the CUDA issue; until then asking for a CUDA tensor says
clearly why it cannot be had and how to get it.
"""

from __future__ import annotations

from typing import Any

_INSTALL_HINT = (
    "install the CUDA extra that matches your driver: pip install 'autograd_gpu[cuda12]' "
    "(or [cuda13])"
)


def _cupy() -> Any:
    try:
        import cupy
    except ImportError:
        return None
    return cupy


# NOTE: False until the CuPy backend lands (the CUDA issue): until then a GPU is reported as not
# available, so that `device="auto"` paths and the test fixture fall back to the CPU cleanly.
BACKEND_READY = False


def _gpu_present() -> bool:
    cp = _cupy()
    if cp is None:
        return False
    try:
        return bool(cp.cuda.runtime.getDeviceCount() > 0)
    except Exception:  # noqa: BLE001  (no driver, no device: CUDA is simply not available)
        return False


def is_available() -> bool:
    """True when CUDA tensors can be made here: CuPy, a GPU, and this build's CUDA backend."""
    return BACKEND_READY and _gpu_present()


def device_count() -> int:
    return _count() if is_available() else 0


def _count() -> int:
    return int(_cupy().cuda.runtime.getDeviceCount())


def check_cuda_available() -> None:
    """Raise a clear error when CUDA tensors cannot be created here."""
    if _cupy() is None:
        raise RuntimeError(f"Torch not compiled with CUDA enabled: CuPy is not installed; {_INSTALL_HINT}")
    if not _gpu_present():
        raise RuntimeError(
            "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
            f"installed a driver; CuPy is installed but sees no CUDA device. {_INSTALL_HINT}"
        )
    if not BACKEND_READY:
        raise RuntimeError(
            "CUDA tensors are not supported by this build of autograd_gpu yet: the CuPy backend "
            "is not built; use device='cpu'"
        )


def current_device() -> int:
    check_cuda_available()
    return int(_cupy().cuda.runtime.getDevice())


def backend_for(dev: Any) -> Any:
    check_cuda_available()
    raise AssertionError("unreachable until the CuPy backend lands")
