"""PyTorch's explicit CUDA graph API (``torch.cuda.graphs``): ``CUDAGraph``, the ``graph``
context manager, ``graph_pool_handle``, ``is_current_stream_capturing`` and
``make_graphed_callables``; reached as ``autograd_gpu.cuda.<name>``.

A capture records the CUDA work of a region once (CuPy's stream capture, see
``backends/cuda_graph.py``); ``replay()`` launches it again as one graph, reading and writing the
same device addresses every time: change static inputs in place (``copy_``) between replays and
read the static outputs after. Allocations during a capture come from a private memory pool
(or the one a ``pool=`` token names), counted by the memory tracker and never lent to tensors
made after the capture.

Refused during a capture, with PyTorch's ``CUDA error: operation not permitted when stream is
capturing`` and what was attempted, before CUDA fails on them: host reads of CUDA tensors
(``.item()``, ``.tolist()``, ``.cpu()``, ``.numpy()``, ``bool()``, printing, data-dependent
shapes such as ``nonzero``) and random draws from CUDA generators (see
``cuda_graph.refuse_draw``: they would replay the same numbers, PyTorch's would not).

Without CuPy the names raise what a CPU build of PyTorch raises.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from .backends import cuda_support

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]

_DEBUG = [False]
_CAPTURE_UNSUPPORTED = 900  # cudaErrorStreamCaptureUnsupported


def _graphs(dummy: str) -> Any:
    """The CUDA graph backend; without CuPy PyTorch's CPU-build error for ``dummy``."""
    if cuda_support._cupy() is None:
        raise RuntimeError(f"Tried to instantiate dummy base class {dummy}")
    return cuda_support.graphs()


def is_current_stream_capturing() -> bool:
    """True when a CUDA graph capture is under way on the current CUDA stream (False, without
    starting CUDA, when there is no GPU)."""
    if cuda_support._cupy() is None:
        raise RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing")
    if cuda_support.CAPTURE[0] is None or not cuda_support.is_available():
        return False
    return bool(cuda_support.graphs().current_stream_capturing())


def graph_pool_handle() -> Any:
    """An opaque token for a graph memory pool, to share it between captures (``pool=``)."""
    return _graphs("_graph_pool_handle").PoolHandle()


class CUDAGraph:
    """A CUDA graph: ``capture_begin()`` ... ``capture_end()`` on a non-default stream (or
    ``with cuda.graph(g):``), then ``replay()`` as often as needed."""

    def __init__(self, keep_graph: bool = False) -> None:
        self._backend = _graphs("CUDAGraph")
        self._keep_graph = bool(keep_graph)
        self._capture: Any = None  # the capture under way
        self._graph: Any = None  # the captured graph
        self._pool: Any = None
        self._checks: list[Any] = []
        self._stream = self._backend.current_stream()

    def capture_begin(self, pool: Any = None, capture_error_mode: str = "global",
                      check_input_liveness: bool = False) -> None:
        """Begin capturing the CUDA work of the current stream (a non-default one).

        NOTE: ``check_input_liveness`` is accepted and ignored (PyTorch's debugging aid).
        """
        be = self._backend
        if capture_error_mode not in be.MODES:  # NOTE: PyTorch's binding checks this first
            raise RuntimeError("Unknown capture error mode. Expected `global`, `thread_local`, or "
                               f"`relaxed`, got {capture_error_mode}")
        if self._graph is not None:
            raise RuntimeError("This CUDAGraph instance already owns a captured graph. To "
                               "capture a new graph, create a new instance.")
        if cuda_support.CAPTURE[0] is not None:
            raise RuntimeError(f"{cuda_support.CAPTURE_ERROR}: capture_begin() while another "
                               "capture is under way (one capture at a time per process)")
        stream = be.current_stream()
        if be.is_default_stream(stream):
            raise RuntimeError("CUDA graphs must be captured on a non-default stream. (However, "
                               "after capture, it's ok to replay them on the default stream.)")
        if pool is not None and not isinstance(pool, be.PoolHandle):
            raise TypeError(f"pool must be a token from graph_pool_handle() or "
                            f"CUDAGraph.pool(), got {type(pool).__name__}")
        handle = pool if pool is not None else be.PoolHandle()
        self._capture = be.begin(stream, handle, capture_error_mode)
        self._stream, self._pool = stream, handle

    def capture_end(self) -> None:
        """End the capture; ``replay`` may be called from now on."""
        be = self._backend
        cap = self._capture
        if cap is None:
            raise RuntimeError("capture_end() called before capture_begin().")
        if not be.same_stream(be.current_stream(), cap.stream):
            raise RuntimeError("Capture must end on the same stream it began on.")
        self._capture = None
        try:
            captured = cap.end()
        except BaseException:
            self._pool = None
            raise
        self._graph = captured
        self._checks = cap.checks
        if be.node_names(captured) == []:
            warnings.warn("The CUDA Graph is empty. This usually means that the graph was "
                          "attempted to be captured on wrong device or stream.", stacklevel=2)

    def _abort(self) -> None:
        """End a capture that failed: no graph, the pool let go."""
        cap, self._capture, self._pool = self._capture, None, None
        if cap is not None:
            cap.abort()

    def instantiate(self) -> None:
        if self._graph is None:
            raise RuntimeError("capture_end() must have been called before calling instantiate")

    def replay(self) -> None:
        """Run the captured work again, on the current stream."""
        if self._graph is None:
            raise RuntimeError("Called CUDAGraph::replay without a preceding successful capture.")
        self._backend.launch(self._graph)
        if self._checks:
            # NOTE: index checks (targets, gathers) made on the device during the replay: read
            # back now, a sync per replay that only graphs with such checks pay
            self._backend.verify(self._checks)

    def reset(self) -> None:
        """Drop the captured graph (and this graph's hold on its memory pool)."""
        self._abort()
        self._graph = None

    def pool(self) -> Any:
        """The token of this graph's memory pool, to share it with a later capture."""
        if self._graph is None:
            raise RuntimeError("Called CUDAGraph::pool() without a preceding successful capture.")
        return self._pool

    def enable_debug_mode(self) -> None:
        """Let ``debug_dump`` write the graph (for every CUDAGraph, as in PyTorch)."""
        _DEBUG[0] = True

    def debug_dump(self, debug_path: str) -> None:
        """Write what the graph runs to ``debug_path`` as a DOT file (after
        ``enable_debug_mode()``; else a warning).

        NOTE: CuPy has no binding for cudaGraphDebugDotPrint: on a GPU the file names the graph
        and its pool only; the NumPy stand-in lists the recorded operations.
        """
        if not (_DEBUG[0] or self._keep_graph):
            warnings.warn("CUDA Graphs debug not enabled, set with [graph].enable_debug_mode()",
                          stacklevel=2)
            return
        if self._graph is None:
            return
        names = self._backend.node_names(self._graph) or []
        lines = ["digraph cuda_graph {",
                 f'  label="autograd_gpu CUDAGraph, pool {getattr(self._pool, "id", "?")}";']
        lines += [f'  n{i} [label="{name}"];' for i, name in enumerate(names)]
        lines += [f"  n{i} -> n{i + 1};" for i in range(len(names) - 1)]
        with open(debug_path, "w") as fh:
            fh.write("\n".join(lines + ["}"]) + "\n")


