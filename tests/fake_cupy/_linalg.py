"""The fake ``cupy.linalg``: NumPy's LAPACK routines on fake arrays, limited to the functions and
argument forms CuPy 13 has (``qr`` and ``lstsq`` take one matrix; ``solve`` does not broadcast
batch dims; no ``eig``)."""

from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from . import _array as A

LinAlgError = np.linalg.LinAlgError


def _two_d(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(a: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(a, A.ndarray):
            raise A.unsupported(a)
        if a.ndim != 2:
            raise LinAlgError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
        return A.call(fn, (a, *args), kwargs)

    run.__name__ = name
    return run


def _stacked(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        for a in args:
            if not isinstance(a, A.ndarray) and not isinstance(a, (int, float, str)):
                raise A.unsupported(a)
        return A.call(fn, args, kwargs)

    run.__name__ = name
    return run


def solve(a: Any, b: Any) -> Any:
    """CuPy's solve: ``b`` is (..., M) or (..., M, K) with exactly ``a``'s batch dims."""
    if not isinstance(a, A.ndarray) or not isinstance(b, A.ndarray):
        raise A.unsupported(b if isinstance(a, A.ndarray) else a)
    if not ((a.ndim == b.ndim or a.ndim == b.ndim + 1) and
            a.shape[:-1] == b.shape[:a.ndim - 1]):
        raise ValueError("a must have (..., M, M) shape and b must have (..., M) or (..., M, K)")
    return A.call(np.linalg.solve, (a, b), {})


linalg = types.ModuleType("cupy.linalg", "Fake cupy.linalg: numpy.linalg on fake arrays.")
linalg.LinAlgError = LinAlgError  # type: ignore[attr-defined]
linalg.solve = solve  # type: ignore[attr-defined]
linalg.qr = _two_d("qr", np.linalg.qr)  # type: ignore[attr-defined]
linalg.lstsq = _two_d("lstsq", np.linalg.lstsq)  # type: ignore[attr-defined]
for _name in ("cholesky", "svd", "eigh", "eigvalsh", "det", "slogdet", "inv", "pinv",
              "matrix_rank", "norm", "matrix_power", "tensorsolve", "tensorinv"):
    setattr(linalg, _name, _stacked(_name, getattr(np.linalg, _name)))
