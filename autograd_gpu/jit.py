"""``torch.jit`` without TorchScript: programs that script or trace a model run it eagerly.

autograd_gpu executes Python as written, so there is nothing to compile. What works:
- ``script``, ``trace``, ``trace_module``, ``script_if_tracing``, ``script_method``, ``freeze``
  and ``optimize_for_inference`` hand back the function or module they are given (the same
  outputs and gradients as PyTorch's compiled one; it is not a ``ScriptModule``, has no
  ``.graph`` or ``.code``, and ``freeze`` keeps PyTorch's eval-mode check);
- the decorators ``ignore``, ``unused``, ``export`` and ``interface``; ``is_scripting()`` and
  ``is_tracing()`` (False); ``annotate``; ``isinstance`` (PyTorch's eager container check:
  ``List[int]``, ``Dict[str, Tensor]``, ``Tuple``, ``Optional``); ``Attribute``; ``Final``;
- ``fork`` (runs the call at once, as PyTorch's eager mode does) and ``wait``;
- the no-op contexts ``optimized_execution``, ``fuser`` and ``strict_fusion``, and the fusion
  flags ``enable_onednn_fusion``/``onednn_fusion_enabled``/``set_fusion_strategy``;
- ``ScriptModule`` as a base class for legacy ``ScriptModule`` subclasses (an ``nn.Module``).
A stub: ``save``, ``load``, ``export_opnames`` and the flatbuffer functions raise
``NotImplementedError`` naming the function when called (save a ``state_dict`` with
``torch.save`` instead). Like PyTorch 2.13, the compile entry points issue a
``DeprecationWarning``.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import types
import typing
import warnings
from collections import namedtuple
from collections.abc import Container, Hashable
from typing import Any, Callable, Final, Iterator, TypeVar  # Final: torch.jit re-exports it

from .compat._stubs import unsupported
from .nn.module import Module

__all__ = ["Attribute", "CompilationUnit", "Error", "Final", "Future", "ScriptFunction",
           "ScriptModule", "ScriptWarning", "TracerWarning", "annotate",
           "enable_onednn_fusion", "export", "export_opnames", "fork", "freeze", "fuser",
           "ignore", "interface", "is_scripting", "is_tracing", "isinstance", "load",
           "onednn_fusion_enabled", "optimize_for_inference", "optimized_execution",
           "run_frozen_optimizations", "save", "script", "script_if_tracing", "script_method",
           "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait"]

_T = TypeVar("_T")
_NO_COMPILER = "autograd_gpu has no TorchScript compiler (save the model's state_dict instead)"


def _deprecated(name: str, switch: bool = True) -> None:
    """PyTorch 2.13's DeprecationWarning for ``torch.jit.<name>`` (attributed to this module, so
    hidden by default as PyTorch's is)."""
    instead = ("switch to `torch.compile` or `torch.export`." if switch
               else "use `torch.compile` instead.")
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please {instead}", DeprecationWarning,
                  stacklevel=2)


