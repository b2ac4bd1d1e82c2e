"""``RawModule`` and ``RawKernel`` with CuPy's calling conventions, run by the host library.

A launch checks what CuPy cannot: the argument count, each argument against its C parameter
(a device array or None for a pointer, with the pointee's size; a NumPy scalar of the right kind
and size for a value; no untyped Python scalars, no host arrays) and the launch shape. The
library then runs the kernel on staged copies of the arrays (``prelude.h``): each array's
extent, the bytes its shape and strides reach (overlapping extents are merged, so aliasing is
kept), is copied between guard bytes of 0xFF, NaN in every float type. A read outside the
extent gives NaN, a write outside it is reported; extents reached through non-const pointers are
copied back, the others must come back unchanged.
"""

from __future__ import annotations

import collections
import ctypes
import math
import os
import sys
import threading
from typing import Any

import numpy as np

from . import _build

POISON = 0xFF  # the guard byte value (prelude.h's kPoison)

# Kernel launches by name expression, and blocks run (after the cap), for the run's summary.
LAUNCHES: collections.Counter[str] = collections.Counter()
BLOCKS_RUN = [0]
# NOTE: one launch at a time, as on CUDA's one default stream (which the CuPy backend uses): the
# host library's fiber scheduler is not re-entrant, and ctypes lets two Python threads into it.
_STREAM = threading.Lock()

_GRID_LIMITS = (2**31 - 1, 65535, 65535)
_BLOCK_LIMITS = (1024, 1024, 64)
_SCALAR_KINDS = {"i": "biu", "f": "f"}


def _capture() -> Any:
    """The fake CuPy's recording of the current stream (None: not capturing, or no fake)."""
    graph = sys.modules.get("tests.fake_cupy._graph")
    return None if graph is None else graph.CURRENT[0]._capture


class LaunchError(RuntimeError):
    """A launch CUDA would refuse, or a kernel that misbehaved (the message says which)."""


def max_blocks() -> int | None:
    """The cap on the grid's x size (``AUTOGRAD_GPU_EMULATOR_MAX_BLOCKS``, default 4; 0: none).

    Our kernels are grid-stride loops ("any grid size is correct"), so a smaller grid computes
    the same result with fewer emulated threads, each looping more; a kernel that needs the grid
    the launcher asked for leaves outputs unwritten (NaN, see ``cupy_with_kernels``).
    """
    value = int(os.environ.get("AUTOGRAD_GPU_EMULATOR_MAX_BLOCKS", "4"))
    return value if value > 0 else None


class RawModule:
    """``cupy.RawModule(code=..., name_expressions=[...])`` compiled for the host by g++.

    ``options``: ``-D`` defines go to g++; the rest (``-std``, ``-arch``) is ignored.
    """

    def __init__(self, code: str | None = None, *, path: str | None = None,
                 options: tuple[str, ...] = (), name_expressions: Any = None,
                 **kwargs: Any) -> None:
        if code is None:
            if path is None:
                raise TypeError("RawModule needs code or path")
            with open(path) as fh:
                code = fh.read()
        if not name_expressions:
            raise ValueError("the kernel emulator needs name_expressions (the kernels to "
                             "instantiate, such as 'unary<float>')")
        self.name_expressions = list(name_expressions)
        defines = tuple(o for o in options if o.startswith("-D"))
        source = _build.translate(code, self.name_expressions)
        self._lib = ctypes.CDLL(str(_build.library(source, defines)))
        self._kernels: dict[str, RawKernel] = {}

    def get_function(self, name: str) -> RawKernel:
        kernel = self._kernels.get(name)
        if kernel is None:
            if name not in self.name_expressions:
                raise KeyError(f"{name!r} is not one of this module's name expressions "
                               f"{self.name_expressions}")
            k = self.name_expressions.index(name)
            kernel = RawKernel(name, getattr(self._lib, f"emu_signature_{k}"),
                               getattr(self._lib, f"emu_launch_{k}"))
            self._kernels[name] = kernel
        return kernel


def _dims(value: Any, limits: tuple[int, ...], what: str) -> tuple[int, int, int]:
    if not isinstance(value, (tuple, list)) or not 1 <= len(value) <= 3:
        raise TypeError(f"{what} must be a tuple of 1 to 3 ints, got {value!r}")
    dims = (*value, 1, 1)[:3]
    for d, limit in zip(dims, limits):
        if not isinstance(d, (int, np.integer)) or isinstance(d, bool) or not 1 <= d <= limit:
            raise LaunchError(f"{what} {tuple(value)}: each entry an int in [1, limit], limits "
                              f"{limits} (CUDA: invalid configuration argument)")
    return int(dims[0]), int(dims[1]), int(dims[2])


def _extent(interface: dict[str, Any], itemsize: int) -> tuple[int, int]:
    """Host bytes [lo, hi) an array reaches (empty for size 0)."""
    ptr = int(interface["data"][0])
    shape = interface["shape"]
    if 0 in shape:
        return ptr, ptr
    strides = interface.get("strides")
    if strides is None:
        return ptr, ptr + math.prod(shape) * itemsize
    lo, hi = ptr, ptr + itemsize
    for size, stride in zip(shape, strides):
        if stride < 0:
            lo += (size - 1) * stride
        else:
            hi += (size - 1) * stride
    return lo, hi


