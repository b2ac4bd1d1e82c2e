"""nn.functional activations, linear, dropout, one_hot and pad against the torch oracle: values,
first and second derivatives, grad_fn names and error messages."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import both, same_error
from tests.nn._util import grads_of, second_grads, t

RNG = np.random.default_rng(0)
X = np.concatenate([RNG.standard_normal(14) * 3, [0.0, -0.0, 25.0, -25.0, 1e-3, -1e-3]])
X = X.reshape(4, 5)

ACTIVATIONS = {
    "relu": lambda F, x: F.relu(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "elu": lambda F, x: F.elu(x, 0.7),
    "softplus": lambda F, x: F.softplus(x),
    "softplus_beta": lambda F, x: F.softplus(x, beta=2.0, threshold=5.0),
    "sigmoid": lambda F, x: F.sigmoid(x),
    "tanh": lambda F, x: F.tanh(x),
    "softmax": lambda F, x: F.softmax(x, dim=1),
    "log_softmax": lambda F, x: F.log_softmax(x, dim=0),
}


def _F(T: Any) -> Any:
    return T.nn.functional


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_values_and_grads(name: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, X, grad=True)
        out = ACTIVATIONS[name](_F(T), x)
        return out, grads_of(out, [x])[0], out.grad_fn.name()

    both(run, device, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_second_derivative(name: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, X, grad=True)
        return second_grads(ACTIVATIONS[name](_F(T), x), x)

    both(run, device, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_float32(name: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, X, grad=True, dtype=T.float32)
        out = ACTIVATIONS[name](_F(T), x)
        assert out.dtype == T.float32
        return out, grads_of(out, [x])[0]

    both(run, device, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_softplus_never_overflows(beta: float, device: str) -> None:
    # NOTE: threshold above the inputs, so the log1p(exp) branch is taken even at x = 1000.
    x = ag.tensor([1000.0, -1000.0, 80.0, 0.0], device=device, requires_grad=True)
    out = ag.nn.functional.softplus(x, beta=beta, threshold=1e6)
    out.sum().backward()
    want = [1000.0, 0.0, 80.0 + math.log1p(math.exp(-80 * beta)) / beta, math.log(2) / beta]
    np.testing.assert_allclose(out.detach().cpu().numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(x.grad.cpu().numpy(), [1.0, 0.0, 1.0, 0.5], atol=1e-6)


def test_inplace_activations(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        F = _F(T)
        outs = []
        for fn in (lambda y: F.relu(y, inplace=True), lambda y: F.leaky_relu(y, 0.1, True),
                   lambda y: F.elu(y, 1.0, True), lambda y: F.silu(y, inplace=True)):
            x = t(T, dev, X, grad=True)
            y = x * 1.0
            out = fn(y)
            assert out is y
            outs += [out, grads_of(out, [x])[0]]
        return outs

    both(run, device)


def test_softmax_implicit_dim_warns(device: str) -> None:
    x = ag.ones(2, 3, device=device)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = ag.nn.functional.softmax(x)
    np.testing.assert_allclose(out.cpu().numpy(), np.full((2, 3), 1 / 3), rtol=1e-6)


def test_gelu_rejects_unknown_approximation(device: str) -> None:
    same_error(lambda T, dev: _F(T).gelu(T.ones(2, device=dev), approximate="fast"), device)


# ---- linear ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (4,), (2, 1, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(shape: tuple[int, ...], bias: bool, device: str) -> None:
    w = RNG.standard_normal((5, 4))
    b = RNG.standard_normal(5)
    x = RNG.standard_normal(shape)

    def run(T: Any, dev: str) -> Any:
        xt, wt = t(T, dev, x, grad=True), t(T, dev, w, grad=True)
        bt = t(T, dev, b, grad=True) if bias else None
        out = _F(T).linear(xt, wt, bt)
        return out, grads_of(out, [xt, wt] + ([bt] if bias else [])), out.grad_fn.name()

    both(run, device, rtol=1e-10, atol=1e-12)


def test_linear_shape_error(device: str) -> None:
    same_error(lambda T, dev: _F(T).linear(T.ones(2, 3, device=dev), T.ones(4, 5, device=dev)),
               device)


# ---- dropout ---------------------------------------------------------------------------------

def test_dropout_statistics_and_gradient(device: str) -> None:
    """PyTorch's two dropouts: ``x * noise`` on the CPU (MulBackward0, keeps the float noise),
    the fused native dropout on CUDA (NativeDropoutBackward0, keeps a bool mask: a quarter of
    the bytes for float32)."""
    x = ag.ones(200, 500, device=device, requires_grad=True)
    saved: list[Any] = []
    with ag.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        out = ag.nn.functional.dropout(x, p=0.3)
    if device == "cuda":
        assert out.grad_fn.name() == "NativeDropoutBackward0"
        assert [t.dtype for t in saved] == [ag.bool] and saved[0].shape == x.shape
    else:
        assert out.grad_fn.name() == "MulBackward0" and [t.dtype for t in saved] == [ag.float32]
    kept = out.detach().cpu().numpy() != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(out.detach().cpu().numpy()[kept], 1 / 0.7, rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), kept / 0.7, rtol=1e-6)


def test_dropout_identity_cases(device: str) -> None:
    F = ag.nn.functional
    x = ag.randn(3, 4, device=device, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    zero = F.dropout(x, 1.0)
    assert zero.grad_fn.name() == "MulBackward0" and not zero.detach().cpu().numpy().any()


@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_rejects_bad_p(p: float, device: str) -> None:
    same_error(lambda T, dev: _F(T).dropout(T.ones(2, device=dev), p), device)
    same_error(lambda T, dev: T.nn.Dropout(p), device)


# ---- one_hot and pad -------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda T, dev: _F(T).one_hot(T.tensor([0, 2, 1], device=dev)),
    lambda T, dev: _F(T).one_hot(T.tensor([[0, 2], [1, 1]], device=dev), 4),
    lambda T, dev: _F(T).one_hot(T.tensor([], dtype=T.int64, device=dev), 3),
])
def test_one_hot(case: Any, device: str) -> None:
    out = both(case, device)
    assert out.dtype == ag.int64


@pytest.mark.parametrize("case", [
    lambda T, dev: _F(T).one_hot(T.tensor([0.0, 2.0], device=dev)),
    lambda T, dev: _F(T).one_hot(T.tensor([0, 2], device=dev), 2),
    lambda T, dev: _F(T).one_hot(T.tensor([-1], device=dev)),
    lambda T, dev: _F(T).one_hot(T.tensor([], dtype=T.int64, device=dev)),
])
def test_one_hot_errors(case: Any, device: str) -> None:
    same_error(case, device)


@pytest.mark.parametrize("pad", [(1, 2), (0, 1, 2, 0), (-1, 2), (1, -2, -1, 1), (2, 2, 1, 1, 1, 0)])
def test_pad_constant(pad: tuple[int, ...], device: str) -> None:
    x = RNG.standard_normal((2, 3, 4))

    def run(T: Any, dev: str) -> Any:
        xt = t(T, dev, x, grad=True)
        out = _F(T).pad(xt, pad, value=1.5)
        return out, grads_of(out, [xt]), second_grads(out * out, xt), out.grad_fn.name()

    both(run, device)


@pytest.mark.parametrize("case", [
    lambda T, dev: _F(T).pad(T.ones(2, 2, device=dev), (1,)),
    lambda T, dev: _F(T).pad(T.ones(2, 2, device=dev), (1, 1, 1, 1, 1, 1)),
    lambda T, dev: _F(T).pad(T.ones(2, 2, device=dev), (1, 1), mode="wrap"),
    lambda T, dev: _F(T).pad(T.ones(3, 4, device=dev), (-3, -2)),
])
def test_pad_errors(case: Any, device: str) -> None:
    same_error(case, device)


def test_pad_int_tensor(device: str) -> None:
    both(lambda T, dev: _F(T).pad(T.tensor([[1, 2]], device=dev), (1, 1)), device)


@pytest.mark.parametrize("name", [n for n in ACTIVATIONS if n not in ("relu", "leaky_relu")])
def test_activation_gradcheck(name: str, device: str) -> None:
    # NOTE: inputs away from 0, where elu's curvature jumps.
    x = t(ag, device, (np.abs(X[:2]) + 0.1) * [1, -1, 1, -1, 1], grad=True)
    fn = ACTIVATIONS[name]
    assert ag.autograd.gradcheck(lambda a: fn(ag.nn.functional, a), (x,))
    assert ag.autograd.gradgradcheck(lambda a: fn(ag.nn.functional, a), (x,))


def test_pad_and_linear_gradcheck(device: str) -> None:
    x = t(ag, device, RNG.standard_normal((2, 3)), grad=True)
    w = t(ag, device, RNG.standard_normal((4, 3)), grad=True)
    b = t(ag, device, RNG.standard_normal(4), grad=True)
    F = ag.nn.functional
    assert ag.autograd.gradcheck(lambda a: F.pad(a, (1, -1, 2, 0), value=3.0), (x,))
    assert ag.autograd.gradcheck(lambda a, c, d: F.linear(a, c, d), (x, w, b))
    assert ag.autograd.gradgradcheck(lambda a, c, d: F.linear(a, c, d).pow(2), (x, w, b))


# PyTorch's normalisations name the device in their dtype errors ("mixed dtype (CPU): ..."); on
# CUDA ours says "(CUDA)". Compared with the CPU oracle after that one substitution.
MIXED_DTYPE = {
    "layer_norm_f64_input_f32_weight": lambda T, d: _F(T).layer_norm(
        T.ones(2, 2, dtype=T.float64, device=d), (2,), T.ones(2, device=d)),
    "layer_norm_f32_input_f64_weight": lambda T, d: _F(T).layer_norm(
        T.ones(2, 2, device=d), (2,), T.ones(2, dtype=T.float64, device=d)),
    "layer_norm_f16_input_f32_weight_f16_bias": lambda T, d: _F(T).layer_norm(
        T.ones(2, 2, dtype=T.float16, device=d), (2,), T.ones(2, device=d),
        T.ones(2, dtype=T.float16, device=d)),
    "layer_norm_dtype_before_shape": lambda T, d: _F(T).layer_norm(
        T.ones(2, 2, dtype=T.float64, device=d), (3,), T.ones(3, device=d)),
    "layer_norm_bias_dtype": lambda T, d: _F(T).layer_norm(
        T.ones(2, 2, dtype=T.float64, device=d), (2,), T.ones(2, dtype=T.float64, device=d),
        T.ones(2, device=d)),
    "batch_norm_running_dtype": lambda T, d: _F(T).batch_norm(
        T.ones(2, 2, dtype=T.float64, device=d), T.zeros(2, device=d), T.ones(2, device=d)),
    "batch_norm_weight_dtype": lambda T, d: _F(T).batch_norm(
        T.ones(2, 2, device=d), None, None, T.ones(2, dtype=T.float64, device=d),
        training=True),
    "batch_norm_count_before_dtype": lambda T, d: _F(T).batch_norm(
        T.ones(2, 2, dtype=T.float64, device=d), T.zeros(3, device=d), T.ones(2, device=d)),
}


@pytest.mark.parametrize("name", sorted(MIXED_DTYPE))
def test_normalisation_dtype_errors_match_torch(name: str, device: str) -> None:
    fn = MIXED_DTYPE[name]
    with pytest.raises(RuntimeError) as theirs:
        fn(torch, "cpu")
    with pytest.raises(RuntimeError) as ours:
        fn(ag, device)
    assert str(ours.value).replace("(CUDA)", "(CPU)") == str(theirs.value).split("\n")[0]
