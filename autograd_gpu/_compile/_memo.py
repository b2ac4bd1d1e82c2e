"""A compiled call's own work made cheap: the previous call's discovery, tensors and signature,
reused while nothing they were made from changed.

Finding a step's state (``_walk.Walk``), its tensors (``tensors_of``) and its signature
walks the step's closure, globals, modules and optimizers on every call: tens of microseconds,
a good part of a small step. ``Memo`` keeps, with the previous call's results, what that walk
read through (``Reads``): each dict, list and set it iterated (their items, by identity, and
the names of those whose keys the signature holds), each attribute, closure cell and global it
read, and the outcome of each scheduler test. Holding those objects keeps them alive, so an
identity test cannot be fooled by a reused ``id``. A call whose reads all hold, whose arguments
are tensors and plain values only, and whose tensors' metadata (shapes, dtypes, strides,
devices, ``requires_grad``, which gradients exist and their layouts), grad mode and argument
keys equal the previous call's (``_dynamic``, compared on every call) gets the previous
signature without the walk. Anything else (a replaced parameter, a new param_group, a module
switched to eval, a changed global, an argument of another kind) takes the full walk, as before.
"""

from __future__ import annotations

import operator
import threading
from itertools import chain, repeat
from typing import Any

from ..autograd.grad_mode import STATE
from ..tensor import Tensor
from . import _state, _walk

_MISSING = object()
_VALUES_OF = operator.methodcaller("values")
_CELL = operator.attrgetter("cell_contents")
_GRAD = operator.attrgetter("_grad")
_META = operator.attrgetter("shape", "dtype", "strides")
_ROW = operator.attrgetter("_data.shape", "_data.dtype", "_data.strides", "_device",
                           "_requires_grad")


