"""The memory tracker (issue #5, parts 1 and 2): ``memory_allocated`` and friends on every device.

Figures are pinned by exact byte counts: on the CPU the tracker counts ``nbytes`` of each live
root buffer; on CUDA it counts CuPy pool blocks (512-byte multiples) and must agree with the pool's
``used_bytes()``. CUDA runs on a real GPU when present, and on the NumPy stand-in for CuPy with
``AUTOGRAD_GPU_FAKE_CUDA=1`` (whose pool rounds as CuPy's does).
"""

from __future__ import annotations

import gc
import sys
import types
from typing import Any

import pytest

import autograd_gpu as ag
from autograd_gpu import nn
from autograd_gpu.backends import cuda_support

cuda_only = pytest.mark.skipif(not cuda_support.is_available(),
                               reason="no CUDA device (real GPU or AUTOGRAD_GPU_FAKE_CUDA=1)")


def blk(nbytes: int, device: str) -> int:
    """What one buffer of ``nbytes`` costs on ``device``: exact on the CPU, 512-byte blocks on
    CUDA (CuPy's pool rounding, also PyTorch's)."""
    return nbytes if device == "cpu" else (nbytes + 511) // 512 * 512


def used(device: str) -> int:
    gc.collect()
    return ag.memory_allocated(device)


def mlp(sizes: list[int], device: str) -> Any:
    layers: list[Any] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1]).to(device)


# ---- rise and fall ----------------------------------------------------------------------------

def test_rises_and_falls_by_exact_bytes(device: str) -> None:
    base = used(device)
    x = ag.ones(1000, device=device)  # 4000 bytes
    assert used(device) - base == blk(4000, device)
    y = ag.zeros(3, 5, dtype=ag.float64, device=device)  # 120 bytes
    assert used(device) - base == blk(4000, device) + blk(120, device)
    del x
    assert used(device) - base == blk(120, device)
    del y
    assert used(device) == base


def test_views_count_once(device: str) -> None:
    base = used(device)
    x = ag.randn(10, 100, device=device)
    one = blk(4000, device)
    views = [x[2:5], x.t(), x.reshape(1000), x.view(100, 10), x[0], x.unsqueeze(0), x.detach(),
             x.data, *x.chunk(2)]
    assert used(device) - base == one
    del x
    assert used(device) - base == one  # the views keep the buffer alive, once
    del views
    assert used(device) == base


def test_peak_survives_frees_until_reset(device: str) -> None:
    gc.collect()  # NOTE: before the reset: garbage freed later would leave the peak above base
    ag.reset_peak_memory_stats(device)
    base = used(device)
    assert ag.max_memory_allocated(device) == base
    a = ag.ones(2048, device=device)
    b = ag.ones(1024, device=device)
    top = base + blk(8192, device) + blk(4096, device)
    del a
    assert used(device) == base + blk(4096, device)
    assert ag.max_memory_allocated(device) == top
    c = ag.ones(10, device=device)  # below the old peak: the peak stays
    assert ag.max_memory_allocated(device) == top
    ag.reset_peak_memory_stats(device)
    assert ag.max_memory_allocated(device) == used(device) == base + blk(4096, device) + \
        blk(40, device)
    del b, c


# ---- autograd: saved tensors, gradients, no leak ----------------------------------------------

def test_backward_leaves_baseline_plus_gradients(device: str) -> None:
    model = mlp([20, 32, 16, 4], device)
    x = ag.randn(8, 20, device=device)
    target = ag.randint(0, 4, (8,), device=device)
    base = used(device)
    loss = nn.functional.cross_entropy(model(x), target)
    assert used(device) > base  # the graph keeps activations
    loss.backward()
    del loss
    grads = sum(blk(p.grad.nbytes, device) for p in model.parameters())
    assert used(device) - base == grads


def test_saved_activations_are_released_after_backward(device: str) -> None:
    w = ag.randn(64, 64, device=device, requires_grad=True)
    x = ag.randn(32, 64, device=device)
    base = used(device)
    out = (x @ w).relu().sum()  # keeps relu's output (32 x 64 float32) for backward
    assert used(device) - base == blk(32 * 64 * 4, device) + blk(4, device)
    out.backward()
    assert used(device) - base == blk(4, device) + blk(64 * 64 * 4, device)  # out and w.grad


def test_no_leak_over_1000_training_steps(device: str) -> None:
    model = mlp([16, 32, 32, 4], device)
    opt = ag.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = ag.randn(8, 16, device=device)
    target = ag.randint(0, 4, (8,), device=device)

    def step() -> None:
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), target).backward()
        opt.step()

    for _ in range(3):
        step()
    after_warmup = used(device)
    for _ in range(1000):
        step()
    assert used(device) == after_warmup


