"""LayerNorm and BatchNorm against the torch oracle from identical weights: outputs, input and
parameter gradients, running statistics over several steps, eval mode, ``momentum=None``,
``affine=False``, ``track_running_stats=False``; gradcheck and gradgradcheck; reprs, state_dict
keys and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same, same_error
from tests.nn._util import copy_params, grads_of, second_grads

RNG = np.random.default_rng(5)
TOL = {"float32": {"rtol": 1e-4, "atol": 1e-5}, "float64": {"rtol": 1e-9, "atol": 1e-11}}


def _pair(shape: tuple[int, ...], dtype: str, device: str, scale: float = 2.0) -> tuple[Any, Any]:
    x = RNG.standard_normal(shape) * scale + 0.5
    xo = ag.tensor(x.tolist(), dtype=getattr(ag, dtype), device=device, requires_grad=True)
    xt = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    return xo, xt


def _randomize(ours: ag.nn.Module, theirs: torch.nn.Module) -> None:
    """Non-trivial affine parameters (the defaults are ones and zeros) in both modules."""
    with ag.no_grad():
        for p in ours.parameters():
            p.copy_(ag.tensor(RNG.standard_normal(tuple(p.shape)).tolist(), dtype=p.dtype,
                              device=p.device))
    copy_params(ours, theirs)


LAYER_NORMS: list[tuple[Any, dict[str, Any], tuple[int, ...]]] = [
    (5, {}, (4, 5)),
    ((3, 4), {}, (2, 3, 4)),
    ([4], {"eps": 1e-3}, (2, 3, 4)),
    (6, {"bias": False}, (3, 6)),
    (6, {"elementwise_affine": False}, (3, 6)),
    (5, {}, (5,)),
]


@pytest.mark.parametrize("shape_arg, kwargs, shape", LAYER_NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_matches_torch(shape_arg: Any, kwargs: dict[str, Any], shape: tuple[int, ...],
                                  dtype: str, device: str) -> None:
    ours = ag.nn.LayerNorm(shape_arg, **kwargs).to(getattr(ag, dtype))
    theirs = torch.nn.LayerNorm(shape_arg, **kwargs).to(getattr(torch, dtype))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _randomize(ours, theirs)
    ours.to(device)
    xo, xt = _pair(shape, dtype, device)
    out_o, out_t = ours(xo), theirs(xt)
    assert_same(out_o, out_t, **TOL[dtype])
    assert out_o.dtype == getattr(ag, dtype)
    assert out_o.grad_fn.name() == out_t.grad_fn.name() == "NativeLayerNormBackward0"
    assert_same(grads_of(out_o, [xo, *ours.parameters()]),
                grads_of(out_t, [xt, *theirs.parameters()]), **TOL[dtype])


def _bn_pair(cls: str, args: tuple[Any, ...], kwargs: dict[str, Any], dtype: str,
             device: str) -> tuple[Any, Any]:
    ours = getattr(ag.nn, cls)(*args, **kwargs).to(getattr(ag, dtype))
    theirs = getattr(torch.nn, cls)(*args, **kwargs).to(getattr(torch, dtype))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    _randomize(ours, theirs)
    return ours.to(device), theirs


def _compare_buffers(ours: Any, theirs: Any, tol: dict[str, float]) -> None:
    bo, bt = dict(ours.named_buffers()), dict(theirs.named_buffers())
    assert list(bo) == list(bt)
    for name, b in bt.items():
        assert bo[name].dtype.name == str(b.dtype).split(".")[1], name
        assert_same(bo[name], b, **tol)


BATCH_NORMS: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    ("BatchNorm1d", (3,), {}, (6, 3)),
    ("BatchNorm1d", (3,), {}, (4, 3, 5)),
    ("BatchNorm1d", (3,), {"momentum": None}, (5, 3)),
    ("BatchNorm1d", (3,), {"affine": False}, (4, 3, 2)),
    ("BatchNorm1d", (3,), {"track_running_stats": False}, (4, 3)),
    ("BatchNorm1d", (3,), {"bias": False, "eps": 1e-3, "momentum": 0.3}, (4, 3)),
    ("BatchNorm2d", (2,), {}, (3, 2, 4, 5)),
    ("BatchNorm2d", (2,), {"momentum": None, "affine": False}, (2, 2, 3, 3)),
    ("BatchNorm2d", (2,), {"track_running_stats": False, "affine": False}, (2, 2, 3, 1)),
    ("BatchNorm2d", (4,), {}, (1, 4, 2, 1)),
]


@pytest.mark.parametrize("cls, args, kwargs, shape", BATCH_NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_train_then_eval(cls: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                                    shape: tuple[int, ...], dtype: str, device: str) -> None:
    ours, theirs = _bn_pair(cls, args, kwargs, dtype, device)
    tol = TOL[dtype]
    for step in range(4):
        xo, xt = _pair(shape, dtype, device, scale=1.0 + step)
        out_o, out_t = ours(xo), theirs(xt)
        assert_same(out_o, out_t, **tol)
        assert out_o.grad_fn.name() == out_t.grad_fn.name() == "NativeBatchNormBackward0"
        assert_same(grads_of(out_o, [xo, *ours.parameters()], seed=step),
                    grads_of(out_t, [xt, *theirs.parameters()], seed=step), **tol)
        _compare_buffers(ours, theirs, tol)
    ours.eval()
    theirs.eval()
    xo, xt = _pair(shape, dtype, device)
    out_o, out_t = ours(xo), theirs(xt)
    assert_same(out_o, out_t, **tol)
    assert out_o.grad_fn.name() == out_t.grad_fn.name()
    assert_same(grads_of(out_o, [xo, *ours.parameters()]),
                grads_of(out_t, [xt, *theirs.parameters()]), **tol)
    _compare_buffers(ours, theirs, tol)  # eval mode leaves the running statistics alone


def test_batch_norm_running_update_formula(device: str) -> None:
    """running_var moves towards the *unbiased* batch variance; momentum=None averages."""
    x = RNG.standard_normal((5, 2))
    bn = ag.nn.BatchNorm1d(2, momentum=None, dtype=ag.float64, device=device)
    bn(ag.tensor(x.tolist(), dtype=ag.float64, device=device))
    bn(ag.tensor((2 * x).tolist(), dtype=ag.float64, device=device))
    mean = (x.mean(0) + 2 * x.mean(0)) / 2
    var = (x.var(0, ddof=1) + 4 * x.var(0, ddof=1)) / 2
    np.testing.assert_allclose(bn.running_mean.cpu().numpy(), mean, rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.cpu().numpy(), var, rtol=1e-12)
    assert bn.num_batches_tracked.item() == 2 and bn.num_batches_tracked.dtype == ag.int64


def test_functional_batch_norm_matches_torch(device: str) -> None:
    x = RNG.standard_normal((4, 3, 2))
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    rm, rv = RNG.standard_normal(3), RNG.random(3) + 0.5
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        def t(a: Any, T: Any = T, dev: str = dev) -> Any:
            return T.tensor(a.tolist(), dtype=T.float64, device=dev)
        mean, var = t(rm), t(rv)
        a = T.nn.functional.batch_norm(t(x), mean, var, t(w), t(b), training=True, momentum=0.2)
        c = T.nn.functional.batch_norm(t(x), mean, var, t(w), t(b), training=False)
        d = T.nn.functional.batch_norm(t(x), None, None, training=True)
        res.append([a, c, d, mean, var])
    assert_same(res[0], res[1], rtol=1e-10, atol=1e-12)


def test_functional_layer_norm_matches_torch(device: str) -> None:
    x = RNG.standard_normal((2, 3, 4))
    w = RNG.standard_normal((3, 4))
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        xs = T.tensor(x.tolist(), dtype=T.float64, device=dev)
        ws = T.tensor(w.tolist(), dtype=T.float64, device=dev, requires_grad=True)
        out = T.nn.functional.layer_norm(xs, (3, 4), ws, None, 1e-2)
        res.append([out, *grads_of(out, [ws]), T.nn.functional.layer_norm(xs, (4,))])
    assert_same(res[0], res[1], rtol=1e-10, atol=1e-12)


# ---- gradcheck and gradgradcheck (float64) ----------------------------------------------------

def _leaves(device: str, *shapes: tuple[int, ...]) -> list[Any]:
    return [ag.tensor(RNG.standard_normal(s).tolist(), dtype=ag.float64, device=device,
                      requires_grad=True) for s in shapes]


def test_layer_norm_gradcheck(device: str) -> None:
    x, w, b = _leaves(device, (3, 2, 4), (2, 4), (2, 4))

    def fn(x: Any, w: Any, b: Any) -> Any:
        return ag.nn.functional.layer_norm(x, (2, 4), w, b)

    assert ag.autograd.gradcheck(fn, (x, w, b))
    assert ag.autograd.gradgradcheck(fn, (x, w, b))
    assert ag.autograd.gradgradcheck(lambda x: ag.nn.functional.layer_norm(x, 4), (x,))


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_gradcheck(training: bool, device: str) -> None:
    x, w, b = _leaves(device, (4, 3, 2), (3,), (3,))
    rm = ag.tensor(RNG.standard_normal(3).tolist(), dtype=ag.float64, device=device)
    rv = ag.tensor((RNG.random(3) + 0.5).tolist(), dtype=ag.float64, device=device)

    def fn(x: Any, w: Any, b: Any) -> Any:
        # NOTE: momentum 0 keeps the running statistics fixed across gradcheck's many calls.
        return ag.nn.functional.batch_norm(x, rm, rv, w, b, training=training, momentum=0.0)

    assert ag.autograd.gradcheck(fn, (x, w, b))
    assert ag.autograd.gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("which", ["layer", "batch"])
def test_norm_second_derivatives_match_torch(which: str, device: str) -> None:
    """Hessian-vector products through the normalisation (a nonlinear loss on top)."""
    x = RNG.standard_normal((4, 3, 2))
    w = RNG.standard_normal(3)
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        xs = T.tensor(x.tolist(), dtype=T.float64, device=dev, requires_grad=True)
        ws = T.tensor(w.tolist(), dtype=T.float64, device=dev, requires_grad=True)

        def loss(T: Any = T, xs: Any = xs, ws: Any = ws) -> Any:
            if which == "layer":
                out = T.nn.functional.layer_norm(xs.transpose(1, 2), (3,), ws)
            else:
                out = T.nn.functional.batch_norm(xs, None, None, ws, training=True)
            return (out * out * out).sum()

        # NOTE: a fresh forward for each: the second grad frees the graph.
        res.append([second_grads(loss(), xs), second_grads(loss(), ws, seed=3)])
    assert_same(res[0], res[1], rtol=1e-8, atol=1e-10)


# ---- errors -----------------------------------------------------------------------------------

ERRORS = [
    lambda T, d: T.nn.BatchNorm1d(3)(T.randn(1, 3)),
    lambda T, d: T.nn.BatchNorm2d(3)(T.randn(1, 3, 1, 1)),
    lambda T, d: T.nn.BatchNorm1d(3)(T.randn(2, 3, 4, 5)),
    lambda T, d: T.nn.BatchNorm2d(3)(T.randn(2, 3)),
    lambda T, d: T.nn.BatchNorm1d(3)(T.randn(4, 2)),
    lambda T, d: T.nn.functional.batch_norm(T.randn(4, 3), T.zeros(3), None),
    lambda T, d: T.nn.functional.batch_norm(T.randn(4, 3), None, None),
    lambda T, d: T.nn.functional.batch_norm(T.randn(4, 3), None, T.ones(3), training=True),
    lambda T, d: T.nn.functional.batch_norm(T.randn(4, 3), T.zeros(3), T.ones(3), None, T.ones(4)),
    lambda T, d: T.nn.functional.batch_norm(T.randn(4, 3), T.zeros(3), T.ones(3), T.ones(2)),
    lambda T, d: T.nn.functional.layer_norm(T.randn(2, 3), [4]),
    lambda T, d: T.nn.functional.layer_norm(T.randn(2, 3), [2, 3], T.randn(3)),
    lambda T, d: T.nn.LayerNorm((2, 3))(T.randn(3, 2)),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_norm_errors(fn: Any, device: str) -> None:
    same_error(fn, device)


def test_batch_norm_eval_without_running_stats_uses_batch(device: str) -> None:
    ours = ag.nn.BatchNorm1d(2, track_running_stats=False).to(device).eval()
    theirs = torch.nn.BatchNorm1d(2, track_running_stats=False).eval()
    xo, xt = _pair((5, 2), "float32", device)
    assert_same(ours(xo), theirs(xt), **TOL["float32"])
    assert ours.running_mean is None and list(ours.state_dict()) == ["weight", "bias"]
