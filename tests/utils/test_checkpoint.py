"""``utils.checkpoint.checkpoint``: gradients equal the plain run, only the inputs are saved,
the RNG replays, and errors and warnings match torch's."""

from __future__ import annotations


import warnings
from typing import Any

import numpy as np
import pytest
import torch
import torch.utils.checkpoint  # noqa: F401  (torch.utils.checkpoint as an attribute)

import autograd_gpu as ag
from tests.autograd import _util
from tests.autograd._util import both, same_error
from tests._gc import gc_paused

MODES = [False, True]  # use_reentrant


def mlp(T: Any, dev: str, p: float = 0.0) -> Any:
    T.manual_seed(0)
    layers = [T.nn.Linear(4, 8), T.nn.Tanh(), T.nn.Dropout(p), T.nn.Linear(8, 8), T.nn.ReLU(),
              T.nn.Linear(8, 3)]
    model = T.nn.Sequential(*layers).to(dev).double()
    w = np.linspace(-1.0, 1.0, sum(int(np.prod(q.shape)) for q in model.parameters()))
    with T.no_grad():  # the same weights in both libraries
        k = 0
        for q in model.parameters():
            n = int(np.prod(q.shape))
            q.copy_(T.tensor(w[k:k + n].reshape(tuple(q.shape)), dtype=T.float64))
            k += n
    return model


def inputs(T: Any, dev: str, requires_grad: bool = True) -> Any:
    x = np.linspace(-2.0, 2.0, 20).reshape(5, 4)
    return T.tensor(x, dtype=T.float64, device=dev, requires_grad=requires_grad)


def grads(model: Any, x: Any) -> list[Any]:
    return [x.grad] + [q.grad for q in model.parameters()]


@pytest.mark.parametrize("reentrant", MODES)
def test_mlp_grads_equal_plain_run_and_torch(device: str, reentrant: bool) -> None:
    def run(T: Any, dev: str) -> Any:
        model, x = mlp(T, dev), inputs(T, dev)
        first, rest = model[:3], model[3:]
        h = T.utils.checkpoint.checkpoint(first, x, use_reentrant=reentrant)
        out = T.utils.checkpoint.checkpoint(rest, h, use_reentrant=reentrant)
        out.square().sum().backward()
        return out, grads(model, x)

    ours = both(run, device)
    model, x = mlp(ag, device), inputs(ag, device)
    model(x).square().sum().backward()
    for a, b in zip(ours[1], grads(model, x)):
        np.testing.assert_array_equal(_util.to_np(a), _util.to_np(b))  # exactly


