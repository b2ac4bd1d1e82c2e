"""Optimizers against torch.optim: 100 training steps from identical float32 weights (each framework
differentiating with its own autograd), the update formulas on shared gradients, state_dict round
trips, zero_grad, parameter groups and error messages."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests._compare import outcome

from ._problem import INIT, check_state_dict_round_trip, loss_fn, make_params

# (optimizer, options); each runs 100 steps in both frameworks.
CASES = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.02, momentum=0.9, dampening=0.1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("RMSprop", dict(lr=0.001)),
    ("RMSprop", dict(lr=0.001, centered=True)),
    ("RMSprop", dict(lr=0.001, centered=True, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.001, momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr=0.05)),
    ("Adagrad", dict(lr=0.05, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CASES]


def _train(lib: Any, name: str, kw: dict[str, Any], device: str, steps: int,
           groups: bool = False) -> list[np.ndarray]:
    """``steps`` steps of zero_grad / backward / step; ``groups`` splits the parameters into two
    groups, the second with a third of the learning rate. ``maximize`` runs on the negated loss."""
    params = make_params(lib, device)
    extra = {"foreach": False} if lib is torch else {}
    if groups:
        spec = [{"params": params[:2]}, {"params": params[2:], "lr": kw["lr"] / 3}]
        opt = getattr(lib.optim, name)(spec, **kw, **extra)
    else:
        opt = getattr(lib.optim, name)(params, **kw, **extra)
    sign = -1.0 if kw.get("maximize") else 1.0
    for _ in range(steps):
        opt.zero_grad()
        (loss_fn(lib, params, device) * sign).backward()
        opt.step()
    return [p.detach().cpu().numpy() for p in params]


def _assert_params_close(ours: list[np.ndarray], ref: list[np.ndarray],
                         rtol: float = 1e-5, atol: float = 1e-6) -> None:
    for a, b in zip(ours, ref):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_matches_torch_after_100_steps(device: str, name: str, kw: dict[str, Any]) -> None:
    ref = _train(torch, name, kw, "cpu", 100)
    ours = _train(ag, name, kw, device, 100)
    start = [INIT[k] for k in ("w1", "b1", "w2", "q")]
    assert max(np.abs(r - s).max() for r, s in zip(ref, start)) > 0.1  # the weights did move
    _assert_params_close(ours, ref)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_two_param_groups_with_different_lr(device: str, name: str) -> None:
    kw = {"SGD": dict(lr=0.01, momentum=0.9), "RMSprop": dict(lr=0.002, momentum=0.5)}.get(
        name, dict(lr=0.01))
    ref = _train(torch, name, kw, "cpu", 100, groups=True)
    _assert_params_close(_train(ag, name, kw, device, 100, groups=True), ref)
    # the groups' lr matters: one group's lr for everything gives other weights
    single = _train(torch, name, kw, "cpu", 100)
    assert not np.allclose(single[3], ref[3], rtol=1e-3, atol=1e-4)


# Gradients drawn once and fed to both optimizers: no feedback through the loss, so these pin the
# update formulas (including the paths the training run avoids, like lerp's weight >= 0.5).
SHARED_CASES = [
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01, betas=(0.3, 0.4), amsgrad=True)),
    ("RMSprop", dict(lr=0.01, alpha=0.3, centered=True, momentum=0.5, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.05, lr_decay=0.01, weight_decay=0.1, maximize=True)),
]


@pytest.mark.parametrize(("name", "kw"), SHARED_CASES, ids=[c[0] for c in SHARED_CASES])
def test_update_formulas_on_shared_gradients(device: str, name: str, kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(0)
    grads = [[rng.standard_normal(v.shape).astype(np.float32) for v in INIT.values()]
             for _ in range(100)]
    tp = [torch.tensor(v, requires_grad=True) for v in INIT.values()]
    ap = [ag.tensor(v, device=device, requires_grad=True) for v in INIT.values()]
    topt = getattr(torch.optim, name)(tp, foreach=False, **kw)
    aopt = getattr(ag.optim, name)(ap, **kw)
    for g in grads:
        for t, a, gi in zip(tp, ap, g):
            t.grad, a.grad = torch.tensor(gi), ag.tensor(gi, device=device)
        topt.step()
        aopt.step()
    _assert_params_close([a.detach().cpu().numpy() for a in ap],
                         [t.detach().numpy() for t in tp])
    for t, a in zip(tp, ap):
        ts, st = topt.state[t], aopt.state[a]
        assert sorted(st) == sorted(ts)
        for key in ts:
            np.testing.assert_allclose(st[key].cpu().numpy(), ts[key].numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=key)
            assert str(st[key].dtype) == str(ts[key].dtype)


@pytest.mark.parametrize(("name", "kw"), [CASES[2], CASES[5], CASES[8], CASES[11], CASES[14]],
                         ids=["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_state_dict_round_trip(device: str, name: str, kw: dict[str, Any]) -> None:
    def inspect(sd: dict[str, Any]) -> None:
        assert sorted(sd) == ["param_groups", "state"]
        assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2, 3]]
        assert sorted(sd["state"]) == [0, 1, 2, 3]
        assert sd["param_groups"][1]["lr"] == kw["lr"] / 2

    check_state_dict_round_trip(device, name, kw, inspect)


@pytest.mark.parametrize(("name", "kw"), [CASES[2], CASES[5], CASES[11], CASES[14]],
                         ids=["SGD", "Adam", "RMSprop", "Adagrad"])
def test_state_dict_structure_matches_torch(name: str, kw: dict[str, Any]) -> None:
    dicts = []
    for lib in (torch, ag):
        params = make_params(lib)
        opt = getattr(lib.optim, name)([{"params": params[:1]}, {"params": params[1:], "lr": 1.0}],
                                       **kw)
        loss_fn(lib, params).backward()
        params[2].grad = None  # a parameter without state
        opt.step()
        dicts.append(opt.state_dict())
    ref, ours = dicts
    assert ours["param_groups"] == ref["param_groups"]
    assert sorted(ours["state"]) == sorted(ref["state"])
    for i in ref["state"]:
        assert sorted(ours["state"][i]) == sorted(ref["state"][i])
        for key, value in ref["state"][i].items():
            assert tuple(ours["state"][i][key].shape) == tuple(value.shape), key


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_repr_and_defaults_match_torch(name: str) -> None:
    mine = getattr(ag.optim, name)([ag.zeros(2, requires_grad=True)], lr=0.5)
    ref = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], lr=0.5)
    assert repr(mine) == repr(ref)
    assert mine.defaults == ref.defaults


def test_step_updates_in_place_and_skips_params_without_grad(device: str) -> None:
    w = ag.tensor([1.0, 2.0], device=device, requires_grad=True)
    frozen = ag.tensor([3.0], device=device, requires_grad=True)
    opt = ag.optim.Adam([w, frozen], lr=0.1)
    data, version = w._data, w._version
    (w * w).sum().backward()
    opt.step()
    assert w._data is data and w._version > version  # same storage, bumped version counter
    assert w.is_leaf and w.grad_fn is None and w.requires_grad
    assert frozen.tolist() == [3.0] and len(opt.state[frozen]) == 0
    assert opt.state[w]["step"].item() == 1.0


def test_zero_grad(device: str) -> None:
    w = ag.tensor([1.0, 2.0], device=device, requires_grad=True)
    opt = ag.optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    grad = w.grad
    opt.zero_grad(set_to_none=False)
    assert w.grad is grad and w.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None
    opt.step()  # no gradient: nothing moves
    assert w.tolist() == [1.0, 2.0]
    (w * 3).sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_step_with_closure_returns_loss(device: str) -> None:
    w = ag.tensor([1.0, -2.0], device=device, requires_grad=True)
    opt = ag.optim.SGD([w], lr=0.25)

    def closure() -> ag.Tensor:
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with ag.no_grad():  # the closure still records a graph
        loss = opt.step(closure)
    assert loss.item() == 5.0
    assert w.tolist() == [0.5, -1.0]


def test_add_param_group(device: str) -> None:
    a = ag.tensor([1.0], device=device, requires_grad=True)
    b = ag.tensor([1.0], device=device, requires_grad=True)
    opt = ag.optim.SGD([a], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[1]["params"] == [b]
    (a + b).sum().backward()
    opt.step()
    assert a.tolist() == pytest.approx([0.9]) and b.tolist() == pytest.approx([0.5])


def _errors(lib: Any) -> dict[str, Any]:
    def p() -> Any:
        return lib.zeros(2, requires_grad=True)

    shared = p()
    cases = {
        "empty": lambda: lib.optim.SGD([], lr=0.1),
        "lr": lambda: lib.optim.SGD([p()], lr=-1.0),
        "momentum": lambda: lib.optim.SGD([p()], lr=0.1, momentum=-0.5),
        "nesterov": lambda: lib.optim.SGD([p()], lr=0.1, nesterov=True),
        "nesterov_dampening": lambda: lib.optim.SGD([p()], momentum=0.9, dampening=0.1,
                                                    nesterov=True),
        "two_groups": lambda: lib.optim.SGD([{"params": [shared]}, {"params": [shared]}], lr=0.1),
        "tensor_params": lambda: lib.optim.SGD(p(), lr=0.1),
        "not_tensor": lambda: lib.optim.SGD([1.0], lr=0.1),
        "non_leaf": lambda: lib.optim.SGD([p() * 2], lr=0.1),
        "set": lambda: lib.optim.SGD([{"params": {p()}}], lr=0.1),
        "adam_lr": lambda: lib.optim.Adam([p()], lr=-1e-3),
        "adam_beta0": lambda: lib.optim.Adam([p()], betas=(1.0, 0.999)),
        "adam_beta1": lambda: lib.optim.Adam([p()], betas=(0.9, -0.1)),
        "adam_eps": lambda: lib.optim.AdamW([p()], eps=-1.0),
        "adamw_wd": lambda: lib.optim.AdamW([p()], weight_decay=-1.0),
        "rmsprop_alpha": lambda: lib.optim.RMSprop([p()], alpha=-0.5),
        "adagrad_decay": lambda: lib.optim.Adagrad([p()], lr_decay=-1.0),
        "adagrad_init": lambda: lib.optim.Adagrad([p()], initial_accumulator_value=-1.0),
        "load_groups": lambda: lib.optim.SGD([p()]).load_state_dict(
            lib.optim.SGD([{"params": [p()]}, {"params": [p()]}]).state_dict()),
        "load_sizes": lambda: lib.optim.SGD([p()]).load_state_dict(
            lib.optim.SGD([p(), p()]).state_dict()),
    }
    return {k: outcome(fn) for k, fn in cases.items()}


def test_errors_match_torch() -> None:
    ours, ref = _errors(ag), _errors(torch)
    assert ours == ref
    assert ref["lr"] == ("raises", "ValueError", "Invalid learning rate: -1.0")
