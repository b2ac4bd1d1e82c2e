"""utils.data, continued: DataLoader worker processes (order, seeding, get_worker_info,
errors, shutdown), the remaining datasets and samplers, and more collation, against
torch.utils.data where the behaviour is deterministic."""

from __future__ import annotations

import collections
import gc
import multiprocessing
import os
import pickle
import random
import re
import time
import warnings
from typing import Any

import numpy as np
import pytest
import torch
from torch.utils.data._utils.worker import _generate_state

import autograd_gpu as ag
from autograd_gpu.utils.data import _worker
from tests.utils.test_data import Point, norm, outcome, same, tensors

D = ag.utils.data


def _gone(pid: int) -> bool:
    """True once the process ``pid`` is reaped (a zombie would still answer)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _wait_gone(pids: list[int]) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        gc.collect()
        if all(_gone(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


class Pids(D.Dataset):
    """Item i is ``(i, pid of the process that read it)``."""

    def __getitem__(self, i: int) -> Any:
        return i, os.getpid()

    def __len__(self) -> int:
        return 6


def shards(lib: Any, n: int = 7) -> Any:
    """An IterableDataset of ``n`` items that each worker reads a strided share of."""
    class Sharded(lib.utils.data.IterableDataset):
        def __iter__(self) -> Any:
            info = lib.utils.data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter([{"v": lib.tensor([i, 10 * i]), "name": f"s{i}"}
                         for i in range(start, n, step)])

        def __len__(self) -> int:
            return n

    return Sharded()


# ---- worker processes against torch's -------------------------------------------------------

@pytest.mark.parametrize("kw", [
    {"batch_size": 2}, {"batch_size": 4, "drop_last": True}, {"batch_size": None},
])
def test_workers_map_style_match_torch(kw: dict[str, Any]) -> None:
    def run(lib: Any) -> Any:
        loader = lib.utils.data.DataLoader(tensors(lib, 7), num_workers=2, **kw)
        return len(loader), list(loader)

    same(run)


def test_workers_plain_python_samples_cross_as_arrays() -> None:
    data = [{"x": np.arange(3, dtype=np.int16) + i, "f": 0.5 * i, "s": f"s{i}",
             "p": Point(np.float32(i), [i, True])} for i in range(5)]
    same(lambda lib: list(lib.utils.data.DataLoader(data, batch_size=2, num_workers=2)))


@pytest.mark.parametrize("kw", [
    {"batch_size": 2}, {"batch_size": 2, "drop_last": True}, {"batch_size": None},
])
def test_workers_iterable_dataset_sharded_match_torch(kw: dict[str, Any]) -> None:
    same(lambda lib: list(lib.utils.data.DataLoader(shards(lib), num_workers=2, **kw)))


def test_workers_equal_main_process_and_persistent_epochs() -> None:
    ds = tensors(ag, 9)
    want = [norm(b) for b in D.DataLoader(ds, batch_size=2)]
    loader = D.DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True,
                          prefetch_factor=1)
    assert [norm(b) for b in loader] == want
    assert [norm(b) for b in loader] == want
    stream = D.DataLoader(shards(ag, 5), batch_size=2, num_workers=2, persistent_workers=True)
    first = [norm(b) for b in stream]
    assert [norm(b) for b in stream] == first and len(first) == 3


def test_workers_in_order_false_gives_every_batch() -> None:
    loader = D.DataLoader(range(10), batch_size=3, num_workers=2, in_order=False)
    assert sorted(b.tolist() for b in loader) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]


def test_workers_load_in_other_processes() -> None:
    ds = D.StackDataset(Pids(), tensors(ag, 6))
    loader = D.DataLoader(ds, batch_size=2, num_workers=2, multiprocessing_context="fork")
    batches = list(loader)
    assert [b[0][0].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5]]
    pids = [int(b[0][1][0]) for b in batches]
    assert os.getpid() not in pids and len(set(pids)) == 2
    assert _wait_gone(pids)
    want = [norm(b) for b in D.DataLoader(tensors(ag, 6), batch_size=2)]
    assert [norm(b[1]) for b in batches] == want


def test_spawned_worker_gets_the_tensors() -> None:
    if "spawn" not in multiprocessing.get_all_start_methods():
        pytest.skip("no spawn start method")
    # NOTE: only library classes in the dataset: a test class would make the spawned worker
    # import this module, and torch with it (seconds)
    loader = D.DataLoader(tensors(ag, 5), batch_size=2, num_workers=1,
                          multiprocessing_context="spawn")
    it = iter(loader)
    pids = [w.pid for w in it._workers]  # type: ignore[attr-defined]
    want = [norm(b) for b in D.DataLoader(tensors(ag, 5), batch_size=2)]
    assert [norm(b) for b in it] == want
    assert _wait_gone(pids)


# ---- seeding and get_worker_info --------------------------------------------------------------

def _init(worker_id: int) -> None:
    os.environ["AG_TEST_WORKER_INIT"] = str(worker_id)


class Seeds(D.Dataset):
    """Item i: what worker reading it knows about itself and its random streams."""

    def __getitem__(self, i: int) -> Any:
        info = D.get_worker_info()
        assert info is not None
        return {"i": i, "id": info.id, "n": info.num_workers, "seed": info.seed,
                "same_dataset": info.dataset is self or type(info.dataset) is Seeds,
                "init": int(os.environ.get("AG_TEST_WORKER_INIT", "-1")),
                "py": random.random(), "np": float(np.random.rand()), "ag": ag.rand(()).item()}

    def __len__(self) -> int:
        return 4


def test_worker_seeds_info_and_init_fn() -> None:
    assert D.get_worker_info() is None
    base = int(ag.empty((), dtype=ag.int64).random_(generator=ag.Generator().manual_seed(5)))
    loader = D.DataLoader(Seeds(), batch_size=None, num_workers=2, worker_init_fn=_init,
                          generator=ag.Generator().manual_seed(5))
    items = list(loader)
    assert [s["i"] for s in items] == [0, 1, 2, 3]
    for s in items[:2]:  # each worker's first draw: streams seeded as PyTorch seeds them
        w = s["id"]
        assert s["i"] % 2 == w and s["n"] == 2 and s["same_dataset"] and s["init"] == w
        assert s["seed"] == base + w
        assert s["py"] == random.Random(base + w).random()
        assert s["np"] == np.random.RandomState(_generate_state(base, w)).rand()
        assert s["ag"] == ag.rand((), generator=ag.Generator().manual_seed(base + w)).item()
    assert D.get_worker_info() is None
    assert _worker.numpy_seed(base, 1) == _generate_state(base, 1)


def test_same_seed_same_order_and_values_with_0_or_2_workers() -> None:
    ds = D.TensorDataset(ag.arange(12), ag.arange(12) * 2.0)

    def run(workers: int) -> Any:
        ag.manual_seed(11)
        loader = D.DataLoader(ds, batch_size=5, shuffle=True, num_workers=workers)
        return [[(b[0].tolist(), b[1].tolist()) for b in loader] for _ in range(2)]

    zero = run(0)
    assert run(2) == zero and zero[0] != zero[1]
    assert sorted(v for b in zero[0] for v in b[0]) == list(range(12))
    assert all(2.0 * i == x for b in zero[1] for i, x in zip(*b))
    ag.manual_seed(11)
    first = [s["ag"] for s in D.DataLoader(Seeds(), batch_size=None, num_workers=2)]
    ag.manual_seed(11)
    assert [s["ag"] for s in D.DataLoader(Seeds(), batch_size=None, num_workers=2)] == first


# ---- errors in workers, timeouts, shutdown ----------------------------------------------------

class Bad(D.Dataset):
    def __init__(self, exc: BaseException, at: int = 3) -> None:
        self.exc, self.at = exc, at

    def __getitem__(self, i: int) -> Any:
        if i == self.at:
            raise self.exc
        return i

    def __len__(self) -> int:
        return 6


class TwoArgs(Exception):
    def __init__(self, a: Any, b: Any) -> None:
        super().__init__(a, b)


def _reraised(exc: BaseException) -> tuple[str, str]:
    """Ours: the error of item 3 (worker 1 of 2) re-raised by the loader."""
    try:
        list(D.DataLoader(Bad(exc), batch_size=None, num_workers=2))
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    raise AssertionError("no error")


def _torch_reraised(exc: BaseException) -> tuple[str, str]:
    """torch's wording for the same error: its worker wraps it in ExceptionWrapper.
    NOTE: not through torch's own workers, whose shutdown after an error waits 10 s."""
    try:
        raise exc
    except BaseException:  # noqa: BLE001
        wrapper = torch._utils.ExceptionWrapper(where="in DataLoader worker process 1")
    try:
        wrapper.reraise()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    raise AssertionError("no error")


