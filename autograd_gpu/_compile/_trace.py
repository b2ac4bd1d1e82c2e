"""One traced call: the step runs eagerly while a ``Recorder`` writes it down.

Before the call, every place of the step (each tensor's array, each parameter's gradient slot)
holds a SymArray loaded by a ``load`` instruction; NumPy's creation functions, the random
generators' draws, the optimizers' and schedulers' ``step``/``zero_grad`` and the user-facing
``Tensor`` reads (``item``, ``tolist``, ``bool``, printing) are patched for the call
(``_patches``). An
optimizer or scheduler call is *opaque*: the places are written back (``store``), the call runs
as it is, unrecorded, and the places load again after it; a replay calls it again, so its Python
state (step counts, learning rates, new state tensors) evolves as in eager. A user-facing read of
a tensor's value ends the recording (a ``Break``: the rest of the call runs eagerly, and the
signature stays eager); under ``fullgraph=True`` it raises instead. ``Generator.manual_seed`` in
the step is opaque too (replayed with its arguments).

A replay runs no Python, so after the call: plain attributes the step set on its modules (a
``train()`` in the step) and tensors it set there (``weight_norm``'s ``weight``) become stores
of what the call left (the check replay compares them with eager's); other changes to the
modules (a replaced parameter, an appended list) break, and so does a tensor the call made that
outlives it other than its results and gradients (kept by a hook, a container): a replay would
leave the recorded call's there. A tensor made inside the step from an array the recording did
not make (``tensor(ndarray)``, ``from_numpy``: data from outside) breaks as well.
"""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any, Callable

import numpy as np

from ..tensor import Tensor
from ._patches import Patches
from ._program import Program
from ._state import Found, attr_changes, leaves, module_attrs, tensors_of
from ._recorder import Recorder
from ._sym import ACTIVE, Break, Instr, QuietBreak, Slot, SymArray, raw

_LOCK = threading.RLock()


class FullGraphError(RuntimeError):
    """``compile(fullgraph=True)`` met something a replay cannot repeat."""