def test_seeds_exercise_grad_mode_keeps_saved_activations_no_grad_only_output(
        device: str) -> None:
    """MLP 784-256-256-10 at batch 64: in grad mode the forward keeps the two ReLU outputs (each
    saved once, by ReLU and by the next Linear) and the logits; the input and the weights were
    already held. Under no_grad and inference_mode only the logits are kept."""
    batch = 64
    model = mlp([784, 256, 256, 10], device)
    x = ag.randn(batch, 784, device=device)
    hidden, logits = blk(batch * 256 * 4, device), blk(batch * 10 * 4, device)
    base = used(device)
    out = model(x)
    assert used(device) - base == 2 * hidden + logits
    del out
    assert used(device) == base  # the graph died with its output
    with ag.no_grad():
        out = model(x)
    assert used(device) - base == logits
    del out
    with ag.inference_mode():
        out = model(x)
    assert used(device) - base == logits
    del out
    assert used(device) == base


def test_inplace_on_a_saved_input_counts_the_kept_copy() -> None:
    a = ag.randn(100, requires_grad=True)
    b = a * 2
    c = a * 3
    before = used("cpu")
    b.mul_(c)  # MulBackward0 needs the old b: the node keeps a copy, b's buffer takes the result
    assert used("cpu") - before == 400
    b.sum().backward()
    assert ag.allclose(a.grad, 12 * a.detach())


def test_cpu_index_is_the_cpu() -> None:
    base = used("cpu")
    x = ag.ones(10, device="cpu:0")
    assert used("cpu") - base == 40
    del x


def test_set_enabled_false_stops_counting_new_cpu_buffers() -> None:
    assert ag.memory.is_enabled()
    base = used("cpu")
    try:
        ag.memory.set_enabled(False)
        x = ag.ones(100)
        assert used("cpu") == base
    finally:
        ag.memory.set_enabled(True)
    y = ag.ones(100)
    assert used("cpu") - base == 400
    del x, y


# ---- the API -----------------------------------------------------------------------------------

KEYS = {f"{k}.all.{s}" for k in ("allocated_bytes", "allocation")
        for s in ("current", "peak", "allocated", "freed")} | {"num_alloc_retries", "num_ooms"}


def test_memory_stats_keys_and_figures(device: str) -> None:
    stats = ag.memory_stats(device)
    assert KEYS <= set(stats)
    if device == "cuda":
        assert {"reserved_bytes.all.current", "reserved_bytes.all.peak"} <= set(stats)
        assert stats["reserved_bytes.all.current"] >= stats["allocated_bytes.all.current"]
    assert all(isinstance(v, int) and v >= 0 for v in stats.values())
    before = ag.memory_stats(device)
    x = ag.ones(256, device=device)
    after = ag.memory_stats(device)
    assert after["allocated_bytes.all.current"] - before["allocated_bytes.all.current"] == \
        blk(1024, device)
    assert after["allocated_bytes.all.allocated"] >= before["allocated_bytes.all.allocated"] + \
        blk(1024, device)
    assert after["allocation.all.current"] == before["allocation.all.current"] + 1
    assert stats["allocated_bytes.all.current"] == \
        stats["allocated_bytes.all.allocated"] - stats["allocated_bytes.all.freed"]
    del x


def test_memory_summary_is_a_table(device: str) -> None:
    x = ag.ones(1000, device=device)
    text = ag.memory_summary(device)
    assert "Allocated memory" in text and "Allocations" in text and "Peak" in text
    assert f"device {device}" in text
    if device == "cuda":
        assert "Reserved memory" in text
    del x


@cuda_only
def test_cuda_namespace_defaults_to_the_current_cuda_device() -> None:
    x = ag.ones(1000, device="cuda")
    assert ag.cuda.memory_allocated() == ag.memory_allocated("cuda") == \
        ag.memory_allocated(0) == ag.cuda.memory_allocated(ag.device("cuda", 0))
    assert ag.cuda.max_memory_allocated() >= ag.cuda.memory_allocated()
    assert ag.cuda.memory_stats()["allocated_bytes.all.current"] == ag.cuda.memory_allocated()
    assert ag.cuda.memory_reserved() >= ag.cuda.memory_allocated()
    assert ag.cuda.max_memory_reserved() >= ag.cuda.memory_reserved()
    free, total = ag.cuda.mem_get_info()
    assert 0 <= free <= total
    del x


