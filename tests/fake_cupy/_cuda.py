"""The fake ``cupy.cuda`` (with ``runtime``, ``memory`` and ``graph``): one device, memory pools
that count bytes, an allocator hook, devices as context managers, streams with capture into
graphs (``_graph``), events holding host times."""

from __future__ import annotations

import time
import types
from typing import Any, Callable

from . import _graph
from ._array import ALLOCATOR, Memory, MemoryPointer

DEVICE_NAME = b"Fake CUDA device (NumPy)"
TOTAL_MEMORY = 80 * 1024**3
_COUNT = 1
_current = [0]


class CUDARuntimeError(RuntimeError):
    """CuPy's ``cupy.cuda.runtime.CUDARuntimeError``."""

    def __init__(self, status: int, name: str = "cudaErrorInvalidDevice",
                 message: str = "invalid device ordinal") -> None:
        self.status = status
        super().__init__(f"{name}: {message}")


def _check(i: int) -> int:
    i = int(i)
    if not 0 <= i < _COUNT:
        raise CUDARuntimeError(101)
    return i


# ---- cupy.cuda.runtime ----------------------------------------------------------------------

def getDeviceCount() -> int:  # noqa: N802  (CuPy's names)
    return _COUNT


def getDevice() -> int:  # noqa: N802
    return _current[0]


def setDevice(i: int) -> None:  # noqa: N802
    _current[0] = _check(i)


def getDeviceProperties(i: int) -> dict[str, Any]:  # noqa: N802
    _check(i)
    return {"name": DEVICE_NAME, "totalGlobalMem": TOTAL_MEMORY, "major": 9, "minor": 0,
            "multiProcessorCount": 132, "maxThreadsPerBlock": 1024, "warpSize": 32,
            "sharedMemPerBlock": 49152, "pciBusID": 0, "pciDeviceID": i}


def memGetInfo() -> tuple[int, int]:  # noqa: N802
    return TOTAL_MEMORY - _default_pool.total_bytes(), TOTAL_MEMORY


def deviceSynchronize() -> None:  # noqa: N802
    rec = _graph.any_capture()
    if rec is not None:
        _graph.unsupported(rec, "cudaDeviceSynchronize")


def runtimeGetVersion() -> int:  # noqa: N802
    return 13000


def driverGetVersion() -> int:  # noqa: N802
    return 13000


runtime = types.ModuleType("cupy.cuda.runtime", "Fake CUDA runtime: one device.")
for _f in (getDeviceCount, getDevice, setDevice, getDeviceProperties, memGetInfo,
           deviceSynchronize, runtimeGetVersion, driverGetVersion):
    setattr(runtime, _f.__name__, _f)
runtime.CUDARuntimeError = CUDARuntimeError  # type: ignore[attr-defined]
runtime.streamCaptureModeGlobal = 0  # type: ignore[attr-defined]
runtime.streamCaptureModeThreadLocal = 1  # type: ignore[attr-defined]
runtime.streamCaptureModeRelaxed = 2  # type: ignore[attr-defined]
runtime.is_hip = False  # type: ignore[attr-defined]


# ---- devices --------------------------------------------------------------------------------

class Device:
    """``cupy.cuda.Device(i)``: ``use()``, ``synchronize()``, ``id``; ``with Device(i):`` makes
    it current and restores the previous one after."""

    def __init__(self, device: Any = None) -> None:
        self.id = _current[0] if device is None else int(device)
        self._stack: list[int] = []

    def use(self) -> None:
        setDevice(self.id)

    def synchronize(self) -> None:
        _check(self.id)
        deviceSynchronize()

    @property
    def compute_capability(self) -> str:
        return "90"

    @property
    def mem_info(self) -> tuple[int, int]:
        return memGetInfo()

    def __enter__(self) -> Device:
        self._stack.append(_current[0])
        setDevice(self.id)
        return self

    def __exit__(self, *exc: object) -> None:
        _current[0] = self._stack.pop()

    def __int__(self) -> int:
        return self.id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("cuda", self.id))

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


def get_device_id() -> int:
    return _current[0]


def is_available() -> bool:
    return True


# ---- memory ---------------------------------------------------------------------------------

class OutOfMemoryError(MemoryError):
    """CuPy's ``cupy.cuda.memory.OutOfMemoryError(size, total, limit=0)``."""

    def __init__(self, size: int, total: int, limit: int = 0) -> None:
        self.size, self.total, self.limit = size, total, limit
        msg = f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes"
        msg += f", limit set to: {limit:,} bytes)." if limit else ")."
        super().__init__(msg)


def _round(n: int) -> int:
    return (n + 511) // 512 * 512


