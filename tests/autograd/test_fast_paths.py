"""Issue #18's dispatch fast paths give exactly what the general paths give.

- ``tensor * tensor`` / ``tensor + tensor`` enter ``_binary`` directly; ``mul``/``add`` take the
  general argument handling: same values, dtypes, grad_fn, saved tensors and gradients.
- ``x.sum()`` of a float tensor skips the general argument work: same as ``sum(x, dim=all)``
  apart from PyTorch's node name, and as torch.
- a gradient reduced over leading dims only (a bias's) is one reduction whose result owns its
  buffer, so the leaf's ``.grad`` takes it without a copy; the keepdims path stays for the rest.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.ops.util import reduce_grad


def _pair(device: str, dtype: str) -> tuple[ag.Tensor, ag.Tensor]:
    rng = np.random.default_rng(0)
    a = ag.tensor(rng.standard_normal((3, 4)), dtype=getattr(ag, dtype), device=device)
    b = ag.tensor(rng.standard_normal((3, 4)), dtype=getattr(ag, dtype), device=device)
    return a.requires_grad_(), b.requires_grad_()


@pytest.mark.parametrize("op", ["mul", "add"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_operator_entry_is_the_function(device: str, op: str, dtype: str) -> None:
    a, b = _pair(device, dtype)
    fast = a * b if op == "mul" else a + b
    slow = getattr(ag, op)(a, b)
    assert type(fast.grad_fn).__name__ == type(slow.grad_fn).__name__
    assert fast.dtype is slow.dtype and fast.shape == slow.shape
    np.testing.assert_array_equal(fast.detach().cpu().numpy(), slow.detach().cpu().numpy())
    if op == "mul":  # the saved factors are the inputs (PyTorch's order: other, self)
        for f, s in zip(fast.grad_fn.saved_tensors, slow.grad_fn.saved_tensors):
            assert f._data is s._data
        assert fast.grad_fn.saved_tensors[0]._data is b._data
    (g_fast,) = ag.autograd.grad(fast.sum(), a)
    (g_slow,) = ag.autograd.grad(slow.sum(), a)
    np.testing.assert_array_equal(g_fast.cpu().numpy(), g_slow.cpu().numpy())


def test_operator_entry_keeps_subclasses_and_errors(device: str) -> None:
    p = ag.nn.Parameter(ag.ones(2, device=device))
    t = ag.full((2,), 3.0, device=device)
    assert type(p * t).__name__ == "Tensor" and (p * t).grad_fn.name() == "MulBackward0"
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        ag.ones(2, device=device) + ag.ones(3, device=device)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
def test_full_sum_matches_general_and_torch(device: str, dtype: str) -> None:
    x = np.random.default_rng(1).standard_normal((2, 3, 5)) * 3
    ours = ag.tensor(x, device=device).to(getattr(ag, dtype))
    ref = torch.tensor(x).to(getattr(torch, dtype))
    fast, general = ours.sum(), ag.sum(ours, dim=(0, 1, 2))
    assert fast.dtype is general.dtype and str(fast.dtype) == str(ref.sum().dtype)
    np.testing.assert_allclose(fast.cpu().numpy(), ref.sum().numpy(), rtol=1e-6)
    np.testing.assert_array_equal(fast.cpu().numpy(), general.cpu().numpy())
    if dtype in ("float32", "float64"):
        y = ours.requires_grad_()
        assert y.sum().grad_fn.name() == "SumBackward0" == ref.requires_grad_().sum().grad_fn.name()
        assert y.sum(keepdim=True).shape == ref.sum(dim=(0, 1, 2), keepdim=True).shape


@pytest.mark.parametrize("shape,target", [((4, 3), (3,)), ((2, 4, 3), (3,)), ((2, 4, 3), (4, 3)),
                                          ((4, 3), (1, 3)), ((2, 4, 3), (4, 1)), ((4, 3), ()),
                                          ((4, 3), (4, 3))])
def test_reduce_grad_lead_only_matches_keepdims(shape: tuple[int, ...],
                                                 target: tuple[int, ...]) -> None:
    g = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    out = reduce_grad(g, target)
    lead = g.ndim - len(target)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(target)
                                      if s == 1 and g.shape[lead + i] != 1)
    ref = g.sum(axis=dims, keepdims=True).reshape(target) if dims else g
    assert np.shape(out) == target
    np.testing.assert_array_equal(out, ref)
    if target and lead and all(s != 1 for s in target):
        assert out.base is None  # owns its buffer: .grad can take it


def test_bias_grad_taken_without_copy() -> None:
    lin = ag.nn.Linear(4, 3)
    lin(ag.ones(5, 4)).sum().backward()
    assert lin.bias.grad._data.base is None and lin.weight.grad._data.base is None
    ref = torch.nn.Linear(4, 3)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(lin.weight.detach().numpy()))
        ref.bias.copy_(torch.tensor(lin.bias.detach().numpy()))
    ref(torch.ones(5, 4)).sum().backward()
    np.testing.assert_allclose(lin.bias.grad.numpy(), ref.bias.grad.numpy())


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("targets", ["valid", "ignored", "ignore_in_range"])
def test_nll_loss_fast_path_matches_general(device: str, monkeypatch: pytest.MonkeyPatch,
                                            reduction: str, dtype: str, targets: str) -> None:
    """cross_entropy's common case (no weights, every target a class) against the general
    path (forced) and torch: loss and input gradient bit for bit (zeros' sign aside)."""
    from autograd_gpu.ops import nn_ops

    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 5)) * 4
    t = rng.integers(0, 5, 7)
    ignore = -100
    if targets == "ignored":
        t[2] = -100
    elif targets == "ignore_in_range":
        ignore = 1

    def run(force_general: bool) -> tuple[np.ndarray, np.ndarray]:
        nonlocal taken
        if force_general:
            monkeypatch.setattr(nn_ops.NllLoss, "_forward_fast", lambda *a: None)
        xt = ag.tensor(x, dtype=getattr(ag, dtype), device=device, requires_grad=True)
        loss = ag.nn.functional.cross_entropy(xt, ag.tensor(t, device=device),
                                              ignore_index=ignore, reduction=reduction)
        taken.append(loss.grad_fn.fast)
        loss.backward()
        monkeypatch.undo()
        return loss.detach().cpu().numpy(), xt.grad.cpu().numpy()

    taken: list[bool] = []
    (fast_loss, fast_grad), (slow_loss, slow_grad) = run(False), run(True)
    assert taken == [targets == "valid", False]
    np.testing.assert_array_equal(fast_loss, slow_loss)
    np.testing.assert_array_equal(fast_grad, slow_grad)
    xr = torch.tensor(x).to(getattr(torch, dtype)).requires_grad_()
    ref = torch.nn.functional.cross_entropy(xr, torch.tensor(t), ignore_index=ignore,
                                            reduction=reduction)
    ref.backward()
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(fast_loss, ref.detach().numpy(), rtol=tol)
    np.testing.assert_allclose(fast_grad, xr.grad.numpy(), rtol=tol, atol=tol)


