"""amp.GradScaler against torch 2.13's (the CPU oracle, device "cpu" there; ours on every device
of the ``device`` fixture): the scale, growth-tracker and skip sequence and the parameters of a
short training run with injected inf/nan gradients, update(new_scale), state_dict, the disabled
pass-through, the deprecated aliases and PyTorch's errors for misuse."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import check_case


def _model(T: Any, dev: str, dtype: str) -> tuple[Any, Any, Any]:
    g = np.random.default_rng(0)
    dt = getattr(T, dtype)
    w = T.tensor(g.standard_normal((3, 4)), dtype=dt, device=dev, requires_grad=True)
    b = T.tensor(g.standard_normal(3), dtype=dt, device=dev, requires_grad=True)
    unused = T.zeros(2, dtype=dt, device=dev, requires_grad=True)  # its grad stays None
    x = T.tensor(g.standard_normal((5, 4)), dtype=dt, device=dev)
    opt = T.optim.SGD([{"params": [w]}, {"params": [b, unused], "lr": 0.05}], lr=0.1,
                      momentum=0.9)
    return (w, b, unused), x, opt


def _run(T: Any, dev: str, dtype: str, bad: float, explicit_unscale: bool) -> list[Any]:
    """8 iterations, growth_interval 2; gradient inf/nan injected at iterations 2, 5 and 6."""
    (w, b, _), x, opt = _model(T, dev, dtype)
    scaler = T.amp.GradScaler(dev, init_scale=8.0, growth_interval=2)
    log: list[Any] = []
    for i in range(8):
        opt.zero_grad()
        loss = ((x @ w.t() + b) ** 2).mean()
        scaler.scale(loss).backward()
        if i in (2, 5, 6):
            with T.no_grad():
                (w if i != 5 else b).grad[0] = bad
        if explicit_unscale:
            scaler.unscale_(opt)
            log.append(b.grad.detach().cpu().numpy().copy())
        ret = scaler.step(opt)
        scaler.update()
        log.append((ret, scaler.get_scale(), scaler.state_dict()))
        log.append(w.detach().cpu().numpy().copy())
        log.append(b.detach().cpu().numpy().copy())
    return log


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
@pytest.mark.parametrize("explicit_unscale", [False, True])
def test_training_run_matches_torch(device: str, dtype: str, bad: float,
                                    explicit_unscale: bool) -> None:
    theirs = _run(torch, "cpu", dtype, bad, explicit_unscale)
    ours = _run(ag, device, dtype, bad, explicit_unscale)
    assert len(ours) == len(theirs)
    tol = 1e-12 if dtype == "float64" else 1e-6
    for a, e in zip(ours, theirs):
        if isinstance(e, tuple):
            assert a == e  # (step value, scale, state_dict) exactly
        else:
            np.testing.assert_allclose(a, e, rtol=tol, atol=tol)
    scales = [e[1] for e in theirs if isinstance(e, tuple)]
    assert scales == [8.0, 16.0, 8.0, 8.0, 16.0, 8.0, 4.0, 4.0]  # growth and backoff both seen


def test_scale_nested_and_step_args(device: str) -> None:
    def fn(T: Any, dev: str) -> Any:
        s = T.amp.GradScaler(dev, init_scale=4.0)
        a = T.ones(2, device=dev)
        out = s.scale([a, (a * 2, [a * 3])])
        gen = s.scale(iter([a]))
        p = T.ones(2, device=dev, requires_grad=True)
        p.grad = T.full((2,), 8.0, device=dev)

        class Opt:  # a duck-typed optimizer: step's arguments and value pass through
            param_groups = [{"params": [p]}]

            def step(self, *args: Any, **kwargs: Any) -> Any:
                return (args, sorted(kwargs))

        ret = s.step(Opt(), 1, k=2)
        return (type(out).__name__, type(out[1]).__name__, out[0], out[1][0], out[1][1][0],
                list(gen)[0], ret, p.grad)

    check_case(fn, device)


def test_update_new_scale_and_growth_limits(device: str) -> None:
    def fn(T: Any, dev: str) -> Any:
        s = T.amp.GradScaler(dev, init_scale=3.0e38, growth_interval=1)
        p = T.ones(2, device=dev, requires_grad=True)
        opt = T.optim.SGD([p], lr=0.1)
        got = []
        for new in (None, 5.0, T.tensor(7.0, device=dev), None):
            s.scale(p.sum()).backward()
            s.step(opt)
            s.update(new)  # the first: growth would overflow float32, the scale stays
            got.append((s.get_scale(), s.state_dict()["_growth_tracker"]))
        return got

    check_case(fn, device)


def test_state_dict_round_trip(device: str) -> None:
    def fn(T: Any, dev: str) -> Any:
        s = T.amp.GradScaler(dev, init_scale=16.0, growth_factor=4.0, backoff_factor=0.25,
                             growth_interval=3)
        before = s.state_dict()
        p = T.ones(2, device=dev, requires_grad=True)
        opt = T.optim.SGD([p], lr=0.1)
        s.scale(p.sum()).backward()
        s.step(opt)
        s.update()
        sd = s.state_dict()
        t = T.amp.GradScaler(dev)
        t.load_state_dict(sd)
        u = T.amp.GradScaler(dev)
        u.scale(p.sum())  # scale tensor made first, then filled by load_state_dict
        u.load_state_dict(sd)
        s.set_growth_factor(3.0)
        s.set_backoff_factor(0.125)
        s.set_growth_interval(7)
        return (before, sd, t.state_dict(), u.state_dict(), s.state_dict(),
                s.get_growth_factor(), s.get_backoff_factor(), s.get_growth_interval())

    check_case(fn, device)
    theirs = torch.amp.GradScaler("cpu", init_scale=32.0, growth_interval=5)
    ours = ag.amp.GradScaler(device)
    ours.load_state_dict(theirs.state_dict())  # a PyTorch scaler's state loads here
    assert ours.state_dict() == theirs.state_dict()


def test_disabled_is_pass_through(device: str) -> None:
    def fn(T: Any, dev: str) -> Any:
        s = T.amp.GradScaler(dev, enabled=False, growth_factor=0.5)  # no checks when disabled
        p = T.ones(2, device=dev, requires_grad=True)
        opt = T.optim.SGD([p], lr=0.1)
        loss = p.sum()
        out = s.scale(loss)
        out.backward()
        s.unscale_(opt)
        s.step(opt)
        s.update()
        s.load_state_dict({})
        return out is loss, s.is_enabled(), s.get_scale(), s.state_dict(), p

    check_case(fn, device)


def _loop(T: Any, dev: str) -> tuple[Any, Any, Any]:
    s = T.amp.GradScaler(dev)
    p = T.ones(2, device=dev, requires_grad=True)
    opt = T.optim.SGD([p], lr=0.1)
    s.scale(p.sum()).backward()
    return s, p, opt


def _closure(T: Any, dev: str) -> Any:
    s, _, opt = _loop(T, dev)
    return s.step(opt, closure=lambda: None)


def _fp16(T: Any, dev: str) -> Any:
    s, p, opt = _loop(T, dev)
    p.grad = p.grad.half()
    return s.unscale_(opt)


def _bad_new_scale(T: Any, dev: str, new: Any) -> Any:
    s, _, opt = _loop(T, dev)
    s.step(opt)
    return s.update(new(T, dev))


MISUSE = {
    "double_unscale": lambda T, dev: [f(o) for s, _, o in [_loop(T, dev)]
                                      for f in (s.unscale_, s.unscale_)],
    "unscale_after_step": lambda T, dev: [f(o) for s, _, o in [_loop(T, dev)]
                                          for f in (s.step, s.unscale_)],
    "double_step": lambda T, dev: [f(o) for s, _, o in [_loop(T, dev)] for f in (s.step, s.step)],
    "unscale_then_step_then_update": lambda T, dev: [
        (s.unscale_(o), s.step(o), s.update(), s.unscale_(o), s.get_scale())
        for s, _, o in [_loop(T, dev)]],
    "step_before_scale": lambda T, dev: T.amp.GradScaler(dev).step(
        T.optim.SGD([T.ones(1, device=dev, requires_grad=True)], lr=0.1)),
    "unscale_before_scale": lambda T, dev: T.amp.GradScaler(dev).unscale_(
        T.optim.SGD([T.ones(1, device=dev, requires_grad=True)], lr=0.1)),
    "update_before_scale": lambda T, dev: T.amp.GradScaler(dev).update(),
    "update_without_step": lambda T, dev: _loop(T, dev)[0].update(),
    "step_no_grads": lambda T, dev: [s.step(T.optim.SGD([T.ones(1, device=dev)], lr=0.1))
                                     for s, _, _ in [_loop(T, dev)]],
    "closure": _closure,
    "fp16_grads": _fp16,
    "scale_not_tensor": lambda T, dev: _loop(T, dev)[0].scale(3.0),
    "scale_list_of_numbers": lambda T, dev: _loop(T, dev)[0].scale([T.ones(1, device=dev), 2]),
    "growth_factor": lambda T, dev: T.amp.GradScaler(dev, growth_factor=1.0),
    "backoff_factor": lambda T, dev: T.amp.GradScaler(dev, backoff_factor=1.0),
    "load_empty": lambda T, dev: T.amp.GradScaler(dev).load_state_dict({}),
    "new_scale_numel": lambda T, dev: _bad_new_scale(T, dev, lambda T, d: T.ones(2, device=d)),
    "new_scale_grad": lambda T, dev: _bad_new_scale(
        T, dev, lambda T, d: T.ones(1, device=d, requires_grad=True)),
    "new_scale_1d": lambda T, dev: _bad_new_scale(T, dev, lambda T, d: T.ones(1, device=d)),
    "new_scale_int": lambda T, dev: _bad_new_scale(T, dev, lambda T, d: 4),
}


@pytest.mark.parametrize("case", sorted(MISUSE))
def test_misuse(device: str, case: str) -> None:
    if case in ("new_scale_numel", "new_scale_grad"):
        # NOTE: PyTorch's message names "torch.cuda.FloatTensor" on every device, which the
        # catalogue's CUDA rewrite would alter: compared whole here.
        errs = []
        for T, dev in ((torch, "cpu"), (ag, device)):
            with pytest.raises(AssertionError) as e:
                MISUSE[case](T, dev)
            errs.append(str(e.value))
        assert errs[0] == errs[1]
        return
    check_case(MISUSE[case], device)


def _warned(make: Any) -> tuple[list[tuple[str, str]], bool, dict[str, Any]]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = make()
    return [(x.category.__name__, str(x.message)) for x in w], s.is_enabled(), s.state_dict()


@pytest.mark.parametrize("make", [
    lambda T: T.amp.GradScaler("cpu", init_scale=4.0),
    lambda T: T.cpu.amp.GradScaler(init_scale=4.0),
])
def test_cpu_and_deprecated_cpu_alias(make: Any) -> None:
    assert _warned(lambda: make(ag)) == _warned(lambda: make(torch))
    assert issubclass(ag.cpu.amp.GradScaler, ag.amp.GradScaler)


@pytest.mark.parametrize("make", [lambda T: T.amp.GradScaler(),
                                  lambda T: T.cuda.amp.GradScaler(growth_interval=3)])
def test_cuda_device_rule(make: Any) -> None:
    """Without CUDA (torch's CPU build here): a warning and a disabled scaler, as PyTorch; with
    CUDA or the stand-in, an enabled one (the deprecated alias still warns FutureWarning)."""
    ours = _warned(lambda: make(ag))
    theirs = _warned(lambda: make(torch))
    assert issubclass(ag.cuda.amp.GradScaler, ag.amp.GradScaler)
    if not ag.cuda.is_available():
        assert ours == theirs
    else:
        assert ours[0] == [w for w in theirs[0] if w[0] == "FutureWarning"]
        assert ours[1] is True and ours[2]["growth_interval"] in (2000, 3)


def test_runner_imports() -> None:
    """``torch.amp``, ``torch.cuda.amp`` and ``torch.cpu.amp`` import under the runner's hook."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import autograd_gpu.compat as c; c.install(); import torch, torch.cuda.amp, "
            "torch.cpu.amp; from torch.amp.grad_scaler import GradScaler; "
            "from torch.cuda.amp import GradScaler as G; import autograd_gpu as ag; "
            "assert GradScaler is ag.amp.GradScaler and issubclass(G, GradScaler); "
            "assert torch.cpu.amp.GradScaler is ag.cpu.amp.GradScaler")
    root = Path(__file__).resolve().parent.parent
    run = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]


def test_pickle(device: str) -> None:
    import pickle

    def round_trip(T: Any, dev: str) -> Any:
        s, _, opt = _loop(T, dev)
        s.step(opt)
        s.update(4.0)
        back = pickle.loads(pickle.dumps(s))
        return back.state_dict(), back.is_enabled()

    def mid_iteration(T: Any, dev: str) -> Any:
        s, _, opt = _loop(T, dev)
        s.unscale_(opt)
        return pickle.dumps(s)  # refused between unscale_/step and update

    check_case(round_trip, device)
    check_case(mid_iteration, device)
