"""Sorting and searching: sort, argsort, topk, kthvalue, median, mode, unique, searchsorted, bucketize, histc, bincount, ...

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

from typing import Any, Callable

__all__: list[str] = []
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
