"""What a compiled step reads and changes: found once per call, guarded, snapshotted.

``discover`` finds the modules, optimizers, schedulers, generators and tensors a step can reach:
its arguments, its closure, its defaults, the globals its code names (and, one level down, the
same for the functions and plain objects among those). Their tensors are the step's *places*:
each tensor's array, and each parameter's gradient slot. ``signature`` is what a replay assumes
(shapes, dtypes, devices, ``requires_grad``, which gradients exist, layouts, training flags, grad
mode, the non-tensor arguments); ``Snapshot`` copies everything a step may change, so that the
check replay (``_api``) can be undone.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd.grad_mode import STATE
from ..nn.module import Module
from ..optim.lr_scheduler import LRScheduler
from ..optim.optimizer import Optimizer
from ..random import Generator
from ..tensor import Tensor

_LIMIT = 10_000  # NOTE: containers longer than this are not searched (data, not state)


@dataclass
class Found:
    modules: list[Module] = field(default_factory=list)
    optimizers: list[Optimizer] = field(default_factory=list)
    schedulers: list[Any] = field(default_factory=list)
    generators: list[Generator] = field(default_factory=list)
    tensors: list[Tensor] = field(default_factory=list)  # loose tensors (arguments, closure)


def discover(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Found:
    """The state ``fn(*args, **kwargs)`` can reach (module docstring)."""
    found = Found()
    seen: set[int] = set()

    def visit(obj: Any, depth: int) -> None:
        if id(obj) in seen or obj is None or isinstance(obj, (int, float, str, bytes, bool)):
            return
        seen.add(id(obj))
        if isinstance(obj, Tensor):
            found.tensors.append(obj)
        elif isinstance(obj, Module):
            found.modules.append(obj)
        elif isinstance(obj, Optimizer):
            found.optimizers.append(obj)
        elif isinstance(obj, (LRScheduler,)) or hasattr(obj, "optimizer") and hasattr(
                obj, "step") and isinstance(getattr(obj, "optimizer", None), Optimizer):
            found.schedulers.append(obj)
            visit(obj.optimizer, depth)
        elif isinstance(obj, Generator):
            found.generators.append(obj)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            if len(obj) <= _LIMIT:
                for o in obj:
                    visit(o, depth)
        elif isinstance(obj, dict):
            if len(obj) <= _LIMIT:
                for o in obj.values():
                    visit(o, depth)
        elif isinstance(obj, (types.FunctionType, types.MethodType)):
            if depth > 0:
                visit_function(obj, depth - 1)
        elif isinstance(obj, np.ndarray) or isinstance(obj, type) or isinstance(
                obj, types.ModuleType):
            return
        elif depth > 0 and hasattr(obj, "__dict__"):
            visit(vars(obj), depth - 1)

    def visit_function(f: Any, depth: int) -> None:
        if isinstance(f, types.MethodType):
            visit(f.__self__, depth + 1)
            f = f.__func__
        if not isinstance(f, types.FunctionType):
            return
        for cell in f.__closure__ or ():
            try:
                visit(cell.cell_contents, depth)
            except ValueError:  # NOTE: an empty cell
                pass
        visit(f.__defaults__, depth)
        visit(f.__kwdefaults__, depth)
        g = f.__globals__
        for name in global_names(f.__code__):
            if name in g:
                visit(g[name], depth)

    if isinstance(fn, Module):
        visit(fn, 1)
    else:
        visit_function(fn, 1)
    visit(args, 1)
    visit(kwargs, 1)
    return found


@functools.lru_cache(maxsize=256)
def global_names(code: types.CodeType) -> tuple[str, ...]:
    """The global names ``code`` and the functions nested in it read (sorted)."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= set(global_names(c))
    return tuple(sorted(names))


