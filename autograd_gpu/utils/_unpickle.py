"""The pickled parts of a checkpoint: writing them, and reading them safely or trustingly.

``save`` pickles only objects outside the safe set (an ``nn.Module``, a namedtuple, an instance
of a program's class), as ``torch.save`` pickles everything; tensors, dtypes, devices, sizes and
NumPy data inside them are not pickled but referred to by persistent ids (``refs``), so they
stay in the archive's plain arrays and keep their sharing with the rest of the file.

``load(weights_only=False)`` unpickles such a part with ``pickle`` (it can run any code, as
``torch.load(weights_only=False)`` can). ``load(weights_only=True)`` never does: ``scan`` parses
the whole pickle first without running anything (``pickletools.genops``) and refuses it, with
PyTorch's message, unless every global it names is allowlisted (``_safe_globals``) and every
opcode is one that a protocol-2 pickle of plain data uses; only then ``run`` interprets it with
PyTorch's weights-only rules (call only allowlisted globals, build only allowlisted types,
append only to lists, set items only in dicts) and a memo that cannot outgrow the file.
"""

from __future__ import annotations

import _compat_pickle
import collections
import io
import pickle
import pickletools
from typing import Any, Callable

from . import _safe_globals

# NOTE: the opcodes protocol 2 writes for containers, numbers, strings, globals, objects and
# persistent ids; anything else (INST, OBJ, EXT*, STACK_GLOBAL, PERSID, ...) is refused.
_OPS = frozenset({
    "PROTO", "STOP", "GLOBAL", "NEWOBJ", "REDUCE", "BUILD", "APPEND", "APPENDS", "SETITEM",
    "SETITEMS", "MARK", "TUPLE", "TUPLE1", "TUPLE2", "TUPLE3", "NONE", "NEWFALSE", "NEWTRUE",
    "EMPTY_TUPLE", "EMPTY_LIST", "EMPTY_DICT", "BININT", "BININT1", "BININT2", "BINFLOAT",
    "BINUNICODE", "BINPERSID", "BINGET", "LONG_BINGET", "BINPUT", "LONG_BINPUT", "LONG1", "LONG4",
    "POP", "POP_MARK"})
_DICTS = (dict, collections.OrderedDict, collections.Counter)
_MARK = object()


def dumps(obj: Any, persistent_id: Callable[[Any], Any], pickle_module: Any,
          protocol: int) -> bytes:
    """``obj`` pickled with ``pickle_module`` (None: ``pickle``), ``persistent_id`` routing the
    objects stored outside the pickle."""
    buf = io.BytesIO()
    if pickle_module is None or pickle_module is pickle:
        # NOTE: Python 3 names (no "__builtin__"), so allowlists match what the program names.
        pickler = pickle.Pickler(buf, protocol=protocol, fix_imports=False)
    else:
        pickler = pickle_module.Pickler(buf, protocol=protocol)
    pickler.persistent_id = persistent_id  # type: ignore[method-assign]
    pickler.dump(obj)
    return buf.getvalue()


def loads_trusted(data: bytes, persistent_load: Callable[[Any], Any], pickle_module: Any,
                  **pickle_load_args: Any) -> Any:
    """``weights_only=False``: an ordinary unpickling, which may run code named by the file."""
    unpickler = (pickle_module or pickle).Unpickler(io.BytesIO(data), **pickle_load_args)
    unpickler.persistent_load = persistent_load
    return unpickler.load()


def _name(arg: str) -> tuple[str, str]:
    module, _, name = arg.partition(" ")
    # NOTE: pickles written with fix_imports=True name Python 2 modules; PyTorch maps them too.
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return module, name


def globals_in(data: bytes) -> list[str]:
    """The globals the pickle ``data`` names, in order, found without running it.

    Raises:
        CorruptPickle: the pickle is malformed or truncated.
    """
    try:
        return [".".join(_name(str(arg))) for op, arg, _ in pickletools.genops(io.BytesIO(data))
                if op.name == "GLOBAL"]
    except ValueError as e:
        raise CorruptPickle(str(e)) from None


class CorruptPickle(ValueError):
    """A pickled part that is malformed or truncated (not a weights-only refusal)."""


def scan(data: bytes) -> list[tuple[str, Any]]:
    """Parse the pickle ``data`` without running it: its ``(opcode name, argument)`` list.

    Raises:
        CorruptPickle: the pickle is malformed, truncated, followed by other data, or numbers
            its memo out of order (an index past the count could make a memo bigger than the
            file).
        pickle.UnpicklingError: an opcode outside the weights-only set, or a global that is not
            allowlisted (PyTorch's message).
    """
    ops: list[tuple[str, Any]] = []
    end, puts = -1, 0
    try:
        for op, arg, pos in pickletools.genops(io.BytesIO(data)):
            ops.append((op.name, arg))
            end = -1 if pos is None else pos
    except ValueError as e:
        raise CorruptPickle(str(e)) from None
    if end + 1 != len(data):
        raise CorruptPickle("data after the pickle's STOP" if ops else "empty pickle")
    for name, arg in ops:
        if name not in _OPS:
            code = pickletools.opcodes[[o.name for o in pickletools.opcodes].index(name)].code
            raise pickle.UnpicklingError(f"Unsupported operand {code.encode('latin1')[0]}")
        if name == "GLOBAL":
            _safe_globals.resolve_global(*_name(arg))
        elif name in ("BINPUT", "LONG_BINPUT"):
            if arg > puts:
                raise CorruptPickle(f"memo index {arg} out of order")
            puts += arg == puts
    return ops


