"""Process-wide switches that ``torch.backends.*`` modules expose as attributes
(``torch.backends.cudnn.benchmark = True``), with PyTorch's checks on assignment.

A flag module declares its switches as ``Flag`` descriptors on a ``FlagModule`` subclass and
makes itself an instance of it (``as_flag_module``): reading gives the value, assigning checks the
type as PyTorch's setter does, and ``flags(...)`` context managers set several at once.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class Flag:
    """A boolean switch with a default; assigning anything but a bool raises PyTorch's
    ``RuntimeError: <setter> expects a bool, but got <type>``."""

    def __init__(self, default: Any, setter: str, kind: type = bool) -> None:
        self.value, self.setter, self.kind = default, setter, kind

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self.value

    def __set__(self, obj: Any, value: Any) -> None:
        if type(value) is not self.kind and not (self.kind is int and isinstance(value, int)
                                                 and not isinstance(value, bool)):
            raise RuntimeError(f"{self.setter} expects a {self.kind.__name__}, but got "
                               f"{type(value).__name__}")
        self.value = value


class FlagModule(types.ModuleType):
    """A module whose ``Flag`` class attributes read and assign as module attributes."""


def as_flag_module(name: str, cls: type[FlagModule]) -> None:
    """Give module ``name`` the class ``cls`` (its ``Flag`` attributes then work as module
    attributes; everything else in the module stays as it is)."""
    sys.modules[name].__class__ = cls
