"""nn.utils beyond clipping: clip_grads_with_norm_, the deprecated clip_grad_norm, conv/linear +
batch-norm fusion, weight_norm (hook API), parametrize (register/remove/cached/is_parametrized)
and parametrizations.weight_norm, against torch."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests._compare import outcome
from tests.nn._util import copy_params, t

RNG = np.random.default_rng(7)


def _np(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy()


def _linears(device: str, n_in: int, n_out: int) -> list[tuple[Any, str, Any]]:
    """(library, device, Linear) for ours and torch, torch's with our weights."""
    ours = ag.nn.Linear(n_in, n_out).double().to(device)
    ref = torch.nn.Linear(n_in, n_out).double()
    copy_params(ours, ref)
    return [(ag, device, ours), (torch, "cpu", ref)]


def test_clip_grads_with_norm_and_deprecated_alias(device: str) -> None:
    grads = [RNG.standard_normal((3, 4)), RNG.standard_normal(5) * 10]
    out = []
    for T, dev in ((torch, "cpu"), (ag, device)):
        ps = [t(T, dev, np.zeros_like(g), grad=True) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = t(T, dev, g)
        total = T.nn.utils.get_total_norm([p.grad for p in ps])
        T.nn.utils.clip_grads_with_norm_(ps, 2.0, total)
        with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
            total2 = T.nn.utils.clip_grad_norm(ps, 1.0, norm_type=1.0)
        with pytest.warns(UserWarning, match="empty generator"):
            T.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        out.append([_np(total), _np(total2)] + [_np(p.grad) for p in ps])
    for a, b in zip(out[1], out[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def _bn(T: Any, cls: str, n: int, dev: str) -> Any:
    bn = getattr(T.nn, cls)(n).double().to(dev)
    with T.no_grad():
        bn.running_mean.copy_(t(T, dev, np.linspace(-1, 1, n)))
        bn.running_var.copy_(t(T, dev, np.linspace(0.5, 2, n)))
        bn.weight.copy_(t(T, dev, np.linspace(0.3, 1.7, n)))
        bn.bias.copy_(t(T, dev, np.linspace(-0.2, 0.4, n)))
    return bn.eval()


@pytest.mark.parametrize("bias", [True, False])
def test_fuse_conv_bn_eval(device: str, bias: bool) -> None:
    x = RNG.standard_normal((2, 3, 6, 6))
    outs = []
    convs = []
    for T, dev in ((ag, device), (torch, "cpu")):
        conv = T.nn.Conv2d(3, 4, 3, bias=bias).double().to(dev).eval()
        convs.append(conv)
        if T is torch:
            copy_params(convs[0], conv)
        bn = _bn(T, "BatchNorm2d", 4, dev)
        fused = T.nn.utils.fuse_conv_bn_eval(conv, bn)
        xi = t(T, dev, x)
        ref = bn(conv(xi))
        assert fused is not conv and fused.bias is not None and fused.weight.requires_grad
        outs.append((_np(fused(xi)), _np(ref), _np(fused.weight), _np(fused.bias)))
    np.testing.assert_allclose(outs[0][0], outs[0][1], rtol=1e-12, atol=1e-12)
    for a, b in zip(outs[0][2:], outs[1][2:]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_fuse_linear_bn_eval_and_errors(device: str) -> None:
    x = RNG.standard_normal((5, 3))
    lin = ag.nn.Linear(3, 4).double().to(device).eval()
    bn = _bn(ag, "BatchNorm1d", 4, device)
    fused = ag.nn.utils.fuse_linear_bn_eval(lin, bn)
    xi = t(ag, device, x)
    np.testing.assert_allclose(_np(fused(xi)), _np(bn(lin(xi))), rtol=1e-12, atol=1e-12)

    def errors(T: Any) -> dict[str, Any]:
        lin = T.nn.Linear(3, 4)
        return {
            "train": outcome(lambda: T.nn.utils.fuse_linear_bn_eval(lin, T.nn.BatchNorm1d(4))),
            "features": outcome(lambda: T.nn.utils.fuse_linear_bn_eval(
                lin.eval(), T.nn.BatchNorm1d(3).eval())),
            "conv_train": outcome(lambda: T.nn.utils.fuse_conv_bn_eval(
                T.nn.Conv2d(1, 2, 1), T.nn.BatchNorm2d(2).eval())),
        }

    assert errors(ag) == errors(torch)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_hook_api(device: str, dim: Any) -> None:
    x = RNG.standard_normal((2, 3))
    res = []
    for T, dev, lin in _linears(device, 3, 4):
        with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
            T.nn.utils.weight_norm(lin, dim=dim)
        names = [n for n, _ in lin.named_parameters()]
        with T.no_grad():
            lin.weight_g.mul_(1.5)  # the hook recomputes weight from g and v
        xi = t(T, dev, x, grad=True)
        out = lin(xi)
        grads = T.autograd.grad(out.sum(), [lin.weight_g, lin.weight_v, xi])
        T.nn.utils.remove_weight_norm(lin)
        res.append((names, sorted(n for n, _ in lin.named_parameters()), _np(out),
                    [_np(g) for g in grads], _np(lin.weight)))
    ours, ref = res
    assert ours[:2] == ref[:2]
    np.testing.assert_allclose(ours[2], ref[2], rtol=1e-12)
    for a, b in zip(ours[3], ref[3]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours[4], ref[4], rtol=1e-12)


def _hook_errors(T: Any) -> dict[str, Any]:
    def twice() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            T.nn.utils.weight_norm(T.nn.utils.weight_norm(T.nn.Linear(2, 2)))

    return {"twice": outcome(twice),
            "remove": outcome(lambda: T.nn.utils.remove_weight_norm(T.nn.Linear(2, 2), "bias"))}


def test_weight_norm_errors() -> None:
    ours, ref = _hook_errors(ag), _hook_errors(torch)
    assert ours["twice"] == ref["twice"]
    assert ours["remove"][:2] == ref["remove"][:2]


class Symmetric:
    """``X -> triu(X) + triu(X, 1).T`` as a module of either library."""

    @staticmethod
    def make(T: Any) -> Any:
        class Sym(T.nn.Module):
            def forward(self, x: Any) -> Any:
                return x.triu() + x.triu(1).transpose(-1, -2)

            def right_inverse(self, a: Any) -> Any:
                return a.triu()

        return Sym()


class Scale:
    @staticmethod
    def make(T: Any, k: float) -> Any:
        class Sc(T.nn.Module):
            def forward(self, x: Any) -> Any:
                return x * k

            def right_inverse(self, a: Any) -> Any:
                return a / k

        return Sc()


def test_register_parametrization_matches_torch(device: str) -> None:
    x = RNG.standard_normal((2, 3))
    res = []
    for T, dev, lin in _linears(device, 3, 3):
        P = T.nn.utils.parametrize
        assert not P.is_parametrized(lin)
        P.register_parametrization(lin, "weight", Symmetric.make(T))
        P.register_parametrization(lin, "weight", Scale.make(T, 2.0))
        assert P.is_parametrized(lin) and P.is_parametrized(lin, "weight")
        assert not P.is_parametrized(lin, "bias")
        assert type(lin).__name__ == "ParametrizedLinear"
        assert P.type_before_parametrizations(lin) is T.nn.Linear
        names = [n for n, _ in lin.named_parameters()]
        keys = list(lin.state_dict())
        w = _np(lin.weight)
        xi = t(T, dev, x)
        out = lin(xi)
        g = T.autograd.grad(out.sum(), [lin.parametrizations.weight.original])[0]
        with P.cached():
            assert lin.weight is lin.weight
        assert lin.weight is not lin.weight
        # assignment goes through the right inverses
        lin.weight = t(T, dev, np.arange(9.0).reshape(3, 3))
        assigned = (_np(lin.parametrizations.weight.original), _np(lin.weight))
        P.remove_parametrizations(lin, "weight", leave_parametrized=True)
        assert type(lin) is T.nn.Linear and not hasattr(lin, "parametrizations")
        res.append((names, keys, w, _np(out), _np(g), assigned, _np(lin.weight),
                    [n for n, _ in lin.named_parameters()]))
    ours, ref = res
    assert ours[0] == ref[0] and ours[1] == ref[1] and ours[7] == ref[7]
    for a, b in zip([*ours[2:5], *ours[5], ours[6]], [*ref[2:5], *ref[5], ref[6]]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_parametrizations_weight_norm(device: str) -> None:
    x = RNG.standard_normal((2, 5, 4))
    res = []
    for T, dev, lin in _linears(device, 4, 3):
        T.nn.utils.parametrizations.weight_norm(lin)
        names = [n for n, _ in lin.named_parameters()]
        shapes = [tuple(p.shape) for p in lin.parameters()]
        xi = t(T, dev, x)
        out = lin(xi)
        p = lin.parametrizations.weight
        grads = T.autograd.grad(out.sum(), [p.original0, p.original1])
        res.append((names, shapes, _np(out), [_np(g) for g in grads], _np(p.original0)))
        T.nn.utils.parametrize.remove_parametrizations(lin, "weight")
    ours, ref = res
    assert ours[:2] == ref[:2]
    np.testing.assert_allclose(ours[2], ref[2], rtol=1e-12)
    for a, b in zip([*ours[3], ours[4]], [*ref[3], ref[4]]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def _parametrize_errors(T: Any) -> dict[str, Any]:
    P = T.nn.utils.parametrize

    class Shrink(T.nn.Module):
        def forward(self, x: Any) -> Any:
            return x[:1]

    class ToFloat(T.nn.Module):
        def forward(self, x: Any) -> Any:
            return x.float()

    class NoInverse(T.nn.Module):
        def forward(self, x: Any) -> Any:
            return x

    def assign() -> None:
        lin = T.nn.Linear(2, 2)
        P.register_parametrization(lin, "weight", NoInverse())
        lin.weight = T.zeros(2, 2)

    return {
        "missing": outcome(lambda: P.register_parametrization(T.nn.Linear(2, 2), "w",
                                                              NoInverse())),
        "shape": outcome(lambda: P.register_parametrization(T.nn.Linear(2, 2), "weight",
                                                            Shrink())),
        "dtype": outcome(lambda: P.register_parametrization(T.nn.Linear(2, 2).double(),
                                                            "weight", ToFloat())),
        "remove": outcome(lambda: P.remove_parametrizations(T.nn.Linear(2, 2), "weight")),
        "assign": outcome(assign),
    }


def test_parametrize_errors_match_torch() -> None:
    ours, ref = _parametrize_errors(ag), _parametrize_errors(torch)
    for key in ref:
        assert ours[key][:2] == ref[key][:2], key
        if key not in ("missing", "remove"):  # those print the module
            assert ours[key] == ref[key], key
