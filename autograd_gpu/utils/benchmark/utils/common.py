"""What a benchmark ``Timer`` measured: ``TaskSpec`` (the statement and its labels) and
``Measurement`` (the times, their median and spread), printed as PyTorch prints them, and the
unit helpers ``Compare`` shares."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import textwrap
from typing import Any, Iterable, Iterator

__all__ = ["Measurement", "TaskSpec", "ordered_unique", "select_unit", "set_torch_threads",
           "trim_sigfig", "unit_to_english"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25
_UNITS = {-3: ("ns", 1e-9), -2: ("us", 1e-6), -1: ("ms", 1e-3)}
_ENGLISH = {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """The statement a Timer runs and the labels that name it (globals aside)."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """``label: sub_label``, else the one-line statement, else the indented statement."""
        if self.label is not None or "\n" not in self.stmt:
            head = self.label if self.label is not None else self.stmt
            return head + (f": {self.sub_label}" if self.sub_label else "")
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n" + textwrap.indent(self.stmt, "  ")

    def setup_str(self) -> str:
        if self.setup in ("", "pass"):
            return ""
        if "\n" in self.setup:
            return "setup:\n" + textwrap.indent(self.setup, "  ")
        return "setup: " + self.setup

    def summarize(self) -> str:
        """The title, description and setup, as a Measurement's printout opens."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def _quantile(xs: tuple[float, ...], q: float) -> float:
    """Linear-interpolation quantile of sorted ``xs`` (``torch.quantile``'s default)."""
    pos = q * (len(xs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclasses.dataclass(repr=False)
class Measurement:
    """The times of ``number_per_run`` runs of a statement, ``len(raw_times)`` times over.

    ``times`` are per run; ``median``, ``mean`` and ``iqr`` are over them. The TaskSpec's
    fields (``label``, ``stmt``, ``num_threads``, ...) read as attributes.
    """

    number_per_run: int
    raw_times: list[float]
    task_spec: TaskSpec
    metadata: dict[Any, Any] | None = None

    def __post_init__(self) -> None:
        self._sorted: tuple[float, ...] = ()
        self._stats = (-1.0, -1.0, -1.0, -1.0)  # median, mean, p25, p75
        self._warnings: tuple[str, ...] = ()

    def __getattr__(self, name: str) -> Any:
        if name in _FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list[float]:
        return [t / self.number_per_run for t in self.raw_times]

    def _compute(self) -> None:
        if not self.raw_times or self._sorted:
            return
        xs = self._sorted = tuple(sorted(self.times))
        self._stats = (_quantile(xs, 0.5), math.fsum(xs) / len(xs), _quantile(xs, 0.25),
                       _quantile(xs, 0.75))
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            why = "This suggests significant environmental influence."
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            why = "This could indicate system fluctuation."
        else:
            return
        self._warnings = (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% "
                          f"of the median measurement.\n           {why}",)

    @property
    def median(self) -> float:
        self._compute()
        return self._stats[0]

    @property
    def mean(self) -> float:
        self._compute()
        return self._stats[1]

    @property
    def iqr(self) -> float:
        self._compute()
        return self._stats[3] - self._stats[2]

    @property
    def significant_figures(self) -> int:
        """Digits the middle half of the times supports (a 90% interval on the median), 1-4."""
        self._compute()
        n = len(self._sorted)
        middle = self._sorted[n // 4:math.ceil(3 * n / 4)]
        mean = sum(middle) / len(middle)
        std = math.sqrt(sum((x - mean) ** 2 for x in middle) / len(middle))
        interval = max(1.645 * std / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        digits = math.floor(math.log10(self.median / interval))
        return min(max(digits, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._compute()
        return bool(self._warnings)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        return self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._compute()
        n = len(self._sorted)
        unit, scale = select_unit(self.median)
        p25, p75 = self._stats[2], self._stats[3]
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({p25 / scale:.2f} to "
                         f"{p75 / scale:.2f})")
        threads = self.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} "
                     f"thread{'s' if threads > 1 else ''}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements: Iterable[Measurement]) -> list[Measurement]:
        """One Measurement per TaskSpec, its per-run times pooled (``number_per_run`` 1)."""
        pooled: dict[TaskSpec, list[float]] = collections.defaultdict(list)
        for m in measurements:
            pooled[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in pooled.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit (``ns``, ``us``, ``ms`` or ``s``) and its scale that print ``t`` seconds with
    one to three leading digits."""
    if not t > 0:
        return _UNITS[-3]
    return _UNITS.get(int(math.log10(t) // 3), ("s", 1.0))


def unit_to_english(u: str) -> str:
    return _ENGLISH[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10.0 ** (math.ceil(math.log10(abs(x))) - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``set_num_threads(n)``, restoring the previous number after."""
    from ....functions.settings import get_num_threads, set_num_threads

    before = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(before)
