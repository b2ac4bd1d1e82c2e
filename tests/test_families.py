"""The op families (functions/<family>.py) add names; they never replace one: no Tensor method
defined in tensor.py and no function imported by functions/__init__ before the families is
taken over by a family's TENSOR_METHODS or __all__, and every exported name exists."""

from __future__ import annotations

import ast
from pathlib import Path

import autograd_gpu as ag
import autograd_gpu.functions as F

PKG = Path(ag.__file__).parent


def _class_names() -> set[str]:
    """The names ``Tensor`` and its delegating base define in their class bodies."""
    names: set[str] = set()
    for file, name in (("tensor.py", "Tensor"), ("tensor_methods.py", "TensorMethods")):
        tree = ast.parse((PKG / file).read_text())
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
        names |= {n.name for n in cls.body if isinstance(n, ast.FunctionDef)} | {
            t.id for n in cls.body if isinstance(n, ast.Assign) for t in n.targets
            if isinstance(t, ast.Name)}
    return names


def _imported_before_families() -> dict[str, str]:
    head = (PKG / "functions" / "__init__.py").read_text().split("# ---- the op families")[0]
    out = {}
    for node in ast.parse(head).body:
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                out[a.asname or a.name] = node.module or ""
    return out


def test_families_add_and_never_replace() -> None:
    methods, before = _class_names(), _imported_before_families()
    seen: dict[str, str] = {}
    for fam in F.FAMILIES:
        name = fam.__name__.rsplit(".", 1)[-1]
        assert not set(fam.TENSOR_METHODS) & methods, (name, set(fam.TENSOR_METHODS) & methods)
        for n in fam.__all__:
            assert hasattr(fam, n), (name, n)
            if n in before:  # NOTE: re-exporting the same object is fine
                assert getattr(F, n) is getattr(fam, n), (name, n, before[n])
            assert seen.setdefault(n, name) == name, (n, seen[n], name)
            assert getattr(ag, n) is getattr(fam, n), (name, n)
        for n, fn in fam.TENSOR_METHODS.items():
            assert getattr(ag.Tensor, n) is fn, (name, n)  # NOTE: also no method twice


def test_nn_families_add_and_never_replace() -> None:
    """``nn`` and ``nn.functional`` gather one module per family (each its own ``__all__``): no
    name is exported by two families, or by a family and ``functional.py`` itself, and every
    exported name is the family's own object."""
    import autograd_gpu.nn.functional as NF

    own = set(NF.__all__[:len(NF.__all__) - sum(len(f.__all__) for f in NF.FAMILIES)])
    for namespace, families, taken in ((ag.nn, ag.nn.FAMILIES, {"Module", "Parameter"}),
                                       (NF, NF.FAMILIES, own)):
        seen: dict[str, str] = {}
        for family in families:
            for name in family.__all__:
                assert name not in taken, (family.__name__, name)
                assert name not in seen, (family.__name__, name, seen[name])
                seen[name] = family.__name__
                assert getattr(namespace, name) is getattr(family, name), (family.__name__, name)
