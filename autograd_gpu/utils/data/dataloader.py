"""``DataLoader``: iterate over a dataset in (shuffled) batches, as ``torch.utils.data``."""

from __future__ import annotations

import multiprocessing
import os
import warnings
from typing import Any, Callable, Iterable

from ...random import Generator
from ._iter import _BaseDataLoaderIter, _SingleProcessDataLoaderIter
from ._multiprocess import _MultiProcessingDataLoaderIter
from ._worker import get_worker_info
from .collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info"]

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


class _InfiniteConstantSampler(Sampler):
    """``None`` forever: the sampler of an ``IterableDataset`` (its fetcher ignores indices)."""

    def __iter__(self) -> Any:
        while True:
            yield None


class DataLoader:
    """Batches of samples from ``dataset``, re-iterable once per epoch.

    For a map-style dataset, a sampler orders the indices (``SequentialSampler``, or
    ``RandomSampler(generator=generator)`` when ``shuffle``), a ``BatchSampler`` groups them,
    and ``collate_fn`` (``default_collate``) stacks each group's samples. An
    ``IterableDataset`` is read in stream order and cut into batches. ``batch_size=None``
    turns batching off: each sample goes through ``default_convert`` alone.

    With ``num_workers > 0`` batches are loaded by that many worker processes (forked where
    the platform allows, else spawned; ``multiprocessing_context`` chooses), and returned in
    sampler order. Each pass draws ``base_seed`` from ``generator``; worker ``i`` seeds
    ``random``, the default generator (``manual_seed``) with ``base_seed + i`` and NumPy's
    global generator from both, as PyTorch does; ``get_worker_info()`` describes the worker
    there (None in the main process). Errors in a worker are raised again in the main process
    with the worker's traceback. Batches come back as NumPy arrays and become tensors in the
    main process.

    ``len(loader)`` is the number of batches: ``ceil(n / batch_size)``, or
    ``n // batch_size`` with ``drop_last`` (for an ``IterableDataset``, an estimate from
    ``len(dataset)``).

    Args:
        dataset: a map-style ``Dataset`` (anything with ``__getitem__`` and ``__len__``) or an
            ``IterableDataset``.
        batch_size: samples per batch, or None for no automatic batching.
        shuffle: a new random order every epoch (map-style datasets only).
        sampler: an iterable of indices (excludes ``shuffle``).
        batch_sampler: an iterable of index lists (excludes ``batch_size``, ``shuffle``,
            ``sampler`` and ``drop_last``).
        num_workers: worker processes (0: load in the main process).
        collate_fn: turns a list of samples into a batch.
        pin_memory: accepted; pinned host memory is not used (warns without CUDA).
        drop_last: drop the last, incomplete batch.
        timeout: seconds to wait for a worker's batch (0: forever).
        worker_init_fn: called with the worker id in each worker, after seeding.
        multiprocessing_context: a start method name or a ``multiprocessing`` context.
        generator: the random stream for ``shuffle`` and the workers' base seed.
        prefetch_factor: batches each worker loads ahead (default 2 with workers).
        persistent_workers: keep the workers (and their dataset copies) between epochs.
        in_order: return batches in sampler order (False: as they arrive).

    Example:
        >>> loader = DataLoader(TensorDataset(arange(5)), batch_size=2)
        >>> [b[0].tolist() for b in loader], len(loader)
        ([[0, 1], [2, 3], [4]], 3)
    """

    _initialized = False

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Iterable[Any] | None = None,
                 batch_sampler: Iterable[list[Any]] | None = None, num_workers: int = 0,
                 collate_fn: Callable[[Any], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Generator | None = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._dataset_kind_iterable = isinstance(dataset, IterableDataset)
        if self._dataset_kind_iterable:
            given: list[tuple[str, Any]] = [("shuffle", shuffle)] if shuffle not in (None, False) else []
            given += [(name, value) for name, value in (("sampler", sampler),
                                                        ("batch_sampler", batch_sampler))
                      if value is not None]
            for name, value in given[:1]:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._initialized = True
        self._IterableDataset_len_called: int | None = None
        self._iterator: _BaseDataLoaderIter | None = None
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self) -> Any:
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context: Any) -> None:
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got num_workers="
                                 f"{self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            if not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context object "
                                "or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        self._multiprocessing_context = context

    def __setattr__(self, name: str, value: Any) -> None:
        if self._initialized and name in _FROZEN:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> _BaseDataLoaderIter:
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._dataset_kind_iterable:
            # NOTE: an estimate (PyTorch's): each worker may end with its own short batch.
            n = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self._index_sampler)

    def check_worker_number_rationality(self) -> None:
        """Warn (as PyTorch) when more workers are asked for than this process has CPUs."""
        if not self.num_workers:
            return
        cpuset = hasattr(os, "sched_getaffinity")
        cpus = len(os.sched_getaffinity(0)) if cpuset else os.cpu_count()
        if cpus is not None and self.num_workers <= cpus:
            return
        if cpus is None:
            suggestion = ("DataLoader is not able to compute a suggested max number of worker in "
                          "current system.")
        else:
            suggestion = (f"Our suggested max number of worker in current system is {cpus}"
                          f"{'' if cpuset else ' (`cpuset` is not taken into account)'}, which is "
                          "smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. "
                      f"{suggestion} Please be aware that excessive worker creation might get "
                      "DataLoader running slow or even freeze, lower the worker number to avoid "
                      "potential slowness/freeze if necessary.", stacklevel=2)
