"""``torch._dynamo``: the names programs reach for around ``compile``.

``config.cache_size_limit`` (and ``recompile_limit``, the same number) is ``compile``'s limit on
signatures per function; ``explain(fn)(*args)`` records one call and reports it;
``graph_break()`` ends the recording of the step that calls it (the rest of that call, and later
calls of that signature, run eagerly); ``reset``, ``disable``, ``is_compiling`` as in
``torch.compiler``; ``mark_dynamic`` and ``mark_static`` are accepted (every shape is guarded).
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

from .._compile import _api
from .._compile._sym import ACTIVE
from ..compiler import disable, is_compiling, list_backends, reset

__all__ = ["config", "explain", "graph_break", "reset", "disable", "is_compiling",
           "list_backends", "mark_dynamic", "mark_static", "optimize"]


class _Config(types.ModuleType):
    """``torch._dynamo.config``: its limits read and set ``compile``'s."""

    suppress_errors = False
    verbose = False

    @property
    def cache_size_limit(self) -> int:
        return _api.LIMITS.signatures

    @cache_size_limit.setter
    def cache_size_limit(self, value: int) -> None:
        _api.LIMITS.signatures = int(value)

    recompile_limit = cache_size_limit


config = _Config(__name__ + ".config")
sys.modules[config.__name__] = config


def explain(fn: Callable[..., Any]) -> Callable[..., _api.Explanation]:
    """``explain(fn)(*args, **kwargs)``: one recorded call of ``fn`` and what came of it."""
    def run(*args: Any, **kwargs: Any) -> _api.Explanation:
        compiled = _api.compile(fn)
        compiled._quiet = True  # NOTE: the report says what broke; no warning as well
        compiled(*args, **kwargs)
        return compiled.explain()

    return run


def graph_break() -> None:
    """End the recording of the step that calls this (``torch._dynamo.graph_break``)."""
    rec = ACTIVE.rec
    if rec is not None:
        rec.on_break("torch._dynamo.graph_break()")


def mark_dynamic(t: Any, index: Any, **kwargs: Any) -> None:
    """Accepted: every shape is part of a recording's signature here."""


def mark_static(t: Any, index: Any = None) -> None:
    """Accepted: every shape is part of a recording's signature here."""


def optimize(backend: Any = "inductor", **kwargs: Any) -> Callable[[Any], Any]:
    """The older spelling: ``optimize(backend)(fn)`` is ``compile(fn, backend=backend)``."""
    nopython = bool(kwargs.get("nopython", False))
    return lambda fn: _api.compile(fn, backend=backend, fullgraph=nopython)
