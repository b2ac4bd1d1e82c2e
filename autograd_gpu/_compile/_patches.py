"""The patches of one trace (``_trace``): NumPy's creation functions and the functions that
dispatch on their first argument alone, ``as_strided``, the random generators' draws and reseeds,
``Tensor._make`` (data from outside the step), the user-facing ``Tensor`` reads (breaks), the
optimizers' and schedulers' steps (opaque calls) and ``run_backward`` (noted). Each applies for
the duration of the recorded call and is undone after it.
"""

from __future__ import annotations

import functools
import sys
import weakref
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..autograd import node as _node
from ..backends import torch_rng
from ..tensor import _ARRAY_TYPES, Tensor
from . import _sym
from ._sym import ACTIVE, Break, Instr, QuietBreak, SymArray, either

if TYPE_CHECKING:
    from ._trace import Trace

# NOTE: NumPy's functions that make arrays from Python values (no array argument to dispatch on)
_CREATORS = ("zeros", "ones", "empty", "full", "arange", "linspace", "eye", "identity", "array",
             "asarray", "asanyarray", "ascontiguousarray", "tri")
# NOTE: NumPy's functions that dispatch on their first array only (``np.take(table, idx)``
# with a plain table and a recorded ``idx`` would compute out of sight)
_FIRST_DISPATCH = ("take", "repeat")
_DRAWS = ("random", "uniform", "normal", "standard_normal", "integers", "permutation", "poisson",
          "binomial")
_READS = ("item", "tolist", "__bool__", "__float__", "__int__", "__index__", "__repr__",
          "__str__", "__format__", "numpy")


# NOTE: how the break names a read: ``bool(tensor)``, not ``Tensor.bool()`` (a cast)
_READ_NAMES = {"__bool__": "bool(tensor)", "__float__": "float(tensor)", "__int__": "int(tensor)",
               "__index__": "a tensor used as an index (__index__)",
               "__repr__": "repr(tensor) (print)", "__str__": "str(tensor) (print)",
               "__format__": "format(tensor) (an f-string)"}


class _Draw:
    """A generator's draw on replay: from the generator's current stream (``manual_seed``
    replaces a ``Generator``'s stream object)."""

    def __init__(self, owner: Any, gen: Any, name: str) -> None:
        self.owner, self.gen, self.name = owner, gen, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        gen = self.owner._gen if self.owner is not None else self.gen
        return getattr(gen, self.name)(*args, **kwargs)


