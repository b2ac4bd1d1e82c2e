"""The fake ``cupyx`` (``scatter_add``) and ``cupyx.scipy.special`` (``erf`` and friends)."""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np

from . import _array as A

_ERF: Any = np.frompyfunc(math.erf, 1, 1)
_ERFC: Any = np.frompyfunc(math.erfc, 1, 1)


def scatter_add(a: A.ndarray, slices: Any, value: Any) -> None:
    """``a[slices] += value`` with repeated indices accumulating (CuPy's dtype limits apply)."""
    if not isinstance(a, A.ndarray):
        raise A.unsupported(a)
    A.scatter(a, slices, value, "add")


def _special(fn: Any, name: str) -> Any:
    def run(x: Any) -> A.ndarray:
        srcs: list[Any] = []
        v = np.asarray(A.kernel_arg(x, srcs))
        dt = v.dtype if v.dtype.kind == "f" else np.dtype("float64")
        return A.run(name, lambda: np.asarray(fn(v), dtype=dt), srcs)

    run.__name__ = name
    return run


erf = _special(_ERF, "erf")
erfc = _special(_ERFC, "erfc")

special = types.ModuleType("cupyx.scipy.special", "Fake cupyx.scipy.special.")
special.erf = erf  # type: ignore[attr-defined]
special.erfc = erfc  # type: ignore[attr-defined]
scipy = types.ModuleType("cupyx.scipy", "Fake cupyx.scipy.")
scipy.special = special  # type: ignore[attr-defined]
cupyx = types.ModuleType("cupyx", "Fake cupyx: scatter_add.")
cupyx.scatter_add = scatter_add  # type: ignore[attr-defined]
cupyx.scipy = scipy  # type: ignore[attr-defined]
