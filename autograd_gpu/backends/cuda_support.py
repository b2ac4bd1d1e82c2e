"""CUDA availability. CuPy is imported here only, lazily, and only when CUDA is asked for.

Without CuPy or without a GPU, ``is_available()`` is False and asking for a CUDA tensor says
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


# NOTE: kept as a switch so that a build can refuse CUDA tensors cleanly (tests flip it).
BACKEND_READY = True


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
    """Raise a clear error when CUDA tensors cannot be created here: without CuPy PyTorch's
    ``AssertionError: Torch not compiled with CUDA enabled`` (a CPU build's), without a GPU
    PyTorch's ``RuntimeError: Found no NVIDIA driver on your system``."""
    if _cupy() is None:
        # NOTE: PyTorch's type and first line (a CPU build's ``_lazy_init``), then how to fix it.
        raise AssertionError(f"Torch not compiled with CUDA enabled\nCuPy is not installed; "
                             f"{_INSTALL_HINT}")
    if not _gpu_present():
        raise RuntimeError(
            "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
            f"installed a driver; CuPy is installed but sees no CUDA device. {_INSTALL_HINT}"
        )
    if not BACKEND_READY:
        raise RuntimeError("CUDA tensors are switched off in this build of autograd_gpu "
                           "(cuda_support.BACKEND_READY is False); use device='cpu'")


# The CUDA graph capture under way in this process (``cuda_graph.Capture``), or None.
CAPTURE: list[Any] = [None]

CAPTURE_ERROR = "CUDA error: operation not permitted when stream is capturing"


_MOVE_IT = ("Move it out of the captured region (before capture_begin, or after capture_end / "
            "the `with cuda.graph(g):` block).")


def refuse_during_capture(what: str, hint: str = _MOVE_IT) -> None:
    """Raise PyTorch's capture error, saying what was attempted, when a CUDA graph capture is
    under way: ``what`` (a host read of CUDA memory, a random draw) cannot be captured."""
    if CAPTURE[0] is not None:
        raise RuntimeError(f"{CAPTURE_ERROR}: {what} cannot be part of a CUDA graph capture. "
                           f"{hint}")


def refuse_masks_during_capture(key: Any, advanced: bool = True) -> None:
    """Refuse a boolean mask in an (advanced) index during a capture: the result's shape
    depends on the mask's values, which CuPy reads back to the host."""
    if advanced and CAPTURE[0] is not None and any(
            getattr(getattr(getattr(k, "_data", k), "dtype", None), "kind", "") == "b"
            for k in (key if isinstance(key, (tuple, list)) else (key,))):
        refuse_during_capture("indexing with a boolean mask (the result's shape depends on the "
                              "mask's values, read back to the host)")


def graphs() -> Any:
    """The CUDA graph backend (``backends/cuda_graph.py``), once CUDA is known to be usable."""
    check_cuda_available()
    from . import cuda_graph

    return cuda_graph


def current_device() -> int:
    check_cuda_available()
    return int(_cupy().cuda.runtime.getDevice())


def backend_for(dev: Any) -> Any:
    """The CuPy backend for ``dev`` (``cuda:N``), loaded now; bound to that device when the
    machine has several, so its work runs there whatever the current device is."""
    check_cuda_available()
    count = _count()
    if dev.index is not None and dev.index >= count:
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {dev.index} asked for, "
                           f"{count} present)")
    from .cupy_backend import cupy_backend

    if count == 1:
        return cupy_backend
    return _DeviceBound(cupy_backend, dev.index or 0)


class _DeviceBound:
    """A backend whose every call runs with its CUDA device current (multi-GPU machines)."""

    def __init__(self, backend: Any, index: int) -> None:
        self._backend = backend
        self._device = _cupy().cuda.Device(index)
        self.name, self.ndarray, self.generic = backend.name, backend.ndarray, backend.generic

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self._backend, name)
        if not callable(fn):
            return fn
        device = self._device

        def on_device(*args: Any, **kwargs: Any) -> Any:
            with device:
                return fn(*args, **kwargs)

        setattr(self, name, on_device)
        return on_device
