"""Recording a step at the array level: ``SymArray`` and the ``Recorder``.

While ``compile`` traces (the first call of a signature runs eagerly), every NumPy array the step
touches is a ``SymArray``: an ``ndarray`` subclass whose ufuncs (``__array_ufunc__``: operators
too, ``a @ b`` and ``a += b`` are ufuncs), NumPy functions (``__array_function__``) and methods
(``reshape``, indexing, ``astype``, ...) compute as usual on plain views and append one
instruction to the recording: the callable, its arguments with arrays replaced by numbered slots,
and the slots of its results. Wherever the eager code reads a value back to Python (``item``,
``bool``, ``int``, ``float``, ``tolist``), the recording keeps a guard: the value seen, checked
again on replay. Arrays made from Python values alone (``np.zeros``, ``np.asarray(list)``) are
recorded by patching those NumPy functions for the trace, so a replay allocates them afresh;
random draws are recorded as calls on the generator that made them, so a replay draws new
numbers in the same order. What the recording cannot replay ends it (``Break``): an in-place
write into an array the trace did not make, for one; a view of recorded memory made out of
sight (``np.ndarray(buffer=...)``, an ``__array_interface__`` object; ``as_strided`` is recorded
as one call instead), or ``np.empty``'s result filled out of sight (by an extension such as
NumPy's random Generator): as constants, they would hold the recorded call's memory.

The recording is a straight line: ``_program.Program`` turns it into one Python function.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


class Break(Exception):
    """The step does something a replay cannot repeat; ``cause`` says what (and where)."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


class QuietBreak(Break):
    """A recording that ends as expected (no warning): a first step making optimizer state."""


@dataclass(frozen=True)
class Slot:
    """An array the replay computes (or loads): its number in the replay's locals."""
    n: int


@dataclass(frozen=True)
class Const:
    """An object the replay passes as it is (index ``n`` in the constants)."""
    n: int


@dataclass(frozen=True)
class Host:
    """A Python value a recorded call returned (a replay checks it is the same)."""
    value: Any


@dataclass
class Instr:
    """One recorded call. ``kind``: "call" (``fn(*args, **kwargs)``), "method" (``args[0].fn(...)``,
    ``fn`` a name), "getattr", "getitem", "setitem", "guard" (``args[0]`` read back with ``fn``
    must give ``expect``), "shape" (``args[0].shape`` must be ``expect``), "load", "store",
    "opaque". ``out``: the result's template (Slot, or tuples of them, or None)."""
    kind: str
    fn: Any
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    out: Any = None
    expect: Any = None
    pure: bool = True
    where: str = ""