class RawKernel:
    """One kernel of a :class:`RawModule`: ``kernel(grid, block, args, shared_mem=0)``."""

    def __init__(self, name: str, signature: Any, launch: Any) -> None:
        self.name = name
        signature.restype = ctypes.c_char_p
        text = signature().decode()
        self.params = [] if text == "-" else [(p[0], int(p[1:])) for p in text.split(",")]
        self._launch = launch
        self._launch.restype = ctypes.c_char_p
        self._launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]

    def _where(self, k: int) -> str:
        kind, size = self.params[k]
        c_type = {"P": f"const pointer to {size}-byte", "p": f"pointer to {size}-byte",
                  "i": f"{size}-byte integer", "f": f"{size}-byte floating"}.get(kind, "other")
        return f"{self.name} argument {k} ({c_type})"

    def _pack(self, args: Any) -> tuple[bytearray, list[tuple[int, int, bool]]]:
        """(one 8-byte slot per argument, the (lo, hi, writable) extents of the arrays)."""
        packed = bytearray(8 * len(args))
        spans = []
        for k, (value, (kind, size)) in enumerate(zip(args, self.params)):
            if kind in "Pp":
                if value is None:
                    continue  # a null pointer
                interface = getattr(value, "__cuda_array_interface__", None)
                if interface is None:
                    raise TypeError(f"{self._where(k)}: Unsupported type {type(value)} (a "
                                    "device array or None is needed)")
                dtype = np.dtype(interface["typestr"])
                if size and dtype.itemsize != size:
                    raise LaunchError(f"{self._where(k)}: got a {dtype} array")
                lo, hi = _extent(interface, dtype.itemsize)
                spans.append((lo, hi, kind == "p"))
                packed[8 * k:8 * k + 8] = int(interface["data"][0]).to_bytes(8, sys.byteorder)
            elif isinstance(value, np.generic):  # NOTE: np.float64 is a float: test it first
                if value.dtype.kind not in _SCALAR_KINDS.get(kind, "") or value.itemsize != size:
                    raise LaunchError(f"{self._where(k)}: got {value.dtype.name} {value!r}")
                packed[8 * k:8 * k + size] = value.tobytes()
            elif isinstance(value, (bool, int, float)):
                raise LaunchError(f"{self._where(k)}: untyped Python {type(value).__name__} "
                                  f"{value!r}; pass a NumPy scalar (np.int64(n), np.float32(a)) "
                                  "so that the C type is explicit")
            else:
                raise TypeError(f"{self._where(k)}: Unsupported type {type(value)}")
        return packed, spans

    def __call__(self, grid: Any, block: Any, args: Any, *, shared_mem: int = 0,
                 **kwargs: Any) -> None:
        g = _dims(grid, _GRID_LIMITS, "grid")
        b = _dims(block, _BLOCK_LIMITS, "block")
        if b[0] * b[1] * b[2] > 1024:
            raise LaunchError(f"block {b}: over 1024 threads (CUDA: invalid configuration)")
        if shared_mem:
            raise LaunchError("dynamic shared memory is not emulated")
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"args must be a tuple, got {type(args).__name__}")
        if len(args) != len(self.params):
            raise LaunchError(f"{self.name}: {len(args)} arguments for {len(self.params)} "
                              "parameters")
        rec = _capture()
        if rec is None:
            self._run(g, b, args)
            return
        # NOTE: a launch on a capturing fake stream runs now and again on every replay of the
        # graph (see tests/fake_cupy/_graph); the arrays' buffers are its fixed addresses.
        operands = [a._a for a in args if hasattr(a, "_a")]
        rec.touch(operands)
        self._run(g, b, args)
        rec.add(self.name, lambda: self._run(g, b, args), [], operands)

    def _run(self, g: tuple[int, int, int], b: tuple[int, int, int], args: Any) -> None:
        packed, spans = self._pack(args)
        merged: list[list[int]] = []  # overlapping extents share one staged copy
        for lo, hi, writable in sorted(spans):
            if merged and lo < merged[-1][1] and lo < hi:
                merged[-1][1] = max(merged[-1][1], hi)
                merged[-1][2] |= writable
            else:
                merged.append([lo, hi, int(writable)])
        extents = (ctypes.c_ulonglong * max(1, 3 * len(merged)))(*(v for e in merged for v in e))
        cap = max_blocks()
        run = (min(g[0], cap) if cap else g[0], g[1], g[2])
        dims = (ctypes.c_uint * 6)(*run, *b)
        LAUNCHES[self.name] += 1
        BLOCKS_RUN[0] += run[0] * run[1] * run[2]
        slots = (ctypes.c_char * max(1, len(packed))).from_buffer(packed or bytearray(1))
        with _STREAM:
            error = self._launch(ctypes.addressof(dims), ctypes.addressof(slots),
                                 ctypes.addressof(extents), len(merged))
        if error:
            raise LaunchError(f"{self.name} (grid {g}, block {b}, emulated with grid {run}): "
                              f"{error.decode()}")
