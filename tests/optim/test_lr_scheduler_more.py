"""MultiplicativeLR, ConstantLR, LinearLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR,
SequentialLR, ChainedScheduler and ReduceLROnPlateau against torch.optim.lr_scheduler: lr and
momentum sequences over 120 steps (exactly equal floats), state_dict keys and round trips, the
closed forms behind step(epoch), warnings and errors."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

import autograd_gpu as ag
from tests._compare import outcome

from .test_lr_scheduler import Warmup, _make


def _s(lib: Any) -> Any:
    return lib.optim.lr_scheduler


class Scale:
    """A callable-object ``scale_fn`` (its ``__dict__`` goes into CyclicLR's state_dict)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate

    def __call__(self, x: float) -> float:
        return 1.0 / (1.0 + self.rate * x)


SCHEDULERS: list[tuple[str, tuple[str, dict[str, Any]], Callable[[Any, Any], Any]]] = [
    ("MultiplicativeLR", ("SGD", {}), lambda lib, o: _s(lib).MultiplicativeLR(
        o, [lambda e: 0.97, Warmup(4)])),
    ("ConstantLR", ("SGD", {}), lambda lib, o: _s(lib).ConstantLR(o, factor=0.3,
                                                                  total_iters=40)),
    ("LinearLR", ("SGD", {}), lambda lib, o: _s(lib).LinearLR(o, start_factor=0.1,
                                                              end_factor=0.7, total_iters=60)),
    ("PolynomialLR", ("SGD", {}), lambda lib, o: _s(lib).PolynomialLR(o, total_iters=90,
                                                                      power=2.5)),
    ("CosineWarmRestarts-mult2", ("SGD", {}), lambda lib, o: _s(lib).CosineAnnealingWarmRestarts(
        o, T_0=7, T_mult=2, eta_min=1e-3)),
    ("CosineWarmRestarts", ("SGD", {}), lambda lib, o: _s(lib).CosineAnnealingWarmRestarts(
        o, T_0=13)),
    ("CyclicLR-triangular-sgd", ("SGD", {"momentum": 0.9}), lambda lib, o: _s(lib).CyclicLR(
        o, base_lr=[0.01, 0.001], max_lr=[0.1, 0.05], step_size_up=15)),
    ("CyclicLR-triangular2-adam", ("Adam", {}), lambda lib, o: _s(lib).CyclicLR(
        o, base_lr=0.01, max_lr=0.2, step_size_up=7, step_size_down=13, mode="triangular2",
        base_momentum=0.7, max_momentum=0.95)),
    ("CyclicLR-exp_range", ("SGD", {"momentum": 0.5}), lambda lib, o: _s(lib).CyclicLR(
        o, base_lr=0.01, max_lr=0.3, step_size_up=10, mode="exp_range", gamma=0.98)),
    ("CyclicLR-scale_fn", ("Adagrad", {}), lambda lib, o: _s(lib).CyclicLR(
        o, base_lr=0.01, max_lr=0.3, step_size_up=9, scale_fn=Scale(0.1),
        scale_mode="iterations", cycle_momentum=False)),
    ("SequentialLR", ("SGD", {}), lambda lib, o: _s(lib).SequentialLR(
        o, [_s(lib).LinearLR(o, start_factor=0.2, total_iters=10),
            _s(lib).ExponentialLR(o, 0.95),
            _s(lib).CosineAnnealingLR(o, T_max=30)], milestones=[10, 60])),
    ("ChainedScheduler", ("SGD", {}), lambda lib, o: _s(lib).ChainedScheduler(
        [_s(lib).ConstantLR(o, factor=0.5, total_iters=20), _s(lib).ExponentialLR(o, 0.97),
         _s(lib).MultiStepLR(o, [30, 70], 0.5)])),
]
IDS = [s[0] for s in SCHEDULERS]
SPECS = [s[1:] for s in SCHEDULERS]


def _quiet_trace(opt: Any, sched: Any, steps: int) -> list[Any]:
    """(last_epoch, last_lr, group lrs, group momenta/betas) after construction and each step
    (ChainedScheduler has no ``last_epoch``, in PyTorch either)."""
    def snap() -> tuple[Any, ...]:
        moms = [(g.get("momentum"), g.get("betas")) for g in opt.param_groups]
        return (getattr(sched, "last_epoch", None), list(sched.get_last_lr()),
                [g["lr"] for g in opt.param_groups], moms)

    out = [snap()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            opt.step()
            sched.step()
            out.append(snap())
    return out


@pytest.mark.parametrize(("opt_spec", "make_sched"), SPECS, ids=IDS)
def test_lr_sequence_matches_torch(opt_spec: Any, make_sched: Any) -> None:
    ref = _quiet_trace(*_make(torch, opt_spec, make_sched), 120)
    ours = _quiet_trace(*_make(ag, opt_spec, make_sched), 120)
    assert ours == ref  # exact: same Python float arithmetic in the same order
    assert len({tuple(r[2]) for r in ref}) > 1  # the schedule does change the lr


@pytest.mark.parametrize(("opt_spec", "make_sched"), SPECS, ids=IDS)
def test_state_dict_keys_and_round_trip(opt_spec: Any, make_sched: Any) -> None:
    keys = [sorted(_make(lib, opt_spec, make_sched)[1].state_dict()) for lib in (torch, ag)]
    assert keys[1] == keys[0]
    opt, sched = _make(ag, opt_spec, make_sched)
    full = _quiet_trace(opt, sched, 60)
    opt, sched = _make(ag, opt_spec, make_sched)
    _quiet_trace(opt, sched, 25)
    opt_sd, sched_sd = opt.state_dict(), sched.state_dict()
    assert "optimizer" not in sched_sd
    opt2, sched2 = _make(ag, opt_spec, make_sched)
    opt2.load_state_dict(opt_sd)
    sched2.load_state_dict(sched_sd)
    assert _quiet_trace(opt2, sched2, 35)[1:] == full[26:]


def test_nested_state_dicts() -> None:
    sd = _make(ag, *SPECS[IDS.index("SequentialLR")])[1].state_dict()
    assert len(sd["_schedulers"]) == 3 and sd["_milestones"] == [10, 60]
    sd = _make(ag, *SPECS[IDS.index("CyclicLR-scale_fn")])[1].state_dict()
    assert sd["_scale_fn_custom"] == {"rate": 0.1}


def test_step_with_epoch_uses_closed_form() -> None:
    results = []
    for lib in (torch, ag):
        groups = [lib.zeros(1, requires_grad=True)]
        out = []
        s = _s(lib)
        for make, args in ((s.ConstantLR, (0.5, 4)), (s.LinearLR, (0.25, 1.0, 8)),
                           (s.PolynomialLR, (8, 2.0)), (s.CosineAnnealingWarmRestarts, (3, 2))):
            opt = lib.optim.SGD(groups, lr=1.0)
            sched = make(opt, *args)
            opt.step()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for epoch in (2, 6, 5, 11, 30):
                    sched.step(epoch)
                    out.append(sched.get_last_lr()[0])
            if isinstance(sched, _s(lib).CosineAnnealingWarmRestarts):
                for epoch in (0.5, 4.25, 9.75):
                    sched.step(epoch)
                    out.append(sched.get_last_lr()[0])
        results.append(out)
    assert results[1] == results[0]


def _plateau_trace(lib: Any, kw: dict[str, Any], metrics: list[float]) -> list[Any]:
    groups = [{"params": [lib.zeros(2, requires_grad=True)]},
              {"params": [lib.zeros(3, requires_grad=True)], "lr": 0.01}]
    opt = lib.optim.SGD(groups, lr=1.0)
    sched = _s(lib).ReduceLROnPlateau(opt, **kw)
    out = []
    for m in metrics:
        opt.step()
        sched.step(m)
        out.append((sched.get_last_lr(), sched.best, sched.num_bad_epochs,
                    sched.cooldown_counter, sched.last_epoch))
    return out


# a metric that improves, plateaus, wiggles within thresholds, and gets worse
METRICS = ([10.0 - i for i in range(5)] + [5.0, 5.0001, 4.9999, 5.2] * 6 + [4.0 + 0.3 * math.sin(i)
                                                                             for i in range(40)])
PLATEAU = [
    dict(),
    dict(mode="max", patience=2),
    dict(mode="min", threshold=0.1, threshold_mode="abs", patience=1, cooldown=3),
    dict(mode="max", threshold=0.05, threshold_mode="rel", patience=0, factor=0.5,
         min_lr=[0.1, 0.005]),
    dict(patience=1, factor=0.5, min_lr=0.3, eps=0.2),
]


@pytest.mark.parametrize("kw", PLATEAU, ids=[str(i) for i in range(len(PLATEAU))])
def test_reduce_lr_on_plateau_matches_torch(kw: dict[str, Any]) -> None:
    ref = _plateau_trace(torch, kw, METRICS)
    assert _plateau_trace(ag, kw, METRICS) == ref
    assert len({tuple(r[0]) for r in ref}) > 1 or kw.get("mode") == "max"


def test_reduce_lr_on_plateau_state_dict() -> None:
    keys = []
    for lib in (torch, ag):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        sched = _s(lib).ReduceLROnPlateau(opt, patience=1)
        for m in (3.0, 3.0, 3.0, 2.0):
            sched.step(m)
        sd = sched.state_dict()
        keys.append(sorted(sd))
    assert keys[1] == keys[0]
    opt = ag.optim.SGD([ag.zeros(1, requires_grad=True)], lr=1.0)
    fresh = _s(ag).ReduceLROnPlateau(opt, mode="max")
    fresh.load_state_dict(sd)
    assert (fresh.mode, fresh.best, fresh.mode_worse) == ("min", 2.0, math.inf)


def test_warnings_match_torch() -> None:
    messages = []
    for lib in (torch, ag):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0, momentum=0.9)
        caught_all = []
        s = _s(lib)
        for make, args in ((s.LinearLR, ()), (s.CyclicLR, (0.1, 1.0)), (s.PolynomialLR, ())):
            sched = make(opt, *args)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sched.step()  # before optimizer.step()
                sched.get_lr()  # outside step
            caught_all.append([str(w.message)[:50] for w in caught])
        messages.append(caught_all)
    assert messages[1] == messages[0]
    assert messages[0][0][0].startswith("Detected call of `lr_scheduler.step()`")


def _errors(lib: Any) -> dict[str, Any]:
    def opt(name: str = "SGD") -> Any:
        return getattr(lib.optim, name)([lib.zeros(1, requires_grad=True)], lr=0.1)

    s = _s(lib)
    o = opt()
    cases = {
        "mult_lambda": lambda: s.MultiplicativeLR(opt(), 0.9),
        "mult_lambdas": lambda: s.MultiplicativeLR(opt(), [lambda e: 1.0] * 2),
        "constant": lambda: s.ConstantLR(opt(), factor=1.5),
        "linear_start": lambda: s.LinearLR(opt(), start_factor=0),
        "linear_end": lambda: s.LinearLR(opt(), end_factor=1.5),
        "warm_t0": lambda: s.CosineAnnealingWarmRestarts(opt(), T_0=0),
        "warm_tmult": lambda: s.CosineAnnealingWarmRestarts(opt(), T_0=2, T_mult=0),
        "warm_eta": lambda: s.CosineAnnealingWarmRestarts(opt(), T_0=2, eta_min="x"),
        "warm_epoch": lambda: s.CosineAnnealingWarmRestarts(opt(), T_0=2).step(-1),
        "cyclic_mode": lambda: s.CyclicLR(opt(), 0.1, 1.0, mode="x"),
        "cyclic_momentum": lambda: s.CyclicLR(opt("Adagrad"), 0.1, 1.0),
        "cyclic_len": lambda: s.CyclicLR(opt(), [0.1, 0.2], 1.0),
        "cyclic_not_opt": lambda: s.CyclicLR(object(), 0.1, 1.0),
        "plateau_factor": lambda: s.ReduceLROnPlateau(opt(), factor=1.0),
        "plateau_mode": lambda: s.ReduceLROnPlateau(opt(), mode="x"),
        "plateau_tmode": lambda: s.ReduceLROnPlateau(opt(), threshold_mode="x"),
        "plateau_minlr": lambda: s.ReduceLROnPlateau(opt(), min_lr=[0.1, 0.2]),
        "seq_empty": lambda: s.SequentialLR(o, [], milestones=[]),
        "seq_milestones": lambda: s.SequentialLR(o, [s.StepLR(o, 2)], milestones=[3]),
        "seq_plateau": lambda: s.SequentialLR(o, [s.ReduceLROnPlateau(o)], milestones=[]),
        "seq_other_opt": lambda: s.SequentialLR(opt(), [s.StepLR(o, 2)], milestones=[]),
        "seq_no_opt": lambda: s.SequentialLR(o, [object()], milestones=[]),
        "chain_empty": lambda: s.ChainedScheduler([]),
        "chain_plateau": lambda: s.ChainedScheduler([s.StepLR(o, 2), s.ReduceLROnPlateau(o)]),
    }
    return {k: outcome(fn) for k, fn in cases.items()}


def test_errors_match_torch() -> None:
    ours, ref = _errors(ag), _errors(torch)
    assert ours == ref
