"""Device rules on CUDA, against PyTorch's: cross-device errors, ``numpy()``, gradients on their
tensor's device, moves between devices with gradients flowing back, modules and optimizers on
CUDA, DLPack, ``autograd_gpu.cuda``, seeding, save/load and out-of-memory.

Runs whenever CUDA is available: on a GPU (real CuPy), or on the NumPy stand-in for CuPy with
``AUTOGRAD_GPU_FAKE_CUDA=1`` (plumbing only, never GPU results). The last test runs everywhere:
without CuPy, asking for CUDA says how to install it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.backends import cuda_support

CUDA = cuda_support.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA: needs CuPy and a GPU (or "
                                "AUTOGRAD_GPU_FAKE_CUDA=1 for the NumPy stand-in)")
MIXED = ("Expected all tensors to be on the same device, but found at least two devices, "
         "cuda:0 and cpu!")
_RANDOM = sys.modules["autograd_gpu.random"]


def _real_gpu() -> bool:
    cp = cuda_support._cupy()
    return CUDA and not getattr(cp, "__autograd_gpu_fake__", False)


def _on(t: ag.Tensor, kind: str) -> ag.Tensor:
    """``t``, after checking it lives on ``kind`` and holds that device's array type."""
    assert t.device.type == kind
    assert isinstance(t._data, t.device.backend.ndarray), type(t._data)
    return t


