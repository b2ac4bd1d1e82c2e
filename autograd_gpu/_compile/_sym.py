"""Recording a step at the array level: ``SymArray`` (and, in ``_recorder``, the ``Recorder``).

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
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

if TYPE_CHECKING:
    from ._recorder import Recorder


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
    "opaque". ``out``: the result's template (Slot, or tuples of them, or None). ``site``: where
    a guard's read happened (``_recorder.site``), for the message when it fails. ``grads_only``:
    an opaque call that changes no tensor's data but gradients (``zero_grad``)."""
    kind: str
    fn: Any
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    out: Any = None
    expect: Any = None
    pure: bool = True
    site: str = ""
    grads_only: bool = False


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
                np.repeat, np.bincount, np.trim_zeros, np.intersect1d, np.setdiff1d, np.union1d,
                np.setxor1d} | {getattr(np, n) for n in ("unique_all", "unique_counts",
                                                         "unique_inverse", "unique_values")
                                if hasattr(np, n)}
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
