"""Optimizer hyper-parameters a scheduler moves between calls: a recording reads them afresh
(the recorded optimizer update) or holds them as constants (a step computing with ``lr``); the
first call with new values is checked against eager, and a recording that holds them makes the
function key its signatures on their values. Bit for bit equal to eager either way."""

from __future__ import annotations

from typing import Any

import pytest

import autograd_gpu as ag
from autograd_gpu import nn

from ._steps import Setup, batches, compare

BATCHES = batches(10, (5, 8), 4)


def _setup(uses_lr: bool, sched: str) -> Any:
    def make() -> Setup:
        model = nn.Linear(8, 4)
        opt = ag.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        s = ag.optim.lr_scheduler.StepLR(opt, 3, 0.5) if sched == "step" else \
            ag.optim.lr_scheduler.CosineAnnealingLR(opt, 20)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            if uses_lr:
                loss = loss * (1 + opt.param_groups[0]["lr"])
            loss.backward()
            opt.step()
            return loss

        return Setup(step, [model], [opt], [s], after=lambda _: s.step())

    return make


@pytest.mark.parametrize("sched", ["step", "cosine"])
def test_a_recorded_update_follows_the_scheduler_with_one_recording(sched: str) -> None:
    warned, step = compare(_setup(False, sched), BATCHES)
    assert not warned, warned
    ex = step.explain()
    assert ex.signatures <= 2 and ex.eager == 0, str(ex)  # NOTE: before/after the first grads
    assert all(e.hyper_safe for e in step._entries.values() if e.state == "replay")


def test_a_step_computing_with_lr_records_per_value() -> None:
    """The loss is scaled by ``1 + lr``: a replay would keep the recorded lr. The first call
    with a new lr differs from eager at its check; the function then keys on the values."""
    warned, step = compare(_setup(True, "step"), BATCHES)
    assert not warned, warned
    assert step._pin_hypers
    assert step.explain().signatures == 3  # NOTE: lr 0.05, 0.025, 0.0125 (after the first)


def test_a_step_computing_with_lr_under_a_schedule_that_never_repeats_is_exact() -> None:
    warned, step = compare(_setup(True, "cosine"), batches(14, (5, 8), 4))
    assert step._pin_hypers
    assert len(warned) == 1 and "cache_size_limit" in warned[0], warned
