"""What runs inside a ``DataLoader`` worker process: ``get_worker_info``, the per-worker
seeding, the loop that turns index messages into batches, and the wire format of batches.

Batches cross the process boundary pickled, with every tensor reduced to a NumPy array (plus
dtype, device and ``requires_grad``); the main process rebuilds the tensors, so a worker never
creates a CUDA tensor for its results.
"""

from __future__ import annotations

import io
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

from ... import random as ag_random
from ...creation import as_tensor
from ...device import CPU
from ...tensor import Tensor
from ._fetch import make_fetcher

# NOTE: how long a worker waits on its index queue before checking that the main process is
# still alive, and how long the main process waits before checking its workers (PyTorch: 5 s;
# shorter here so that a dead worker is reported sooner).
STATUS_INTERVAL = 1.0


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """The current worker: ``id`` (0 to ``num_workers - 1``), ``num_workers``, ``seed`` (this
    worker's seed, ``base_seed + id``) and ``dataset`` (this process's copy of the dataset)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """The ``WorkerInfo`` of the current ``DataLoader`` worker process; None in the main
    process. An ``IterableDataset`` uses it to read only its share of the stream."""
    return _worker_info


@dataclass(frozen=True)
class StreamEnd:
    """A worker's answer once its copy of an ``IterableDataset`` is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class Resume:
    """Start a new epoch (persistent workers): the worker acknowledges and restarts its
    fetcher."""


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process and raised there with
    PyTorch's wording: ``Caught ValueError in DataLoader worker process 0.`` then
    ``Original Traceback (most recent call last): ...``."""

    def __init__(self, where: str) -> None:
        exc_type, exc, tb = sys.exc_info()
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where
        self.exc_type: Any = exc_type
        try:
            pickle.dumps(exc_type)
        except Exception:  # noqa: BLE001
            # NOTE: a class the main process cannot import (one defined in a function) is
            # raised there as a RuntimeError with the same message.
            self.exc_type = None
        self.type_name = exc_type.__name__ if exc_type is not None else "Exception"

    def reraise(self) -> None:
        msg = f"Caught {self.type_name} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is None:
            raise RuntimeError(msg)
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exc = self.exc_type(msg)
        except Exception:  # noqa: BLE001
            raise RuntimeError(msg) from None
        try:
            raise exc
        finally:
            exc = None  # NOTE: no frame -> traceback -> frame cycle keeps the iterator alive


class _KeyErrorMessage(str):
    """A message that ``KeyError`` prints as it is (KeyError shows the ``repr`` of its
    argument)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return self


# ---- the wire format --------------------------------------------------------------------------

class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            if obj.requires_grad and not obj.is_leaf:
                raise RuntimeError(
                    "Cowardly refusing to serialize non-leaf tensor which requires_grad, since "
                    "autograd does not support crossing process boundaries.  If you just want to "
                    "transfer the data, call detach() on the tensor before serializing (e.g., "
                    "putting it on the queue).")
            return _rebuild_tensor, (obj.detach().numpy(force=True), obj.dtype, obj.device,
                                     obj.requires_grad)
        return NotImplemented


def _rebuild_tensor(array: Any, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    out = as_tensor(array, dtype=dtype, device=device)
    return out.requires_grad_() if requires_grad else out


def dumps(obj: Any) -> bytes:
    """``obj`` pickled, tensors included (as NumPy arrays with their dtype and device)."""
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def loads(data: bytes) -> Any:
    """The object ``dumps`` pickled, its tensors rebuilt in this process."""
    return pickle.loads(data)


# ---- seeding ----------------------------------------------------------------------------------

def numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """The four 32-bit words that seed NumPy's global generator in worker ``worker_id``.

    PyTorch hashes ``[worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]`` with NumPy's
    ``SeedSequence`` mixing (pool of 4 words), so that NumPy's stream in a worker differs from
    the one ``seed = base_seed + worker_id`` gives ``random``: ``SeedSequence`` with that
    entropy and pool size computes the same words.
    """
    import numpy as np

    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]
    return np.random.SeedSequence(entropy, pool_size=4).generate_state(4).tolist()


def _seed_worker(base_seed: int, worker_id: int) -> int:
    import numpy as np

    seed = base_seed + worker_id
    random.seed(seed)
    # NOTE: only the CPU generator is seeded now; the other devices' default generators are
    # dropped and seeded from ``seed`` on first use, so that seeding never starts CUDA in a
    # forked worker (PyTorch queues its CUDA seeding the same way).
    ag_random._default.clear()
    ag_random.default_generator(CPU).manual_seed(seed)
    ag_random._last_seed[0] = seed
    np.random.seed(numpy_seed(base_seed, worker_id))
    return seed


# ---- the worker loop --------------------------------------------------------------------------

def worker_loop(iterable: bool, payload: Any, pickled: bool, index_queue: Any, data_queue: Any,
                done_event: Any, auto_collation: bool, drop_last: bool, base_seed: int,
                worker_id: int, num_workers: int) -> None:
    """Serve ``(task_id, index)`` messages from ``index_queue`` with ``(task_id, batch)`` on
    ``data_queue`` until ``None`` arrives or the main process dies.

    ``payload`` is ``(dataset, collate_fn, worker_init_fn)``, pickled by ``dumps`` when the
    process was spawned (so tensors in the dataset travel too). A batch is sent as
    ``dumps(batch)`` bytes; an exception as an ``ExceptionWrapper``; the end of an iterable
    dataset as ``StreamEnd``.
    """
    global _worker_info
    try:
        dataset, collate_fn, init_fn = loads(payload) if pickled else payload
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        init_error: ExceptionWrapper | None = None
        fetcher: Any = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001
            init_error = ExceptionWrapper(where)
        ended = False
        parent = os.getppid()
        while os.getppid() == parent:
            try:
                msg = index_queue.get(timeout=STATUS_INTERVAL)
            except queue.Empty:
                continue
            if msg is None:
                break
            if isinstance(msg, Resume):
                data_queue.put((msg, None))
                ended = False
                fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                continue
            if done_event.is_set() or ended:
                continue
            task, index = msg
            out: Any
            if init_error is not None:
                out, init_error = init_error, None
            else:
                try:
                    out = dumps(fetcher.fetch(index))
                except StopIteration:
                    if not iterable:
                        out = ExceptionWrapper(where)
                    else:
                        out, ended = StreamEnd(worker_id), True
                except Exception:  # noqa: BLE001
                    out = ExceptionWrapper(where)
            data_queue.put((task, out))
            del out, msg
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        # NOTE: do not wait at exit for the main process to read what is left in the pipe.
        data_queue.cancel_join_thread()
        data_queue.close()