@pytest.mark.parametrize("exc", [ValueError("bad item"), KeyError("k"), TwoArgs(1, 2)])
def test_worker_errors_are_reraised_as_torch(exc: BaseException) -> None:
    want, got = _torch_reraised(exc), _reraised(exc)
    assert got[0] == want[0]
    assert got[1].split("\n")[:2] == want[1].split("\n")[:2]
    assert "Caught" in got[1] and "worker process 1" in got[1] and "Traceback" in got[1]
    assert "raise self.exc" in got[1]


def test_worker_init_fn_error_and_worker_death() -> None:
    def boom(worker_id: int) -> None:
        raise ValueError(f"init {worker_id}")

    with pytest.raises(ValueError, match=r"Caught ValueError in DataLoader worker process 0\."):
        list(D.DataLoader(range(4), num_workers=1, worker_init_fn=boom))

    class Dies(D.Dataset):
        def __getitem__(self, i: int) -> Any:
            os._exit(3)

        def __len__(self) -> int:
            return 2

    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "):
        list(D.DataLoader(Dies(), num_workers=1))


def test_worker_timeout() -> None:
    class Slow(D.Dataset):
        def __getitem__(self, i: int) -> Any:
            time.sleep(0.6)
            return i

        def __len__(self) -> int:
            return 2

    it = iter(D.DataLoader(Slow(), num_workers=1, timeout=0.2))
    pids = [w.pid for w in it._workers]  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.2 seconds$"):
        next(it)
    del it
    assert _wait_gone(pids)