@pytest.mark.parametrize("reentrant", MODES)
def test_input_without_grad_parameters_still_get_grads(device: str, reentrant: bool) -> None:
    def run(T: Any, dev: str) -> Any:
        model, x = mlp(T, dev), inputs(T, dev, requires_grad=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # reentrant: "None of the inputs have requires_grad"
            out = T.utils.checkpoint.checkpoint(model, x, use_reentrant=reentrant)
        if reentrant:  # torch's reentrant checkpoint cuts the graph here
            return out.requires_grad
        out.sum().backward()
        return out.requires_grad, [q.grad for q in model.parameters()]

    both(run, device)


def count_saved(T: Any, fn: Any) -> tuple[int, int]:
    n = [0, 0]
    with T.autograd.graph.saved_tensors_hooks(lambda t: n.__setitem__(0, n[0] + 1) or t,
                                              lambda t: n.__setitem__(1, n[1] + 1) or t):
        out = fn()
    out.sum().backward()
    return n[0], n[1]


@pytest.mark.parametrize("reentrant", MODES)
def test_only_the_inputs_are_saved(device: str, reentrant: bool) -> None:
    def run(T: Any, dev: str) -> Any:
        model = mlp(T, dev)
        plain = count_saved(T, lambda: model(inputs(T, dev)))
        ckpt = count_saved(T, lambda: T.utils.checkpoint.checkpoint(
            model, inputs(T, dev), use_reentrant=reentrant))
        return plain, ckpt

    plain, ckpt = both(run, device)
    assert ckpt == (1, 1) and plain[0] > 1


@pytest.mark.parametrize("reentrant", MODES)
def test_dropout_mask_replays(device: str, reentrant: bool) -> None:
    """The recomputation draws the forward's mask, so the gradient matches the output."""
    x = ag.ones(200, dtype=ag.float64, device=device, requires_grad=True)
    y = ag.utils.checkpoint.checkpoint(lambda a: ag.nn.functional.dropout(a * 3.0, 0.5), x,
                                       use_reentrant=reentrant)
    y.sum().backward()
    kept = _util.to_np(y) != 0
    assert 0 < kept.sum() < 200
    np.testing.assert_array_equal(_util.to_np(x.grad), np.where(kept, 6.0, 0.0))


@pytest.mark.parametrize("reentrant", MODES)
def test_dropout_grads_equal_plain_run(device: str, reentrant: bool) -> None:
    """On CUDA too: reading the generator's state for the replay leaves its stream as it was."""
    def run(use_ckpt: bool) -> list[Any]:
        model, x = mlp(ag, device, p=0.5), inputs(ag, device)
        model.train()
        ag.manual_seed(7)
        if use_ckpt:
            out = ag.utils.checkpoint.checkpoint(model, x, use_reentrant=reentrant)
        else:
            out = model(x)
        out.sum().backward()
        return [out] + grads(model, x)

    for a, b in zip(run(True), run(False)):
        np.testing.assert_array_equal(_util.to_np(a), _util.to_np(b))


def test_without_preserve_rng_state_the_mask_changes() -> None:
    x = ag.ones(200, dtype=ag.float64, requires_grad=True)
    y = ag.utils.checkpoint.checkpoint(lambda a: ag.nn.functional.dropout(a, 0.5), x,
                                       use_reentrant=False, preserve_rng_state=False)
    y.sum().backward()
    assert not np.array_equal(_util.to_np(x.grad), np.where(_util.to_np(y) != 0, 2.0, 0.0))


def test_kwargs_non_tensor_args_and_tuple_outputs(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = _util.leaf(T, dev)

        def fn(a: Any, k: int, scale: float = 1.0) -> Any:
            return a * scale, (a * a).sin(), k

        y = T.utils.checkpoint.checkpoint(fn, x, 3, use_reentrant=False, scale=2.0)
        (y[0].sum() + y[1].sum()).backward()
        return y, x.grad

    both(run, device)


def test_nested_checkpoint_and_autograd_grad(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = _util.leaf(T, dev)
        ckpt = T.utils.checkpoint.checkpoint

        def inner(a: Any) -> Any:
            return (a * a).exp()

        def outer(a: Any) -> Any:
            return ckpt(inner, a.sin(), use_reentrant=False).tanh()

        y = ckpt(outer, x, use_reentrant=False)
        return T.autograd.grad(y.sum(), x)

    both(run, device)


def test_double_backward(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = _util.leaf(T, dev)
        y = T.utils.checkpoint.checkpoint(lambda a: (a * a * a).sin(), x, use_reentrant=False)
        (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = T.autograd.grad(g.sum(), x)
        return g, gg

    both(run, device)


def test_retain_graph_and_second_backward(device: str) -> None:
    def twice(T: Any, dev: str) -> Any:
        x = _util.leaf(T, dev)
        y = T.utils.checkpoint.checkpoint(lambda a: (a * a).exp(), x, use_reentrant=False)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return x.grad

    def freed(T: Any, dev: str) -> None:
        x = _util.leaf(T, dev)
        y = T.utils.checkpoint.checkpoint(lambda a: (a * a).exp(), x, use_reentrant=False)
        y.sum().backward()
        y.sum().backward()

    both(twice, device)
    same_error(freed, device)


# ---- errors and warnings ----------------------------------------------------------------------

def same_checkpoint_error(fn: Any, device: str) -> BaseException:
    """Like ``same_error``, for torch's own ``CheckpointError`` class: same class name."""
    theirs = _util.catch(lambda: fn(torch, "cpu"))
    ours = _util.catch(lambda: fn(ag, device))
    assert type(ours).__name__ == type(theirs).__name__ == "CheckpointError"
    assert _util.first_sentence(str(ours)) == _util.first_sentence(str(theirs))
    return ours


def test_use_reentrant_none_warns_like_torch() -> None:
    msgs = []
    for T in (torch, ag):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            T.utils.checkpoint.checkpoint(lambda a: a.sin(), x)
        msgs.append([str(w.message) for w in rec if "use_reentrant" in str(w.message)])
    assert msgs[0] == msgs[1] and len(msgs[1]) == 1


def test_reentrant_rejects_kwargs_and_context_fn(device: str) -> None:
    def kwargs(T: Any, dev: str) -> None:
        T.utils.checkpoint.checkpoint(lambda a: a, _util.leaf(T, dev), use_reentrant=True,
                                      scale=2.0)

    def context(T: Any, dev: str) -> None:
        T.utils.checkpoint.checkpoint(lambda a: a, _util.leaf(T, dev), use_reentrant=True,
                                      debug=True)

    assert isinstance(same_error(kwargs, device), ValueError)
    assert isinstance(same_error(context, device), ValueError)


def test_recompute_saving_less_is_an_error(device: str) -> None:
    def run(T: Any, dev: str) -> None:
        calls = [0]

        def fn(a: Any) -> Any:
            calls[0] += 1
            return a.sin().exp() if calls[0] == 1 else a.sin()

        y = T.utils.checkpoint.checkpoint(fn, _util.leaf(T, dev), use_reentrant=False)
        y.sum().backward()

    err = same_checkpoint_error(run, device)
    assert isinstance(err, RuntimeError)
    assert "Number of tensors saved during forward: 2" in str(err)


def test_recompute_with_other_shapes_is_an_error(device: str) -> None:
    def run(T: Any, dev: str) -> None:
        calls = [0]

        def fn(a: Any) -> Any:
            calls[0] += 1
            return (a if calls[0] == 1 else a[:1]).sin()

        y = T.utils.checkpoint.checkpoint(fn, _util.leaf(T, dev), use_reentrant=False)
        y.sum().backward()

    same_checkpoint_error(run, device)


def test_unknown_determinism_check(device: str) -> None:
    def run(T: Any, dev: str) -> None:
        T.utils.checkpoint.checkpoint(lambda a: a.sin(), _util.leaf(T, dev), use_reentrant=False,
                                      determinism_check="strict")

    same_error(run, device)


def test_context_fn_wraps_forward_and_recompute() -> None:
    import contextlib

    seen: list[str] = []

    @contextlib.contextmanager
    def tag(name: str) -> Any:
        seen.append(name)
        yield

    x = ag.tensor([1.0, 2.0], requires_grad=True)
    y = ag.utils.checkpoint.checkpoint(lambda a: a.exp(), x, use_reentrant=False,
                                       context_fn=lambda: (tag("fwd"), tag("re")))
    assert seen == ["fwd"]
    y.sum().backward()
    assert seen == ["fwd", "re"]


@pytest.mark.skipif(not hasattr(ag, "memory_allocated"), reason="memory tracker not built yet")
def test_checkpoint_keeps_only_the_output_bytes(device: str) -> None:
    """tanh saves its output and exp its output (y itself): checkpointed, only y is kept."""
    x = ag.randn(64, 32, device=device, requires_grad=True)
    w = ag.randn(32, 32, device=device, requires_grad=True)
    nbytes = 64 * 32 * 4

    def f(a: Any) -> Any:
        return (a @ w).tanh().exp()

    with gc_paused():
        base = ag.memory_allocated(device)
        y = f(x)
        assert ag.memory_allocated(device) - base == 2 * nbytes
        del y
        base = ag.memory_allocated(device)
        y = ag.utils.checkpoint.checkpoint(f, x, use_reentrant=False)
        assert ag.memory_allocated(device) - base == nbytes
    y.sum().backward()
    assert x.grad is not None


@pytest.mark.parametrize("segments", [1, 2, 3, 4])
@pytest.mark.parametrize("reentrant", MODES)
def test_checkpoint_sequential_equals_plain_run_and_torch(device: str, reentrant: bool,
                                                          segments: int) -> None:
    """Chunks of len // segments under checkpoint, the last (with the remainder) plain; a list of
    modules as a Sequential; dropout's masks replayed."""
    def run(T: Any, dev: str, as_list: bool = False) -> Any:
        model, x = mlp(T, dev, p=0.5), inputs(T, dev)
        T.manual_seed(3)
        fns = list(model) if as_list else model
        n = [0]
        with T.autograd.graph.saved_tensors_hooks(lambda t: n.__setitem__(0, n[0] + 1) or t,
                                                  lambda t: t):
            out = T.utils.checkpoint.checkpoint_sequential(fns, segments, x,
                                                           use_reentrant=reentrant)
        out.square().sum().backward()
        return out, grads(model, x), n[0]

    # NOTE: torch's CPU generator draws our CPU masks, not our CUDA ones: torch on the CPU only
    ours = both(run, device) if device == "cpu" else run(ag, device)
    assert _util.to_np(run(ag, device, as_list=True)[0]).tolist() == _util.to_np(ours[0]).tolist()
    model, x = mlp(ag, device, p=0.5), inputs(ag, device)
    ag.manual_seed(3)
    model(x).square().sum().backward()
    for a, b in zip(ours[1], grads(model, x)):
        np.testing.assert_array_equal(_util.to_np(a), _util.to_np(b))


def test_checkpoint_sequential_errors_and_warning_like_torch(device: str) -> None:
    def too_many(T: Any, dev: str) -> None:
        T.utils.checkpoint.checkpoint_sequential(mlp(T, dev), 7, inputs(T, dev),
                                                 use_reentrant=False)

    def unknown(T: Any, dev: str) -> None:
        T.utils.checkpoint.checkpoint_sequential(mlp(T, dev), 2, inputs(T, dev),
                                                 use_reentrant=False, scale=2.0)

    assert isinstance(same_error(too_many, device), ValueError)
    assert isinstance(same_error(unknown, device), ValueError)
    msgs = []
    for T in (torch, ag):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            T.utils.checkpoint.checkpoint_sequential(mlp(T, "cpu"), 2, inputs(T, "cpu"))
        msgs.append([str(w.message) for w in rec if "use_reentrant" in str(w.message)])
    assert msgs[0] == msgs[1] and len(msgs[1]) == 1
