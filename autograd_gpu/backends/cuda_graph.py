"""CUDA graph capture on CuPy: the backend half of ``autograd_gpu.cuda.CUDAGraph``.

The only module that talks to CuPy's stream capture: ``Stream.begin_capture`` /
``end_capture`` into a ``cupy.cuda.Graph`` and ``Graph.launch``. A capture runs on a side stream
(``cupy.cuda.Stream(non_blocking=True)``) that is the current stream for the whole region, so
that every launch of the region goes to it: CuPy's kernels and our RawKernels launch on the
current stream, and CuPy sets its cuBLAS handle's stream to the current one at each call.

Memory: while a capture is under way, the allocator of ``cupy_backend`` serves every allocation
from the capture's pool, a private ``cupy.cuda.MemoryPool`` per graph (or one shared by the
graphs given the same ``graph_pool_handle()``), instead of CuPy's default pool. Blocks freed
during or after the capture return to that pool, which nothing but another capture into it
draws from; so the addresses a graph writes on replay are never lent to other tensors. Each
block keeps its pool alive (``cupy_backend._Block``), the pool outlives the graph if a static
output does. The memory tracker counts those blocks as any other (``memory_allocated``);
``memory_reserved`` adds the private pools' holdings.

Only one capture may be under way in the process at a time (PyTorch's documented restriction);
``cuda_support.CAPTURE[0]`` names it, so host reads and random draws can be refused cheaply
before CUDA fails on them (``cuda_support.refuse_during_capture``).
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

from . import cuda_support

# NOTE: PyTorch's capture_error_mode names. CuPy's pool grows with cudaMalloc, an "unsafe" call
# that CUDA refuses in the global and thread-local capture modes (PyTorch's allocator switches
# the thread to relaxed mode around its cudaMalloc; CuPy has no binding for
# cudaThreadExchangeStreamCaptureMode), so the CUDA capture itself always runs in relaxed mode,
# as CuPy's own default. The host syncs those modes would catch are refused by our own checks.
MODES = ("global", "thread_local", "relaxed")

_ids = itertools.count(1)
# Every live pool handle (memory_reserved adds up what their pools hold).
HANDLES: weakref.WeakSet[PoolHandle] = weakref.WeakSet()


def _cp() -> Any:
    return cuda_support._cupy()


class PoolHandle:
    """The opaque token of a graph memory pool (``graph_pool_handle()``, ``CUDAGraph.pool()``):
    the private ``cupy.cuda.MemoryPool`` that captures given it allocate from, made on first
    use."""

    def __init__(self) -> None:
        self.id = next(_ids)
        self._pool: Any = None
        HANDLES.add(self)

    @property
    def pool(self) -> Any:
        if self._pool is None:
            self._pool = _cp().cuda.MemoryPool()
        return self._pool

    def reserved(self) -> int:
        """Bytes the pool holds (in use and cached), 0 before it is made."""
        return 0 if self._pool is None else int(self._pool.total_bytes())

    def __repr__(self) -> str:
        return f"<graph pool handle {self.id}>"


def new_stream() -> Any:
    """A new side stream for captures (non-blocking: no implicit sync with the legacy stream)."""
    return _cp().cuda.Stream(non_blocking=True)


def current_stream() -> Any:
    return _cp().cuda.get_current_stream()


def is_default_stream(stream: Any) -> bool:
    """True for the legacy default stream (CUDA cannot capture on it)."""
    return int(stream.ptr) in (0, 1)


def same_stream(a: Any, b: Any) -> bool:
    return int(a.ptr) == int(b.ptr)


def current_stream_capturing() -> bool:
    """True when the current stream is the one a capture is under way on."""
    cap = cuda_support.CAPTURE[0]
    return cap is not None and same_stream(current_stream(), cap.stream)


def synchronize() -> None:
    _cp().cuda.Device().synchronize()


class Capture:
    """One capture under way: ``stream`` captures, allocations come from ``handle``'s pool."""

    def __init__(self, stream: Any, handle: PoolHandle, mode: str) -> None:
        self.stream, self.handle, self.mode = stream, handle, mode
        self._previous_pool: Any = None
        self.checks: list[tuple[Any, Any, int, int, Any]] = []

    def defer(self, bad: Any, value: Any, lo: int, hi: int, index: Any) -> None:
        """An index check made on the device: ``bad`` (a 0-d bool array the graph computes)
        says an entry of ``index`` fell outside ``[lo, hi)``, ``value`` (0-d) the first such;
        read after each replay (``verify``)."""
        self.checks.append((bad, value, lo, hi, index))

    def begin(self) -> None:
        from . import cupy_backend

        self._previous_pool = cupy_backend.serve_from(self.handle.pool)
        try:
            self.stream.begin_capture(mode=_cp().cuda.runtime.streamCaptureModeRelaxed)
        except BaseException:
            cupy_backend.serve_from(self._previous_pool)
            raise
        cuda_support.CAPTURE[0] = self

    def _finish(self) -> None:
        from . import cupy_backend

        cuda_support.CAPTURE[0] = None
        cupy_backend.serve_from(self._previous_pool)

    def end(self) -> Any:
        """The captured graph (CuPy's ``Graph``); CUDA's error when the capture was invalidated
        by an operation it refused (the capture is over either way)."""
        try:
            return self.stream.end_capture()
        finally:
            self._finish()

    def abort(self) -> None:
        """End the capture and drop what was captured (after an exception inside it)."""
        try:
            if self.stream.is_capturing():
                self.stream.end_capture()
        except Exception:  # noqa: BLE001  (an invalidated capture: nothing to keep)
            pass
        finally:
            self._finish()


