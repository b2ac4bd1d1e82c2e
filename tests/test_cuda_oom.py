"""Out-of-memory on a real GPU: a clear ``OutOfMemoryError`` (a ``RuntimeError``) naming the bytes
asked for and held, after which the program frees memory and goes on. Runs whenever a real GPU
is present (never on the NumPy stand-in for CuPy, which cannot run out of device memory)."""

from __future__ import annotations

import re

import pytest

import autograd_gpu as ag
from autograd_gpu.backends import cuda_support


def _real_gpu() -> bool:
    cp = cuda_support._cupy()
    return cp is not None and not getattr(cp, "__autograd_gpu_fake__", False) and \
        cuda_support.is_available()


pytestmark = pytest.mark.skipif(not _real_gpu(), reason="no CUDA GPU (real CuPy and device)")


def test_oom_names_bytes_and_the_program_goes_on() -> None:
    import cupy as cp

    free, total = cp.cuda.runtime.memGetInfo()
    keep = ag.ones(1 << 20, device="cuda")  # 4 MiB held while the big request fails
    n = (2 * total) // 4  # float32 elements: twice the device's memory
    with pytest.raises(ag.OutOfMemoryError) as info:
        ag.empty(n, device="cuda")
    msg = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert ag.cuda.OutOfMemoryError is ag.OutOfMemoryError
    assert msg.startswith("CUDA out of memory. Tried to allocate ")
    assert f"({4 * n} bytes)" in msg
    held = int(re.search(r"(\d+) bytes are allocated by autograd_gpu", msg).group(1))
    assert held >= keep.nbytes
    del keep
    x = ag.ones(1000, device="cuda")  # memory is usable again
    assert x.sum().item() == 1000.0


def test_oom_inside_an_op_surfaces_the_same_error() -> None:
    import cupy as cp

    _, total = cp.cuda.runtime.memGetInfo()
    side = int((total // 4) ** 0.5) + 1024  # one side*side float32 result exceeds the device
    a = ag.ones(side, 1, device="cuda")
    b = ag.ones(1, side, device="cuda")
    with pytest.raises(ag.OutOfMemoryError, match="CUDA out of memory"):
        a * b  # the broadcast result alone is larger than the device
    assert (a + 1).sum().item() == 2.0 * side
