"""``auto_checkpoint``: choose which submodules run under activation checkpointing so that a
training step's peak of ``memory_allocated`` fits a byte budget (issue #19).

Planning runs the step (forward, loss, backward) on the example inputs a few times:

1. **Profile** (after a warm-up step; times the median of three steps): every candidate
   submodule's forward time, and the bytes its ops save for backward (each storage once, by
   the candidate whose forward was running when it was first saved; storages some candidate
   takes as input, and those that existed before the step, are not counted: a checkpoint keeps
   its inputs, and the rest is not the candidate's to free).
2. **Choose** disjoint *segments*, each one checkpoint: a candidate alone, or a run of
   consecutive blocks of one ``Sequential`` (as ``checkpoint_sequential`` runs them: only the
   run's input is kept, so a run also frees its inner blocks' inputs), or on CUDA a block
   offloaded. Three models of the peak (``_checkpoint_choice``), tried in turn: *per segment*
   (the forward's end sheds the need, and each recomputation fits beside what the blocks before
   it keep), *optimistic* (only the last segment's recomputation counts, less what the blocks
   after it have freed by then) and *cautious* (any segment's bytes may come back at the peak).
   Each is a 0/1 knapsack ("min-cost cover") over intervals, solved exactly by one dynamic
   programme over the blocks in order and the bytes in 512 buckets. Exact rather than greedy
   because blocks differ in bytes per second (a transformer block's attention keeps more per
   second of forward than its MLP) and runs trade kept inputs against recomputed bytes; greedy
   by ratio overshoots by whole blocks, the bucket grain by at most 1/512 of the bytes to shed.
3. **Verify**: install the choice and measure the planned step's peak; while it is above the
   budget, ask for the shortfall more and choose again (a repeated choice asks for more, by
   doubling steps); when nothing meets the budget, the smallest peak measured (the choices that
   shed the most included) is in the error. The trials teach: two choices that peak at exactly
   the same bytes rule out the segments they share (that peak is their recomputation's), and a
   choice that sheds under half of its promise rules out its largest recomputation. A fitting
   choice is then relaxed: the models' choices for a ladder of needs (the room left under the
   budget less, and 80-100% of what the budget asks: the byte models err by a few per cent)
   that cost less are searched by bisection in order of cost (six measured at most), and the
   cheapest that fits is kept.

The candidates are the submodules a checkpoint can wrap: the root's children, with lists and
dicts of modules, a ``Sequential`` of blocks and ``nn.TransformerEncoder``/``Decoder`` replaced
by their children, so that they never nest; a module called more than once per step (shared)
is left out. The plan's ``predicted_peak`` is the verified trial step's peak (the same step on
the same inputs; the training step that follows has it too, within the allocator's order of
frees).

Planning leaves the module as it found it apart from the installed checkpoints and the
parameters' ``.grad``, which it leaves None (as ``zero_grad()`` does: old gradients kept alive
would count in every trial's peak); buffers (BatchNorm's running statistics) and the default
generators' states are put back. Checkpointed modules keep BatchNorm's running statistics
updated once per step (the recomputation's update is undone), and dropout draws the same masks
(``checkpoint``'s RNG replay), so the gradients are the unplanned step's exactly, on the CPU
and on CUDA.

**Offload** (on CUDA, ``offload=True`` by default there): a block may instead keep what its ops
save on the host, as under ``save_on_cpu`` (the parameters stay on the device: copying them
would free nothing), copied back when backward reads each one. It frees the block's saved
bytes and its input, and costs two copies, timed per copy and per byte on the device while
planning; the choices above take, for each block, the cheaper of recomputing and copying where
both shed enough. Backward brings an offloaded block's tensors back one node at a time, so the
byte models count none coming back at once.
"""

from __future__ import annotations

import contextlib
import gc
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from .. import memory as _memory
from .. import random as _random
from ..autograd.graph import _pack_to_cpu, _unpack_from_cpu, saved_tensors_hooks
from ..autograd.grad_mode import no_grad
from ..device import CPU
from ..profiler import _root as _array_root
from ..tensor import Tensor
from ._checkpoint_choice import (_BUCKETS, _MODELS, _Candidate, _cost, _key, _most, _seg_key,
                                 _Segment, _segments)

__all__ = ["CheckpointPlan", "auto_checkpoint"]

_CONTAINERS = ("ModuleList", "ModuleDict", "TransformerEncoder", "TransformerDecoder")
_RELAX_TRIALS = 6  # measured steps the relax step may spend on cheaper choices
_FALLBACK_TRIALS = 10  # measured steps for the choices tried when the search finds none


