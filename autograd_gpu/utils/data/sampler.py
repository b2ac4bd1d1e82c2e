"""Samplers: the order in which a DataLoader reads a map-style dataset (``SequentialSampler``,
``RandomSampler``, ``SubsetRandomSampler``, ``WeightedRandomSampler``) and how it groups
indices (``BatchSampler``)."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Sequence

from ... import dtypes
from ...creation import as_tensor, empty
from ...functions import multinomial
from ...functions.sampling_inplace import random_
from ...random import Generator, randint, randperm


class Sampler:
    """Base class: subclasses define ``__iter__`` over dataset indices (and ``__len__``)."""

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices ``0, 1, ..., len(data_source) - 1`` in order."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _fresh_generator(generator: Generator | None) -> Generator:
    """``generator``, or (as PyTorch does) a new one seeded from the default CPU generator, so
    ``manual_seed`` makes the order reproducible and each pass draws a new order."""
    if generator is not None:
        return generator
    # NOTE: PyTorch's draw (``empty((), dtype=int64).random_()``), so a seed gives its orders
    seed = int(random_(empty((), dtype=dtypes.int64)).item())
    return Generator().manual_seed(seed)


class RandomSampler(Sampler):
    """Indices in random order: a fresh permutation each pass (``replacement=False``) or
    ``num_samples`` independent draws (``replacement=True``).

    Args:
        data_source: the sized dataset.
        replacement: draw with replacement.
        num_samples: how many indices a pass yields (default ``len(data_source)``); more than
            the length without replacement repeats whole permutations.
        generator: the random stream; None draws each pass's seed from the default generator.
    """

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: int | None = None,
                 generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        n = self.num_samples
        if not isinstance(n, int) or n <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={n}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        gen = _fresh_generator(self.generator)
        if self.replacement:
            # NOTE: drawn in chunks of 32, as PyTorch does, so long passes stay lazy.
            for start in range(0, self.num_samples, 32):
                size = min(32, self.num_samples - start)
                yield from randint(0, n, (size,), generator=gen).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=gen).tolist()
        yield from randperm(n, generator=gen).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a fresh random order each pass."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        order = randperm(len(self.indices), generator=self.generator).tolist()
        return iter([self.indices[i] for i in order])

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn from ``[0, len(weights))`` with probabilities
    proportional to ``weights`` (``multinomial``), with or without replacement.

    Args:
        weights: a 1-d sequence of non-negative weights (need not sum to 1).
        num_samples: how many indices a pass yields.
        replacement: draw with replacement (without: at most as many as non-zero weights).
        generator: the random stream (the default generator when None).

    Example:
        >>> list(WeightedRandomSampler([0.0, 1.0, 0.0], 3))
        [1, 1, 1]
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Generator | None = None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = as_tensor(weights, dtype=dtypes.float64)
        if w.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter
    unless ``drop_last``).

    Example:
        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
