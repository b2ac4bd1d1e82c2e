"""``compile``: record a step once, check one replay against eager, then replay it.

Per signature (``_state.signature``: what a replay assumes) a compiled function goes through
three states. The first call runs eagerly while it is recorded (``_trace.Trace``). The second
runs the replay on a snapshot of everything the step changes, undoes it, runs eagerly and
compares the two bit for bit: a step the recording misread (a value it kept as a constant, a
Python side effect it cannot see) is caught here and stays eager, with one warning naming what
differed. From the third call on, the replay alone runs. A recording that breaks (a value read
back to Python, a data-dependent shape, a CUDA tensor for now) leaves the signature eager, with
one warning naming the cause; under ``fullgraph=True`` it raises instead. More signatures than
``torch._dynamo.config.cache_size_limit`` (8) make the function eager.
"""

from __future__ import annotations

import functools
import threading
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from ..autograd.node import user_stacklevel
from ..backends.numpy_backend import _QUIET_FP, _RESTORE_FP
from ..nn.module import Module
from ..tensor import Tensor
from . import _aot, _graphed, _state
from ._memo import Memo
from ._program import GuardFailed, Program
from ._sym import ACTIVE
from ._trace import CALL, FullGraphError, Trace

class _Inline(threading.local):
    depth = 0


_INLINE = _Inline()


class _Limits:
    """``torch._dynamo.config``'s numbers: signatures recorded per function."""
    signatures = 8


LIMITS = _Limits()
_FALLBACKS = 8  # NOTE: calls whose checks fail before most calls failing warns once
_MODES = (None, "default", "lite", "reduce-overhead", "max-autotune",
          "max-autotune-no-cudagraphs")


@dataclass
class _Entry:
    """One signature's state: "check" (recorded, not yet checked), "replay" or "eager"; on CUDA
    "warm" (run once eagerly, captured as a CUDA graph on the next call: ``graphed``)."""
    state: str
    program: Program | None = None
    cause: str | None = None
    calls: int = 0
    aot: _aot.Aot | None = None  # NOTE: a result whose backward runs outside the call
    graphed: _graphed.Graphed | None = None  # NOTE: a CUDA step, captured as a CUDA graph
    # NOTE: the optimizers' hyper-parameters when recorded; safe: a replay with other values of
    # those the signature counts by kind (lr, betas) was checked against eager
    hypers: Any = None
    hyper_safe: bool = False
    fallbacks: int = 0  # NOTE: replays whose first checks failed (those calls ran eagerly)


@dataclass
class Explanation:
    """What ``compile`` made of a function (``explain``): its recordings and breaks."""
    signatures: int = 0
    replaying: int = 0
    eager: int = 0
    break_reasons: list[str] = field(default_factory=list)
    ops_recorded: list[int] = field(default_factory=list)
    ops_replayed: list[int] = field(default_factory=list)

    @property
    def graph_count(self) -> int:
        return len(self.ops_recorded)

    @property
    def graph_break_count(self) -> int:
        return len(self.break_reasons)

    @property
    def ops_per_graph(self) -> list[int]:
        return list(self.ops_replayed)

    def __str__(self) -> str:
        lines = [f"Signatures: {self.signatures} ({self.replaying} replaying, {self.eager} eager)",
                 f"Graph Break Count: {len(self.break_reasons)}",
                 "Break Reasons:"]
        lines += [f"  {i + 1}. {r}" for i, r in enumerate(self.break_reasons)] or ["  none"]
        for i, (a, b) in enumerate(zip(self.ops_recorded, self.ops_replayed)):
            lines.append(f"Recording {i + 1}: {a} array ops recorded, {b} replayed")
        return "\n".join(lines)


_ALL: weakref.WeakSet[Any] = weakref.WeakSet()


def reset_all() -> None:
    """Every compiled function forgets its recordings (``torch.compiler.reset``)."""
    for f in list(_ALL):
        f._entries.clear()
        f._limit_hit = False
        f._pin_hypers = False