@dataclass
class CheckpointPlan:
    """What ``auto_checkpoint`` chose and installed; ``remove()`` takes it out again."""

    checkpointed: list[str]
    offloaded: list[str]
    baseline_peak: int
    predicted_peak: int
    predicted_overhead: float  # recompute time as a fraction of the baseline step
    budget: int
    step_seconds: float
    rows: list[dict[str, Any]] = field(default_factory=list)
    segments: list[str] = field(default_factory=list)  # one checkpoint each ("2..3": a run)
    _undo: list[Callable[[], None]] = field(default_factory=list, repr=False)
    _keep: set[int] = field(default_factory=set, repr=False)  # storages an offload leaves
    _chosen: list[_Segment] = field(default_factory=list, repr=False)

    def install(self) -> None:
        """Put the plan back on the module after ``remove()`` (nothing when it is installed)."""
        if not self._undo:
            _install(self, self._chosen)

    def remove(self) -> None:
        """Restore every checkpointed or offloading module's own forward."""
        while self._undo:
            self._undo.pop()()
        self.checkpointed = []
        self.segments = []
        self.offloaded = []

    def __str__(self) -> str:
        mib = 1 << 20
        lines = [f"activation checkpointing plan: budget {self.budget / mib:.2f} MiB, peak "
                 f"{self.baseline_peak / mib:.2f} -> {self.predicted_peak / mib:.2f} MiB, "
                 f"recompute {100 * self.predicted_overhead:.1f}% of the step",
                 "checkpoints: " + (", ".join(self.segments) or "none")]
        if self.offloaded:
            lines.append("offloaded to the host: " + ", ".join(self.offloaded))
        lines.append(f"{'module':<32} {'saved MiB':>10} {'forward ms':>11}  planned")
        for r in self.rows:
            how = "checkpoint" if r["checkpointed"] else "offload" if r.get("offloaded") else ""
            lines.append(f"{r['module']:<32} {r['saved'] / mib:>10.3f} {1e3 * r['seconds']:>11.3f}  "
                         f"{how}")
        return "\n".join(lines)


def auto_checkpoint(module: Any, *example_args: Any, budget: int | str,
                    loss_fn: Callable[[Any], Any] | None = None,
                    offload: bool | None = None) -> CheckpointPlan:
    """Checkpoint submodules of ``module`` (or, on CUDA, offload what they save to the host) so
    that a training step on ``example_args`` peaks at or under ``budget`` bytes of
    ``memory_allocated`` (or ``"50%"``: a share of the unplanned step's own peak), at the least
    recompute and copy time; see this module's docstring for the method.

    The step is ``loss_fn(module(*example_args))`` (``output.sum()`` without ``loss_fn``) and its
    ``backward()``. ``offload``: whether blocks may keep their saved tensors on the host
    (``save_on_cpu``'s way, parameters left on the device); default: on a CUDA module. Returns
    the installed ``CheckpointPlan``.

    Raises:
        ValueError: the budget is below the smallest peak that checkpointing (and offloading)
            every candidate reaches (named in the message), it is not a byte count or a
            percentage, or ``offload=True`` for a module on the CPU.

    Example:
        >>> model = nn.Sequential(*[nn.Sequential(nn.Linear(64, 64), nn.GELU()) for _ in range(8)])
        >>> plan = auto_checkpoint(model, randn(1024, 64), budget="75%")
        >>> plan.predicted_peak <= plan.budget
        True
    """
    dev = _device_of(module, example_args)
    on_cuda = getattr(dev, "type", "cpu") == "cuda"
    if offload and not on_cuda:
        raise ValueError("offload=True needs a module on a CUDA device: on the CPU the host "
                         "copy is counted in the same memory")
    offload = on_cuda if offload is None else offload
    gc.collect()  # NOTE: peaks are absolute bytes: garbage waiting for the collector would count
    with _trials_undone(module, dev):
        candidates = _candidates(module)
        base_peak, step_seconds = _profile(module, example_args, loss_fn, candidates, dev)
        limit = _budget(budget, base_peak)
        if offload:
            _offload_costs(candidates, dev)
        segments = _segments([c for c in candidates if c.calls == 1], offload)
        plan = CheckpointPlan([], [], base_peak, base_peak, 0.0, limit, step_seconds,
                              rows=[{"module": c.name, "saved": c.saved, "seconds": c.seconds,
                                     "checkpointed": False, "offloaded": False}
                                    for c in candidates])
        plan._keep = _state_roots(module)
        if base_peak <= limit:
            return plan

        def measure() -> int:
            return _peak(module, example_args, loss_fn, dev)

        trials = _Trials(base_peak)
        least = base_peak  # the smallest peak measured so far
        found = None
        # NOTE: the per-segment and the optimistic models for a few trials each; the cautious
        # one until it fits
        for choose, count in zip(_MODELS, (3, 3, 10 ** 9)):
            found, low = _search(plan, segments, base_peak - limit, limit, choose, count, trials,
                                 measure)
            least = min(least, low)
            if found is not None:
                break
        left = _FALLBACK_TRIALS
        for most in [] if found is not None else _most(segments, base_peak - limit):
            if _key(most) not in trials.tried and left > 0:  # NOTE: see _most
                left -= 1
                trials.tried.add(_key(most))
                _install(plan, most)
                peak = measure()
                least = min(least, peak)
                if peak <= limit:
                    found = most, peak, base_peak - limit
                    break
                plan.remove()
        if found is None:
            raise ValueError(
                f"budget of {limit} bytes is out of reach: the smallest peak found by "
                f"{'checkpointing and offloading' if offload else 'checkpointing'} submodules "
                f"is {least} bytes")
        chosen, peak, need = found
        chosen, peak = _relax(plan, chosen, peak, need, base_peak - limit, limit, segments,
                              trials.tried, measure)
        plan.predicted_peak = peak
        plan._chosen = chosen
        plan.predicted_overhead = _cost(chosen) / max(step_seconds, 1e-9)
        names, moved = set(plan.checkpointed), set(plan.offloaded)
        for r in plan.rows:
            r["checkpointed"] = r["module"] in names
            r["offloaded"] = r["module"] in moved
        return plan


