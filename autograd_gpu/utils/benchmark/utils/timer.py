"""``Timer``: time a statement as PyTorch's ``torch.utils.benchmark.Timer`` does (warm-up,
threads pinned to ``num_threads``, the accelerator synchronised around every timed block).

``blocked_autorange`` first grows a block size (1, 10, 100, ... runs) until the timer's own
overhead is under 0.01% of a block and a block lasts a thousandth of ``min_run_time``, then
times blocks until ``min_run_time`` has passed; ``adaptive_autorange`` times blocks until the
spread (IQR / median) is under ``threshold`` or ``max_run_time`` has passed.
"""

from __future__ import annotations

import enum
import textwrap
import timeit as _timeit
from typing import Any, Callable

from . import common

__all__ = ["Language", "Timer", "timer"]


def timer() -> float:
    """``timeit.default_timer()`` after waiting for the accelerator's queued work."""
    from .... import accelerator

    if accelerator.is_available():
        accelerator.synchronize()
    return _timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _clean(code: str) -> str:
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Times ``stmt`` (after ``setup``) with ``globals``; ``torch`` is available to both.

    Args:
        stmt, setup: Python code (strings).
        timer: the clock (default: synchronise the accelerator, then ``timeit.default_timer``).
        globals: names ``stmt`` and ``setup`` see.
        label, sub_label, description, env: how the Measurement is named and how ``Compare``
            groups it (rows by ``sub_label``, columns by ``description``).
        num_threads: BLAS threads while timing (``set_num_threads``), 1 by default as PyTorch.

    Example:
        >>> Timer("x @ x", globals={"x": ones(64, 64)}).blocked_autorange(min_run_time=0.1)
        ...  # doctest: +SKIP
    """

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict[str, Any] | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None, num_threads: int = 1,
                 language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("Timer(language='cpp'): autograd_gpu times Python "
                                      "statements only")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this "
                             "code can simply be moved to `setup`.")
        import autograd_gpu

        self._globals = dict(globals or {})
        self._globals.setdefault("torch", autograd_gpu)
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def _measurement(self, number: int, times: list[float]) -> common.Measurement:
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Run ``stmt`` ``number`` times (after a warm-up of ``number // 100``) as one block."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return self._measurement(number, [self._timeit(number)])

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], Any] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = sorted(self._timeit(0) for _ in range(5))[2]
            number = 1
            while number * 10 <= 2147483647:
                took = self._timeit(number)
                if took > min_run_time or (overhead / took <= 1e-4
                                           and took >= min_run_time / 1000):
                    break
                number *= 10
        return number

    def _loop(self, number: int, min_run_time: float, max_run_time: float | None,
              done: Callable[[list[float]], bool],
              callback: Callable[[int, float], Any] | None) -> list[float]:
        times: list[float] = []
        total = 0.0
        with common.set_torch_threads(self._task_spec.num_threads):
            while True:
                took = self._timeit(number)
                times.append(took)
                total += took
                if callback is not None:
                    callback(number, took)
                if total >= min_run_time and done(times):
                    break
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> common.Measurement:
        """Time blocks of a fitted size until ``min_run_time`` seconds have been measured."""
        number = self._block_size(min_run_time)
        times = self._loop(number, min_run_time, None, lambda ts: True, callback)
        return self._measurement(number, times)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None
                           ) -> common.Measurement:
        """Time blocks until IQR / median < ``threshold`` (after at least four blocks and
        ``min_run_time`` seconds) or ``max_run_time`` seconds have passed."""
        number = self._block_size(0.05)

        def steady(times: list[float]) -> bool:
            return len(times) > 3 and self._measurement(number, times).meets_confidence(threshold)

        times = self._loop(number, min_run_time, max_run_time, steady, callback)
        return self._measurement(number, times)

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("Timer.collect_callgrind: autograd_gpu does not run Callgrind")
