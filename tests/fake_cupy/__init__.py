"""A NumPy stand-in for CuPy, to run autograd_gpu's CUDA code path on a machine without a GPU.

``install()`` puts fake ``cupy``, ``cupy.cuda`` (``runtime``, ``memory``), ``cupy.random``,
``cupy.lib.stride_tricks``, ``cupy.cuda.graph``, ``cupyx`` and ``cupyx.scipy.special`` in
``sys.modules``. They
implement the part of CuPy's API that autograd_gpu uses, on NumPy, with CuPy's strictness: a
device array type of their own that refuses NumPy arrays as operands and implicit conversion to
NumPy (see ``_array``), one device named "Fake CUDA device (NumPy)", a memory pool that counts
bytes, and no kernels (``RawModule``/``RawKernel`` raise when used, so run with
``AUTOGRAD_GPU_KERNELS=0``), unless ``install(emulate_kernels=True)`` plugs in the CPU kernel
emulator (``tests/kernel_emulator``) for ``RawModule``.

Results on the fake say that the CUDA plumbing (devices, transfers, dtypes, views, the backend
interface) is right; they say nothing about speed or CuPy's own numerics, nor, without the
emulator, about kernels (with it, see ``tests/kernel_emulator`` for what a pass means).

Streams compute synchronously, but capture as CUDA graphs do (``_graph``): work on a capturing
stream is recorded and replayed by ``Graph.launch`` on the same buffers, memory is left as it
was before the capture, and what CUDA refuses during a capture (host reads and writes,
data-dependent shapes, synchronizations) raises ``cudaErrorStreamCaptureUnsupported``.

Known gaps against real CuPy: type promotion is NumPy 2's (NEP 50) whatever CuPy version is
mimicked; NumPy functions CuPy lacks mostly work here; ``from_dlpack`` of host objects is refused;
events hold host times and never wait; streams never run concurrently, so a missing
``wait_event``/``synchronize`` between streams goes unnoticed; there is one device. Capture:
``cupy.random`` draws are not recorded (a replay leaves their output as the capture made it,
which matches cuRAND in a graph only in that the numbers repeat); work on a stream other than
the capturing one runs eagerly (CUDA would raise for the legacy stream in global mode); the
capture mode is kept but not enforced; a buffer freed during a capture is never lent again
inside it (a GPU's pool may reuse it, a difference of addresses, not of results); host-to-device
copies are refused as pageable-memory copies, also from pinned memory, which CUDA could capture.

Usage (``tests/conftest.py`` does this when ``AUTOGRAD_GPU_FAKE_CUDA=1``, and with
``emulate_kernels=True`` when ``AUTOGRAD_GPU_FAKE_CUDA=emulate``)::

    from tests import fake_cupy
    fake_cupy.install()   # before autograd_gpu touches cupy
"""

from __future__ import annotations

import importlib.util
import sys

HEADER = "fake CUDA: NumPy stand-in for CuPy; kernels off"
EMULATED_HEADER = ("fake CUDA: NumPy stand-in for CuPy; our kernels ON, emulated on the CPU by "
                   "tests/kernel_emulator (g++); not a GPU")

_NAMES = ("cupy", "cupy.cuda", "cupy.cuda.runtime", "cupy.cuda.memory", "cupy.cuda.graph",
          "cupy.random", "cupy.lib",
          "cupy.lib.stride_tricks", "cupyx", "cupyx.scipy", "cupyx.scipy.special")


class RealGPUError(RuntimeError):
    """The fake was asked for on a machine with real CuPy and a CUDA device."""


def real_gpu_count() -> int:
    """CUDA devices real CuPy sees here (0 without CuPy, a driver or a device)."""
    mod = sys.modules.get("cupy")
    if mod is not None and getattr(mod, "__autograd_gpu_fake__", False):
        return 0  # already installed; the check ran then
    if mod is None and importlib.util.find_spec("cupy") is None:
        return 0
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001  (no driver, no device, a broken install: no real GPU)
        return 0


def install(emulate_kernels: bool = False) -> None:
    """Register the fake modules in ``sys.modules``, replacing a real CuPy that has no device.

    With ``emulate_kernels``, ``cupy`` is the fake with ``RawModule`` run on the CPU by
    ``tests/kernel_emulator`` (it needs g++; see ``kernel_emulator.available()``), so that
    autograd_gpu's own kernels run (``AUTOGRAD_GPU_KERNELS=1``); else kernels refuse to run.

    Raises:
        RealGPUError: real CuPy is importable and sees a device: the fake would hide real GPU
            results, so it refuses (unset AUTOGRAD_GPU_FAKE_CUDA to test on the GPU).
    """
    n = real_gpu_count()
    if n:
        raise RealGPUError(
            f"AUTOGRAD_GPU_FAKE_CUDA=1, but this machine has CuPy and {n} CUDA device(s): the "
            "NumPy stand-in for CuPy would hide the real GPU. Unset AUTOGRAD_GPU_FAKE_CUDA to run "
            "the CUDA tests on the GPU.")
    if "autograd_gpu.backends.cupy_backend" in sys.modules:
        raise RuntimeError("install the fake CuPy before autograd_gpu's CuPy backend is imported")
    for name in list(sys.modules):
        if name.split(".")[0] in ("cupy", "cupyx", "cupy_backends") and \
                not getattr(sys.modules[name], "__autograd_gpu_fake__", False):
            del sys.modules[name]  # a real CuPy without a device
    from . import _cupy, _cupyx, _random

    mods = {"cupy": _cupy, "cupy.cuda": _cupy.cuda, "cupy.cuda.runtime": _cupy.cuda.runtime,
            "cupy.cuda.memory": _cupy.cuda.memory, "cupy.cuda.graph": _cupy.cuda.graph,
            "cupy.random": _random.random,
            "cupy.lib": _cupy.lib, "cupy.lib.stride_tricks": _cupy.stride_tricks,
            "cupyx": _cupyx.cupyx, "cupyx.scipy": _cupyx.scipy,
            "cupyx.scipy.special": _cupyx.special}
    assert set(mods) == set(_NAMES)
    for name, mod in mods.items():
        mod.__autograd_gpu_fake__ = True  # type: ignore[attr-defined]
        sys.modules[name] = mod  # type: ignore[assignment]
    if emulate_kernels:
        from tests import kernel_emulator

        sys.modules["cupy"] = kernel_emulator.cupy_with_kernels(_cupy)


def installed() -> bool:
    """True when ``cupy`` in this process is the fake."""
    return bool(getattr(sys.modules.get("cupy"), "__autograd_gpu_fake__", False))


def kernels_emulated() -> bool:
    """True when ``cupy`` in this process is the fake with emulated kernels."""
    return bool(getattr(sys.modules.get("cupy"), "__autograd_gpu_kernel_emulator__", False))