def tensors_of(found: Found) -> list[Tensor]:
    """Every tensor the step's state holds: parameters and buffers, the optimizers'
    parameters, loose tensors; each once, in a fixed order (every call: cheap, and what the
    signature's identity guard reads)."""
    out: list[Tensor] = []
    seen: set[int] = set()

    def add(t: Any) -> None:
        if t is not None and id(t) not in seen:
            seen.add(id(t))
            out.append(t)

    def walk(m: Module, mods: set[int]) -> None:
        # NOTE: the tables named_parameters/named_buffers read, without their names
        if id(m) in mods:
            return
        mods.add(id(m))
        for t in m._parameters.values():
            add(t)
        for t in m._buffers.values():
            add(t)
        for c in m._modules.values():
            if c is not None:
                walk(c, mods)

    mods: set[int] = set()
    for m in found.modules:
        walk(m, mods)
    for opt in found.optimizers:
        for group in opt.param_groups:
            for p in group["params"]:
                add(p)
        for st in opt.state.values():  # NOTE: a recorded update reads and writes them
            for v in st.values():
                if isinstance(v, Tensor):
                    add(v)
    for t in found.tensors:
        add(t)
    return out


def signature(found: Found, tensors: list[Tensor], args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """What a replay of this step assumes (module docstring): equal signatures, one recording."""
    sig: list[Any] = [STATE.grad_enabled, getattr(STATE, "inference", False)]
    given: set[int] = set()
    _ids(args, given)
    _ids(kwargs, given)
    for t in tensors:
        d = t._data
        g = t._grad
        dev = t._device
        # NOTE: the identity too: a replay loads state tensors by object (arguments by position)
        sig.append((None if id(t) in given else id(t), d.shape, d.dtype, d.strides, dev.type,
                    dev.index, t._requires_grad,
                    None if g is None else (g._data.shape, g._data.dtype, g._data.strides)))
    flags: list[bool] = []
    seen: set[int] = set()
    for m in found.modules:
        _training(m, flags, seen)
    sig.append(tuple(flags))
    for opt in found.optimizers:
        # NOTE: a recorded update holds most hyper-parameters as constants; those it reads from
        # the group on every replay (``_live_hypers``: lr, betas, ...), and all of an update
        # called again rather than recorded, count only by type and by being zero or not
        recordable = getattr(opt, "_recordable", None)
        live = getattr(opt, "_live_hypers", ()) if recordable is not None and recordable() \
            else None
        sig.append(tuple(tuple((k, _kind(v) if live is None or k in live else _hyper(v))
                               for k, v in g.items() if k != "params")
                         for g in opt.param_groups))
    sig.append(_arg_key(args))
    sig.append(_arg_key(kwargs))
    return tuple(sig)


def _training(m: Module, out: list[bool], seen: set[int]) -> None:
    """Every submodule's ``training`` flag (``modules()`` order, without its generator)."""
    if id(m) in seen:
        return
    seen.add(id(m))
    out.append(m.training)
    for c in m._modules.values():
        if c is not None:
            _training(c, out, seen)


def _hyper(v: Any) -> Any:
    """A hyper-parameter as a signature entry: numbers, flags and tuples by value, tensors by
    identity, anything else by type."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, tuple):
        return tuple(_hyper(x) for x in v)
    return ("obj", type(v).__name__, id(v))


def _kind(v: Any) -> Any:
    """A hyper-parameter read afresh on every call: its type, and whether it is zero."""
    if isinstance(v, (bool, int, float)):
        return type(v), v == 0
    if isinstance(v, tuple):
        return tuple(_kind(x) for x in v)
    return type(v)


def _ids(obj: Any, out: set[int]) -> None:
    """The ids of the tensors among a call's arguments (guarded by value, not identity)."""
    if isinstance(obj, Tensor):
        out.add(id(obj))
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            _ids(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _ids(o, out)


def _arg_key(obj: Any) -> Any:
    """Non-tensor arguments by value (numbers, strings), containers by structure, tensors by
    shape and dtype (their values are the replay's inputs), anything else by type."""
    if isinstance(obj, Tensor):
        return ("T", obj._data.shape, obj._data.dtype.str, str(obj._device))
    if isinstance(obj, (tuple, list)):
        return (type(obj).__name__, tuple(_arg_key(o) for o in obj))
    if isinstance(obj, dict):
        return ("dict", tuple((k, _arg_key(v)) for k, v in obj.items()))
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return ("obj", type(obj).__qualname__, id(obj))


# ---- snapshots (the check replay is undone before the eager run it is checked against) ---------

def _copy(a: Any) -> Any:
    return a.copy() if isinstance(a, np.ndarray) else a


class Snapshot:
    """Everything a step may change, copied: tensors' arrays (in place restorable), gradients,
    optimizer state and groups, scheduler attributes, generator states."""

    def __init__(self, found: Found, tensors: list[Tensor]) -> None:
        self.tensors = [(t, t._data, _copy(t._data), t._grad,
                         None if t._grad is None else (t._grad._data, _copy(t._grad._data)))
                        for t in tensors]
        self.optims = [(opt, {p: {k: (v, _copy(v._data)) if isinstance(v, Tensor) else
                                  (v, _copy(v)) for k, v in s.items()}
                              for p, s in opt.state.items()},
                        [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups])
                       for opt in found.optimizers]
        self.scheds = [(s, {k: list(v) if isinstance(v, list) else v
                            for k, v in vars(s).items()}) for s in found.schedulers]
        self.gens = [(g, g.get_state()) for g in _generators(found)]

    def restore(self) -> None:
        for t, data, copy, grad, gdata in self.tensors:
            t._data = data
            if isinstance(data, np.ndarray):
                np.copyto(data, copy)
            t._grad = grad
            if grad is not None and gdata is not None:
                grad._data = gdata[0]
                if isinstance(gdata[0], np.ndarray):
                    np.copyto(gdata[0], gdata[1])
        for opt, state, groups in self.optims:
            opt.state.clear()
            for p, entries in state.items():
                restored: dict[str, Any] = {}
                for k, (v, copy) in entries.items():
                    if isinstance(v, Tensor):
                        if isinstance(v._data, np.ndarray) and v._data.shape == copy.shape:
                            np.copyto(v._data, copy)
                        else:
                            v._data = copy
                    restored[k] = v if isinstance(v, Tensor) else copy
                opt.state[p] = restored
            for g, saved in zip(opt.param_groups, groups):
                g.update(saved)
        for s, attrs in self.scheds:
            vars(s).clear()
            vars(s).update({k: list(v) if isinstance(v, list) else v for k, v in attrs.items()})
        for gen, st in self.gens:
            gen.set_state(st)


def _generators(found: Found) -> list[Generator]:
    from .. import random as _random

    gens = list(_random._default.values())
    return gens + [g for g in found.generators if all(g is not h for h in gens)]


def state_arrays(found: Found, tensors: list[Tensor], result: Any) -> list[tuple[str, Any]]:
    """(name, array or value) of everything a step changes, to compare a replay with the eager
    run: tensors and gradients, optimizer state, the result's tensors."""
    items: list[tuple[str, Any]] = []
    for i, t in enumerate(tensors):
        items.append((f"tensor {i} {tuple(t.shape)}", t._data))
        items.append((f"tensor {i}'s grad", None if t._grad is None else t._grad._data))
    for j, opt in enumerate(found.optimizers):
        for i, s in enumerate(opt.state.values()):
            for k, v in s.items():
                items.append((f"optimizer {j} state {i} {k}",
                              v._data if isinstance(v, Tensor) else v))
    flat: list[Any] = []
    _flatten(result, flat)
    for i, r in enumerate(flat):
        items.append((f"result {i}", r._data if isinstance(r, Tensor) else r))
    return [(name, _copy(v)) for name, v in items]


def _flatten(obj: Any, out: list[Any]) -> None:
    if isinstance(obj, (tuple, list)):
        for o in obj:
            _flatten(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _flatten(o, out)
    else:
        out.append(obj)


def first_difference(a: list[tuple[str, Any]], b: list[tuple[str, Any]]) -> str | None:
    """The name of the first entry that differs between two ``state_arrays`` (bit for bit)."""
    if len(a) != len(b):
        return "what the step changes"
    for (name, x), (_, y) in zip(a, b):
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
                    and x.shape == y.shape and x.dtype == y.dtype
                    and x.tobytes() == y.tobytes()):
                return name
        elif x != y and not (x is None and y is None):
            try:
                if bool(np.all(np.asarray(x) == np.asarray(y))):
                    continue
            except (TypeError, ValueError):
                pass
            return name
    return None