# ---- the parts --------------------------------------------------------------------------------

def _candidates(module: Any) -> list[_Candidate]:
    out: list[_Candidate] = []

    def visit(m: Any, prefix: str) -> None:
        chain = m if type(m).__name__ == "Sequential" else None
        for i, (name, child) in enumerate(m._modules.items()):
            if child is None:
                continue
            q = f"{prefix}{name}"
            kind = type(child).__name__
            # NOTE: lists and dicts are never called; a Sequential of blocks (children with
            # children) is a sequence to choose in, a Sequential of layers is one block; a
            # transformer encoder or decoder calls its layers one by one (each may be chosen)
            if kind in _CONTAINERS or kind == "Sequential" and any(
                    any(True for _ in g.children()) for g in child.children()):
                visit(child, q + ".")
            else:
                out.append(_Candidate(q, child, chain, i, order=len(out)))

    visit(module, "")
    return out


def _device_of(module: Any, args: tuple[Any, ...]) -> Any:
    for p in module.parameters():
        return p.device
    for a in args:
        if isinstance(a, Tensor):
            return a.device
    return CPU


def _step(module: Any, args: tuple[Any, ...], loss_fn: Callable[[Any], Any] | None) -> None:
    out = module(*args)
    loss = loss_fn(out) if loss_fn is not None else out.sum()
    loss.backward()


def _sync(dev: Any) -> None:
    if getattr(dev, "type", "cpu") == "cuda":
        from .. import cuda

        cuda.synchronize(dev)


def _peak(module: Any, args: tuple[Any, ...], loss_fn: Callable[[Any], Any] | None,
          dev: Any) -> int:
    """The peak of ``memory_allocated`` over one step (gradients set to None first, as after
    ``zero_grad``)."""
    for p in module.parameters():
        p.grad = None
    _memory.reset_peak_memory_stats(dev)
    _step(module, args, loss_fn)
    return _memory.max_memory_allocated(dev)


def _root(t: Tensor) -> Any:
    """The array that owns ``t``'s storage (the end of its ``.base`` chain)."""
    return _array_root(t._data)


def _root_id(t: Tensor) -> int:
    return id(_root(t))


def _state_roots(module: Any) -> set[int]:
    """The storages of ``module``'s parameters and buffers (by ``id``)."""
    return {_root_id(t) for t in list(module.parameters()) + list(module.buffers())}


def _timed(dev: Any, fn: Callable[[], Any]) -> float:
    """The median of three runs of ``fn``, in seconds between synchronisations of ``dev``."""
    took = []
    for _ in range(3):
        _sync(dev)
        t0 = time.perf_counter()
        fn()
        _sync(dev)
        took.append(time.perf_counter() - t0)
    return _median(took)