def _host(t: ag.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


# ---- cross-device ops and numpy() --------------------------------------------------------------

@needs_cuda
@pytest.mark.parametrize("op", [
    lambda a, b: a + b, lambda a, b: b * a, lambda a, b: ag.maximum(a, b),
    lambda a, b: ag.cat([a, b]), lambda a, b: ag.where(b > 0, a, b), lambda a, b: a @ b,
])
def test_mixing_devices_raises_pytorch_error(op: Any) -> None:
    cuda = ag.tensor([3.0, 4.0], device="cuda")
    cpu = ag.tensor([1.0, 2.0])
    for a, b in ((cuda, cpu), (cpu, cuda)):
        with pytest.raises(RuntimeError) as info:
            op(a, b)
        assert str(info.value) == MIXED


@needs_cuda
def test_numpy_of_a_cuda_tensor_raises_pytorch_type_error() -> None:
    x = ag.ones(2, device="cuda")
    with pytest.raises(TypeError) as info:
        x.numpy()
    assert str(info.value) == ("can't convert cuda:0 device type tensor to numpy. Use "
                               "Tensor.cpu() to copy the tensor to host memory first.")
    with pytest.raises(RuntimeError, match="Use tensor.detach"):
        x.requires_grad_().numpy()  # PyTorch checks requires_grad first
    np.testing.assert_array_equal(x.detach().cpu().numpy(), [1.0, 1.0])


@needs_cuda
def test_numpy_asarray_of_a_cuda_tensor_refuses_as_torch_does() -> None:
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        np.asarray(ag.ones(2, device="cuda"))


@needs_cuda
def test_zero_dim_cpu_tensors_join_cuda_ops_as_scalars() -> None:
    # NOTE: PyTorch treats a 0-d CPU tensor as a scalar in an op on another device.
    x = ag.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    s = ag.tensor(3.0, requires_grad=True)
    out = _on(s * x + ag.tensor(1.0), "cuda")
    np.testing.assert_array_equal(_host(out), [4.0, 7.0])
    out.sum().backward()
    assert _on(x.grad, "cuda") is not None and s.grad.device.type == "cpu"
    np.testing.assert_array_equal(_host(x.grad), [3.0, 3.0])
    assert s.grad.item() == 3.0  # the gradient comes back to the scalar's own device
    with pytest.raises(RuntimeError, match="same device"):
        ag.tensor([1.0], device="cuda") + ag.tensor([1.0])  # 1-d CPU tensors do not join


# ---- gradients live on their tensor's device ---------------------------------------------------

@needs_cuda
def test_gradients_are_on_the_tensor_device() -> None:
    x = ag.tensor([1.0, -2.0, 3.0], device="cuda", requires_grad=True)
    w = ag.tensor([[0.5], [1.0], [2.0]], device="cuda", requires_grad=True)
    loss = ((x.relu() * 2) @ w).sum() + (x * x).mean()
    loss.backward()
    np.testing.assert_allclose(_host(_on(x.grad, "cuda")), [1.0 + 2 / 3, -4 / 3, 4.0 + 2.0])
    np.testing.assert_allclose(_host(_on(w.grad, "cuda")), [[2.0], [0.0], [6.0]])
    (g,) = ag.autograd.grad((x * x).sum(), x)
    np.testing.assert_allclose(_host(_on(g, "cuda")), [2.0, -4.0, 6.0])


@needs_cuda
def test_backward_with_a_gradient_on_another_device_raises() -> None:
    y = ag.ones(3, device="cuda", requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="invalid gradient at index 0 - expected device cuda:0 "
                                           "but got cpu"):
        y.backward(ag.ones(3))


@needs_cuda
def test_grad_assignment_refuses_another_device() -> None:
    x = ag.ones(2, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient located on device"):
        x.grad = ag.ones(2)
    x.grad = ag.ones(2, device="cuda")
    _on(x.grad, "cuda")


# ---- moving between devices --------------------------------------------------------------------

@needs_cuda
@pytest.mark.parametrize("dtype", [ag.float32, ag.float64, ag.int64, ag.bool])
def test_round_trips_keep_values_and_dtype(dtype: Any) -> None:
    x = ag.tensor([[1, 0, 3], [4, 5, 0]], dtype=dtype)
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):  # as torch.tensor(t)
        copied = ag.tensor(x, device="cuda")
    for there in (x.cuda(), x.to("cuda"), x.to(ag.device("cuda", 0)), x.to(device="cuda:0"),
                  copied, ag.as_tensor(x, device="cuda")):
        _on(there, "cuda")
        assert there.dtype is dtype and there.shape == x.shape
        back = _on(there.cpu(), "cpu")
        np.testing.assert_array_equal(back.numpy(), x.numpy())
    c = x.cuda()
    assert c.cuda() is c and c.to("cuda:0") is c and x.cpu() is x  # nothing to do: no copy
    assert c.to("cuda", copy=True) is not c
    assert _on(c.to("cuda", ag.float64), "cuda").dtype is ag.float64


@needs_cuda
def test_gradient_flows_back_across_devices() -> None:
    x = ag.tensor([1.0, 2.0, 3.0], requires_grad=True)  # CPU leaf
    y = x.cuda()
    assert y.grad_fn.name() == "ToCopyBackward0" and y.requires_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(_on(x.grad, "cpu").numpy(), [2.0, 4.0, 6.0])

    z = ag.tensor([1.0, 2.0], device="cuda", requires_grad=True)  # CUDA leaf
    h = z.cpu()
    assert h.grad_fn.name() == "ToCopyBackward0"
    (h * 3).sum().backward()
    np.testing.assert_allclose(_host(_on(z.grad, "cuda")), [3.0, 3.0])

    w = ag.tensor([0.5, 1.5], requires_grad=True)
    (w.cuda().cpu().cuda() ** 2).sum().backward()  # several hops
    np.testing.assert_allclose(_on(w.grad, "cpu").numpy(), [1.0, 3.0])


@needs_cuda
def test_factories_and_host_data_land_on_cuda() -> None:
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    made = [ag.tensor(arr, device="cuda"), ag.as_tensor(arr, device="cuda"),
            ag.from_numpy(arr).cuda(), ag.zeros(2, 3, device="cuda"), ag.ones(2, device="cuda"),
            ag.full((2,), 1.5, device="cuda"), ag.arange(4, device="cuda"),
            ag.linspace(0, 1, 5, device="cuda"), ag.eye(3, device="cuda"),
            ag.empty(2, device="cuda"), ag.zeros_like(ag.ones(2, device="cuda")),
            ag.rand(3, device="cuda"), ag.randn(3, device="cuda"),
            ag.randint(0, 5, (4,), device="cuda"), ag.randperm(5, device="cuda")]
    for t in made:
        _on(t, "cuda")
    np.testing.assert_array_equal(_host(made[0]), arr)
    arr[0, 0] = 100.0  # the CUDA copies do not alias host memory
    assert made[0][0, 0].item() == 0.0 and made[1][0, 0].item() == 0.0
    assert sorted(ag.randperm(5, device="cuda").tolist()) == [0, 1, 2, 3, 4]


@needs_cuda
def test_indexing_a_cuda_tensor_with_host_indices_and_values() -> None:
    x = ag.arange(6, dtype=ag.float32, device="cuda")
    for key in (ag.tensor([0, 4]), [0, 4], np.array([0, 4])):
        np.testing.assert_array_equal(_host(_on(x[key], "cuda")), [0.0, 4.0])
    x[ag.tensor([1, 2])] = ag.tensor(-1.0)  # CPU index and CPU 0-d value, as in PyTorch
    x[3:5] = ag.tensor([7.0, 8.0])
    np.testing.assert_array_equal(_host(_on(x, "cuda")), [0.0, -1.0, -1.0, 7.0, 8.0, 5.0])


@needs_cuda
def test_views_share_memory_on_cuda() -> None:
    x = ag.zeros(2, 3, device="cuda")
    v = x.view(6)
    v[1] = 5.0
    assert x[0, 1].item() == 5.0
    assert x[1:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert x.t().contiguous().is_contiguous() and not x.t().is_contiguous()
    assert repr(x.sum(0, keepdim=True)) == "tensor([[0., 5., 0.]], device='cuda:0')"


# ---- modules and optimizers ----------------------------------------------------------------------

def _mlp() -> ag.nn.Module:
    ag.manual_seed(0)
    return ag.nn.Sequential(ag.nn.Linear(4, 8), ag.nn.ReLU(), ag.nn.Linear(8, 3))


@needs_cuda
def test_module_to_cuda_moves_parameters_and_grads_land_there() -> None:
    model = _mlp()
    params = list(model.parameters())
    assert model.to("cuda") is model
    assert all(a is b for a, b in zip(model.parameters(), params))  # the same objects, moved
    for p in params:
        _on(p, "cuda")
        assert isinstance(p, ag.nn.Parameter) and p.requires_grad
    x = ag.randn(5, 4, device="cuda")
    ag.nn.functional.cross_entropy(model(x), ag.tensor([0, 1, 2, 0, 1], device="cuda")).backward()
    for p in params:
        _on(p.grad, "cuda")
    model.cpu()
    for p in params:
        _on(p, "cpu")
        _on(p.grad, "cpu")  # grads move with their parameters


@needs_cuda
@pytest.mark.parametrize("name,kw", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                     ("Adam", {"lr": 0.01}), ("AdamW", {"lr": 0.01}),
                                     ("RMSprop", {"lr": 0.01}), ("Adagrad", {"lr": 0.1})])
def test_optimizer_steps_on_cuda_match_the_cpu(name: str, kw: dict[str, Any]) -> None:
    x = ag.randn(16, 4)
    y = ag.randint(0, 3, (16,))
    weights = []
    for dev in ("cpu", "cuda"):
        model = _mlp().to(dev)
        opt = getattr(ag.optim, name)(model.parameters(), **kw)
        for _ in range(3):
            opt.zero_grad()
            loss = ag.nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
            loss.backward()
            opt.step()
        for p in model.parameters():
            _on(p, dev)
            for v in opt.state[p].values():
                if isinstance(v, ag.Tensor) and v.ndim:
                    _on(v, dev)  # per-parameter buffers (momentum, moments) live with it
        weights.append([_host(p) for p in model.parameters()])
    for a, b in zip(*weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


# ---- DLPack --------------------------------------------------------------------------------------

def test_from_dlpack_shares_memory_with_torch_cpu_tensors() -> None:
    t = torch.arange(4, dtype=torch.float32)
    ours = ag.from_dlpack(t)
    _on(ours, "cpu")
    t[0] = 10.0
    assert ours[0].item() == 10.0
    back = torch.from_dlpack(ours)
    ours[1] = 20.0
    assert back[1].item() == 20.0 and back.dtype == torch.float32


@needs_cuda
def test_from_dlpack_of_a_cuda_tensor_shares_its_memory() -> None:
    x = ag.arange(4, dtype=ag.float32, device="cuda")
    assert x.__dlpack_device__() == (2, 0)
    y = _on(ag.from_dlpack(x), "cuda")
    y[0] = 7.0
    assert x[0].item() == 7.0


@pytest.mark.skipif(not (_real_gpu() and torch.cuda.is_available()),
                    reason="needs a real GPU with CuPy and PyTorch built with CUDA")
def test_dlpack_with_torch_cuda_tensors() -> None:
    t = torch.arange(4, dtype=torch.float32, device="cuda")
    ours = _on(ag.from_dlpack(t), "cuda")
    t[0] = 10.0
    torch.cuda.synchronize()
    assert ours[0].item() == 10.0
    back = torch.from_dlpack(ours)
    assert back.device.type == "cuda"
    ours[1] = 20.0
    ag.cuda.synchronize()
    assert back[1].item() == 20.0


# ---- autograd_gpu.cuda and seeding ---------------------------------------------------------------

@needs_cuda
def test_cuda_module_functions() -> None:
    assert ag.cuda.is_available() and ag.cuda.device_count() >= 1
    cur = ag.cuda.current_device()
    assert isinstance(cur, int) and 0 <= cur < ag.cuda.device_count()
    for spec in (cur, f"cuda:{cur}", ag.device("cuda", cur)):
        ag.cuda.set_device(spec)
        assert ag.cuda.current_device() == cur
    name = ag.cuda.get_device_name()
    assert isinstance(name, str) and name
    assert ag.cuda.get_device_name(cur) == ag.cuda.get_device_name(f"cuda:{cur}") == \
        ag.cuda.get_device_name(ag.device("cuda", cur)) == name
    if not _real_gpu():
        assert name == "Fake CUDA device (NumPy)"
    ag.cuda.synchronize()
    ag.cuda.synchronize("cuda")
    assert ag.zeros(1, device="cuda").device == ag.device("cuda", cur)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ag.zeros(1, device=f"cuda:{ag.cuda.device_count()}")


@needs_cuda
def test_cuda_manual_seed_reproduces_streams() -> None:
    ag.cuda.manual_seed(3)
    a = ag.randn(8, device="cuda")
    ag.cuda.manual_seed(3)
    b = ag.randn(8, device="cuda")
    ag.manual_seed(3)
    c = ag.randn(8, device="cuda")
    assert a.tolist() == b.tolist() == c.tolist()
    assert ag.randn(8, device="cuda").tolist() != c.tolist()
    g = ag.Generator("cuda").manual_seed(5)
    state = g.get_state()
    first = ag.rand(4, device="cuda", generator=g).tolist()
    g.set_state(state)
    assert ag.rand(4, device="cuda", generator=g).tolist() == first
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        ag.rand(2, device="cuda", generator=ag.Generator("cpu"))


@needs_cuda
def test_manual_seed_before_first_cuda_use_seeds_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    def fresh_draw() -> list[float]:
        # NOTE: a process whose CUDA generator does not exist yet (as before any CUDA use).
        monkeypatch.setattr(_RANDOM, "_default",
                            {d: g for d, g in _RANDOM._default.items() if d.type == "cpu"})
        ag.manual_seed(11)
        return ag.randn(4, device="cuda").tolist()

    ag.manual_seed(11)
    assert fresh_draw() == fresh_draw() == ag.randn(4, device="cuda",
                                                    generator=_gen_seeded(11)).tolist()


def _gen_seeded(seed: int) -> ag.Generator:
    return ag.Generator("cuda").manual_seed(seed)


# ---- save / load ---------------------------------------------------------------------------------

@needs_cuda
def test_save_and_load_cuda_tensors(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.pt"
    x = ag.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    obj = {"x": x, "cpu": ag.tensor([3]), "model": _mlp().cuda().state_dict()}
    ag.save(obj, path)
    out = ag.load(path)
    _on(out["x"], "cuda")
    _on(out["cpu"], "cpu")
    assert out["x"].requires_grad and out["x"].tolist() == [1.0, 2.0]
    for k, v in out["model"].items():
        _on(v, "cuda")
        np.testing.assert_array_equal(_host(v), _host(obj["model"][k]))
    for ml in ("cpu", ag.device("cpu"), {"cuda:0": "cpu"}):
        moved = ag.load(path, map_location=ml)
        _on(moved["x"], "cpu")
        assert all(v.device.type == "cpu" for v in moved["model"].values())
    on_cuda = ag.load(path, map_location="cuda")
    _on(on_cuda["cpu"], "cuda")
    model = _mlp()
    model.load_state_dict(out["model"])  # CUDA tensors into CPU parameters: copied across
    for p in model.parameters():
        _on(p, "cpu")


# ---- memory ----------------------------------------------------------------------------------

@needs_cuda
def test_out_of_memory_is_clear_and_the_program_goes_on() -> None:
    import cupy as cp

    pool = cp.get_default_memory_pool()
    keep = ag.ones(1024, device="cuda")
    old = pool.get_limit()
    pool.free_all_blocks()  # else the pool would free its cache and fit the request
    pool.set_limit(size=pool.total_bytes() + (1 << 20))  # 1 MiB of headroom
    try:
        with pytest.raises(ag.OutOfMemoryError) as info:
            ag.empty(1 << 22, device="cuda")  # 16 MiB
    finally:
        pool.set_limit(size=old)
    msg = str(info.value)
    assert isinstance(info.value, RuntimeError) and ag.cuda.OutOfMemoryError is ag.OutOfMemoryError
    assert msg.startswith(f"CUDA out of memory. Tried to allocate 16.00 MiB ({4 << 22} bytes).")
    assert ag.ones(1 << 22, device="cuda").sum().item() == float(1 << 22)
    del keep


# ---- without CuPy ----------------------------------------------------------------------------

def test_without_cupy_cuda_requests_say_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda_support, "_cupy", lambda: None)
    assert not ag.cuda.is_available() and ag.cuda.device_count() == 0
    for attempt in (lambda: ag.zeros(2, device="cuda"), lambda: ag.ones(2).to("cuda"),
                    lambda: ag.cuda.current_device(), lambda: ag.cuda.get_device_name()):
        with pytest.raises(AssertionError) as info:  # NOTE: a CPU build of PyTorch's type
            attempt()
        msg = str(info.value)
        assert msg.startswith("Torch not compiled with CUDA enabled\n")
        assert "CuPy is not installed" in msg and "pip install" in msg
        assert "cuda12" in msg and "cuda13" in msg