class Patches:
    """The patches of one trace (module docstring), applied and undone under the lock."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.undos: list[Callable[[], None]] = []

    def _set(self, obj: Any, name: str, value: Any, instance: bool = False) -> None:
        """``obj.name = value`` until ``undo``; what ``obj`` itself held (a class's raw
        ``staticmethod``, or nothing for an instance's method) comes back exactly."""
        del instance
        own = vars(obj)
        had = name in own
        old = own.get(name)
        setattr(obj, name, value)
        self.undos.append(lambda: setattr(obj, name, old) if had else delattr(obj, name))

    def apply(self) -> None:
        from ..backends.numpy_backend import NumpyBackend

        _ARRAY_TYPES.add(SymArray)  # NOTE: Tensor._make passes it through, as an ndarray
        for name in _CREATORS:
            orig = getattr(np, name)
            made = _creator(orig)
            self._set(np, name, made)
            alias = vars(NumpyBackend).get(name)
            if isinstance(alias, staticmethod) and alias.__func__ is orig:
                self._set(NumpyBackend, name, staticmethod(made))
        for name in _FIRST_DISPATCH:
            self._set(np, name, _first_dispatch(getattr(np, name)))
        strided = np.lib.stride_tricks
        self._set(strided, "as_strided", _view_maker(strided.as_strided))
        for name in _DRAWS:
            if hasattr(torch_rng.TorchCPUGenerator, name):
                self._set(torch_rng.TorchCPUGenerator, name,
                          _draw(getattr(torch_rng.TorchCPUGenerator, name), name, self.trace))
        self._set(Tensor, "_make", staticmethod(_maker(Tensor._make, self.trace)))
        for name in _READS:
            if hasattr(Tensor, name):
                self._set(Tensor, name, _user_read(getattr(Tensor, name), name, self.trace))
        from ..random import Generator

        for name in ("manual_seed", "seed"):
            self._set(Generator, name, _reseed(getattr(Generator, name), self.trace))
        for name in ("get_state", "set_state"):
            self._set(Generator, name, _state_read(getattr(Generator, name), name, self.trace))
        from ..utils import checkpoint

        self._set(checkpoint, "_rng_get", _rng_get)
        self._set(checkpoint, "_rng_set", _rng_setter(self.trace))
        from ..optim.optimizer import Optimizer

        for opt in self.trace.found.optimizers:
            # NOTE: an optimizer whose update is recordable now (its foreach path, host work
            # behind _foreach.host) is recorded like the rest of the step; others are called
            # again on replay
            recordable = getattr(opt, "_recordable", None)
            self._set(opt, "step", _opaque(opt.step, self.trace, recordable), instance=True)
            # NOTE: the library's zero_grad changes gradients only (a subclass's may do more)
            plain = getattr(type(opt), "zero_grad", None) is Optimizer.zero_grad
            self._set(opt, "zero_grad", _opaque(opt.zero_grad, self.trace, grads_only=plain),
                      instance=True)
        from ..optim import _foreach

        self._set(_foreach, "HOST", [_host_hook])
        for s in self.trace.found.schedulers:
            self._set(s, "step", _opaque(s.step, self.trace), instance=True)
        from ..autograd import accumulate, api

        self._set(api, "run_backward", _noting(api.run_backward, self.trace))
        self._set(accumulate, "_sole_base", _sole_base(accumulate._sole_base))

    def undo(self) -> None:
        while self.undos:
            self.undos.pop()()


def _creator(orig: Callable[..., Any]) -> Callable[..., Any]:
    def make(*args: Any, **kwargs: Any) -> Any:
        rec = ACTIVE.rec
        if rec is None:
            return orig(*args, **kwargs)
        plain = _plain_arrays((args, kwargs))
        if plain and not any(rec.aliases(a) for a in plain):
            # NOTE: made from arrays foreign to the recording: a constant
            return orig(*args, **kwargs)
        return _as_one_call(orig, args, kwargs)

    make.__name__ = getattr(orig, "__name__", "creator")
    return make


def _first_dispatch(orig: Callable[..., Any]) -> Callable[..., Any]:
    """``orig`` recorded as one call when an argument past the first is recorded and the first
    is not (NumPy would dispatch on the first alone, and compute out of sight)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        rec = ACTIVE.rec
        if rec is None or (args and isinstance(args[0], SymArray)) or not (
                _has_sym(args) or _has_sym(kwargs)):
            return orig(*args, **kwargs)
        return _as_one_call(orig, args, kwargs)

    call.__name__ = getattr(orig, "__name__", "call")
    return call


def _as_one_call(orig: Callable[..., Any], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> Any:
    """``orig(*args, **kwargs)`` recorded as one call while a recording is active (else, or
    when that breaks, computed on the plain arrays)."""
    return either(lambda rec: rec.call(orig, args, kwargs),
                  lambda: orig(*_sym._plain(args), **_sym._plain(kwargs)))


def _arrays(obj: Any) -> list[Any]:
    """The arrays in ``obj`` (tuples, lists, dicts, as ``_sym._plain`` walks them)."""
    if isinstance(obj, np.ndarray):
        return [obj]
    if type(obj) in (tuple, list):
        return [a for o in obj for a in _arrays(o)]
    if type(obj) is dict:
        return [a for o in obj.values() for a in _arrays(o)]
    return []


def _has_sym(obj: Any) -> bool:
    return any(isinstance(a, SymArray) for a in _arrays(obj))


def _view_maker(orig: Callable[..., Any]) -> Callable[..., Any]:
    """``as_strided`` recorded as one call (NumPy's own goes through ``__array_interface__``,
    which the recording cannot see)."""
    def view(*args: Any, **kwargs: Any) -> Any:
        if ACTIVE.rec is None:
            return orig(*args, **kwargs)
        return _as_one_call(orig, args, kwargs)

    view.__name__ = getattr(orig, "__name__", "as_strided")
    return view


def _plain_arrays(obj: Any) -> list[Any]:
    """The plain (not SymArray) arrays in ``obj`` (tuples, lists, dicts)."""
    return [a for a in _arrays(obj) if not isinstance(a, SymArray)]


def _draw(orig: Callable[..., Any], name: str, trace: Trace) -> Callable[..., Any]:
    def draw(self: Any, *args: Any, **kwargs: Any) -> Any:
        rec = ACTIVE.rec
        if rec is None:
            return orig(self, *args, **kwargs)
        from .. import random as _random

        owners = list(_random._default.values()) + trace.found.generators
        owner = next((g for g in owners if g._gen is self), None)
        return either(lambda r: r.call(_Draw(owner, self, name), args, kwargs, pure=False),
                      lambda: orig(self, *_sym._plain(args), **_sym._plain(kwargs)))

    return draw


def _maker(orig: Callable[..., Any], trace: Trace) -> Callable[..., Any]:
    """``Tensor._make`` that breaks on a plain array the recording did not make: data from
    outside the step (``tensor(ndarray)``, ``from_numpy``) would be a constant of the replay;
    the tensors made are noted (``Trace._escapes``)."""
    def make(data: Any, dev: Any) -> Any:
        rec = ACTIVE.rec
        if rec is None:
            return orig(data, dev)
        if (isinstance(data, np.ndarray) and id(data) not in rec.roots
                and not (isinstance(data, SymArray) and rec.owns(data))):
            trace._stop(f"a tensor made from an array the recording did not make "
                        f"({_user_site()}): data from outside the step; pass it as an argument")
        t = orig(data, dev)
        trace.made.append(weakref.ref(t))
        return t

    return make


def _user_site() -> str:
    """``file:line`` of the innermost frame outside the package."""
    f: Any = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_node._PKG_DIR):
        f = f.f_back
    return "unknown" if f is None else f"{f.f_code.co_filename}:{f.f_lineno}"


def _user_read(orig: Callable[..., Any], name: str, trace: Trace) -> Callable[..., Any]:
    def read(self: Any, *args: Any, **kwargs: Any) -> Any:
        if ACTIVE.rec is not None:
            caller = sys._getframe(1)
            if not caller.f_code.co_filename.startswith(_node._PKG_DIR):
                trace._stop(f"{_READ_NAMES.get(name, f'Tensor.{name}()')} at "
                            f"{caller.f_code.co_filename}:{caller.f_lineno} reads a value back "
                            "to Python")
        return orig(self, *args, **kwargs)

    return read


def _sole_base(orig: Callable[..., Any]) -> Callable[..., Any]:
    """``accumulate._sole_base`` on a recorded gradient, answered as eager answers it (a new
    ``.grad`` takes the buffer its transposed view covers when nothing else holds that buffer,
    instead of copying it), and given as the buffer's SymArray.

    NOTE: the recording keeps every array it saw alive, so the buffer's reference count says
    nothing here; instead, every recorded array over the same buffer (other than ``g``) must be
    held by nothing but the recording, as in eager nothing but ``g`` holds the buffer."""
    def sole(backend: Any, g: Any) -> Any:
        rec = ACTIVE.rec
        if rec is None or not isinstance(g, SymArray):
            return orig(backend, g)
        view = _sym.raw(g)
        base = np.ndarray.base.__get__(view) if isinstance(view, np.ndarray) else None
        if base is None or base.shape != g.shape or base.strides != g.strides \
                or base.dtype != g.dtype or np.ndarray.base.__get__(base) is not None \
                or not base.flags.writeable:
            return None
        found = None
        for s in rec.keep:
            if s is g or not isinstance(s, SymArray):
                continue
            r = _sym.raw(s)
            if r is not base and not (isinstance(r, np.ndarray)
                                      and np.ndarray.base.__get__(r) is base):
                continue
            # NOTE: its holders: the recording's list, this loop and getrefcount's argument
            if sys.getrefcount(s) > 3:
                return None
            if r is base and found is None:
                found = s
        return found

    return sole


def _host_hook(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """``_foreach.host`` while recording: one call, made again on every replay."""
    if ACTIVE.rec is None:
        return fn(*args)
    return either(lambda rec: rec.host(fn, args), lambda: fn(*args))


def _plain_value(v: Any) -> bool:
    """A value a replay may pass again as it is: numbers, strings, flags, None."""
    return v is None or isinstance(v, (bool, int, float, str))


def _opaque(bound: Callable[..., Any], trace: Trace,
            recordable: Callable[[], bool] | None = None,
            grads_only: bool = False) -> Callable[..., Any]:
    # NOTE: ``wraps``: the bound method's attributes stay readable (a scheduler checks the mark
    # it put on ``optimizer.step``)
    @functools.wraps(bound)
    def call(*args: Any, **kwargs: Any) -> Any:
        rec = ACTIVE.rec
        if rec is None:
            return bound(*args, **kwargs)
        if not all(_plain_value(a) for a in (*args, *kwargs.values())):
            trace._stop(f"{_qualname(bound)}() with arguments (a closure, or a value the "
                        "replay cannot pass)")
            return bound(*args, **kwargs)
        if recordable is not None and not args and not kwargs and recordable():
            return bound()
        # NOTE: plain arguments (zero_grad(set_to_none=True)) are passed again on replay
        again = functools.partial(bound, *args, **kwargs) if args or kwargs else bound
        try:
            trace.store()
        except Break as b:
            trace.unwrap()
            trace._stop(b.cause, quiet=isinstance(b, QuietBreak))
            return again()
        ACTIVE.rec = None
        try:
            out = again()
        finally:
            ACTIVE.rec = rec
        rec.instrs.append(Instr("opaque", again, pure=False, grads_only=grads_only))
        try:
            trace.load()
        except Break as b:
            trace._stop(b.cause)
        return out

    return call


def _reseed(orig: Callable[..., Any], trace: Trace) -> Callable[..., Any]:
    """``Generator.manual_seed``/``seed`` in the step: run as it is, and again on replay (with
    the same arguments) before the draws that follow it."""
    @functools.wraps(orig)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        rec = ACTIVE.rec
        if rec is None:
            return orig(self, *args, **kwargs)
        if _has_sym((args, kwargs)):
            trace._stop(f"Generator.{orig.__name__}() with a tensor's value")
            return orig(self, *args, **kwargs)
        ACTIVE.rec = None
        try:
            out = orig(self, *args, **kwargs)
        finally:
            ACTIVE.rec = rec
        rec.instrs.append(Instr("opaque", functools.partial(orig, self, *args, **kwargs),
                                pure=False))
        return out

    return call


def _state_read(orig: Callable[..., Any], name: str, trace: Trace) -> Callable[..., Any]:
    """``Generator.get_state``/``set_state`` in the step: a state read back to Python (or one
    kept from a read) cannot be replayed."""
    @functools.wraps(orig)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if ACTIVE.rec is not None:
            trace._stop(f"Generator.{name}() in the step (a generator's state read back to "
                        "Python)")
        return orig(self, *args, **kwargs)

    return call


class _StateOf:
    """A generator's state read on replay, as a 0-d object array (a slot the replay passes to
    ``_SetState``): checkpoint's stash of the RNG state, given back for its recomputation."""
    __slots__ = ("gen",)

    def __init__(self, gen: Any) -> None:
        self.gen = gen

    def __call__(self) -> Any:
        held = np.empty((), object)
        held[()] = self.gen.get_state()
        return held


