"""NAdam, RAdam, Adamax, Adadelta, ASGD, Rprop, Adafactor and LBFGS against torch.optim: 100
training steps from identical float32 weights, the update formulas on shared gradients (state
values and dtypes too), state_dict layout and round trips, defaults, repr and argument errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests._compare import outcome

from ._problem import INIT, check_state_dict_round_trip, loss_fn, make_params

CASES = [
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, betas=(0.8, 0.9))),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, betas=(0.8, 0.99), maximize=True)),
    ("Adadelta", dict(lr=1.0)),
    ("Adadelta", dict(lr=0.5, rho=0.5, weight_decay=0.1, maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=20, weight_decay=0.1, maximize=True)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05), maximize=True)),
    ("Adafactor", dict(lr=0.01)),
    ("Adafactor", dict(lr=0.005, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=2.0, weight_decay=0.1,
                       maximize=True)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CASES]
NAMES = ["NAdam", "RAdam", "Adamax", "Adadelta", "ASGD", "Rprop", "Adafactor"]


def _torch_extra(name: str) -> dict[str, Any]:
    return {"foreach": False}


def _train(lib: Any, name: str, kw: dict[str, Any], device: str, steps: int,
           groups: bool = False) -> tuple[list[np.ndarray], Any]:
    params = make_params(lib, device)
    extra = _torch_extra(name) if lib is torch else {}
    spec: Any = params
    if groups:
        spec = [{"params": params[:2]}, {"params": params[2:], "lr": kw["lr"] / 3}]
    opt = getattr(lib.optim, name)(spec, **kw, **extra)
    sign = -1.0 if kw.get("maximize") else 1.0
    for _ in range(steps):
        opt.zero_grad()
        (loss_fn(lib, params, device) * sign).backward()
        opt.step()
    return [p.detach().cpu().numpy() for p in params], opt


def _close(ours: list[np.ndarray], ref: list[np.ndarray], rtol: float = 1e-5,
           atol: float = 1e-6) -> None:
    for a, b in zip(ours, ref):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_matches_torch_after_100_steps(device: str, name: str, kw: dict[str, Any]) -> None:
    ref, _ = _train(torch, name, kw, "cpu", 100)
    ours, _ = _train(ag, name, kw, device, 100)
    start = [INIT[k] for k in ("w1", "b1", "w2", "q")]
    assert max(np.abs(r - s).max() for r, s in zip(ref, start)) > 0.05  # the weights did move
    _close(ours, ref)


@pytest.mark.parametrize("name", NAMES)
def test_two_param_groups(device: str, name: str) -> None:
    kw = dict(lr=0.01)
    ref, _ = _train(torch, name, kw, "cpu", 30, groups=True)
    _close(_train(ag, name, kw, device, 30, groups=True)[0], ref)


SHARED = [(name, kw) for name, kw in CASES if kw.get("maximize")]


@pytest.mark.parametrize(("name", "kw"), SHARED, ids=[c[0] for c in SHARED])
def test_update_formulas_on_shared_gradients(device: str, name: str, kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(0)
    grads = [[rng.standard_normal(v.shape).astype(np.float32) for v in INIT.values()]
             for _ in range(60)]
    tp = [torch.tensor(v, requires_grad=True) for v in INIT.values()]
    ap = [ag.tensor(v, device=device, requires_grad=True) for v in INIT.values()]
    topt = getattr(torch.optim, name)(tp, **kw, **_torch_extra(name))
    aopt = getattr(ag.optim, name)(ap, **kw)
    for g in grads:
        for t, a, gi in zip(tp, ap, g):
            t.grad, a.grad = torch.tensor(gi), ag.tensor(gi, device=device)
        topt.step()
        aopt.step()
    _close([a.detach().cpu().numpy() for a in ap], [t.detach().numpy() for t in tp])
    for t, a in zip(tp, ap):
        ts, st = topt.state[t], aopt.state[a]
        assert sorted(st) == sorted(ts)
        for key in ts:
            np.testing.assert_allclose(st[key].cpu().numpy(), ts[key].numpy(), rtol=1e-5,
                                       atol=1e-6, err_msg=key)
            assert str(st[key].dtype) == str(ts[key].dtype)
            assert tuple(st[key].shape) == tuple(ts[key].shape)
            assert st[key].device.type == (device if ts[key].device.type != "cpu" or
                                           key in ("ax",) or st[key].dim() > 0 or
                                           name == "ASGD" else "cpu")


@pytest.mark.parametrize("name", NAMES + ["LBFGS"])
def test_state_dict_layout_and_defaults_match_torch(name: str) -> None:
    dicts, reprs, defaults = [], [], []
    for lib in (torch, ag):
        params = make_params(lib)
        if name == "LBFGS":
            opt = lib.optim.LBFGS(params, max_iter=3, history_size=2)
        else:
            opt = getattr(lib.optim, name)(
                [{"params": params[:1]}, {"params": params[1:], "lr": 0.5}])

        def closure(lib: Any = lib, params: Any = params, opt: Any = opt) -> Any:
            opt.zero_grad()
            loss = loss_fn(lib, params)
            loss.backward()
            return loss

        if name == "LBFGS":
            opt.step(closure)
            opt.step(closure)
        else:
            closure()
            params[2].grad = None  # a parameter without state
            opt.step()
        dicts.append(opt.state_dict())
        reprs.append(repr(opt))
        defaults.append(opt.defaults)
    ref, ours = dicts
    assert ours["param_groups"] == ref["param_groups"]
    assert reprs[0] == reprs[1]
    assert defaults[0] == defaults[1]
    assert sorted(ours["state"]) == sorted(ref["state"])
    for i in ref["state"]:
        assert sorted(ours["state"][i]) == sorted(ref["state"][i])
        for key, value in ref["state"][i].items():
            if isinstance(value, torch.Tensor):
                assert tuple(ours["state"][i][key].shape) == tuple(value.shape), key
            elif isinstance(value, list):
                assert len(ours["state"][i][key]) == len(value), key


@pytest.mark.parametrize(("name", "kw"), [c for c in CASES if not c[1].get("maximize")][1::2],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_state_dict_round_trip(device: str, name: str, kw: dict[str, Any]) -> None:
    check_state_dict_round_trip(device, name, kw)


def test_torch_state_dict_loads_into_ours(device: str) -> None:
    """A torch NAdam's state_dict (keys, step/mu_product scalars) resumes in ours."""
    tp = make_params(torch)
    topt = torch.optim.NAdam(tp, lr=0.01, foreach=False)
    for _ in range(5):
        topt.zero_grad()
        loss_fn(torch, tp).backward()
        topt.step()
    sd = topt.state_dict()
    converted = {"param_groups": sd["param_groups"],
                 "state": {k: {n: ag.tensor(v.numpy()) for n, v in s.items()}
                           for k, s in sd["state"].items()}}
    ap = [ag.tensor(p.detach().numpy(), device=device, requires_grad=True) for p in tp]
    aopt = ag.optim.NAdam(ap, lr=0.01)
    aopt.load_state_dict(converted)
    for _ in range(5):
        topt.zero_grad()
        loss_fn(torch, tp).backward()
        topt.step()
        aopt.zero_grad()
        loss_fn(ag, ap, device).backward()
        aopt.step()
    _close([p.detach().cpu().numpy() for p in ap], [p.detach().numpy() for p in tp])


