"""``DataLoader``: iterate over a dataset in (shuffled) batches, as ``torch.utils.data``."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from ...random import Generator
from .collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


def get_worker_info() -> None:
    """Information about the current loader worker; always None, because batches are loaded
    in the main process (see ``DataLoader``)."""
    return None


class DataLoader:
    """Batches of samples from ``dataset``, re-iterable once per epoch.

    For a map-style dataset, a sampler orders the indices (``SequentialSampler``, or
    ``RandomSampler(generator=generator)`` when ``shuffle``), a ``BatchSampler`` groups them,
    and ``collate_fn`` (``default_collate``) stacks each group's samples. An
    ``IterableDataset`` is read in stream order and cut into batches. ``batch_size=None``
    turns batching off: each sample goes through ``default_convert`` alone.

    ``len(loader)`` is the number of batches: ``ceil(n / batch_size)``, or
    ``n // batch_size`` with ``drop_last``.

    Args:
        dataset: a map-style ``Dataset`` (anything with ``__getitem__`` and ``__len__``) or an
            ``IterableDataset``.
        batch_size: samples per batch, or None for no automatic batching.
        shuffle: a new random order every epoch (map-style datasets only).
        sampler: an iterable of indices (excludes ``shuffle``).
        batch_sampler: an iterable of index lists (excludes ``batch_size``, ``shuffle``,
            ``sampler`` and ``drop_last``).
        num_workers: accepted for compatibility; samples are always loaded in the main
            process (NOTE: so ``worker_init_fn`` is not called and ``get_worker_info()`` is
            None; the batches are the ones ``num_workers=0`` gives).
        collate_fn: turns a list of samples into a batch.
        drop_last: drop the last, incomplete batch.
        generator: the random stream for ``shuffle`` (seeded: the same orders every run).

    Example:
        >>> loader = DataLoader(TensorDataset(arange(5)), batch_size=2)
        >>> [b[0].tolist() for b in loader], len(loader)
        ([[0, 1], [2, 3], [4]], 3)
    """

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
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value}")
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
        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.generator = generator
        self._auto_collation = batch_size is not None or batch_sampler is not None
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator[Any]:
        if self._iterable:
            return self._iter_stream()
        return self._iter_map()

    def _iter_map(self) -> Iterator[Any]:
        ds = self.dataset
        if not self._auto_collation:
            for idx in self.sampler:  # type: ignore[union-attr]
                yield self.collate_fn(ds[idx])
            return
        if _gathers_directly(ds, self.collate_fn):
            for indices in self.batch_sampler:  # type: ignore[union-attr]
                yield [t[_index(indices, t)] for t in ds.tensors]
            return
        batched = getattr(ds, "__getitems__", None)
        for indices in self.batch_sampler:  # type: ignore[union-attr]
            samples = batched(indices) if callable(batched) else [ds[i] for i in indices]
            yield self.collate_fn(samples)

    def _iter_stream(self) -> Iterator[Any]:
        if not self._auto_collation:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch: list[Any] = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        index_sampler = self.batch_sampler if self._auto_collation else self.sampler
        return len(index_sampler)  # type: ignore[arg-type]


def _gathers_directly(ds: Any, collate_fn: Any) -> bool:
    """True when a batch can be one gather per tensor: a TensorDataset of tensors that need no
    gradient, collated by ``default_collate``. ``[t[indices] for t in tensors]`` then equals
    stacking the per-sample tuples (same values, dtype and list container) at a fraction of the
    per-sample indexing cost."""
    return (type(ds) is TensorDataset and collate_fn is default_collate
            and not any(t.requires_grad for t in ds.tensors))


def _index(indices: list[int], like: Any) -> Any:
    from ...creation import tensor
    from ...dtypes import int64

    return tensor(indices, dtype=int64, device=like.device)