class _SetState:
    __slots__ = ("gen",)

    def __init__(self, gen: Any) -> None:
        self.gen = gen

    def __call__(self, held: Any) -> None:
        self.gen.set_state(held[()])


def _rng_get(gen: Any) -> Any:
    """``checkpoint._rng_get`` while recording: one call (a state read again on replay)."""
    return either(lambda rec: rec.call(_StateOf(gen), (), {}),
                  lambda: _StateOf(gen)())


def _rng_setter(trace: Trace) -> Callable[[Any, Any], None]:
    """``checkpoint._rng_set`` while recording: one call, made again on every replay (a state
    stashed before the step, by a checkpoint whose forward ran outside it, breaks)."""
    def set_state(gen: Any, state: Any) -> None:
        if not isinstance(state, np.ndarray):
            if ACTIVE.rec is not None:
                trace._stop("a checkpoint's RNG state stashed outside the step (its forward "
                            "ran before the compiled call)")
            gen.set_state(state)
            return
        either(lambda rec: rec.call(_SetState(gen), (state,), {}, pure=False),
               lambda: _SetState(gen)(_sym._plain(state)))

    return set_state


def _noting(orig: Callable[..., Any], trace: Trace) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        trace.backward_ran = True
        return orig(*args, **kwargs)

    return run


def _qualname(bound: Any) -> str:
    self = getattr(bound, "__self__", None)
    return f"{type(self).__name__}.{bound.__name__}" if self is not None else bound.__name__

