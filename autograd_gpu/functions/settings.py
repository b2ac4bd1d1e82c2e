"""Process settings with PyTorch's names: threads, determinism, matmul precision, denormals,
the default device.

What they do here: ``set_num_threads`` limits the BLAS thread pools (through ``threadpoolctl``
when it is installed; NumPy's elementwise work is single-threaded anyway); every op is
deterministic on the CPU and nearly every one on CUDA: as in PyTorch, float sums into repeated
positions there (``index_add_``, ``scatter_add_``, ``index_put_(accumulate=True)``, pooling
backward) add atomically, in any order, unless ``use_deterministic_algorithms(True)`` asks for
sorted runs (the embedding's backward always takes them, as PyTorch's does);
float32 matrix products always run in full float32 (``highest``), the precision setting is
recorded and validated as PyTorch's; denormals cannot be flushed from NumPy
(``set_flush_denormal`` returns False, as PyTorch does where the CPU cannot); the default device
is the device of factory results made without ``device=``.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (none here).
"""

from __future__ import annotations

import os
import threading
import warnings
from typing import Any, Callable

from .. import device as _device_mod
from ..autograd.node import user_stacklevel
from ..backends.scatter import Determinism as _Determinism

__all__ = [
    "get_num_threads", "set_num_threads", "get_num_interop_threads", "set_num_interop_threads",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "get_deterministic_debug_mode",
    "set_deterministic_debug_mode", "get_float32_matmul_precision",
    "set_float32_matmul_precision", "set_flush_denormal", "get_default_device",
    "set_default_device",
]


class _Settings:
    threads = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                  else os.cpu_count() or 1)
    interop = threads
    deterministic = False
    warn_only = False
    precision = "highest"


_S = _Settings()
_LOCK = threading.Lock()


def get_num_threads() -> int:
    """The number of threads for intra-op work (the BLAS pools'), as last set."""
    return _S.threads


def set_num_threads(num: int) -> None:
    """Limit the BLAS thread pools to ``num`` threads (``threadpoolctl``, when installed).

    NOTE: ``threadpoolctl`` is not a dependency; without it only the recorded number changes
    (set ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS`` before NumPy loads instead).
    """
    if not isinstance(num, int) or isinstance(num, bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(num).__name__}")
    if num <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    with _LOCK:
        _S.threads = num
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            return
        threadpool_limits(limits=num, user_api="blas")


def get_num_interop_threads() -> int:
    return _S.interop


def set_num_interop_threads(num: int) -> None:
    if not isinstance(num, int) or isinstance(num, bool) or num <= 0:
        raise RuntimeError("Expected positive number of threads")
    _S.interop = num


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Set the determinism mode: on CUDA, float sums into repeated positions then add in sorted
    runs rather than atomically (the module docstring)."""
    if not isinstance(mode, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    _S.deterministic, _S.warn_only = mode, bool(warn_only) and mode
    _Determinism.on = mode


def are_deterministic_algorithms_enabled() -> bool:
    return _S.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _S.warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def get_deterministic_debug_mode() -> int:
    """0 (off), 1 (warn) or 2 (error), as PyTorch reports it."""
    return 0 if not _S.deterministic else 1 if _S.warn_only else 2


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        level = _DEBUG_MODES[debug_mode]
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError("invalid value of debug_mode, expected 0, 1, or 2, but got "
                               f"{debug_mode}")
        level = debug_mode
    else:
        raise TypeError("debug_mode must be str or int, but got "
                        f"{type(debug_mode).__name__}")
    use_deterministic_algorithms(level > 0, warn_only=level == 1)


def get_float32_matmul_precision() -> str:
    return _S.precision


def set_float32_matmul_precision(precision: str) -> None:
    """Record ``highest``/``high``/``medium`` (products always run in full float32 here);
    anything else warns as PyTorch's and has no effect."""
    if not isinstance(precision, str):
        raise RuntimeError("set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning,
                      stacklevel=user_stacklevel())
        return
    _S.precision = precision


def set_flush_denormal(mode: bool) -> bool:
    """False: NumPy cannot flush denormals to zero (PyTorch returns False where the CPU
    cannot); ``set_flush_denormal(False)`` is what runs anyway."""
    return False


def get_default_device() -> Any:
    """The device factories use when no ``device=`` is given (``cpu`` unless set)."""
    return _device_mod.default_device()


def set_default_device(device: Any) -> None:
    """Make ``device`` (None: the CPU) the default for factory functions."""
    _device_mod.set_default(device)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