def test_workers_shut_down_cleanly() -> None:
    loader = D.DataLoader(Pids(), batch_size=2, num_workers=2)
    pids = {int(b[1][0]) for b in loader}
    assert _wait_gone(list(pids))  # after a whole epoch
    it = iter(loader)
    next(it)
    pids = [w.pid for w in it._workers]  # type: ignore[attr-defined]
    del it  # left in the middle of an epoch
    assert _wait_gone(pids)
    keep = D.DataLoader(Pids(), batch_size=2, num_workers=2, persistent_workers=True)
    one = {int(b[1][0]) for b in keep}
    two = {int(b[1][0]) for b in keep}
    assert one == two and not any(_gone(p) for p in one)
    del keep
    assert _wait_gone(list(one))


def test_iterable_len_warning_with_workers() -> None:
    class Whole(D.IterableDataset):
        def __iter__(self) -> Any:
            return iter(range(3))

        def __len__(self) -> int:
            return 3

    loader = D.DataLoader(Whole(), batch_size=None, num_workers=2)
    assert len(loader) == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = sorted(int(x) for x in loader)
    assert got == [0, 0, 1, 1, 2, 2] and len(caught) == 3
    assert re.search(r"was reported to be 3\(when accessing len\(dataloader\)\), but 4 samples "
                     r"have been fetched\. For multiprocessing", str(caught[0].message))


