"""The memory budget of ``autograd-gpu memory --budget B`` and ``train --memory-budget B``
(issue #19): ``auto_checkpoint`` plans activation checkpointing for one training step, and the
step's peak of ``memory_allocated`` is measured before and after; both timelines go on one PNG.

``plan_step`` profiles one step (forward, loss, backward) on the given inputs unplanned, calls
``auto_checkpoint`` (which installs the plan), then profiles one planned step. It leaves the
model's weights, buffers (BatchNorm's running statistics) and the default generators as it found
them, and the gradients None (as ``zero_grad()`` does), so the training that follows is the one
without a budget, step for step: checkpointing recomputes the same values (exactly, on the CPU).

``StepPeaks`` measures the same figure inside a training loop: the peak of ``memory_allocated``
from each step's forward to the end of its backward, and what was allocated as the step began.
From the first ``optimizer.step()`` on, that includes what planning did not see: the optimizer's
state (and its scratch buffers); the report shows each step's rise over its start beside the
peaks, so that the activations' part compares.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from . import memory as _memory
from .profiler import MemoryProfile, plot_timelines, profile_memory

MIB = float(1 << 20)
_UNITS = {"b": 1, "kb": 10 ** 3, "mb": 10 ** 6, "gb": 10 ** 9,
          "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}
_SIZE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(?:e([+-]?\d+))?\s*([a-z%]*)")
HELP = ("bytes (50000000), a size (64MiB, 1.5GB; k, M, G: powers of 1000, Ki, Mi, Gi: of 1024) "
        "or a percentage of the unplanned step's peak (50%%)")


class BudgetOutOfReach(ValueError):
    """No choice of checkpoints brings the step's peak under the budget."""


def parse_budget(text: str) -> int | str:
    """A budget as ``auto_checkpoint`` takes it: a byte count (``int``) from ``"50000000"``,
    ``"64MiB"`` or ``"1.5GB"`` (units in any case), or a percentage string in (0, 100] from
    ``"50%"``. Raises ``ValueError`` with a message for the user."""
    m = _SIZE.fullmatch(text.strip().lower())
    if m is None:
        raise ValueError(f"invalid budget {text!r}: give {HELP.replace('%%', '%')}")
    number, exponent, unit = m.groups()
    if unit and unit != "%" and unit not in _UNITS:
        raise ValueError(f"invalid budget {text!r}: unknown unit {unit!r}; use B, kB, MB, GB, "
                         "KiB, MiB, GiB or %")
    if not unit and not exponent and number.isdigit():
        value: float = int(number)  # NOTE: exact, however many digits
    else:
        value = float(f"{number}e{exponent or 0}")  # NOTE: inf when too large
    if not math.isfinite(value):
        raise ValueError(f"invalid budget {text!r}: too large")
    if unit == "%":
        if not 0 < value <= 100:
            raise ValueError(f"invalid budget {text!r}: a percentage must be in (0, 100]")
        return f"{value:g}%"
    if not unit and value != int(value):
        raise ValueError(f"invalid budget {text!r}: a byte count without a unit must be a "
                         "whole number")
    nbytes = int(value * _UNITS[unit or "b"])
    if nbytes < 1:
        raise ValueError(f"invalid budget {text!r}: must be at least 1 byte")
    return nbytes


