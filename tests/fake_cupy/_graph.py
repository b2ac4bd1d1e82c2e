"""Streams, stream capture and CUDA graphs for the fake ``cupy.cuda``.

The fake computes synchronously on the host, so a stream is only a name for "where work goes";
what matters is capture. While the *current* stream is capturing, every operation of the fake
that does device work (the funnel ``_array.run``: ufuncs and their methods, NumPy functions,
array methods, advanced indexing, scatter, ``copyto``, device-to-device copies, ``cupyx``
special functions, and the kernel emulator's launches) is executed AND recorded as a step. A
step holds the host computation over the operands' NumPy buffers (device "addresses": a fake
array's ``_a``, never copied) and, for each fresh result, the buffer it landed in.
``Graph.launch()`` runs the steps again in order: in-place work writes through the same buffers,
fresh results are copied into their recorded buffers. So a replay sees the current contents of
every buffer it reads (static inputs changed in place between replays) and overwrites its
outputs in place, as a CUDA graph does.

A GPU does not run captured work; the fake has to (later steps need the shapes and the values
that data-independent Python code computes from them). So that capture leaves device memory as
a GPU would, the first time a recorded step touches a buffer its contents are saved, and
``end_capture`` puts every saved buffer back: memory that existed before the capture is as it
was (static inputs, parameters, ``.grad``); memory made during the capture holds values that a
GPU would leave undefined.

Operations CUDA refuses while a stream captures raise CuPy's ``CUDARuntimeError`` with
``cudaErrorStreamCaptureUnsupported`` and invalidate the capture (``end_capture`` then raises
``cudaErrorStreamCaptureInvalidated``): host reads (``get``, ``asnumpy``, ``item``, ``tolist``,
``bool``/``int``/``float``, printing), host-to-device copies of host data, results whose shape
depends on the data (``nonzero``, ``flatnonzero``, ``argwhere``, ``unique``, ``compress``,
``extract``, boolean-mask indexing), and synchronizing the capturing stream or the device.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

_next_ptr = [0x1000]


class Stream:
    """A fake stream: ``use()``, ``with stream:`` (current inside), ``synchronize()``, ``done``,
    and capture: ``begin_capture(mode=None)``, ``end_capture()`` -> :class:`Graph`,
    ``is_capturing()``."""

    null: Stream

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False,
                 priority: Any = None, ptr: int | None = None) -> None:
        if null:
            self.ptr = 0
        elif ptr is not None:
            self.ptr = ptr
        else:
            _next_ptr[0] += 16
            self.ptr = _next_ptr[0]
        self.non_blocking = non_blocking
        self._capture: Recording | None = None
        self._stack: list[Stream] = []

    def synchronize(self) -> None:
        if self._capture is not None:
            unsupported(self, "cudaStreamSynchronize on the capturing stream")

    def use(self) -> Stream:
        CURRENT[0] = self
        return self

    def __enter__(self) -> Stream:
        self._stack.append(CURRENT[0])
        CURRENT[0] = self
        return self

    def __exit__(self, *exc: object) -> None:
        CURRENT[0] = self._stack.pop()

    @property
    def done(self) -> bool:
        if self._capture is not None:
            unsupported(self, "cudaStreamQuery on the capturing stream")
        return True

    def wait_event(self, event: Any) -> None:
        return None

    def record(self, event: Any = None) -> Any:
        from ._cuda import Event

        event = Event() if event is None else event
        event.record(self)
        return event

    def begin_capture(self, mode: Any = None) -> None:
        """Start recording this stream's work (CuPy's default mode is relaxed)."""
        if self.ptr == 0:
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if self._capture is not None:
            from ._cuda import CUDARuntimeError

            raise CUDARuntimeError(900, "cudaErrorStreamCaptureUnsupported",
                                   "operation not permitted when stream is capturing")
        self._capture = Recording(self, 2 if mode is None else int(mode))

    def end_capture(self) -> Graph:
        """Stop recording; the recorded work as a :class:`Graph` (device memory is put back as
        it was before the capture, see the module docstring)."""
        from ._cuda import CUDARuntimeError

        rec = self._capture
        if rec is None:
            raise CUDARuntimeError(400, "cudaErrorIllegalState",
                                   "the operation cannot be performed in the present state")
        self._capture = None
        rec.restore()
        if rec.invalid is not None:
            raise CUDARuntimeError(901, "cudaErrorStreamCaptureInvalidated",
                                   "operation failed due to a previous error during capture")
        return Graph(rec.steps, rec.names)

    def is_capturing(self) -> bool:
        return self._capture is not None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self) -> int:
        return hash(("stream", self.ptr))

    def __repr__(self) -> str:
        return f"<Stream {self.ptr} (device 0)>"


Stream.null = Stream(null=True)
CURRENT: list[Stream] = [Stream.null]


def get_current_stream(device_id: int = -1) -> Stream:
    return CURRENT[0]


# (redo the operation, [(path in its result, buffer the result goes to)], buffers it reads/writes)
Step = tuple[Callable[[], Any], list[tuple[tuple[int, ...], np.ndarray]], list[np.ndarray]]


class Recording:
    """The steps recorded on one capturing stream, and the saved contents of the buffers they
    touched (put back by ``restore``)."""

    def __init__(self, stream: Stream, mode: int) -> None:
        self.stream, self.mode = stream, mode
        self.steps: list[Step] = []
        self.names: list[str] = []
        self.saved: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.invalid: str | None = None

    def touch(self, arrays: Any) -> None:
        """Save the contents of the buffers under ``arrays`` (NumPy arrays) the first time."""
        for a in arrays:
            root = _root(a)
            if isinstance(root, np.ndarray) and root.nbytes and id(root) not in self.saved \
                    and root.flags.writeable:
                self.saved[id(root)] = (root, root.copy())

    def add(self, name: str, compute: Callable[[], Any], targets: list[Any],
            operands: list[np.ndarray]) -> None:
        self.steps.append((compute, targets, operands))
        self.names.append(name)

    def restore(self) -> None:
        for root, copy in self.saved.values():
            np.copyto(root, copy)
        self.saved.clear()


def _root(a: Any) -> Any:
    while True:
        b = getattr(a, "base", None)
        if b is None or isinstance(b, (bytes, memoryview)):
            return a
        a = b


def recording() -> Recording | None:
    """The recording of the current stream, or None when it is not capturing."""
    return CURRENT[0]._capture


def any_capture() -> Recording | None:
    """The recording of the current stream, else of any capturing stream made current before
    (a device-wide synchronization during a capture is refused whatever the current stream)."""
    rec = CURRENT[0]._capture
    if rec is not None:
        return rec
    for s in CURRENT[0]._stack:
        if s._capture is not None:
            return s._capture
    return None


def unsupported(stream_or_rec: Any, what: str) -> None:
    """Raise CUDA's error for ``what`` during a capture (the capture is invalidated)."""
    from ._cuda import CUDARuntimeError

    rec = stream_or_rec._capture if isinstance(stream_or_rec, Stream) else stream_or_rec
    if rec is not None and rec.invalid is None:
        rec.invalid = what
    raise CUDARuntimeError(900, "cudaErrorStreamCaptureUnsupported",
                           "operation not permitted when stream is capturing")