# ---- loader arguments -------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {"num_workers": 1, "prefetch_factor": -1},
    {"multiprocessing_context": "fork"},
    {"num_workers": 1, "multiprocessing_context": "nope"},
    {"num_workers": 1, "multiprocessing_context": 3},
    # NOTE: torch's iterator then fails in __del__ too (an unraisable error, ignored here)
    pytest.param({"num_workers": 1, "prefetch_factor": 0, "_iter": True}, marks=pytest.mark.
                 filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")),
    {"timeout": 1, "_iter": True},
    {"batch_size": 2, "shuffle": True, "_setattr": "batch_size"},
    {"batch_size": 2, "_setattr": "num_workers"},
])
def test_loader_argument_errors_match_torch(kwargs: dict[str, Any]) -> None:
    kw = dict(kwargs)
    iterate, attr = kw.pop("_iter", False), kw.pop("_setattr", None)

    def run(lib: Any) -> Any:
        loader = lib.utils.data.DataLoader(range(4), **kw)
        if attr is not None:
            setattr(loader, attr, 1)
            return getattr(loader, attr)
        return list(loader) if iterate else loader.prefetch_factor

    same(run)


def test_loader_iterable_dataset_option_errors_match_torch() -> None:
    same(lambda lib: lib.utils.data.DataLoader(shards(lib), sampler=[0]))
    same(lambda lib: lib.utils.data.DataLoader(shards(lib), batch_sampler=[[0]]))
    same(lambda lib: lib.utils.data.DataLoader(shards(lib), shuffle=0).batch_size)


def test_loader_warnings() -> None:
    too_many = len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") \
        else (os.cpu_count() or 1) + 1
    with pytest.warns(UserWarning, match=f"This DataLoader will create {too_many} worker"):
        D.DataLoader(range(3), num_workers=too_many)
    if not ag.cuda.is_available():
        with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no "
                                             "accelerator is found"):
            assert [int(b) for b in D.DataLoader(range(3), pin_memory=True)] == [0, 1, 2]


def test_no_batching_with_default_convert_through_workers() -> None:
    data = [(np.arange(2) + i, f"s{i}") for i in range(3)]
    same(lambda lib: list(lib.utils.data.DataLoader(data, batch_size=None, num_workers=2)))


def test_batch_wire_format_keeps_dtype_device_and_leaf_grad() -> None:
    t = ag.arange(6, dtype=ag.float32).reshape(2, 3)[:, 1:]
    back = _worker.loads(_worker.dumps({"a": [t, t.bool()], "b": ag.ones(2, requires_grad=True)}))
    assert norm(back) == norm({"a": [t, t.bool()], "b": ag.ones(2)})
    assert back["b"].requires_grad and back["b"].is_leaf
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        _worker.dumps(ag.ones(2, requires_grad=True) * 2)
    with pytest.raises(TypeError):
        pickle.dumps(t)


# ---- datasets ---------------------------------------------------------------------------------

def stream(lib: Any, items: list[int]) -> Any:
    class Stream(lib.utils.data.IterableDataset):
        def __iter__(self) -> Any:
            return iter(items)

        def __len__(self) -> int:
            return len(items)

    return Stream()