class Trace:
    """The recording of one call of ``fn`` (module docstring). After ``run``: ``result`` (the
    eager result), ``program`` (None when the recording broke) and ``cause``."""

    def __init__(self, found: Found, fullgraph: bool) -> None:
        self.found = found
        self.fullgraph = fullgraph
        self.rec = Recorder()
        self.rec.on_break = self._stop
        self.cause: str | None = None
        self.program: Program | None = None
        self.result: Any = None
        self._data: dict[int, tuple[Tensor, SymArray, Any]] = {}  # id -> (t, installed, locator)
        # NOTE: id(tensor) -> (it, its grad, its requires_grad) at load
        self._grads: dict[int, tuple[Tensor, Any, bool]] = {}
        self.backward_ran = False
        self.made: list[weakref.ref[Tensor]] = []  # the tensors the recorded call made
        self._kept: list[Tensor] = []  # made by the call, stored by the replay (module attributes)
        self._arg_paths: dict[int, tuple[Any, ...]] = {}
        self.quiet = False
        self._state_ids: set[int] = set()
        # NOTE: results whose backward runs outside the call (``_aot``), in the order of their
        # ("grad", k, ...) templates; the template of the whole result
        self.diff: list[Tensor] = []
        self.outputs: Any = None

    # ---- places -----------------------------------------------------------------------------
    def _at(self, t: Tensor) -> _Locate:
        return _Locate(t, self._arg_paths.get(id(t)))

    def _tensors(self) -> list[Tensor]:
        ts = tensors_of(self.found)
        grads = [t._grad for t in ts if t._grad is not None]
        return ts + [g for g in grads if all(g is not t for t in ts)]

    def _places(self) -> list[tuple[Tensor, Any]]:
        """Every tensor whose array is a place, with where a replay finds it: a gradient
        through its parameter (each backward may make a new gradient tensor)."""
        ts = tensors_of(self.found)
        places: list[tuple[Tensor, Any]] = [(t, self._at(t)) for t in ts]
        known = {id(t) for t in ts}
        for t, at in list(places):
            g = t._grad
            if g is not None and id(g) not in known:
                known.add(id(g))
                places.append((g, _GradOf(at)))
        return places

    def load(self) -> None:
        """Every place holds a SymArray, loaded from the live tensor on replay."""
        rec = self.rec
        for t, at in self._places():
            arr = t._data
            if not isinstance(arr, np.ndarray):
                # NOTE: CUDA steps are captured as CUDA graphs (``_graphed``), chosen by the
                # first tensor's device: this one mixes devices
                raise Break(f"a {t._device} tensor among CPU ones (a compiled step runs on one "
                            "device: its first tensor's)")
            if isinstance(arr, SymArray):
                arr = raw(arr)
            sym = rec.new_slot(arr)
            rec.roots[id(arr)] = sym._slot
            t._data = sym
            self._data[id(t)] = (t, sym, at)
            rec.instrs.append(Instr("load", _Loader(at), out=Slot(sym._slot)))
            # NOTE: every place: the step may make an input require grad and fill its .grad
            self._grads[id(t)] = (t, t._grad, t._requires_grad)
        for bufs in _scratch(self.found):
            # NOTE: an optimizer's scratch arrays outlive its steps: the same arrays on replay
            for i, arr in enumerate(bufs):
                arr = raw(arr) if isinstance(arr, SymArray) else arr
                sym = rec.new_slot(arr)
                rec.roots[id(arr)] = sym._slot
                bufs[i] = sym
                rec.instrs.append(Instr("load", _Same(arr), out=Slot(sym._slot)))
        self._state_ids = {id(t) for t in _state_tensors(self.found)}

    def store(self) -> None:
        """Write back what changed since the last ``load`` (new gradients, replaced arrays), and
        give every place its plain array again."""
        rec = self.rec
        for t, sym, at in self._data.values():
            cur = t._data
            if cur is not sym:
                if not isinstance(cur, SymArray) or cur._slot < 0:
                    raise Break("a tensor's array replaced by one the recording did not see")
                rec.instrs.append(Instr("store", _DataSetter(at), (Slot(cur._slot),),
                                        pure=False))
        if any(id(t) not in self._state_ids for t in _state_tensors(self.found)):
            raise QuietBreak("the optimizer made its state in this call (a first step: the next "
                             "call records again)")
        for p, was, flag in self._grads.values():
            if p._requires_grad != flag:
                rec.instrs.append(Instr("store", _FlagSetter(self._at(p), p._requires_grad),
                                        pure=False))
            cur = p._grad
            if cur is was:
                continue
            if cur is None:
                rec.instrs.append(Instr("store", _GradSetter(self._at(p), None), pure=False))
                continue
            data = cur._data
            if not isinstance(data, SymArray) or data._slot < 0:
                raise Break("a gradient made where the recording could not see it")
            rec.instrs.append(Instr("store", _GradSetter(self._at(p), cur._device),
                                    (Slot(data._slot),), pure=False))
        self.unwrap()

    def unwrap(self) -> None:
        for t in self._tensors() + _state_tensors(self.found):
            if isinstance(t._data, SymArray):
                t._data = raw(t._data)
        for bufs in _scratch(self.found):
            bufs[:] = [raw(a) if isinstance(a, SymArray) else a for a in bufs]
        self._data.clear()
        self._grads.clear()

    # ---- the call ----------------------------------------------------------------------------
    def run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        for path, t in leaves((args, kwargs)):
            if isinstance(t, Tensor):
                self._arg_paths.setdefault(id(t), path)
        attrs = module_attrs(self.found)
        with _LOCK:
            patches = Patches(self)
            try:
                self.load()
            except Break as b:
                self.unwrap()
                self._stop(b.cause, during_call=False)
                self.result = fn(*args, **kwargs)
                return self.result
            ACTIVE.rec = self.rec
            patches.apply()
            try:
                self.result = fn(*args, **kwargs)
            except BaseException:
                self._stop("the step raised", during_call=False)
                raise
            finally:
                ACTIVE.rec = None
                patches.undo()
                if self.cause is None:
                    try:
                        self.store()
                    except Break as b:
                        self._stop(b.cause, during_call=False, quiet=isinstance(b, QuietBreak))
                self.unwrap()
                self.result = _plain_result(self.result)
            if self.cause is None:
                self._python_state(attrs)
            if self.cause is None:
                self._finish(self.result)
            return self.result

    def _escapes(self) -> None:
        """A tensor the call made that outlives it, other than its results and the places'
        gradients (kept by a hook, a container, a global), breaks: a replay would leave the
        recorded call's tensor there."""
        allowed = {id(t) for _, t in leaves(self.result) if isinstance(t, Tensor)} \
            | {id(t) for t in self._kept}
        for t in self._tensors():
            allowed.add(id(t))
            if t._grad is not None:
                allowed.add(id(t._grad))
        allowed |= {id(t) for t in graph_tensors(self.diff)}

        def alive() -> list[Tensor]:
            return [t for t in (ref() for ref in self.made)
                    if t is not None and id(t) not in allowed]

        # NOTE: a collection (slow: the whole heap) only when some outlive the call; reference
        # cycles among the freed (graph nodes) may still hold them
        if alive():
            gc.collect()
        if alive():
            self._stop("a tensor made in the step outlives it (kept by a hook, a container or "
                       "an attribute): a replay would leave the recorded call's tensor there",
                       during_call=False)

    def _python_state(self, before: dict[Any, Any]) -> None:
        """What the step set in its modules' Python attributes: plain values are stored by the
        replay as the recorded call left them (the check replay compares them with eager's, so
        a value that changes from call to call, a counter, makes the step eager); other changes
        break."""
        sets, cause = attr_changes(before, module_attrs(self.found))
        if cause is not None:
            self._stop(cause, during_call=False)
            return
        for m, k, v in sets:
            if not isinstance(v, Tensor):
                self.rec.instrs.append(Instr("store", _AttrSetter(m, k, v), pure=False))
                continue
            data = v._data
            if not (isinstance(data, SymArray) and self.rec.owns(data)):
                self._stop(f"the step sets {type(m).__name__}.{k} to a tensor the recording "
                           "did not make", during_call=False)
                return
            self.rec.instrs.append(Instr("store", _TensorAttrSetter(m, k, v._device),
                                         (Slot(data._slot),), pure=False))
            v._data = raw(data)
            self._kept.append(v)

    def _stop(self, cause: str, during_call: bool = True, quiet: bool = False) -> None:
        """End the recording; the rest of the call runs eagerly (``fullgraph``: raise).
        ``quiet``: an expected end (a first step making optimizer state), no warning."""
        if self.cause is None:
            self.cause = cause
            self.quiet = quiet
        ACTIVE.rec = None
        if self.fullgraph and during_call:
            raise FullGraphError(f"compile(fullgraph=True): {cause}")

    def _finish(self, result: Any) -> None:
        outputs = self._outputs(result)
        if self.cause is None:
            self._escapes()
        if self.cause is not None:
            return
        self.outputs = outputs
        self.program = Program(self.rec.instrs, self.rec.consts, outputs, layouts(self.rec))

    def _outputs(self, result: Any) -> Any:
        """The result's template: its tensors as the slots of their arrays."""
        if isinstance(result, Tensor):
            slot = self.rec.roots.get(id(result._data))
            sym = next((s for s in self.rec.keep if isinstance(s, SymArray)
                        and raw(s) is result._data), None)
            n = sym._slot if sym is not None else slot
            if n is None:
                self._stop("a result tensor made where the recording could not see it",
                           during_call=False)
                return None
            if result._requires_grad and result._grad_fn is not None and not self.backward_ran:
                # NOTE: its backward runs outside the call: linked by ``_aot``'s node
                k = next((i for i, t in enumerate(self.diff) if t is result), len(self.diff))
                if k == len(self.diff):
                    self.diff.append(result)
                return ("grad", k, Slot(n), result._device)
            return ("tensor", Slot(n), result._device)
        if isinstance(result, (tuple, list)):
            return (type(result), [self._outputs(r) for r in result])
        if isinstance(result, dict):
            return (dict, {k: self._outputs(v) for k, v in result.items()})
        if result is None or isinstance(result, (bool, int, str)):
            return ("value", result)
        self._stop(f"a result of type {type(result).__name__}", during_call=False)
        return None