def _paths(out: Any, fresh: Callable[[Any], bool], path: tuple[int, ...] = ()
           ) -> list[tuple[tuple[int, ...], Any]]:
    """(index path, array) of every fresh array in the (nested) result ``out``."""
    if isinstance(out, (tuple, list)):
        found = []
        for i, x in enumerate(out):
            found += _paths(x, fresh, path + (i,))
        return found
    return [(path, out)] if fresh(out) else []


# Operations whose result's shape depends on the data: CuPy reads a count back to the host
# (a synchronization), which a capturing stream refuses.
DATA_SHAPED = frozenset({"nonzero", "flatnonzero", "argwhere", "unique", "compress", "extract",
                         "boolean mask indexing"})


def host_read(what: str) -> None:
    """CUDA's capture error when the current stream captures: ``what`` reads device memory on
    the host (a synchronization)."""
    rec = CURRENT[0]._capture
    if rec is not None:
        unsupported(rec, what)


def record(rec: Recording, name: str, compute: Callable[[], Any], srcs: list[Any],
           wrap: Callable[..., Any]) -> Any:
    """Run one operation on capture ``rec`` and note it: ``compute()`` does it (again on every
    replay) over the NumPy buffers of the fake arrays ``srcs``, ``wrap`` makes its result fake
    arrays. The buffers it reads or writes are saved first; the arrays it made (owning memory,
    not a source) are the buffers a replay copies its results into."""
    if name in DATA_SHAPED:
        unsupported(rec, f"{name} (a result shaped by the data)")
    operands = [s._a for s in srcs if hasattr(s, "_a")]
    rec.touch(operands)
    with np.errstate(all="ignore"):
        out = wrap(compute(), tuple(srcs))

    def fresh(x: Any) -> bool:
        return hasattr(x, "_a") and x._owner is None and not any(x is s for s in srcs)

    rec.add(name, compute, [(p, x._a) for p, x in _paths(out, fresh)], operands)
    return out


def replay(steps: list[Step]) -> None:
    with np.errstate(all="ignore"):
        for compute, targets, _ in steps:
            r = compute()
            for path, target in targets:
                value = r
                for i in path:
                    value = value[i]
                np.copyto(target, value, casting="unsafe")


class Graph:
    """``cupy.cuda.Graph``: ``launch(stream=None)`` runs the recorded work again (recorded
    itself when launched into a capturing stream, as a child graph); ``upload`` does nothing."""

    def __init__(self, steps: list[Step], names: list[str]) -> None:
        self._steps = steps
        self.names = names  # NOTE: the fake's own: what was recorded, for tests and debug dumps

    def launch(self, stream: Any = None) -> None:
        target = CURRENT[0] if stream is None else stream
        rec = target._capture
        if rec is not None:
            operands = [a for step in self._steps for a in step[2]] + \
                [t for step in self._steps for _, t in step[1]]
            rec.touch(operands)
            rec.add("graph", lambda: replay(self._steps), [], operands)
        replay(self._steps)

    def upload(self, stream: Any = None) -> None:
        return None
