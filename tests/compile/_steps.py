"""Shared by the compile tests: run one training setup eagerly and compiled from the same seeds,
and compare everything a step changes bit for bit."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import autograd_gpu as ag


@dataclass
class Setup:
    """A step and the state it changes; ``after`` runs after each call (outside the step)."""
    step: Callable[..., Any]
    modules: list[Any]
    optimizers: list[Any] = field(default_factory=list)
    schedulers: list[Any] = field(default_factory=list)
    after: Callable[[Any], None] | None = None


def _array(v: Any) -> Any:
    if isinstance(v, ag.Tensor):
        return v.detach().cpu().numpy().copy()
    if isinstance(v, np.ndarray):
        return v.copy()
    return v


def _flatten(obj: Any, name: str, out: list[tuple[str, Any]]) -> None:
    if isinstance(obj, (tuple, list)):
        for i, o in enumerate(obj):
            _flatten(o, f"{name}[{i}]", out)
    elif isinstance(obj, dict):
        for k, o in obj.items():
            _flatten(o, f"{name}[{k!r}]", out)
    else:
        out.append((name, _array(obj)))


def snapshot(result: Any, s: Setup) -> list[tuple[str, Any]]:
    """(name, value) of the result and of everything the step changes: parameters and buffers
    (state_dict: BatchNorm's running stats and num_batches_tracked), gradients, the modules'
    plain attributes (training flags, counters, list lengths), optimizer state (every entry,
    tensors and numbers) and hyperparameters, schedulers' last lrs."""
    items: list[tuple[str, Any]] = []
    _flatten(result, "result", items)
    for j, m in enumerate(s.modules):
        for k, v in m.state_dict().items():
            items.append((f"module {j} {k}", _array(v)))
        for k, p in m.named_parameters():
            items.append((f"module {j} {k}.grad", None if p.grad is None else _array(p.grad)))
        for name, sub in m.named_modules():
            for k, v in vars(sub).items():  # NOTE: Python state: training flags, counters, lists
                if type(v) in (bool, int, float, str):
                    items.append((f"module {j} {name}.{k}", v))
                elif type(v) is list:
                    items.append((f"module {j} len({name}.{k})", len(v)))
    for j, opt in enumerate(s.optimizers):
        for i, st in enumerate(opt.state.values()):
            for k, v in st.items():
                _flatten(v, f"optimizer {j} state {i} {k}", items)  # NOTE: LBFGS keeps lists
        for i, g in enumerate(opt.param_groups):
            for k, v in g.items():
                if k != "params":
                    items.append((f"optimizer {j} group {i} {k}", _array(v)))
    for j, sch in enumerate(s.schedulers):
        items.append((f"scheduler {j} last lr", list(sch.get_last_lr())))
    return items


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and a.tobytes() == b.tobytes())
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


def assert_same(eager: list[list[tuple[str, Any]]], compiled: list[list[tuple[str, Any]]]) -> None:
    """Bit for bit: every entry of every step's snapshot."""
    assert len(eager) == len(compiled)
    for i, (a, b) in enumerate(zip(eager, compiled)):
        assert [n for n, _ in a] == [n for n, _ in b], f"step {i}: different entries"
        for (name, x), (_, y) in zip(a, b):
            assert _same_value(x, y), f"step {i}: {name} differs\neager    {x}\ncompiled {y}"


def run(make: Callable[[], Setup], batches: list[tuple[Any, ...]], compiled: bool,
        **compile_kw: Any) -> tuple[list[list[tuple[str, Any]]], list[str], Any]:
    """(snapshots after every call, the compile warnings' texts, the step called): built under
    seed 0, run under seed 1, so eager and compiled draw the same numbers."""
    ag.manual_seed(0)
    s = make()
    step = ag.compile(s.step, **compile_kw) if compiled else s.step
    ag.manual_seed(1)
    snaps = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for b in batches:
            res = step(*[ag.tensor(v) if isinstance(v, np.ndarray) else v for v in b])
            if s.after is not None:
                s.after(res)
            snaps.append(snapshot(res, s))
    texts = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    return snaps, [t for t in texts if t.startswith("compile(")], step


def compare(make: Callable[[], Setup], batches: list[tuple[Any, ...]],
            **compile_kw: Any) -> tuple[list[str], Any]:
    """Eager and compiled runs equal bit for bit; (compile's warnings, the compiled step)."""
    eager, eager_warned, _ = run(make, batches, False)
    assert not eager_warned
    compiled, warned, step = run(make, batches, True, **compile_kw)
    assert_same(eager, compiled)
    return warned, step


def replays(make: Callable[[], Setup], batches: list[tuple[Any, ...]]) -> Any:
    """``compare`` where the compiled step must replay without a warning."""
    warned, step = compare(make, batches)
    assert not warned, warned
    ex = step.explain()
    assert ex.replaying >= 1 and ex.eager == 0, str(ex)
    return step


def batches(n: int, x_shape: tuple[int, ...], classes: int, seed: int = 0,
            dtype: Any = np.float32) -> list[tuple[Any, Any]]:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(x_shape).astype(dtype), rng.integers(0, classes, x_shape[0]))
            for _ in range(n)]


def classifier_step(model: Any, opt: Any, loss_fn: Any = None,
                    scheds: tuple[Any, ...] = ()) -> Callable[..., Any]:
    """zero_grad, forward, loss, backward, step (and the schedulers' steps, when given)."""
    loss_fn = loss_fn if loss_fn is not None else ag.nn.CrossEntropyLoss()

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        for s in scheds:
            s.step()
        return loss

    return step