@cuda_only
def test_cuda_counts_pool_blocks_and_agrees_with_the_pool() -> None:
    import cupy as cp

    pool = cp.get_default_memory_pool()
    gc.collect()
    base, pool_base = ag.cuda.memory_allocated(), pool.used_bytes()
    xs = [ag.ones(n, dtype=ag.uint8, device="cuda") for n in (1, 511, 512, 513, 5000)]
    expected = 512 + 512 + 512 + 1024 + 5120
    assert ag.cuda.memory_allocated() - base == expected
    assert pool.used_bytes() - pool_base == expected
    peak = ag.cuda.max_memory_allocated()
    del xs
    gc.collect()
    assert ag.cuda.memory_allocated() == base and pool.used_bytes() == pool_base
    assert ag.cuda.max_memory_allocated() == peak
    ag.cuda.empty_cache()
    assert ag.cuda.memory_allocated() == base  # live tensors stay
    ag.cuda.reset_peak_memory_stats()
    assert ag.cuda.max_memory_allocated() == base


def test_cuda_figures_are_zero_in_a_process_without_cuda_tensors(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # NOTE: as PyTorch's before CUDA is initialised: zeros, no error, no CuPy import.
    monkeypatch.delitem(sys.modules, "autograd_gpu.backends.cupy_backend", raising=False)
    assert ag.cuda.memory_allocated() == 0
    assert ag.cuda.max_memory_allocated() == 0
    assert ag.cuda.memory_reserved() == 0 and ag.cuda.max_memory_reserved() == 0
    stats = ag.cuda.memory_stats()
    assert KEYS <= set(stats) and not any(stats.values())
    ag.cuda.reset_peak_memory_stats()
    ag.cuda.empty_cache()
    assert "Allocated memory" in ag.cuda.memory_summary()


# ---- device-level figures (NVML) ---------------------------------------------------------------

def test_device_memory_info_is_absent_without_pynvml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    assert ag.cuda.device_memory_info() is None


def _fake_nvml(fail_init: bool = False) -> types.ModuleType:
    nv = types.ModuleType("pynvml")
    calls: list[str] = []

    def init() -> None:
        calls.append("init")
        if fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    nv.nvmlInit = init  # type: ignore[attr-defined]
    nv.nvmlShutdown = lambda: calls.append("shutdown")  # type: ignore[attr-defined]
    nv.nvmlDeviceGetHandleByIndex = lambda i: ("handle", i)  # type: ignore[attr-defined]
    nv.nvmlDeviceGetHandleByPciBusId = lambda b: ("handle", 0)  # type: ignore[attr-defined]
    nv.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(  # type: ignore[attr-defined]
        total=80 << 30, used=1 << 30, free=79 << 30)
    nv.nvmlDeviceGetUtilizationRates = lambda h: types.SimpleNamespace(  # type: ignore[attr-defined]
        gpu=42, memory=7)
    nv.nvmlDeviceGetName = lambda h: b"NVIDIA H100 80GB HBM3"  # type: ignore[attr-defined]
    nv.calls = calls  # type: ignore[attr-defined]
    return nv


def test_device_memory_info_from_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    nv = _fake_nvml()
    monkeypatch.setitem(sys.modules, "pynvml", nv)
    info = ag.cuda.device_memory_info(0)
    assert info == {"index": 0, "name": "NVIDIA H100 80GB HBM3", "total": 80 << 30,
                    "used": 1 << 30, "free": 79 << 30, "utilization_gpu": 42,
                    "utilization_memory": 7}
    assert nv.calls == ["init", "shutdown"]  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="Expected a cuda device"):
        ag.cuda.device_memory_info("cpu")


def test_device_memory_info_is_absent_without_a_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_nvml(fail_init=True))
    assert ag.cuda.device_memory_info() is None


def _real_nvml() -> bool:
    cp = cuda_support._cupy()
    if cp is None or getattr(cp, "__autograd_gpu_fake__", False) or not cuda_support.is_available():
        return False
    try:
        import pynvml  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.skipif(not _real_nvml(), reason="needs a real GPU and pynvml (nvidia-ml-py)")
def test_device_memory_info_on_the_gpu() -> None:
    x = ag.ones(1 << 20, device="cuda")
    info = ag.cuda.device_memory_info()
    assert info is not None
    assert 0 < info["used"] <= info["total"] and info["free"] <= info["total"]
    assert 0 <= info["utilization_gpu"] <= 100 and info["name"]
    del x
