"""The fused primitives every backend offers (``backends/composite.py``), on each device's
backend, against PyTorch: the CPU's are these formulas, CUDA's are RawKernels with these as the
reference."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autograd_gpu as ag


def _backend(device: str):
    return ag.device(device if device == "cpu" else "cuda:0").backend


def _to(device: str, a: np.ndarray):
    return ag.tensor(a, device=device)._data


def _host(device: str, a) -> np.ndarray:
    return _backend(device).to_host(a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_rows_and_grad_match_torch(device: str, dtype: str) -> None:
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((7, 5)).astype(dtype) * 4
    target = np.array([0, 4, 2, -100, 1, 3, -100], dtype=np.int64)
    grad_rows = rng.standard_normal(7).astype(dtype)
    b = _backend(device)
    loss, lse = b.cross_entropy(_to(device, logits), _to(device, target), -100)
    gl = b.cross_entropy_backward(_to(device, logits), _to(device, target), lse,
                                  _to(device, grad_rows), -100)
    tl = torch.tensor(logits, requires_grad=True)
    ref = torch.nn.functional.cross_entropy(tl, torch.tensor(target), reduction="none")
    ref.backward(torch.tensor(grad_rows))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(_host(device, loss), ref.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(_host(device, lse), torch.logsumexp(tl, 1).detach().numpy(),
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(_host(device, gl), tl.grad.numpy(), rtol=tol, atol=tol)
    assert _host(device, gl)[3].tolist() == [0.0] * 5  # ignored row


def test_arg_reduce_takes_first_tie_and_nan_wins(device: str) -> None:
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, np.nan, 5.0, np.nan]], dtype=np.float32)
    b = _backend(device)
    for is_max, fn in ((True, torch.max), (False, torch.min)):
        values, idx = b.arg_reduce(_to(device, x), 1, is_max)
        ref = fn(torch.tensor(x), 1, keepdim=True)
        np.testing.assert_array_equal(_host(device, values), ref.values.numpy())
        np.testing.assert_array_equal(_host(device, idx), ref.indices.numpy())
        assert _host(device, idx).dtype == np.int64


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_activation_backwards_match_torch(device: str, approximate: str) -> None:
    x = np.linspace(-6, 6, 61, dtype=np.float64)
    g = np.cos(np.arange(61, dtype=np.float64))
    b = _backend(device)
    tx = torch.tensor(x, requires_grad=True)
    cases = {
        "gelu": (lambda: b.gelu_backward(_to(device, x), _to(device, g), approximate),
                 lambda t: torch.nn.functional.gelu(t, approximate=approximate)),
        "silu": (lambda: b.silu_backward(_to(device, x), _to(device, g)),
                 torch.nn.functional.silu),
        "leaky_relu": (lambda: b.leaky_relu_backward(_to(device, x), _to(device, g), 0.1),
                       lambda t: torch.nn.functional.leaky_relu(t, 0.1)),
    }
    for name, (ours, ref_fn) in cases.items():
        (ref,) = torch.autograd.grad(ref_fn(tx), tx, torch.tensor(g))
        np.testing.assert_allclose(_host(device, ours()), ref.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=name)
    out = np.tanh(x)
    np.testing.assert_allclose(_host(device, b.tanh_backward(_to(device, out), _to(device, g))),
                               g * (1 - out * out), rtol=1e-12)


def test_logsumexp_handles_infinite_rows(device: str) -> None:
    x = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [0.0, 0.0]], dtype=np.float32)
    out = _host(device, _backend(device).logsumexp(_to(device, x), (1,), False))
    np.testing.assert_array_equal(out, torch.logsumexp(torch.tensor(x), 1).numpy())
