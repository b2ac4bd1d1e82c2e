"""``torch.accelerator``: the device-agnostic face of the accelerator (CUDA here).

As in PyTorch, the accelerator is the one this install was built for: CUDA when CuPy is
installed (``current_accelerator()`` is ``device(type='cuda')`` even with no GPU present, as a
CUDA build of PyTorch says), none otherwise (then ``current_accelerator()`` is None,
``is_available()`` False, ``device_count()`` 0, and the functions that need a device raise
PyTorch's ``RuntimeError: Cannot access accelerator device when none is available.``).
"""

from __future__ import annotations

import warnings
from typing import Any

from . import cuda as _cuda
from .backends import cuda_support
from .device import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count",
           "device_index", "empty_cache", "is_available", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_peak_memory_stats", "set_device_idx", "set_device_index", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available: bool = False) -> _device | None:
    """``device(type='cuda')`` when this install can run CUDA (and, with ``check_available``,
    a GPU is present), else None."""
    if not cuda_support._cupy():
        return None
    if check_available and not is_available():
        return None
    return _device("cuda")


def is_available() -> bool:
    """Whether the accelerator is built and at least one device is visible."""
    return current_accelerator() is not None and _cuda.is_available()


def device_count() -> int:
    """How many accelerator devices are visible (0 without one)."""
    return _cuda.device_count() if current_accelerator() is not None else 0


def _require() -> None:
    if current_accelerator() is None:
        raise RuntimeError(_NONE)


def _index(device: Any, optional: bool) -> int:
    """PyTorch's ``_get_device_index``: an int as it is, a device or string of the accelerator's
    type with its index (the current one when ``optional`` and it has none)."""
    if isinstance(device, int) and not isinstance(device, bool):
        _require()
        return device
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        if device.index is not None:
            return device.index
    elif device is not None:
        raise TypeError(f"Expected a torch.device, str or int, but got {type(device).__name__}")
    if not optional:
        raise ValueError("Expected a torch.device with a specified index or an integer, but "
                         f"got:{device}")
    return current_device_index()


def current_device_index() -> int:
    """The index of the current accelerator device."""
    _require()
    return _cuda.current_device()


def set_device_index(device: Any, /) -> None:
    """Make ``device`` (an index, or a device with one) current; a negative index is a no-op."""
    if isinstance(device, int) and not isinstance(device, bool) and device < 0:
        return
    idx = _index(device, optional=False)
    if idx >= 0:
        _cuda.set_device(idx)


def current_device_idx() -> int:
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device: Any, /) -> None:
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def synchronize(device: Any = None, /) -> None:
    """Wait for every kernel queued on ``device`` (the current one by default) to finish."""
    _cuda.synchronize(_index(device, optional=True))


class device_index:  # noqa: N801  (PyTorch's name)
    """``with device_index(i):`` makes accelerator device ``i`` current inside the block (None:
    no change)."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info: object) -> None:
        if self.idx is not None and self.prev_idx >= 0:
            set_device_index(self.prev_idx)


def _memory(fn: Any) -> Any:
    def run(device: Any = None, /) -> Any:
        return fn(_index(device, optional=True))

    run.__name__ = run.__qualname__ = fn.__name__
    run.__doc__ = f"``torch.cuda.{fn.__name__}`` on the accelerator's device."
    return run


memory_allocated = _memory(_cuda.memory_allocated)
max_memory_allocated = _memory(_cuda.max_memory_allocated)
memory_reserved = _memory(_cuda.memory_reserved)
max_memory_reserved = _memory(_cuda.max_memory_reserved)
memory_stats = _memory(_cuda.memory_stats)
reset_peak_memory_stats = _memory(_cuda.reset_peak_memory_stats)


def empty_cache() -> None:
    """Give the accelerator's cached, unused memory back to the driver."""
    _require()
    _cuda.empty_cache()
