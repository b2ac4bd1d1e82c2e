"""``autograd.graph.saved_tensors_hooks``, ``save_on_cpu``, ``disable_saved_tensors_hooks``:
hook calls (count, order, what they see), values and gradients against torch."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

import autograd_gpu as ag

from . import _util
from ._util import both, parity, same_error
from tests._gc import gc_paused


def logging_hooks(log: list[Any]) -> tuple[Any, Any]:
    def pack(t: Any) -> Any:
        fn = t.grad_fn.name() if t.grad_fn is not None else None
        log.append(("pack", tuple(t.shape), fn, t.requires_grad))
        return t

    def unpack(t: Any) -> Any:
        log.append(("unpack", tuple(t.shape)))
        return t

    return pack, unpack


@parity
def test_pack_and_unpack_calls_match_torch(T: Any, dev: str) -> Any:
    """Saved inputs and outputs, of ops with one and two saved tensors, a partly grad-free mul.

    NOTE: for a product of two different tensors torch packs ``other`` before ``self``, we pack
    in argument order; the next test compares such graphs as multisets.
    """
    x = _util.leaf(T, dev)
    c = T.tensor([[2.0, 1.0, 0.5], [1.0, -1.0, 3.0]], dtype=T.float64, device=dev)
    log: list[Any] = []
    with T.autograd.graph.saved_tensors_hooks(*logging_hooks(log)):
        a = x * c  # saves c only (x's gradient needs it)
        b = x * x
        e = (a + b).exp()  # saves its output
        s = (e.sin() + a.tanh()).sum()
    packs = list(log)
    s.backward()
    return packs, log[len(packs):], x.grad


@parity
def test_linear_and_matmul_call_counts_match_torch(T: Any, dev: str) -> Any:
    # NOTE: the order of a matmul's two packs differs from torch's (both are saved); counts agree.
    x = _util.leaf(T, dev)
    w = T.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]], dtype=T.float64, device=dev,
                 requires_grad=True)
    b = T.tensor([0.1, -0.2], dtype=T.float64, device=dev, requires_grad=True)
    log: list[Any] = []
    with T.autograd.graph.saved_tensors_hooks(*logging_hooks(log)):
        y = (x @ w).relu()
        z = T.nn.functional.linear(y, w, None) + b.sum()
        loss = z.tanh().mean()
    n_pack = len(log)
    loss.backward()
    return n_pack, len(log) - n_pack, sorted(str(e) for e in log), x.grad, w.grad, b.grad


@parity
def test_nested_hooks_innermost_wins(T: Any, dev: str) -> Any:
    x = _util.leaf(T, dev)
    seen: list[str] = []
    outer = T.autograd.graph.saved_tensors_hooks(lambda t: seen.append("outer") or t,
                                                 lambda t: seen.append("outer-un") or t)
    inner = T.autograd.graph.saved_tensors_hooks(lambda t: seen.append("inner") or t,
                                                 lambda t: seen.append("inner-un") or t)
    with outer:
        y = x.sin()
        with inner:
            y = y.exp()
        y = y.cos()
    z = y.tanh()  # after both: no hook
    z.sum().backward()
    return seen, x.grad


@parity
def test_hooks_transform_the_saved_value(T: Any, dev: str) -> Any:
    """pack may return anything; unpack rebuilds a tensor (here from a NumPy copy)."""
    x = _util.leaf(T, dev)

    def pack(t: Any) -> Any:
        return (t.device, t.detach().cpu().numpy().copy())

    def unpack(p: Any) -> Any:
        return T.tensor(p[1], device=p[0])

    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).exp().sin()
    y.sum().backward()
    return y, x.grad


@parity
def test_double_backward_through_hooked_tensors(T: Any, dev: str) -> Any:
    x = _util.leaf(T, dev)
    with T.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        y = (x * x * x).sin()
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
    (gg,) = T.autograd.grad(g.sum(), x)
    return g, gg


@parity
def test_custom_function_save_for_backward_is_hooked(T: Any, dev: str) -> Any:
    def forward(ctx: Any, a: Any, b: Any) -> Any:
        out = a * b
        ctx.save_for_backward(a, b, out)
        return out

    def backward(ctx: Any, grad: Any) -> Any:
        a, b, out = ctx.saved_tensors
        return grad * b + out * 0, grad * a

    Mul = _util.function_class(T, "MyMul", forward, backward)
    x = _util.leaf(T, dev)
    w = _util.leaf(T, dev, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    log: list[Any] = []
    with T.autograd.graph.saved_tensors_hooks(*logging_hooks(log)):
        y = Mul.apply(x, w)
    y.sum().backward()
    return log, x.grad, w.grad


@parity
def test_hooks_apply_when_saved_not_when_unpacked(T: Any, dev: str) -> Any:
    x = _util.leaf(T, dev)
    n = [0, 0]
    with T.autograd.graph.saved_tensors_hooks(lambda t: n.__setitem__(0, n[0] + 1) or t,
                                              lambda t: n.__setitem__(1, n[1] + 1) or t):
        y = x.exp()
    z = y.sin()
    with T.autograd.graph.saved_tensors_hooks(lambda t: 1 / 0, lambda t: 1 / 0):
        z.sum().backward()  # the backward saves nothing new; the exp's unpack hook runs
    return n, x.grad


def test_unpack_must_return_a_tensor(device: str) -> None:
    def run(T: Any, dev: str) -> None:
        x = _util.leaf(T, dev)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1):
            y = x.sin()
        y.sum().backward()

    same_error(run, device)


def test_unpack_of_wrong_shape_fails_in_backward(device: str) -> None:
    def run(T: Any, dev: str) -> None:
        x = T.ones(3, device=dev, requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: T.zeros(5, device=dev)):
            y = x.sin()
        y.sum().backward()

    same_error(run, device)  # neither library checks the shape: the backward formula fails


def test_disable_saved_tensors_hooks(device: str) -> None:
    def inside(T: Any, dev: str) -> None:
        with T.autograd.graph.disable_saved_tensors_hooks("no hooks in here"):
            with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    def around(T: Any, dev: str) -> None:
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with T.autograd.graph.disable_saved_tensors_hooks("hooks already on"):
                pass

    assert str(same_error(inside, device)) == "no hooks in here"
    assert str(same_error(around, device)) == "hooks already on"
    with ag.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # state restored
        pass


def test_hooks_are_thread_local() -> None:
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    calls: list[str] = []
    ready, done = threading.Event(), threading.Event()

    def other() -> None:
        ready.wait()
        (x * x).sum().backward()  # hooks of the main thread are not seen here
        done.set()

    th = threading.Thread(target=other)
    th.start()
    with ag.autograd.graph.saved_tensors_hooks(lambda t: calls.append("p") or t, lambda t: t):
        ready.set()
        done.wait()
    th.join()
    assert calls == []
    assert x.grad.tolist() == [2.0, 4.0]


def test_no_hooks_keeps_the_plain_saved_entries() -> None:
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    assert all(e[0] != 4 for e in y.grad_fn._saved)  # 4: a hooked entry
    with ag.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp()
    assert all(e[0] == 4 for e in y.grad_fn._saved)


# ---- save_on_cpu ----------------------------------------------------------------------------

def test_save_on_cpu_grads_equal_plain(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = _util.leaf(T, dev)
        w = T.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]], dtype=T.float64, device=dev,
                     requires_grad=True)
        with T.autograd.graph.save_on_cpu():
            loss = (x @ w).tanh().exp().sum()
        loss.backward()
        return loss, x.grad, w.grad

    both(run, device)


def test_save_on_cpu_keeps_saved_tensors_on_the_host(device: str) -> None:
    x = ag.tensor([1.0, -2.0, 3.0], device=device, requires_grad=True)
    hooks = ag.autograd.graph.save_on_cpu()
    y = x.exp()
    dev, packed = hooks.pack_hook(y)
    assert packed.device.type == "cpu" and packed.grad_fn is None
    assert str(dev) == str(x.device)
    back = hooks.unpack_hook((dev, packed))
    assert back.device == x.device
    np.testing.assert_array_equal(_util.to_np(back), _util.to_np(y))
    if device == "cpu":  # no copy on the CPU, as in PyTorch
        assert np.shares_memory(packed._data, y._data)
    # every saved tensor of the graph is packed on the host
    seen: list[str] = []

    def pack(t: Any) -> Any:
        d, p = hooks.pack_hook(t)
        seen.append(p.device.type)
        return d, p

    with ag.autograd.graph.saved_tensors_hooks(pack, hooks.unpack_hook):
        loss = (x * x).exp().sum()
    loss.backward()
    assert seen == ["cpu"] * 3
    np.testing.assert_allclose(_util.to_np(x.grad), _util.to_np(2 * x * (x * x).exp()))


def test_save_on_cpu_is_the_innermost_pair() -> None:
    x = ag.tensor([1.0, 2.0], requires_grad=True)
    with ag.autograd.graph.save_on_cpu():
        y = x.exp()
    kind, packed, unpack, _ = y.grad_fn._saved[0][1]
    assert isinstance(packed, tuple) and packed[1].grad_fn is None


def test_save_on_cpu_frees_device_memory(device: str) -> None:
    """tanh saves its output: on CUDA save_on_cpu keeps it on the host (only y stays on the
    device); on the CPU it is kept as it is."""
    x = ag.randn(64, 32, device=device, requires_grad=True)
    w = ag.randn(32, 32, device=device, requires_grad=True)
    nbytes = 64 * 32 * 4

    def f() -> Any:
        return (x @ w).tanh().exp()

    with gc_paused():
        base = ag.memory_allocated(device)
        y = f()
        assert ag.memory_allocated(device) - base == 2 * nbytes
        del y
        base = ag.memory_allocated(device)
        with ag.autograd.graph.save_on_cpu():
            y = f()
        assert ag.memory_allocated(device) - base == (2 if device == "cpu" else 1) * nbytes
    y.sum().backward()
    hooked = _util.to_np(x.grad).copy()
    x.grad = None
    f().sum().backward()
    np.testing.assert_array_equal(hooked, _util.to_np(x.grad))
