"""Activation-memory profiler: which op and which module keep how many bytes for backward.

``profile_memory(model)`` is a context manager. Inside it every tensor an op saves for backward
passes through a ``saved_tensors_hooks`` pack hook, which records it once per storage (the root
buffer: the end of the array's ``.base`` chain) with the op that saved it (its node's ``name()``,
e.g. ``"AddmmBackward0"``) and the innermost module whose forward was running (forward pre/post
hooks on ``model``'s modules). The allocated-bytes timeline (``memory_allocated`` of the device) is
sampled at module boundaries, at every saved tensor, and in backward at every saved tensor read
back; each sample also keeps the exact peak since the previous one. The phase switches to
``backward`` at the first saved tensor read back, and to ``forward`` again at the next one saved.

Sequence modules need nothing special: a recurrent layer's time loop saves every step's tensors
inside the layer's forward (the fused LSTM cell's gate activations included), and attention's
scores, weights and head-split q/k/v are saved inside ``MultiheadAttention``'s forward (its
``out_proj`` is used through ``F.linear``, never called), so all of them go to that module;
``F.relu`` in a transformer layer's feed-forward block goes to the layer itself.

Saved storages that existed before the forward (parameters, buffers, the model's inputs, on the
CPU any storage alive at entry, elsewhere any grad-free leaf tensor an op takes as input) are kept apart (kind ``"parameter"``/``"input"``); the
totals and tables count the ``"activation"`` kind: the bytes the graph keeps alive.

NOTE: the profiler resets the device's peak statistics (as ``reset_peak_memory_stats``) at entry
and at every sample. Inner ``saved_tensors_hooks`` (``checkpoint``, ``save_on_cpu``) win over the
profiler's: what they keep in place of a tensor is not recorded, which is what they save.
``plot_timelines`` draws several profiles on one PNG (a step before and after a checkpointing
plan: ``autograd-gpu memory --budget``). ``savings_report`` and ``LeakDetector`` live in
``autograd_gpu._memory_report``.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from . import memory as _memory
from .autograd.graph import saved_tensors_hooks
from .autograd.node import _INPUT, SAVED_HOOKS, _check_version
from .device import CPU
from .device import device as _device
from .tensor import Tensor

__all__ = ["LeakDetector", "GraphLeakWarning", "MemoryProfile", "SavedRecord",
           "detect_graph_leaks", "plot_timelines", "profile_memory", "savings_report"]


@dataclass
class SavedRecord:
    """One storage saved for backward: its size, first saver (op and module) and kind."""

    op: str
    module: str
    shape: list[int]
    dtype: str
    bytes: int
    kind: str  # "activation", "parameter" or "input"
    count: int = 1  # how many times it was saved (by how many ops, or entries)
    event: int = 0  # index of the timeline sample taken when it was first saved


@dataclass
class _Packed:
    """What a node keeps instead of the saved tensor: the same array (so the same memory), its
    device and version counter, and the version at saving time."""

    data: Any
    dev: Any
    counter: Any
    version: int


def _root(array: Any) -> Any:
    a = array
    b = getattr(a, "base", None)
    while b is not None and hasattr(b, "nbytes"):
        a = b
        b = getattr(a, "base", None)
    return a


def _saving_node() -> tuple[str, bool]:
    """The name of the node whose pack hook is running, and whether the tensor is one of the
    op's inputs (not an output or an array the op made)."""
    packing = SAVED_HOOKS.packing
    if packing is None:
        return "<unknown>", False
    node, kind = packing
    return node.name(), kind == _INPUT


