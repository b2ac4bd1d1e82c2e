"""Learning-rate schedulers against torch.optim.lr_scheduler: the lr (and momentum) sequences over
120+ steps, state_dict round trips, the closed form behind step(epoch), warnings and errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

import autograd_gpu as ag
from tests._compare import outcome


class Warmup:
    """A callable object: LambdaLR saves its ``__dict__`` in state_dict."""

    def __init__(self, steps: int) -> None:
        self.steps = steps

    def __call__(self, epoch: int) -> float:
        return min(1.0, (epoch + 1) / self.steps) * 0.97**epoch


# (name, optimizer (name, options), scheduler constructor taking (lib, opt))
SCHEDULERS: list[tuple[str, tuple[str, dict[str, Any]], Callable[[Any, Any], Any]]] = [
    ("StepLR", ("SGD", {}), lambda lib, o: lib.optim.lr_scheduler.StepLR(o, 7, gamma=0.5)),
    ("MultiStepLR", ("SGD", {}), lambda lib, o: lib.optim.lr_scheduler.MultiStepLR(
        o, milestones=[10, 30, 30, 95], gamma=0.3)),
    ("ExponentialLR", ("SGD", {}), lambda lib, o: lib.optim.lr_scheduler.ExponentialLR(o, 0.97)),
    ("CosineAnnealingLR", ("SGD", {}), lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(
        o, T_max=40, eta_min=1e-4)),
    ("LambdaLR", ("SGD", {}), lambda lib, o: lib.optim.lr_scheduler.LambdaLR(
        o, [lambda e: 1 / (1 + e), Warmup(10)])),
    ("OneCycleLR-cos-sgd", ("SGD", {"momentum": 0.9}),
     lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=[1.0, 0.1], total_steps=130)),
    ("OneCycleLR-linear-three-adam", ("Adam", {}),
     lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(
         o, max_lr=0.5, epochs=13, steps_per_epoch=10, pct_start=0.25, anneal_strategy="linear",
         three_phase=True, base_momentum=0.8, max_momentum=0.9, div_factor=10.0)),
    ("OneCycleLR-no-momentum", ("Adagrad", {}),
     lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=0.2, total_steps=125,
                                                      cycle_momentum=False)),
]


def _make(lib: Any, opt_spec: tuple[str, dict[str, Any]], make_sched: Callable[[Any, Any], Any],
          ) -> tuple[Any, Any]:
    name, kw = opt_spec
    groups = [{"params": [lib.zeros(2, requires_grad=True)]},
              {"params": [lib.zeros(3, requires_grad=True)], "lr": 0.01}]
    opt = getattr(lib.optim, name)(groups, lr=0.1, **kw)
    return opt, make_sched(lib, opt)


def _trace(opt: Any, sched: Any, steps: int) -> list[tuple[Any, ...]]:
    """(last_lr, group lrs, group momenta/betas) after construction and after every step."""
    def snap() -> tuple[Any, ...]:
        moms = [(g.get("momentum"), g.get("betas")) for g in opt.param_groups]
        return (sched.last_epoch, list(sched.get_last_lr()),
                [g["lr"] for g in opt.param_groups], moms)

    out = [snap()]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(snap())
    return out


@pytest.mark.parametrize(("opt_spec", "make_sched"), [s[1:] for s in SCHEDULERS],
                         ids=[s[0] for s in SCHEDULERS])
def test_lr_sequence_matches_torch(opt_spec: Any, make_sched: Any) -> None:
    ref = _trace(*_make(torch, opt_spec, make_sched), 120)
    ours = _trace(*_make(ag, opt_spec, make_sched), 120)
    assert ours == ref  # exact: same Python float arithmetic in the same order
    assert len({tuple(r[2]) for r in ref}) > 3  # the schedule does change the lr


@pytest.mark.parametrize(("opt_spec", "make_sched"), [s[1:] for s in SCHEDULERS],
                         ids=[s[0] for s in SCHEDULERS])
def test_state_dict_round_trip(opt_spec: Any, make_sched: Any) -> None:
    opt, sched = _make(ag, opt_spec, make_sched)
    full = _trace(opt, sched, 60)

    opt, sched = _make(ag, opt_spec, make_sched)
    _trace(opt, sched, 25)
    opt_sd, sched_sd = opt.state_dict(), sched.state_dict()
    assert "optimizer" not in sched_sd and sched_sd["last_epoch"] == 25
    opt2, sched2 = _make(ag, opt_spec, make_sched)
    opt2.load_state_dict(opt_sd)
    sched2.load_state_dict(sched_sd)
    assert _trace(opt2, sched2, 35)[1:] == full[26:]


def test_state_dict_keys_match_torch() -> None:
    for _, opt_spec, make_sched in SCHEDULERS:
        keys = [sorted(_make(lib, opt_spec, make_sched)[1].state_dict()) for lib in (torch, ag)]
        assert keys[1] == keys[0]
    sd = _make(ag, *SCHEDULERS[4][1:])[1].state_dict()
    assert sd["lr_lambdas"] == [None, {"steps": 10}]


def test_cosine_annealing_follows_a_manual_lr_change() -> None:
    """The recursive formula continues from an lr the user set between steps."""
    seqs = []
    for lib in (torch, ag):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        seq = []
        for i in range(25):
            opt.step()
            sched.step()
            if i == 4:
                opt.param_groups[0]["lr"] = 0.9
            seq.append(opt.param_groups[0]["lr"])
        seqs.append(seq)
    assert seqs[1] == seqs[0]


def test_step_with_epoch_uses_closed_form() -> None:
    results = []
    for lib in (torch, ag):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        scheds = [lib.optim.lr_scheduler.StepLR(opt, 3, 0.5)]
        opt.step()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scheds[0].step(epoch=7)
        results.append((scheds[0].get_last_lr(), [str(w.message)[:40] for w in caught]))
    assert results[1] == results[0]
    assert results[0][0] == [0.25]


def test_warns_when_stepped_before_the_optimizer() -> None:
    opt = ag.optim.SGD([ag.zeros(1, requires_grad=True)], lr=1.0)
    sched = ag.optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before"):
        sched.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def _errors(lib: Any) -> dict[str, Any]:
    def opt(name: str = "SGD") -> Any:
        return getattr(lib.optim, name)([lib.zeros(1, requires_grad=True)], lr=0.1)

    sched = lib.optim.lr_scheduler
    one = opt()
    cyc = sched.OneCycleLR(one, max_lr=1.0, total_steps=3)

    def overrun() -> None:
        for _ in range(4):
            one.step()
            cyc.step()

    cases = {
        "not_optimizer": lambda: sched.StepLR(object(), 3),
        "resume": lambda: sched.StepLR(opt(), 3, last_epoch=5),
        "lambdas": lambda: sched.LambdaLR(opt(), [lambda e: 1.0] * 2),
        "total_steps": lambda: sched.OneCycleLR(opt(), 1.0, total_steps=0),
        "no_steps": lambda: sched.OneCycleLR(opt(), 1.0),
        "epochs": lambda: sched.OneCycleLR(opt(), 1.0, epochs=0, steps_per_epoch=3),
        "pct": lambda: sched.OneCycleLR(opt(), 1.0, total_steps=10, pct_start=1.5),
        "anneal": lambda: sched.OneCycleLR(opt(), 1.0, total_steps=10, anneal_strategy="x"),
        "max_lr_len": lambda: sched.OneCycleLR(opt(), [1.0, 2.0], total_steps=10),
        "momentum": lambda: sched.OneCycleLR(opt("Adagrad"), 1.0, total_steps=10),
        "overrun": overrun,
    }
    return {k: outcome(fn) for k, fn in cases.items()}


def test_errors_match_torch() -> None:
    ours, ref = _errors(ag), _errors(torch)
    assert ours == ref
    assert ref["overrun"][0] == "raises"
