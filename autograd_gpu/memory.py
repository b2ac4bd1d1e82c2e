"""The memory tracker: PyTorch's ``memory_allocated`` family, on the CPU and on CUDA.

What is counted, on every device: the bytes of live tensor storage the framework holds there.
Views count once (per underlying buffer), arrays saved for backward count, gradients count.

- **CPU** (this module): a registry keyed by the root buffer (the end of NumPy's ``.base`` chain)
  of every array that becomes a Tensor's storage (``Tensor._make``) or is saved for backward
  (``Node._pack``). A weak reference per buffer subtracts its ``nbytes`` when NumPy frees it.
  Byte counts are exact (no rounding). Temporaries inside one op never become storage and are
  not counted.
- **CUDA** (``backends/cupy_backend.py``): the allocator hook that serves every CuPy allocation
  of ours counts each block as CuPy's pool rounds it (512-byte blocks) and learns of its release;
  the current figure equals ``pool.used_bytes()`` for our allocations. Temporaries inside an op
  count while they live, as in PyTorch.

The peak is updated at every allocation and survives frees until ``reset_peak_memory_stats``.
Tracking costs a dict insert and a weak reference per new CPU buffer; ``set_enabled(False)`` (or
``AUTOGRAD_GPU_MEMORY_TRACKING=0`` in the environment) stops counting new CPU buffers.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

from .autograd import saved as _saved
from .backends.numpy_backend import NumpyBackend
from .device import CPU
from .device import device as _device

__all__ = ["is_enabled", "max_memory_allocated", "memory_allocated", "memory_stats",
           "memory_summary", "reset_peak_memory_stats", "set_enabled"]

_ndarray = NumpyBackend.ndarray


class _State:
    __slots__ = ("enabled",)

    def __init__(self) -> None:
        self.enabled = os.environ.get("AUTOGRAD_GPU_MEMORY_TRACKING", "1") != "0"


STATE = _State()


class Counters:
    """Byte and block counters of one device (the CUDA allocator keeps the same fields)."""

    __slots__ = ("current", "peak", "allocated", "freed", "count", "count_peak",
                 "count_allocated", "count_freed", "num_alloc_retries", "num_ooms")

    def __init__(self) -> None:
        self.current = self.peak = self.allocated = self.freed = 0
        self.count = self.count_peak = self.count_allocated = self.count_freed = 0
        self.num_alloc_retries = self.num_ooms = 0


_CPU = Counters()


class _Buffer(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to one tracked root buffer, carrying its registry key and size."""

    __slots__ = ("key", "nbytes")
    key: int
    nbytes: int


_LIVE: dict[int, _Buffer] = {}


def _release(ref: _Buffer, live: dict[int, _Buffer] = _LIVE, c: Counters = _CPU) -> None:
    # NOTE: NumPy calls this as it frees the buffer, before its id can be reused. The defaults
    # bind the registry, so a buffer freed at interpreter exit still finds it.
    del live[ref.key]
    c.current -= ref.nbytes
    c.count -= 1


def track(array: Any) -> None:
    """Count the root buffer of NumPy ``array`` once, for as long as it lives.

    NOTE: the hot path of the tracker (every new CPU tensor): one weak reference and a dict insert
    per new buffer, a dict lookup per view; ``freed`` figures are derived when asked for.
    """
    a = array
    b = a.base
    while b is not None and isinstance(b, _ndarray):
        a = b
        b = a.base
    key = id(a)
    if key in _LIVE:
        return
    ref = _LIVE[key] = _Buffer(a, _release)
    ref.key = key
    n = ref.nbytes = a.nbytes
    c = _CPU
    current = c.current = c.current + n
    c.allocated += n
    count = c.count = c.count + 1
    c.count_allocated += 1
    if current > c.peak:
        c.peak = current
    if count > c.count_peak:
        c.count_peak = count


def track_saved(array: Any, dev: Any) -> None:
    """The hook ``Node`` calls for an array it keeps for backward (not a tensor's storage)."""
    if dev is CPU and STATE.enabled and isinstance(array, _ndarray):
        track(array)


_saved.track_saved = track_saved


def set_enabled(enabled: bool) -> None:
    """Switch CPU tracking of new buffers on or off (buffers already counted still release).

    NOTE: on CUDA the allocator counts always; its cost is the allocator hook's, paid anyway.
    """
    STATE.enabled = bool(enabled)


def is_enabled() -> bool:
    return STATE.enabled


# ---- the public functions -------------------------------------------------------------------

