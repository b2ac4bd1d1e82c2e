"""The ``DataLoader`` iterator with worker processes (``num_workers > 0``).

The main process draws indices from the sampler and hands them round-robin to the workers,
at most ``prefetch_factor * num_workers`` tasks ahead; each worker fetches and collates its
batch and sends it back pickled (``_worker.dumps``). Batches are returned in sampler order
(``in_order``), or as they arrive. An ``IterableDataset`` is read by every worker in full
(each worker has its own copy; ``get_worker_info`` lets it read only its share), and a worker
whose stream ends gets no more tasks.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import pickle
import queue
import sys
import warnings
from typing import Any

from . import _worker
from ._iter import _BaseDataLoaderIter
from ._worker import ExceptionWrapper, Resume, StreamEnd


def default_context() -> Any:
    """``fork`` where the platform has it, else ``spawn``.

    NOTE: macOS lists ``fork`` but forking a process that used system frameworks is unsafe
    there (Python's own default is ``spawn``), so macOS spawns.
    """
    methods = multiprocessing.get_all_start_methods()
    use_fork = "fork" in methods and sys.platform != "darwin"
    return multiprocessing.get_context("fork" if use_fork else "spawn")


_PICKLE_WARNING = (
    "Got pickle error when attempting to start a worker Process. This might be because the "
    "worker Process arguments are not picklable. Python 3.14+ changed the multiprocessing start "
    "method in non-Mac POSIX platforms to 'forkserver', which requires the worker Process "
    "arguments to be picklable. You can also try multiprocessing.set_start_method('fork').")


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Workers are started here and stopped at the end of the epoch (or kept for the next one
    with ``persistent_workers``), when the iterator is garbage-collected, or on an explicit
    ``_shutdown_workers()``."""

    def __init__(self, loader: Any) -> None:
        self._shutdown = True  # until the workers exist
        self._owner = os.getpid()
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        if self._prefetch_factor <= 0:
            raise AssertionError(
                "prefetch_factor must be greater than 0 for MultiProcessingDataLoaderIter")
        ctx = loader.multiprocessing_context or default_context()
        fork = ctx.get_start_method() == "fork"
        payload: Any = (self._dataset, self._collate_fn, loader.worker_init_fn)
        if not fork:
            # NOTE: spawned workers get the dataset pickled with its tensors as arrays (plain
            # pickling refuses tensors); forked ones inherit it.
            payload = _dumps_for_spawn(payload)
        self._results = ctx.Queue()
        self._done = ctx.Event()
        self._index_queues: list[Any] = []
        self._workers: list[Any] = []
        self._active = [True] * self._num_workers
        self._shutdown = False
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(target=_worker.worker_loop, daemon=True, args=(
                self._iterable, payload, not fork, index_queue, self._results, self._done,
                self._auto_collation, self._drop_last, self.base_seed, i, self._num_workers))
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    # ---- epochs -------------------------------------------------------------------------------
    def _reset(self, loader: Any, first_iter: bool = False) -> None:
        """Start an epoch: clear the bookkeeping, resume persistent workers, send the first
        ``prefetch_factor * num_workers`` tasks."""
        super()._reset(loader, first_iter)
        self._sent = 0  # task ids handed out
        self._received = 0  # the next task id to return (in order)
        self._tasks: dict[int, tuple[Any, ...]] = {}  # task id -> (worker,) or (worker, data)
        self._outstanding = 0
        self._active = [True] * self._num_workers
        self._per_worker = [0] * self._num_workers
        self._cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for q in self._index_queues:
                q.put(Resume())
            acks = self._num_workers
            while acks:
                # NOTE: results of the previous epoch's unfinished tasks are dropped here.
                if isinstance(self._get()[0], Resume):
                    acks -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._put_task()

    def _put_task(self) -> None:
        try:
            index = self.next_index()
        except StopIteration:
            return
        limit = self._prefetch_factor * self._num_workers
        for _ in range(self._num_workers):
            w = next(self._cycle)
            if self._active[w] and (self._in_order
                                    or self._per_worker[w] < limit // sum(self._active)):
                break
        else:
            return
        self._index_queues[w].put((self._sent, index))
        self._tasks[self._sent] = (w,)
        self._per_worker[w] += 1
        self._outstanding += 1
        self._sent += 1

    def _next_data(self) -> Any:
        while True:
            # skip tasks that will never be answered (sent to a worker whose stream ended)
            while self._received < self._sent:
                info = self._tasks.get(self._received)
                if info is not None and (len(info) == 2 or self._active[info[0]]):
                    break
                self._tasks.pop(self._received, None)
                self._received += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            info = self._tasks[self._received]
            if len(info) == 2:
                del self._tasks[self._received]
                self._received += 1
                return self._process(info[1], info[0])
            task, data = self._get()
            self._outstanding -= 1
            if isinstance(data, StreamEnd):
                if self._persistent:
                    self._active[data.worker_id] = False
                else:
                    self._retire(data.worker_id)
                self._put_task()
                continue
            if task != self._received and self._in_order:
                self._tasks[task] += (data,)
                continue
            w = self._tasks.pop(task)[0]
            if task == self._received:
                self._received += 1
            return self._process(data, w)

    def _process(self, data: Any, worker: int) -> Any:
        self._per_worker[worker] -= 1
        self._put_task()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return _worker.loads(data)

    # ---- receiving ------------------------------------------------------------------------
    def _get(self) -> Any:
        if self._timeout > 0:
            got, data = self._try_get(self._timeout)
            if not got:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
            return data
        while True:
            got, data = self._try_get(_worker.STATUS_INTERVAL)
            if got:
                return data

    def _try_get(self, timeout: float) -> tuple[bool, Any]:
        try:
            return True, self._results.get(timeout=timeout)
        except queue.Empty as e:
            dead = [w for i, w in enumerate(self._workers)
                    if self._active[i] and not w.is_alive()]
            for w in dead:
                self._retire(self._workers.index(w))
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") \
                    from e
            return False, None

    # ---- stopping -------------------------------------------------------------------------
    def _retire(self, worker: int) -> None:
        self._index_queues[worker].put(None)
        self._active[worker] = False

    def _shutdown_workers(self) -> None:
        """Tell every worker to stop, join them (terminating any that do not stop in time),
        and close the queues: no worker process is left running or unreaped."""
        if self._shutdown or os.getpid() != self._owner:
            # NOTE: a forked worker of another loader inherits this object; if it is collected
            # there, it must not stop the workers, which belong to the process that made it.
            return
        self._shutdown = True
        try:
            self._done.set()
            for i in range(len(self._workers)):
                if self._persistent or self._active[i]:
                    self._retire(i)
            for w in self._workers:
                w.join(timeout=_worker.STATUS_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._results.cancel_join_thread()
            self._results.close()
        finally:
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_worker.STATUS_INTERVAL)

    def __del__(self) -> None:
        if not sys.is_finalizing():
            self._shutdown_workers()


def _dumps_for_spawn(payload: Any) -> bytes:
    try:
        return _worker.dumps(payload)
    except (TypeError, AttributeError, pickle.PicklingError):
        warnings.warn(_PICKLE_WARNING, stacklevel=4)
        raise
