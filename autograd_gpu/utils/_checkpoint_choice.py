"""The choice step of ``auto_checkpoint`` (issue #19): which *segments* (a block alone, a run of
consecutive blocks of one ``Sequential``, or, on CUDA, a block offloaded to the host) shed the
bytes the budget asks for at the least recompute and copy time. Pure bookkeeping on the
profiled numbers: no tensors here; ``_auto_checkpoint`` profiles, installs and measures.

Three models of the peak (``_choose_full``, ``_choose_last``, ``_choose_capped``, tried in that
order: ``_MODELS``); each is an exact interval min-cost cover by one dynamic programme over the
blocks in order and the bytes in ``_BUCKETS`` buckets (``_cover``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

_BUCKETS = 512


@dataclass
class _Candidate:
    name: str
    module: Any
    parent: Any = None  # the Sequential that chains it to its neighbours, if any
    index: int = 0  # its place among the parent's modules
    saved: int = 0  # bytes its ops save for backward (see the module's docstring)
    inputs: int = 0  # bytes of its input storages made in the step
    seconds: float = 0.0  # its forward time (the median of the profiled steps)
    calls: int = 0
    order: int = 0  # its place among the candidates (the module tree's order)
    copies: int = 0  # tensors its ops save that are not parameters or buffers
    copy_bytes: int = 0  # their bytes (what offloading copies to the host and back)
    offload_seconds: float = 0.0  # the two copies' estimated time (on CUDA)


@dataclass
class _Segment:
    """Consecutive candidates of one Sequential (or one candidate) under one checkpoint: it
    frees what they save and the inputs of all but the first."""

    blocks: list[_Candidate]
    offload: bool = False  # saved tensors offloaded to the host instead (one block, on CUDA)

    @property
    def saved(self) -> int:
        if self.offload:  # NOTE: its input too goes to the host (unless a block before saves it)
            return sum(c.saved + c.inputs for c in self.blocks)
        return sum(c.saved for c in self.blocks) + sum(c.inputs for c in self.blocks[1:])

    @property
    def back(self) -> int:
        """Bytes backward brings back at once: a recomputation all it freed; an offloaded
        block's tensors come back one node at a time (counted as none)."""
        return 0 if self.offload else self.saved

    @property
    def seconds(self) -> float:
        """Its cost: the recomputed forward, or the copies to the host and back."""
        if self.offload:
            return sum(c.offload_seconds for c in self.blocks)
        return sum(c.seconds for c in self.blocks)

    @property
    def name(self) -> str:
        first, last = self.blocks[0].name, self.blocks[-1].name
        return first if first == last else f"{first}..{last}"


def _segments(cands: list[_Candidate], offload: bool = False) -> list[_Segment]:
    """Every segment: each candidate alone, and every run of consecutive candidates of one
    Sequential; with ``offload``, also each candidate offloaded (consecutive offloaded blocks
    free their inner inputs as a run does, with no chaining)."""
    out: list[_Segment] = []
    run: list[_Candidate] = []
    for c in cands + [_Candidate("", None)]:
        if run and (c.parent is None or c.parent is not run[-1].parent
                    or c.index != run[-1].index + 1):
            out.extend(_Segment(run[a:b + 1]) for a in range(len(run))
                       for b in range(a, len(run)))
            run = []
        if c.module is None:
            break
        if c.parent is None:
            out.append(_Segment([c]))
        else:
            run.append(c)
        if offload:
            out.append(_Segment([c], offload=True))
    return [g for g in out if g.saved > 0]


