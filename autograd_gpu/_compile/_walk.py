"""The walk that finds what a compiled step can reach (``Walk``): its arguments, its closure,
its defaults, the globals its code names (and, one level down, the same for the functions and
plain objects among those), noting on request what it read through (``_memo``)."""

from __future__ import annotations

import functools
import types
from typing import Any

import numpy as np

from ..nn.module import Module
from ..optim.lr_scheduler import LRScheduler
from ..optim.optimizer import Optimizer
from ..random import Generator
from ..tensor import Tensor
from ._state import Found

_LIMIT = 10_000  # NOTE: containers longer than this are not searched (data, not state)
_VALUES = (int, float, complex, str, bytes, bool, np.generic)
# NOTE: exact types whose instances cannot take attributes (the scheduler test below is about
# attributes): a ``Reads`` need not test them again
_NO_ATTRS = frozenset({list, tuple, dict, set, frozenset, np.ndarray})


def _scheduler_like(obj: Any) -> bool:
    """A scheduler by its looks: an ``optimizer`` attribute holding an optimizer, and ``step``."""
    return hasattr(obj, "optimizer") and hasattr(obj, "step") and isinstance(
        getattr(obj, "optimizer", None), Optimizer)


class Walk:
    """The state a call can reach (module docstring): ``target`` (the compiled function or
    module), then ``visit`` of its arguments at depth 1; ``found``: what it found so far.
    ``reads``, when given, notes what the walk read through (containers, attributes, closure
    cells, globals, the scheduler tests), so that a later call can tell that the walk would
    find the same (``_memo``)."""

    def __init__(self, reads: Any = None) -> None:
        self.found = Found()
        self.seen: set[int] = set()
        self.reads = reads

    def target(self, fn: Any) -> None:
        """The state a compiled function (or module) reaches by itself, arguments aside."""
        if isinstance(fn, Module):
            self.visit(fn, 1)
        else:
            self.visit_function(fn, 1)

    def visit(self, obj: Any, depth: int) -> None:
        found = self.found
        if obj is None or isinstance(obj, _VALUES):
            # NOTE: a recording keeps the Python values the step computed with: the signature
            # holds every one the step can reach (a changed one retraces)
            found.values.append(obj)
            return
        if id(obj) in self.seen:
            return
        self.seen.add(id(obj))
        reads = self.reads
        if isinstance(obj, Tensor):
            found.tensors.append(obj)
        elif isinstance(obj, Module):
            found.modules.append(obj)
        elif isinstance(obj, Optimizer):
            found.optimizers.append(obj)
        elif isinstance(obj, LRScheduler) or self._scheduler_like(obj):
            found.schedulers.append(obj)
            if reads is not None:
                reads.attr(obj, "optimizer")
            self.visit(obj.optimizer, depth)
        elif isinstance(obj, Generator):
            found.generators.append(obj)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            if reads is not None and type(obj) is not tuple and type(obj) is not frozenset:
                reads.items(obj)
            if len(obj) <= _LIMIT:
                for o in obj:
                    self.visit(o, depth)
        elif isinstance(obj, dict):
            if reads is not None:
                reads.values(obj)
            if len(obj) <= _LIMIT:
                for o in obj.values():
                    self.visit(o, depth)
        elif isinstance(obj, (types.FunctionType, types.MethodType)):
            if depth > 0:
                self.visit_function(obj, depth - 1)
        elif isinstance(obj, np.ndarray) or isinstance(obj, type) or isinstance(
                obj, types.ModuleType):
            return
        elif depth > 0 and hasattr(obj, "__dict__"):
            if reads is not None:
                reads.attr(obj, "__dict__")
            self.visit(vars(obj), depth - 1)

    def _scheduler_like(self, obj: Any) -> bool:
        like = _scheduler_like(obj)
        if self.reads is not None and type(obj) not in _NO_ATTRS:
            self.reads.test(obj, like)
        return like

    def visit_function(self, f: Any, depth: int) -> None:
        if isinstance(f, types.MethodType):
            self.visit(f.__self__, depth + 1)
            f = f.__func__
        if not isinstance(f, types.FunctionType):
            return
        reads = self.reads
        g = f.__globals__
        names = global_names(f.__code__)
        if reads is not None:
            for name in ("__code__", "__defaults__", "__kwdefaults__"):
                reads.attr(f, name)
            reads.cells_of(f.__closure__ or ())
            reads.globals(g, names)
        for cell in f.__closure__ or ():
            try:
                self.visit(cell.cell_contents, depth)
            except ValueError:  # NOTE: an empty cell
                pass
        self.visit(f.__defaults__, depth)
        self.visit(f.__kwdefaults__, depth)
        for name in names:
            if name in g:
                self.visit(g[name], depth)


@functools.lru_cache(maxsize=256)
def global_names(code: types.CodeType) -> tuple[str, ...]:
    """The global names ``code`` and the functions nested in it read (sorted)."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= set(global_names(c))
    return tuple(sorted(names))