def test_nll_loss_out_of_range_target_still_raises(device: str) -> None:
    x = ag.zeros(3, 4, device=device)
    with pytest.raises(IndexError, match="Target 4 is out of bounds."):
        ag.nn.functional.nll_loss(x, ag.tensor([0, 4, 1], device=device))


def test_weight_grads_taken_without_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A linear layer's gradients (the weight's made column-major, then transposed back) become
    ``.grad`` without a copy, as in PyTorch."""
    from autograd_gpu.backends.numpy_backend import NumpyBackend

    copies = []
    real = NumpyBackend.copy
    monkeypatch.setattr(NumpyBackend, "copy", staticmethod(lambda x: copies.append(x) or real(x)))
    net = ag.nn.Sequential(ag.nn.Linear(4, 3), ag.nn.ReLU(), ag.nn.Linear(3, 2))
    ag.nn.functional.cross_entropy(net(ag.ones(5, 4)), ag.tensor([0, 1, 1, 0, 1])).backward()
    assert copies == []
    assert all(p.grad._data.base is None for p in net.parameters())


@pytest.mark.parametrize("order", ["view_first", "view_last"])
def test_taken_gradients_never_alias(device: str, order: str) -> None:
    """Two leaves receiving the same buffer (one through a transpose) get separate ``.grad``s."""
    w = ag.ones(3, 3, device=device, requires_grad=True)
    b = ag.ones(3, 3, device=device, requires_grad=True)
    y = w.t() + b if order == "view_first" else b + w.t()
    (y * ag.arange(9.0, device=device).reshape(3, 3)).sum().backward()
    expect_b = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(w.grad.cpu().numpy(), expect_b.T)
    with ag.no_grad():
        w.grad.zero_()
    np.testing.assert_array_equal(b.grad.cpu().numpy(), expect_b)


@pytest.mark.parametrize("case", ["rows", "dupes_negative", "int32", "key2d_x3d", "strided_x",
                                  "empty_key", "key0d", "key_transposed"])
def test_take_rows_matches_general_index(device: str, monkeypatch: pytest.MonkeyPatch,
                                         case: str) -> None:
    """``x[index_tensor]``'s take along dim 0 against the general indexing path (forced) and
    torch: values, layout, dtype, node and gradients (repeated indices add up)."""
    from autograd_gpu.functions import index as index_mod

    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 3, 2) if case == "key2d_x3d" else (6, 4))
    k = {"rows": [4, 0, 5], "dupes_negative": [1, -1, 1, -6, 1], "int32": [2, 3],
         "key2d_x3d": [[0, 5], [5, 2]], "strided_x": [1, 2], "empty_key": [],
         "key0d": 3, "key_transposed": [[0, 1], [2, 3]]}[case]
    kdtype = "int32" if case == "int32" else "int64"

    def run(general: bool) -> tuple[Any, ...]:
        if general:
            monkeypatch.setattr(index_mod, "_take_rows", lambda t, key: None)
        xt = ag.tensor(x, device=device, requires_grad=True)
        src = xt.t() if case == "strided_x" else xt
        key = ag.tensor(k, dtype=getattr(ag, kdtype), device=device)
        out = src[key.t() if case == "key_transposed" else key]
        weights = ag.arange(float(out.numel()), device=device).reshape(out.shape)
        (out * weights).sum().backward()
        monkeypatch.undo()
        return (out.detach().cpu().numpy(), out.stride(), out.dtype, out.grad_fn.name(),
                len(out.grad_fn.next_functions), xt.grad.cpu().numpy())

    fast, general = run(False), run(True)
    np.testing.assert_array_equal(fast[0], general[0])
    assert fast[1:5] == general[1:5]
    np.testing.assert_array_equal(fast[5], general[5])
    xr = torch.tensor(x, requires_grad=True)
    kr = torch.tensor(k, dtype=getattr(torch, kdtype))
    ref = (xr.t() if case == "strided_x" else xr)[kr.t() if case == "key_transposed" else kr]
    np.testing.assert_array_equal(fast[0], ref.detach().numpy())
    assert fast[3] == ref.grad_fn.name()
    assert fast[1] == ref.stride() or not ref.numel()  # NOTE: NumPy gives empty arrays 0 strides
    (ref * torch.arange(float(ref.numel())).reshape(ref.shape)).sum().backward()
    np.testing.assert_allclose(fast[5], xr.grad.numpy(), rtol=1e-15)


def test_take_rows_out_of_range_raises_as_general(device: str) -> None:
    with pytest.raises(IndexError, match="index 6 is out of bounds for dimension 0 with size 6"):
        ag.zeros(6, 2, device=device)[ag.tensor([0, 6], device=device)]


def test_relu_signed_zero_and_nan_as_torch() -> None:
    x = np.array([-0.0, 0.0, -3.0, 2.0, np.nan, -np.inf, np.inf], np.float32)
    ours = ag.relu(ag.tensor(x)).numpy()
    ref = torch.relu(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(ours, ref)
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(ref))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32"])
@pytest.mark.parametrize("layout", ["c", "transposed", "0-d"])
def test_numpy_relu_paths_are_compositions(dtype: str, layout: str) -> None:
    """NumPy's relu (maximum against zeros) and relu_backward (bits and-ed with a mask) give
    Composite's maximum(0, x) and where(out <= 0, 0, grad) bit for bit: -0.0, NaN, inf."""
    from autograd_gpu.backends.composite import Composite
    from autograd_gpu.backends.numpy_backend import numpy_backend as b

    rng = np.random.default_rng(4)
    x = (rng.standard_normal((6, 5)) * 3).astype(dtype)
    g = rng.standard_normal((6, 5)).astype(dtype)
    if dtype != "int32":
        x.flat[:5] = [np.nan, -0.0, -np.inf, 0.0, np.inf]
        g.flat[2:5] = [np.inf, np.nan, -np.inf]
    if layout == "transposed":
        x, g = x.T, g.T
    elif layout == "0-d":
        x, g = x[0, 1].copy().reshape(()), g[0, 1].copy().reshape(())
    out, want = b.relu(x), Composite.relu(b, x)
    assert out.dtype == want.dtype and out.shape == want.shape
    assert out.tobytes() == want.tobytes()
    back, want = b.relu_backward(out, g), Composite.relu_backward(b, out, g)
    assert back.dtype == want.dtype and back.shape == want.shape
    assert back.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8"])
def test_out_of_range_one_reduction_matches_both_bounds(dtype: str) -> None:
    """From 0, a signed index is checked with one unsigned maximum: the same first offender."""
    from autograd_gpu.backends.numpy_backend import numpy_backend as b

    info = np.iinfo(dtype)
    cases = [[0, 1, 2], [0, 3, 2], [2, -1, 3], [int(info.min), 1], [int(info.max)], [], [0]]
    for idx in cases:
        if any(v < info.min for v in idx):
            continue
        a = np.array(idx, dtype=dtype)
        for hi in (0, 3, 4):
            flat = a.reshape(-1)
            bad = [int(v) for v in flat if not 0 <= v < hi]
            assert b.out_of_range(a, 0, hi) == (bad[0] if bad else None)
            assert b.out_of_range(a[::-1], 0, hi) == (bad[-1] if bad else None)
