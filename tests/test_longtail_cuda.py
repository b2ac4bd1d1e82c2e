"""``torch.accelerator`` and the ``torch.cuda`` functions programs call, against PyTorch.

Without CuPy (this machine's plain run, or CuPy hidden by monkeypatching) every answer and
error is a CPU build of PyTorch's, compared with the oracle; with CUDA (a GPU, or
``AUTOGRAD_GPU_FAKE_CUDA``) the same functions answer for the device.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.backends import cuda_support
from tests.misuse._catalogue import Case, check_case

HAVE_CUDA = cuda_support.is_available()


@pytest.fixture
def no_cupy(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run as on a machine without CuPy (PyTorch's CPU build is the oracle there)."""
    if torch.version.cuda is not None:
        pytest.skip("the oracle here is PyTorch's CPU build; this PyTorch is built with CUDA")
    monkeypatch.setattr(cuda_support, "_cupy", lambda: None)
    # NOTE: a CUDA device used by an earlier test (the stand-in) keeps its backend: forget it
    cached = [d for d in ag.device._cache.values() if d.type == "cuda"]
    kept = [d._backend for d in cached]
    for d in cached:
        object.__setattr__(d, "_backend", None)
    yield
    for d, b in zip(cached, kept):
        object.__setattr__(d, "_backend", b)


def _with_ctx(T: Any, arg: Any) -> Any:
    with T.cuda.device(arg):
        return 1


def _device_block(T: Any) -> Any:
    with T.device("cuda"):
        return T.empty(2)


