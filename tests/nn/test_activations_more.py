"""The activations beyond relu/elu/gelu (hardtanh, relu6, hardsigmoid, hardswish, mish, selu,
celu, prelu, rrelu, glu, logsigmoid, softsign, the shrinks, threshold, softmin, gumbel_softmax)
and their modules against the torch oracle: values, first and second derivatives (float64, to
1e-10 relative), grad_fn names, in-place forms, reprs and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import both, same_error
from tests.nn._util import copy_params, grads_of, second_grads, t

RNG = np.random.default_rng(0)
# NOTE: the kinks (0, +-3, +-lambd, the threshold) are included on purpose.
X = np.concatenate([RNG.standard_normal(16) * 3,
                    [0.0, -0.0, 3.0, -3.0, 25.0, -25.0, 1.0, 0.5]]).reshape(4, 6)
W6 = RNG.standard_normal(6)


def _F(T: Any) -> Any:
    return T.nn.functional


ACT = {
    "relu6": lambda F, x: F.relu6(x),
    "hardtanh": lambda F, x: F.hardtanh(x, -2.0, 3.0),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "hardswish": lambda F, x: F.hardswish(x),
    "mish": lambda F, x: F.mish(x),
    "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x, 0.7),
    "glu": lambda F, x: F.glu(x),
    "glu0": lambda F, x: F.glu(x, 0),
    "logsigmoid": lambda F, x: F.logsigmoid(x),
    "softsign": lambda F, x: F.softsign(x),
    "softshrink": lambda F, x: F.softshrink(x, 1.0),
    "hardshrink": lambda F, x: F.hardshrink(x, 1.0),
    "tanhshrink": lambda F, x: F.tanhshrink(x),
    "threshold": lambda F, x: F.threshold(x, 0.5, -2.0),
    "softmin": lambda F, x: F.softmin(x, 1),
    "softmin_dtype": lambda F, x: F.softmin(x.float(), 0, dtype=x.dtype),
    "rrelu_eval": lambda F, x: F.rrelu(x, 0.1, 0.4),
    "prelu": lambda F, x: F.prelu(x, x.new_tensor(W6)),
    "prelu_shared": lambda F, x: F.prelu(x.reshape(2, 3, 4), x.new_tensor(W6[:1])),
    "prelu_4d": lambda F, x: F.prelu(x.reshape(2, 3, 2, 2), x.new_tensor(W6[:3])),
    "prelu_1d": lambda F, x: F.prelu(x.reshape(-1), x.new_tensor(W6[:1])),
}
# PyTorch has no double backward for hardsigmoid (its second derivative is 0 anyway).
SMOOTH = [n for n in ACT if n != "hardsigmoid"]


@pytest.mark.parametrize("name", list(ACT))
def test_values_grads_and_names(name: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, X, grad=True)
        out = ACT[name](_F(T), x)
        return out, grads_of(out, [x])[0], out.grad_fn.name()

    both(run, device, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", SMOOTH)
def test_second_derivative(name: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, X, grad=True)
        return second_grads(ACT[name](_F(T), x), x)

    both(run, device, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["hardtanh", "hardswish", "mish", "selu", "celu", "glu",
                                  "logsigmoid", "softshrink", "prelu"])
def test_float32(name: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, X, grad=True, dtype=T.float32)
        out = ACT[name](_F(T), x)
        assert out.dtype == T.float32
        return out, grads_of(out, [x])[0]

    both(run, device, rtol=1e-5, atol=1e-6)


def test_prelu_weight_gradient(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, X.reshape(2, 3, 4), grad=True)
        w = t(T, dev, W6[:3], grad=True)
        out = _F(T).prelu(x, w)
        return out, grads_of(out, [x, w])

    both(run, device, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["hardtanh", "hardswish", "mish", "selu", "celu", "glu",
                                  "logsigmoid", "softshrink", "prelu", "softsign"])
def test_gradcheck(name: str, device: str) -> None:
    # NOTE: inputs away from the kinks.
    x = t(ag, device, (np.abs(X[:2]) + 0.1) * [1, -1, 1, -1, 1, -1], grad=True)
    fn = ACT[name]
    assert ag.autograd.gradcheck(lambda a: fn(ag.nn.functional, a), (x,))
    assert ag.autograd.gradgradcheck(lambda a: fn(ag.nn.functional, a), (x,))


INPLACE = {
    "relu_": lambda F, y: F.relu_(y),
    "relu6": lambda F, y: F.relu6(y, inplace=True),
    "hardtanh_": lambda F, y: F.hardtanh_(y, -2.0, 3.0),
    "hardtanh": lambda F, y: F.hardtanh(y, inplace=True),
    "hardsigmoid": lambda F, y: F.hardsigmoid(y, inplace=True),
    "hardswish": lambda F, y: F.hardswish(y, inplace=True),
    "mish": lambda F, y: F.mish(y, inplace=True),
    "selu_": lambda F, y: F.selu_(y),
    "selu": lambda F, y: F.selu(y, inplace=True),
    "celu_": lambda F, y: F.celu_(y, 0.7),
    "celu": lambda F, y: F.celu(y, 1.5, inplace=True),
    "threshold_": lambda F, y: F.threshold_(y, 0.5, 2.0),
    "threshold": lambda F, y: F.threshold(y, 0.5, -2.0, inplace=True),
    "rrelu_": lambda F, y: F.rrelu_(y, 0.1, 0.3),
    "rrelu": lambda F, y: F.rrelu(y, inplace=True),
}


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace(name: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, X, grad=True)
        y = x * 1.0
        out = INPLACE[name](_F(T), y)
        assert out is y
        return out, grads_of(out, [x])[0], out.grad_fn.name()

    both(run, device, rtol=1e-10, atol=1e-12)


def test_inplace_result_saved_then_modified(device: str) -> None:
    # NOTE: selu_ saves its output: a later write to it makes backward refuse, as in PyTorch.
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, X, grad=True)
        y = _F(T).selu_(x * 1.0)
        y.add_(1)
        y.sum().backward()

    same_error(run, device)


def test_rrelu_training_draws_slopes(device: str) -> None:
    ag.manual_seed(0)
    x = ag.full((200, 100), -1.0, device=device, dtype=ag.float64, requires_grad=True)
    out = ag.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    assert out.grad_fn.name() == "RreluWithNoiseBackward0"
    slopes = -out.detach().cpu().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.005
    out.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), slopes)
    pos = ag.nn.functional.rrelu(ag.ones(5, device=device), training=True)
    np.testing.assert_array_equal(pos.cpu().numpy(), 1.0)
    ag.manual_seed(0)
    again = ag.nn.functional.rrelu(x.detach(), 0.1, 0.3, training=True)
    np.testing.assert_array_equal(again.cpu().numpy(), out.detach().cpu().numpy())


def test_rrelu_module_train_and_eval(device: str) -> None:
    m = ag.nn.RReLU(0.1, 0.3)
    x = -ag.ones(50, 40, device=device)
    train = m(x).cpu().numpy()
    assert train.std() > 0
    m.eval()
    np.testing.assert_allclose(m(x).cpu().numpy(), -0.2)


@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax(hard: bool, device: str) -> None:
    ag.manual_seed(0)
    logits = ag.tensor([[0.0, 1.0, 3.0]] * 3000, device=device, dtype=ag.float64,
                       requires_grad=True)
    y = ag.nn.functional.gumbel_softmax(logits, tau=0.5, hard=hard)
    out = y.detach().cpu().numpy()
    np.testing.assert_allclose(out.sum(1), 1.0)
    if hard:
        assert set(np.unique(out)) <= {0.0, 1.0}
        assert y.grad_fn.name() == "AddBackward0"
    else:
        assert y.grad_fn.name() == "SoftmaxBackward0"
    # NOTE: the Gumbel-max trick: argmax frequencies follow softmax(logits).
    freq = np.bincount(out.argmax(1), minlength=3) / 3000
    np.testing.assert_allclose(freq, np.exp([0, 1, 3]) / np.exp([0, 1, 3]).sum(), atol=0.03)
    (y[:, 2]).sum().backward()
    assert np.isfinite(logits.grad.cpu().numpy()).all() and logits.grad.abs().sum().item() > 0


def test_gumbel_softmax_eps_warns(device: str) -> None:
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        ag.nn.functional.gumbel_softmax(ag.zeros(2, 3, device=device), eps=1e-3)


def test_softmin_implicit_dim_warns(device: str) -> None:
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        ag.nn.functional.softmin(ag.ones(2, 3, device=device))


def test_int_inputs(device: str) -> None:
    both(lambda T, dev: (_F(T).relu6(T.tensor([-1, 3, 9], device=dev)),
                         _F(T).hardtanh(T.tensor([-3, 0, 3], device=dev), -2, 2),
                         _F(T).threshold(T.tensor([1, 2, 3], device=dev), 1, 7),
                         _F(T).softsign(T.tensor([1, 2], device=dev))), device)


ERRORS = {
    "glu_odd": lambda T, d: _F(T).glu(T.ones(2, 5, device=d)),
    "glu_scalar": lambda T, d: _F(T).glu(T.tensor(1.0, device=d)),
    "glu_dim": lambda T, d: _F(T).glu(T.ones(2, 4, device=d), 3),
    "glu_long": lambda T, d: _F(T).glu(T.ones(2, 4, dtype=T.int64, device=d)),
    "softshrink_neg": lambda T, d: _F(T).softshrink(T.ones(2, device=d), -1.0),
    "softshrink_neg_f64": lambda T, d: _F(T).softshrink(T.ones(2, dtype=T.float64, device=d), -2.5),
    "prelu_count": lambda T, d: _F(T).prelu(T.ones(2, 5, device=d), T.ones(3, device=d)),
    "prelu_1d": lambda T, d: _F(T).prelu(T.ones(5, device=d), T.ones(5, device=d)),
    "prelu_2d_weight": lambda T, d: _F(T).prelu(T.ones(2, 3, device=d), T.ones(1, 3, device=d)),
    "rrelu_bounds": lambda T, d: _F(T).rrelu(T.ones(2, device=d), 0.5, 0.2, training=True),
    "hardtanh_bounds": lambda T, d: _F(T).hardtanh(T.ones(2, device=d), 2.0, 1.0),
    "celu_zero": lambda T, d: _F(T).celu(T.ones(2, device=d), 0.0),
    "celu__zero": lambda T, d: _F(T).celu_(T.ones(2, device=d), 0.0),
    "mish_long": lambda T, d: _F(T).mish(T.ones(2, dtype=T.int64, device=d)),
    "hardsigmoid_long": lambda T, d: _F(T).hardsigmoid(T.ones(2, dtype=T.int64, device=d)),
    "hardswish_long": lambda T, d: _F(T).hardswish(T.ones(2, dtype=T.int64, device=d)),
    "selu_long": lambda T, d: _F(T).selu(T.ones(2, dtype=T.int64, device=d)),
    "logsigmoid_long": lambda T, d: _F(T).logsigmoid(T.ones(2, dtype=T.int64, device=d)),
    "hardshrink_long": lambda T, d: _F(T).hardshrink(T.ones(2, dtype=T.int64, device=d)),
    "softmax2d_2d": lambda T, d: T.nn.Softmax2d()(T.ones(2, 3, device=d)),
    "leaf_inplace": lambda T, d: _F(T).hardtanh_(T.ones(2, device=d, requires_grad=True)),
    "elu_inplace_negative_alpha": lambda T, d: _F(T).celu_(
        T.ones(2, device=d, requires_grad=True) * -1.0, -1.0).sum().backward(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str, device: str) -> None:
    same_error(ERRORS[name], device)


# ---- modules ---------------------------------------------------------------------------------

MODULES = {
    "ReLU6": lambda nn: nn.ReLU6(),
    "ReLU6_inplace": lambda nn: nn.ReLU6(True),
    "Hardtanh": lambda nn: nn.Hardtanh(),
    "Hardtanh_args": lambda nn: nn.Hardtanh(-2, 3, True),
    "Hardsigmoid": lambda nn: nn.Hardsigmoid(True),
    "Hardswish": lambda nn: nn.Hardswish(),
    "Mish": lambda nn: nn.Mish(True),
    "SELU": lambda nn: nn.SELU(),
    "CELU": lambda nn: nn.CELU(2.0, True),
    "GLU": lambda nn: nn.GLU(0),
    "LogSigmoid": lambda nn: nn.LogSigmoid(),
    "Softsign": lambda nn: nn.Softsign(),
    "Softshrink": lambda nn: nn.Softshrink(),
    "Hardshrink": lambda nn: nn.Hardshrink(0.3),
    "Tanhshrink": lambda nn: nn.Tanhshrink(),
    "Threshold": lambda nn: nn.Threshold(0.1, 20),
    "Threshold_inplace": lambda nn: nn.Threshold(0.1, 20.0, True),
    "Softmin": lambda nn: nn.Softmin(1),
    "Softmax2d": lambda nn: nn.Softmax2d(),
    "RReLU_eval": lambda nn: nn.RReLU(0.1, 0.3).eval(),
    "PReLU": lambda nn: nn.PReLU(),
    "PReLU_channels": lambda nn: nn.PReLU(4, 0.1),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_modules(name: str, device: str) -> None:
    ours = MODULES[name](ag.nn).to(device).double()
    theirs = MODULES[name](torch.nn).double()
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    copy_params(ours, theirs)
    x = RNG.standard_normal((2, 4, 3, 2)) * 3

    def run(T: Any, dev: str) -> Any:
        m = ours if T is ag else theirs
        xt = t(T, dev, x, grad=True)
        out = m(xt * 1.0)
        return out, grads_of(out, [xt, *m.parameters()])

    both(run, device, rtol=1e-10, atol=1e-12)


def test_prelu_default_init_and_state_dict_load(device: str) -> None:
    m = ag.nn.PReLU(3, init=0.3, device=device)
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), 0.3, rtol=1e-7)
    theirs = torch.nn.PReLU(3)
    m.load_state_dict({k: ag.tensor(v.numpy(), device=device)
                       for k, v in theirs.state_dict().items()}, strict=True)
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), 0.25)


def test_hardtanh_deprecated_keywords() -> None:
    with pytest.warns(FutureWarning, match="min_value"):
        m = ag.nn.Hardtanh(min_value=-2.0)
    assert m.min_val == -2.0
    with pytest.raises(AssertionError):
        ag.nn.Hardtanh(1.0, 1.0)
