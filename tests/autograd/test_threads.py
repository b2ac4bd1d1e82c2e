"""Threads calling backward at once: no gradient is lost, as PyTorch promises.

Each test runs N threads x M backward calls into shared leaves and checks exact counts: the
gradients are integer-valued float64, so any lost update shows as a wrong number, not as
rounding. Threads switch every microsecond (``sys.setswitchinterval``) and the big leaf makes
NumPy release the GIL inside its add, so a missing lock loses updates in most repetitions.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import autograd_gpu as ag

N_THREADS, CALLS, REPEATS = 8, 30, 6
BIG = 20_000  # elements: NumPy drops the GIL inside an add this large


@pytest.fixture(autouse=True)
def _fast_switching() -> Iterator[None]:
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def run_threads(work: Callable[[int], None], n: int = N_THREADS) -> None:
    """``work(i)`` in ``n`` threads released together; re-raises the first error."""
    start = threading.Barrier(n)
    errors: list[BaseException] = []

    def body(i: int) -> None:
        start.wait()
        try:
            work(i)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def values(t: ag.Tensor) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def f64(device: str, n: int, value: float = 0.0) -> ag.Tensor:
    return ag.full((n,), value, dtype=ag.float64, device=device, requires_grad=True)


def repeated(test: Callable[[str], None]) -> Callable[[str], None]:
    """Run the test body ``REPEATS`` times: one run may miss a race by luck."""

    def run(device: str) -> None:
        for _ in range(REPEATS):
            test(device)

    run.__name__ = test.__name__
    return run


@repeated
def test_shared_leaf_gets_every_contribution(device: str) -> None:
    w = f64(device, BIG)

    def work(i: int) -> None:
        for _ in range(CALLS):
            (w * 1.0).sum().backward()

    run_threads(work)
    g = values(w.grad)
    assert g.min() == g.max() == N_THREADS * CALLS


@repeated
def test_several_leaves_each_get_every_contribution(device: str) -> None:
    # NOTE: a big and a small leaf per graph, shared by all threads, plus one leaf per thread:
    # the small one races in Python (first assignment of .grad), the big one inside NumPy.
    big, small = f64(device, BIG), f64(device, 3, 1.0)
    own = [f64(device, 5) for _ in range(N_THREADS)]

    def work(i: int) -> None:
        for _ in range(CALLS):
            (big * 2.0 + small.sum() + own[i].sum()).sum().backward()

    run_threads(work)
    n = N_THREADS * CALLS
    assert (values(big.grad) == 2 * n).all()
    assert (values(small.grad) == BIG * n).all()
    for t in own:
        assert (values(t.grad) == BIG * CALLS).all()


@repeated
def test_shared_graph_with_retained_non_leaf(device: str) -> None:
    # NOTE: beyond PyTorch, whose retain_grad hook is not thread-safe (2.13 can crash here):
    # backward through one shared graph (retain_graph=True) adds into the non-leaf's .grad too.
    w = f64(device, BIG, 1.0)
    y = (w * w).tanh() + w
    y.retain_grad()
    loss = (y * 1.0).sum()

    def work(i: int) -> None:
        for _ in range(CALLS):
            loss.backward(retain_graph=True)

    run_threads(work)
    n = N_THREADS * CALLS
    assert (values(y.grad) == n).all()
    expected = n * (1 + (1 - np.tanh(1.0) ** 2) * 2)
    np.testing.assert_allclose(values(w.grad), expected, rtol=1e-12)


def test_shared_graph_on_arrays_and_on_tensors_at_once(device: str) -> None:
    # NOTE: create_graph threads run a node's backward on Tensors while the others run the same
    # node on bare arrays: which way a node runs is per thread, never a flag on the shared node.
    w = f64(device, BIG, 0.5)
    loss = (w.tanh() * w.sigmoid()).sum()
    (want,) = ag.autograd.grad(loss, w, retain_graph=True)
    got: list[ag.Tensor] = []

    def work(i: int) -> None:
        for _ in range(CALLS):
            (g,) = ag.autograd.grad(loss, w, retain_graph=True, create_graph=i % 2 == 0)
            assert g.requires_grad == (i % 2 == 0)
            got.append(g)

    run_threads(work)
    assert len(got) == N_THREADS * CALLS
    for g in got:
        np.testing.assert_array_equal(values(g), values(want))


@repeated
def test_post_accumulate_grad_hook_sees_every_accumulation(device: str) -> None:
    w = f64(device, BIG)
    seen: list[float] = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append(float(t.grad[0])))

    def work(i: int) -> None:
        for _ in range(CALLS):
            (w * 1.0).sum().backward()

    run_threads(work)
    # NOTE: hooks run under the leaf's lock, as in PyTorch: each sees one more contribution.
    assert sorted(seen) == list(range(1, N_THREADS * CALLS + 1))
    assert (values(w.grad) == N_THREADS * CALLS).all()


def test_post_accumulate_grad_hook_may_run_backward_into_its_leaf(device: str) -> None:
    # NOTE: the leaf's lock is re-entrant, so a hook that accumulates again does not deadlock
    # (PyTorch runs this too and gives the same 3s).
    w = f64(device, 3)
    calls = []

    def hook(t: ag.Tensor) -> None:
        calls.append(1)
        if len(calls) == 1:
            with ag.enable_grad():
                (t * 2.0).sum().backward()

    w.register_post_accumulate_grad_hook(hook)
    (w * 1.0).sum().backward()
    assert len(calls) == 2
    assert (values(w.grad) == 3).all()


def test_accumulation_in_one_thread_is_unchanged(device: str) -> None:
    w = f64(device, 4)
    for _ in range(5):
        (w * 3.0).sum().backward()
    assert (values(w.grad) == 15).all()
