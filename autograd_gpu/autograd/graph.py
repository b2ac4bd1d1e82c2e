"""``autograd.graph``: the ``Node`` type and hook handles."""

from __future__ import annotations

from .node import Node, RemovableHandle

__all__ = ["Node", "RemovableHandle"]
