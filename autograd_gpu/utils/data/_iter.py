"""``DataLoader`` iterators: the shared part (sampler, base seed, length checks) and the one
that loads in the main process (``num_workers=0``)."""

from __future__ import annotations

import warnings
from typing import Any

from ... import cuda, dtypes
from ...creation import empty
from ...functions.sampling_inplace import random_
from ._fetch import make_fetcher


class _BaseDataLoaderIter:
    """One pass over a ``DataLoader``.

    Every pass draws a 63-bit ``base_seed`` from the loader's ``generator`` (the default CPU
    generator when None), with or without workers, so the random streams a seed gives do not
    depend on ``num_workers``; worker ``i`` is seeded with ``base_seed + i``.
    """

    def __init__(self, loader: Any) -> None:
        self._dataset = loader.dataset
        self._iterable = loader._dataset_kind_iterable
        self._len_reported = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                          f"as the device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                          stacklevel=3)
        if loader.pin_memory and not cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then "
                          "device pinned memory won't be used.", stacklevel=3)
        # NOTE: with CUDA, pin_memory is accepted and changes nothing: batches are built in
        # pageable host memory and copied by ``.to("cuda")`` as usual.
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self.base_seed = int(random_(empty((), dtype=dtypes.int64),
                                     generator=loader.generator).item())
        self._num_yielded = 0

    def __iter__(self) -> _BaseDataLoaderIter:
        return self

    def _reset(self, loader: Any, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._len_reported = loader._IterableDataset_len_called

    def next_index(self) -> Any:
        return next(self._sampler_iter)

    def _next_data(self) -> Any:
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        self._num_yielded += 1
        if (self._iterable and self._len_reported is not None
                and self._num_yielded > self._len_reported):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._len_reported}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self) -> Any:
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    """Loads every batch in the main process."""

    def __init__(self, loader: Any) -> None:
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        self._fetcher = make_fetcher(self._iterable, self._dataset, self._auto_collation,
                                     self._collate_fn, self._drop_last)

    def _next_data(self) -> Any:
        index = self.next_index()
        return self._fetcher.fetch(index)
