"""utils.data against torch.utils.data: batches, collation, samplers, splits and errors."""

from __future__ import annotations

import collections
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests._compare import first_sentence

Point = collections.namedtuple("Point", "x y")


def norm(value: Any) -> Any:
    """A comparable form of a (nested) batch: tensors by dtype, shape and values; containers
    by their exact type name."""
    if isinstance(value, (torch.Tensor, ag.Tensor)):
        return ("tensor", str(value.dtype), tuple(value.shape), value.tolist())
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.tolist())
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (type(value).__name__, [norm(v) for v in value])
    if isinstance(value, dict):
        return (type(value).__name__, [(k, norm(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [norm(v) for v in value])
    return value


def outcome(fn: Callable[[], Any]) -> Any:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return norm(fn())
    except Exception as e:  # noqa: BLE001  (comparing failures too)
        return ("raises", type(e).__name__, first_sentence(str(e)))


def same(snippet: Callable[[Any], Any]) -> None:
    """``snippet(lib)`` agrees for lib = torch and lib = autograd_gpu (values or errors)."""
    want, got = outcome(lambda: snippet(torch)), outcome(lambda: snippet(ag))
    assert got == want, f"ours {got!r}\n  != torch {want!r}"


def tensors(lib: Any, n: int = 7) -> Any:
    """A TensorDataset of ``n`` rows: float features, int labels, bool flags."""
    x = lib.arange(n * 3, dtype=lib.float32).reshape(n, 3) / 4
    y = lib.arange(n) % 3
    flags = lib.arange(n) % 2 == 0
    return lib.utils.data.TensorDataset(x, y, flags)


# ---- DataLoader ------------------------------------------------------------------------------

@pytest.mark.parametrize("batch_size", [1, 2, 3, 7, 10])
@pytest.mark.parametrize("drop_last", [False, True])
def test_loader_batches_match_torch(batch_size: int, drop_last: bool) -> None:
    def run(lib: Any) -> Any:
        loader = lib.utils.data.DataLoader(tensors(lib), batch_size=batch_size,
                                           drop_last=drop_last)
        return len(loader), list(loader), list(loader)

    same(run)


def test_loader_len_by_hand() -> None:
    ds = tensors(ag, 10)
    assert len(ag.utils.data.DataLoader(ds, batch_size=3)) == 4
    assert len(ag.utils.data.DataLoader(ds, batch_size=3, drop_last=True)) == 3
    assert len(ag.utils.data.DataLoader(ds, batch_size=5, drop_last=True)) == 2
    assert len(ag.utils.data.DataLoader(ds, batch_size=None)) == 10


def test_loader_without_batching_and_custom_samplers() -> None:
    same(lambda lib: list(lib.utils.data.DataLoader(tensors(lib, 4), batch_size=None)))
    same(lambda lib: list(lib.utils.data.DataLoader([np.arange(2), np.arange(2) + 5],
                                                    batch_size=None)))
    same(lambda lib: list(lib.utils.data.DataLoader(tensors(lib, 5), sampler=[4, 0, 2],
                                                    batch_size=2)))
    same(lambda lib: list(lib.utils.data.DataLoader(tensors(lib, 5),
                                                    batch_sampler=[[3, 1], [0], [2, 4, 1]])))
    same(lambda lib: len(lib.utils.data.DataLoader(tensors(lib, 5),
                                                   batch_sampler=[[3, 1], [0], [2, 4, 1]])))
    same(lambda lib: list(lib.utils.data.DataLoader(range(5), batch_size=2,
                                                    collate_fn=lambda b: sum(b))))


def test_loader_over_plain_python_samples() -> None:
    data = [{"x": [i, i + 0.5], "label": f"s{i}", "p": Point(i, (i, 2.0 * i))} for i in range(5)]
    same(lambda lib: list(lib.utils.data.DataLoader(data, batch_size=2)))


def test_loader_num_workers_gives_the_same_batches() -> None:
    ds = tensors(ag, 6)
    one = [norm(b) for b in ag.utils.data.DataLoader(ds, batch_size=4)]
    many = [norm(b) for b in ag.utils.data.DataLoader(ds, batch_size=4, num_workers=2)]
    assert many == one
    assert ag.utils.data.get_worker_info() is None


def test_loader_iterable_dataset_matches_torch() -> None:
    def run(lib: Any, **kw: Any) -> Any:
        class Stream(lib.utils.data.IterableDataset):
            def __iter__(self) -> Any:
                return iter([lib.tensor([i, -i]) for i in range(5)])

            def __len__(self) -> int:
                return 5

        loader = lib.utils.data.DataLoader(Stream(), **kw)
        return len(loader), list(loader)

    same(lambda lib: run(lib, batch_size=2))
    same(lambda lib: run(lib, batch_size=2, drop_last=True))
    same(lambda lib: run(lib, batch_size=None))
    same(lambda lib: run(lib, batch_size=2, shuffle=True))


@pytest.mark.parametrize("kwargs", [
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_sampler": [[0]], "shuffle": True},
    {"sampler": [0, 1], "shuffle": True},
    {"num_workers": -1},
    {"batch_size": None, "drop_last": True},
    {"timeout": -1},
    {"prefetch_factor": 2},
    {"persistent_workers": True},
    {"batch_size": 0},
    {"batch_size": 2, "drop_last": 1},
])
def test_loader_errors_match_torch(kwargs: dict[str, Any]) -> None:
    same(lambda lib: lib.utils.data.DataLoader(range(4), **kwargs))


def test_shuffle_with_seeded_generator_is_reproducible() -> None:
    ds = ag.utils.data.TensorDataset(ag.arange(20))

    def epochs(seed: int) -> list[list[int]]:
        loader = ag.utils.data.DataLoader(ds, batch_size=20, shuffle=True,
                                          generator=ag.Generator().manual_seed(seed))
        return [next(iter(loader))[0].tolist() for _ in range(3)]

    first = epochs(7)
    assert first == epochs(7)
    assert first != epochs(8)
    assert all(sorted(order) == list(range(20)) for order in first)
    assert first[0] != first[1] != first[2]


def test_shuffle_without_generator_follows_manual_seed() -> None:
    ds = list(range(30))

    def order() -> list[int]:
        return ag.utils.data.DataLoader(ds, batch_size=30, shuffle=True).__iter__().__next__() \
            .tolist()

    ag.manual_seed(3)
    a, b = order(), order()
    ag.manual_seed(3)
    assert order() == a
    assert a != b and sorted(a) == ds


# ---- samplers ---------------------------------------------------------------------------------

def test_batch_sampler_matches_torch() -> None:
    for n, bs, drop in [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (0, 2, False)]:
        same(lambda lib, n=n, bs=bs, drop=drop: (
            list(lib.utils.data.BatchSampler(range(n), bs, drop)),
            len(lib.utils.data.BatchSampler(range(n), bs, drop))))


@pytest.mark.parametrize("make", [
    lambda lib: lib.utils.data.BatchSampler(range(3), 0, False),
    lambda lib: lib.utils.data.BatchSampler(range(3), True, False),
    lambda lib: lib.utils.data.BatchSampler(range(3), 2, 1),
    lambda lib: lib.utils.data.RandomSampler(range(3), replacement=1),
    lambda lib: lib.utils.data.RandomSampler(range(3), num_samples=0),
    lambda lib: lib.utils.data.RandomSampler([]),
    lambda lib: list(lib.utils.data.SequentialSampler(range(4))),
])
def test_sampler_errors_and_values_match_torch(make: Callable[[Any], Any]) -> None:
    same(make)


def test_random_sampler_lengths_and_coverage() -> None:
    g = ag.Generator().manual_seed(0)
    s = ag.utils.data.RandomSampler(range(5), num_samples=12, generator=g)
    drawn = list(s)
    assert len(s) == 12 and len(drawn) == 12
    assert sorted(drawn[:5]) == sorted(drawn[5:10]) == list(range(5))
    r = ag.utils.data.RandomSampler(range(4), replacement=True, num_samples=70, generator=g)
    drawn = list(r)
    assert len(drawn) == 70 and set(drawn) == {0, 1, 2, 3}
    sub = ag.utils.data.SubsetRandomSampler([10, 20, 30], generator=g)
    assert sorted(sub) == [10, 20, 30] and len(sub) == 3


# ---- datasets and random_split ----------------------------------------------------------------

def test_datasets_match_torch() -> None:
    same(lambda lib: lib.utils.data.TensorDataset(lib.zeros(3), lib.zeros(4)))
    same(lambda lib: (len(tensors(lib)), tensors(lib)[2], tensors(lib)[1:3]))
    same(lambda lib: lib.utils.data.Subset(tensors(lib), [4, 0])[1])
    same(lambda lib: lib.utils.data.Subset(tensors(lib), [4, 0, 6])[[2, 0]])
    same(lambda lib: [lib.utils.data.ConcatDataset([range(3), range(10, 12)])[i]
                      for i in (0, 2, 3, 4, -1, -5)])
    same(lambda lib: (tensors(lib, 2) + tensors(lib, 3))[3])
    same(lambda lib: lib.utils.data.ConcatDataset([range(3)])[-4])
    same(lambda lib: lib.utils.data.ConcatDataset([]))


@pytest.mark.parametrize("n,lengths", [
    (10, [3, 7]), (10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]), (3, [0.1, 0.9]), (7, [1.0]),
    (10, [3, 3]), (10, [0.5, 0.6]), (10, [1.5, -0.5]), (5, [0, 5]),
])
def test_random_split_sizes_match_torch(n: int, lengths: list[Any]) -> None:
    same(lambda lib: [len(s) for s in lib.utils.data.random_split(range(n), lengths)])


def test_random_split_is_a_disjoint_cover_and_reproducible() -> None:
    ds = ag.utils.data.TensorDataset(ag.arange(100))
    parts = ag.utils.data.random_split(ds, [0.5, 0.3, 0.2], generator=ag.Generator().manual_seed(4))
    seen = [int(p[i][0]) for p in parts for i in range(len(p))]
    assert [len(p) for p in parts] == [50, 30, 20]
    assert sorted(seen) == list(range(100))
    again = ag.utils.data.random_split(ds, [50, 30, 20], generator=ag.Generator().manual_seed(4))
    assert [a.indices for a in again] == [p.indices for p in parts]
    assert seen != list(range(100))


def test_random_split_warns_about_empty_split() -> None:
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        ag.utils.data.random_split(range(1), [0.6, 0.4])


# ---- collation ------------------------------------------------------------------------------

@pytest.mark.parametrize("make_batch", [
    lambda lib: [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
    lambda lib: [lib.tensor(1), lib.tensor(2)],
    lambda lib: [1, 2, 3],
    lambda lib: [1.5, 2],
    lambda lib: [True, False],
    lambda lib: ["a", "b"],
    lambda lib: [b"a", b"b"],
    lambda lib: [np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32)],
    lambda lib: [np.float32(1.5), np.float32(2.5)],
    lambda lib: [np.float64(1.5), np.float64(2.5)],
    lambda lib: [np.int16(4), np.int16(5)],
    lambda lib: [(1, 2.0), (3, 4.0)],
    lambda lib: [[1, 2.0], [3, 4.0]],
    lambda lib: [Point(1, lib.ones(2)), Point(2, lib.zeros(2))],
    lambda lib: [{"a": 1, "b": (lib.ones(1), 2.5)}, {"a": 2, "b": (lib.ones(1), 3.5)}],
    lambda lib: [collections.OrderedDict(z=[1, {"q": np.ones(2)}]),
                 collections.OrderedDict(z=[2, {"q": np.zeros(2)}])],
    lambda lib: [[1, 2.0], [3]],
    lambda lib: [lib.zeros(2), lib.zeros(3)],
    lambda lib: [object()],
    lambda lib: [np.array(["a"]), np.array(["b"])],
    lambda lib: [{"a": 1}, {"b": 2}],
    lambda lib: [],
])
def test_default_collate_matches_torch(make_batch: Callable[[Any], Any]) -> None:
    same(lambda lib: lib.utils.data.default_collate(make_batch(lib)))


@pytest.mark.parametrize("make_sample", [
    lambda lib: np.arange(3),
    lambda lib: np.float32(2.0),
    lambda lib: (np.ones(2), 3, "s"),
    lambda lib: {"a": [np.zeros(1), 1.0], "b": Point(np.ones(1), 2)},
    lambda lib: np.array(["x"]),
    lambda lib: lib.ones(2),
])
def test_default_convert_matches_torch(make_sample: Callable[[Any], Any]) -> None:
    same(lambda lib: lib.utils.data.default_convert(make_sample(lib)))
