"""Named tuples returned by ops, as ``torch.return_types``."""

from __future__ import annotations

from typing import Any, NamedTuple


class MinMax(NamedTuple):
    """``(values, indices)`` from ``max(dim)`` / ``min(dim)``."""

    values: Any
    indices: Any


max = min = MinMax  # noqa: A001  (torch.return_types.max / .min)