def run(ops: list[tuple[str, Any]], persistent_load: Callable[[Any], Any]) -> Any:
    """Interpret ``scan``'s output with PyTorch's weights-only rules.

    Raises:
        pickle.UnpicklingError: the pickle calls, builds, appends to or sets items in what the
            rules do not allow (PyTorch's messages).
        CorruptPickle: the pickle pops more than it pushed, or uses an unhashable key.
    """
    try:
        return _run(ops, persistent_load)
    except IndexError:
        raise CorruptPickle("its stack runs empty") from None


def _run(ops: list[tuple[str, Any]], persistent_load: Callable[[Any], Any]) -> Any:
    stack: list[Any] = []
    marks: list[int] = []
    memo: dict[int, Any] = {}

    def since_mark() -> list[Any]:
        at = marks.pop()
        items = stack[at:]
        del stack[at:]
        return items

    for name, arg in ops:
        if name in ("BININT", "BININT1", "BININT2", "BINFLOAT", "BINUNICODE", "LONG1", "LONG4"):
            stack.append(arg)
        elif name in ("NONE", "NEWFALSE", "NEWTRUE"):
            stack.append({"NONE": None, "NEWFALSE": False, "NEWTRUE": True}[name])
        elif name in ("EMPTY_TUPLE", "EMPTY_LIST", "EMPTY_DICT"):
            stack.append(() if name == "EMPTY_TUPLE" else [] if name == "EMPTY_LIST" else {})
        elif name == "MARK":
            marks.append(len(stack))
        elif name == "TUPLE":
            stack.append(tuple(since_mark()))
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(name[-1])
            group = tuple(stack[-n:])
            if len(group) != n:
                raise IndexError
            stack[-n:] = [group]
        elif name == "POP":
            stack.pop()
        elif name == "POP_MARK":
            since_mark()
        elif name in ("BINPUT", "LONG_BINPUT"):
            memo[arg] = stack[-1]
        elif name in ("BINGET", "LONG_BINGET"):
            if arg not in memo:
                raise pickle.UnpicklingError(f"Memo value not found at index {arg}")
            stack.append(memo[arg])
        elif name == "GLOBAL":
            stack.append(_safe_globals.resolve_global(*_name(arg)))
        elif name == "BINPERSID":
            stack.append(persistent_load(stack.pop()))
        elif name in ("APPEND", "APPENDS"):
            items = [stack.pop()] if name == "APPEND" else since_mark()
            if type(stack[-1]) is not list:
                raise pickle.UnpicklingError(f"Can only append to lists, but got "
                                             f"{type(stack[-1])}")
            stack[-1].extend(items)
        elif name in ("SETITEM", "SETITEMS"):
            items = stack[-2:] if name == "SETITEM" else since_mark()
            if name == "SETITEM":
                del stack[-2:]
            if type(stack[-1]) not in _DICTS:
                raise pickle.UnpicklingError(
                    f"Can only {name} for dict, collections.OrderedDict, collections.Counter, "
                    f"but got {type(stack[-1])}")
            for k, v in zip(items[::2], items[1::2]):
                try:
                    stack[-1][k] = v
                except TypeError as e:
                    raise CorruptPickle(f"bad dict key ({e})") from None
        elif name in ("REDUCE", "NEWOBJ"):
            args = stack.pop()
            fn = stack[-1]
            if not _allowed(fn) or type(args) is not tuple:
                raise pickle.UnpicklingError(
                    f"Trying to call reduce for unrecognized function {fn}" if name == "REDUCE"
                    else "Can only create new object for nn.Parameter or classes allowlisted via "
                         f"`add_safe_globals` but got {fn}")
            if name == "NEWOBJ":
                if not isinstance(fn, type):
                    raise pickle.UnpicklingError(f"NEWOBJ class argument isn't a type: {fn}")
                stack[-1] = fn.__new__(fn, *args)
            else:
                stack[-1] = fn(*args)
        elif name == "BUILD":
            state = stack.pop()
            _build(stack[-1], state)
        elif name == "STOP":
            return stack.pop()
    raise CorruptPickle("no STOP")


def _allowed(obj: Any) -> bool:
    return any(obj is v for v in _safe_globals.DEFAULT_ALLOWED.values()) or any(
        obj is v for v in _safe_globals.user_allowed().values())


def _build(inst: Any, state: Any) -> None:
    """PyTorch's weights-only BUILD: an OrderedDict's attributes, or an allowlisted type's
    state (its ``__setstate__``, else its ``__dict__`` and slots)."""
    if type(inst) is collections.OrderedDict and type(state) is dict:
        inst.__dict__.update(state)
        return
    if not any(type(inst) is v for v in _safe_globals.user_allowed().values()):
        raise _safe_globals.cannot_build(type(inst))
    setstate = getattr(inst, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        inst.__dict__.update(state)
    if slots:
        for k, v in slots.items():
            setattr(inst, k, v)