def _profile(module: Any, args: tuple[Any, ...], loss_fn: Callable[[Any], Any] | None,
             candidates: list[_Candidate], dev: Any) -> tuple[int, float]:
    """Steps with hooks: each candidate's saved bytes (and copies, for offloading) from one, its
    forward time the median of three; returns the step's peak and its time (the median of
    three hook-free steps)."""
    existing = _state_roots(module) | {_root_id(a) for a in args if isinstance(a, Tensor)}
    seen: set[int] = set()
    keep: list[Any] = []  # NOTE: the storages stay alive while profiling, so ids stay unique
    running: list[tuple[_Candidate, float]] = []
    saved: list[tuple[_Candidate, int, int]] = []  # (saver, storage id, bytes)
    inputs: set[int] = set()  # storages some candidate takes as input
    times: dict[int, list[float]] = {id(c): [] for c in candidates}
    first = True  # the step that counts calls and inputs

    def pre(c: _Candidate) -> Callable[..., None]:
        def hook(_: Any, args: Any) -> None:
            _sync(dev)
            if first:
                c.calls += 1
                for a in args:
                    if isinstance(a, Tensor):
                        root = _root(a)
                        if id(root) not in existing and id(root) not in inputs:
                            c.inputs += int(root.nbytes)
                        inputs.add(id(root))
            running.append((c, time.perf_counter()))
        return hook

    def post(c: _Candidate) -> Callable[..., None]:
        def hook(*_: Any) -> None:
            _sync(dev)
            for i in range(len(running) - 1, -1, -1):
                if running[i][0] is c:
                    times[id(c)][-1] += time.perf_counter() - running[i][1]
                    del running[i]
                    break
        return hook

    def pack(t: Tensor) -> Tensor:
        root = _root(t)
        key = id(root)
        if running and key not in existing:
            c = running[-1][0]
            c.copies += 1
            c.copy_bytes += t.numel() * t.element_size()
        if key not in seen:
            seen.add(key)
            keep.append(t)
            if running and key not in existing:
                saved.append((running[-1][0], key, int(root.nbytes)))
        return t

    # NOTE: a first step warms what ops cache per layout (conv and pool plans), so that the
    # profiled step's times are those of the training steps that follow
    _step(module, args, loss_fn)
    handles = []
    for c in candidates:
        handles.append(c.module.register_forward_pre_hook(pre(c)))
        handles.append(c.module.register_forward_hook(post(c)))
    try:
        # NOTE: the median of three steps' times, so that one step's noise does not move the
        # choice; the bytes from the first
        for _ in range(3):
            for p in module.parameters():
                p.grad = None
            for v in times.values():
                v.append(0.0)
            if first:
                with saved_tensors_hooks(pack, lambda t: t):
                    _step(module, args, loss_fn)
                keep.clear()
                first = False
            else:
                _step(module, args, loss_fn)
    finally:
        for h in handles:
            h.remove()
        keep.clear()
    for c in candidates:
        c.seconds = _median(times[id(c)])
    # NOTE: a block's output that the next block takes in stays alive either way (that block's
    # checkpoint keeps it, or its own ops save it): not the saver's to free
    for c, key, n in saved:
        if key not in inputs:
            c.saved += n
    peak = _peak(module, args, loss_fn, dev)
    return peak, _timed(dev, lambda: _step(module, args, loss_fn))


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def _offload_costs(candidates: list[_Candidate], dev: Any) -> None:
    """Each candidate's ``offload_seconds``: its copies to the host and back, at a cost per copy
    and per byte measured here (a small and a large round trip, the median of three each)."""
    def round_trip(n: int) -> float:
        from ..creation_fill import empty

        x = empty(n // 4, device=dev)
        return _timed(dev, lambda: x.to("cpu").to(dev))

    small = 4096
    large = max([c.copy_bytes // max(c.copies, 1) for c in candidates] + [1 << 20])
    t_small, t_large = round_trip(small), round_trip(large)
    per_byte = max(t_large - t_small, 0.0) / (large - small)
    per_copy = max(t_small - small * per_byte, 0.0)
    for c in candidates:
        c.offload_seconds = c.copies * per_copy + c.copy_bytes * per_byte


def _budget(budget: int | str, base_peak: int) -> int:
    if isinstance(budget, str):
        text = budget.strip()
        if not text.endswith("%"):
            raise ValueError(f"budget must be a number of bytes or a percentage like '50%', "
                             f"got {budget!r}")
        return int(base_peak * float(text[:-1]) / 100)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ValueError(f"budget must be a number of bytes or a percentage like '50%', "
                         f"got {budget!r}")
    return budget


@dataclass
class _Trials:
    """What the measured choices taught: the choices tried, the first choice that peaked at
    each byte count, and the segments ruled out."""

    base_peak: int  # the unplanned step's
    tried: set[tuple[str, ...]] = field(default_factory=set)
    peaks: dict[int, frozenset[str]] = field(default_factory=dict)
    banned: set[str] = field(default_factory=set)
    lessons: int = 8  # trials given back for what they ruled out, at most


def _search(plan: CheckpointPlan, segments: list[_Segment], need: int, limit: int,
            choose: Callable[[list[_Segment], int], list[_Segment] | None], count: int,
            trials: _Trials, measure: Callable[[], int]
            ) -> tuple[tuple[list[_Segment], int, int] | None, int]:
    """Choose with ``choose``, install, measure; while the peak is above ``limit`` ask for the
    shortfall more (a repeated choice: more, by doubling steps), at most ``count`` measured
    choices. Two choices that peak at exactly the same bytes rule out the segments they share:
    the peak comes from them (a recomputation that brings back more than the step held there),
    not from what is left to shed; a choice that sheds less than half of what it was chosen for
    rules out its largest recomputation (eight such lessons at most). Returns ((choice, its
    peak, the need it met) or None, the smallest peak measured); a choice that fits stays
    installed."""
    def allowed() -> list[_Segment]:
        return [g for g in segments if _seg_key(g) not in trials.banned]

    least = 1 << 62
    bump = 0
    active = allowed()
    while count > 0:
        chosen = choose(active, need)
        if chosen is None:
            break
        key = _key(chosen)
        if key in trials.tried:
            # NOTE: ask for more until the choice changes, a step that doubles each time (the
            # model may put the next choice far off)
            bump = max(2 * bump, need // _BUCKETS, 1)
            need += bump
            continue
        bump = 0
        trials.tried.add(key)
        count -= 1
        _install(plan, chosen)
        peak = measure()
        least = min(least, peak)
        if peak <= limit:
            return (chosen, peak, need), least
        plan.remove()
        twin = trials.peaks.setdefault(peak, frozenset(key))
        stuck = twin & frozenset(key) if twin != frozenset(key) else frozenset()
        if trials.base_peak - peak < need // 2:
            # NOTE: it shed less than half of what the model promised: its largest
            # recomputation, brought back next to the gradients, sets the peak
            stuck = frozenset([_seg_key(max(chosen, key=lambda g: g.back))])
        if stuck and trials.lessons > 0:  # NOTE: a lesson, not a miss: the trial is given back
            trials.lessons -= 1
            count += 1
            trials.banned |= stuck
            active = allowed()
            continue
        need += peak - limit
    return None, least


def _relax(plan: CheckpointPlan, chosen: list[_Segment], peak: int, need: int, first: int,
           limit: int, segments: list[_Segment], tried: set[tuple[str, ...]],
           measure: Callable[[], int]) -> tuple[list[_Segment], int]:
    """Look for a cheaper choice that still fits. The byte models err by a few per cent either
    way, and the search may have asked for more than needed: the models' choices for a ladder
    of needs (the room left under the budget less than ``need``, and 80-100% of what the budget
    asks, ``first``) that cost less than ``chosen``, in order of cost, are searched by bisection
    (what fits is taken to stay fitting as the cost grows), at most ``_RELAX_TRIALS`` measured;
    the cheapest that fits is kept (``chosen`` otherwise)."""
    asks = {int(first * (0.8 + 0.02 * i)) for i in range(11)}
    if limit - peak > need // _BUCKETS:
        asks.add(need - (limit - peak))
    found: dict[tuple[str, ...], list[_Segment]] = {}
    for asked in sorted(a for a in asks if a > 0):
        for choose in _MODELS:
            other = choose(segments, asked)
            if other is not None and _key(other) not in tried and _cost(other) < _cost(chosen):
                found[_key(other)] = other
    options = sorted(found.values(), key=_cost)
    best: tuple[list[_Segment], int] = chosen, peak
    lo, hi, left = 0, len(options) - 1, _RELAX_TRIALS
    while lo <= hi and left > 0:
        mid = (lo + hi) // 2
        tried.add(_key(options[mid]))
        left -= 1
        plan.remove()
        _install(plan, options[mid])
        got = measure()
        if got <= limit:
            best, hi = (options[mid], got), mid - 1
        else:
            lo = mid + 1
    plan.remove()
    _install(plan, best[0])
    return best


def _install(plan: CheckpointPlan, chosen: list[_Segment]) -> None:
    """Each segment under ``checkpoint``: a lone module's own forward is wrapped; segments of a
    Sequential are run by a forward installed on it that chains its modules as
    ``Sequential.forward`` does, each segment as one checkpointed call (as
    ``checkpoint_sequential`` runs them)."""
    from .checkpoint import _chain, checkpoint

    chains: dict[int, tuple[Any, dict[int, _Segment]]] = {}
    for g in chosen:
        if g.offload:
            m = g.blocks[0].module
            plan.offloaded.append(g.name)
            _patch(plan, m, _offloading(m.forward, plan._keep))
            continue
        plan.checkpointed.extend(c.name for c in g.blocks)
        plan.segments.append(g.name)
        first = g.blocks[0]
        if first.parent is not None:
            chains.setdefault(id(first.parent), (first.parent, {}))[1][first.index] = g
            continue
        m = first.module
        inner = m.forward

        def forward(*a: Any, _f: Callable[..., Any] = inner, _m: Any = m, **k: Any) -> Any:
            return checkpoint(_f, *a, use_reentrant=False, context_fn=_stats_kept([_m]), **k)

        _patch(plan, m, forward)
    for parent, by_start in chains.values():
        def chained(x: Any, _p: Any = parent, _s: dict[int, _Segment] = by_start) -> Any:
            mods = list(_p._modules.values())
            i = 0
            while i < len(mods):
                g = _s.get(i)
                if g is None:
                    x = mods[i](x)
                    i += 1
                    continue
                run = mods[i:i + len(g.blocks)]
                x = checkpoint(_chain, run, x, use_reentrant=False, context_fn=_stats_kept(run))
                i += len(run)
            return x

        _patch(plan, parent, chained)


def _offloading(inner: Callable[..., Any], keep: set[int]) -> Callable[..., Any]:
    """``inner`` with what its ops save kept on the host, as under ``save_on_cpu``, except the
    storages in ``keep`` (the parameters and buffers: they stay on the device anyway)."""
    def pack(t: Tensor) -> tuple[Any, Any]:
        return (t._device, t) if _root_id(t) in keep else _pack_to_cpu(t)

    def forward(*a: Any, **k: Any) -> Any:
        with saved_tensors_hooks(pack, _unpack_from_cpu):
            return inner(*a, **k)

    return forward


def _patch(plan: CheckpointPlan, m: Any, forward: Callable[..., Any]) -> None:
    own = m.__dict__.get("forward")
    m.forward = forward

    def undo(_m: Any = m, _own: Any = own) -> None:
        if _own is None:
            _m.__dict__.pop("forward", None)
        else:
            _m.forward = _own

    plan._undo.append(undo)


def _stats_kept(mods: list[Any]) -> Callable[[], tuple[Any, Any]]:
    """``checkpoint``'s ``context_fn``: around the recomputation, BatchNorm's running statistics
    (the buffers of ``mods``) are put back afterwards, so a step updates them once."""
    return lambda: (contextlib.nullcontext(), _buffers_kept(mods))


@contextlib.contextmanager
def _buffers_kept(mods: list[Any]) -> Iterator[None]:
    """The buffers of ``mods`` as they are now, put back on exit."""
    kept = [(b, b.detach().clone()) for m in mods for b in m.buffers()]
    try:
        yield
    finally:
        with no_grad():
            for b, saved in kept:
                b.copy_(saved)


@contextlib.contextmanager
def _trials_undone(module: Any, dev: Any) -> Iterator[None]:
    """What planning's trial steps change, put back on exit: the buffers and the default
    generators' states; the parameters' ``.grad`` are left None (as ``zero_grad()`` leaves
    them)."""
    params = list(module.parameters())
    for p in params:  # NOTE: not the old gradients: kept, they would count in every trial's peak
        p.grad = None
    devices = [CPU] if dev == CPU else [CPU, dev]
    rng = [(g, g.get_state()) for g in (_random.default_generator(d) for d in devices)]
    try:
        with _buffers_kept([module]):
            yield
    finally:
        for p in params:
            p.grad = None
        for g, state in rng:
            g.set_state(state)