def test_chain_and_stack_datasets_match_torch() -> None:
    same(lambda lib: list(lib.utils.data.ChainDataset([stream(lib, [1, 2]), stream(lib, [3])])))
    same(lambda lib: len(lib.utils.data.ChainDataset([stream(lib, [1, 2]), stream(lib, [3])])))
    same(lambda lib: (lambda c: (type(c).__name__, list(c)))(stream(lib, [1]) + stream(lib, [2])))
    same(lambda lib: list(lib.utils.data.ChainDataset([stream(lib, [1]), range(3)])))
    same(lambda lib: len(lib.utils.data.ChainDataset([range(3)])))
    same(lambda lib: list(lib.utils.data.DataLoader(
        lib.utils.data.ChainDataset([stream(lib, [1, 2]), stream(lib, [3])]), batch_size=2)))
    same(lambda lib: lib.utils.data.StackDataset(range(3), "abc")[1])
    same(lambda lib: lib.utils.data.StackDataset(x=range(3), y=tensors(lib, 3))[2])
    same(lambda lib: len(lib.utils.data.StackDataset(x=range(3), y="abc")))
    same(lambda lib: lib.utils.data.StackDataset(range(3), "ab"))
    same(lambda lib: lib.utils.data.StackDataset(range(3), y="abc"))
    same(lambda lib: lib.utils.data.StackDataset())
    for kw in ({}, {"num_workers": 2}):
        same(lambda lib, kw=kw: list(lib.utils.data.DataLoader(
            lib.utils.data.StackDataset(tensors(lib, 5), lib.utils.data.Subset(range(9), [8, 6, 4,
                                                                                     2, 0])),
            batch_size=2, **kw)))
        same(lambda lib, kw=kw: list(lib.utils.data.DataLoader(
            lib.utils.data.StackDataset(a=range(3), b=[0.5, 1.5, 2.5]), batch_size=2, **kw)))


def test_subset_override_check_and_concat_alias() -> None:
    def run(lib: Any) -> Any:
        class Odd(lib.utils.data.Subset):
            def __getitem__(self, i: int) -> Any:
                return 0

        return Odd(range(3), [0])

    same(run)
    with pytest.warns(FutureWarning, match="`cummulative_sizes` attribute is renamed"):
        assert D.ConcatDataset([range(2), range(3)]).cummulative_sizes == [2, 5]


@pytest.mark.parametrize("lengths", [[0.1] * 10, [1 / 3] * 3, [0.25, 0.75], [0.7, 0.2, 0.1]])
def test_random_split_fraction_rounding_matches_torch(lengths: list[float]) -> None:
    for n in (7, 10, 31):
        same(lambda lib, n=n: [len(s) for s in lib.utils.data.random_split(range(n), lengths)])


# ---- samplers ---------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda lib: lib.utils.data.WeightedRandomSampler([1.0, 2.0], 0),
    lambda lib: lib.utils.data.WeightedRandomSampler([1.0, 2.0], True),
    lambda lib: lib.utils.data.WeightedRandomSampler([1.0, 2.0], 2.0),
    lambda lib: lib.utils.data.WeightedRandomSampler([1.0, 2.0], 2, replacement=1),
    lambda lib: lib.utils.data.WeightedRandomSampler([[1.0, 2.0]], 2),
    lambda lib: list(lib.utils.data.WeightedRandomSampler([0.0, 3.0, 0.0], 4)),
    lambda lib: sorted(lib.utils.data.WeightedRandomSampler([1, 3, 2], 3, replacement=False)),
    lambda lib: list(lib.utils.data.WeightedRandomSampler([0.0, 1.0], 2, replacement=False)),
    lambda lib: len(lib.utils.data.WeightedRandomSampler([1.0, 2.0], 5)),
    lambda lib: lib.utils.data.WeightedRandomSampler([1.0, 2.0], 5).weights,
    lambda lib: lib.utils.data.RandomSampler(range(3), num_samples=True).num_samples,
    lambda lib: len(lib.utils.data.RandomSampler(range(3), replacement=True, num_samples=40)),
    lambda lib: list(lib.utils.data.BatchSampler(iter(range(5)), 2, False)),
])
def test_more_samplers_match_torch(make: Any) -> None:
    same(make)


