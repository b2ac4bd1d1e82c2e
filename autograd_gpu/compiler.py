"""``torch.compiler``: ``compile`` and the switches programs call around it.

``reset`` forgets every recording (each compiled function records again on its next call),
``disable`` marks a function to run eagerly inside a compiled one (here: as it is, since a
recording follows what runs), ``is_compiling`` is True while a step is being recorded.
"""

from __future__ import annotations

from typing import Any, Callable

from ._compile import _api
from ._compile._api import BACKENDS, compile  # noqa: A004
from ._compile._sym import ACTIVE

__all__ = ["compile", "reset", "disable", "is_compiling", "is_dynamo_compiling", "list_backends",
           "allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin"]


def reset() -> None:
    """Forget every compiled function's recordings (``torch.compiler.reset``)."""
    _api.reset_all()


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True,
            reason: str | None = None) -> Any:
    """``fn`` unchanged (a recording records what runs; nothing to leave out of it)."""
    del recursive, reason
    if fn is None:
        return lambda f: f
    return fn


def is_compiling() -> bool:
    """True while a compiled function records its step."""
    return ACTIVE.rec is not None


is_dynamo_compiling = is_compiling


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list[str]:
    """The backend names ``compile`` accepts (each replays the same recording here)."""
    del exclude_tags
    return sorted(b for b in BACKENDS if b in ("cudagraphs", "inductor", "openxla", "tvm"))


def allow_in_graph(fn: Callable[..., Any]) -> Callable[..., Any]:
    return fn


def assume_constant_result(fn: Callable[..., Any]) -> Callable[..., Any]:
    return fn


def cudagraph_mark_step_begin() -> None:
    """A no-op: replays allocate what escapes them afresh on every call."""
