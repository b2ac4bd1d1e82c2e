"""The ``Recorder``: what a SymArray's recorded calls append to (``_sym`` module docstring).

Each entry point (``ufunc``, ``function``, ``method``, ``getitem``, ``setitem``, ``guard``,
``call``, ``host``) lowers its arguments (SymArrays to their slots, other arrays to roots or
constants), computes on the plain arrays with the recording paused, appends one ``Instr`` and
lifts the results (new arrays become SymArrays with new slots).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

import numpy as np

from ._sym import (
    _DATA_SHAPED, _DATA_SHAPED_METHODS, _EMPTY, _RIDS, _WRITERS, _WRITING_FUNCTIONS, ACTIVE,
    Break, Const, Host, Instr, Slot, SymArray, raw,
)


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
        if func in _DATA_SHAPED or func is np.where and len(args) + len(kwargs) == 1:
            self._shape_guards(seen)  # NOTE: np.where(cond) is np.nonzero(cond)
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
        self.instrs.append(Instr("guard", name, (t, *args), expect=value, pure=False,
                                 site=site()))

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
                                         pure=False, site=site()))


def _same_input(result: Any, args: tuple[Any, ...], plain: tuple[Any, ...]) -> Any:
    """The SymArray argument a call returned unchanged (the same object), or None."""
    if isinstance(result, np.ndarray):
        for a, p in zip(args, plain):
            if p is result and isinstance(a, SymArray):
                return a
    return None


_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # autograd_gpu/
_ROOT = os.path.dirname(os.path.dirname(_PKG))
# NOTE: frames that only pass a read on (the recorder itself, Tensor's conversions), and those
# between the package and the step's code (the standard library's context managers, NumPy)
_PASSING = (os.path.join(_PKG, "_compile") + os.sep, os.path.join(_PKG, "tensor_convert.py"))
_BETWEEN = (os.path.dirname(os.__file__) + os.sep, os.path.dirname(np.__file__) + os.sep)


def site() -> str:
    """Where a value is read back to Python, for a guard's message: the function of the
    package that reads it, and the step's line that led there (the innermost frame outside the
    package, the standard library and NumPy), e.g. ``in DecompBackend.matrix_exp
    (autograd_gpu/backends/decomp.py:424; the step's line: train.py:12)``."""
    f: Any = sys._getframe(1)
    inner = user = None
    while f is not None and user is None:
        name = f.f_code.co_filename
        if not name.startswith(_PKG):
            if not name.startswith(_BETWEEN):
                user = f
        elif inner is None and not name.startswith(_PASSING):
            inner = f
        f = f.f_back
    where = "" if user is None else \
        f"the step's line: {user.f_code.co_filename}:{user.f_lineno}"
    if inner is None:
        return f" ({where})" if where else ""
    rel = os.path.relpath(inner.f_code.co_filename, _ROOT)
    return (f" in {inner.f_code.co_qualname} ({rel}:{inner.f_lineno}"
            + (f"; {where})" if where else ")"))
