"""Fetchers: turn one index (or one list of indices) from the loader's sampler into a batch,
the same way in the main process and in a worker."""

from __future__ import annotations

from typing import Any, Callable, Iterator

from .collate import default_collate
from .dataset import TensorDataset


class MapFetcher:
    """Batches of a map-style dataset: ``collate_fn([dataset[i] for i in indices])`` (through
    ``dataset.__getitems__`` when it has one), or ``collate_fn(dataset[index])`` without
    automatic batching."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any]
                 ) -> None:
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.direct = auto_collation and _gathers_directly(dataset, collate_fn)

    def fetch(self, index: Any) -> Any:
        ds = self.dataset
        if not self.auto_collation:
            return self.collate_fn(ds[index])
        if self.direct:
            return [t[_index(index, t)] for t in ds.tensors]
        batched = getattr(ds, "__getitems__", None)
        samples = batched(index) if callable(batched) else [ds[i] for i in index]
        return self.collate_fn(samples)


class IterableFetcher:
    """Batches of an ``IterableDataset``: the next ``len(index)`` items of its stream (the
    index list itself is a placeholder), or the next item without automatic batching. Raises
    StopIteration once the stream is exhausted, or with ``drop_last`` on a short batch."""

    def __init__(self, dataset: Any, auto_collation: bool, collate_fn: Callable[[Any], Any],
                 drop_last: bool) -> None:
        self.stream: Iterator[Any] = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, index: Any) -> Any:
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.stream))
        batch: list[Any] = []
        for _ in index:
            try:
                batch.append(next(self.stream))
            except StopIteration:
                self.ended = True
                break
        if not batch or (self.drop_last and len(batch) < len(index)):
            raise StopIteration
        return self.collate_fn(batch)


def make_fetcher(iterable: bool, dataset: Any, auto_collation: bool,
                 collate_fn: Callable[[Any], Any], drop_last: bool) -> Any:
    if iterable:
        return IterableFetcher(dataset, auto_collation, collate_fn, drop_last)
    return MapFetcher(dataset, auto_collation, collate_fn)


def _gathers_directly(ds: Any, collate_fn: Any) -> bool:
    """True when a batch can be one gather per tensor: a TensorDataset of tensors that need no
    gradient, collated by ``default_collate``. ``[t[indices] for t in tensors]`` then equals
    stacking the per-sample tuples (same values, dtype and list container) at a fraction of the
    per-sample indexing cost."""
    return (type(ds) is TensorDataset and collate_fn is default_collate
            and not any(t.requires_grad for t in ds.tensors))


def _index(indices: list[int], like: Any) -> Any:
    """The sampler's indices (Python ints) as an int64 index tensor on ``like``'s device.

    NOTE: a list of ints is made by the backend directly: ``tensor()``'s general conversion
    costs five times more, per batch."""
    from ...creation import tensor
    from ...dtypes import int64
    from ...tensor import Tensor

    dev = like._device
    if type(indices) is list and indices and all(type(i) is int for i in indices):
        return Tensor._make(dev.backend.asarray(indices, "int64"), dev)
    return tensor(indices, dtype=int64, device=dev)
