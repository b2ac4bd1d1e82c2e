"""What a compiled step reads and changes: found once per call, guarded, snapshotted.

``_walk.Walk`` finds the modules, optimizers, schedulers, generators and tensors a step can
reach (``Found``): its arguments, its closure, its defaults, the globals its code names (and, one
level down, the same for the functions and plain objects among those). Their tensors are the
step's *places*: each tensor's array, and each parameter's gradient slot. ``signature`` is what a
replay assumes (shapes, dtypes, devices, ``requires_grad``, which gradients exist, layouts, grad
mode and the global settings, hooks, the non-tensor arguments, the modules' plain attributes
(training flags, dropout's ``p``) and every plain Python value the walk met: a recording keeps
the values the step computed with, so a changed one retraces); ``Snapshot`` copies everything a step may change, so that the check
replay (``_api``) can be undone; ``module_attrs``/``attr_changes`` tell what a step changed in
its modules' Python state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from .. import dtypes as _dtypes
from ..autograd import anomaly as _anomaly
from ..autograd.grad_mode import STATE
from ..device import _DEFAULT as _DEFAULT_DEVICE
from ..nn.module import Module
from ..optim.optimizer import Optimizer
from ..random import Generator
from ..tensor import _ARRAY_TYPES, Tensor


@dataclass
class Found:
    modules: list[Module] = field(default_factory=list)
    optimizers: list[Optimizer] = field(default_factory=list)
    schedulers: list[Any] = field(default_factory=list)
    generators: list[Generator] = field(default_factory=list)
    tensors: list[Tensor] = field(default_factory=list)  # loose tensors (arguments, closure)
    values: list[Any] = field(default_factory=list)  # plain Python values, in the walk's order


def tensors_of(found: Found, reads: Any = None) -> list[Tensor]:
    """Every tensor the step's state holds: parameters and buffers, the optimizers'
    parameters, loose tensors; each once, in a fixed order (every call: cheap, and what the
    signature's identity guard reads). ``reads``: as ``Walk``'s, for the tables and the
    optimizers' groups and state read here (and by ``signature``)."""
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
        if reads is not None:
            # NOTE: the signature reads the modules' plain attributes, names and values
            reads.attr(m, "__dict__")
            reads.values(m.__dict__, keys=True)
            for table in (m._parameters, m._buffers, m._modules):
                reads.values(table)
            for name in _HOOK_TABLES:
                table = m.__dict__.get(name)
                if isinstance(table, dict):
                    reads.values(table, keys=True)
            for v in m.__dict__.values():
                if type(v) in _CONTAINERS:
                    reads.length(v)  # NOTE: ``_objects``
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
        if reads is not None:
            reads.attr(opt, "param_groups")
            reads.attr(opt, "state")
            reads.items(opt.param_groups)
            live = getattr(opt, "_live_hypers", ())
            for group in opt.param_groups:
                reads.group(group, live if isinstance(live, tuple) else ())
                reads.items(group["params"])
            reads.values(opt.state)
            for st in opt.state.values():
                reads.values(st)
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


def modes() -> tuple[Any, ...]:
    """The global settings a recording computed under: the default dtype (the complex one
    follows it) and device (factories without ``dtype=``/``device=``), anomaly mode (its checks
    are not replayed)."""
    return (_dtypes._default_float, _DEFAULT_DEVICE[0], _anomaly.STATE.enabled,
            _anomaly.STATE.check_nan)


def signature(found: Found, tensors: list[Tensor], args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> Key:
    """What a replay of this step assumes (module docstring): equal signatures, one recording."""
    sig: list[Any] = [STATE.grad_enabled, getattr(STATE, "inference", False), modes()]
    given = {id(t) for _, t in leaves((args, kwargs)) if isinstance(t, Tensor)}
    for t in tensors:
        d = t._data
        g = t._grad
        dev = t._device
        # NOTE: the identity too: a replay loads state tensors by object (arguments by position)
        sig.append((None if id(t) in given else id(t), d.shape, d.dtype, d.strides, dev.type,
                    dev.index, t._requires_grad,
                    None if g is None else (g._data.shape, g._data.dtype, g._data.strides),
                    tensor_hooks(t)))
    for opt in found.optimizers:
        # NOTE: a recorded update holds most hyper-parameters as constants; those it reads from
        # the group on every replay (``_live_hypers``: lr, betas, ...), and all of an update
        # called again rather than recorded, count only by type and by being zero or not
        live = live_hypers(opt)
        sig.append(tuple(tuple((k, _kind(v) if live is None or k in live else _hyper(v))
                               for k, v in g.items() if k != "params")
                         for g in opt.param_groups))
    # NOTE: the modules' plain attributes (training flags, dropout's p, a user's flag) and the
    # plain values in the closure, globals and the objects reached
    simple = _SIMPLE_SET
    sig.append(tuple(tuple([(k, v) for k, v in m.__dict__.items()
                            if type(v) in simple or (type(v) is tuple and _simple(v))])
                     for m in _submodules(found)))
    # NOTE: the hooks: a recording ran those there were (their arithmetic is in it), and no other
    sig.append(tuple(_hooks(m.__dict__.get(n) for n in _HOOK_TABLES) for m in _submodules(found)))
    # NOTE: and the objects they hold (a function the forward calls: ``self.act = F.gelu``)
    sig.append(tuple(_objects(m) for m in _submodules(found)))
    sig.append(tuple(found.values))
    sig.append(_arg_key(args))
    sig.append(_arg_key(kwargs))
    return Key(tuple(sig))


class Key:
    """A signature (``sig``) whose hash is computed once: a compiled call looks it up on every
    call, and ``_memo`` hands the previous call's back while nothing changed."""
    __slots__ = ("sig", "_hash")

    def __init__(self, sig: tuple[Any, ...]) -> None:
        self.sig = sig
        self._hash = hash(sig)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is Key and self._hash == other._hash
                                 and self.sig == other.sig)


_HOOK_TABLES = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks",
                "_forward_pre_hooks_with_kwargs", "_forward_hooks_with_kwargs")


