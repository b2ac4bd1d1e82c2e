"""What a recording cannot replay: each cause gives one UserWarning naming it while the numbers
stay eager's (bit for bit), and raises under ``fullgraph=True``; data-dependent shapes, closures;
exceptions raised in a step."""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any, Callable

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu._compile import FullGraphError
from tests.compile._steps import (Setup, batches, classifier_step, compare,
                                  replays)

nn = ag.nn
BATCHES = batches(5, (16, 8), 4)


def _setup(post: Callable[..., Any], opt_name: str = "SGD") -> Callable[[], Setup]:
    """An MLP step whose result is ``post(loss, logits, x)``."""
    def make() -> Setup:
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
        opt = getattr(ag.optim, opt_name)(model.parameters(), lr=0.1)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            return post(loss, out, x)

        return Setup(step, [model], [opt])

    return make


def _print(loss: Any) -> Any:
    print(loss)
    return loss


READS = [
    ("item", lambda loss, out, x: loss.item(), r"Tensor\.item\(\) at .*reads a value back"),
    ("tolist", lambda loss, out, x: out.tolist(), r"Tensor\.tolist\(\) at "),
    ("bool", lambda loss, out, x: loss * 2 if loss > 1 else loss, r"bool\(tensor\) at "),
    ("float", lambda loss, out, x: float(loss), r"float\(tensor\) at "),
    ("int", lambda loss, out, x: int(out.argmax()), r"int\(tensor\) at "),
    ("print", lambda loss, out, x: _print(loss), r"str\(tensor\) \(print\) at "),
    ("f-string", lambda loss, out, x: f"{loss:.3f}", r"format\(tensor\) \(an f-string\) at "),
    ("numpy", lambda loss, out, x: out.detach().numpy().sum(), r"Tensor\.numpy\(\) at "),
    ("rng-state", lambda loss, out, x: (ag.get_rng_state(), loss)[1],
     r"Generator\.get_state\(\) in the step \(a generator's state read back to Python\)"),
]


@pytest.mark.parametrize("post, cause", [(p, c) for _, p, c in READS], ids=[n for n, _, _ in READS])
def test_value_read_back_breaks_once_and_stays_exact(post: Callable[..., Any], cause: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        warned, step = compare(_setup(post), BATCHES)
        assert len(warned) == 1 and re.search(r"runs eagerly: " + cause, warned[0]), warned
        ex = step.explain()
        assert ex.replaying == 0 and re.search(cause, ex.break_reasons[0])
        full = ag.compile(_setup(post)().step, fullgraph=True)
        with pytest.raises(FullGraphError, match=r"^compile\(fullgraph=True\): " + cause):
            full(ag.tensor(BATCHES[0][0]), ag.tensor(BATCHES[0][1]))
    assert issubclass(FullGraphError, RuntimeError)


DATA_SHAPED = [
    ("mask", lambda loss, out, x: out[out > 0].sum()),
    ("nonzero", lambda loss, out, x: (x > 1).nonzero()),
    ("masked_select", lambda loss, out, x: ag.masked_select(x, x > 1)),
    ("unique", lambda loss, out, x: ag.unique((x * 8).round())),
]


@pytest.mark.parametrize("post", [p for _, p in DATA_SHAPED], ids=[n for n, _ in DATA_SHAPED])
def test_data_dependent_shape_that_changes_breaks(post: Callable[..., Any]) -> None:
    warned, step = compare(_setup(post), BATCHES)
    assert len(warned) == 1 and re.fullmatch(
        re.escape(step._name()) + r" runs eagerly: a data-dependent shape in \S+ \(autograd_gpu/"
        r"\S+\.py:\d+; the step's line: \S+test_compile_breaks\.py:\d+\) changed between calls",
        warned[0]), warned
    full = ag.compile(_setup(post)().step, fullgraph=True)
    with pytest.raises(FullGraphError, match=r"data-dependent shape in .* changed between calls"):
        for x, y in BATCHES:
            full(ag.tensor(x), ag.tensor(y))


def test_data_dependent_shape_that_stays_replays() -> None:
    rng = np.random.default_rng(5)
    fixed = []
    for _ in range(6):  # NOTE: the same number of positive entries in every batch
        x = np.abs(rng.standard_normal((16, 8))).astype(np.float32)
        x[:, :3] *= -1
        fixed.append((rng.permuted(x, axis=1), rng.integers(0, 4, 16)))
    replays(_setup(lambda loss, out, x: loss + x[x > 0].sum() * 0), fixed)


@pytest.mark.parametrize("name", ["SGD", "LBFGS"])
def test_optimizer_step_with_a_closure_breaks(name: str) -> None:
    def make() -> Setup:
        model = nn.Linear(8, 4)
        opt = getattr(ag.optim, name)(model.parameters(), lr=0.1)

        def step(x: Any, y: Any) -> Any:
            def closure() -> Any:
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(x), y)
                loss.backward()
                return loss

            return opt.step(closure)

        return Setup(step, [model], [opt])

    warned, _ = compare(make, BATCHES)
    assert len(warned) == 1 and f"{name}.step() with arguments (a closure" in warned[0], warned
    with pytest.raises(FullGraphError, match=name + r"\.step\(\) with arguments"):
        ag.compile(make().step, fullgraph=True)(ag.tensor(BATCHES[0][0]),
                                               ag.tensor(BATCHES[0][1]))


