"""Spectral norm (hook API and parametrization), orthogonal and the weight_norm state_dict
compatibility against the torch oracle: the same weights and power-iteration vectors are copied
across (state_dict), then forwards in train and eval mode, gradients, buffers, state_dict
layouts and versions, removal, errors."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same, same_error

RNG = np.random.default_rng(17)
TOL = {"rtol": 1e-11, "atol": 1e-12}


def _to_torch(sd: Any) -> Any:
    out = OrderedDict((k, torch.from_numpy(np.array(v.cpu().numpy()))) for k, v in sd.items())
    out._metadata = sd._metadata  # type: ignore[attr-defined]
    return out


def _to_ours(sd: Any, device: str) -> Any:
    out = OrderedDict((k, ag.tensor(v.numpy().tolist(), dtype=ag.float64, device=device))
                      for k, v in sd.items())
    if hasattr(sd, "_metadata"):
        out._metadata = sd._metadata  # type: ignore[attr-defined]
    return out


def _pair(T: Any, kind: str) -> Any:
    if kind == "linear":
        return T.nn.Linear(4, 3).double()
    if kind == "conv":
        return T.nn.Conv2d(2, 3, 2).double()
    return T.nn.ConvTranspose2d(2, 3, 2).double()


def _x(kind: str) -> np.ndarray:
    return RNG.standard_normal((2, 4) if kind == "linear" else (1, 2, 3, 3))


@pytest.mark.parametrize("kind", ["linear", "conv", "convT"])
@pytest.mark.parametrize("api", ["hook", "param"])
def test_spectral_norm_matches_torch(kind: str, api: str, device: str) -> None:
    ours, theirs = _pair(ag, kind), _pair(torch, kind)
    fn = {"hook": lambda T: T.nn.utils.spectral_norm,
          "param": lambda T: T.nn.utils.parametrizations.spectral_norm}[api]
    fn(ag)(ours, n_power_iterations=2)
    fn(torch)(theirs, n_power_iterations=2)
    sd = ours.state_dict()
    assert [(k, tuple(v.shape)) for k, v in sd.items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert sd._metadata == theirs.state_dict()._metadata  # type: ignore[attr-defined]
    theirs.load_state_dict(_to_torch(sd))
    ours.to(device)
    res = []
    xs = [_x(kind) for _ in range(3)]
    for T, dev, mod in ((ag, device, ours), (torch, "cpu", theirs)):
        vals = []
        for training, xa in zip((True, True, False), xs):
            mod.train(training)
            x = T.tensor(xa.tolist(), dtype=T.float64, device=dev)
            out = mod(x)
            params = [p for n, p in mod.named_parameters() if "weight" in n]
            vals += [out, *T.autograd.grad(out.sum(), params)]
        vals += list(mod.state_dict().values())
        res.append(vals)
    assert_same(res[0], res[1], **TOL)


def test_spectral_norm_hook_remove_and_errors(device: str) -> None:
    m = ag.nn.utils.spectral_norm(ag.nn.Linear(4, 3, device=device))
    assert isinstance(m.weight, ag.Tensor) and "weight" not in dict(m.named_parameters())
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        ag.nn.utils.spectral_norm(m)
    ag.nn.utils.remove_spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]  # as PyTorch: re-registered last
    assert not m._forward_pre_hooks and not m._state_dict_hooks and \
        not m._load_state_dict_pre_hooks
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        ag.nn.utils.remove_spectral_norm(m)


def test_spectral_norm_loads_unversioned_checkpoint(device: str) -> None:
    """A state_dict without metadata that stores ``weight`` (PyTorch < 1.1): ``weight_v`` is
    solved from ``weight_orig / weight`` and ``weight_u``."""
    theirs = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3).double())
    theirs(torch.randn(2, 4, dtype=torch.float64))
    old = OrderedDict((k, v) for k, v in theirs.state_dict().items() if k != "weight_v")
    old["weight"] = theirs.weight.detach()
    ours = ag.nn.utils.spectral_norm(ag.nn.Linear(4, 3).double()).to(device)
    ours.load_state_dict(_to_ours(old, device))
    ref = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3).double())
    ref.load_state_dict(old)
    assert_same(ours.weight_v, ref.weight_v, rtol=1e-9, atol=1e-11)


ORTH = [(m, t, shape) for m in ("matrix_exp", "cayley", "householder") for t in (True, False)
        for shape in ((4, 4), (3, 5), (5, 3))]


@pytest.mark.parametrize("orth_map, triv, shape", ORTH)
def test_orthogonal_matches_torch(orth_map: str, triv: bool, shape: tuple[int, int],
                                  device: str) -> None:
    w = RNG.standard_normal(shape)
    new = RNG.standard_normal(shape) * 0.3
    if orth_map == "householder":  # NOTE: the map reads the diagonal's integer part as signs
        np.fill_diagonal(new, [1, -1, 1][:min(shape)])
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        mod = T.nn.Linear(shape[1], shape[0], bias=False).double().to(dev)
        with T.no_grad():
            mod.weight.copy_(T.tensor(w.tolist(), dtype=T.float64))
        T.nn.utils.parametrizations.orthogonal(mod, orthogonal_map=orth_map,
                                               use_trivialization=triv)
        if T is ag:
            sd = _to_torch(mod.state_dict())
        else:
            mod.load_state_dict(sd)  # the same base (random for non-square)
        orig = mod.parametrizations.weight.original
        start = [mod.weight, orig.detach().clone()]
        with T.no_grad():
            orig.copy_(T.tensor(new.tolist(), dtype=T.float64))
        W = mod.weight
        (g,) = T.autograd.grad((W * T.tensor(w.tolist(), dtype=T.float64, device=dev)).sum(),
                               orig)
        res.append([*start, W, g, *mod.state_dict().values()])
    # NOTE: starting from a non-orthogonal weight, torch's householder right_inverse keeps its
    # QR's R above the diagonal: ours is the same decomposition (same LAPACK routine).
    assert_same(res[0], res[1], rtol=1e-9, atol=1e-10)
    W = res[0][2].detach()
    gram = W.mT @ W if shape[0] >= shape[1] else W @ W.mT
    assert np.allclose(gram.cpu().numpy(), np.eye(min(shape)), atol=1e-12)


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
def test_weight_norm_parametrization_loads_old_keys(device: str) -> None:
    old = ag.nn.utils.weight_norm(ag.nn.Linear(4, 3).double())
    new = ag.nn.utils.parametrizations.weight_norm(ag.nn.Linear(4, 3).double())
    keys = list(new.state_dict())
    new.load_state_dict(old.state_dict())
    assert list(new.state_dict()) == keys
    x = ag.randn(2, 4, dtype=ag.float64)
    assert np.allclose(new(x).detach().numpy(), old(x).detach().numpy(), rtol=1e-13, atol=1e-14)
    theirs = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3).double())
    theirs.load_state_dict(_to_torch(old.state_dict()))
    assert_same(new.state_dict()["parametrizations.weight.original1"],
                theirs.state_dict()["parametrizations.weight.original1"], rtol=0, atol=0)


ERRORS = [
    lambda T, d: T.nn.utils.spectral_norm(T.nn.Linear(3, 2), n_power_iterations=0),
    lambda T, d: T.nn.utils.parametrizations.spectral_norm(T.nn.Linear(3, 2), dim=2),
    lambda T, d: T.nn.utils.parametrizations.spectral_norm(T.nn.Linear(3, 2), name="w"),
    lambda T, d: T.nn.utils.parametrizations.spectral_norm(T.nn.Linear(3, 2),
                                                           n_power_iterations=0),
    lambda T, d: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 2), orthogonal_map="x"),
    lambda T, d: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 2), name="bias"),
    lambda T, d: T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 2), name="w"),
    lambda T, d: setattr(T.nn.utils.parametrizations.orthogonal(T.nn.Linear(3, 3)), "weight",
                         T.eye(2)),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_spectral_orthogonal_errors(fn: Any, device: str) -> None:
    same_error(fn, device)
