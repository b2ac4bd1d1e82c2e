"""A compiled function whose result's backward runs outside it (``model = compile(model)``, then
``loss.backward()``): a forward program F and a backward program B, linked into the caller's
graph by one node named as PyTorch's AOTAutograd names it (``CompiledFunctionBackward``).

The recorded call returns its eager result through a ``_Capture`` node whose inputs are the
tensors that require grad (parameters, arguments). When the caller's backward first reaches it,
it runs the eager graph's backward (``autograd.grad`` of the outputs for those inputs) with the
call's recording active again, so the backward's array work is written down over the forward's
slots and the incoming gradients: B. B is checked at once (replayed on the same arrays and
compared bit for bit with the eager gradients); F is generated again to return the forward
arrays B reads ("saved"), and from then on a replayed call links a ``_Replayed`` node whose
backward replays B on them. Backward hooks inside the call (a replay runs none), a backward that
reads values back to Python or writes into the forward's arrays, and double backward through a
replayed call are refused, as in PyTorch ("does not currently support double backward").
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from ..autograd.grad_mode import STATE
from ..autograd.node import Node
from ..autograd.saved import _CONST, _RAW, track_saved
from ..tensor import Tensor
from ._patches import Patches
from ._program import Program, writes, _slots_in
from ._state import tensors_of
from ._sym import ACTIVE, Instr, Slot, SymArray, raw

if TYPE_CHECKING:
    from ._trace import Trace

_SECOND_TIME = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward.")
_DOUBLE = ("torch.compile with aot_autograd does not currently support double backward")


class _Args(threading.local):
    """What B's loads read while it runs: the saved forward arrays and the incoming grads."""
    saved: list[Any] = []
    seeds: list[Any] = []


ARGS = _Args()


class _Arg:
    """A load of B: ``ARGS.<kind>[i]``."""
    __slots__ = ("kind", "i")

    def __init__(self, kind: str, i: int) -> None:
        self.kind, self.i = kind, i

    def __call__(self) -> Any:
        return getattr(ARGS, self.kind)[self.i]


