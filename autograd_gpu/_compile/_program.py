"""A recording (``_recorder.Recorder``) as one straight-line Python function.

Each instruction becomes one line of generated source: ``s12 = F3(s4, s7, out=B1)``,
``s13 = s12.reshape(c2)``, ``s9[c4] = s13``, ``if not _eq(bool(s21), E5): _fail(5)``. Callables,
constants and expected values are the function's globals; slots are its locals, so a replay
costs the NumPy calls and little else. Instructions whose results nothing reads, and which write
nothing, are dropped first (the eager step's validation arithmetic whose outcome a guard already
checks stays, since the guard reads it).

Buffers are planned once (``plan``): a ufunc's C-contiguous result that does not outlive the
replay (no store, no output, no view of it that does) is written with ``out=`` into a buffer the
program keeps, and buffers of the same shape and dtype are shared by results whose lifetimes
(with every view of them) do not overlap. The results are the eager step's values, in the same
layout; what escapes (new gradients, returned tensors) is allocated afresh on every replay, as
eager allocates it. ``memory_allocated`` counts the planned buffers while the program lives.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..memory import track
from ._sym import _WRITERS, _WRITING_FUNCTIONS, Const, Host, Instr, Slot


class GuardFailed(Exception):
    """A value the recorded step read back to Python differs on replay (``index``: the guard)."""

    def __init__(self, index: int, where: str) -> None:
        super().__init__(where)
        self.index = index


_READS: dict[str, Callable[..., Any]] = {
    "__bool__": bool, "__int__": int, "__float__": float, "__complex__": complex,
    "__index__": operator.index, "item": lambda a, *args: a.item(*args),
    "tolist": lambda a: a.tolist(),
}


_READ_NAMES = {"__bool__": "bool", "__int__": "int", "__float__": "float",
               "__complex__": "complex", "__index__": "operator.index"}


def _eq(a: Any, b: Any) -> bool:
    """``a == b``, NaN equal to NaN (a guard on a value that was NaN holds while it stays NaN)."""
    if a is b:
        return True
    try:
        if a == b:
            return True
    except (TypeError, ValueError):
        return False
    return isinstance(a, float) and isinstance(b, float) and a != a and b != b


def _slots_in(template: Any) -> list[int]:
    if isinstance(template, Slot):
        return [template.n]
    if type(template) in (tuple, list):
        return [n for t in template for n in _slots_in(t)]
    if type(template) is dict:
        return [n for t in template.values() for n in _slots_in(t)]
    return []


def prune(instrs: list[Instr], live_out: set[int]) -> list[Instr]:
    """``instrs`` without the pure ones whose results nothing later reads (``live_out``: the
    slots read after the program: its outputs)."""
    live = set(live_out)
    kept: list[Instr] = []
    for ins in reversed(instrs):
        outs = _slots_in(ins.out)
        if ins.pure and not any(n in live for n in outs) and not _has_host(ins.out):
            continue
        kept.append(ins)
        live.update(_slots_in(ins.args))
        live.update(_slots_in(ins.kwargs))
    kept.reverse()
    return kept


# NOTE: NumPy functions whose result is a new array made from their arguments alone, and the
# methods and attributes that give a view or a copy of their receiver
_MAKERS: tuple[Any, ...] = (np.arange, np.asarray, np.array, np.full, np.zeros, np.ones)
_OF_RECEIVER = frozenset({"view", "astype", "reshape", "T"})
_IMMUTABLE = (int, float, complex, bool, str, bytes, type(None), np.dtype, np.generic, type)


def _fixed_value(t: Any, consts: list[Any], known: dict[int, Any]) -> bool:
    """Whether template ``t`` holds only values that cannot change between replays: literals,
    immutable constants and the slots in ``known``."""
    if isinstance(t, Slot):
        return t.n in known
    if isinstance(t, Const):
        return _fixed_value(consts[t.n], [], {}) if isinstance(consts[t.n], tuple) \
            else isinstance(consts[t.n], _IMMUTABLE)
    if type(t) in (tuple, list):
        return all(_fixed_value(x, consts, known) for x in t)
    if type(t) is dict:
        return all(_fixed_value(x, consts, known) for x in t.values())
    return isinstance(t, _IMMUTABLE)


def _value(t: Any, consts: list[Any], known: dict[int, Any]) -> Any:
    if isinstance(t, Slot):
        return known[t.n]
    if isinstance(t, Const):
        return consts[t.n]
    if type(t) in (tuple, list):
        return type(t)(_value(x, consts, known) for x in t)
    if type(t) is dict:
        return {k: _value(x, consts, known) for k, x in t.items()}
    return t


def _substitute(t: Any, to: dict[int, Const]) -> Any:
    if isinstance(t, Slot):
        return to.get(t.n, t)
    if type(t) in (tuple, list):
        return type(t)(_substitute(x, to) for x in t)
    if type(t) is dict:
        return {k: _substitute(x, to) for k, x in t.items()}
    if type(t) is slice:
        return slice(_substitute(t.start, to), _substitute(t.stop, to), _substitute(t.step, to))
    return t


def fold(instrs: list[Instr], consts: list[Any], live_out: set[int]
         ) -> tuple[list[Instr], list[Any]]:
    """``instrs`` without the arrays every replay would make alike (an ``arange`` index, a
    scalar made with ``asarray``, a ufunc of such, their views), made once here and passed as
    constants; and the constants with them. Only arrays that nothing writes into and that do
    not escape (with every view of them) are folded."""
    candidates: dict[int, Instr] = {}  # slot -> the instruction that makes it
    shown: dict[int, Any] = {}  # NOTE: stand-ins while choosing (values come later)
    for ins in instrs:
        out = ins.out
        if not (isinstance(out, Slot) and ins.pure and "out" not in ins.kwargs):
            continue
        if ins.kind == "call":
            ok = any(ins.fn is m for m in _MAKERS) or isinstance(ins.fn, np.ufunc)
        else:
            ok = ins.kind in ("method", "getattr") and ins.fn in _OF_RECEIVER
        if ok and _fixed_value((ins.args, ins.kwargs), consts, shown):
            candidates[out.n] = ins
            shown[out.n] = None
    if not candidates:
        return instrs, consts
    # NOTE: alias classes (as plan's): a result joins its arguments unless a ufunc made it; an
    # index never becomes part of what indexing returns
    parent: dict[int, int] = {}

    def find(n: int) -> int:
        while parent.get(n, n) != n:
            n = parent[n]
        return n

    bad: set[int] = set(live_out)
    for ins in instrs:
        outs = _slots_in(ins.out)
        ins_slots = _slots_in(ins.args[:1] if ins.kind == "getitem" else ins.args) \
            + _slots_in(ins.kwargs)
        written = writes(ins)
        bad.update(written)
        # NOTE: what a store, an opaque call or another call with effects (host work, a draw)
        # is given may be kept; a known writer (out=, item assignment, fill) only reads the rest
        if ins.kind in ("store", "opaque") or ins.kind == "call" and not ins.pure and not (
                isinstance(ins.fn, np.ufunc) or written):
            bad.update(_slots_in(ins.args) + _slots_in(ins.kwargs))
        if not (ins.kind == "call" and isinstance(ins.fn, np.ufunc)):
            for o in outs:
                for n in ins_slots:
                    ra, rb = find(n), find(o)
                    if ra != rb:
                        parent[rb] = ra
    spoiled = {find(n) for n in bad}
    values: dict[int, Any] = {}
    with np.errstate(all="ignore"):
        for n, ins in candidates.items():
            if find(n) in spoiled or not _fixed_value((ins.args, ins.kwargs), consts, values):
                continue
            args, kwargs = _value(ins.args, consts, values), _value(ins.kwargs, consts, values)
            try:
                if ins.kind == "call":
                    v = ins.fn(*args, **kwargs)
                elif ins.kind == "getattr":
                    v = getattr(args[0], ins.fn)
                else:
                    v = getattr(args[0], ins.fn)(*args[1:], **kwargs)
            except Exception:  # noqa: BLE001 - not folded: the replay makes it as recorded
                continue
            values[n] = v
    if not values:
        return instrs, consts
    consts = list(consts)
    to: dict[int, Const] = {}
    for n, v in values.items():
        to[n] = Const(len(consts))
        consts.append(v)
        if isinstance(v, np.ndarray):
            track(v)  # NOTE: held by the program, as its planned buffers
    kept = [ins if not to.keys() & set(_slots_in((ins.args, ins.kwargs))) else
            Instr(ins.kind, ins.fn, _substitute(ins.args, to), _substitute(ins.kwargs, to),
                  ins.out, ins.expect, ins.pure)
            for ins in instrs if not (isinstance(ins.out, Slot) and ins.out.n in values)]
    return kept, consts


def plan(instrs: list[Instr], live_out: set[int],
         meta: dict[int, tuple[Any, Any]]) -> tuple[list[Any], dict[int, int]]:
    """The planned buffers and, per planned instruction (by id), the buffer it writes (module
    docstring). ``meta``: each slot's (shape, dtype) when its traced array was C-contiguous."""
    # NOTE: alias classes: a result joins its arguments' class unless it is a ufunc's new array
    parent: dict[int, int] = {}

    def find(n: int) -> int:
        while parent.get(n, n) != n:
            n = parent[n]
        return n

    def join(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    fresh: set[int] = set()  # slots that are a ufunc call's new array (candidates)
    escaping: set[int] = set(live_out)
    last: dict[int, int] = {}
    for i, ins in enumerate(instrs):
        ins_slots = _slots_in(ins.args) + _slots_in(ins.kwargs)
        outs = _slots_in(ins.out)
        for n in ins_slots:
            last[n] = i
        if ins.kind in ("store", "opaque"):
            escaping.update(ins_slots)
        if ins.kind == "call" and _is_ufunc_call(ins) and len(outs) == 1 \
                and "out" not in ins.kwargs:
            fresh.add(outs[0])
        else:
            # NOTE: anything else may return a view of, or keep, what it was given
            for o in outs:
                for n in ins_slots:
                    join(n, o)
        for o in outs:
            last.setdefault(o, i)
    ends: dict[int, int] = {}
    for n, i in last.items():
        r = find(n)
        ends[r] = max(ends.get(r, -1), i)
    dead = {find(n) for n in escaping}
    buffers: list[Any] = []
    into: dict[int, int] = {}
    free: dict[tuple[Any, ...], list[tuple[int, int]]] = {}  # (shape, dtype) -> (buffer, free at)
    for i, ins in enumerate(instrs):
        outs = _slots_in(ins.out)
        if len(outs) != 1 or outs[0] not in fresh or outs[0] not in meta:
            continue
        n = outs[0]
        r = find(n)
        if r in dead or (r != n and find(r) in dead):
            continue
        key = meta[n]
        pool = free.setdefault(key, [])
        pick = next((j for j, (_, at) in enumerate(pool) if at < i), None)
        if pick is None:
            buffers.append(np.empty(key[0], key[1]))
            track(buffers[-1])  # NOTE: held by the program: memory_allocated counts it
            b = len(buffers) - 1
        else:
            b = pool.pop(pick)[0]
        into[id(ins)] = b
        pool.append((b, ends.get(r, i)))
    return buffers, into


def _is_ufunc_call(ins: Instr) -> bool:
    return isinstance(ins.fn, np.ufunc)


def writes(ins: Instr) -> list[int]:
    """The slots an instruction writes into (``out=``, item assignment, ``ufunc.at``, in-place
    methods and NumPy functions)."""
    out = _slots_in(ins.kwargs.get("out")) if ins.kwargs else []
    if ins.kind == "setitem" or ins.kind == "method" and ins.fn in _WRITERS:
        out += _slots_in(ins.args[:1])
    elif ins.kind == "call" and ins.args and (
            ins.fn in _WRITING_FUNCTIONS or getattr(ins.fn, "__name__", "") == "at"):
        out += _slots_in(ins.args[:1])
    return out


def hoist_checks(instrs: list[Instr]) -> tuple[list[Instr], list[Instr]]:
    """``instrs`` with the checks that read only what the step starts from (its arguments, and
    the places as they are at the start or reloaded after ``zero_grad``: a target-range check, a
    data-dependent shape of an input, ``matrix_exp``'s degree from a parameter) moved, with the
    pure instructions they read, to right after the first loads: a replay whose check fails has
    then changed nothing, and the call can run eagerly instead (eager raises its own error
    there, or runs the other shape). Returns (the new order, the moved checks)."""
    first = 0
    while first < len(instrs) and instrs[first].kind == "load":
        first += 1
    # NOTE: loads of the call's arguments (wherever they are: optimizer calls reload every
    # place) read what the caller passed, which the step does not replace
    arg_loads = {n for ins in instrs if ins.kind == "load"
                 and getattr(getattr(ins.fn, "at", None), "path", None) is not None
                 for n in _slots_in(ins.out)}
    # NOTE: a place reloaded after ``zero_grad`` (opaque: every place loads again) holds what
    # it held at the start, up to the first instruction that may change a place's data: such a
    # load may move up with a check (gradients excepted: zero_grad may zero them in place)
    clean = first
    while clean < len(instrs) and _keeps_places(instrs[clean]):
        clean += 1
    producer: dict[int, int] = {}
    written: dict[int, int] = {}  # slot -> index of its first write
    for i, ins in enumerate(instrs):
        for n in _slots_in(ins.out):
            producer.setdefault(n, i)
        for n in writes(ins):
            written.setdefault(n, i)
    moved: set[int] = set()
    checks: list[Instr] = []
    for g, ins in enumerate(instrs):
        if ins.kind not in ("guard", "shape") or g < first:
            continue
        need: set[int] = set()
        todo = list(_slots_in(ins.args))
        ok = True
        while todo and ok:
            n = todo.pop()
            j = producer.get(n)
            if j is None or j < first and n not in arg_loads:
                if j is None:
                    ok = False
                continue
            if not instrs[j].pure or instrs[j].kind == "load" and n not in arg_loads and not (
                    j < clean and _data_load(instrs[j])):
                ok = False
                break
            if j not in need:
                need.add(j)
                todo += _slots_in(instrs[j].args) + _slots_in(instrs[j].kwargs)
        reads = _slots_in(ins.args) + [n for i in need for n in _slots_in(instrs[i].args)
                                       + _slots_in(instrs[i].kwargs)]
        if not ok or any(written.get(n, len(instrs)) < g for n in reads):
            continue
        moved |= need | {g}
        checks.append(ins)
    if not moved:
        return instrs, []
    order = list(range(first)) + sorted(moved) + [i for i in range(first, len(instrs))
                                                  if i not in moved]
    return [instrs[i] for i in order], checks


def _keeps_places(ins: Instr) -> bool:
    """Whether ``ins`` leaves every place's data as it is (a load, a check, a call that writes
    into no array, an opaque ``zero_grad``)."""
    if ins.kind in ("load", "guard", "shape"):
        return True
    if ins.kind == "opaque":
        return ins.grads_only
    return ins.kind != "store" and not writes(ins)


def _data_load(ins: Instr) -> bool:
    """A load of a tensor's array (not of a gradient, not an optimizer's scratch array)."""
    return getattr(getattr(ins.fn, "at", None), "path", False) is not False


def _has_host(template: Any) -> bool:
    if isinstance(template, Host):
        return True
    return type(template) is tuple and any(_has_host(t) for t in template)


class Program:
    """The generated replay of one recording (module docstring). ``run()`` replays it and
    returns the slots named in ``outputs`` (a template)."""

    def __init__(self, instrs: list[Instr], consts: list[Any], outputs: Any,
                 meta: dict[int, tuple[Any, Any]] | None = None) -> None:
        live = set(_slots_in(outputs))
        folded, consts = fold(prune(instrs, live), consts, live)
        self.instrs, early = hoist_checks(folded)
        self.n_recorded = len(instrs)
        self._globals: dict[str, Any] = {"_eq": _eq, "_fail": self._fail}
        self._named: dict[int, str] = {}
        self.buffers, self._into = plan(self.instrs, set(_slots_in(outputs)), meta or {})
        self._guards: list[str] = []
        self._early_ids = {id(ins) for ins in early}
        self.early: set[int] = set()  # NOTE: guards checked before the step changes anything
        for i, c in enumerate(consts):
            self._globals[f"c{i}"] = c
        body: list[str] = []
        for ins in self.instrs:
            body += ["    " + line for line in self._lines(ins)]
        body.append(f"    return {self._expr(outputs)}")
        # NOTE: every callable and constant a keyword-only default: a local of the function
        # (LOAD_FAST) rather than a global looked up by name on each line
        names = [n for n in self._globals if not n.startswith("__")]
        head = "def _replay(*, " + ", ".join(f"{n}={n}" for n in names) + "):"
        self.source = "\n".join([head] + body)
        exec(compile(self.source, "<autograd_gpu.compile replay>", "exec"), self._globals)
        self.run: Callable[[], Any] = self._globals["_replay"]

    def _name(self, prefix: str, obj: Any) -> str:
        # NOTE: one name per object: each is a keyword-only default, filled on every call
        name = self._named.get(id(obj))
        if name is None or name[0] != prefix[0]:
            name = f"{prefix}{len(self._globals)}"
            self._globals[name] = obj
            self._named[id(obj)] = name
        return name

    def _fail(self, index: int) -> None:
        raise GuardFailed(index, self._guards[index])

    def _guard(self, where: str, ins: Instr | None = None) -> int:
        self._guards.append(where)
        if ins is not None and id(ins) in self._early_ids:
            self.early.add(len(self._guards) - 1)
        return len(self._guards) - 1

    def _expr(self, t: Any) -> str:
        if isinstance(t, Slot):
            return f"s{t.n}"
        if isinstance(t, Const):
            return f"c{t.n}"
        if type(t) is tuple:
            return "(" + "".join(self._expr(x) + ", " for x in t) + ")"
        if type(t) is list:
            return "[" + ", ".join(self._expr(x) for x in t) + "]"
        if type(t) is dict:
            return "{" + ", ".join(f"{k!r}: {self._expr(v)}" for k, v in t.items()) + "}"
        if type(t) is slice:
            return f"slice({self._expr(t.start)}, {self._expr(t.stop)}, {self._expr(t.step)})"
        if t is Ellipsis:
            return "..."
        if t is None or type(t) in (int, bool, str, float):
            return repr(t)
        return self._name("k", t)

    def _call_args(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        parts = [self._expr(a) for a in args]
        parts += [f"{k}={self._expr(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def _inline(self, ins: Instr) -> str | None:
        """A load or store whose tensor is the same object on every replay, written out
        (``s4 = T9._data``, ``T9._grad = T10(s12, T11)``) rather than called through its
        locator (``ins.fn.inline``: a format with ``{0}``, ``{1}``... for objects and ``{a}``
        for the stored value)."""
        inline = getattr(ins.fn, "inline", None)
        made = inline() if inline is not None else None
        if made is None:
            return None
        fmt, objs = made
        names = [self._name("T", o) for o in objs]
        return fmt.format(*names, a=self._call_args(ins.args, {}))

    def _unpack(self, out: Any, value: str, where: str) -> list[str]:
        if out is None:
            return []
        if isinstance(out, Slot):
            return [f"s{out.n} = {value}"]
        if isinstance(out, Host):
            g = self._guard(where)
            return [f"if not _eq({value}, {self._name('E', out.value)}): _fail({g})"]
        lines: list[str] = []
        for i, o in enumerate(out):
            lines += self._unpack(o, f"{value}[{i}]", where)
        return lines

    def _lines(self, ins: Instr) -> list[str]:
        k = ins.kind
        if k == "call" and ins.fn is np.transpose and len(ins.args) == 2 and not ins.kwargs \
                and isinstance(ins.args[0], Slot):
            # NOTE: np.transpose(a, axes) is a.transpose(axes) behind a Python wrapper
            call = f"{self._expr(ins.args[0])}.transpose({self._expr(ins.args[1])})"
        elif k == "call":
            args = self._call_args(ins.args, ins.kwargs)
            buf = self._into.get(id(ins))
            if buf is not None:
                args += f", out={self._name('B', self.buffers[buf])}"
            call = f"{self._name('F', ins.fn)}({args})"
        elif k == "method":
            obj, *rest = ins.args
            call = f"{self._expr(obj)}.{ins.fn}({self._call_args(tuple(rest), ins.kwargs)})"
        elif k == "getattr":
            call = f"{self._expr(ins.args[0])}.{ins.fn}"
        elif k == "getitem":
            call = f"{self._expr(ins.args[0])}[{self._expr(ins.args[1])}]"
        elif k == "setitem":
            obj, key, value = ins.args
            return [f"{self._expr(obj)}[{self._expr(key)}] = {self._expr(value)}"]
        elif k == "guard":
            obj, *rest = ins.args
            g = self._guard(f"a value read back to Python with {_READ_NAMES.get(ins.fn, ins.fn)}()"
                            f"{ins.site or ' (in the step)'}", ins)
            read = f"{self._name('R', _READS[ins.fn])}({self._call_args(tuple(ins.args), {})})"
            del obj, rest
            return [f"if not _eq({read}, {self._name('E', ins.expect)}): _fail({g})"]
        elif k == "shape":
            g = self._guard(f"a data-dependent shape{ins.site}", ins)
            return [f"if {self._expr(ins.args[0])}.shape != {ins.expect!r}: _fail({g})"]
        elif k in ("load", "opaque"):
            call = self._inline(ins) or f"{self._name('L' if k == 'load' else 'O', ins.fn)}()"
        elif k == "store":
            return [self._inline(ins) or f"{self._name('S', ins.fn)}({self._call_args(ins.args, {})})"]
        else:  # pragma: no cover - the recorder makes no other kind
            raise AssertionError(k)
        if ins.out is None:
            return [call]
        if isinstance(ins.out, Slot):
            return [f"s{ins.out.n} = {call}"]
        return ["_r = " + call] + self._unpack(ins.out, "_r", f"a value {ins.kind} returned")