def _by_kind(found: Any) -> list[tuple[dict[str, Any], str, Any]]:
    """(group, key, value) of the optimizers' hyper-parameters the signature counts by kind
    only (``_state.signature``): those a replay reads afresh, or whose step is called again."""
    out = []
    for opt in found.optimizers:
        live = _state.live_hypers(opt)
        for g in opt.param_groups:
            out += [(g, k, v) for k, v in g.items()
                    if k != "params" and (live is None or k in live)]
    return out


def _moved(hypers: list[tuple[dict[str, Any], str, Any]]) -> bool:
    """Whether a hyper-parameter of ``_by_kind`` changed since (a scheduler moved it)."""
    for g, k, v in hypers:
        cur = g.get(k)
        if cur is not v and cur != v:
            return True
    return False


class CompiledFunction:
    """``fn`` compiled (module docstring); call it as ``fn``."""

    def __init__(self, fn: Callable[..., Any], fullgraph: bool, owner: Any = None,
                 cudagraphs: bool = True) -> None:
        self._fn = fn
        self._fullgraph = fullgraph
        self._cudagraphs = cudagraphs
        self._pin_hypers = False  # NOTE: every hyper-parameter in the signature (_hyper_check)
        self._owner = owner  # NOTE: a compiled module's forward: the module, for discovery
        self._entries: dict[Any, _Entry] = {}
        self._warned: set[str] = set()
        self._limit_hit = False
        self._quiet = False
        self._memo = Memo()
        functools.update_wrapper(self, fn)
        self._torchdynamo_orig_callable = fn
        _ALL.add(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if ACTIVE.rec is not None or _INLINE.depth:
            # NOTE: called inside a step being recorded (or run eagerly by its compiled
            # function): run inline, so the outer recording holds this call's work too
            return self._fn(*args, **kwargs)
        found, tensors, key = self._discover(args, kwargs)
        # NOTE: the first tensor's device (a step mixing devices breaks on CPU recording)
        cuda = bool(tensors) and tensors[0]._device.type == "cuda"
        if cuda or self._pin_hypers:
            key = (key, _graphed.hypers(found))
        entry = self._entries.get(key)
        if entry is None:
            if len(self._entries) >= LIMITS.signatures:
                if not self._limit_hit:
                    self._limit_hit = True
                    self._warn(f"{self._name()} hit cache_size_limit ({LIMITS.signatures}): "
                               "more signatures (shapes, dtypes, training flags, which grads "
                               "exist) than that run eagerly")
                return self._eager(args, kwargs)
            if cuda:
                # NOTE: a CUDA step warms up eagerly, then is captured as a CUDA graph
                self._entries[key] = _Entry("warm" if self._cudagraphs else "eager",
                                            cause="mode='max-autotune-no-cudagraphs'")
                return self._warm_up(args, kwargs) if self._cudagraphs else \
                    self._eager(args, kwargs)
            return self._record(key, found, args, kwargs)
        entry.calls += 1
        if entry.state == "eager":
            return self._eager(args, kwargs)
        if entry.state == "warm":
            return self._capture_graph(entry, found, tensors, args, kwargs)
        if entry.graphed is not None:
            if entry.graphed.moved():
                del self._entries[key]  # NOTE: an array the graph reads was replaced
                return self.__call__(*args, **kwargs)
            out = entry.graphed.replay(args, kwargs)
            return self._eager(args, kwargs) if out is _graphed.EAGER else out
        if entry.state == "check":
            return self._check(entry, found, tensors, args, kwargs)
        if entry.aot is not None and entry.aot.fwd is None:
            return self._backward_pending(key, entry, found, args, kwargs)
        if not entry.hyper_safe and _moved(entry.hypers):
            return self._hyper_check(entry, found, tensors, args, kwargs)
        return self._replay(entry, args, kwargs)

    def _capture_graph(self, entry: _Entry, found: Any, tensors: list[Tensor],
                       args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The second call of a CUDA signature: captured as a CUDA graph and checked
        (``_graphed``)."""
        graphed = _graphed.Graphed(lambda *a, **k: self._eager(a, k))
        result, cause = graphed.capture(found, tensors, args, kwargs,
                                        lambda: self._warm_up(args, kwargs))
        if cause is not None:
            self._give_up(entry, cause)
        else:
            entry.state, entry.graphed = "replay", graphed
        return result

    def _warm_up(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """An eager call of a CUDA step on its way to a graph: without the warning a
        ``capturable=True`` optimizer gives for a step outside a capture (PyTorch's, meant for
        steps that are never captured)."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="This instance was constructed with "
                                    "capturable=True")
            return self._eager(args, kwargs)

    def _eager(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The function run eagerly; compiled functions it calls run inline meanwhile."""
        _INLINE.depth += 1
        try:
            return self._fn(*args, **kwargs)
        finally:
            _INLINE.depth -= 1

    def _discover(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                  ) -> tuple[_state.Found, list[Tensor], Any]:
        """The step's state, its tensors and its signature on every call (the plain values
        it reads, a global scale, an attribute of an object the step reaches, are part of the
        signature); ``_memo`` reuses the previous call's while nothing they read changed."""
        target = self._owner if self._owner is not None else self._fn
        return self._memo.lookup(target, args, kwargs)

    # ---- the three states ---------------------------------------------------------------------
    def _record(self, key: Any, found: Any, args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
        trace = Trace(found, self._fullgraph)
        try:
            result = trace.run(self._fn, args, kwargs)
        except FullGraphError:
            self._entries[key] = _Entry("eager", cause="fullgraph")
            raise
        except BaseException:
            raise  # NOTE: no entry: the next call records again, as eager would run again
        if trace.program is None and trace.quiet:
            # NOTE: an expected end (a first step making optimizer state): that signature
            # records again if it comes back, no warning
            return result
        if trace.program is None:
            cause = trace.cause or "unknown"
            if self._fullgraph:
                self._entries[key] = _Entry("eager", cause=cause)
                raise FullGraphError(f"compile(fullgraph=True): {cause}")
            self._entries[key] = _Entry("eager", cause=cause)
            self._warn(f"{self._name()} runs eagerly: {cause}")
        else:
            entry = self._entries[key] = _Entry("check", trace.program,
                                                hypers=_by_kind(found))
            if trace.diff:
                return self._capture(entry, trace, result)
        return result

    def _capture(self, entry: _Entry, trace: Trace, result: Any) -> Any:
        """The recorded call's result, whose backward runs outside the call, linked so that
        its first backward is recorded (``_aot``)."""
        ins = [t for t in _state.tensors_of(trace.found) if t._requires_grad]
        cause = _aot.unlocated(trace.diff, ins)
        if cause is not None:
            self._give_up(entry, cause)
            return result
        entry.aot = _aot.Aot([trace._at(t) for t in ins])
        return entry.aot.capture(trace, result, ins)

    def _backward_pending(self, key: Any, entry: _Entry, found: Any, args: tuple[Any, ...],
                          kwargs: dict[str, Any]) -> Any:
        """A replaying signature whose backward is not recorded yet: eager until the recorded
        call's backward runs (it records B); recorded again if that result died without one."""
        aot = entry.aot
        assert aot is not None
        if aot.failed is not None:
            self._give_up(entry, aot.failed)
        elif not aot.waiting():
            del self._entries[key]
            return self._record(key, found, args, kwargs)
        return self._eager(args, kwargs)

    def _give_up(self, entry: _Entry, cause: str) -> None:
        """``entry`` runs eagerly from now on, with one warning (``fullgraph``: an error)."""
        entry.state, entry.cause, entry.program, entry.aot = "eager", cause, None, None
        entry.graphed = None
        if self._fullgraph:
            raise FullGraphError(f"compile(fullgraph=True): {cause}")
        self._warn(f"{self._name()} runs eagerly: {cause}")

    def _check(self, entry: _Entry, found: Any, tensors: list[Tensor], args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
        moved = entry.hypers is not None and _moved(entry.hypers)
        result, cause = self._compare(entry, found, tensors, args, kwargs)
        if cause is not None and moved:
            self._pin()  # NOTE: a learning rate moved since the recording (_hyper_check)
        elif cause is not None:
            self._give_up(entry, cause)
        else:
            entry.state = "replay"
            entry.hyper_safe = moved
        return result

    def _hyper_check(self, entry: _Entry, found: Any, tensors: list[Tensor],
                     args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The first call whose optimizer hyper-parameters (a learning rate a scheduler moved)
        differ from the recorded call's: checked as the second call is. A recording that reads
        them where the replay keeps them as constants (the step computing with ``lr``, or
        returning it) differs here: from now on this function's signatures hold every
        hyper-parameter by value (each learning rate records anew), no warning."""
        result, cause = self._compare(entry, found, tensors, args, kwargs)
        if cause is None:
            entry.hyper_safe = True
        else:
            self._pin()
        return result

    def _pin(self) -> None:
        self._pin_hypers = True
        self._entries.clear()

    def _compare(self, entry: _Entry, found: Any, tensors: list[Tensor], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> tuple[Any, str | None]:
        """(the eager result, None) when one replay on a snapshot, undone, changes everything
        bit for bit as the eager call then does; else (the eager result, what differed)."""
        snap = _state.Snapshot(found, tensors)
        cause: str | None = None
        try:
            replayed = self._replay(entry, args, kwargs, fallback=False)
            after_replay = _state.state_arrays(found, tensors, replayed)
        except GuardFailed as e:
            cause = f"{e} changed between calls"
        except Exception as e:  # noqa: BLE001 - any failure of the check makes it eager
            cause = f"the replay failed ({type(e).__name__}: {e})"
        snap.restore()
        result = self._eager(args, kwargs)
        if cause is None:
            diff = _state.first_difference(after_replay, _state.state_arrays(found, tensors,
                                                                                result))
            if diff is not None:
                cause = f"the replay's {diff} differs from the eager step's"
        return result, cause

    def _replay(self, entry: _Entry, args: tuple[Any, ...], kwargs: dict[str, Any],
                fallback: bool = True) -> Any:
        aot = entry.aot if fallback else None
        program = aot.fwd if aot is not None else entry.program
        assert program is not None
        token = _QUIET_FP()
        CALL.args, CALL.kwargs = args, kwargs
        linked: Any = None
        try:
            out = program.run()
            if aot is not None:
                out, saved = out
                linked = aot.link(_diff_arrays(out, {}), saved)
        except GuardFailed as e:
            if e.index in program.early and fallback:
                # NOTE: checked before the replay changed anything: this call runs eagerly
                # (eager raises its error, or runs the other shape); the recording stays
                _RESTORE_FP(token)
                token = None
                CALL.args, CALL.kwargs = (), {}
                entry.fallbacks += 1
                if entry.fallbacks >= _FALLBACKS and 2 * entry.fallbacks > entry.calls:
                    # NOTE: once: most calls fail a check (a data-dependent shape that keeps
                    # changing): no speed-up, and the user should know why
                    self._warn(f"{self._name()} runs eagerly on most calls: {e} differs from "
                               "the recorded call's on most of them")
                return self._eager(args, kwargs)
            if entry.state == "replay":
                entry.state, entry.cause, entry.program = "eager", str(e), None
                raise RuntimeError(
                    f"compile: {e} differs from the recorded call, so the replay of "
                    f"{self._name()} stopped part-way; this signature runs eagerly from now "
                    "on") from None
            raise
        finally:
            if token is not None:
                _RESTORE_FP(token)
            CALL.args, CALL.kwargs = (), {}
        return _build(out, linked)

    # ---- reports ----------------------------------------------------------------------------
    def _name(self) -> str:
        return f"compile({getattr(self._fn, '__qualname__', repr(self._fn))})"

    def _warn(self, text: str) -> None:
        if text not in self._warned and not self._quiet:
            self._warned.add(text)
            warnings.warn(text, UserWarning, stacklevel=user_stacklevel())

    def explain(self) -> Explanation:
        ex = Explanation(signatures=len(self._entries))
        for e in self._entries.values():
            if e.state == "eager":
                ex.eager += 1
                ex.break_reasons.append(e.cause or "unknown")
            else:
                ex.replaying += e.state == "replay"
                if e.program is not None:
                    ex.ops_recorded.append(e.program.n_recorded)
                    ex.ops_replayed.append(len(e.program.instrs))
        return ex


def _build(out: Any, linked: Any = None) -> Any:
    """The result of a replay from its evaluated template (``Trace._outputs``); ``linked``: the
    outputs that need grad, from ``Aot.link`` (None: plain tensors)."""
    if out is None:
        return None
    tag = out[0]
    if tag == "tensor":
        return Tensor._make(out[1], out[2])
    if tag == "grad":
        return linked[out[1]] if linked is not None else Tensor._make(out[2], out[3])
    if tag == "value":
        return out[1]
    kind, items = out
    if kind is dict:
        return {k: _build(v, linked) for k, v in items.items()}
    built = [_build(v, linked) for v in items]
    return kind(built) if kind is not list else built


def _diff_arrays(out: Any, found: dict[int, Any]) -> list[Any]:
    """The arrays of the outputs that need grad in an evaluated template, in their order."""
    if out is not None:
        if out[0] == "grad":
            found.setdefault(out[1], out[2])
        elif out[0] not in ("tensor", "value"):
            for v in (out[1].values() if out[0] is dict else out[1]):
                _diff_arrays(v, found)
    return [found[k] for k in range(len(found))]


class OptimizedModule(Module):
    """A module whose calls are compiled (``compile(module)``); the module itself is
    ``_orig_mod``, and its state_dict keys start with ``_orig_mod.``, as PyTorch's."""

    def __init__(self, mod: Module, fullgraph: bool, cudagraphs: bool = True) -> None:
        super().__init__()
        self._orig_mod = mod
        self._compiled_call = CompiledFunction(mod.__call__, fullgraph, owner=mod,
                                               cudagraphs=cudagraphs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled_call(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled_call(*args, **kwargs)

    def explain(self) -> Explanation:
        return self._compiled_call.explain()

    def __getattr__(self, name: str) -> Any:
        # NOTE: what the wrapper lacks is the module's (om.weight, om.in_features), as PyTorch's
        try:
            return super().__getattr__(name)
        except AttributeError:
            mod = self.__dict__.get("_modules", {}).get("_orig_mod")
            if mod is None:
                raise
            return getattr(mod, name)


class InvalidBackend(RuntimeError):
    """An unknown ``backend`` name (``torch._dynamo.exc.InvalidBackend``)."""


# NOTE: PyTorch's names (torch._dynamo.list_backends(exclude_tags=())); each replays the same
# recording here
BACKENDS = ("aot_eager", "aot_eager_decomp_partition", "aot_eager_default_partitioner",
            "aot_ts", "cudagraphs", "eager", "eager_debug", "eager_noexcept", "inductor",
            "openxla", "pre_dispatch_eager", "ts", "tvm")


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None,  # noqa: A001
            backend: Any = "inductor", mode: str | None = None,
            options: dict[str, Any] | None = None, disable: bool = False) -> Any:
    """``torch.compile``: ``model`` (a function or an ``nn.Module``) recorded on its first call
    per signature and replayed after one checked replay (module docstring); as a decorator
    with or without arguments. ``backend``, ``dynamic`` and ``options`` are accepted and
    checked; every backend replays the same recording. ``disable=True`` returns ``model``."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: default, lite, "
                           "reduce-overhead, max-autotune-no-cudagraphs, max-autotune")
    if isinstance(backend, str) and backend not in BACKENDS:
        raise InvalidBackend(f"Invalid backend: {backend!r}, see "
                             "`torch._dynamo.list_backends()` for available backends.")
    del dynamic
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if disable:
        return model
    cudagraphs = mode != "max-autotune-no-cudagraphs"
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph, cudagraphs)
    return CompiledFunction(model, fullgraph, cudagraphs=cudagraphs)