def test_seeded_sampler_orders_are_reproducible() -> None:
    def orders(seed: int) -> list[list[int]]:
        g = ag.Generator().manual_seed(seed)
        samplers = [D.RandomSampler(range(9), generator=g),
                    D.RandomSampler(range(9), replacement=True, num_samples=40, generator=g),
                    D.SubsetRandomSampler([5, 7, 9, 11], generator=g),
                    D.WeightedRandomSampler([0.1, 0.5, 0.4, 0.0], 30, generator=g),
                    D.WeightedRandomSampler([0.1, 0.5, 0.4], 3, replacement=False, generator=g)]
        return [list(s) for s in samplers for _ in range(2)]

    a = orders(3)
    assert a == orders(3) and a != orders(4)
    assert a[0] != a[1] and sorted(a[0]) == list(range(9))
    assert len(a[2]) == 40 and set(a[2]) <= set(range(9))
    assert sorted(a[4]) == [5, 7, 9, 11]
    assert len(a[6]) == 30 and 3 not in a[6] and sorted(a[8]) == [0, 1, 2]
    ag.manual_seed(2)
    first = list(D.WeightedRandomSampler([1.0, 1.0, 1.0], 12))
    ag.manual_seed(2)
    assert list(D.WeightedRandomSampler([1.0, 1.0, 1.0], 12)) == first


# ---- collation --------------------------------------------------------------------------------

@pytest.mark.parametrize("make_batch", [
    lambda lib: [np.array(1.5), np.array(2.5)],
    lambda lib: [np.bool_(True), np.bool_(False)],
    lambda lib: [Point(np.int64(1), "a"), Point(np.int64(2), "b")],
    lambda lib: [{"a": 1}, {"a": 2, "b": 3}],
    lambda lib: [[["x", 1]], [["y", 2]]],
    lambda lib: [(np.zeros((2, 1), np.float32), {"k": [1.0]})] * 3,
    lambda lib: [None, None],
    lambda lib: [1 + 2j, 3j],
    lambda lib: [{1, 2}, {3, 4}],
    lambda lib: [np.array([b"a"]), np.array([b"b"])],
    lambda lib: [np.array([object()], dtype=object)],
    lambda lib: [collections.defaultdict(int, a=1), collections.defaultdict(int, a=2)],
    lambda lib: [lib.ones(2, dtype=lib.float16), lib.zeros(2, dtype=lib.float16)],
])
def test_more_default_collate_matches_torch(make_batch: Any) -> None:
    same(lambda lib: lib.utils.data.default_collate(make_batch(lib)))


@pytest.mark.parametrize("make_sample", [
    lambda lib: [np.arange(2), np.float64(1.0), 3, None],
    lambda lib: Point(np.arange(2), "s"),
    lambda lib: collections.OrderedDict(a=np.zeros(1)),
    lambda lib: np.array([b"x"]),
    lambda lib: 2.5,
])
def test_more_default_convert_matches_torch(make_sample: Any) -> None:
    same(lambda lib: lib.utils.data.default_convert(make_sample(lib)))


def test_collate_error_wording() -> None:
    got = outcome(lambda: D.default_collate([object()]))
    assert got == ("raises", "TypeError", "default_collate: batch must contain tensors, numpy "
                   "arrays, numbers, dicts or lists; found <class 'object'>")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert re.match(r"each element in list of batch should be of equal size",
                        outcome(lambda: D.default_collate([[1], [1, 2]]))[2])


# ---- devices ----------------------------------------------------------------------------------

def test_loader_with_device(device: str) -> None:
    """Tensors on ``device`` batch in the main process; with workers, a CPU dataset is loaded
    after the device has been used here (a forked worker never touches it) and the batches
    move to the device in the main process."""
    x = ag.arange(10.0).reshape(5, 2).to(device)
    got = [b[0] for b in D.DataLoader(D.TensorDataset(x), batch_size=2)]
    assert all(b.device == x.device for b in got)
    assert [b.tolist() for b in got] == [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9]]]
    ag.manual_seed(1)
    ag.rand(2, device=device)
    ds = D.TensorDataset(ag.arange(6), ag.arange(6) * 0.5)
    moved = [[t.to(device) for t in b] for b in D.DataLoader(ds, batch_size=4, num_workers=2)]
    assert [b[1].device == x.device for b in moved] == [True, True]
    assert [b[1].tolist() for b in moved] == [[0.0, 0.5, 1.0, 1.5], [2.0, 2.5]]
    back = _worker.loads(_worker.dumps([x]))[0]
    assert back.device == x.device and back.tolist() == x.tolist()