# ---- data from outside the step ------------------------------------------------------------------

_DATA = np.random.default_rng(9).standard_normal((64, 8)).astype(np.float32)


def _outside(kind: str) -> Setup:
    model = nn.Linear(8, 4)
    opt = ag.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    calls = [0]

    def step(x: Any, y: Any) -> Any:
        calls[0] += 1
        if kind == "numpy-rng":
            x = x + ag.tensor(rng.standard_normal((16, 8)).astype(np.float32))
        else:
            i = calls[0] % 4 * 16
            x = ag.tensor(_DATA[i:i + 16]) if kind == "tensor" else ag.from_numpy(_DATA[i:i + 16])
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return Setup(step, [model], [opt])


OUTSIDE = [
    ("numpy-rng", r"an array filled where the recording could not see it \(a NumPy random "
                  r"Generator"),
    ("tensor", r"a tensor made from an array the recording did not make \(.*test_compile_breaks"
               r"\.py:\d+\): data from outside the step; pass it as an argument"),
    ("from_numpy", r"a tensor made from an array the recording did not make"),
]


@pytest.mark.parametrize("kind, cause", OUTSIDE, ids=[k for k, _ in OUTSIDE])
def test_data_from_outside_the_step_breaks(kind: str, cause: str) -> None:
    """A NumPy generator's draw, a slice of a NumPy array: a replay would keep the first."""
    warned, _ = compare(lambda: _outside(kind), BATCHES)
    assert len(warned) == 1 and re.search("runs eagerly: " + cause, warned[0]), warned


# ---- tensors kept past the call ------------------------------------------------------------------

def _keeping(kind: str) -> Setup:
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.1), nn.Linear(16, 4))
    opt = ag.optim.SGD(model.parameters(), lr=0.1)
    kept: dict[str, Any] = {}
    if kind == "forward-hook":
        model[1].register_forward_hook(lambda mod, inp, out: kept.update(features=out.detach()))
    elif kind == "gradient-hook":
        model[0].weight.register_hook(lambda g: kept.setdefault("grads", []).append(g))
    step = classifier_step(model, opt)
    probe = nn.Module()  # NOTE: out of the step's reach (its signature stays the same)

    def after(_: Any) -> None:  # NOTE: what the hooks kept, compared with eager's
        probe.kept_sum = float(kept["features"].sum()) if "features" in kept else 0.0
        probe.kept_count = len(kept.get("grads", ()))

    return Setup(step, [model, probe], [opt], after=after)


KEEPING = [
    ("forward-hook", "a tensor made in the step outlives it"),
    ("gradient-hook", "a tensor made in the step outlives it"),
]


@pytest.mark.parametrize("kind, cause", KEEPING, ids=[k for k, _ in KEEPING])
def test_tensors_kept_past_the_call_break(kind: str, cause: str) -> None:
    """A hook keeping its tensor would keep the recorded call's on replay (checkpoint's RNG
    stash replays: test_compile_breaks2)."""
    warned, _ = compare(lambda: _keeping(kind), BATCHES)
    assert len(warned) == 1 and re.search("runs eagerly: " + cause, warned[0]), warned


# ---- the modules' Python state -------------------------------------------------------------------