class Reads:
    """What a walk read through (module docstring), noted by ``_walk.Walk`` and
    ``_state.tensors_of``, then ``freeze``-d; ``hold()`` tells whether all of it is still what
    it was."""

    def __init__(self) -> None:
        self.dicts: list[Any] = []  # dicts whose values were read
        self.seqs: list[Any] = []  # lists and sets whose items were read
        self.keyed: list[Any] = []  # dicts whose keys were read too
        self.cells: list[Any] = []
        self.objs: list[Any] = []  # attributes: objs[i].names[i] (globals: gdicts[i][gnames[i]])
        self.names: list[str] = []
        self.gdicts: list[Any] = []
        self.gnames: list[str] = []
        self.groups: list[Any] = []
        self.measured: list[Any] = []  # containers whose length was read
        self.kinded: list[Any] = []  # hyper-parameters compared by kind: kinded[i][kinds[i]]
        self.kinds: list[str] = []
        self.kinds_were: list[Any] = []
        self.tested: list[Any] = []  # objects the scheduler test ran on, and its outcome
        self.outcomes: list[bool] = []
        self.plain: list[Any] = []
        self.other: list[Any] = []
        self.sized: list[Any] = []
        self.lens: list[int] = []
        self.keys: tuple[Any, ...] = ()
        self.vals: tuple[Any, ...] = ()

    # ---- noted by the walk ---------------------------------------------------------------------
    def values(self, d: Any, keys: bool = False) -> None:
        self.dicts.append(d)
        if keys:
            self.keyed.append(d)

    def items(self, seq: Any) -> None:
        if type(seq) is not tuple:
            self.seqs.append(seq)

    def attr(self, obj: Any, name: str) -> None:
        self.objs.append(obj)
        self.names.append(name)

    def cells_of(self, cells: tuple[Any, ...]) -> None:
        self.cells += cells

    def globals(self, g: dict[str, Any], names: tuple[str, ...]) -> None:
        self.gdicts += [g] * len(names)
        self.gnames += names

    def group(self, g: dict[str, Any], live: tuple[str, ...]) -> None:
        """An optimizer's param_group: its names; the hyper-parameters a recorded update reads
        afresh (``live``: lr, betas...) by kind (their type, zero or not: as the signature
        holds them, so a scheduler changing lr keeps the signature), the rest by identity."""
        self.groups.append(g)
        for k in g:
            if k in live:
                self.kinded.append(g)
                self.kinds.append(k)
            else:
                self.gdicts.append(g)
                self.gnames.append(k)

    def length(self, obj: Any) -> None:
        self.measured.append(obj)

    def test(self, obj: Any, outcome: bool) -> None:
        self.tested.append(obj)
        self.outcomes.append(outcome)

    # ---- checked on each call --------------------------------------------------------------------
    def _now(self) -> Any:
        """Everything read, in one sequence (an empty cell raises ValueError)."""
        return chain(chain.from_iterable(map(dict.values, self.plain)),
                     chain.from_iterable(map(_VALUES_OF, self.other)),
                     chain.from_iterable(self.seqs), map(_CELL, self.cells),
                     map(getattr, self.objs, self.names, repeat(_MISSING)),
                     map(dict.get, self.gdicts, self.gnames, repeat(_MISSING)))

    def _kinds(self) -> list[Any]:
        return [_state._kind(g[k]) for g, k in zip(self.kinded, self.kinds)]

    def freeze(self) -> bool:
        """Take what was read as the state to compare with; False when it cannot be (an empty
        closure cell)."""
        try:
            # NOTE: dict.values (a C call) where it is the type's own (an OrderedDict's order
            # is its own); empty ones only by their length (most hook tables, a ReLU's)
            self.plain = [d for d in self.dicts if type(d).values is dict.values and d]
            self.other = [d for d in self.dicts if type(d).values is not dict.values and d]
            self.sized = self.dicts + self.seqs + self.groups + self.measured
            self.lens = list(map(len, self.sized))
            self.keyed = [d for d in self.keyed + self.groups if d]
            self.keys = tuple(chain.from_iterable(self.keyed))
            self.vals = tuple(self._now())
            self.kinds_were = self._kinds()
        except ValueError:
            return False
        return True

    def hold(self) -> bool:
        """Whether every container, attribute, cell and global read still holds the same
        objects (by identity; keys by equality), and every scheduler test comes out the same."""
        try:
            if list(map(len, self.sized)) != self.lens \
                    or tuple(chain.from_iterable(self.keyed)) != self.keys \
                    or not all(map(operator.is_, self._now(), self.vals)) \
                    or self.kinds and self._kinds() != self.kinds_were:
                return False
            return all(_walk._scheduler_like(o) is was
                       for o, was in zip(self.tested, self.outcomes))
        except Exception:  # noqa: BLE001 - whatever failed, the full walk meets it again
            return False


def _pure_recordable() -> tuple[Any, ...]:
    """The ``_recordable`` methods that read only the groups and their parameters' devices
    (which the reads and ``_dynamic`` cover)."""
    from ..optim.adam import Adam
    from ..optim.sgd import SGD

    return (Adam._recordable, SGD._recordable)