def _most(segments: list[_Segment], need: int) -> list[list[_Segment]]:
    """Choices to measure when none meets ``need``: those that shed the most by each model (the
    largest need each still meets, found by bisection below ``need``), the plain extremes (every
    block checkpointed alone, every block offloaded where offloading is offered), and the
    models' choices for smaller needs."""
    out = []
    for choose in _MODELS:
        lo, hi, found = 0, need, None
        for _ in range(16):
            mid = (lo + hi) // 2
            got = choose(segments, max(mid, 1))
            if got is None:
                hi = mid
            else:
                lo, found = mid, got
        if found is not None:
            out.append(found)
    for offload in (False, True):
        alone = [g for g in segments if len(g.blocks) == 1 and g.offload == offload]
        if alone:
            out.append(sorted(alone, key=lambda g: g.blocks[0].order))
    # NOTE: and the models' choices for a quarter, a half and three quarters of ``need``: the
    # choice that sheds the most can peak higher (its recomputations) than a smaller one
    for share in (0.25, 0.5, 0.75):
        for choose in _MODELS:
            got = choose(segments, max(int(need * share), 1))
            if got is not None:
                out.append(got)
    return out


def _choose_last(segments: list[_Segment], need: int) -> list[_Segment] | None:
    """Disjoint segments of least total forward time that shed ``need`` bytes, or None.

    The model: a choice frees what its segments save, and backward brings the last segment's
    bytes back while it recomputes it, less what the blocks after it (not checkpointed) have
    freed by then (what they saved and took as input). For each segment as the last one, the
    rest is a min-cost cover by the segments before it, from one dynamic programme over the
    blocks in order and the bytes in 512 buckets (rounded down, so a choice never falls short);
    the cheapest over the last segments."""
    unit, goal = _grain(need)
    blocks, order = _block_order(segments)
    n = len(blocks)
    # NOTE: what the blocks from k on hold (prefix[n] - prefix[k]), checkpointed by none:
    # backward has freed it by the time it recomputes a segment before them
    prefix = _held(blocks)
    inf = float("inf")
    dp, back = _cover(segments, order, n, goal, unit)
    best: tuple[float, Any, int, int] | None = None
    for g in segments:
        first, end = order[id(g.blocks[0])], order[id(g.blocks[-1])] + 1
        back_bytes = max(0, g.back - (prefix[n] - prefix[end]))
        rest = need + back_bytes - g.saved
        if rest > need:  # NOTE: it brings back more than it frees
            continue
        lo = 0 if rest <= 0 else min(goal, math.ceil(rest / unit))
        row = dp[first]
        b = min(range(lo, goal + 1), key=lambda i: row[i])
        if row[b] == inf:
            continue
        total = row[b] + g.seconds
        if best is None or total < best[0]:
            best = (total, g, first, b)
    if best is None:
        return None
    _, last, pos, b = best
    return _trace(back, pos, b) + [last]


def _choose_capped(segments: list[_Segment], need: int) -> list[_Segment] | None:
    """The cautious model: what the segments save adds up to ``need`` plus the largest one's
    (as if any recomputation could come at the peak). For each cap on a segment's bytes, a
    min-cost cover by the segments under the cap (``_cover``); the cheapest over the caps. None
    when no choice covers ``need``."""
    unit, _ = _grain(need)
    blocks, order = _block_order(segments)
    n = len(blocks)
    best_choice: list[_Segment] | None = None
    best_time = float("inf")
    for cap in sorted({int(g.back / unit) for g in segments}):
        goal = math.ceil(need / unit) + cap
        dp, back = _cover([g for g in segments if int(g.back / unit) <= cap], order, n, goal,
                          unit)
        if dp[n][goal] < best_time:
            best_time = dp[n][goal]
            best_choice = _trace(back, n, goal)
    return best_choice


def _choose_full(segments: list[_Segment], need: int) -> list[_Segment] | None:
    """The per-segment model: the forward's end sheds ``need`` (what the choice saves), and each
    segment's recomputation fits beside what is alive when backward reaches it: the bytes the
    blocks before it keep (all they save and take as input, less what earlier segments shed)
    plus what it brings back must stay within the room the blocks had at the forward's end less
    ``need``. One ``_cover`` with that test at each segment's start (on the shed bytes rounded
    down, so the test errs on the safe side)."""
    unit, goal = _grain(need)
    blocks, order = _block_order(segments)
    n = len(blocks)
    prefix = _held(blocks)
    room = prefix[n] - need

    def admit(g: _Segment, pos: int, b: int) -> bool:
        return prefix[pos] - b * unit + g.back <= room

    dp, back = _cover(segments, order, n, goal, unit, admit)
    return None if dp[n][goal] == float("inf") else _trace(back, n, goal)