def _warned(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return fn()


WITHOUT_CUDA: dict[str, Case] = {
    "cuda.is_available": lambda T, dev: T.cuda.is_available(),
    "cuda.device_count": lambda T, dev: T.cuda.device_count(),
    "cuda.manual_seed": lambda T, dev: T.cuda.manual_seed(0),
    "cuda.manual_seed_all": lambda T, dev: T.cuda.manual_seed_all(0),
    "cuda.seed": lambda T, dev: T.cuda.seed(),
    "cuda.seed_all": lambda T, dev: T.cuda.seed_all(),
    "cuda.empty_cache": lambda T, dev: T.cuda.empty_cache(),
    "cuda.synchronize": lambda T, dev: T.cuda.synchronize(),
    "cuda.get_device_name": lambda T, dev: T.cuda.get_device_name(),
    "cuda.get_device_name_0": lambda T, dev: T.cuda.get_device_name(0),
    "cuda.get_device_properties": lambda T, dev: T.cuda.get_device_properties(0),
    "cuda.get_device_capability": lambda T, dev: T.cuda.get_device_capability(),
    "cuda.is_bf16_supported": lambda T, dev: T.cuda.is_bf16_supported(),
    "cuda.is_tf32_supported": lambda T, dev: T.cuda.is_tf32_supported(),
    "cuda.current_device": lambda T, dev: T.cuda.current_device(),
    "cuda.set_device_cpu": lambda T, dev: T.cuda.set_device("cpu"),
    "cuda.is_initialized": lambda T, dev: T.cuda.is_initialized(),
    "cuda.init": lambda T, dev: T.cuda.init(),
    "cuda.memory_allocated": lambda T, dev: T.cuda.memory_allocated(),
    "cuda.max_memory_allocated": lambda T, dev: T.cuda.max_memory_allocated(),
    "cuda.memory_reserved": lambda T, dev: T.cuda.memory_reserved(),
    "cuda.max_memory_reserved": lambda T, dev: T.cuda.max_memory_reserved(),
    "cuda.mem_get_info": lambda T, dev: T.cuda.mem_get_info(),
    "cuda.get_rng_state": lambda T, dev: T.cuda.get_rng_state(),
    "cuda.get_rng_state_all": lambda T, dev: T.cuda.get_rng_state_all(),
    "cuda.set_rng_state": lambda T, dev: T.cuda.set_rng_state(T.zeros(2, dtype=T.uint8)),
    "cuda.initial_seed": lambda T, dev: T.cuda.initial_seed(),
    "cuda.get_arch_list": lambda T, dev: T.cuda.get_arch_list(),
    "cuda.ipc_collect": lambda T, dev: T.cuda.ipc_collect(),
    "cuda.current_stream": lambda T, dev: T.cuda.current_stream(),
    "cuda.Event": lambda T, dev: T.cuda.Event(enable_timing=True),
    "cuda.device_ctx": lambda T, dev: _with_ctx(T, 0),
    "cuda.device_ctx_cpu": lambda T, dev: _with_ctx(T, "cpu"),
    "cuda.device_ctx_negative": lambda T, dev: _with_ctx(T, -1),
    "cuda.FloatTensor": lambda T, dev: T.cuda.FloatTensor([1.0]),
    "cuda.LongTensor_isinstance": lambda T, dev: isinstance(T.zeros(2, dtype=T.long),
                                                            T.cuda.LongTensor),
    "to_cuda": lambda T, dev: T.zeros(2).to("cuda"),
    "cuda_method": lambda T, dev: T.zeros(2).cuda(),
    "factory_cuda": lambda T, dev: T.zeros(2, device="cuda"),
    "tensor_cuda": lambda T, dev: T.tensor([1.0], device="cuda:0"),
    "module_cuda": lambda T, dev: T.nn.Linear(2, 2).cuda(),
    "device_index": lambda T, dev: T.device(0),
    "device_block": lambda T, dev: _device_block(T),
    "accelerator.is_available": lambda T, dev: T.accelerator.is_available(),
    "accelerator.current_accelerator": lambda T, dev: T.accelerator.current_accelerator(),
    "accelerator.current_accelerator_checked": lambda T, dev: T.accelerator.current_accelerator(
        check_available=True),
    "accelerator.device_count": lambda T, dev: T.accelerator.device_count(),
    "accelerator.synchronize": lambda T, dev: T.accelerator.synchronize(),
    "accelerator.synchronize_0": lambda T, dev: T.accelerator.synchronize(0),
    "accelerator.synchronize_cpu": lambda T, dev: T.accelerator.synchronize("cpu"),
    "accelerator.current_device_index": lambda T, dev: T.accelerator.current_device_index(),
    "accelerator.set_device_index": lambda T, dev: T.accelerator.set_device_index(0),
    "accelerator.set_device_index_cuda": lambda T, dev: T.accelerator.set_device_index("cuda:0"),
    "accelerator.set_device_index_negative": lambda T, dev: T.accelerator.set_device_index(-1),
    "accelerator.device_index": lambda T, dev: T.accelerator.device_index(0).__enter__(),
    "accelerator.device_index_none": lambda T, dev: T.accelerator.device_index(None).__enter__(),
    "accelerator.memory_allocated": lambda T, dev: T.accelerator.memory_allocated(),
    "accelerator.memory_stats": lambda T, dev: T.accelerator.memory_stats(),
    "accelerator.empty_cache": lambda T, dev: T.accelerator.empty_cache(),
    "accelerator.current_device_idx": lambda T, dev: _warned(T.accelerator.current_device_idx),
}


@pytest.mark.parametrize("name", sorted(WITHOUT_CUDA))
def test_without_cupy_as_pytorchs_cpu_build(no_cupy: None, name: str) -> None:
    check_case(WITHOUT_CUDA[name], "cpu")


def test_without_cupy_the_error_keeps_the_install_hint(no_cupy: None) -> None:
    # NOTE: x.type('torch.cuda.FloatTensor') raises as x.cuda() does (PyTorch's CPU build says
    # "Cannot initialize CUDA without ATen_cuda library" there, a message about its own build).
    for attempt in (lambda: ag.ones(2).to("cuda"), lambda: ag.ones(2).type(ag.cuda.FloatTensor),
                    lambda: ag.ones(2).type("torch.cuda.FloatTensor")):
        with pytest.raises(AssertionError) as info:
            attempt()
        first, _, rest = str(info.value).partition("\n")
        assert first == "Torch not compiled with CUDA enabled"
        assert "CuPy is not installed" in rest and "pip install" in rest


def test_deprecated_accelerator_names_warn(no_cupy: None) -> None:
    for T in (torch, ag):
        with pytest.warns(FutureWarning, match="Use `current_device_index` instead"):
            with pytest.raises(RuntimeError):
                T.accelerator.current_device_idx()


def test_a_program_picks_the_cpu_as_pytorch_does(no_cupy: None) -> None:
    """The idiom of device-agnostic programs."""
    for T in (torch, ag):
        acc = T.accelerator.current_accelerator(check_available=True)
        dev = acc if acc is not None else T.device("cpu")
        dev2 = T.device("cuda" if T.cuda.is_available() else "cpu")
        model = T.nn.Linear(2, 1).to(dev)
        assert str(dev) == str(dev2) == "cpu" and model.weight.device.type == "cpu"


# ---- with CUDA (a GPU, or AUTOGRAD_GPU_FAKE_CUDA) ------------------------------------------

needs_cuda = pytest.mark.skipif(not HAVE_CUDA, reason="needs CUDA (or AUTOGRAD_GPU_FAKE_CUDA)")


@needs_cuda
def test_accelerator_is_cuda() -> None:
    acc = ag.accelerator
    assert acc.is_available() and acc.current_accelerator() == ag.device("cuda")
    assert acc.current_accelerator(check_available=True) == ag.device("cuda")
    assert acc.device_count() == ag.cuda.device_count() >= 1
    assert acc.current_device_index() == ag.cuda.current_device()
    acc.set_device_index("cuda:0")
    with acc.device_index(0):
        acc.synchronize()
    acc.synchronize("cuda:0")
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator cuda"):
        acc.synchronize("cpu")
    x = ag.ones(256, device="cuda")
    assert acc.memory_allocated() == ag.cuda.memory_allocated() > 0
    del x
    acc.empty_cache()


@needs_cuda
def test_cuda_queries_with_a_device() -> None:
    props = ag.cuda.get_device_properties(0)
    assert ag.cuda.get_device_name() == props.name and props.total_memory > 0
    assert ag.cuda.get_device_capability() == (props.major, props.minor)
    assert "name=" in repr(props)
    assert not ag.cuda.is_bf16_supported()
    ag.cuda.init()
    ag.ones(1, device="cuda")
    assert ag.cuda.is_initialized()
    ag.cuda.synchronize()
    ag.cuda.current_stream().synchronize()
    with ag.cuda.device(0):
        assert ag.cuda.current_device() == 0


@needs_cuda
def test_cuda_event_times_work() -> None:
    start, end = ag.cuda.Event(enable_timing=True), ag.cuda.Event(enable_timing=True)
    start.record()
    (ag.ones(64, 64, device="cuda") @ ag.ones(64, 64, device="cuda")).sum()
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0.0


@needs_cuda
def test_cuda_rng_state_round_trips() -> None:
    ag.cuda.manual_seed(3)
    state = ag.cuda.get_rng_state()
    a = ag.rand(4, device="cuda")
    ag.cuda.set_rng_state(state)
    assert ag.equal(a, ag.rand(4, device="cuda"))
    assert ag.cuda.initial_seed() == 3
    assert len(ag.cuda.get_rng_state_all()) == ag.cuda.device_count()
    ag.cuda.seed()
    assert ag.cuda.initial_seed() != 3


@needs_cuda
def test_reading_the_cuda_rng_state_leaves_the_stream() -> None:
    """As PyTorch's Philox offset: reading the state (a checkpoint's stash) changes no later
    draw, and draws after a read equal those of a stream never read."""
    ag.cuda.manual_seed(5)
    plain = [ag.rand(3, device="cuda"), ag.randn(5, device="cuda")]
    ag.cuda.manual_seed(5)
    ag.cuda.get_rng_state()
    first = ag.rand(3, device="cuda")
    ag.cuda.get_rng_state()
    assert ag.equal(first, plain[0]) and ag.equal(ag.randn(5, device="cuda"), plain[1])
    assert not ag.equal(plain[0], ag.rand(3, device="cuda"))  # NOTE: each draw moves on


@needs_cuda
def test_cuda_typed_tensors() -> None:
    x = ag.cuda.FloatTensor([1, 2])
    assert x.device.type == "cuda" and x.dtype is ag.float32
    assert isinstance(x, ag.cuda.FloatTensor) and not isinstance(x, ag.FloatTensor)
    assert x.type() == "torch.cuda.FloatTensor"
    assert ag.zeros(2).type(ag.cuda.LongTensor).type() == "torch.cuda.LongTensor"
    assert x.type(ag.DoubleTensor).device.type == "cpu"
    with pytest.raises(RuntimeError, match="legacy constructor expects device type: cuda"):
        ag.cuda.FloatTensor([1], device="cpu")


@needs_cuda
def test_meta_and_cuda() -> None:
    m = ag.ones(2, 3, device="cuda").to("meta")
    assert m.is_meta and m.shape == (2, 3)
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        m.to("cuda")
    with pytest.raises(RuntimeError, match="is not on the expected device"):
        m + ag.ones(2, 3, device="cuda")
