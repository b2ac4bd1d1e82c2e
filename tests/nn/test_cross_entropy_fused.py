"""cross_entropy with label smoothing as one node (``ops/cross_entropy.py``, issue #18): the
same loss, gradient and grad_fn name as the composition bit for bit, the composition wherever
the node's conditions fail, double backward through the recomputed composition, and no more
memory kept for backward."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.nn import _losses
from autograd_gpu.ops.cross_entropy import FUSE_BELOW, SmoothedCrossEntropy

F = ag.nn.functional


def _run(fused: bool, monkeypatch: pytest.MonkeyPatch, x: np.ndarray, t: np.ndarray,
         device: str, **kw: Any) -> tuple[Any, np.ndarray, np.ndarray, bool]:
    monkeypatch.setattr(_losses, "FUSED", fused)
    xt = ag.tensor(x, device=device, requires_grad=True)
    loss = F.cross_entropy(xt, ag.tensor(t, device=device), **kw)
    took = isinstance(loss.grad_fn, SmoothedCrossEntropy)
    name = loss.grad_fn.name()
    loss.backward()
    return name, loss.detach().cpu().numpy(), xt.grad.cpu().numpy(), took


@pytest.mark.parametrize("shape", [(64, 10), (1, 3), (7, 129), (300, 2)])
@pytest.mark.parametrize("smoothing", [0.1, 0.37, 1.0])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_is_the_composition_bit_for_bit(device: str, monkeypatch: pytest.MonkeyPatch,
                                              shape: tuple[int, int], smoothing: float,
                                              reduction: str, dtype: str) -> None:
    rng = np.random.default_rng(shape[0] * shape[1])
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    t = rng.integers(0, shape[1], shape[0])
    kw = {"reduction": reduction, "label_smoothing": smoothing}
    fused, slow = (_run(f, monkeypatch, x, t, device, **kw) for f in (True, False))
    assert fused[3] and not slow[3]
    assert fused[0] == slow[0] == "AddBackward0"
    assert fused[1].dtype == slow[1].dtype and fused[1].shape == slow[1].shape == ()
    np.testing.assert_array_equal(fused[1].view(f"u{x.itemsize}"), slow[1].view(f"u{x.itemsize}"))
    np.testing.assert_array_equal(fused[2].view(f"u{x.itemsize}"), slow[2].view(f"u{x.itemsize}"))
    xr = torch.tensor(x, requires_grad=True)
    ref = torch.nn.functional.cross_entropy(xr, torch.tensor(t), **kw)
    ref.backward()
    tol = 2e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(fused[1], ref.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(fused[2], xr.grad.numpy(), rtol=10 * tol, atol=tol)


CASES: dict[str, tuple[tuple[int, ...], dict[str, Any]]] = {
    "ignored target": ((6, 4), {"ignore_index": -7}),  # target[0] set to -7 below
    "ignore_index a class": ((6, 4), {"ignore_index": 2}),
    "weight": ((6, 4), {"weight": [0.5, 1.0, 2.0, 0.25]}),
    "reduction none": ((6, 4), {"reduction": "none"}),
    "unbatched": ((4,), {}),
    "spatial": ((2, 4, 3), {}),
    "float16": ((6, 4), {"dtype": "float16"}),
    "large": ((FUSE_BELOW // 4 + 1, 4), {}),
    "no smoothing": ((6, 4), {"label_smoothing": 0.0}),
    "saved tensor hooks": ((6, 4), {"hooks": True}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_other_cases_take_the_composition(device: str, case: str) -> None:
    shape, kw = CASES[case]
    kw = dict(kw)
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape)
    t = rng.integers(0, 4, shape[:1] + shape[2:]) if len(shape) > 1 else np.array(1)
    if case == "ignored target":
        t[0] = -7
    dtype = kw.pop("dtype", "float64")
    hooks = kw.pop("hooks", False)
    kw.setdefault("label_smoothing", 0.2)
    results = []
    for T in (ag, torch):
        xt = T.tensor(x, dtype=getattr(T, dtype), requires_grad=True,
                      device=device if T is ag else "cpu")
        args = {k: T.tensor(v, dtype=getattr(T, dtype), device=xt.device) if k == "weight"
                else v for k, v in kw.items()}
        tt = T.tensor(t, device=xt.device)
        if hooks:
            with T.autograd.graph.saved_tensors_hooks(lambda a: a, lambda a: a):
                loss = T.nn.functional.cross_entropy(xt, tt, **args)
        else:
            loss = T.nn.functional.cross_entropy(xt, tt, **args)
        if T is ag:
            assert not isinstance(loss.grad_fn, SmoothedCrossEntropy)
        results.append((loss.grad_fn.name(), loss.detach().cpu().float().numpy()))
        loss.sum().backward()
        results[-1] += (xt.grad.cpu().float().numpy(),)
    assert results[0][0] == results[1][0]
    tol = 2e-3 if dtype == "float16" else 1e-12
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=tol, atol=tol)
    np.testing.assert_allclose(results[0][2], results[1][2], rtol=tol, atol=tol)


def test_out_of_range_target_raises_as_the_composition(device: str) -> None:
    x = ag.zeros(3, 4, device=device, requires_grad=True)
    with pytest.raises(IndexError, match="Target 4 is out of bounds."):
        F.cross_entropy(x, ag.tensor([0, 4, 1], device=device), label_smoothing=0.1)


def test_double_backward_is_the_compositions(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 3))
    t = ag.tensor([0, 2, 1, 1, 0], device=device)
    out = []
    for fused in (True, False):
        monkeypatch.setattr(_losses, "FUSED", fused)
        xt = ag.tensor(x, device=device, requires_grad=True)
        loss = F.cross_entropy(xt * 1.5, t, label_smoothing=0.3)
        assert isinstance(loss.grad_fn, SmoothedCrossEntropy) is fused
        (g,) = ag.autograd.grad(loss, xt, create_graph=True)
        (g * g).sum().backward()
        out.append((g.detach().cpu().numpy(), xt.grad.cpu().numpy()))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    xt = ag.tensor(x, device=device, requires_grad=True)
    monkeypatch.setattr(_losses, "FUSED", True)
    assert ag.autograd.gradgradcheck(
        lambda a: F.cross_entropy(a, t, label_smoothing=0.3, reduction="sum"), (xt,))


def test_graph_is_freed_and_retained_as_the_compositions(device: str) -> None:
    xt = ag.randn(4, 3, device=device, requires_grad=True)
    t = ag.tensor([0, 1, 2, 0], device=device)
    loss = F.cross_entropy(xt, t, label_smoothing=0.1)
    loss.backward(retain_graph=True)
    loss.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()
    np.testing.assert_allclose(xt.grad.cpu().numpy(), 2 * ag.autograd.grad(
        F.cross_entropy(xt, t, label_smoothing=0.1), xt)[0].cpu().numpy(), rtol=1e-6)


def test_keeps_no_more_memory_than_the_composition(monkeypatch: pytest.MonkeyPatch) -> None:
    """What backward keeps once the logits are dropped: the node holds the logits, the
    composition the log-probabilities (and a few 0-d totals)."""
    x = np.random.default_rng(0).standard_normal((256, 16)).astype(np.float32)
    t = ag.tensor(np.arange(256) % 16)
    w = ag.tensor(x, requires_grad=True)
    kept = []
    for fused in (True, False):
        monkeypatch.setattr(_losses, "FUSED", fused)
        before = ag.memory_allocated()
        logits = w * 2.0
        loss = F.cross_entropy(logits, t, label_smoothing=0.1)
        del logits
        kept.append(ag.memory_allocated() - before)
        del loss
        assert ag.memory_allocated() == before
    assert kept[0] <= kept[1], kept
    assert kept[0] >= x.nbytes  # the logits are kept, and counted


def test_logits_changed_in_place_before_backward_raise(device: str) -> None:
    """The node saved the logits (the documented difference from the composition)."""
    w = ag.randn(4, 3, device=device, requires_grad=True)
    z = w * 2
    loss = F.cross_entropy(z, ag.tensor([0, 1, 2, 0], device=device), label_smoothing=0.1)
    assert isinstance(loss.grad_fn, SmoothedCrossEntropy)
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