def _grain(need: int) -> tuple[float, int]:
    """The byte bucket for shedding ``need`` and the buckets ``need`` takes (``_BUCKETS``, or
    ``need`` itself when it is smaller: one byte a bucket)."""
    return max(need / _BUCKETS, 1.0), _BUCKETS if need > _BUCKETS else int(need)


def _held(blocks: list[_Candidate]) -> list[int]:
    """``prefix[k]``: what the first ``k`` blocks hold at the forward's end (all they save and
    take as input)."""
    prefix = [0] * (len(blocks) + 1)
    for k, c in enumerate(blocks):
        prefix[k + 1] = prefix[k] + c.saved + c.inputs
    return prefix


def _cost(chosen: list[_Segment]) -> float:
    """A choice's recompute (and copy) time."""
    return sum(g.seconds for g in chosen)


def _block_order(segments: list[_Segment]) -> tuple[list[_Candidate], dict[int, int]]:
    """The blocks of ``segments`` in the step's order, and each one's place (by ``id``)."""
    blocks = sorted({id(c): c for g in segments for c in g.blocks}.values(),
                    key=lambda c: c.order)
    return blocks, {id(c): k for k, c in enumerate(blocks)}


def _cover(segments: list[_Segment], order: dict[int, int], n: int, goal: int,
           unit: float, admit: Callable[[_Segment, int, int], bool] | None = None
           ) -> tuple[list[list[float]], list[list[Any]]]:
    """The min-cost cover by disjoint ``segments``, by dynamic programming over the ``n`` blocks
    in order and their saved bytes in buckets of ``unit`` (rounded down, so a choice never falls
    short; ``goal`` buckets or more count as ``goal``): ``dp[pos][b]``, the least forward time
    of segments within the first ``pos`` blocks that save ``b`` buckets, and ``back`` for
    ``_trace``. ``admit(segment, pos, b)``: whether a segment may start at block ``pos`` after
    ``b`` buckets shed (default: always)."""
    inf = float("inf")
    starts: dict[int, list[_Segment]] = {}
    for g in segments:
        starts.setdefault(order[id(g.blocks[0])], []).append(g)
    dp: list[list[float]] = [[inf] * (goal + 1) for _ in range(n + 1)]
    back: list[list[Any]] = [[None] * (goal + 1) for _ in range(n + 1)]
    dp[0][0] = 0.0
    for pos in range(n):
        row = dp[pos]
        for b in range(goal + 1):
            t = row[b]
            if t == inf:
                continue
            if t < dp[pos + 1][b]:  # this block not checkpointed
                dp[pos + 1][b] = t
                back[pos + 1][b] = (pos, b, None)
            for g in starts.get(pos, ()):
                if admit is not None and not admit(g, pos, b):
                    continue
                end = order[id(g.blocks[-1])] + 1
                k = min(goal, b + int(g.saved / unit))
                if t + g.seconds < dp[end][k]:
                    dp[end][k] = t + g.seconds
                    back[end][k] = (pos, b, g)
    return dp, back


def _trace(back: list[list[Any]], pos: int, b: int) -> list[_Segment]:
    """The segments of ``_cover``'s choice ending at ``dp[pos][b]``, in order."""
    chosen: list[_Segment] = []
    while pos:
        pos, b, g = back[pos][b]
        if g is not None:
            chosen.append(g)
    return chosen[::-1]


def _seg_key(g: _Segment) -> str:
    return g.name + " (offload)" * g.offload


def _key(chosen: list[_Segment]) -> tuple[str, ...]:
    return tuple(_seg_key(g) for g in chosen)


# NOTE: the models in the order the search tries them: the per-segment one first, the optimistic
# one, then the cautious one (it asks the most, so it errs least on the short side)
_MODELS: tuple[Callable[[list[_Segment], int], list[_Segment] | None], ...] = (
    _choose_full, _choose_last, _choose_capped)