class Aot:
    """One signature's backward half: the inputs' locators, F (with saved outputs) and B once
    recorded, or why B cannot be replayed (``failed``)."""

    def __init__(self, inputs: list[Any]) -> None:
        self.inputs = inputs  # NOTE: locators (``_trace._Locate``) of the tensors needing grad
        self.fwd: Program | None = None
        self.bwd: Program | None = None
        self.failed: str | None = None
        self._capture: weakref.ref[Any] | None = None

    def waiting(self) -> bool:
        """Whether the recorded call's result may still have its backward run (and record B)."""
        return self._capture is not None and self._capture() is not None

    def tensors(self) -> list[Tensor]:
        return [at() for at in self.inputs]

    # ---- the recorded call --------------------------------------------------------------------
    def capture(self, trace: Trace, result: Any, ins: list[Tensor]) -> Any:
        """``result`` with its outputs that need grad replaced by a ``_Capture`` node's
        (``ins``: the tensors ``inputs`` locates, in this call)."""
        outs = _Capture.apply(*ins, outs=[t._data for t in trace.diff], aot=self, trace=trace,
                              inner=list(trace.diff), ins=ins)
        self._capture = weakref.ref(outs[0].grad_fn)
        return _swap(result, {id(t): o for t, o in zip(trace.diff, outs)})

    def record(self, trace: Trace, inner: list[Tensor], ins: list[Tensor],
               grads: list[Tensor]) -> list[Any]:
        """The eager backward of the recorded call, recorded as B (module docstring); returns
        the gradients of ``ins``. On a failure B stays unrecorded and ``failed`` says why."""
        from ._trace import _LOCK, layouts

        rec = trace.rec
        with _LOCK:
            forward, rec.instrs = rec.instrs, []
            seeds = []
            for i, g in enumerate(grads):
                sym = rec.new_slot(raw(g._data) if isinstance(g._data, SymArray) else g._data)
                rec.instrs.append(Instr("load", _Arg("seeds", i), out=Slot(sym._slot)))
                seeds.append(Tensor._make(sym, g._device))
            seed_slots = {n for ins_ in rec.instrs for n in _slots_in(ins_.out)}
            trace.cause, trace.fullgraph = None, False
            # NOTE: the places hold their forward slots again (a backward reading a parameter's
            # data, as LayerNorm's reads its weight, reads the forward's load)
            syms = {s._slot: s for s in rec.keep if isinstance(s, SymArray) and rec.owns(s)}
            placed = [(t, t._data) for t in tensors_of(trace.found) if id(t._data) in rec.roots]
            for t, a in placed:
                t._data = syms[rec.roots[id(a)]]
            patches = Patches(trace)
            ACTIVE.rec = rec
            patches.apply()
            try:
                out = _eager_grads(inner, ins, seeds, create_graph=False)
            finally:
                ACTIVE.rec = None
                patches.undo()
                for t, a in placed:
                    t._data = a
                body, rec.instrs = rec.instrs, forward
        template: list[Any] = []
        for g in out:
            data = None if g is None else g._data
            if g is None:
                template.append(None)
            elif isinstance(data, SymArray) and rec.owns(data):
                template.append(Slot(data._slot))
                g._data = raw(data)
            else:
                template.append(None)
                if isinstance(data, SymArray):
                    g._data = raw(data)
                trace.cause = trace.cause or "a gradient made where the recording could not see it"
        self.failed = trace.cause or _refused(body, template, seed_slots)
        if self.failed is None:
            self._build(trace, forward, body, template, seed_slots, out,
                        [raw(g._data) if isinstance(g._data, SymArray) else g._data
                         for g in grads], layouts(rec))
        return out

    def _build(self, trace: Trace, forward: list[Instr], body: list[Instr],
               template: list[Any], seed_slots: set[int], eager: list[Any], seeds: list[Any],
               meta: dict[int, Any]) -> None:
        """F and B from the two halves of the recording; B checked on the recorded arrays."""
        made = {n for ins in body for n in _slots_in(ins.out)}
        free: list[int] = []
        for ins in body:
            for n in _slots_in(ins.args) + _slots_in(ins.kwargs):
                if n not in made and n not in free:
                    free.append(n)
        free += [n for n in _slots_in(template) if n not in made and n not in free]
        n_seeds = len(seed_slots)
        loads = [Instr("load", _Arg("saved", k), out=Slot(n)) for k, n in enumerate(free)]
        bwd = Program(body[:n_seeds] + loads + body[n_seeds:], trace.rec.consts,
                      tuple(template), meta)
        arrays = {s._slot: raw(s) for s in trace.rec.keep
                  if isinstance(s, SymArray) and trace.rec.owns(s)}
        ARGS.saved, ARGS.seeds = [arrays[n] for n in free], seeds
        try:
            again = bwd.run()
        finally:
            ARGS.saved, ARGS.seeds = [], []
        for k, (a, g) in enumerate(zip(again, eager)):
            b = None if g is None else g._data
            if (a is None) != (b is None) or a is not None and not _same(a, b):
                self.failed = (f"the replayed backward's gradient {k} differs from the eager "
                               "backward's")
                return
        self.fwd = Program(forward, trace.rec.consts,
                           (trace.outputs, tuple(Slot(n) for n in free)), meta)
        self.bwd = bwd

    # ---- replayed calls ---------------------------------------------------------------------
    def link(self, outs: list[Any], saved: tuple[Any, ...]) -> tuple[Tensor, ...]:
        """The replayed call's outputs that need grad, linked to its inputs by a node whose
        backward replays B on ``saved``."""
        return _Replayed.apply(*self.tensors(), outs=outs, saved=saved, aot=self)


def unlocated(inner: list[Tensor], ins: list[Tensor]) -> str | None:
    """Why the gradients of ``inner`` cannot all be returned through ``ins`` (a leaf the graph
    reaches that is none of them: its gradient would be lost), or None."""
    stops = {(id(t._grad_fn), t._output_nr) for t in ins if t._grad_fn is not None}
    leaves = {id(t) for t in ins}
    seen: set[int] = set()
    todo = [(t._grad_fn, t._output_nr) for t in inner]
    while todo:
        node, nr = todo.pop()
        if node is None or (id(node), nr) in stops or id(node) in seen:
            continue
        seen.add(id(node))
        if node._is_accumulator:
            if id(node.variable) not in leaves:
                return ("the result's graph reaches a tensor that requires grad which the "
                        "compiled function cannot locate on later calls")
            continue
        todo += list(node.next_functions)
    return None


def _refused(body: list[Instr], template: list[Any], seeds: set[int]) -> str | None:
    """Why a recorded backward cannot be replayed, or None."""
    made = {n for ins in body for n in _slots_in(ins.out)} - seeds
    for ins in body:
        if ins.kind in ("guard", "shape"):
            return "the backward reads a value back to Python"
        if ins.kind in ("store", "opaque"):
            return "the backward changes state outside its gradients"
        if any(n not in made for n in writes(ins)):
            return "the backward writes into the forward's arrays"
    del template
    return None


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return bool(a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes())


