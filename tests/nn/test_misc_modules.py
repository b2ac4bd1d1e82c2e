"""normalize, cosine_similarity, pairwise_distance, pdist, bilinear, pixel_(un)shuffle,
channel_shuffle and their modules, Unflatten, ParameterList / ParameterDict / Container against
the torch oracle: values, gradients (float64, 1e-10 relative), grad_fn names, layouts, reprs,
state_dict keys and errors."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import both, same_error
from tests.nn._util import copy_params, grads_of, second_grads, t

RNG = np.random.default_rng(1)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))


def _F(T: Any) -> Any:
    return T.nn.functional


PAIR = {
    "normalize": lambda F, a, b: F.normalize(a) + 0 * b,
    "normalize_p1_dim0": lambda F, a, b: F.normalize(a, 1.0, 0) + 0 * b,
    "normalize_tiny": lambda F, a, b: F.normalize(a * 1e-14, eps=1e-12) + 0 * b,
    "cosine": lambda F, a, b: F.cosine_similarity(a, b),
    "cosine_dim0_eps": lambda F, a, b: F.cosine_similarity(a * 1e-5, b, 0, 1e-3),
    "cosine_broadcast": lambda F, a, b: F.cosine_similarity(a[:, None], b, -1),
    "cosine_1d": lambda F, a, b: F.cosine_similarity(a[0], b[0], 0),
    "pairwise": lambda F, a, b: F.pairwise_distance(a, b),
    "pairwise_p3_keepdim": lambda F, a, b: F.pairwise_distance(a, b, 3.0, keepdim=True),
    "pairwise_p1": lambda F, a, b: F.pairwise_distance(a, b[0], 1.0),
    "pairwise_1d": lambda F, a, b: F.pairwise_distance(a[0], b[0]),
    "pdist": lambda F, a, b: F.pdist(a + b),
}


@pytest.mark.parametrize("name", list(PAIR))
def test_pair_functions(name: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        a, b = t(T, dev, A, grad=True), t(T, dev, B, grad=True)
        out = PAIR[name](_F(T), a, b)
        return out, grads_of(out, [a, b]), out.grad_fn.name()

    both(run, device, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["normalize", "cosine", "pairwise"])
def test_pair_second_derivative(name: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        a, b = t(T, dev, A, grad=True), t(T, dev, B)
        return second_grads(PAIR[name](_F(T), a, b), a)

    both(run, device, rtol=1e-8, atol=1e-10)


def test_normalize_out(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        out = T.empty(3, 4, dtype=T.float64, device=dev)
        r = _F(T).normalize(t(T, dev, A), out=out)
        assert r is out
        return out

    both(run, device, rtol=1e-12)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("lead", [(3,), (2, 3), ()])
def test_bilinear(bias: bool, lead: tuple[int, ...], device: str) -> None:
    x1, x2 = RNG.standard_normal(lead + (2,)), RNG.standard_normal(lead + (4,))
    w, b = RNG.standard_normal((5, 2, 4)), RNG.standard_normal(5)

    def run(T: Any, dev: str) -> Any:
        args = [t(T, dev, x1, grad=True), t(T, dev, x2, grad=True), t(T, dev, w, grad=True)]
        if bias:
            args.append(t(T, dev, b, grad=True))
        out = _F(T).bilinear(*args)
        return out, grads_of(out, args), out.grad_fn.name()

    both(run, device, rtol=1e-10, atol=1e-12)


SHUFFLE = {
    "pixel_shuffle": lambda F, x: F.pixel_shuffle(x.reshape(2, 8, 3, 1), 2),
    "pixel_shuffle_3d": lambda F, x: F.pixel_shuffle(x.reshape(12, 2, 2)[:9], 3),
    "pixel_shuffle_5d": lambda F, x: F.pixel_shuffle(x.reshape(2, 1, 4, 2, 3), 2),
    "pixel_unshuffle": lambda F, x: F.pixel_unshuffle(x.reshape(2, 3, 4, 2), 2),
    "pixel_unshuffle_strided": lambda F, x: F.pixel_unshuffle(x.reshape(3, 4, 4).transpose(1, 2), 2),
    "channel_shuffle": lambda F, x: F.channel_shuffle(x.reshape(2, 6, 4), 3),
    "channel_shuffle_4d": lambda F, x: F.channel_shuffle(x.reshape(1, 6, 2, 4).transpose(2, 3), 2),
}


@pytest.mark.parametrize("name", list(SHUFFLE))
def test_shuffles(name: str, device: str) -> None:
    x = RNG.standard_normal(48)

    def run(T: Any, dev: str) -> Any:
        xt = t(T, dev, x, grad=True)
        out = SHUFFLE[name](_F(T), xt)
        return out, grads_of(out, [xt]), out.grad_fn.name(), out.stride()

    both(run, device)


def test_shuffle_double_backward(device: str) -> None:
    x = t(ag, device, RNG.standard_normal((1, 4, 2, 2)), grad=True)
    F = ag.nn.functional
    assert ag.autograd.gradgradcheck(lambda a: F.pixel_shuffle(a, 2).pow(2), (x,))
    assert ag.autograd.gradgradcheck(lambda a: F.channel_shuffle(a, 2).pow(2), (x,))
    assert ag.autograd.gradcheck(lambda a, b: F.cosine_similarity(a, b), (x, x.detach() + 1))


ERRORS = {
    "ps_2d": lambda T, d: _F(T).pixel_shuffle(T.ones(2, 5, device=d), 2),
    "ps_channels": lambda T, d: _F(T).pixel_shuffle(T.ones(5, 2, 2, device=d), 2),
    "ps_factor": lambda T, d: _F(T).pixel_shuffle(T.ones(4, 2, 2, device=d), 0),
    "pu_height": lambda T, d: _F(T).pixel_unshuffle(T.ones(4, 3, 2, device=d), 2),
    "pu_width": lambda T, d: _F(T).pixel_unshuffle(T.ones(4, 2, 3, device=d), 2),
    "pu_factor": lambda T, d: _F(T).pixel_unshuffle(T.ones(4, 2, 2, device=d), -1),
    "pu_2d": lambda T, d: _F(T).pixel_unshuffle(T.ones(2, 5, device=d), 2),
    "cs_divisible": lambda T, d: _F(T).channel_shuffle(T.ones(1, 5, 2, device=d), 2),
    "cs_groups": lambda T, d: _F(T).channel_shuffle(T.ones(1, 4, 2, device=d), 0),
    "cs_2d": lambda T, d: _F(T).channel_shuffle(T.ones(2, 5, device=d), 2),
    "bil_in2": lambda T, d: _F(T).bilinear(T.ones(2, 3, device=d), T.ones(2, 4, device=d),
                                           T.ones(5, 3, 3, device=d)),
    "bil_in1": lambda T, d: _F(T).bilinear(T.ones(2, 3, device=d), T.ones(2, 4, device=d),
                                           T.ones(5, 2, 4, device=d)),
    "bil_batch": lambda T, d: _F(T).bilinear(T.ones(2, 3, device=d), T.ones(3, 4, device=d),
                                             T.ones(5, 3, 4, device=d)),
    "bil_bias": lambda T, d: _F(T).bilinear(T.ones(2, 3, device=d), T.ones(2, 4, device=d),
                                            T.ones(5, 3, 4, device=d), T.ones(4, device=d)),
    "cos_shape": lambda T, d: _F(T).cosine_similarity(T.ones(2, 3, device=d), T.ones(2, 4, device=d)),
    "cos_int": lambda T, d: _F(T).cosine_similarity(T.ones(2, 3, dtype=T.int64, device=d),
                                                    T.ones(2, 3, dtype=T.int64, device=d)),
    "pd_shape": lambda T, d: _F(T).pairwise_distance(T.ones(2, 3, device=d), T.ones(2, 4, device=d)),
    "unflatten_type": lambda T, d: T.nn.Unflatten(1, 5),
    "unflatten_elem": lambda T, d: T.nn.Unflatten(1, (2, 2.5)),
    "plist_call": lambda T, d: T.nn.ParameterList()(1),
    "pdict_call": lambda T, d: T.nn.ParameterDict()(1),
    "pdict_key": lambda T, d: T.nn.ParameterDict().__setitem__(1, T.ones(1)),
    "plist_index": lambda T, d: T.nn.ParameterList([T.nn.Parameter(T.ones(1))])[3],
    "plist_extend": lambda T, d: T.nn.ParameterList().extend(T.ones(2)),
    "pdict_update": lambda T, d: T.nn.ParameterDict().update([("a", T.ones(1), 1)]),
    "pdict_update_elem": lambda T, d: T.nn.ParameterDict().update([1]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name: str, device: str) -> None:
    same_error(ERRORS[name], device)


# ---- modules ---------------------------------------------------------------------------------

def test_bilinear_module(device: str) -> None:
    ag.manual_seed(0)
    ours = ag.nn.Bilinear(2, 3, 4, device=device, dtype=ag.float64)
    theirs = torch.nn.Bilinear(2, 3, 4, dtype=torch.float64)
    assert repr(ours) == repr(theirs)
    assert repr(ag.nn.Bilinear(2, 3, 4, bias=False)) == repr(torch.nn.Bilinear(2, 3, 4, False))
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    w = ours.weight.detach().cpu().numpy()
    assert np.abs(w).max() <= 1 / np.sqrt(2) and w.std() > 0.1  # U(-1/sqrt(in1), 1/sqrt(in1))
    copy_params(ours, theirs)
    x1, x2 = RNG.standard_normal((5, 2)), RNG.standard_normal((5, 3))

    def run(T: Any, dev: str) -> Any:
        m = ours if T is ag else theirs
        a, b = t(T, dev, x1, grad=True), t(T, dev, x2, grad=True)
        out = m(a, b)
        return out, grads_of(out, [a, b, *m.parameters()])

    both(run, device, rtol=1e-10, atol=1e-12)


MODULES = {
    "CosineSimilarity": (lambda nn: nn.CosineSimilarity(0, 1e-6), (3, 4)),
    "PairwiseDistance": (lambda nn: nn.PairwiseDistance(1.5, keepdim=True), (3, 4)),
    "PixelShuffle": (lambda nn: nn.PixelShuffle(2), (1, 4, 2, 3)),
    "PixelUnshuffle": (lambda nn: nn.PixelUnshuffle(2), (1, 1, 4, 6)),
    "ChannelShuffle": (lambda nn: nn.ChannelShuffle(2), (1, 4, 2, 3)),
    "Unflatten": (lambda nn: nn.Unflatten(1, (2, 3)), (4, 6)),
    "Unflatten_list": (lambda nn: nn.Unflatten(-1, [3, 2]), (4, 6)),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_modules(name: str, device: str) -> None:
    make, shape = MODULES[name]
    ours, theirs = make(ag.nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    x = RNG.standard_normal(shape)

    def run(T: Any, dev: str) -> Any:
        m = ours if T is ag else theirs
        xt = t(T, dev, x, grad=True)
        args = (xt, xt.flip(0) + 1) if name in ("CosineSimilarity", "PairwiseDistance") else (xt,)
        out = m(*args)
        return out, grads_of(out, [xt])

    both(run, device, rtol=1e-10, atol=1e-12)


def _plist(T: Any, dev: str) -> Any:
    return T.nn.ParameterList([T.nn.Parameter(T.ones(2, device=dev)), T.zeros(3, device=dev), 5])


def test_parameter_list(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        pl = _plist(T, dev)
        pl.append(T.ones(1, device=dev))
        pl += [T.zeros(2, 2, device=dev)]
        pl[0] = T.full((2,), 3.0, device=dev)
        assert isinstance(pl[1], T.nn.Parameter) and pl[2] == 5 and pl[-1].shape == (2, 2)
        sliced = pl[1:4]
        assert isinstance(sliced, T.nn.ParameterList) and len(sliced) == 3
        return (len(pl), list(pl.state_dict()), [tuple(p.shape) for p in pl.parameters()],
                repr(pl).replace(" (cuda:0)", ""), [n for n, _ in pl.named_parameters()],
                pl[0], "0" in dir(pl))

    both(run, device)


def test_parameter_dict(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        pd = T.nn.ParameterDict({"b": T.ones(2, 3, device=dev), "a": T.zeros(1, device=dev)})
        pd["c"] = T.nn.Parameter(T.ones(1, device=dev))
        pd.update(OrderedDict([("z", T.ones(1, device=dev)), ("y", 3)]))
        pd.setdefault("d", T.ones(4, device=dev))
        popped = pd.pop("a")
        last = pd.popitem()
        del pd["c"]
        merged = pd | T.nn.ParameterDict({"m": T.ones(1, device=dev)})
        assert isinstance(pd["b"], T.nn.Parameter) and "z" in pd and "a" not in pd
        assert pd.get("nope", 7) == 7
        copy = pd.copy()
        assert copy["b"] is pd["b"]
        return (list(pd.keys()), list(reversed(pd)), len(pd), list(pd.state_dict()),
                [tuple(v.shape) if hasattr(v, "shape") else v for v in pd.values()],
                tuple(popped.shape), last[0], list(merged.keys()),
                list(pd.fromkeys(["p", "q"]).keys()))

    both(run, device)
    both(lambda T, dev: repr(T.nn.ParameterDict({"a": T.nn.Parameter(T.ones(2, 3)),
                                                   "b": T.zeros(1), "c": "x"})), "cpu")


def test_shuffle_empty(device: str) -> None:
    both(lambda T, dev: _F(T).pixel_shuffle(T.ones(0, 4, 1, 2, device=dev), 2), device)
    both(lambda T, dev: _F(T).channel_shuffle(T.ones(0, 4, 1, device=dev), 2), device)


@pytest.mark.filterwarnings("ignore:`nn.Container` is deprecated:FutureWarning")
def test_container(device: str) -> None:
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        ag.nn.Container()

    def run(T: Any, dev: str) -> Any:
        c = T.nn.Container(a=T.nn.ReLU(), b=T.nn.Linear(2, 3))
        return repr(c), [n for n, _ in c.named_parameters()]

    both(run, device)