def begin(stream: Any, handle: PoolHandle, mode: str) -> Capture:
    cap = Capture(stream, handle, mode)
    cap.begin()
    return cap


def refuse_draw() -> None:
    """Refuse a random draw from a CUDA generator during a capture, naming the op.

    NOTE: our CUDA generator keeps its Philox seed on the host and reseeds cuRAND per draw
    (``CupyGenerator``); a captured draw would replay the same numbers on every replay (PyTorch
    instead registers its generator with the graph and moves a device-side offset on at each
    replay). So draws are refused, with the user-facing function that asked for them.
    """
    import sys

    # NOTE: the outermost public function of ours below the user's code (or below a module's
    # __call__): dropout(), not the rand() it calls
    name, frame = "a random draw", sys._getframe(1)
    while frame is not None:
        module, fn = frame.f_globals.get("__name__", ""), frame.f_code.co_name
        if not module.startswith("autograd_gpu.") or module == "autograd_gpu.nn.module":
            break
        if fn.isidentifier() and not fn.startswith("_") and fn != "forward" and \
                not module.startswith(("autograd_gpu.backends", "autograd_gpu.ops",
                                       "autograd_gpu.autograd")):
            name = f"{fn}()"
        frame = frame.f_back  # type: ignore[assignment]
    cuda_support.refuse_during_capture(
        f"{name} (a random draw from a CUDA generator)",
        "Its numbers would repeat on every replay (autograd_gpu's CUDA generator keeps its state "
        "on the host): draw outside the capture into a static tensor and copy_() it in, or leave "
        "the random op out of the graph.")


def launch(graph: Any) -> None:
    """Replay ``graph`` on the current stream."""
    graph.launch(current_stream())


def verify(checks: list[tuple[Any, Any, int, int, Any]]) -> None:
    """The index checks a replay computed (``Capture.defer``): PyTorch's device-side assert
    error naming the first index out of range. One device-to-host copy for all of them (it
    waits for the replay)."""
    cp = _cp()
    flags = cp.stack([c[0] for c in checks]).get()
    for (_, value, lo, hi, _), bad in zip(checks, flags.tolist()):
        if bad:
            raise RuntimeError(
                "CUDA error: device-side assert triggered: index "
                f"{int(value.get())} is out of bounds for the range [{lo}, {hi}) (an index "
                "check of a CUDA graph, read after its replay)")


def node_names(graph: Any) -> list[str] | None:
    """What the graph runs, where the array library says (the NumPy stand-in does), else None."""
    names = getattr(graph, "names", None)
    return None if names is None else list(names)
