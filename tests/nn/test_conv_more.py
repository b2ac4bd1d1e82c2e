"""conv1d/conv3d, the transposed convolutions, fold/unfold and their modules against the torch
oracle: values, input/weight/bias gradients (float64 to 1e-10), second derivatives, grad_fn
names, reprs, state_dict keys, init and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests._compare import outcome
from tests.autograd._util import assert_same
from tests.nn._util import copy_params, grads_of, t

RNG = np.random.default_rng(7)
TOL = {"rtol": 1e-10, "atol": 1e-11}
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")

# (function, input shape, weight shape, bias?, kwargs)
CASES: list[tuple[str, tuple[int, ...], tuple[int, ...], bool, dict[str, Any]]] = [
    ("conv1d", (2, 3, 7), (4, 3, 3), True, {}),
    ("conv1d", (2, 3, 9), (4, 3, 2), False, {"stride": 2, "padding": 1, "dilation": 2}),
    ("conv1d", (2, 4, 6), (6, 2, 3), True, {"groups": 2, "padding": (2,)}),
    ("conv1d", (2, 3, 6), (2, 3, 4), True, {"padding": "same", "dilation": 1}),  # asymmetric
    ("conv1d", (3, 7), (4, 3, 3), True, {"padding": "valid"}),  # unbatched
    ("conv1d", (0, 3, 7), (4, 3, 3), True, {}),  # empty batch
    ("conv3d", (2, 2, 4, 5, 4), (3, 2, 2, 3, 2), True, {}),
    ("conv3d", (1, 2, 6, 5, 7), (3, 2, 3, 2, 3), True,
     {"stride": (2, 1, 3), "padding": (1, 0, 2), "dilation": (1, 2, 1)}),
    ("conv3d", (2, 4, 4, 4, 4), (4, 1, 3, 3, 3), False, {"groups": 4, "padding": 1}),
    ("conv3d", (2, 2, 4, 5, 3), (2, 2, 2, 3, 2), True, {"padding": "same"}),
    ("conv3d", (2, 4, 3, 4), (3, 2, 2, 2, 2), True, {}),  # unbatched
    ("conv_transpose1d", (2, 3, 5), (3, 4, 3), True, {}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), True,
     {"stride": 3, "padding": 1, "output_padding": 2, "groups": 2}),
    ("conv_transpose1d", (3, 5), (3, 2, 2), False, {"dilation": 3, "output_padding": 1}),
    ("conv_transpose2d", (2, 3, 4, 5), (3, 2, 3, 3), True, {"stride": 2, "padding": 1}),
    ("conv_transpose2d", (2, 4, 3, 4), (4, 3, 2, 3), True,
     {"stride": (2, 3), "padding": (0, 1), "output_padding": (1, 2), "groups": 2,
      "dilation": (1, 2)}),
    ("conv_transpose2d", (2, 3, 3), (2, 3, 3, 3), False, {}),  # unbatched
    ("conv_transpose2d", (1, 6, 3, 3), (6, 1, 3, 3), True, {"groups": 6, "stride": 2}),
    ("conv_transpose2d", (0, 2, 3, 3), (2, 2, 3, 3), True, {}),  # empty batch
    ("conv_transpose3d", (2, 2, 3, 2, 3), (2, 3, 2, 3, 2), True,
     {"stride": (1, 2, 2), "padding": (1, 0, 1), "output_padding": (0, 1, 1)}),
    ("conv_transpose3d", (2, 4, 2, 3, 2), (4, 1, 2, 2, 2), True,
     {"groups": 2, "dilation": 2}),
]


@pytest.mark.parametrize("fn, x_shape, w_shape, bias, kwargs", CASES)
def test_conv_matches_torch(fn: str, x_shape: tuple[int, ...], w_shape: tuple[int, ...],
                            bias: bool, kwargs: dict[str, Any], device: str) -> None:
    n_bias = w_shape[1] * kwargs.get("groups", 1) if "transpose" in fn else w_shape[0]
    xa, wa, ba = (RNG.standard_normal(s) for s in (x_shape, w_shape, (n_bias,)))
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x, w = t(T, dev, xa, True), t(T, dev, wa, True)
        if not xa.size:  # NOTE: an empty batch does not survive tolist()
            x = T.zeros(*x_shape, dtype=T.float64, device=dev, requires_grad=True)
        b = t(T, dev, ba, True) if bias else None
        out = getattr(T.nn.functional, fn)(x, w, b, **kwargs)
        inputs = [x, w] + ([b] if bias else [])
        grads = grads_of(out, inputs) if out.numel() else T.autograd.grad(out.sum(), inputs)
        res.append((out, grads, type(out.grad_fn).__name__))
    assert_same(res[0][0], res[1][0], **TOL)
    assert_same(res[0][1], res[1][1], **TOL)
    assert res[0][2] == res[1][2]


@pytest.mark.parametrize("fn, x_shape, w_shape, kwargs", [
    ("conv1d", (2, 4, 5), (2, 2, 3), {"groups": 2, "stride": 2, "padding": 1}),
    ("conv3d", (1, 2, 3, 3, 4), (2, 1, 2, 2, 2), {"groups": 2, "dilation": (1, 1, 2)}),
    ("conv_transpose1d", (2, 2, 4), (2, 2, 3), {"stride": 2, "output_padding": 1}),
    ("conv_transpose2d", (1, 4, 3, 2), (4, 1, 2, 2),
     {"groups": 2, "stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
    ("conv_transpose3d", (1, 2, 2, 2, 2), (2, 1, 2, 2, 2), {"stride": 2}),
])
def test_conv_gradcheck_and_gradgradcheck(fn: str, x_shape: tuple[int, ...],
                                          w_shape: tuple[int, ...], kwargs: dict[str, Any],
                                          device: str) -> None:
    n_bias = w_shape[1] * kwargs.get("groups", 1) if "transpose" in fn else w_shape[0]
    inputs = tuple(t(ag, device, RNG.standard_normal(s), True)
                   for s in (x_shape, w_shape, (n_bias,)))
    f = getattr(ag.nn.functional, fn)

    def call(x: Any, w: Any, b: Any) -> Any:
        return f(x, w, b, **kwargs)

    assert ag.autograd.gradcheck(call, inputs)
    assert ag.autograd.gradgradcheck(call, inputs)


MODULES: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    ("Conv1d", (2, 4, 3), {"padding": 1}, (2, 2, 7)),
    ("Conv1d", (4, 2, 2), {"stride": 2, "dilation": 2, "groups": 2, "bias": False}, (4, 9)),
    ("Conv1d", (2, 3, 4), {"padding": "same"}, (2, 2, 6)),
    ("Conv3d", (2, 4, (2, 3, 2)), {"stride": (1, 2, 1), "padding": (1, 0, 1)}, (2, 2, 4, 5, 3)),
    ("Conv3d", (4, 2, 3), {"groups": 2, "padding": "valid"}, (1, 4, 3, 4, 3)),
    ("ConvTranspose1d", (4, 2, 3), {"stride": 2, "output_padding": 1, "groups": 2}, (2, 4, 5)),
    ("ConvTranspose2d", (2, 4, (3, 2)),
     {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2), "bias": False}, (2, 2, 4, 3)),
    ("ConvTranspose2d", (3, 2, 3), {"output_padding": (1, 0), "stride": (2, 1)}, (3, 3, 3)),
    ("ConvTranspose3d", (2, 2, 2), {"stride": 2, "padding": 1, "output_padding": 1},
     (2, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("name, args, kwargs, x_shape", MODULES)
def test_conv_module_matches_torch(name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                                   x_shape: tuple[int, ...], device: str) -> None:
    ours = getattr(ag.nn, name)(*args, **kwargs).to(ag.float64)
    theirs = getattr(torch.nn, name)(*args, **kwargs).to(torch.float64)
    assert repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    for attr in ("kernel_size", "stride", "padding", "dilation", "groups", "padding_mode",
                 "output_padding", "transposed", "_reversed_padding_repeated_twice"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    copy_params(ours, theirs)
    ours.to(device)
    x = RNG.standard_normal(x_shape)
    xo, xt = t(ag, device, x, True), t(torch, "cpu", x, True)
    out_o, out_t = ours(xo), theirs(xt)
    assert_same(out_o, out_t, **TOL)
    assert_same(grads_of(out_o, [xo, *ours.parameters()]),
                grads_of(out_t, [xt, *theirs.parameters()]), **TOL)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("name, padding, x_shape", [
    ("Conv1d", 2, (2, 2, 6)), ("Conv2d", (1, 2), (2, 2, 5, 6)), ("Conv3d", "same", (1, 2, 4, 4, 5)),
])
def test_conv_module_padding_modes_match_torch(mode: str, name: str, padding: Any,
                                               x_shape: tuple[int, ...], device: str) -> None:
    ours = getattr(ag.nn, name)(2, 3, 2, padding=padding, padding_mode=mode).to(ag.float64)
    theirs = getattr(torch.nn, name)(2, 3, 2, padding=padding, padding_mode=mode).double()
    assert repr(ours) == repr(theirs)
    assert ours._reversed_padding_repeated_twice == theirs._reversed_padding_repeated_twice
    copy_params(ours, theirs)
    ours.to(device)
    x = RNG.standard_normal(x_shape)
    xo, xt = t(ag, device, x, True), t(torch, "cpu", x, True)
    out_o = ours(xo)
    out_t = theirs(xt)
    assert_same(out_o, out_t, **TOL)
    assert_same(grads_of(out_o, [xo, *ours.parameters()]),
                grads_of(out_t, [xt, *theirs.parameters()]), **TOL)


@pytest.mark.parametrize("name, x_shape, output_size", [
    ("ConvTranspose1d", (2, 2, 4), [8]),
    ("ConvTranspose2d", (2, 2, 3, 4), [2, 3, 6, 8]),
    ("ConvTranspose2d", (2, 3, 4), [6, 7]),  # unbatched
    ("ConvTranspose3d", (1, 2, 2, 2, 3), (4, 3, 6)),
])
def test_conv_transpose_output_size_matches_torch(name: str, x_shape: tuple[int, ...],
                                                  output_size: Any, device: str) -> None:
    ours = getattr(ag.nn, name)(2, 3, 3, stride=2, padding=1).to(ag.float64)
    theirs = getattr(torch.nn, name)(2, 3, 3, stride=2, padding=1).double()
    copy_params(ours, theirs)
    ours.to(device)
    x = RNG.standard_normal(x_shape)
    xo, xt = t(ag, device, x, True), t(torch, "cpu", x, True)
    out_o, out_t = ours(xo, output_size=output_size), theirs(xt, output_size=output_size)
    assert_same(out_o, out_t, **TOL)
    assert_same(grads_of(out_o, [xo, ours.weight]), grads_of(out_t, [xt, theirs.weight]), **TOL)


@pytest.mark.parametrize("x_shape, output_size", [
    ((2, 2, 3, 4), [5, 6]), ((2, 2, 3, 4), [6, 7, 8]), ((2, 2, 3, 4), [9, 9]),
])
def test_conv_transpose_output_size_errors_match_torch(x_shape: tuple[int, ...],
                                                       output_size: list[int]) -> None:
    def run(T: Any) -> Any:
        return T.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)(T.zeros(*x_shape),
                                                                   output_size=output_size)

    theirs = outcome(lambda: run(torch))
    assert theirs[0] == "raises"
    assert outcome(lambda: run(ag)) == theirs


@pytest.mark.parametrize("name, args, kwargs", [
    ("Conv1d", (1, 8, 3), {}),
    ("Conv3d", (2, 4, 3), {"padding_mode": "circular", "padding": 1, "bias": False}),
    ("Conv3d", (2, 4, 3), {"padding": "same", "dilation": 2}),
    ("ConvTranspose1d", (2, 4, 3), {"groups": 2, "dilation": 2}),
    ("ConvTranspose3d", (2, 4, (1, 2, 3)), {"output_padding": (0, 0, 1), "stride": 2}),
])
def test_conv_module_repr_variants(name: str, args: tuple[Any, ...],
                                   kwargs: dict[str, Any]) -> None:
    assert repr(getattr(ag.nn, name)(*args, **kwargs)) == \
        repr(getattr(torch.nn, name)(*args, **kwargs))


@pytest.mark.parametrize("name, args, fan_in, shape", [
    ("Conv1d", (6, 8, 3, 1, 0, 1, 2), 3 * 3, (8, 3, 3)),
    ("Conv3d", (4, 2, 3), 4 * 27, (2, 4, 3, 3, 3)),
    ("ConvTranspose1d", (6, 8, 3, 1, 0, 0, 2), 4 * 3, (6, 4, 3)),
    ("ConvTranspose2d", (8, 4, (2, 3)), 4 * 6, (8, 4, 2, 3)),
])
def test_conv_module_default_init_bounds(name: str, args: tuple[Any, ...], fan_in: int,
                                         shape: tuple[int, ...], device: str) -> None:
    m = getattr(ag.nn, name)(*args, device=device)
    bound = 1 / np.sqrt(fan_in)  # kaiming_uniform_(a=sqrt(5)) gives exactly this bound
    w, b = m.weight.detach().cpu().numpy(), m.bias.detach().cpu().numpy()
    assert w.shape == shape and b.shape == (args[1],)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.5 * bound
    assert m.weight.dtype == ag.float32 and m.weight.device.type == device


def _z(T: Any, shape: tuple[int, ...], dtype: str = "float64") -> Any:
    return T.zeros(*shape, dtype=getattr(T, dtype))


# (function, input shape, weight shape, kwargs); "bias" is a shape, "w_dtype" a dtype name
ERRORS: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ("conv1d", (2, 3), (4, 3, 3), {}),
    ("conv1d", (2, 3, 5, 5), (4, 3, 3), {}),
    ("conv1d", (2, 3, 5), (4, 3, 3, 3), {}),
    ("conv1d", (2, 3, 5), (4, 3, 3), {"stride": (1, 1)}),
    ("conv1d", (2, 3, 5), (4, 3, 3), {"padding": (1, 1), "dilation": (1, 1)}),
    ("conv1d", (2, 3, 2), (4, 3, 3), {}),
    ("conv1d", (2, 3, 5), (4, 3, 3), {"padding": -1, "groups": 0}),
    ("conv1d", (2, 3, 5), (4, 3, 3), {"padding": -1, "stride": 0}),
    ("conv1d", (2, 3, 5), (4, 3, 3), {"dilation": -1}),
    ("conv1d", (2, 3, 5), (4, 3, 3), {"dilation": 0}),
    ("conv1d", (2, 3, 5), (4, 3, 3), {"padding": "same", "stride": 2}),
    ("conv1d", (2, 3, 5), (4, 3, 3), {"padding": "foo"}),
    ("conv1d", (2, 4, 5), (0, 4, 3), {}),
    ("conv1d", (2, 4, 5), (4, 4, 3), {"bias": (3,)}),
    ("conv1d", (2, 4, 5), (4, 4, 3), {"w_dtype": "float32"}),
    ("conv3d", (2, 3, 5, 5, 5), (4, 3, 3, 3), {}),
    ("conv3d", (2, 3, 5, 5), (4, 3, 3, 3, 3), {}),
    ("conv3d", (2, 3, 2, 5, 5), (4, 3, 3, 3, 3), {}),
    ("conv3d", (2, 3, 5, 5, 5), (3, 3, 3, 3, 3), {"dilation": (1, 0, 1)}),
    ("conv3d", (2, 4, 5, 5, 5), (6, 2, 3, 3, 3), {"groups": 4}),
    ("conv_transpose1d", (2, 4, 5), (3, 4, 3), {}),
    ("conv_transpose1d", (2, 4, 5), (4, 4, 3), {"groups": 3}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), {"bias": (4,)}),
    ("conv_transpose1d", (5,), (4, 3, 3), {}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), {"padding": "same"}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), {"padding": 5}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), {"output_padding": 2, "stride": 2}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), {"output_padding": -1, "stride": 0}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), {"output_padding": (1, 1), "stride": 2}),
    ("conv_transpose1d", (2, 4, 5), (4, 3, 3), {"dilation": 0, "output_padding": 0}),
    ("conv_transpose2d", (2, 3, 5, 5), (3, 4, 3, 3), {"output_padding": 1}),
    ("conv_transpose2d", (2, 3, 2, 2), (3, 4, 1, 1), {"padding": 1}),
    ("conv_transpose3d", (2, 3, 5, 5, 5), (3, 4, 3, 3, 3), {"output_padding": 2, "stride": 2}),
    ("conv_transpose3d", (2, 3, 1, 5, 5), (3, 4, 3, 3, 3), {"padding": 2}),
    ("conv_transpose3d", (2, 3, 1, 5, 5), (3, 4, 3, 3, 3), {"dilation": (1, 0, 1)}),
    ("conv_transpose3d", (2, 4, 5, 5, 5), (4, 3, 3, 3), {}),
]


@pytest.mark.parametrize("fn, x, w, kw", ERRORS)
def test_conv_errors_match_torch(fn: str, x: tuple[int, ...], w: tuple[int, ...],
                                 kw: dict[str, Any]) -> None:
    def run(T: Any) -> Any:
        args = dict(kw)
        bias = args.pop("bias", None)
        w_t = _z(T, w, args.pop("w_dtype", "float64"))
        b = None if bias is None else _z(T, bias)
        return getattr(T.nn.functional, fn)(_z(T, x), w_t, b, **args)

    theirs, ours = outcome(lambda: run(torch)), outcome(lambda: run(ag))
    assert theirs[0] == "raises"
    assert ours == theirs


@pytest.mark.parametrize("name, kwargs", [
    ("Conv1d", {"groups": 3}), ("Conv3d", {"groups": 0}), ("Conv1d", {"stride": 2,
                                                                     "padding": "same"}),
    ("ConvTranspose1d", {"padding_mode": "reflect"}), ("ConvTranspose3d", {"groups": 4}),
])
def test_conv_module_errors_match_torch(name: str, kwargs: dict[str, Any]) -> None:
    theirs = outcome(lambda: getattr(torch.nn, name)(4, 6, 3, **kwargs))
    assert theirs[0] == "raises"
    assert outcome(lambda: getattr(ag.nn, name)(4, 6, 3, **kwargs)) == theirs


# ---- fold / unfold -------------------------------------------------------------------------

UNFOLD = [
    ((2, 3, 5, 6), 2, {}),
    ((2, 2, 6, 7), (2, 3), {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2)}),
    ((3, 5, 5), 3, {"padding": 1, "stride": 2}),  # unbatched
    ((0, 2, 4, 4), 2, {}),
]


@pytest.mark.parametrize("x_shape, kernel, kwargs", UNFOLD)
def test_unfold_and_fold_match_torch(x_shape: tuple[int, ...], kernel: Any,
                                     kwargs: dict[str, Any], device: str) -> None:
    xa = RNG.standard_normal(x_shape)
    cols_shape = tuple(torch.nn.functional.unfold(torch.zeros(x_shape), kernel, **kwargs).shape)
    ca = RNG.standard_normal(cols_shape)
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x = T.zeros(*x_shape, dtype=T.float64, device=dev) + t(T, dev, xa.ravel()).reshape(
            x_shape)
        c = T.zeros(*cols_shape, dtype=T.float64, device=dev) + t(T, dev, ca.ravel()).reshape(
            cols_shape)
        x.requires_grad_(), c.requires_grad_()
        cols = T.nn.functional.unfold(x, kernel, **kwargs)
        img = T.nn.functional.fold(c, x_shape[-2:], kernel, **kwargs)
        out = [cols, img]
        if xa.size:
            out += grads_of(cols, [x]) + grads_of(img, [c])
        res.append((out, type(cols.grad_fn).__name__, type(img.grad_fn).__name__))
    assert_same(res[0][0], res[1][0], **TOL)
    assert res[0][1:] == res[1][1:]


def test_fold_values_match_torch(device: str) -> None:
    ca = RNG.standard_normal((2, 12, 6))
    out = []
    for T, dev in ((ag, device), (torch, "cpu")):
        c = t(T, dev, ca, True)
        img = T.nn.functional.fold(c, (5, 6), (2, 3), dilation=(2, 1), padding=(1, 0),
                                   stride=(2, 2))
        out.append((img, grads_of(img, [c])))
    assert_same(out[0], out[1], **TOL)


def test_fold_unfold_gradgradcheck(device: str) -> None:
    x = t(ag, device, RNG.standard_normal((1, 2, 4, 5)), True)
    c = t(ag, device, RNG.standard_normal((2, 8, 6)), True)
    F = ag.nn.functional

    def unf(x: Any) -> Any:
        return F.unfold(x, 2, padding=1, stride=2) ** 2

    def fol(c: Any) -> Any:
        return F.fold(c, (3, 4), 2) ** 2

    assert ag.autograd.gradcheck(unf, (x,)) and ag.autograd.gradgradcheck(unf, (x,))
    assert ag.autograd.gradcheck(fol, (c,)) and ag.autograd.gradgradcheck(fol, (c,))


def test_fold_unfold_modules_match_torch(device: str) -> None:
    for args, kwargs in [((4, 2), {}), (((5, 6), (2, 3)), {"dilation": 2, "padding": 1})]:
        assert repr(ag.nn.Fold(*args, **kwargs)) == repr(torch.nn.Fold(*args, **kwargs))
    for args, kwargs in [((2,), {"stride": (1, 2)}), (((2, 3), 2, 1, 2), {})]:
        assert repr(ag.nn.Unfold(*args, **kwargs)) == repr(torch.nn.Unfold(*args, **kwargs))
    xa = RNG.standard_normal((2, 2, 5, 6))
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x = t(T, dev, xa)
        cols = T.nn.Unfold((2, 3), padding=1, stride=2)(x)
        res.append((cols, T.nn.Fold((5, 6), (2, 3), padding=1, stride=2)(cols)))
        assert list(T.nn.Fold(4, 2).state_dict()) == []
    assert_same(res[0], res[1], **TOL)


@pytest.mark.parametrize("fn, shape, args, kwargs", [
    ("unfold", (2, 4), (2,), {}),
    ("unfold", (1, 2, 4, 4, 4), (2,), {}),
    ("unfold", (1, 0, 3, 3), (2,), {}),
    ("unfold", (1, 2, 3, 3), (4,), {}),
    ("unfold", (1, 2, 3, 3), (2,), {"stride": 0}),
    ("unfold", (1, 2, 3, 3), (2,), {"padding": -1}),
    ("unfold", (1, 2, 3, 3), (2,), {"dilation": 0}),
    ("unfold", (1, 2, 3, 3), ((2, 2, 2),), {}),
    ("unfold", (1, 2, 3, 3), (0,), {}),
    ("fold", (1, 7, 9), (4, 2), {}),
    ("fold", (1, 8, 8), (4, 2), {}),
    ("fold", (1, 8, 9, 1), (4, 2), {}),
    ("fold", (1, 8, 9), (4, 2), {"stride": 0}),
    ("fold", (1, 8, 9), (4, 2), {"padding": -1}),
    ("fold", (1, 8, 9), (4, 2), {"dilation": 0}),
    ("fold", (1, 8, 9), ((4, 4, 4), 2), {}),
    ("fold", (1, 8, 9), (1, 2), {}),
])
def test_fold_unfold_errors_match_torch(fn: str, shape: tuple[int, ...], args: tuple[Any, ...],
                                        kwargs: dict[str, Any]) -> None:
    def run(T: Any) -> Any:
        return getattr(T.nn.functional, fn)(T.zeros(*shape), *args, **kwargs)

    theirs, ours = outcome(lambda: run(torch)), outcome(lambda: run(ag))
    assert theirs[0] == "raises"
    assert ours == theirs
