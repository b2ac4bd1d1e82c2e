"""A CPU emulator for our CUDA kernels (``kernels/*.cu``): a test tool, never a GPU.

``RawModule`` takes the same arguments as ``cupy.RawModule`` but compiles the CUDA C source for
the host with g++ (``_build``; ``prelude.h`` emulates the CUDA subset the kernels use: every GPU
thread is a fiber, ``__syncthreads`` and warp shuffles are barriers) and launches kernels with
CuPy's calling conventions plus checks CuPy does not make (``_launch``): argument count and C
types, launch limits, guard bytes around every array, divergent or mismatched barriers.

It plugs into the NumPy stand-in for CuPy (``tests/fake_cupy``): ``cupy_with_kernels`` makes a
``cupy`` module that is the fake with this ``RawModule``. ``AUTOGRAD_GPU_FAKE_CUDA=emulate``
selects it (``tests/conftest.py``), so the CuPy backend's kernel paths and
``tests/backends/test_cuda_kernels.py`` run on the CPU.

What a pass means: the kernels' logic is right (indexing, strides and broadcasting, reductions
and their splits, barriers, bounds, the launchers' argument lists). What it does not mean: that
NVRTC accepts the source (``.ci/compile_kernels.sh`` checks that with nvcc), that device math
rounds as the host's does, anything about speed, races between blocks, or the memory model.

Settings (environment): ``AUTOGRAD_GPU_EMULATOR_MAX_BLOCKS`` caps the grid's x size (default 4,
0 for none), ``AUTOGRAD_GPU_EMULATOR_CACHE`` is where compiled libraries are kept (see
``_build.cache_dir``).
"""

from __future__ import annotations

import ctypes
import functools
import types
from typing import Any, Callable

from ._build import CompileError, compiler
from ._launch import BLOCKS_RUN, LAUNCHES, POISON, LaunchError, RawKernel, RawModule, max_blocks

__all__ = ["CompileError", "LaunchError", "RawKernel", "RawModule", "available",
           "cupy_with_kernels", "summary", "unavailable_reason"]


def available() -> bool:
    """True when the emulator can run here (it needs g++)."""
    return compiler() is not None


def unavailable_reason() -> str:
    return "" if available() else "the CPU kernel emulator needs g++, which is not installed"


def _poisoned(make: Callable[..., Any]) -> Callable[..., Any]:
    """``make`` (``empty``/``empty_like``) with the new array's bytes set to 0xFF: NaN in every
    float type, so an output element a kernel never writes shows up as NaN."""

    @functools.wraps(make)
    def run(*args: Any, **kwargs: Any) -> Any:
        out = make(*args, **kwargs)
        if out.nbytes and (out.flags.c_contiguous or out.flags.f_contiguous):
            ctypes.memset(out.data.ptr, POISON, out.nbytes)
        return out

    return run


def cupy_with_kernels(fake: types.ModuleType) -> types.ModuleType:
    """A ``cupy`` module: ``fake`` (``tests.fake_cupy``'s) with ``RawModule`` run by this
    emulator and ``empty``/``empty_like`` poisoned. ``fake`` itself is left as it is.

    The result carries ``__autograd_gpu_kernel_emulator__ = True`` next to the fake's
    ``__autograd_gpu_fake__``: tests that need a real GPU still see a fake.
    """
    mod = types.ModuleType(fake.__name__, fake.__doc__)
    skip = {"__name__", "__doc__", "__getattr__", "__spec__", "__loader__"}
    mod.__dict__.update({k: v for k, v in vars(fake).items() if k not in skip})

    def lazy(name: str) -> Any:  # the fake makes NumPy's functions on first use; keep them
        value = getattr(fake, name)
        setattr(mod, name, value)
        return value

    mod.__getattr__ = lazy  # type: ignore[method-assign]
    mod.RawModule = RawModule  # type: ignore[attr-defined]
    mod.empty = _poisoned(fake.empty)  # type: ignore[attr-defined]
    mod.empty_like = _poisoned(fake.empty_like)  # type: ignore[attr-defined]
    mod.__autograd_gpu_kernel_emulator__ = True  # type: ignore[attr-defined]
    return mod


def summary() -> str:
    """One line on what ran: launches, kernels, blocks, the grid cap."""
    cap = max_blocks()
    return (f"kernel emulator: {sum(LAUNCHES.values())} launches of {len(LAUNCHES)} kernels, "
            f"{BLOCKS_RUN[0]} blocks run (grid x capped at {cap if cap else 'no cap'})")