def _swap(obj: Any, new: dict[int, Any]) -> Any:
    """``obj`` (tensors in tuples, lists, dicts) with the tensors in ``new`` (by id) replaced."""
    if isinstance(obj, Tensor):
        return new.get(id(obj), obj)
    if type(obj) in (tuple, list):
        return type(obj)(_swap(o, new) for o in obj)
    if type(obj) is dict:
        return {k: _swap(v, new) for k, v in obj.items()}
    return obj


def _hooked(inner: list[Tensor]) -> bool:
    """Whether the graph of ``inner`` runs hooks (tensor, node or retain_grad) a replay of B
    would not run."""
    seen: set[int] = set()
    todo = [t._grad_fn for t in inner]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node._is_accumulator:
            continue
        if node._hooks or node._prehooks or node._tensor_prehooks or node._retain_grad:
            return True
        todo += [n for n, _ in node.next_functions]
    return False


def _eager_grads(inner: list[Tensor], ins: list[Tensor], grads: list[Any],
                 create_graph: bool) -> list[Any]:
    """``autograd.grad`` of the eager outputs for ``ins``; the inputs' own tensor hooks wait for
    the caller's engine (which accumulates through this node), so they run once."""
    from ..autograd.api import grad

    held = [t._hooks for t in ins]
    for t in ins:
        t._hooks = None
    try:
        return list(grad(inner, ins, grads, retain_graph=True, create_graph=create_graph,
                         allow_unused=True))
    finally:
        for t, h in zip(ins, held):
            t._hooks = h


class _Linked(Node):
    """What the two nodes share: outputs from arrays computed before, zeros for missing grads."""
    node_name = "CompiledFunctionBackward"
    _outs: list[Any] | None = None
    _saved: list[Any] | tuple[()] | None = ()
    _meta: list[tuple[Any, Any]] = []

    def forward(self, *arrays: Any) -> Any:
        outs, self._outs = self._outs, None
        if track_saved is not None:  # NOTE: the memory tracker counts kept arrays, as eager's
            for e in self._saved or ():
                if e[0] == _CONST:
                    track_saved(e[1], self.backend_device)
        assert outs is not None
        return tuple(outs)

    def _grads(self, grads: tuple[Any, ...]) -> list[Any]:
        meta = self._meta
        grads = grads + (None,) * (len(meta) - len(grads))
        return [g if g is not None else
                self.wrap(self.backend.zeros(meta[i][0], meta[i][1]))
                for i, g in enumerate(grads)]


class _Capture(_Linked):
    """The recorded call's node: its backward is the eager graph's, recorded once as B."""

    def __init__(self, outs: list[Any], aot: Aot, trace: Trace, inner: list[Tensor],
                 ins: list[Tensor]) -> None:
        self._outs, self._aot = outs, aot
        self._trace: Trace | None = trace
        self._inner: list[Tensor] | None = inner
        self._ins = ins
        self._meta = [(a.shape, a.dtype) for a in outs]
        self._saved = [(_RAW, None, 0)]  # NOTE: non-empty: the engine releases this node

    def backward(self, *grads: Any) -> tuple[Any, ...]:
        inner = self._inner
        if inner is None:
            raise RuntimeError(_SECOND_TIME)
        full = self._grads(grads)
        trace, self._trace = self._trace, None
        if trace is None or STATE.grad_enabled or self._aot.bwd is not None:
            return tuple(_eager_grads(inner, self._ins, full, STATE.grad_enabled))
        if _hooked(inner):
            self._aot.failed = ("a backward hook inside the compiled function (a replayed "
                                "backward would not run it)")
            return tuple(_eager_grads(inner, self._ins, full, False))
        return tuple(self._aot.record(trace, inner, self._ins, full))

    def _release(self) -> None:
        self._saved = None
        self._inner = self._trace = None


class _Replayed(_Linked):
    """A replayed call's node: its backward replays B on the arrays F saved."""

    def __init__(self, outs: list[Any], saved: tuple[Any, ...], aot: Aot) -> None:
        self._outs, self._aot = outs, aot
        self._meta = [(a.shape, a.dtype) for a in outs]
        self._saved = [(_CONST, a, 0) for a in saved]

    def backward(self, *grads: Any) -> tuple[Any, ...]:
        if STATE.grad_enabled:
            raise RuntimeError(_DOUBLE)
        saved = self._saved
        if saved is None:
            raise RuntimeError(_SECOND_TIME)
        bwd = self._aot.bwd
        assert bwd is not None
        ARGS.saved = [e[1] for e in saved]
        ARGS.seeds = [g._data for g in self._grads(grads)]
        try:
            out = bwd.run()
        finally:
            ARGS.saved, ARGS.seeds = [], []
        return tuple(None if a is None else self.wrap(a) for a in out)