@dataclass
class MemoryProfile:
    """The result of ``profile_memory``: saved storages, timeline, phases and peaks."""

    device: str = "cpu"
    baseline: int = 0
    saved: list[SavedRecord] = field(default_factory=list)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    phases: list[dict[str, Any]] = field(default_factory=list)

    # ---- figures ------------------------------------------------------------------------------
    @property
    def total_bytes(self) -> int:
        """Bytes of the unique saved activations (storages made during the profiled code)."""
        return sum(r.bytes for r in self.saved if r.kind == "activation")

    @property
    def peaks(self) -> dict[str, int]:
        """Peak allocated bytes per phase name and ``"overall"`` (absolute, not less baseline)."""
        out: dict[str, int] = {"overall": self.baseline}
        for s in self.timeline:
            out[s["phase"]] = max(out.get(s["phase"], 0), s["peak"], s["allocated"])
            out["overall"] = max(out["overall"], s["peak"], s["allocated"])
        return out

    def rows(self, by: str = "module", kind: str = "activation") -> list[dict[str, Any]]:
        """Per-module or per-op rows ``{name, bytes, count, share}``, largest first.

        Args:
            by: ``"module"`` or ``"op"``.
            kind: which saved storages count: ``"activation"`` (default) or ``"all"``.
        """
        if by not in ("module", "op"):
            raise ValueError(f"table(by=...) takes 'module' or 'op', not {by!r}")
        groups: dict[str, list[int]] = {}
        for r in self.saved:
            if kind != "all" and r.kind != kind:
                continue
            g = groups.setdefault(r.module if by == "module" else r.op, [0, 0])
            g[0] += r.bytes
            g[1] += 1
        total = sum(b for b, _ in groups.values()) or 1
        rows = [{"name": k, "bytes": b, "count": n, "share": b / total}
                for k, (b, n) in groups.items()]
        return sorted(rows, key=lambda r: (-r["bytes"], r["name"]))

    def table(self, by: str = "module", kind: str = "activation") -> str:
        """``rows(by, kind)`` as a text table with a total line."""
        rows = self.rows(by, kind)
        width = max([len(by)] + [len(r["name"]) for r in rows]) + 2
        lines = [f"{by:<{width}}{'bytes':>14}{'count':>8}{'share':>9}",
                 "-" * (width + 31)]
        for r in rows:
            lines.append(f"{r['name']:<{width}}{r['bytes']:>14,}{r['count']:>8}"
                         f"{100 * r['share']:>8.1f}%")
        lines.append("-" * (width + 31))
        lines.append(f"{'total':<{width}}{sum(r['bytes'] for r in rows):>14,}"
                     f"{sum(r['count'] for r in rows):>8}{'100.0%' if rows else '':>9}")
        return "\n".join(lines)

    # ---- export -------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "baseline": self.baseline,
                "total_bytes": self.total_bytes, "peaks": self.peaks,
                "saved": [asdict(r) for r in self.saved], "timeline": self.timeline,
                "phases": self.phases}

    def to_json(self, indent: int | None = None) -> str:
        """The profile as JSON (``from_json`` reads it back)."""
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_json(cls, text: str) -> MemoryProfile:
        d = json.loads(text)
        return cls(device=d["device"], baseline=d["baseline"],
                   saved=[SavedRecord(**r) for r in d["saved"]], timeline=d["timeline"],
                   phases=d["phases"])

    def plot(self, path: Any, title: str | None = None) -> Any:
        """Write a PNG of the allocated-bytes timeline: forward/backward phases shaded, module
        boundaries (the model's direct children) as dotted lines, interval peaks as a thin line.
        ``path``: a file name or a binary file object. Needs matplotlib (imported here). Returns
        ``path``. ``plot_timelines`` draws several profiles on one axes."""
        return plot_timelines([("allocated", self)], path, title=title)


def plot_timelines(profiles: Sequence[tuple[str, MemoryProfile]], path: Any,
                   title: str | None = None, lines: Sequence[tuple[str, int]] = ()) -> Any:
    """Write a PNG of the allocated-bytes timelines of ``profiles`` (``(label, profile)`` pairs)
    on the same axes (MiB against the sample index), with ``lines`` (``(label, bytes)``: a
    budget, a measured peak) as horizontal dashed lines.

    One profile is drawn as ``MemoryProfile.plot`` draws it: against the sample index, its
    forward and backward phases shaded, the model's direct children's boundaries dotted, its
    interval peaks as a thin red line, the allocated bytes in black. Several profiles (e.g. a
    step before and after ``auto_checkpoint``) each get a colour (allocated bytes with dots,
    interval peaks thin); as their samples differ in number (a checkpointed module's saved
    tensors are not sampled), each profile's samples are spread evenly over each of its phases,
    so that the phases line up: the x axis is forward, backward (and any further phases), with
    the boundaries as grey lines. ``path``: a file name or a binary file object. Needs
    matplotlib (a bare Agg figure: no pyplot, no global backend switch). Returns ``path``.
    """
    if not profiles:
        raise ValueError("plot_timelines needs at least one (label, profile) pair")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    mib = 1024.0 ** 2
    fig = Figure(figsize=(10, 4.5))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    if len(profiles) == 1:
        _draw_one(ax, profiles[0][1])
        ax.set_xlabel("sample (module boundary, saved tensor, saved tensor read)")
    else:
        _draw_several(ax, profiles)
    for k, (label, value) in enumerate(lines):
        ax.axhline(value / mib, color=["tab:red", "tab:blue", "tab:olive"][k % 3],
                   linestyle="--", linewidth=1.0, label=f"{label}: {value / mib:.2f} MiB")
    ax.set_ylabel("MiB")
    first = profiles[0][1]
    ax.set_title(title or f"autograd_gpu activation memory ({first.device}); saved "
                 f"activations {first.total_bytes / mib:.2f} MiB")
    # NOTE: the legend sits right of the axes: inside, wherever it went, it covered part of the
    # curve for some model (the forward's rise or the backward's fall).
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100, format="png")
    return path