LBFGS_CASES = [
    dict(lr=1.0, max_iter=20),
    dict(lr=0.5, max_iter=5, history_size=3),
    dict(lr=1.0, max_iter=20, line_search_fn="strong_wolfe"),
    dict(lr=1.0, max_iter=8, max_eval=9, history_size=2, tolerance_change=1e-5,
         line_search_fn="strong_wolfe"),
    dict(lr=1.0, max_iter=50, tolerance_grad=1e-3),
]


@pytest.mark.parametrize("kw", LBFGS_CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in
                                                                     kw.items()))
def test_lbfgs_matches_torch(device: str, kw: dict[str, Any]) -> None:
    results = []
    for lib, dev in ((torch, "cpu"), (ag, device)):
        # NOTE: float64: dozens of quasi-Newton iterations amplify float32 rounding differences.
        params = [p.detach().double().requires_grad_() for p in make_params(lib, dev)]
        opt = lib.optim.LBFGS(params, **kw)
        losses = []

        def closure(lib: Any = lib, params: Any = params, opt: Any = opt, dev: str = dev) -> Any:
            opt.zero_grad()
            loss = loss_fn(lib, params, dev)
            loss.backward()
            return loss

        for _ in range(4):
            losses.append(opt.step(closure).item())
        state = opt.state[params[0]]
        results.append(([p.detach().cpu().numpy() for p in params], losses,
                        state["func_evals"], state["n_iter"]))
    (ref, ref_losses, ref_evals, ref_iter), (ours, our_losses, evals, n_iter) = results
    assert (evals, n_iter) == (ref_evals, ref_iter)
    np.testing.assert_allclose(our_losses, ref_losses, rtol=1e-9)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def _errors(lib: Any) -> dict[str, Any]:
    def p() -> Any:
        return lib.zeros(2, requires_grad=True)

    o = lib.optim
    cases = {
        "nadam_lr": lambda: o.NAdam([p()], lr=-1.0),
        "nadam_tensor_lr": lambda: o.NAdam([p()], lr=lib.tensor([0.1, 0.2])),
        "nadam_beta": lambda: o.NAdam([p()], betas=(0.9, 1.0)),
        "nadam_md": lambda: o.NAdam([p()], momentum_decay=-1.0),
        "nadam_wd": lambda: o.NAdam([p()], weight_decay=-1.0),
        "radam_eps": lambda: o.RAdam([p()], eps=-1.0),
        "radam_beta": lambda: o.RAdam([p()], betas=(-0.1, 0.9)),
        "adamax_eps": lambda: o.Adamax([p()], eps=-1.0),
        "adamax_beta": lambda: o.Adamax([p()], betas=(0.9, 1.5)),
        "adadelta_rho": lambda: o.Adadelta([p()], rho=1.5),
        "adadelta_wd": lambda: o.Adadelta([p()], weight_decay=-1.0),
        "asgd_lr": lambda: o.ASGD([p()], lr=-1.0),
        "asgd_wd": lambda: o.ASGD([p()], weight_decay=-1.0),
        "rprop_etas": lambda: o.Rprop([p()], etas=(1.5, 2.0)),
        "rprop_etas2": lambda: o.Rprop([p()], etas=(0.5, 0.9)),
        "adafactor_lr": lambda: o.Adafactor([p()], lr=-1.0),
        "adafactor_decay": lambda: o.Adafactor([p()], beta2_decay=0.5),
        "adafactor_eps1": lambda: o.Adafactor([p()], eps=(-1.0, 1e-3)),
        "adafactor_eps2": lambda: o.Adafactor([p()], eps=(None, -1.0)),
        "adafactor_d": lambda: o.Adafactor([p()], d=0.5),
        "adafactor_wd": lambda: o.Adafactor([p()], weight_decay=-0.5),
        "lbfgs_groups": lambda: o.LBFGS([{"params": [p()]}, {"params": [p()]}]),
        "lbfgs_lr": lambda: o.LBFGS([p()], lr=-1.0),
        "lbfgs_search": lambda: _lbfgs_bad_search(lib),
    }
    return {k: outcome(fn) for k, fn in cases.items()}


def _lbfgs_bad_search(lib: Any) -> Any:
    w = lib.ones(2, requires_grad=True)
    opt = lib.optim.LBFGS([w], line_search_fn="wolfe")

    def closure() -> Any:
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    return opt.step(closure)


def test_errors_match_torch() -> None:
    ours, ref = _errors(ag), _errors(torch)
    assert ours == ref
