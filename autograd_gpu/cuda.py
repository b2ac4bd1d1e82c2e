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
from . import cuda_graphs as graphs  # noqa: F401  (torch.cuda.graphs)
from .amp._aliases import cuda_amp as amp  # noqa: F401  (torch.cuda.amp: deprecated GradScaler)

# NOTE: an empty ``__path__`` lets ``import torch.cuda.amp`` / ``torch.cuda.graphs`` (the runner's
# import hook) reach the submodules held as attributes here; nothing is searched on disk.
__path__: list[str] = []
from .cuda_graphs import (CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing,
                          make_graphed_callables)

__all__ = ["CUDAGraph", "Event", "OutOfMemoryError", "current_device", "current_stream",
           "device", "device_count", "device_memory_info", "empty_cache", "get_arch_list",
           "get_device_capability", "get_device_name", "get_device_properties", "get_rng_state",
           "get_rng_state_all", "graph", "graph_pool_handle", "init", "initial_seed",
           "ipc_collect", "is_available", "is_bf16_supported", "is_current_stream_capturing",
           "is_initialized", "is_tf32_supported", "make_graphed_callables", "manual_seed",
           "manual_seed_all", "max_memory_allocated", "max_memory_reserved", "mem_get_info",
           "memory_allocated", "memory_reserved", "memory_stats", "memory_summary",
           "reset_peak_memory_stats", "seed", "seed_all", "set_device", "set_rng_state",
           "set_rng_state_all", "synchronize"]


def __getattr__(name: str) -> Any:
    # NOTE: the legacy typed classes (``cuda.FloatTensor``, ...) live in legacy.py, which builds
    # on Tensor: reached lazily, as this module loads before it.
    if name.endswith("Tensor"):
        from .legacy import CUDA_TYPES

        if name in CUDA_TYPES:
            return CUDA_TYPES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    if not isinstance(device, int) and device is not None:
        _cuda_device(device)  # NOTE: PyTorch refuses a non-CUDA device before starting CUDA
    idx = _index(device)
    cuda_support._cupy().cuda.Device(idx).use()


def get_device_name(device: Any = None) -> str:
    return get_device_properties(device).name


def synchronize(device: Any = None) -> None:
    """Wait for all work queued on ``device`` (the current one by default) to finish."""
    idx = _index(device)
    cuda_support._cupy().cuda.Device(idx).synchronize()


def manual_seed(seed: int) -> None:
    """Seed the default generator of every CUDA device (a no-op without CUDA, as in PyTorch)."""
    if not is_available():
        return
    from .device import device as _device
    from .random import default_generator

    for i in range(device_count()):
        default_generator(_device("cuda", i)).manual_seed(seed)


manual_seed_all = manual_seed


def seed() -> None:
    """Reseed the current CUDA device's generator non-deterministically (no-op without CUDA)."""
    if is_available():
        _generator(None).seed()


def seed_all() -> None:
    """Reseed every CUDA device's generator non-deterministically (no-op without CUDA)."""
    for i in range(device_count()):
        _generator(i).seed()


def _generator(device: Any) -> Any:
    from .device import device as _device
    from .random import default_generator

    return default_generator(_device("cuda", _index(device)))


def initial_seed() -> int:
    return int(_generator(None).initial_seed())


def get_rng_state(device: Any = "cuda") -> Any:
    """The state of a CUDA device's default generator (``set_rng_state`` restores it)."""
    return _generator(device).get_state()


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Restore a CUDA generator's state; without CUDA a no-op, as in PyTorch (which defers it)."""
    if is_available():
        _generator(device).set_state(new_state)


def get_rng_state_all() -> list[Any]:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states: Any) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def is_initialized() -> bool:
    """Whether this process has started CUDA (made a CUDA tensor)."""
    return _allocator() is not None and is_available()


def init() -> None:
    """Check that CUDA can start here (PyTorch's errors where it cannot)."""
    cuda_support.check_cuda_available()


def ipc_collect() -> None:
    cuda_support.check_cuda_available()


class _CudaDeviceProperties:
    """What ``get_device_properties`` reports (PyTorch's attribute names)."""

    def __init__(self, props: dict[str, Any]) -> None:
        name = props.get("name", b"")
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major, self.minor = int(props.get("major", 0)), int(props.get("minor", 0))
        self.total_memory = int(props.get("totalGlobalMem", 0))
        self.multi_processor_count = int(props.get("multiProcessorCount", 0))
        self.warp_size = int(props.get("warpSize", 32))
        self.max_threads_per_block = int(props.get("maxThreadsPerBlock", 1024))
        self.shared_memory_per_block = int(props.get("sharedMemPerBlock", 0))
        self.is_integrated = int(props.get("integrated", 0))

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1 << 20)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    idx = _index(device)
    return _CudaDeviceProperties(cuda_support._cupy().cuda.runtime.getDeviceProperties(idx))


def get_device_capability(device: Any = None) -> tuple[int, int]:
    props = get_device_properties(device)
    return props.major, props.minor


def get_arch_list() -> list[str]:
    """``[]``: autograd_gpu compiles its kernels at run time for the device in use (NVRTC), so
    no architecture list is built in (PyTorch's answer without CUDA)."""
    return []


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: autograd_gpu has no bfloat16 dtype."""
    return False


def is_tf32_supported() -> bool:
    """False: float32 products run in full float32 here (CuPy's default)."""
    return False


class device:  # noqa: N801  (PyTorch's name)
    """``with cuda.device(i):`` makes CUDA device ``i`` current inside the block (a negative
    index or None: no change)."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else _device_index_of(device)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx >= 0:
            if cuda_support._cupy() is None:
                raise RuntimeError("PyTorch was compiled without CUDA support")
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                set_device(self.idx)

    def __exit__(self, *exc: object) -> None:
        if self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)


def _device_index_of(dev: Any) -> int:
    """An index without starting CUDA (``device('cuda')``: the current one, -1 stands for it)."""
    from .device import device as _device

    if isinstance(dev, int) and not isinstance(dev, bool):
        return dev
    d = _device(dev)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return -1 if d.index is None else d.index


class Event:
    """A CUDA event (CuPy's): ``record()``, ``synchronize()``, ``query()``, and
    ``elapsed_time(end)`` in milliseconds when made with ``enable_timing=True``."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        if cuda_support._cupy() is None:
            raise RuntimeError("Tried to instantiate dummy base class Event")
        cuda_support.check_cuda_available()
        self._event = cuda_support._cupy().cuda.Event(block=blocking,
                                                       disable_timing=not enable_timing,
                                                       interprocess=interprocess)

    def record(self, stream: Any = None) -> None:
        self._event.record(stream)

    def synchronize(self) -> None:
        self._event.synchronize()

    def query(self) -> bool:
        return bool(self._event.done)

    def elapsed_time(self, end_event: Event) -> float:
        return float(cuda_support._cupy().cuda.get_elapsed_time(self._event, end_event._event))


def current_stream(device: Any = None) -> Any:
    """The current CUDA stream of ``device`` (CuPy's stream: ``synchronize()``, ``done``)."""
    idx = _index(device)
    with cuda_support._cupy().cuda.Device(idx):
        return cuda_support._cupy().cuda.get_current_stream()


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
    if mod is None or cuda_support._cupy() is None:
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