def budget_arg(text: str) -> int | str:
    """``parse_budget`` as an argparse ``type`` (a bad budget is a usage error, exit 2)."""
    try:
        return parse_budget(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def describe(budget: int | str) -> str:
    """``"50%"``, or ``"64.00 MiB"`` for a byte count."""
    return budget if isinstance(budget, str) else f"{budget / MIB:.2f} MiB"


@dataclass
class BudgetRun:
    """A planned step: the plan, the profiles of one step before and after it, and (filled in
    from the training loop's ``StepPeaks``) the largest training step's peak and the bytes
    allocated at its start."""

    plan: Any  # CheckpointPlan
    given: int | str  # the budget as given: bytes or "N%"
    unplanned: MemoryProfile
    planned: MemoryProfile
    training: tuple[int, int] | None = None  # (peak, allocated at the start) of the largest step
    training_steps: int = 0

    @property
    def before(self) -> int:
        """The unplanned step's measured peak (bytes)."""
        return self.unplanned.peaks["overall"]

    @property
    def after(self) -> int:
        """The planned step's measured peak (bytes)."""
        return self.planned.peaks["overall"]

    def summary(self) -> str:
        """The measured peaks before and after, the plan's prediction and the budget (and the
        training's largest step once known), in MiB and bytes, with each measured step's rise
        over what was allocated at its start."""
        plan = self.plan
        asked = ("as given" if isinstance(self.given, int) else
                 f"{self.given} of the plan's unplanned trial step, {plan.baseline_peak:,} bytes")
        rows: list[tuple[str, int, int | None, str]] = [
            ("unplanned step", self.before, self.before - self.unplanned.baseline, "measured"),
            ("planned step", self.after, self.after - self.planned.baseline,
             f"measured; {self.after / max(self.before, 1):.2f}x the unplanned"),
            ("predicted", plan.predicted_peak, None, "the plan's trial step"),
            ("budget", plan.budget, None, asked)]
        if self.training is not None:
            peak, start = self.training
            rows.append((f"training, {self.training_steps} steps", peak, peak - start,
                         "the largest step" + self._training_note(start)))
        lines = ["peak of memory_allocated over one training step (forward, loss, backward):",
                 f"  {'':<22}{'MiB':>10} {'bytes':>14} {'rise':>12}"]
        for name, value, rise, note in rows:
            lines.append(f"  {name:<22}{value / MIB:>10.2f} {value:>14,} "
                         f"{'' if rise is None else f'{rise:,}':>12}  {note}")
        lines.append("  (rise: the peak less what was allocated as the step began)")
        return "\n".join(lines)

    def training_line(self) -> str:
        """The training's largest step in one line (after ``StepPeaks.record``)."""
        if self.training is None:
            return "training: no step was measured"
        peak, start = self.training
        return (f"training: the largest of {self.training_steps} steps peaked at "
                f"{peak / MIB:.2f} MiB ({peak:,} bytes), a rise of {peak - start:,} over its "
                f"start (the planned step's: {self.after - self.planned.baseline:,})"
                + self._training_note(start))

    def _training_note(self, start: int) -> str:
        more = start - self.planned.baseline
        if more <= 0:
            return ""
        return (f"; it began with {more:,} bytes more allocated than the planned step (the "
                "optimizer's state after its first step)")

    def plot(self, path: Any, title: str | None = None) -> Any:
        """Both timelines on one PNG, the budget (and the training's peak) as dashed lines."""
        lines = [("budget" if isinstance(self.given, int) else f"budget ({self.given})",
                  self.plan.budget)]
        if self.training is not None:
            peak, start = self.training
            held = "; with the optimizer's state" if start > self.planned.baseline else ""
            lines.append((f"training's largest step ({self.training_steps} steps{held})", peak))
        return plot_timelines([("unplanned", self.unplanned),
                               (f"planned (budget {describe(self.given)})", self.planned)],
                              path, title=title, lines=lines)


def profile_step(model: Any, args: tuple[Any, ...], loss_fn: Callable[[Any], Any],
                 device: Any) -> MemoryProfile:
    """``profile_memory`` of one forward, ``loss_fn`` and backward; the gradients are set to
    None before and after. The output stays alive through backward, as in ``auto_checkpoint``'s
    trial steps and in training loops that use it (accuracy), so the peaks compare."""
    model.zero_grad(set_to_none=True)
    with profile_memory(model, device=device) as prof:
        out = model(*args)
        loss = loss_fn(out)
        loss.backward()
    del out, loss
    model.zero_grad(set_to_none=True)
    return prof


def plan_step(model: Any, args: tuple[Any, ...], loss_fn: Callable[[Any], Any],
              budget: int | str, device: Any) -> BudgetRun:
    """Profile a step unplanned, install ``auto_checkpoint``'s plan for ``budget`` (bytes or
    ``"N%"``), profile a planned step. The weights, buffers and default generators
    are left as found, the gradients None.

    Raises:
        BudgetOutOfReach: no plan reaches the budget (the message says why, with the unplanned
            step's peak and how much of it was allocated before the step).
    """
    from .utils.checkpoint import auto_checkpoint

    with _state_kept(model, device):
        unplanned = profile_step(model, args, loss_fn, device)
        try:
            plan = auto_checkpoint(model, *args, budget=budget, loss_fn=loss_fn)
        except ValueError as e:
            if "out of reach" not in str(e):
                raise
            peak, before = unplanned.peaks["overall"], unplanned.baseline
            raise BudgetOutOfReach(
                f"{e} (the unplanned step peaks at {peak / MIB:.2f} MiB, {before / MIB:.2f} MiB "
                "of it allocated before the step: weights, inputs, data; checkpointing sheds "
                "only what the checkpointed modules save for backward)") from None
        try:
            planned = profile_step(model, args, loss_fn, device)
        except BaseException:
            plan.remove()
            raise
    return BudgetRun(plan, budget, unplanned, planned)


@contextlib.contextmanager
def _state_kept(model: Any, device: Any) -> Iterator[None]:
    """The model's buffers and the default generators (CPU and ``device``) put back on exit."""
    import autograd_gpu as torch

    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    cpu_rng = torch.get_rng_state()
    cuda_rng = torch.cuda.get_rng_state(device) if str(device).startswith("cuda") else None
    try:
        yield
    finally:
        with torch.no_grad():
            for b, saved in buffers:
                b.copy_(saved)
        torch.set_rng_state(cpu_rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state(cuda_rng, device)


class StepPeaks:
    """Context manager around each training step's forward, loss and backward: records the
    step's peak of ``memory_allocated`` on ``device`` and the bytes allocated as it began (the
    peak statistics are reset on entry)."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.steps: list[tuple[int, int]] = []  # (peak, allocated at the start) per step
        self._start = 0

    def __enter__(self) -> None:
        _memory.reset_peak_memory_stats(self.device)
        self._start = _memory.memory_allocated(self.device)

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.steps.append((_memory.max_memory_allocated(self.device), self._start))

    def record(self, run: BudgetRun) -> None:
        """Put the largest step and the number of steps into ``run``."""
        if self.steps:
            run.training, run.training_steps = max(self.steps), len(self.steps)
