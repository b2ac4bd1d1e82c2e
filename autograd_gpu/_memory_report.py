"""The savings report and the graph-leak detector (``autograd_gpu.profiler`` re-exports them).

``savings_report(model, x)`` runs one forward in grad mode, under ``no_grad``, under
``inference_mode`` and with checkpointing, and reports the bytes each keeps (allocated after the
forward less before, the output included) and its peak above the start, side by side.

``LeakDetector`` counts, once per training iteration (``step()``), the live graph nodes and the
bytes they keep saved, and warns with ``GraphLeakWarning`` when either has grown at every one of
``patience`` consecutive iterations: the signature of ``total_loss += loss`` or of a graph carried
across iterations with ``retain_graph=True``. A correct loop is flat after its first iterations.
"""

from __future__ import annotations

import gc
import warnings
from typing import Any, Callable

from . import memory as _memory
from .autograd.grad_mode import enable_grad, inference_mode, no_grad
from .autograd.node import Node
from .device import device as _device

__all__ = ["GraphLeakWarning", "LeakDetector", "SavingsReport", "detect_graph_leaks",
           "savings_report"]


class SavingsReport:
    """Rows ``{mode, kept_bytes, peak_bytes, saved_bytes}`` (``saved_bytes``: kept less than in
    grad mode); ``table()`` prints them, ``to_dict()`` gives them."""

    def __init__(self, device: str, rows: list[dict[str, Any]]) -> None:
        self.device = device
        self.rows = rows

    def __getitem__(self, mode: str) -> dict[str, Any]:
        for r in self.rows:
            if r["mode"] == mode:
                return r
        raise KeyError(mode)

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "rows": [dict(r) for r in self.rows]}

    def table(self) -> str:
        width = max(len(r["mode"]) for r in self.rows) + 2
        lines = [f"{'mode':<{width}}{'kept bytes':>14}{'peak bytes':>14}{'saved vs grad':>15}",
                 "-" * (width + 43)]
        for r in self.rows:
            lines.append(f"{r['mode']:<{width}}{r['kept_bytes']:>14,}{r['peak_bytes']:>14,}"
                         f"{r['saved_bytes']:>15,}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _measure(dev: Any, run: Callable[[], Any]) -> tuple[int, int]:
    gc.collect()
    base = _memory.memory_allocated(dev)
    _memory.reset_peak_memory_stats(dev)
    out = run()
    gc.collect()
    kept = _memory.memory_allocated(dev) - base
    peak = _memory.max_memory_allocated(dev) - base
    del out
    gc.collect()
    return kept, peak


def _segments(model: Any, kinds: Any) -> list[Any]:
    """The modules of ``model`` that are instances of ``kinds``, outermost first: one nested in
    another's segment is recomputed with it, so it gets no segment of its own."""
    out: list[Any] = []
    inside: set[int] = set()
    for m in model.modules():
        if id(m) in inside:
            continue
        if isinstance(m, kinds):
            out.append(m)
            inside.update(id(s) for s in m.modules())
    return out


def _per_module(model: Any, x: Any, targets: list[Any]) -> Any:
    """``model(x)`` with each of ``targets`` run as its own ``checkpoint`` segment."""
    from .utils.checkpoint import checkpoint as _ckpt

    for m in targets:
        def segment(*args: Any, _fwd: Any = m.forward, **kwargs: Any) -> Any:
            return _ckpt(_fwd, *args, use_reentrant=False, **kwargs)
        # NOTE: an instance attribute shadows the class's forward (Module.__call__ calls
        # self.forward, hooks included); removed again below.
        m.__dict__["forward"] = segment
    try:
        with enable_grad():
            return model(x)
    finally:
        for m in targets:
            m.__dict__.pop("forward", None)


def savings_report(model: Any, x: Any, *, checkpoint: Any = "both",
                   device: Any = None) -> SavingsReport:
    """Kept bytes and peaks of one forward of ``model(x)`` in each memory mode.

    Modes: ``grad``, ``no_grad``, ``inference_mode``, ``checkpoint (one segment)`` (the whole
    forward in one ``checkpoint(..., use_reentrant=False)``: only the input and output are kept)
    and, for an ``nn.Sequential``, ``checkpoint (per child)`` (each child its own segment: every
    child's input is kept, which can cost more than grad mode when children are small, e.g. a
    separate ReLU); on CUDA also ``save_on_cpu``. ``checkpoint`` given module classes adds
    ``checkpoint (per <Class>)``: every instance inside ``model`` (the outermost, where they
    nest) is its own segment, e.g. each layer of a ``TransformerEncoder`` with
    ``checkpoint=nn.TransformerEncoderLayer``: each segment's input and the output are kept.

    Args:
        model: the module; it is called as ``model(x)`` (its output may be a tuple, as an
            LSTM's: every tensor in it counts as kept).
        x: its input (kept by the caller: not counted).
        checkpoint: ``"one"``, ``"children"``, ``"both"`` (default), ``"none"``, or a module
            class or tuple of classes (then also ``"one"``).
        device: whose memory is measured (default: ``x``'s).

    Returns:
        A ``SavingsReport``; ``report["grad"]["kept_bytes"]`` etc.
    """
    from .autograd.graph import save_on_cpu
    from .nn import Sequential
    from .utils.checkpoint import checkpoint as _ckpt

    dev = _device(device) if device is not None else x.device
    modes: list[tuple[str, Callable[[], Any]]] = []

    def grad() -> Any:
        with enable_grad():
            return model(x)

    def nograd() -> Any:
        with no_grad():
            return model(x)

    def inference() -> Any:
        with inference_mode():
            return model(x)

    def one() -> Any:
        with enable_grad():
            return _ckpt(model, x, use_reentrant=False)

    def children() -> Any:
        h = x
        with enable_grad():
            for child in model:
                h = _ckpt(child, h, use_reentrant=False)
        return h

    def offload() -> Any:
        with enable_grad(), save_on_cpu():
            return model(x)

    modes += [("grad", grad), ("no_grad", nograd), ("inference_mode", inference)]
    kinds = checkpoint if isinstance(checkpoint, (type, tuple)) else None
    if kinds is not None:
        targets = _segments(model, kinds)
        if not targets:
            raise ValueError(f"savings_report: no module of {model.__class__.__name__} is an "
                             f"instance of {checkpoint!r}")
        label = "/".join(k.__name__ for k in (kinds if isinstance(kinds, tuple) else (kinds,)))
        modes.append(("checkpoint (one segment)", one))
        modes.append((f"checkpoint (per {label})", lambda: _per_module(model, x, targets)))
    elif checkpoint not in ("one", "children", "both", "none"):
        raise ValueError("savings_report: checkpoint takes 'one', 'children', 'both', 'none' or "
                         f"module classes, not {checkpoint!r}")
    if checkpoint in ("one", "both"):
        modes.append(("checkpoint (one segment)", one))
    if checkpoint in ("children", "both") and isinstance(model, Sequential):
        modes.append(("checkpoint (per child)", children))
    if dev.type == "cuda":
        modes.append(("save_on_cpu", offload))
    rows: list[dict[str, Any]] = []
    for name, run in modes:
        kept, peak = _measure(dev, run)
        rows.append({"mode": name, "kept_bytes": kept, "peak_bytes": peak})
    for r in rows:
        r["saved_bytes"] = rows[0]["kept_bytes"] - r["kept_bytes"]
    return SavingsReport(str(dev), rows)


# ---- the graph-leak detector --------------------------------------------------------------------

class GraphLeakWarning(UserWarning):
    """Live graph nodes or their saved bytes grew at every one of several training iterations."""


def _saved_bytes(node: Any, seen: set[int]) -> int:
    """Bytes of the arrays ``node`` keeps saved, each root buffer once across ``seen``."""
    saved = getattr(node, "_saved", None)
    if not saved:
        return 0
    total = 0
    for entry in saved:
        if entry is None:
            continue
        obj = entry[1]
        data = getattr(obj, "_data", None)  # a saved input Tensor
        if data is None and isinstance(obj, tuple) and obj and hasattr(obj[0], "nbytes"):
            data = obj[0]  # a saved output: (array, output_nr, counter, requires_grad)
        elif data is None and hasattr(obj, "nbytes"):
            data = obj  # a saved constant array
        if data is None:
            continue
        while getattr(data, "base", None) is not None and hasattr(data.base, "nbytes"):
            data = data.base
        if id(data) not in seen:
            seen.add(id(data))
            total += int(data.nbytes)
    return total


def graph_census() -> tuple[int, int]:
    """``(live graph nodes, bytes they keep saved)``, found by a full garbage-collector scan.

    NOTE: costs one ``gc.collect()`` and a walk over every Python object (milliseconds to tens
    of milliseconds): a debugging tool, for a few iterations, not for every step of a long run.
    """
    gc.collect()
    nodes = 0
    seen: set[int] = set()
    saved = 0
    for o in gc.get_objects():
        if isinstance(o, Node):
            nodes += 1
            saved += _saved_bytes(o, seen)
    return nodes, saved


class LeakDetector:
    """Warns (``GraphLeakWarning``) when the graph grows from one training iteration to the next.

    Call ``step()`` once per iteration, after the optimizer step. The first ``warmup``
    iterations are ignored (optimizer state appears then); after them, growth of the live graph
    nodes, or of the bytes they keep saved, at ``patience`` consecutive iterations warns once.

    Args:
        device: whose ``memory_allocated`` is recorded alongside (default: the CPU).
        warmup: iterations ignored at the start.
        patience: consecutive growing iterations before the warning.

    Example:
        >>> with detect_graph_leaks() as leaks:  # doctest: +SKIP
        ...     for x, y in data:
        ...         loss = F.cross_entropy(model(x), y); loss.backward(); opt.step()
        ...         leaks.step()
    """

    def __init__(self, device: Any = None, *, warmup: int = 1, patience: int = 3) -> None:
        self.device = device
        self.warmup = warmup
        self.patience = patience
        self.history: list[dict[str, int]] = []
        self.warned = False

    def step(self) -> dict[str, int]:
        """Record this iteration's figures (and warn if the graph keeps growing)."""
        nodes, saved = graph_census()
        sample = {"nodes": nodes, "saved_bytes": saved,
                  "allocated": _memory.memory_allocated(self.device)}
        self.history.append(sample)
        usable = self.history[self.warmup:]
        if not self.warned and len(usable) > self.patience:
            last = usable[-self.patience - 1:]
            for key in ("nodes", "saved_bytes"):
                if all(b[key] > a[key] for a, b in zip(last, last[1:])):
                    self.warned = True
                    warnings.warn(
                        f"the autograd graph grows every iteration: {key} went "
                        f"{' -> '.join(str(s[key]) for s in last)} over the last "
                        f"{self.patience} iterations. A tensor that carries the graph is kept "
                        "across iterations: accumulate `loss.item()` or `loss.detach()` instead "
                        "of `loss`, and detach state carried to the next iteration instead of "
                        "backpropagating into it with retain_graph=True.",
                        GraphLeakWarning, stacklevel=2)
                    break
        return sample

    def __enter__(self) -> LeakDetector:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def detect_graph_leaks(device: Any = None, *, warmup: int = 1, patience: int = 3) -> LeakDetector:
    """A ``LeakDetector`` (use it in a ``with`` block and call ``step()`` every iteration)."""
    return LeakDetector(device, warmup=warmup, patience=patience)