class _Last:
    """The previous call's results and what they were made from (``Memo``)."""
    __slots__ = ("reads", "found", "seen", "base", "base_ids", "impure", "dyn", "key")

    def __init__(self, reads: Reads, found: _state.Found, seen: set[int], base: list[Tensor],
                 impure: list[Any]) -> None:
        self.reads, self.found, self.seen, self.base = reads, found, seen, base
        self.base_ids = {id(t) for t in base}
        self.impure = impure  # optimizers whose _recordable() is asked on every call
        self.dyn: Any = None
        self.key: Any = None

    def split(self, args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> tuple[list[Tensor], list[Any]] | None:
        """The arguments' tensors (new to the step's state) and plain values, in the walk's
        order; None when an argument is anything else, or a tensor the state holds."""
        tensors: list[Tensor] = []
        values: list[Any] = []
        ids: set[int] = set()
        for a in chain(args, kwargs.values()):
            if isinstance(a, Tensor):
                if id(a) in self.seen or id(a) in self.base_ids or _state.tensor_hooks(a):
                    return None  # NOTE: its place in the signature moves, or hooks: the walk
                if id(a) not in ids:
                    ids.add(id(a))
                    tensors.append(a)
            elif a is None or isinstance(a, _walk._VALUES):
                values.append(a)
            else:
                return None
        return tensors, values


def _dynamic(tensors: list[Tensor], values: list[Any], args: tuple[Any, ...],
             kwargs: dict[str, Any], impure: list[Any]) -> tuple[Any, ...]:
    """What the signature reads that can change without the reads changing: grad mode and the
    global settings (``_state.modes``), the
    tensors' metadata (in place: ``set_``, ``resize_``, ``requires_grad_``, a new ``.grad``),
    the arguments' keys and values, the non-pure optimizers' ``_recordable()``."""
    return (STATE.grad_enabled, STATE.inference, _state.modes(), list(map(_ROW, tensors)),
            [g if g is None else _META(g._data) for g in map(_GRAD, tensors)],
            values, _state._arg_key(args) if args else (),
            _state._arg_key(kwargs) if kwargs else (), [opt._recordable() for opt in impure])


class Memo:
    """``lookup``: ``(found, tensors, signature)`` of a call, reused from the previous call
    when nothing they are made of changed (module docstring)."""

    def __init__(self) -> None:
        self._last: _Last | None = None
        self._lock = threading.Lock()
        self._keys: dict[Any, Any] = {}

    def _intern(self, key: Any) -> Any:
        """One object per signature: the entries' lookup then finds its key by identity,
        without comparing the tuples."""
        keys = self._keys
        if len(keys) > 4 * 16:  # NOTE: a step whose signature keeps changing
            keys.clear()
        return keys.setdefault(key, key)

    def lookup(self, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[_state.Found, list[Tensor], Any]:
        last = self._last
        if last is not None and last.reads.hold():
            split = last.split(args, kwargs) if args or kwargs else ([], [])
            if split is not None:
                extra, values = split
                if extra or values:
                    f = last.found
                    found = _state.Found(f.modules, f.optimizers, f.schedulers, f.generators,
                                         f.tensors + extra, f.values + values)
                    tensors = last.base + extra
                else:
                    found, tensors = last.found, last.base
                dyn = _dynamic(tensors, values, args, kwargs, last.impure)
                if dyn == last.dyn:
                    return found, tensors, last.key
                # NOTE: else the full walk: what the reads cover can depend on the metadata
                # (which tensors' hooks can run)
        return self._walk(target, args, kwargs)

    def _walk(self, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> tuple[_state.Found, list[Tensor], Any]:
        """The full walk, noting what it reads for the next call."""
        reads = Reads()
        walk = _walk.Walk(reads)
        walk.target(target)
        f = walk.found
        mine = _state.Found(list(f.modules), list(f.optimizers), list(f.schedulers),
                            list(f.generators), list(f.tensors), list(f.values))
        seen = set(walk.seen)
        walk.reads = None  # NOTE: the arguments are looked at afresh on every call
        walk.visit(args, 1)
        walk.visit(kwargs, 1)
        found = walk.found
        tensors = _state.tensors_of(found, reads)
        key = self._intern(_state.signature(found, tensors, args, kwargs))
        pure = _pure_recordable()
        impure = [opt for opt in mine.optimizers
                  if getattr(type(opt), "_recordable", None) not in pure
                  and getattr(opt, "_recordable", None) is not None]
        base = _state.tensors_of(mine)
        for t in base:
            # NOTE: hooks run only for tensors that need grad (``tensor_hooks``); one that
            # starts to need it changes ``_dynamic``, and the next call walks again
            if t._requires_grad:
                for name in ("_hooks", "_post_acc_hooks"):
                    reads.attr(t, name)
                    table = getattr(t, name)
                    if isinstance(table, dict):
                        reads.values(table, keys=True)
        last = None
        if reads.freeze():
            last = _Last(reads, mine, seen, base, impure)
            split = last.split(args, kwargs) if args or kwargs else ([], [])
            if split is not None:
                last.dyn = _dynamic(tensors, split[1], args, kwargs, impure)
                last.key = key
            else:
                last = None
        with self._lock:
            self._last = last
        return found, tensors, key
