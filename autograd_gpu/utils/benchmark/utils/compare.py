"""``Compare``: many Measurements as one table per label, rows by ``sub_label`` (grouped by
thread count, then env), columns by ``description``, cells the median in one unit; printed as
PyTorch prints it.

NOTE: PyTorch fails (``TypeError``) on measurements without a ``description``; here their column
is headed by an empty string.
"""

from __future__ import annotations

import collections
import enum
import math
from typing import Any

from . import common

__all__ = ["Colorize", "Compare"]

_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _paint(text: str, value: float, best: float) -> str:
    """ANSI colour by how far ``value`` is from the best in its row or column."""
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _END * 2
    if value >= best * 2:
        return _BAD + text + _END * 2
    return text


class _Table:
    """One label's measurements laid out and rendered."""

    def __init__(self, results: list[common.Measurement], colorize: Colorize, trim: bool,
                 warnings: bool) -> None:
        self.results, self.colorize, self.trim = results, colorize, trim
        self.label = results[0].label
        self.unit, self.scale = common.select_unit(min(r.median for r in results))
        rows = common.ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
        self.rows = sorted(rows, key=lambda k: (k[0], k[1] or ""))  # NOTE: stable: stmt order
        self.cols = common.ordered_unique(r.description for r in results)
        self.cells: list[list[common.Measurement | None]] = [[None] * len(self.cols)
                                                              for _ in self.rows]
        for r in results:
            key = (r.num_threads, r.env, r.as_row_name)
            self.cells[self.rows.index(key)][self.cols.index(r.description)] = r
        self.warnings = warnings and any(r.has_warnings for r in results)
        self.formats = [self._format(j) for j in range(len(self.cols))]

    def _format(self, j: int) -> tuple[str, bool]:
        """Column ``j``'s number template and whether it shows spread marks."""
        column = [m for m in (row[j] for row in self.cells) if m is not None]
        leading = [math.ceil(math.log10(m.median / self.scale)) for m in column]
        decimals = min(max(m.significant_figures - d, 0) for m, d in zip(column, leading)) \
            if self.trim else 1
        width = max(leading) + decimals + (1 if decimals else 0)
        marks = self.warnings and any(m.has_warnings for m in column)
        return f"{{:>{width}.{decimals}f}}{{:>{7 if marks else 0}}}", marks

    def _cell(self, j: int, m: common.Measurement | None) -> str:
        template, marks = self.formats[j]
        if m is None:
            return " " * len(template.format(1.0, ""))
        value = m.median / self.scale
        if self.trim:
            value = common.trim_sigfig(value, m.significant_figures)
        spread = f" (! {m.iqr / m.median * 100:.0f}%)" if marks and m.has_warnings else ""
        return template.format(value, spread)

    def render(self) -> str:
        envs = {r.env for r in self.results}
        show_env = len(envs) > 1
        env_width = max(len(str(e)) for e in envs) if show_env else 0
        texts = [[""] + ["" if c is None else str(c) for c in self.cols]]
        prev_env: Any = ""
        prev_threads = -1
        for (threads, env, name), row in zip(self.rows, self.cells):
            if threads != prev_threads:
                prev_env = ""
            shown = f"({env})" if show_env and env != prev_env else ""
            texts.append(["  " + shown.ljust(env_width + 4) + name] +
                         [self._cell(j, m) for j, m in enumerate(row)])
            prev_env, prev_threads = env, threads
        widths = [max(len(t[i]) for t in texts) for i in range(len(texts[0]))]
        header = "  |  ".join(t.center(w) for t, w in zip(texts[0], widths))
        lines = [header]
        prev_threads = -1
        for i, ((threads, _, _), row, text) in enumerate(zip(self.rows, self.cells, texts[1:])):
            if threads != prev_threads:
                lines.append(f"{threads} threads: ".ljust(len(header), "-"))
                prev_threads = threads
            parts = [text[0].ljust(widths[0])]
            for j, (cell, width, m) in enumerate(zip(text[1:], widths[1:], row)):
                cell = cell.center(width)
                best = self._best(i, j)
                if self.colorize is not Colorize.NONE and m is not None and best is not None:
                    cell = _paint(cell, m.median, best)
                parts.append(cell)
            lines.append("  |  ".join(parts))
        note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
                if self.warnings else "")
        title = f" {self.label or ''} ".center(len(header) - 2, "-")
        return (f"[{title}]\n" + "\n".join(lines) + "\n\nTimes are in "
                f"{common.unit_to_english(self.unit)}s ({self.unit}).\n{note}")

    def _best(self, i: int, j: int) -> float | None:
        """The reference median for colouring cell (i, j): its row's best (rowwise) or its
        column's best among rows of the same thread count (columnwise)."""
        if self.colorize is Colorize.ROWWISE:
            return min(m.median for m in self.cells[i] if m is not None)
        threads = self.rows[i][0]
        same = [m for m in (row[j] for k, row in enumerate(self.cells)
                            if self.rows[k][0] == threads) if m is not None]
        return min(m.median for m in same) if same else None


class Compare:
    """Measurements side by side: ``Compare(results).print()`` (or ``str(...)``); replicates of
    one TaskSpec are pooled first.

    Example:
        >>> Compare([m1, m2]).print()  # doctest: +SKIP
    """

    def __init__(self, results: list[common.Measurement]) -> None:
        self._results: list[common.Measurement] = []
        self.extend_results(results)
        self._trim = False
        self._colorize = Colorize.NONE
        self._highlight = False

    def extend_results(self, results: list[common.Measurement]) -> None:
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        self._highlight = True

    def __str__(self) -> str:
        by_label: dict[Any, list[common.Measurement]] = collections.defaultdict(list)
        for m in common.Measurement.merge(self._results):
            by_label[m.label].append(m)
        return "\n".join(_Table(group, self._colorize, self._trim, self._highlight).render()
                         for group in by_label.values())

    def print(self) -> None:
        print(str(self))