class _Same:
    """An object in a signature by identity (a hook), kept alive by it (no reused ``id``)."""
    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __eq__(self, other: object) -> bool:
        return type(other) is _Same and other.obj is self.obj


def _hooks(tables: Any) -> tuple[Any, ...]:
    """Hook tables (dicts, or None) as a signature entry: each one's keys and hooks."""
    return tuple(tuple((k, _Same(v)) for k, v in t.items()) if isinstance(t, dict) and t else ()
                 for t in tables)


def _objects(m: Module) -> tuple[Any, ...]:
    """A module's attributes that are neither plain values, tensors nor its tables, by identity
    (containers with their length)."""
    out = []
    for k, v in m.__dict__.items():
        t = type(v)
        if t in _SIMPLE_SET or t is tuple and _simple(v) or isinstance(v, Tensor) \
                or k in _TABLES or k in _HOOK_TABLES:
            continue
        out.append((k, _Same(v), len(v)) if t in _CONTAINERS else (k, _Same(v)))
    return tuple(out)


_CONTAINERS = frozenset({list, dict, set})


def tensor_hooks(t: Tensor) -> Any:
    """A tensor's gradient and post-accumulate hooks as a signature entry (None: none, or the
    tensor needs no grad, so none runs)."""
    if not t._requires_grad or not (t._hooks or t._post_acc_hooks):
        return None
    return _hooks((t._hooks, t._post_acc_hooks))


def live_hypers(opt: Any) -> tuple[str, ...] | None:
    """The hyper-parameters of ``opt`` a replay reads from its groups afresh (a recorded update:
    ``_live_hypers``), or None when its step is called again on replay (all of them): those the
    signature counts by kind only."""
    recordable = getattr(opt, "_recordable", None)
    return getattr(opt, "_live_hypers", ()) if recordable is not None and recordable() else None


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