def _draw_several(ax: Any, profiles: Sequence[tuple[str, MemoryProfile]]) -> None:
    """Several profiles against their phases (see ``plot_timelines``)."""
    mib = 1024.0 ** 2
    colors = ["black", "tab:green", "tab:purple", "tab:brown", "tab:cyan"]
    names: list[str] = []
    for k, (label, prof) in enumerate(profiles):
        color = colors[k % len(colors)]
        xs = [0.0] * len(prof.timeline)
        for j, p in enumerate(prof.phases):
            n = p["end"] - p["start"] + 1
            for i in range(p["start"], min(p["end"] + 1, len(xs))):
                xs[i] = j + (i - p["start"] + 0.5) / n
        if len(prof.phases) > len(names):
            names = [p["name"] for p in prof.phases]
        ax.plot(xs, [s["peak"] / mib for s in prof.timeline], color=color, linewidth=0.8,
                alpha=0.4)
        ax.plot(xs, [s["allocated"] / mib for s in prof.timeline], color=color, linewidth=1.5,
                marker=".", markersize=3, label=label)
    for j in range(1, len(names)):
        ax.axvline(j, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlim(0, max(len(names), 1))
    ax.set_xticks([j + 0.5 for j in range(len(names))], names)
    ax.set_xlabel("phase (each profile's samples spread evenly over each phase)")


def _draw_one(ax: Any, prof: MemoryProfile) -> None:
    """One profile as ``MemoryProfile.plot`` shows it (see ``plot_timelines``)."""
    mib = 1024.0 ** 2
    colors = {"forward": "tab:blue", "backward": "tab:orange"}
    seen: set[str] = set()
    for p in prof.phases:
        name = p["name"]
        ax.axvspan(p["start"] - 0.5, p["end"] + 0.5, color=colors.get(name, "grey"),
                   alpha=0.12, label=None if name in seen else name)
        seen.add(name)
    for i, s in enumerate(prof.timeline):
        if s["event"] == "enter" and s.get("depth") == 1:
            ax.axvline(i, color="grey", linestyle=":", linewidth=0.8)
            ax.text(i, 1.0, s["label"], rotation=90, fontsize=7, va="top",
                    transform=ax.get_xaxis_transform())
    xs = list(range(len(prof.timeline)))
    ax.plot(xs, [s["peak"] / mib for s in prof.timeline], color="tab:red", linewidth=0.8,
            alpha=0.6, label="peak since previous sample")
    ax.plot(xs, [s["allocated"] / mib for s in prof.timeline], color="black", linewidth=1.5,
            marker=".", markersize=3, label="allocated")


class profile_memory:  # noqa: N801  (a context manager, named like PyTorch's profile)
    """Context manager recording activation memory for the forward and backward run inside it.

    Args:
        model: the module whose modules are attributed (optional; without it the module is
            ``"-"``); its parameters and buffers count as pre-existing.
        device: the device whose ``memory_allocated`` is sampled; default: ``model``'s, else the
            CPU.

    Example:
        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> with profile_memory(model) as prof:
        ...     model(randn(16, 4)).sum().backward()
        >>> prof.total_bytes  # ReLU's output, 16 x 8 float32
        512
    """

    def __init__(self, model: Any = None, device: Any = None) -> None:
        if device is None and model is not None:
            first = next(iter(model.parameters()), None)
            device = first.device if first is not None else None
        self._dev = CPU if device is None else _device(device)
        self.profile = MemoryProfile(device=str(self._dev))
        self._model = model
        self._names: dict[int, str] = {}
        self._stack: list[Any] = []
        self._handles: list[Any] = []
        self._live: dict[int, tuple[SavedRecord, Any]] = {}
        self._pre: dict[int, tuple[str, Any]] = {}
        self._cpu_live: dict[int, Any] = {}
        self._hooks = saved_tensors_hooks(self._pack, self._unpack)
        self._phase = "forward"

    # ---- sampling -----------------------------------------------------------------------------
    def _sample(self, event: str, label: str, **extra: Any) -> int:
        dev = self._dev
        allocated = _memory.memory_allocated(dev)
        peak = _memory.max_memory_allocated(dev)
        _memory.reset_peak_memory_stats(dev)
        tl = self.profile.timeline
        tl.append({"phase": self._phase, "event": event, "label": label, "allocated": allocated,
                   "peak": peak, **extra})
        i = len(tl) - 1
        self.profile.phases[-1]["end"] = i
        return i

    def _set_phase(self, name: str) -> None:
        if name != self._phase:
            self._phase = name
            n = len(self.profile.timeline)
            self.profile.phases.append({"name": name, "start": n, "end": n})

    # ---- pre-existing storages ----------------------------------------------------------------
    def _mark(self, t: Any, kind: str) -> None:
        if isinstance(t, Tensor):
            root = _root(t._data)
            self._pre[id(root)] = (kind, _ref(root))

    def _kind(self, root: Any, t: Tensor, is_input: bool) -> str:
        key = id(root)
        hit = self._pre.get(key)
        if hit is not None and (hit[1] is None or hit[1]() is root):
            return hit[0]
        ref = self._cpu_live.get(key)
        if ref is not None and ref() is root:
            return "input"
        if t.grad_fn is None and t._requires_grad:
            return "parameter"
        base = t
        while base._base is not None:
            base = base._base
        if base is not t and base.grad_fn is None:
            # NOTE: a view of a leaf (an op's reshape of a weight or an input) saves the leaf's
            # own storage: no activation (on the CPU the live registry above already knows it).
            return "parameter" if base._requires_grad else "input"
        if is_input and t.grad_fn is None and self._dev is not CPU:
            # NOTE: off the CPU there is no registry of live storages to ask: a grad-free leaf
            # handed to an op is taken for a user's input (an intermediate computed under
            # no_grad inside the forward would be misfiled; on the CPU the registry decides).
            return "input"
        return "activation"

    # ---- hooks --------------------------------------------------------------------------------
    def _pack(self, t: Tensor) -> _Packed:
        if self._phase == "backward":
            self._set_phase("forward")
        data = t._data
        root = _root(data)
        key = id(root)
        hit = self._live.get(key)
        if hit is not None and (hit[1] is None or hit[1]() is root):
            hit[0].count += 1
        else:
            op, is_input = _saving_node()
            rec = SavedRecord(op=op, module=self._stack[-1] if self._stack else "-",
                              shape=list(root.shape), dtype=str(root.dtype),
                              bytes=int(root.nbytes), kind=self._kind(root, t, is_input))
            self.profile.saved.append(rec)
            self._live[key] = (rec, _ref(root, self._live, key))
            rec.event = self._sample("pack", rec.op, module=rec.module)
        counter = t._counter()
        return _Packed(data, t._device, counter, counter.value)

    def _unpack(self, p: _Packed) -> Tensor:
        if self._phase == "forward":
            self._set_phase("backward")
        t = Tensor._make(p.data, p.dev)
        t._version_counter = p.counter
        # NOTE: PyTorch skips the version check for hooked tensors; the profiler keeps it, so
        # profiling never turns an in-place error into a silently wrong gradient.
        _check_version(t, p.version)
        t._version_counter = None
        self._sample("unpack", "backward")
        return t

    def _pre_hook(self, module: Any, args: Any) -> None:
        name = self._names.get(id(module), type(module).__name__)
        if not self._stack:
            for a in args:
                self._mark(a, "input")
        self._stack.append(name)
        self._sample("enter", name, depth=len(self._stack) - 1)

    def _post_hook(self, module: Any, args: Any, out: Any) -> None:
        name = self._names.get(id(module), type(module).__name__)
        depth = len(self._stack) - 1
        while self._stack:
            if self._stack.pop() == name:
                break
        self._sample("exit", name, depth=depth)

    # ---- entry and exit -----------------------------------------------------------------------
    def __enter__(self) -> MemoryProfile:
        model = self._model
        if model is not None:
            root_name = type(model).__name__
            for name, m in model.named_modules():
                self._names[id(m)] = f"{name} ({type(m).__name__})" if name else root_name
                self._handles.append(m.register_forward_pre_hook(self._pre_hook))
                self._handles.append(m.register_forward_hook(self._post_hook))
            for p in model.parameters():
                self._mark(p, "parameter")
            for b in model.buffers():
                self._mark(b, "parameter")
        if self._dev is CPU:
            self._cpu_live = dict(_memory._LIVE)
        prof = self.profile
        prof.baseline = _memory.memory_allocated(self._dev)
        prof.phases.append({"name": "forward", "start": 0, "end": 0})
        _memory.reset_peak_memory_stats(self._dev)
        self._sample("start", "start")
        self._hooks.__enter__()
        return prof

    def __exit__(self, *exc: object) -> None:
        self._hooks.__exit__(*exc)
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self._sample("end", "end")
        self._cpu_live = {}
        self._pre.clear()


def _ref(obj: Any, registry: dict[int, Any] | None = None, key: int = 0) -> Any:
    """A weak reference to ``obj`` (dropping ``registry[key]`` when it dies), or None where the
    array type takes no weak references (then identity is by ``id`` only)."""
    try:
        if registry is None:
            return weakref.ref(obj)
        return weakref.ref(obj, lambda _r: registry.pop(key, None))
    except TypeError:
        return None


from ._memory_report import GraphLeakWarning, LeakDetector, detect_graph_leaks  # noqa: E402
from ._memory_report import savings_report  # noqa: E402