class MemoryPool:
    """CuPy's pool, as counters: ``used_bytes`` (held by live arrays), ``total_bytes`` (used plus
    cached free blocks), ``free_all_blocks``, ``set_limit``. Allocations round up to 512 bytes.
    An allocation over the limit or over the device's memory raises ``OutOfMemoryError``."""

    def __init__(self) -> None:
        self._used = 0
        self._cached = 0
        self._limit = 0

    def malloc(self, size: int) -> MemoryPointer:
        n = _round(size)
        limit = self._limit or TOTAL_MEMORY
        if self._used + self._cached + n > limit and self._cached:
            self._cached = 0  # CuPy frees cached blocks and retries before giving up
        if self._used + n > limit:
            raise OutOfMemoryError(n, self._used + self._cached, self._limit)
        self._cached = max(0, self._cached - n)
        self._used += n
        return MemoryPointer(Memory(n, owner=self))

    def _release(self, n: int) -> None:
        self._used -= n
        self._cached += n

    def free_all_blocks(self, stream: Any = None) -> None:
        self._cached = 0

    def used_bytes(self) -> int:
        return self._used

    def total_bytes(self) -> int:
        return self._used + self._cached

    def free_bytes(self) -> int:
        return self._cached

    def n_free_blocks(self) -> int:
        return 1 if self._cached else 0

    def set_limit(self, size: int | None = None, fraction: float | None = None) -> None:
        if fraction is not None:
            size = int(TOTAL_MEMORY * fraction)
        self._limit = int(size or 0)

    def get_limit(self) -> int:
        return self._limit


class PinnedMemoryPool:
    def free_all_blocks(self) -> None:
        return None

    def n_free_blocks(self) -> int:
        return 0


_default_pool = MemoryPool()
_default_pinned_pool = PinnedMemoryPool()


class UnownedMemory:
    """CuPy's ``UnownedMemory(ptr, size, owner, device_id)``: memory that ``owner`` keeps alive
    (released with the last array using it)."""

    def __init__(self, ptr: int, size: int, owner: Any, device_id: int = -1) -> None:
        self.ptr, self.size, self._owner = ptr, size, owner
        self.device_id = _current[0] if device_id < 0 else device_id


def _unpooled(size: int) -> MemoryPointer:
    if size > TOTAL_MEMORY:
        raise OutOfMemoryError(size, 0)
    return MemoryPointer(Memory(size))


ALLOCATOR[:] = [_default_pool.malloc]


def set_allocator(allocator: Callable[[int], Any] | None = None) -> None:
    """Every allocation of the fake's arrays goes through ``allocator`` (CuPy's hook)."""
    ALLOCATOR[0] = _unpooled if allocator is None else allocator


def get_allocator() -> Callable[[int], Any]:
    return ALLOCATOR[0]


def alloc(size: int) -> MemoryPointer:
    return ALLOCATOR[0](size)  # type: ignore[no-any-return]


memory = types.ModuleType("cupy.cuda.memory", "Fake CUDA memory: pool counters and the hook.")
for _name, _obj in (("OutOfMemoryError", OutOfMemoryError), ("MemoryPool", MemoryPool),
                    ("MemoryPointer", MemoryPointer), ("BaseMemory", Memory),
                    ("set_allocator", set_allocator), ("get_allocator", get_allocator),
                    ("alloc", alloc), ("UnownedMemory", UnownedMemory)):
    setattr(memory, _name, _obj)


# ---- streams (capture: see ``_graph``) and events -------------------------------------------

Stream = _graph.Stream
get_current_stream = _graph.get_current_stream
Graph = _graph.Graph
graph = types.ModuleType("cupy.cuda.graph", "Fake cupy.cuda.graph: Graph (see tests/fake_cupy/_graph).")
graph.Graph = Graph  # type: ignore[attr-defined]


class Event:
    """An event holding the host time at ``record``."""

    def __init__(self, block: bool = False, disable_timing: bool = False,
                 interprocess: bool = False) -> None:
        self._t: float | None = None

    def record(self, stream: Any = None) -> None:
        self._t = time.perf_counter()

    def synchronize(self) -> None:
        return None

    @property
    def done(self) -> bool:
        return True


def get_elapsed_time(start_event: Event, end_event: Event) -> float:
    """Milliseconds between two recorded events."""
    if start_event._t is None or end_event._t is None:
        raise CUDARuntimeError(600, "cudaErrorNotReady", "event not recorded")
    return (end_event._t - start_event._t) * 1e3


def get_default_memory_pool() -> MemoryPool:
    return _default_pool


def get_default_pinned_memory_pool() -> PinnedMemoryPool:
    return _default_pinned_pool


cuda = types.ModuleType("cupy.cuda", "Fake cupy.cuda: one device, counters, no kernels.")
for _name, _obj in (("runtime", runtime), ("memory", memory), ("Device", Device),
                    ("get_device_id", get_device_id), ("is_available", is_available),
                    ("set_allocator", set_allocator), ("get_allocator", get_allocator),
                    ("alloc", alloc), ("MemoryPointer", MemoryPointer),
                    ("MemoryPool", MemoryPool),
                    ("Stream", Stream), ("get_current_stream", get_current_stream),
                    ("Graph", Graph), ("graph", graph),
                    ("Event", Event), ("get_elapsed_time", get_elapsed_time)):
    setattr(cuda, _name, _obj)