def leaves(obj: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """``(path, leaf)`` for everything in ``obj`` that is not a tuple, list or dict (a call's
    arguments, a step's result), in order; ``path``: the indices and keys down to it."""
    if isinstance(obj, (tuple, list)):
        for i, o in enumerate(obj):
            yield from leaves(o, path + (i,))
    elif isinstance(obj, dict):
        for k, o in obj.items():
            yield from leaves(o, path + (k,))
    else:
        yield path, obj


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


# ---- the modules' Python state (a replay runs no Python: what the step sets there is replayed
# as a store of the value it ended with, checked by the check replay, or breaks) -------------------

_SIMPLE = (bool, int, float, complex, str, bytes, type(None))
_SIMPLE_SET = frozenset(_SIMPLE)
_TABLES = ("_parameters", "_buffers", "_modules")


def _simple(v: Any) -> bool:
    return type(v) in _SIMPLE or (type(v) is tuple and all(_simple(x) for x in v))


def _fingerprint(name: str, v: Any) -> tuple[Any, ...]:
    """``("value", v)`` for plain values (replayable as a store), else what a change of the
    attribute would show: a table's entries by identity, a container's identity and length, an
    object's identity."""
    if name in _TABLES:
        return ("table", tuple((k, id(x)) for k, x in v.items()))
    if _simple(v):
        return ("value", type(v), v)
    if isinstance(v, (list, dict, set)):
        return ("container", id(v), len(v))
    return ("object", id(v))


def _same_fingerprint(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    if a == b:
        return True
    # NOTE: NaN held by an attribute stays the same value
    return (a[0] == b[0] == "value" and a[1] is b[1] is float and a[2] != a[2] and b[2] != b[2])


def module_attrs(found: Found) -> dict[tuple[int, str], tuple[Module, str, Any]]:
    """``(id(module), name) -> (module, name, fingerprint)`` for every attribute of every module
    the step reaches (submodules included)."""
    out: dict[tuple[int, str], tuple[Module, str, Any]] = {}
    for m in _submodules(found):
        for k, v in vars(m).items():
            out[id(m), k] = (m, k, _fingerprint(k, v))
    return out


def attr_changes(before: dict[tuple[int, str], tuple[Module, str, Any]],
                 after: dict[tuple[int, str], tuple[Module, str, Any]]
                 ) -> tuple[list[tuple[Module, str, Any]], str | None]:
    """(the attributes set to plain values or to tensors, as (module, name, value)), the first
    change a replay cannot repeat (described), or None)."""
    sets: list[tuple[Module, str, Any]] = []
    for key, (m, k, fp) in after.items():
        was = before.get(key)
        if was is not None and _same_fingerprint(was[2], fp):
            continue
        if fp[0] == "value":
            sets.append((m, k, fp[2]))
            continue
        if fp[0] == "object" and isinstance(vars(m)[k], Tensor):
            sets.append((m, k, vars(m)[k]))  # NOTE: weight_norm's weight, made by its hook
            continue
        what = {"table": "replaces a parameter, buffer or submodule in",
                "container": "changes the container", "object": "replaces the object"}[fp[0]]
        return sets, f"the step {what} {type(m).__name__}.{k} (a replay runs no Python)"
    for key, (m, k, _) in before.items():
        if key not in after:
            return sets, f"the step deletes {type(m).__name__}.{k} (a replay runs no Python)"
    return sets, None


def _submodules(found: Found) -> list[Module]:
    """The modules found and their submodules, each once, in ``modules()``'s order."""
    out: list[Module] = []
    seen: set[int] = set()

    def walk(m: Module) -> None:
        if id(m) not in seen:
            seen.add(id(m))
            out.append(m)
            for c in m.__dict__["_modules"].values():
                if c is not None:
                    walk(c)

    for top in found.modules:
        walk(top)
    return out


def _module_values(found: Found) -> list[tuple[Module, dict[str, Any]]]:
    """Each module's plain attributes (the values a replay assumes, or stores)."""
    simple = _SIMPLE_SET
    return [(m, {k: v for k, v in m.__dict__.items()
                 if type(v) in simple or (type(v) is tuple and _simple(v))})
            for m in _submodules(found)]


# ---- snapshots (the check replay is undone before the eager run it is checked against) ---------

def _copy(a: Any) -> Any:
    """A copy of an array (a NumPy or a device array), anything else as it is."""
    return a.copy() if isinstance(a, np.ndarray) or type(a) in _ARRAY_TYPES else a


def _put(dst: Any, src: Any) -> None:
    """``src``'s values into array ``dst`` (the same array type, shape and dtype)."""
    if isinstance(dst, np.ndarray):
        np.copyto(dst, src)
    else:
        dst[...] = src


def _host(t: Tensor) -> Any:
    """A copy of ``t``'s array on the host (for the bitwise comparison)."""
    a = t._data
    return a.copy() if isinstance(a, np.ndarray) else t._device.backend.to_host(a)


class Snapshot:
    """Everything a step may change, copied: tensors' arrays (in place restorable), gradients,
    optimizer state and groups, scheduler attributes, generator states."""

    def __init__(self, found: Found, tensors: list[Tensor]) -> None:
        self.tensors = [(t, t._data, _copy(t._data), t._grad,
                         None if t._grad is None else (t._grad._data, _copy(t._grad._data)),
                         t._requires_grad)
                        for t in tensors]
        self.optims = [(opt, {p: {k: (v, _copy(v._data)) if isinstance(v, Tensor) else
                                  (v, _copy(v)) for k, v in s.items()}
                              for p, s in opt.state.items()},
                        [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups])
                       for opt in found.optimizers]
        self.scheds = [(s, {k: list(v) if isinstance(v, list) else v
                            for k, v in vars(s).items()}) for s in found.schedulers]
        self.gens = [(g, g.get_state()) for g in _generators(found)]
        self.attrs = _module_values(found)

    def restore(self) -> None:
        for t, data, copy, grad, gdata, flag in self.tensors:
            t._requires_grad = flag
            t._data = data
            if copy is not data:
                _put(data, copy)
            t._grad = grad
            if grad is not None and gdata is not None:
                grad._data = gdata[0]
                if gdata[1] is not gdata[0]:
                    _put(gdata[0], gdata[1])
        for opt, state, groups in self.optims:
            opt.state.clear()
            for p, entries in state.items():
                restored: dict[str, Any] = {}
                for k, (v, copy) in entries.items():
                    if isinstance(v, Tensor):
                        if type(v._data) is type(copy) and v._data.shape == copy.shape:
                            _put(v._data, copy)
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
        for m, values in self.attrs:
            d = vars(m)
            for k in [k for k, v in d.items() if _simple(v) and k not in values]:
                del d[k]
            d.update(values)


def _generators(found: Found) -> list[Generator]:
    from .. import random as _random

    gens = list(_random._default.values())
    return gens + [g for g in found.generators if all(g is not h for h in gens)]


def state_arrays(found: Found, tensors: list[Tensor], result: Any) -> list[tuple[str, Any]]:
    """(name, array or value) of everything a step changes, to compare a replay with the eager
    run: tensors and gradients, optimizer state, the result's tensors."""
    items: list[tuple[str, Any]] = []
    for i, t in enumerate(tensors):
        items.append((f"tensor {i} {tuple(t.shape)}", t))
        items.append((f"tensor {i}'s grad", t._grad))
    for j, opt in enumerate(found.optimizers):
        for i, s in enumerate(opt.state.values()):
            for k, v in s.items():
                items.append((f"optimizer {j} state {i} {k}", v))
    for i, (m, values) in enumerate(_module_values(found)):
        for k, v in values.items():
            items.append((f"module {i}'s {type(m).__name__}.{k}", v))
    for i, (_, r) in enumerate(leaves(result)):
        items.append((f"result {i}", r))
    return [(name, _host(v) if isinstance(v, Tensor) else _copy(v)) for name, v in items]


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