def graph_tensors(outputs: list[Tensor]) -> list[Tensor]:
    """The tensors the autograd graph of ``outputs`` keeps (saved inputs, and the bases of the
    views among them): alive while the graph is, as in eager."""
    from ..autograd.saved import _INPUT

    kept: list[Tensor] = []
    seen: set[int] = set()
    todo = [t._grad_fn for t in outputs if t._grad_fn is not None]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        kept += [e[1] for e in node._saved or () if e is not None and e[0] == _INPUT]
        todo += [n for n, _ in node.next_functions]
    return kept + [t._base for t in kept + outputs if t._base is not None]


def layouts(rec: Recorder) -> dict[int, tuple[Any, Any]]:
    """(shape, dtype) of each slot whose traced array owns C-contiguous memory (what
    ``_program.plan`` may give a buffer)."""
    meta: dict[int, tuple[Any, Any]] = {}
    for sym in rec.keep:
        if isinstance(sym, SymArray) and sym._slot >= 0:
            a = raw(sym)
            if isinstance(a, np.ndarray) and a.flags.c_contiguous and a.base is None:
                meta[sym._slot] = (a.shape, a.dtype)
    return meta


def _plain_result(obj: Any) -> Any:
    """``obj`` with each tensor in it holding its plain array again."""
    for _, t in leaves(obj):
        if isinstance(t, Tensor) and isinstance(t._data, SymArray):
            t._data = raw(t._data)
    return obj