class SymArray(np.ndarray):
    """An ndarray whose work is recorded while a ``Recorder`` is active (module docstring)."""

    _slot: int = -1
    _orig: Any = None  # the plain array (or NumPy scalar) it stands for
    _rid: int = -1  # the recording whose slot it is

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return either(lambda rec: rec.ufunc(ufunc, method, inputs, kwargs),
                      lambda: getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs)))

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return either(lambda rec: rec.function(func, args, kwargs),
                      lambda: func(*_plain(args), **_plain(kwargs)))

    # NOTE: ``base`` as the eager array's: code checks ``x.base is None`` to reuse buffers.
    @property
    def base(self) -> Any:  # type: ignore[override]
        b = np.ndarray.base.__get__(self)
        return None if b is None else b.base

    def __getitem__(self, key: Any) -> Any:
        return either(lambda rec: rec.getitem(self, key), lambda: raw(self)[_plain(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        def plain() -> None:
            raw(self)[_plain(key)] = _plain(value)

        either(lambda rec: rec.setitem(self, key, value), plain)

    def __iter__(self) -> Any:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self) -> bool:
        return self._read("__bool__", bool)

    def __int__(self) -> int:
        return self._read("__int__", int)

    def __float__(self) -> float:
        return self._read("__float__", float)

    def __complex__(self) -> complex:
        return self._read("__complex__", complex)

    def __index__(self) -> int:
        return self._read("__index__", lambda a: a.__index__())

    def item(self, *args: Any) -> Any:
        return self._read("item", lambda a: a.item(*args), args)

    def tolist(self) -> Any:
        return self._read("tolist", lambda a: a.tolist())

    def _read(self, name: str, how: Callable[[Any], Any], args: tuple[Any, ...] = ()) -> Any:
        value = how(raw(self))
        either(lambda rec: rec.guard(self, name, args, value), lambda: None)
        return value

    def __reduce__(self) -> Any:
        return raw(self).__reduce__()


def either(record: Callable[[Recorder], Any], plain: Callable[[], Any]) -> Any:
    """``record(rec)`` while a recording is active; ``plain()`` when none is, or when recording
    the call breaks (the recording stops: the rest of the step runs eagerly)."""
    rec = ACTIVE.rec
    if rec is not None:
        try:
            return record(rec)
        except Break as b:
            rec.on_break(b.cause)
    return plain()


def _method(name: str) -> Callable[..., Any]:
    def run(self: SymArray, *args: Any, **kwargs: Any) -> Any:
        return either(lambda rec: rec.method(self, name, args, kwargs),
                      lambda: getattr(raw(self), name)(*_plain(args), **_plain(kwargs)))

    run.__name__ = name
    return run


# NOTE: the ndarray methods that compute in C without NumPy's dispatch (those that do dispatch,
# such as ``sum``, would be recorded as their ufuncs; recording the method is one call instead).
_METHODS = ("all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "choose",
            "clip", "compress", "conj", "conjugate", "copy", "cumprod", "cumsum", "diagonal",
            "dot", "fill", "flatten", "max", "mean", "min", "nonzero", "partition", "prod", "put",
            "ravel", "repeat", "reshape", "round", "searchsorted", "sort", "squeeze", "std", "sum",
            "swapaxes", "take", "trace", "transpose", "var", "view", "__copy__", "__deepcopy__")
# NOTE: methods that write into the array itself
_WRITERS = {"fill", "put", "sort", "partition"}
_PROPERTIES = ("T", "mT", "real", "imag")
for _name in _METHODS:
    setattr(SymArray, _name, _method(_name))


def _property(name: str) -> property:
    getter = getattr(np.ndarray, name).__get__

    def get(self: SymArray) -> Any:
        return either(lambda rec: rec.attribute(self, name), lambda: getter(raw(self)))

    return property(get)


for _name in _PROPERTIES:
    setattr(SymArray, _name, _property(_name))

# NOTE: NumPy functions whose output shape depends on the values (a replay checks the shape)
_DATA_SHAPED = {np.nonzero, np.flatnonzero, np.argwhere, np.unique, np.extract, np.compress,
                np.repeat}
_DATA_SHAPED_METHODS = {"nonzero", "compress", "repeat"}
# NOTE: NumPy functions whose result holds whatever the memory held (``Recorder._fresh``)
_EMPTY = {np.empty, np.empty_like}
# NOTE: NumPy functions that write into their first argument
_WRITING_FUNCTIONS = {np.copyto, np.put, np.place, np.putmask, np.fill_diagonal,
                      np.put_along_axis}


def raw(sym: SymArray) -> Any:
    """The plain array a SymArray stands for (the very array the eager step made)."""
    orig = sym.__dict__.get("_orig")
    return orig if orig is not None else np.ndarray.view(sym, np.ndarray)


def _plain(obj: Any) -> Any:
    """``obj`` with every SymArray in it (tuples, lists, dicts) as its plain array."""
    if isinstance(obj, SymArray):
        return raw(obj)
    t = type(obj)
    if t is tuple or t is list:
        return t(_plain(o) for o in obj)
    if t is dict:
        return {k: _plain(v) for k, v in obj.items()}
    return obj


_RIDS = itertools.count()


class _Active(threading.local):
    rec: Recorder | None = None


ACTIVE = _Active()



class Recorder:
    """The recording of one traced call: instructions, constants, slots (module docstring).

    ``roots`` maps ``id(array)`` of the arrays the step starts from (parameters, gradients,
    buffers, inputs) to the slot of their ``load`` instruction. Every underlying computation
    runs with the recording paused (``ACTIVE.rec`` None), so NumPy's own calls inside it
    (``np.full`` calling ``np.empty``) are not recorded twice."""

    def __init__(self) -> None:
        self.rid = next(_RIDS)
        self.instrs: list[Instr] = []
        self.consts: list[Any] = []
        self._const_ids: dict[int, int] = {}
        self.n_slots = 0
        self.roots: dict[int, int] = {}
        self.keep: list[Any] = []  # NOTE: every array seen stays alive, so ids stay unique
        self._seen: set[int] = set()  # ids of the slots' SymArrays and their plain arrays
        # NOTE: slots made by np.empty/empty_like that no recorded call wrote into yet: their
        # bytes when made (a change without a recorded write was made out of sight)
        self._fresh: dict[int, tuple[Any, bytes]] = {}
        self.on_break: Callable[[str], None] = lambda cause: None  # the trace stops recording

    # ---- slots and templates ------------------------------------------------------------------
    def new_slot(self, arr: Any) -> SymArray:
        sym = np.ndarray.view(arr, SymArray)
        sym._orig = arr
        sym._slot = self.n_slots
        sym._rid = self.rid
        self.n_slots += 1
        self.keep.append(sym)
        self._seen.update((id(sym), id(arr)))
        return sym

    def owns(self, sym: SymArray) -> bool:
        """Whether ``sym`` is a slot of this recording."""
        return sym._slot >= 0 and sym._rid == self.rid

    def aliases(self, arr: Any) -> bool:
        """Whether ``arr`` is, or views the memory of, an array the recording computes or
        loads (along its ``base`` chain)."""
        cur = arr
        while cur is not None:
            if id(cur) in self._seen:
                return True
            cur = np.ndarray.base.__get__(cur) if isinstance(cur, np.ndarray) else getattr(
                cur, "base", None)
        return False

    def const(self, obj: Any) -> Const:
        key = id(obj)
        n = self._const_ids.get(key)
        if n is None:
            n = self._const_ids[key] = len(self.consts)
            self.consts.append(obj)
            self.keep.append(obj)
        return Const(n)

    def lower(self, obj: Any, writes: bool = False) -> tuple[Any, Any]:
        """(the plain object to compute with, its template): SymArrays become their slots,
        plain arrays the step started from their roots' slots, other arrays constants (which a
        recorded call must not write into: ``writes``)."""
        if isinstance(obj, SymArray) and obj._rid != self.rid and obj._slot >= 0:
            # NOTE: a slot of another recording (kept past its call): the plain array it stands
            # for, foreign to this one
            obj = raw(obj)
        if isinstance(obj, SymArray):
            if obj._slot < 0:
                raise Break("an array view made where the recording could not see it")
            fresh = self._fresh.get(obj._slot)
            if fresh is not None and fresh[0].tobytes() != fresh[1]:
                # NOTE: np.empty's result filled in C (NumPy's random Generator, an extension):
                # a replay would allocate it and leave it unfilled
                raise Break("an array filled where the recording could not see it (a NumPy "
                            "random Generator or another extension writing into np.empty's "
                            "result)")
            return raw(obj), Slot(obj._slot)
        t = type(obj)
        if t is tuple or t is list:
            pairs = [self.lower(o, writes) for o in obj]
            return t(p for p, _ in pairs), t(m for _, m in pairs)
        if t is dict:
            low = {k: self.lower(v, writes) for k, v in obj.items()}
            return {k: p for k, (p, _) in low.items()}, {k: m for k, (_, m) in low.items()}
        if isinstance(obj, np.ndarray):
            slot = self.roots.get(id(obj))
            if slot is not None:
                return obj, Slot(slot)
            if writes:
                raise Break("an in-place write into an array made where the recording could "
                            "not see it")
            if self.aliases(obj):
                # NOTE: made where the recording could not see it (``np.ndarray(buffer=...)``,
                # ``__array_interface__``): as a constant, a replay would read the memory of the
                # recorded call
                raise Break("an array view made where the recording could not see it")
            return obj, self.const(obj)
        if hasattr(obj, "__array_interface__") and not isinstance(obj, (np.generic, type)):
            # NOTE: an object exposing memory (NumPy's own DummyArray in as_strided): recorded
            # as a constant, a replay would read the recorded call's memory
            raise Break(f"an array made from a {t.__name__} (memory the recording cannot see)")
        if obj is None or obj is Ellipsis or t in (int, bool, str, slice):
            return obj, obj
        if t is float and obj == obj and obj not in (float("inf"), float("-inf")):
            return obj, obj
        return obj, self.const(obj)

    def lift(self, result: Any, outs: dict[int, SymArray]) -> tuple[Any, Any]:
        """(what the step sees, the result's template): new arrays become SymArrays with new
        slots; an ``out=`` array (``outs``: by the id of its plain array) comes back as the
        SymArray given, with no new slot."""
        if isinstance(result, np.ndarray):
            given = outs.get(id(result))
            if given is not None:
                return given, None
            sym = self.new_slot(result)
            return sym, Slot(sym._slot)
        if isinstance(result, np.generic):
            sym = self.new_slot(np.asarray(result))
            sym._orig = result
            return sym, Slot(sym._slot)
        if type(result) is tuple or type(result) is list:
            pairs = [self.lift(r, outs) for r in result]
            return type(result)(p for p, _ in pairs), tuple(m for _, m in pairs)
        if isinstance(result, tuple) and hasattr(result, "_fields"):
            # NOTE: a named tuple (np.linalg's QRResult, SlogdetResult, EighResult, ...)
            pairs = [self.lift(r, outs) for r in result]
            return type(result)(*(p for p, _ in pairs)), tuple(m for _, m in pairs)
        if isinstance(result, (bool, int, float, complex)):
            return result, Host(result)
        return result, None

    def _written(self, *targets: Any) -> None:
        """Recorded writes into ``targets``: the fresh slots they view are filled now."""
        if not self._fresh:
            return
        for t in targets:
            a = raw(t) if isinstance(t, SymArray) else t
            if not isinstance(a, np.ndarray):
                continue
            for n, (arr, _) in list(self._fresh.items()):
                if np.may_share_memory(arr, a):
                    del self._fresh[n]

    def _made_empty(self, seen: Any) -> None:
        if isinstance(seen, SymArray):
            arr = raw(seen)
            self._fresh[seen._slot] = (arr, arr.tobytes())

    def _run(self, fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        ACTIVE.rec = None
        try:
            return fn(*args, **kwargs)
        finally:
            ACTIVE.rec = self

    def _finish(self, instr: Instr, result: Any, outs: tuple[Any, ...] = ()) -> Any:
        given = {id(raw(o)): o for o in outs if isinstance(o, SymArray)}
        seen, template = self.lift(result, given)
        instr.out = template
        self.instrs.append(instr)
        return seen

    @staticmethod
    def _outs(out: Any) -> tuple[Any, ...]:
        if out is None:
            return ()
        return tuple(out) if isinstance(out, tuple) else (out,)

    # ---- what SymArray forwards -----------------------------------------------------------------
    def ufunc(self, ufunc: Any, method: str, inputs: tuple[Any, ...],
              kwargs: dict[str, Any]) -> Any:
        outs = self._outs(kwargs.get("out"))
        if method == "at":
            first, t_first = self.lower(inputs[0], writes=True)
            rest, t_rest = self.lower(inputs[1:])
            plain_in, t_in = (first, *rest), (t_first, *t_rest)
        else:
            plain_in, t_in = self.lower(inputs)
        plain_kw, t_kw = self.lower(kwargs, writes=bool(outs))
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        result = self._run(fn, plain_in, plain_kw)
        instr = Instr("call", fn, t_in, t_kw, pure=not outs and method != "at")
        if method == "at":
            self._written(inputs[0])
            self.instrs.append(instr)
            return result
        self._written(*outs)
        return self._finish(instr, result, outs)

    def function(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        writes = func in _WRITING_FUNCTIONS
        outs = self._outs(kwargs.get("out"))
        if writes and args:
            self.lower(args[0], writes=True)
        plain_a, t_a = self.lower(args)
        plain_kw, t_kw = self.lower(kwargs, writes=bool(outs))
        result = self._run(func, plain_a, plain_kw)
        same = _same_input(result, args, plain_a)
        if same is not None and not writes:
            return same  # NOTE: np.asarray of an array and the like: the array itself
        if writes and args and isinstance(args[0], SymArray):
            outs = (args[0],)
        self._written(*outs)
        seen = self._finish(Instr("call", func, t_a, t_kw, pure=not writes and not outs),
                            result, outs)
        if func in _DATA_SHAPED:
            self._shape_guards(seen)
        if func in _EMPTY:
            self._made_empty(seen)
        return seen

    def method(self, obj: SymArray, name: str, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
        writes = name in _WRITERS
        outs = self._outs(kwargs.get("out"))
        plain_self, t_self = self.lower(obj, writes=writes)
        plain_a, t_a = self.lower(args)
        plain_kw, t_kw = self.lower(kwargs, writes=bool(outs))
        result = self._run(getattr(plain_self, name), plain_a, plain_kw)
        if result is plain_self and not writes:
            return obj  # NOTE: astype(copy=False) and the like: the array itself, no call
        instr = Instr("method", name, (t_self, *t_a), t_kw, pure=not writes and not outs)
        self._written(*outs, *((obj,) if writes else ()))
        seen = self._finish(instr, result, outs + ((obj,) if writes else ()))
        if name in _DATA_SHAPED_METHODS:
            self._shape_guards(seen)
        return seen

    def attribute(self, obj: SymArray, name: str) -> Any:
        plain, t = self.lower(obj)
        return self._finish(Instr("getattr", name, (t,)), getattr(plain, name))

    def getitem(self, obj: SymArray, key: Any) -> Any:
        plain, t = self.lower(obj)
        pkey, tkey = self.lower(key)
        result = self._run(lambda: plain[pkey], (), {})
        seen = self._finish(Instr("getitem", None, (t, tkey)), result)
        if any(isinstance(k, np.ndarray) and k.dtype == bool
               for k in (pkey if type(pkey) is tuple else (pkey,))):
            self._shape_guards(seen)
        return seen

    def setitem(self, obj: SymArray, key: Any, value: Any) -> None:
        plain, t = self.lower(obj, writes=True)
        pkey, tkey = self.lower(key)
        pval, tval = self.lower(value)

        def write() -> None:
            plain[pkey] = pval

        self._run(write, (), {})
        self._written(obj)
        self.instrs.append(Instr("setitem", None, (t, tkey, tval), pure=False))

    def guard(self, obj: SymArray, name: str, args: tuple[Any, ...], value: Any) -> None:
        _, t = self.lower(obj)
        self.instrs.append(Instr("guard", name, (t, *args), expect=value, pure=False))

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
             pure: bool = True) -> Any:
        """``fn(*args, **kwargs)`` recorded as one call (a patched NumPy creation function, a
        generator's draw: ``pure`` False, so a replay makes it even when nothing reads it)."""
        plain_a, t_a = self.lower(args)
        plain_kw, t_kw = self.lower(kwargs)
        result = self._run(fn, plain_a, plain_kw)
        same = _same_input(result, args, plain_a)
        if same is not None and pure:
            return same
        seen = self._finish(Instr("call", fn, t_a, t_kw, pure=pure), result)
        if fn in _DATA_SHAPED:
            self._shape_guards(seen)
        if fn in _EMPTY:
            self._made_empty(seen)
        return seen

    def host(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """``fn(*args)`` recorded as one call with its arguments as they are (Python objects
        the replay passes again: a step tensor, a parameter group read afresh), its results
        (NumPy scalars) as slots: host work a replay repeats (``optim._foreach.host``)."""
        result = self._run(fn, args, {})
        return self._finish(Instr("call", fn, tuple(self.const(a) for a in args), {},
                                  pure=False), result)

    def _shape_guards(self, seen: Any) -> None:
        for s in seen if isinstance(seen, (tuple, list)) else (seen,):
            if isinstance(s, SymArray):
                self.instrs.append(Instr("shape", None, (Slot(s._slot),), expect=s.shape,
                                         pure=False))


def _same_input(result: Any, args: tuple[Any, ...], plain: tuple[Any, ...]) -> Any:
    """The SymArray argument a call returned unchanged (the same object), or None."""
    if isinstance(result, np.ndarray):
        for a, p in zip(args, plain):
            if p is result and isinstance(a, SymArray):
                return a
    return None