class graph:  # noqa: N801  (PyTorch's name)
    """``with cuda.graph(g):`` captures the block's CUDA work into ``g`` on a side stream
    (``stream``, else one made once and shared), allocating from ``pool`` or a private pool.

    An exception inside the block ends the capture cleanly (no graph, the pool let go) and
    propagates.
    """

    default_capture_stream: Any = None

    def __init__(self, cuda_graph: CUDAGraph, pool: Any = None, stream: Any = None,
                 capture_error_mode: str = "global", enable_annotations: bool = False,
                 check_input_liveness: bool = False) -> None:
        if stream is None and graph.default_capture_stream is None:
            if cuda_support._cupy() is None:
                raise RuntimeError("torch.cuda.Stream requires CUDA support")
            graph.default_capture_stream = cuda_support.graphs().new_stream()
        self.pool = pool
        self.capture_stream = stream if stream is not None else graph.default_capture_stream
        self.cuda_graph = cuda_graph
        self.capture_error_mode = capture_error_mode  # NOTE: enable_annotations is ignored
        self.check_input_liveness = check_input_liveness

    def __enter__(self) -> None:
        from . import cuda

        be = cuda_support.graphs()
        be.synchronize()
        cuda.empty_cache()  # NOTE: as PyTorch: free what can be freed before the capture
        self._stream_ctx = self.capture_stream
        self._stream_ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool, capture_error_mode=self.capture_error_mode,
                                          check_input_liveness=self.check_input_liveness)
        except BaseException:
            self._stream_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if exc_type is None:
                self.cuda_graph.capture_end()
            else:
                self.cuda_graph._abort()  # NOTE: the user's exception propagates, not CUDA's
        finally:
            self._stream_ctx.__exit__(None, None, None)
        if getattr(exc, "status", None) == _CAPTURE_UNSUPPORTED:
            # NOTE: a host sync inside CuPy that our own checks did not foresee: PyTorch's message
            raise RuntimeError(f"{cuda_support.CAPTURE_ERROR}: an operation in the captured "
                               f"region synchronised with the host ({exc}); move it out of the "
                               "captured region") from exc


def _capture(fn: Callable[[], Any], *, warmup: int = 1, pool: Any = None) -> tuple[CUDAGraph, Any]:
    """Warm ``fn()`` up ``warmup`` times on a side stream, then capture one call of it.

    Returns ``(g, out)``: ``g.replay()`` redoes ``fn``'s CUDA work on the same arrays (those
    ``fn`` reads: change them in place between replays) and refreshes ``out``, the captured
    call's result, in place. The internal entry point for whoever captures a callable
    (``compile(mode="reduce-overhead")``).
    """
    be = cuda_support.graphs()
    side = be.new_stream()
    be.synchronize()
    with side:
        for _ in range(warmup):
            fn()
    be.synchronize()
    g = CUDAGraph()
    with graph(g, pool=pool, stream=side):
        out = fn()
    return g, out


def make_graphed_callables(callables: Any, sample_args: Any, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool: Any = None) -> Any:
    """Graphed versions of ``callables`` (a function or an ``nn.Module``, or a tuple of them):
    each call copies its arguments into static inputs, replays the captured forward and, in
    backward, the captured backward (see ``cuda_graphs_make``)."""
    from .cuda_graphs_make import make_graphed_callables as make

    return make(callables, sample_args, num_warmup_iters, allow_unused_input, pool)