def script(obj: _T, optimize: None = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> _T:
    """``obj`` itself (a function, class or module): eager execution gives the scripted
    outputs."""
    _deprecated("script")
    return obj


def trace(func: _T, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
          _force_outplace: bool = False, _module_class: Any = None,
          _compilation_unit: Any = None, example_kwarg_inputs: Any = None,
          _store_inputs: bool = True) -> _T:
    """``func`` itself. NOTE: PyTorch records the ops run on ``example_inputs`` and replays
    them; returning ``func`` gives the same results wherever the trace is valid (no
    data-dependent control flow), and the Python behaviour where it is not."""
    _deprecated("trace")
    return func


def trace_module(mod: _T, inputs: Any, optimize: Any = None, check_trace: bool = True,
                 check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
                 _force_outplace: bool = False, _module_class: Any = None,
                 _compilation_unit: Any = None, example_inputs_is_kwarg: bool = False,
                 _store_inputs: bool = True) -> _T:
    """``mod`` itself (see ``trace``)."""
    _deprecated("trace_method")
    return mod


def script_if_tracing(fn: _T) -> _T:
    """``fn`` itself (nothing is ever traced)."""
    return fn


def script_method(fn: _T) -> _T:
    """``fn`` itself: a legacy ``ScriptModule`` method runs as a Python method."""
    _deprecated("script_method")
    return fn


def _check_eval(mod: Any) -> None:
    if getattr(mod, "training", False):
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")


def freeze(mod: _T, preserved_attrs: list[str] | None = None,
           optimize_numerics: bool = True) -> _T:
    """``mod`` itself once it is in eval mode (PyTorch's ``RuntimeError`` otherwise)."""
    _deprecated("freeze", switch=False)
    _check_eval(mod)
    return mod


def optimize_for_inference(mod: _T, other_methods: list[str] | None = None) -> _T:
    """``mod`` itself once it is in eval mode."""
    _deprecated("optimize_for_inference", switch=False)
    _check_eval(mod)
    return mod


def run_frozen_optimizations(mod: Any, optimize_numerics: bool = True,
                             preserved_methods: list[str] | None = None) -> None:
    """Nothing to do: PyTorch optimizes the frozen graph in place."""


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@torch.jit.ignore`` and ``@torch.jit.ignore(drop=...)``: the function unchanged."""
    if callable(drop):
        return drop
    if not builtins.isinstance(drop, bool):
        raise RuntimeError("Argument to @torch.jit.ignore must be a bool or a function but got "
                           f"{drop}")
    return lambda fn: fn


def unused(fn: _T) -> _T:
    """``fn`` unchanged (PyTorch's compiler would replace its calls by a ``raise``)."""
    return fn


def export(fn: _T) -> _T:
    """``fn`` unchanged (PyTorch compiles it as an entry point of a ``ScriptModule``)."""
    return fn


def interface(obj: _T) -> _T:
    """The class unchanged; PyTorch's ``RuntimeError`` for anything but a class."""
    _deprecated("interface", switch=False)
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    return obj


def is_scripting() -> bool:
    """False: code here always runs in Python."""
    return False


def is_tracing() -> bool:
    """False: nothing is traced."""
    return False


def annotate(the_type: Any, the_value: _T) -> _T:
    """``the_value`` (a type hint for the TorchScript compiler)."""
    return the_value


_BARE = {list: "list", tuple: "tuple", dict: "dict", typing.List: "List",
         typing.Tuple: "Tuple", typing.Dict: "Dict", typing.Optional: "Optional"}
_EMPTY_WARNING = ("The inner type of a container is lost when calling torch.jit.isinstance in "
                  "eager mode. For example, List[int] would become list and therefore falsely "
                  "return True for List[float] or List[str].")


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001  (torch.jit's name)
    """Whether ``obj`` matches ``target_type``, container element types included (PyTorch's
    eager check): ``isinstance([1, 2], List[int])`` is True, ``isinstance([1, "a"],
    List[int])`` False; a tuple of types matches any of them.

    As PyTorch's: a container type without element types (``list``, ``Dict``) is a
    ``RuntimeError``; an empty container warns that its element type cannot be checked;
    ``Tuple[int, ...]`` matches no tuple. NOTE: ``Union[List[int], str]`` tries every member
    (PyTorch's stops at the first container member).
    """
    if builtins.isinstance(target_type, tuple):
        return any(isinstance(obj, t) for t in target_type)
    if builtins.isinstance(target_type, Container):
        raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or a "
                           "tuple of types")
    return _matches(obj, target_type)


def _matches(obj: Any, kind: Any) -> bool:
    name = _BARE.get(kind) if builtins.isinstance(kind, Hashable) else None
    if name is not None:
        if name.endswith("ict"):
            raise RuntimeError(f"Attempted to use {name} without contained types. Please add "
                               f"contained type, e.g. {name}[int, int]")
        raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                           f"contained type, e.g. {name}[int]")
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is None:
        return builtins.isinstance(obj, kind)
    if origin is typing.Union or origin is types.UnionType:
        return obj is None or any(_matches(obj, a) for a in args)
    if origin not in (list, dict, tuple):
        return False
    if builtins.isinstance(obj, (list, dict, tuple)) and not obj:
        warnings.warn(_EMPTY_WARNING, stacklevel=3)
    if not builtins.isinstance(obj, origin):
        return False
    if origin is list:
        return all(_matches(x, args[0]) for x in obj)
    if origin is dict:
        return all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    return len(obj) == len(args) and all(_matches(x, a) for x, a in zip(obj, args))


Attribute = namedtuple("Attribute", ["value", "type"])
Attribute.__doc__ = """``torch.jit.Attribute(value, type)``: a type hint for a ``ScriptModule``
attribute; in eager code it is this named pair, as in PyTorch."""


class Error(Exception):
    """``torch.jit.Error``: raised by TorchScript code (never here)."""


class TracerWarning(Warning):
    """``torch.jit.TracerWarning`` (never issued here: nothing is traced)."""


class ScriptWarning(Warning):
    """``torch.jit.ScriptWarning`` (never issued here)."""


class ScriptModule(Module):
    """Base of legacy ``torch.jit.ScriptModule`` subclasses: an ``nn.Module`` run eagerly
    (their ``@torch.jit.script_method`` methods are plain methods). NOTE: ``script(module)``
    returns the module itself, which is not an instance of this class."""


class ScriptFunction:
    """``torch.jit.ScriptFunction`` (``script(fn)`` returns ``fn`` itself here, never one of
    these)."""


class CompilationUnit:
    """``torch.jit.CompilationUnit``: compiles TorchScript source, which autograd_gpu cannot."""

    def __init__(self, lang: str | None = None, _frames_up: int = 0) -> None:
        raise NotImplementedError(f"autograd_gpu does not implement torch.jit.CompilationUnit: "
                                  f"{_NO_COMPILER}")


class Future:
    """The result of ``fork``, finished as soon as it exists."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def wait(self) -> Any:
        return self._value

    def value(self) -> Any:
        return self._value

    def done(self) -> bool:
        return True


def fork(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
    """Call ``func(*args, **kwargs)`` now and return its finished ``Future`` (PyTorch's eager
    mode also runs it synchronously)."""
    _deprecated("fork", switch=False)
    return Future(func(*args, **kwargs))


def wait(future: Future) -> Any:
    """The value of a ``Future`` from ``fork``."""
    _deprecated("wait", switch=False)
    return future.wait()


_fusion = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


def enable_onednn_fusion(enabled: bool) -> None:
    """Records the flag (no fuser runs here)."""
    _fusion["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    """The flag ``enable_onednn_fusion`` last set (False by default, as PyTorch's)."""
    return bool(_fusion["onednn"])


def set_fusion_strategy(strategy: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Records ``strategy`` and returns the previous one (PyTorch's default
    ``[("STATIC", 2), ("DYNAMIC", 10)]`` first)."""
    _deprecated("set_fusion_strategy", switch=False)
    previous = _fusion["strategy"]
    _fusion["strategy"] = list(strategy)
    return typing.cast("list[tuple[str, int]]", previous)


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """No-op context (PyTorch's graph-executor switch)."""
    yield


_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")


@contextlib.contextmanager
def fuser(name: str) -> Iterator[None]:
    """No-op context for PyTorch's fuser names; PyTorch's error for any other name."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002
    yield


class strict_fusion:  # noqa: N801  (torch.jit's name)
    """No-op context; warns as PyTorch does outside TorchScript."""

    def __init__(self) -> None:
        warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


save = unsupported("torch.jit.save", _NO_COMPILER)
load = unsupported("torch.jit.load", "TorchScript archives need PyTorch's runtime")
export_opnames = unsupported("torch.jit.export_opnames", _NO_COMPILER)
save_jit_module_to_flatbuffer = unsupported("torch.jit.save_jit_module_to_flatbuffer",
                                            _NO_COMPILER)
jit_module_from_flatbuffer = unsupported("torch.jit.jit_module_from_flatbuffer",
                                         "TorchScript archives need PyTorch's runtime")
last_executed_optimized_graph = unsupported("torch.jit.last_executed_optimized_graph",
                                            "no graph is ever executed")
