"""Schedulers that drive other schedulers: SequentialLR and ChainedScheduler (``lr_scheduler``
re-exports them; the rules are PyTorch's)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from .lr_scheduler import (
    LRScheduler, _group_values, _set_group_value,
)
from ._lr_scheduler_more import ReduceLROnPlateau
from .optimizer import Optimizer


def _check_schedulers(owner: str, schedulers: Sequence[Any], optimizer: Optimizer) -> None:
    for i, sched in enumerate(schedulers):
        if not hasattr(sched, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(sched, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires "
                "additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence.")
        if optimizer != sched.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(sched).__name__} at index {i} has {sched.optimizer}, which is "
                f"different from {type(optimizer).__name__}.")


class _Composite(LRScheduler):
    """``state_dict`` of a scheduler made of schedulers: theirs nested under ``_schedulers``."""

    _schedulers: list[Any]

    def state_dict(self) -> dict[str, Any]:
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = saved
        for sched, sd in zip(self._schedulers, saved):
            sched.load_state_dict(sd)


class SequentialLR(_Composite):
    """Run ``schedulers`` one after another, switching at each of ``milestones`` (epochs).

    At a milestone the next scheduler restarts from its ``initial_lr`` (its epoch 0).

    Example:
        >>> warm = LinearLR(opt, start_factor=0.1, total_iters=5)
        >>> sched = SequentialLR(opt, [warm, ExponentialLR(opt, 0.9)], milestones=[5])
    """

    def __init__(self, optimizer: Optimizer, schedulers: list[LRScheduler],
                 milestones: list[int], last_epoch: int = -1) -> None:
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got no "
                             "scheduler.")
        _check_schedulers(type(self).__name__, schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more than "
                f"the number of milestone points, but got number of schedulers {len(schedulers)} "
                f"and the number of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # NOTE: the schedulers' constructors each stepped once; undo that and start the first.
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Step every (nested) scheduler's ``last_epoch`` back by one."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """Advance one epoch with the scheduler in charge (restarting it at a milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step every scheduler in ``schedulers`` at each ``step`` (their effects compose).

    Example:
        >>> sched = ChainedScheduler([ConstantLR(opt, 0.1, 2), ExponentialLR(opt, 0.9)])
    """

    def __init__(self, schedulers: Sequence[LRScheduler],
                 optimizer: Optimizer | None = None) -> None:
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(type(self).__name__, schedulers, optimizer)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step every chained scheduler."""
        for sched in self._schedulers:
            sched.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")
