"""Nested Python containers (tuple, list, dict, namedtuple; None holds nothing) as flat leaves."""

from __future__ import annotations

from typing import Any

Spec = Any  # None for a leaf, else (kind, context, child specs)


def _children(x: Any) -> tuple[str, Any, list[Any]] | None:
    if x is None:
        return "none", None, []
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return "namedtuple", type(x), list(x)
    if isinstance(x, tuple):
        return "tuple", None, list(x)
    if isinstance(x, list):
        return "list", None, list(x)
    if isinstance(x, dict):
        keys = list(x)
        return "dict", keys, [x[k] for k in keys]
    return None


def flatten(x: Any) -> tuple[list[Any], Spec]:
    """The leaves of ``x`` in order, and how to rebuild it."""
    leaves: list[Any] = []

    def walk(x: Any) -> Spec:
        node = _children(x)
        if node is None:
            leaves.append(x)
            return None
        kind, ctx, kids = node
        return kind, ctx, [walk(k) for k in kids]

    return leaves, walk(x)


def unflatten(leaves: list[Any], spec: Spec) -> Any:
    it = iter(leaves)

    def build(spec: Spec) -> Any:
        if spec is None:
            return next(it)
        kind, ctx, kids = spec
        values = [build(k) for k in kids]
        if kind == "none":
            return None
        if kind == "tuple":
            return tuple(values)
        if kind == "list":
            return values
        if kind == "namedtuple":
            return ctx(*values)
        return dict(zip(ctx, values))

    return build(spec)


def broadcast(prefix: Any, spec: Spec) -> list[Any] | None:
    """One entry of ``prefix`` per leaf of ``spec``: a leaf of ``prefix`` (an int or None)
    covers a whole subtree. None when the structures do not match."""
    out: list[Any] = []

    def walk(p: Any, spec: Spec) -> bool:
        node = None if p is None else _children(p)
        if node is None:  # a leaf of the prefix covers the subtree
            out.extend([p] * num_leaves(spec))
            return True
        if spec is None:
            return False
        kind, ctx, kids = node
        skind, sctx, skids = spec
        # NOTE: containers must be of the same kind (a tuple prefix does not cover a list), as
        # torch's pytrees
        if kind != skind or (kind == "namedtuple" and ctx is not sctx):
            return False
        if kind == "dict" and set(ctx) != set(sctx):
            return False
        if kind == "dict":
            by_key = dict(zip(ctx, kids))
            kids = [by_key[k] for k in sctx]
        if len(kids) != len(skids):
            return False
        return all(walk(p, s) for p, s in zip(kids, skids))

    return out if walk(prefix, spec) else None


def num_leaves(spec: Spec) -> int:
    if spec is None:
        return 1
    return sum(num_leaves(k) for k in spec[2])


def describe(spec: Spec) -> str:
    """A short structure string for error messages, e.g. ``(*, [*, *])``."""
    if spec is None:
        return "*"
    kind, ctx, kids = spec
    inner = ", ".join(describe(k) for k in kids)
    if kind == "dict":
        inner = ", ".join(f"{k!r}: {describe(s)}" for k, s in zip(ctx, kids))
        return "{" + inner + "}"
    if kind == "list":
        return f"[{inner}]"
    if kind == "none":
        return "None"
    return f"({inner}{',' if len(kids) == 1 else ''})"
