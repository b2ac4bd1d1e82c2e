"""The meta-path finder that makes ``torch`` and ``torch.*`` name autograd_gpu's modules.

``torch`` resolves to ``autograd_gpu``; ``torch.a.b`` to the submodule ``b`` of whatever
``torch.a`` resolved to (``autograd_gpu.a.b``; ``torch.backends.cudnn`` to
``autograd_gpu.backends.cudnn``). The module objects themselves are entered in ``sys.modules``
under the ``torch`` names, so ``import torch.nn as nn`` gives ``autograd_gpu.nn`` itself and
``torch.nn is autograd_gpu.nn``. Nothing named ``torch`` exists on disk.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any, Sequence

ROOT = "torch"
TARGET = "autograd_gpu"

# NOTE: PyTorch module paths that programs import and that live elsewhere here, tried only when
# the direct name does not exist: ``torch.nn.modules.loss`` -> ``autograd_gpu.nn.loss`` until
# ``nn/modules/`` exists (PyTorch's ``torch.nn.modules.*`` files are our ``nn/*.py`` families).
# ``None``: not provided, although the direct rule would find a module of another meaning
# (PyTorch's ``torch.nn.modules.utils`` holds ``_pair``, our ``nn.utils`` is ``torch.nn.utils``).
FALLBACKS: dict[str, str | None] = {
    "torch.nn.modules": "autograd_gpu.nn",
    "torch.nn.modules.utils": None,
}

_MISSING = object()


def not_provided(fullname: str) -> ModuleNotFoundError:
    """The error for a ``torch`` submodule autograd_gpu does not have."""
    return ModuleNotFoundError(f"{TARGET} does not provide {fullname}", name=fullname)


def is_ours(module: Any) -> bool:
    """True when ``module`` is autograd_gpu or one of its submodules."""
    name = getattr(module, "__name__", None)
    return isinstance(name, str) and (name == TARGET or name.startswith(TARGET + "."))


def _child(parent: types.ModuleType, name: str) -> types.ModuleType | None:
    """``parent``'s submodule ``name``, imported if needed; None when there is none.

    NOTE: an attribute of that name which is not a module (``autograd_gpu.device`` is the class,
    ``autograd_gpu.tensor`` the function) means there is no such submodule for ``torch``: PyTorch
    has none either, and the import system would replace the attribute by the module.
    """
    attr = getattr(parent, name, _MISSING)
    if isinstance(attr, types.ModuleType):
        return attr
    if attr is not _MISSING:
        return None
    target = f"{parent.__name__}.{name}"
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        # Only the absence of the target itself means "not provided"; a module that exists but
        # fails to import something else reports its own error.
        if e.name is not None and (target == e.name or target.startswith(e.name + ".")):
            return None
        raise


def resolve(fullname: str) -> types.ModuleType:
    """The autograd_gpu module that ``torch`` name ``fullname`` stands for (imported).

    Raises:
        ModuleNotFoundError: ``autograd_gpu does not provide torch.X``.
    """
    if fullname == ROOT:
        return importlib.import_module(TARGET)
    parent_name, _, name = fullname.rpartition(".")
    parent = sys.modules.get(parent_name)
    if parent is None:  # the import system imports parents first; be safe for direct callers
        parent = resolve(parent_name)
    alias = FALLBACKS.get(fullname, _MISSING)
    module = _child(parent, name) if is_ours(parent) and alias is not None else None
    if module is None and isinstance(alias, str):
        module = importlib.import_module(alias)
    if module is None:
        raise not_provided(fullname)
    return module


class _AliasLoader(importlib.abc.Loader):
    """Loads a ``torch`` name as an existing autograd_gpu module: no new module is made.

    NOTE: the import system sets ``module.__spec__`` to the ``torch`` spec between
    ``create_module`` and ``exec_module`` (``__name__``, ``__file__``, ``__path__``... are kept
    as they are set); ``exec_module`` puts the module's own spec back, so ``autograd_gpu``
    still knows itself as ``autograd_gpu`` (``importlib.reload``, ``runpy``, pickling).
    """

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module: types.ModuleType = spec.loader_state["module"]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        spec = module.__spec__
        if spec is not None and spec.loader is self:
            module.__spec__ = spec.loader_state["spec"]


class TorchFinder(importlib.abc.MetaPathFinder):
    """Answers every ``torch`` / ``torch.*`` import with autograd_gpu's module, or raises
    ``ModuleNotFoundError: autograd_gpu does not provide torch.X``.

    NOTE: it never returns None for a ``torch`` name: the next finders would look for
    ``torch.X`` in ``autograd_gpu``'s folder and load a second copy of a module under the
    ``torch`` name.
    """

    def __init__(self) -> None:
        self._loader = _AliasLoader()

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != ROOT and not fullname.startswith(ROOT + "."):
            return None
        module = resolve(fullname)
        locations = getattr(module, "__path__", None)
        spec = importlib.machinery.ModuleSpec(
            fullname, self._loader, origin=getattr(module, "__file__", None),
            loader_state={"module": module, "spec": module.__spec__},
            is_package=locations is not None)
        if locations is not None:
            spec.submodule_search_locations = list(locations)
        return spec

    def invalidate_caches(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: torch -> {TARGET}>"
