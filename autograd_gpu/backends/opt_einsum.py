"""``torch.backends.opt_einsum``: whether ``einsum`` orders its contractions with the
``opt_einsum`` package.

NOTE: our ``einsum`` lets NumPy/CuPy choose the contraction order; these settings follow
PyTorch's (``is_available()`` is whether ``opt_einsum`` is installed; ``enabled`` and
``strategy`` are plain module attributes, as PyTorch's are) and are recorded only.
"""

from __future__ import annotations

import functools
import importlib.util
from typing import Any

__all__ = ["get_opt_einsum", "is_available"]


@functools.cache
def is_available() -> bool:
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum() -> Any:
    """The ``opt_einsum`` module, or None when it is not installed."""
    if not is_available():
        return None
    import opt_einsum  # type: ignore[import-not-found]

    return opt_einsum


enabled: bool = is_available()
strategy: str | None = "auto" if is_available() else None