class _Counting(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.calls = 0
        self.seen: list[Any] = []

    def forward(self, x: Any) -> Any:
        self.calls += 1
        return self.fc(x)


def _python_state(change: str) -> Setup:
    model = _Counting()
    opt = ag.optim.SGD(model.parameters(), lr=0.1)

    def step(x: Any, y: Any) -> Any:
        if change == "train":
            model.train()  # NOTE: the same value every call: replayed as a store
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if change == "append":
            model.seen.append(loss.detach())
        if change == "replace":
            model.fc.bias = nn.Parameter(model.fc.bias.detach() * 0.5)
        if change != "counter":
            model.calls = 0
        return loss

    return Setup(step, [model], [opt], after=(lambda _: model.eval()) if change == "train"
                 else None)


PYTHON_STATE = [
    ("append", r"the step changes the container _Counting\.seen \(a replay runs no Python\)"),
    ("replace", r"the step replaces a parameter, buffer or submodule in Linear\._parameters"),
]


@pytest.mark.parametrize("change, cause", PYTHON_STATE, ids=[c for c, _ in PYTHON_STATE])
def test_python_state_a_replay_cannot_repeat_breaks(change: str, cause: str) -> None:
    warned, _ = compare(lambda: _python_state(change), BATCHES)
    assert len(warned) == 1 and re.search("runs eagerly: " + cause, warned[0]), warned


def test_python_state_set_to_the_same_value_replays() -> None:
    replays(lambda: _python_state("train"), BATCHES)


def test_a_counter_retraces_every_call_up_to_the_cache_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A module attribute the step counts up is part of the signature: each call records anew
    (its Python runs), then ``cache_size_limit`` makes the step eager, with one warning."""
    from autograd_gpu._compile import _api
    monkeypatch.setattr(_api.LIMITS, "signatures", 3)
    warned, step = compare(lambda: _python_state("counter"), BATCHES)
    assert len(warned) == 1 and "hit cache_size_limit (3)" in warned[0], warned
    assert step.explain().replaying == 0


_GLOBAL_SCALE = 1.0


def _changing_values() -> Setup:
    global _GLOBAL_SCALE
    _GLOBAL_SCALE = 1.0
    model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 4))
    opt = ag.optim.SGD(model.parameters(), lr=0.1)
    hyper = {"aux": 0.0}
    calls = [0]

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        out = model(x)
        loss = nn.functional.cross_entropy(out, y) * _GLOBAL_SCALE + hyper["aux"] * out.pow(2).mean()
        loss.backward()
        opt.step()
        return loss

    def after(_: Any) -> None:  # NOTE: Python values the recording keeps, changed between calls
        global _GLOBAL_SCALE
        calls[0] += 1
        if calls[0] == 5:
            model[1].p = 0.0
        if calls[0] == 6:
            hyper["aux"] = 0.5
        if calls[0] == 7:
            _GLOBAL_SCALE = 2.0

    return Setup(step, [model], [opt], after=after)


def test_python_values_changed_between_calls_retrace() -> None:
    """Dropout's p, a dict in the closure, a global: each change is a new signature."""
    global _GLOBAL_SCALE
    try:
        warned, step = compare(_changing_values, batches(9, (16, 8), 4, seed=8))
    finally:
        _GLOBAL_SCALE = 1.0
    assert not warned
    assert step.explain().signatures == 5, str(step.explain())


# ---- exceptions ---------------------------------------------------------------------------------

def _outcomes(make: Callable[[], Setup], data: list[tuple[Any, Any]],
              compiled: bool) -> tuple[list[Any], list[Any]]:
    """(each call's loss bytes or (exception type, first line), the parameters and gradients at
    the end)."""
    ag.manual_seed(0)
    s = make()
    step = ag.compile(s.step) if compiled else s.step
    out: list[Any] = []
    for x, y in data:
        try:
            out.append(step(ag.tensor(x), ag.tensor(y)).detach().numpy().tobytes())
        except Exception as e:  # noqa: BLE001 - compared with eager's
            out.append((type(e), str(e).split("\n")[0]))
    return out, [(p.detach().numpy().tobytes(), None if p.grad is None else
                  p.grad.numpy().tobytes()) for p in s.modules[0].parameters()]


@pytest.mark.parametrize("at", [0, 1, 2, 3, 4])
def test_a_shape_error_raises_as_eager(at: int) -> None:
    """A wrong feature size on call ``at`` (record, check or replay state of the signature)."""
    data = list(BATCHES)
    data.insert(at, (np.ones((16, 7), np.float32), BATCHES[0][1]))
    make = _setup(lambda loss, out, x: loss)
    eager = _outcomes(make, data, False)
    compiled = _outcomes(make, data, True)
    assert isinstance(eager[0][at], tuple)
    assert eager == compiled


@pytest.mark.parametrize("at", [1, 2, 3])
def test_a_value_error_raises_as_eager(at: int) -> None:
    """A target out of range on call ``at`` (same signature: the check reads back a bool)."""
    data = list(BATCHES)
    data.insert(at, (BATCHES[0][0], np.full(16, 7)))
    make = _setup(lambda loss, out, x: loss)
    assert _outcomes(make, data, False) == _outcomes(make, data, True)


def test_data_dependent_shape_that_changes_while_replaying() -> None:
    stable = [(np.where(np.arange(8) < 4, 1.0, -1.0).astype(np.float32)[None].repeat(16, 0),
               BATCHES[0][1])] * 4
    changed = (np.ones((16, 8), np.float32), BATCHES[0][1])
    make = _setup(lambda loss, out, x: loss + x[x > 0].sum() * 0)
    assert _outcomes(make, stable + [changed], False) == _outcomes(make, stable + [changed], True)


def test_checks_that_fail_on_most_calls_warn_once() -> None:
    """A data-dependent shape checked before the replay changes anything: a failing check runs
    that call eagerly, silently; when it fails on most calls, one warning says so."""
    stable = [(np.where(np.arange(8) < 4, 1.0, -1.0).astype(np.float32)[None].repeat(16, 0),
               BATCHES[0][1])] * 3
    rng = np.random.default_rng(5)
    varying = [(rng.standard_normal((16, 8)).astype(np.float32), BATCHES[0][1])
               for _ in range(12)]
    make = _setup(lambda loss, out, x: loss + x[x > 0].sum() * 0)
    warned, _ = compare(make, stable + varying)
    assert len(warned) == 1 and "runs eagerly on most calls: a data-dependent shape" in \
        warned[0], warned