def _counters(device: Any) -> tuple[Counters, int | None]:
    """The counters of ``device`` (None: CPU) and, for CUDA, its index."""
    if device is None:
        return _CPU, None
    dev = _device(device) if not isinstance(device, int) or isinstance(device, bool) \
        else _device("cuda", device)
    if dev.type == "cpu":
        return _CPU, None
    if dev.type == "meta":
        return Counters(), None  # NOTE: meta tensors have no storage: always zeros
    if dev.type != "cuda":
        raise ValueError(f"memory statistics exist for 'cpu', 'cuda' and 'meta' devices, not "
                         f"'{dev}'")
    from . import cuda

    return cuda._counters(dev)


def memory_stats(device: Any = None) -> dict[str, int]:
    """PyTorch's memory statistics for ``device`` (the CPU by default), where they apply.

    Keys: ``allocated_bytes.all.{current,peak,allocated,freed}`` (bytes of live tensor storage,
    see the module docstring), ``allocation.all.{current,peak,allocated,freed}`` (buffers, or
    CUDA blocks), ``num_alloc_retries``, ``num_ooms``; on CUDA also
    ``reserved_bytes.all.{current,peak}`` (what CuPy's pool holds, cached blocks included).

    Example:
        >>> memory_stats()["allocated_bytes.all.current"] >= 0
        True
    """
    c, index = _counters(device)
    out = {
        "allocated_bytes.all.current": c.current,
        "allocated_bytes.all.peak": c.peak,
        "allocated_bytes.all.allocated": c.allocated,
        "allocated_bytes.all.freed": c.allocated - c.current if c is _CPU else c.freed,
        "allocation.all.current": c.count,
        "allocation.all.peak": c.count_peak,
        "allocation.all.allocated": c.count_allocated,
        "allocation.all.freed": c.count_allocated - c.count if c is _CPU else c.count_freed,
        "num_alloc_retries": c.num_alloc_retries,
        "num_ooms": c.num_ooms,
    }
    if index is not None:
        from . import cuda

        out["reserved_bytes.all.current"], out["reserved_bytes.all.peak"] = cuda._reserved(index)
    return out


def memory_allocated(device: Any = None) -> int:
    """Bytes of live tensor storage on ``device`` (the CPU by default); views count once, saved
    activations and gradients count.

    Example:
        >>> before = memory_allocated()
        >>> x = ones(1000)  # 1000 float32
        >>> memory_allocated() - before
        4000
    """
    return _counters(device)[0].current


def max_memory_allocated(device: Any = None) -> int:
    """The highest ``memory_allocated(device)`` since the start or the last
    ``reset_peak_memory_stats(device)``."""
    return _counters(device)[0].peak


def reset_peak_memory_stats(device: Any = None) -> None:
    """Set the peaks of ``device`` (the CPU by default) to the current figures."""
    c, index = _counters(device)
    c.peak = c.current
    c.count_peak = c.count
    if index is not None:
        from . import cuda

        cuda._reset_reserved_peak(index)


def _human(n: int) -> str:
    size, unit = float(abs(n)), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            break
        size /= 1024
    sign = "-" if n < 0 else ""
    return f"{sign}{int(size)} {unit}" if unit == "B" else f"{sign}{size:.2f} {unit}"


def memory_summary(device: Any = None) -> str:
    """A readable table of ``memory_stats(device)`` (PyTorch's ``memory_summary``, abridged).

    Example:
        >>> print(memory_summary())  # doctest: +SKIP
    """
    stats = memory_stats(device)
    name = "cpu" if device is None else str(_device(device) if not isinstance(device, int)
                                            else _device("cuda", device))
    rows: list[tuple[str, str, bool]] = [("Allocated memory", "allocated_bytes", True),
                                         ("Allocations", "allocation", False)]
    if "reserved_bytes.all.current" in stats:
        rows.append(("Reserved memory", "reserved_bytes", True))
    width = 79
    rule = "|" + "=" * (width - 2) + "|"
    thin = "|" + "-" * (width - 2) + "|"
    lines = [rule, f"| {'autograd_gpu memory summary, device ' + name:<{width - 4}} |",
             thin, f"| {'Metric':<22}|{'Current':>12} |{'Peak':>12} |{'Tot. alloc':>12} "
             f"|{'Tot. freed':>12} |", thin]
    for label, key, is_bytes in rows:
        fmt = _human if is_bytes else str
        cells = [fmt(stats[f"{key}.all.{k}"]) if f"{key}.all.{k}" in stats else "-"
                 for k in ("current", "peak", "allocated", "freed")]
        lines.append(f"| {label:<22}|{cells[0]:>12} |{cells[1]:>12} |{cells[2]:>12} "
                     f"|{cells[3]:>12} |")
    lines += [thin, f"| {'Alloc retries: ' + str(stats['num_alloc_retries']):<34}"
              f"{'OOMs: ' + str(stats['num_ooms']):<41} |", rule]
    return "\n".join(lines) + "\n"
