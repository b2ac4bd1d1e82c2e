"""``autograd_gpu.cuda``: CUDA availability and device queries (CuPy loads on first use).

Without CuPy or without a GPU, ``is_available()`` is False and everything else that needs a
device raises a clear error saying how to install the ``cuda12``/``cuda13`` extra.
"""

from __future__ import annotations

import sys
from typing import Any

from . import memory as _memory
from .backends import cuda_support
from .backends.base import OutOfMemoryError

__all__ = ["OutOfMemoryError", "current_device", "device_count", "device_memory_info",
           "empty_cache", "get_device_name", "is_available", "manual_seed", "manual_seed_all",
           "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated",
           "memory_reserved", "memory_stats", "memory_summary", "reset_peak_memory_stats",
           "set_device", "synchronize"]


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


# ---- memory (the tracker's CUDA half; see ``autograd_gpu.memory``) -----------------------------

_IDLE = _memory.Counters()  # NOTE: stays all zeros: what a process without CUDA tensors reports


def _allocator() -> Any:
    """The CuPy backend module when this process has made CUDA tensors (its allocator counts),
    else None."""
    return sys.modules.get("autograd_gpu.backends.cupy_backend")


def _cuda_device(device: Any) -> Any:
    """``device`` (None: the current CUDA device; an int: that index) as a ``device``."""
    from .device import device as _device

    if device is None:
        return _device("cuda")
    if isinstance(device, int) and not isinstance(device, bool):
        return _device("cuda", device)
    dev = _device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return dev


def _counters(dev: Any) -> tuple[Any, int]:
    """The allocator's counters for CUDA device ``dev`` and its index.

    NOTE: as in PyTorch, a process that has not used CUDA reports zeros (no error, no CuPy import).
    """
    mod = _allocator()
    if mod is None:
        return _IDLE, -1
    index = _index(dev)
    return mod.device_memory(index), index


def memory_allocated(device: Any = None) -> int:
    """Bytes of live tensor storage on a CUDA device (the current one by default), in CuPy's
    512-byte pool blocks; equals CuPy's ``pool.used_bytes()`` for our allocations."""
    return _memory.memory_allocated(_cuda_device(device))


def max_memory_allocated(device: Any = None) -> int:
    """The peak of ``memory_allocated(device)`` since the start or the last reset."""
    return _memory.max_memory_allocated(_cuda_device(device))


def reset_peak_memory_stats(device: Any = None) -> None:
    """Set the allocated and reserved peaks of a CUDA device to the current figures."""
    _memory.reset_peak_memory_stats(_cuda_device(device))


def memory_stats(device: Any = None) -> dict[str, int]:
    """PyTorch's statistics for a CUDA device; see ``autograd_gpu.memory_stats``."""
    return _memory.memory_stats(_cuda_device(device))


def memory_summary(device: Any = None) -> str:
    """A readable table of ``memory_stats(device)``."""
    return _memory.memory_summary(_cuda_device(device))


def _reserved(index: int) -> tuple[int, int]:
    """``(current, peak)`` reserved bytes of device ``index`` (-1: CUDA unused, zeros)."""
    mod = _allocator()
    if index < 0 or mod is None:
        return 0, 0
    current = int(mod.memory_reserved(index))  # NOTE: also folds the current figure into the peak
    return current, int(mod.device_memory(index).reserved_peak)


def _reset_reserved_peak(index: int) -> None:
    mod = _allocator()
    if index >= 0 and mod is not None:
        mod.device_memory(index).reserved_peak = 0
        mod.memory_reserved(index)


def memory_reserved(device: Any = None) -> int:
    """Bytes CuPy's memory pool holds on a CUDA device: in use plus cached free blocks."""
    return _reserved(_counters(_cuda_device(device))[1])[0]


def max_memory_reserved(device: Any = None) -> int:
    """The highest ``memory_reserved(device)`` seen since the start or the last reset.

    NOTE: CuPy's pool reports no growth events, so this is the maximum over every query and over
    every new allocated peak (reserved memory is never below allocated memory); a pool that grew
    without a new allocated peak (fragmentation) and shrank again before a query goes unseen.
    """
    return _reserved(_counters(_cuda_device(device))[1])[1]


def empty_cache() -> None:
    """Give the cached, unused blocks of CuPy's memory pools back to the driver (every device).
    Memory held by live tensors stays; ``memory_allocated`` does not change."""
    mod = _allocator()
    if mod is None:
        return
    for i in range(device_count()):
        mod.empty_cache(i)


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """``(free, total)`` bytes of a CUDA device as the driver reports them (all processes)."""
    idx = _index(_cuda_device(device))
    with cuda_support._cupy().cuda.Device(idx):
        free, total = cuda_support._cupy().cuda.runtime.memGetInfo()
    return int(free), int(total)


def device_memory_info(device: Any = None) -> dict[str, Any] | None:
    """Device-level figures from NVML (the ``nvidia-ml-py`` package, in the ``cuda`` extras):
    total, used and free memory in bytes (every process on the device, not only ours), GPU and
    memory-controller utilisation in percent over NVML's last sample period, and the name.

    Returns None, without raising, when ``pynvml`` is not installed, NVML finds no driver, or
    the device does not exist.

    Example:
        >>> info = device_memory_info()  # doctest: +SKIP
        >>> info["used"] <= info["total"]  # doctest: +SKIP
        True
    """
    try:
        import pynvml
    except ImportError:
        return None
    from .device import device as _device

    if device is None or (isinstance(device, str) and device == "cuda"):
        index = current_device() if is_available() else 0
    elif isinstance(device, int) and not isinstance(device, bool):
        index = device
    else:
        dev = _device(device)
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        index = dev.index if dev.index is not None else (current_device() if is_available() else 0)
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001  (no driver, no GPU: the figures are absent)
        return None
    try:
        handle = _nvml_handle(pynvml, index)
        mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
        util = pynvml.nvmlDeviceGetUtilizationRates(handle)
        name = pynvml.nvmlDeviceGetName(handle)
        return {"index": index, "name": name.decode() if isinstance(name, bytes) else str(name),
                "total": int(mem.total), "used": int(mem.used), "free": int(mem.free),
                "utilization_gpu": int(util.gpu), "utilization_memory": int(util.memory)}
    except Exception:  # noqa: BLE001  (an NVMLError: no such device, not supported)
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def _nvml_handle(pynvml: Any, index: int) -> Any:
    """NVML's handle for CUDA device ``index``.

    NOTE: NVML numbers devices in PCI order whatever CUDA_VISIBLE_DEVICES says, so with CUDA the
    device is found by its PCI bus id; without CuPy the NVML index is used as it is.
    """
    if is_available():
        try:
            bus_id = cuda_support._cupy().cuda.Device(index).pci_bus_id
            return pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
        except Exception:  # noqa: BLE001  (an older CuPy or NVML: fall back to the index)
            pass
    return pynvml.nvmlDeviceGetHandleByIndex(index)