class _Call(threading.local):
    """The arguments of the call a replay serves (its loads of argument tensors read them)."""
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = {}


CALL = _Call()


class _Locate:
    """The tensor a place belongs to on replay: the same object (a parameter, a buffer), or the
    one at the same position among the call's arguments."""
    __slots__ = ("t", "path")

    def __init__(self, t: Tensor, path: tuple[Any, ...] | None) -> None:
        self.t, self.path = t, path

    def __call__(self) -> Tensor:
        if self.path is None:
            return self.t
        obj: Any = (CALL.args, CALL.kwargs)
        for k in self.path:
            obj = obj[k]
        return obj


def _state_tensors(found: Found) -> list[Tensor]:
    return [v for opt in found.optimizers for st in opt.state.values() for v in st.values()
            if isinstance(v, Tensor)]


def _scratch(found: Found) -> list[list[Any]]:
    """The optimizers' scratch arrays (``_foreach.scratch``), as the lists that hold them."""
    return [bufs for opt in found.optimizers
            for bufs in opt.__dict__.get("_foreach_scratch", {}).values()]


class _Same:
    """A load of an array that stays the same object (an optimizer's scratch array)."""
    __slots__ = ("a",)

    def __init__(self, a: Any) -> None:
        self.a = a

    def __call__(self) -> Any:
        return self.a

    def inline(self) -> tuple[str, tuple[Any, ...]]:
        return "{0}", (self.a,)


class _GradOf:
    """The gradient of the tensor another locator finds."""
    __slots__ = ("param",)

    def __init__(self, param: _Locate) -> None:
        self.param = param

    def __call__(self) -> Any:
        return self.param()._grad


def _fixed(at: Any) -> tuple[Tensor, str] | None:
    """(the tensor, ``""`` or ``"._grad"``) when ``at`` finds a tensor that is not an argument
    (the same object on every replay), else None."""
    if type(at) is _Locate and at.path is None:
        return at.t, ""
    if type(at) is _GradOf and type(at.param) is _Locate and at.param.path is None:
        return at.param.t, "._grad"
    return None


class _Loader:
    __slots__ = ("at",)

    def __init__(self, at: Any) -> None:
        self.at = at

    def __call__(self) -> Any:
        return self.at()._data

    def inline(self) -> tuple[str, tuple[Any, ...]] | None:
        """The load as an expression of the generated replay (``_program``), when the tensor
        is fixed: ``{0}._data`` with ``{0}`` the tensor (``{0}._grad._data``: its grad's)."""
        fixed = _fixed(self.at)
        return None if fixed is None else ("{0}" + fixed[1] + "._data", (fixed[0],))


class _DataSetter:
    __slots__ = ("at",)

    def __init__(self, at: Any) -> None:
        self.at = at

    def __call__(self, a: Any) -> None:
        self.at()._data = a

    def inline(self) -> tuple[str, tuple[Any, ...]] | None:
        fixed = _fixed(self.at)
        return None if fixed is None else ("{0}" + fixed[1] + "._data = {a}",
                                           (fixed[0],))


class _FlagSetter:
    __slots__ = ("at", "flag")

    def __init__(self, at: _Locate, flag: bool) -> None:
        self.at, self.flag = at, flag

    def __call__(self) -> None:
        self.at()._requires_grad = self.flag


class _GradSetter:
    __slots__ = ("at", "dev")

    def __init__(self, at: Any, dev: Any) -> None:
        self.at, self.dev = at, dev

    def __call__(self, a: Any = None) -> None:
        self.at()._grad = None if a is None else Tensor._make(a, self.dev)

    def inline(self) -> tuple[str, tuple[Any, ...]] | None:
        fixed = _fixed(self.at)
        if fixed is None or fixed[1]:
            return None
        if self.dev is None:
            return "{0}._grad = None", (fixed[0],)
        return "{0}._grad = {1}({a}, {2})", (fixed[0], Tensor._make, self.dev)


class _AttrSetter:
    __slots__ = ("obj", "name", "value")

    def __init__(self, obj: Any, name: str, value: Any) -> None:
        self.obj, self.name, self.value = obj, name, value

    def __call__(self) -> None:
        object.__setattr__(self.obj, self.name, self.value)


class _TensorAttrSetter:
    """A module attribute set to a tensor the step made (``weight_norm``'s ``weight``): on
    replay, a tensor of the replayed array (no graph: the replay keeps none)."""
    __slots__ = ("obj", "name", "dev")

    def __init__(self, obj: Any, name: str, dev: Any) -> None:
        self.obj, self.name, self.dev = obj, name, dev

    def __call__(self, a: Any) -> None:
        object.__setattr__(self.obj, self.name, Tensor._make(a, self.dev))
