"""conv2d and Conv2d against the torch oracle: values, input/weight/bias gradients, second
derivatives (gradcheck, gradgradcheck, Hessian-vector products), reprs, init and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests._compare import outcome
from tests.autograd._util import assert_same
from tests.nn._util import copy_params, grads_of, second_grads, t

RNG = np.random.default_rng(5)
# torch warns that asymmetric 'same' padding copies its input; ours pads in place, silently.
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")

# (input shape, weight shape, bias?, kwargs)
CASES: list[tuple[tuple[int, ...], tuple[int, ...], bool, dict[str, Any]]] = [
    ((2, 3, 5, 5), (4, 3, 3, 3), True, {}),
    ((2, 3, 5, 5), (4, 3, 3, 3), False, {"padding": 1}),
    ((1, 2, 7, 6), (3, 2, 3, 2), True, {"stride": 2, "padding": (1, 0)}),
    ((2, 2, 7, 8), (3, 2, 2, 3), True, {"stride": (2, 3), "padding": (2, 1)}),
    ((2, 2, 9, 7), (2, 2, 3, 3), True, {"dilation": 2, "padding": 1}),
    ((2, 2, 9, 7), (2, 2, 3, 2), True, {"dilation": (1, 3), "stride": (1, 2)}),
    ((2, 4, 6, 6), (6, 2, 3, 3), True, {"groups": 2, "padding": 1}),
    ((1, 4, 5, 6), (4, 1, 3, 3), True, {"groups": 4, "stride": 2}),  # depthwise
    ((2, 3, 5, 6), (4, 3, 3, 3), True, {"padding": "same"}),
    ((2, 3, 5, 6), (4, 3, 2, 4), True, {"padding": "same"}),  # asymmetric 'same'
    ((2, 3, 6, 5), (2, 3, 2, 3), True, {"padding": "same", "dilation": (3, 2)}),
    ((2, 3, 5, 6), (4, 3, 3, 3), True, {"padding": "valid"}),
    ((3, 5, 5), (4, 3, 3, 3), True, {"padding": 1}),  # unbatched
    ((2, 3, 4, 4), (2, 3, 1, 1), True, {}),  # 1x1
    ((2, 1, 3, 3), (2, 1, 3, 3), True, {}),  # kernel == input: 1x1 output
    ((0, 3, 5, 5), (4, 3, 3, 3), True, {}),  # empty batch
]


@pytest.mark.parametrize("x_shape, w_shape, bias, kwargs", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_matches_torch(x_shape: tuple[int, ...], w_shape: tuple[int, ...], bias: bool,
                              kwargs: dict[str, Any], dtype: str, device: str) -> None:
    xa, wa, ba = (RNG.standard_normal(s) for s in (x_shape, w_shape, w_shape[:1]))
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        dt = getattr(T, dtype)
        x, w = t(T, dev, xa, True, dt), t(T, dev, wa, True, dt)
        if not xa.size:  # NOTE: an empty batch does not survive tolist()
            x = T.zeros(*x_shape, dtype=dt, device=dev, requires_grad=True)
        b = t(T, dev, ba, True, dt) if bias else None
        out = T.nn.functional.conv2d(x, w, b, **kwargs)
        inputs = [x, w] + ([b] if bias else [])
        grads = grads_of(out, inputs) if xa.size else T.autograd.grad(out.sum(), inputs)
        res.append((out, grads))
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-11}
    assert_same(res[0][0], res[1][0], **tol)
    assert res[0][0].dtype == getattr(ag, dtype)
    assert_same(res[0][1], res[1][1], **tol)
    if x_shape[0]:
        assert res[0][0].grad_fn.name() == res[1][0].grad_fn.name()


@pytest.mark.parametrize("x_shape, w_shape, bias, kwargs", [
    ((1, 2, 4, 5), (2, 2, 2, 3), True, {"stride": (2, 1), "padding": (1, 2)}),
    ((2, 4, 5, 4), (2, 2, 3, 2), True, {"groups": 2, "dilation": (2, 1), "padding": "same"}),
    ((2, 4, 4), (3, 2, 2, 2), False, {}),
])
def test_conv2d_gradcheck_and_gradgradcheck(x_shape: tuple[int, ...], w_shape: tuple[int, ...],
                                            bias: bool, kwargs: dict[str, Any],
                                            device: str) -> None:
    x = t(ag, device, RNG.standard_normal(x_shape), True)
    w = t(ag, device, RNG.standard_normal(w_shape), True)
    b = t(ag, device, RNG.standard_normal(w_shape[:1]), True) if bias else None
    inputs = (x, w) + ((b,) if bias else ())

    def fn(*args: Any) -> Any:
        return ag.nn.functional.conv2d(args[0], args[1], args[2] if bias else None, **kwargs)

    assert ag.autograd.gradcheck(fn, inputs)
    assert ag.autograd.gradgradcheck(fn, inputs)


def test_conv2d_second_derivatives_match_torch(device: str) -> None:
    xa, wa = RNG.standard_normal((2, 2, 5, 5)), RNG.standard_normal((3, 2, 3, 3))
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x, w = t(T, dev, xa, True), t(T, dev, wa, True)

        def f(x: Any, w: Any, T: Any = T) -> Any:
            return T.nn.functional.conv2d(x.tanh(), w, stride=2, padding=1)

        # d/dw of <grad_x, x>: the mixed second derivative, through the backward's graph
        out = f(x, w)
        (gx,) = T.autograd.grad((out * out).sum(), x, create_graph=True)
        (gw,) = T.autograd.grad((gx * x).sum(), w)
        out = f(x, w)
        res.append((second_grads(out * out, x), gw))
    assert_same(res[0], res[1], rtol=1e-9, atol=1e-10)


def test_conv2d_backward_accumulates_into_leaves(device: str) -> None:
    xa, wa = RNG.standard_normal((2, 1, 6, 6)), RNG.standard_normal((2, 1, 3, 3))
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x, w = t(T, dev, xa, True), t(T, dev, wa, True)
        y = T.nn.functional.conv2d(x, w, padding=1)
        (y.sum() + T.nn.functional.conv2d(x, w).pow(2).sum()).backward()
        res.append((x.grad, w.grad))
    assert_same(res[0], res[1], rtol=1e-10, atol=1e-11)


MODULES: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    ((1, 8, 3), {"padding": 1}),
    ((3, 4, (3, 2)), {"stride": 2, "dilation": 2, "bias": False}),
    ((4, 8, 3), {"padding": "same", "groups": 2}),
    ((2, 2, 3), {"padding": "valid"}),
    ((2, 4, 2), {"stride": (2, 1), "padding": (0, 1), "groups": 2}),
]


@pytest.mark.parametrize("args, kwargs", MODULES)
def test_conv2d_module_matches_torch(args: tuple[Any, ...], kwargs: dict[str, Any],
                                     device: str) -> None:
    ours = ag.nn.Conv2d(*args, **kwargs).to(ag.float64)
    theirs = torch.nn.Conv2d(*args, **kwargs).to(torch.float64)
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert ours.weight.shape == theirs.weight.shape
    for attr in ("kernel_size", "stride", "padding", "dilation", "groups", "padding_mode"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    copy_params(ours, theirs)
    ours.to(device)
    x = RNG.standard_normal((2, args[0], 7, 6))
    xo, xt = t(ag, device, x, True), t(torch, "cpu", x, True)
    out_o, out_t = ours(xo), theirs(xt)
    assert_same(out_o, out_t, rtol=1e-10, atol=1e-11)
    assert_same(grads_of(out_o, [xo, *ours.parameters()]),
                grads_of(out_t, [xt, *theirs.parameters()]), rtol=1e-10, atol=1e-11)


def test_conv2d_repr_variants() -> None:
    for args, kwargs in [((1, 8, 3), {}), ((2, 4, 3), {"padding_mode": "reflect", "padding": 1}),
                         ((2, 4, 3), {"bias": False, "dilation": (1, 2)})]:
        assert repr(ag.nn.Conv2d(*args, **kwargs)) == repr(torch.nn.Conv2d(*args, **kwargs))


def test_conv2d_default_init_bounds(device: str) -> None:
    m = ag.nn.Conv2d(16, 32, 3, device=device)
    fan_in = 16 * 9
    bound = 1 / np.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) gives exactly this bound
    w, b = m.weight.detach().cpu().numpy(), m.bias.detach().cpu().numpy()
    assert w.shape == (32, 16, 3, 3) and b.shape == (32,)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / np.sqrt(3)) < 0.05 * bound
    assert m.weight.dtype == ag.float32 and m.weight.device.type == device
    g = ag.nn.Conv2d(4, 6, 3, groups=2, bias=False)
    assert g.weight.shape == (6, 2, 3, 3) and g.bias is None
    assert np.abs(g.weight.detach().numpy()).max() <= 1 / np.sqrt(2 * 9)


def _conv_call(T: Any, x: tuple[int, ...], w: tuple[int, ...], **kw: Any) -> Any:
    b = kw.pop("bias_shape", None)
    dt = kw.pop("w_dtype", T.float32)
    bias = T.zeros(*b) if b is not None else None
    return T.nn.functional.conv2d(T.zeros(*x), T.zeros(*w, dtype=dt), bias, **kw)


@pytest.mark.parametrize("x, w, kw", [
    ((2, 1, 5, 5), (8, 3, 3, 3), {}),
    ((1, 5, 5), (8, 3, 3, 3), {}),
    ((5, 5), (8, 3, 3, 3), {}),
    ((2, 3, 5, 5), (8, 3, 3), {}),
    ((2, 3, 2, 2), (8, 3, 3, 3), {}),
    ((2, 3, 3, 3), (8, 3, 2, 2), {"dilation": 3}),
    ((2, 4, 5, 5), (8, 2, 3, 3), {"groups": 3}),
    ((2, 4, 5, 5), (6, 2, 3, 3), {"groups": 4}),
    ((2, 3, 5, 5), (8, 3, 3, 3), {"bias_shape": (7,)}),
    ((2, 3, 5, 5), (8, 3, 3, 3), {"stride": 2, "padding": "same"}),
    ((2, 3, 5, 5), (8, 3, 3, 3), {"padding": "foo"}),
    ((2, 3, 5, 5), (8, 3, 3, 3), {"padding": -1}),
    ((2, 3, 5, 5), (8, 3, 3, 3), {"stride": 0}),
    ((2, 3, 5, 5), (8, 3, 3, 3), {"dilation": 0}),
    ((2, 3, 5, 5), (8, 3, 3, 3), {"groups": 0}),
    ((2, 3, 5, 5), (8, 3, 3, 3), {"stride": (1, 1, 1)}),
    ((2, 3, 5, 5), (8, 3, 3, 3), {"padding": (1, 1, 1)}),
    ((2, 3, 5, 5), (8, 3, 3, 3), {"w_dtype": "float64"}),
])
def test_conv2d_errors_match_torch(x: tuple[int, ...], w: tuple[int, ...],
                                   kw: dict[str, Any]) -> None:
    def run(T: Any) -> Any:
        args = dict(kw)
        if args.get("w_dtype") == "float64":
            args["w_dtype"] = T.float64
        return _conv_call(T, x, w, **args)

    theirs, ours = outcome(lambda: run(torch)), outcome(lambda: run(ag))
    assert theirs[0] == "raises"
    assert ours == theirs


@pytest.mark.parametrize("kwargs", [
    {"groups": 3}, {"groups": 0}, {"stride": 2, "padding": "same"},
])
def test_conv2d_module_errors_match_torch(kwargs: dict[str, Any]) -> None:
    theirs = outcome(lambda: torch.nn.Conv2d(4, 6, 3, **kwargs))
    assert theirs[0] == "raises"
    assert outcome(lambda: ag.nn.Conv2d(4, 6, 3, **kwargs)) == theirs


def test_conv2d_module_string_errors() -> None:
    # NOTE: torch prints a set of names in these messages, so their order varies by run.
    with pytest.raises(ValueError, match="^Invalid padding string 'foo', should be one of "):
        ag.nn.Conv2d(4, 6, 3, padding="foo")
    with pytest.raises(ValueError, match="^padding_mode must be one of .* but got padding_mode"):
        ag.nn.Conv2d(4, 6, 3, padding_mode="foo")


def test_conv2d_module_cnn_training_step_matches_torch(device: str) -> None:
    def build(T: Any) -> Any:
        return T.nn.Sequential(T.nn.Conv2d(1, 4, 3, padding=1), T.nn.ReLU(), T.nn.MaxPool2d(2),
                               T.nn.Conv2d(4, 6, 3, padding=1), T.nn.ReLU(),
                               T.nn.AvgPool2d(2), T.nn.Flatten(), T.nn.Linear(36, 3))

    ours, theirs = build(ag).double(), build(torch).double()
    copy_params(ours, theirs)
    ours.to(device)
    x, y = RNG.standard_normal((5, 1, 8, 12)), RNG.integers(0, 3, 5)
    for T, net, dev in ((ag, ours, device), (torch, theirs, "cpu")):
        loss = T.nn.functional.cross_entropy(net(t(T, dev, x)), t(T, dev, y))
        loss.backward()
    assert_same([p.grad for p in ours.parameters()], [p.grad for p in theirs.parameters()],
                rtol=1e-9, atol=1e-11)
