"""Adam/AdamW's whole-group update over flat state buffers (``optim/_flat.py``): bit for bit the
per-parameter foreach path and the single-tensor path; ``optimizer.state`` as before; any other
layout (loaded, replaced state, a parameter without a gradient) takes the per-parameter path."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.optim import _flat

SHAPES = [(7, 5), (13,), (), (4, 33), (1, 1)]
CASES = [
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.1, weight_decay=1.0, maximize=True, betas=(0.3, 0.5))),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=1.0, amsgrad=True, maximize=True)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CASES]


def _grads(steps: int, dtype: Any) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(7)
    return [[np.where(rng.random(s) < 0.1, 0.0, rng.standard_normal(s)
                      * 10.0 ** rng.integers(-3, 3, s)).astype(dtype) for s in SHAPES]
            for _ in range(steps)]


def _params(dtype: Any) -> list[Any]:
    rng = np.random.default_rng(3)
    return [ag.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True) for s in SHAPES]


def _steps(params: list[Any], opt: Any, grads: list[list[np.ndarray]],
           edit: Any = None) -> None:
    for i, row in enumerate(grads):
        for p, g in zip(params, row):
            p.grad = None if g is None else ag.tensor(g)
        if edit is not None:
            edit(i, params, opt)
        opt.step()


def _run(name: str, kw: dict[str, Any], dtype: Any, steps: int, flat: bool,
         monkeypatch: Any, edit: Any = None) -> tuple[list[Any], Any, int]:
    """``steps`` steps; ``flat``: whether the group may get the flat layout. Returns the
    params, the optimizer and how many whole-group updates ran."""
    calls = [0]
    make, update = _flat.make_state, _flat.adam
    monkeypatch.setattr(_flat, "make_state", make if flat else lambda *a: False)

    def counted(*args: Any) -> None:
        calls[0] += 1
        update(*args)

    monkeypatch.setattr(_flat, "adam", counted)
    params = _params(dtype)
    opt = getattr(ag.optim, name)(params, **kw)
    _steps(params, opt, _grads(steps, dtype), edit)
    return params, opt, calls[0]


def _bits(t: Any) -> bytes:
    return np.ascontiguousarray(t.detach().numpy()).tobytes()


def _assert_same(a: tuple[list[Any], Any], b: tuple[list[Any], Any],
                 versions: bool = True) -> None:
    (pa, oa), (pb, ob) = a, b
    for x, y in zip(pa, pb):
        assert _bits(x) == _bits(y) and (x._version == y._version or not versions)
        sa, sb = oa.state[x], ob.state[y]
        assert list(sa) == list(sb)
        for key in sa:
            s, t = sa[key], sb[key]
            assert (s.dtype, s.shape, s.stride(), s.is_contiguous(), s.storage_offset()) == \
                (t.dtype, t.shape, t.stride(), t.is_contiguous(), t.storage_offset()), key
            assert s._version == t._version or not versions, key
            assert _bits(s) == _bits(t), key


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_whole_group_is_the_per_parameter_path_bit_for_bit(name: str, kw: dict[str, Any],
                                                           dtype: Any, monkeypatch: Any) -> None:
    *flat, n = _run(name, kw, dtype, 6, True, monkeypatch)
    assert n == 6
    *per, n = _run(name, kw, dtype, 6, False, monkeypatch)
    assert n == 0
    *slow, _ = _run(name, {**kw, "foreach": False}, dtype, 6, True, monkeypatch)
    _assert_same(flat, per)  # type: ignore[arg-type]
    _assert_same(flat, slow)  # type: ignore[arg-type]


def _edit(edit: str) -> Any:
    def do(i: int, params: list[Any], opt: Any) -> None:
        if i == 2:
            st = opt.state[params[1]]
            if edit == "inplace":
                st["exp_avg"].mul_(0.5)
            elif edit == "replaced":
                st["exp_avg_sq"] = st["exp_avg_sq"].clone()
            else:
                params[3].grad = None
    return do


@pytest.mark.parametrize(("edit", "whole"), [("inplace", 5), ("replaced", 2), ("no-grad", 2)])
def test_edits_keep_the_numbers(edit: str, whole: int, monkeypatch: Any) -> None:
    """An in-place edit of a state tensor keeps the layout; a replaced state tensor moves the
    group to the per-parameter path for good; so does a parameter without a gradient (that step,
    and then its ``step`` lags behind the others')."""
    kw = dict(lr=0.01, amsgrad=True)
    *flat, n = _run("Adam", kw, np.float32, 5, True, monkeypatch, _edit(edit))
    assert n == whole
    *per, _ = _run("Adam", kw, np.float32, 5, False, monkeypatch, _edit(edit))
    _assert_same(flat, per)  # type: ignore[arg-type]


@pytest.mark.parametrize("source", ["ours", "torch"])
def test_loaded_state_then_more_steps(source: str, monkeypatch: Any) -> None:
    """``state_dict`` of a flat group as PyTorch's; a loaded state (ours or PyTorch's) replaces
    the layout (dropped) and later steps are the per-parameter path's, bit for bit."""
    kw = dict(lr=0.01, weight_decay=0.1, amsgrad=True)
    grads = _grads(6, np.float32)
    if source == "torch":
        tp = [torch.tensor(p.detach().numpy(), requires_grad=True) for p in _params(np.float32)]
        topt = torch.optim.Adam(tp, **kw)  # type: ignore[arg-type]
        for row in grads[:3]:
            for p, g in zip(tp, row):
                p.grad = torch.tensor(g)
            topt.step()
        tsd = topt.state_dict()
        sd = {"state": {k: {n: ag.tensor(v.numpy()) for n, v in s.items()}
                        for k, s in tsd["state"].items()},
              "param_groups": tsd["param_groups"]}
        start = [ag.tensor(p.detach().numpy(), requires_grad=True) for p in tp]
    else:
        *first, _ = _run("Adam", kw, np.float32, 3, True, monkeypatch)
        ours, opt = first
        assert opt.__dict__["_foreach_flat"]
        sd = opt.state_dict()
        t_params = [torch.tensor(p.detach().numpy()) for p in ours]
        tref = torch.optim.Adam(t_params, **kw)  # type: ignore[arg-type]
        for p in t_params:
            p.grad = torch.zeros_like(p)
        tref.step()  # NOTE: torch's state layout, to compare keys, shapes and strides
        for i, p in enumerate(t_params):
            for key, v in tref.state[p].items():
                mine = sd["state"][i][key]
                assert (tuple(mine.shape), mine.stride(), str(mine.dtype)) == \
                    (tuple(v.shape), v.stride(), str(v.dtype))
        start = ours
    results = []
    for flat in (True, False):
        params = [ag.tensor(p.detach().numpy(), requires_grad=True) for p in start]
        calls: list[Any] = []
        monkeypatch.setattr(_flat, "make_state",
                            _flat.make_state if flat else lambda *a: False)
        opt = ag.optim.Adam(params, **kw)
        # NOTE: a step first (a flat layout when ``flat``), undone; the loaded state replaces it
        _steps(params, opt, grads[:1])
        assert bool(opt.__dict__.get("_foreach_flat")) is flat
        with ag.no_grad():
            for p, q in zip(params, start):
                p.copy_(q)
        opt.load_state_dict(copy.deepcopy(sd))  # NOTE: loading keeps the tensors: one per run
        with monkeypatch.context() as m:
            m.setattr(_flat, "adam", calls.append)
            _steps(params, opt, grads[3:])
        assert calls == []
        assert not opt.__dict__.get("_foreach_flat")
        assert all(k[0] != "flat" for k in opt.__dict__.get("_foreach_scratch", {}))
        results.append((params, opt))
    _assert_same(results[0], results[1])


def test_compiled_step_replays_the_whole_group_update() -> None:
    """A compiled Adam step replays the whole-group update (one ``concatenate``), bit for bit
    the eager step's (the compile check), and keeps doing so."""
    def make() -> tuple[Any, Any, Any, Any]:
        ag.manual_seed(0)
        m = ag.nn.Sequential(ag.nn.Linear(6, 8), ag.nn.ReLU(), ag.nn.Linear(8, 3))
        opt = ag.optim.AdamW(m.parameters(), lr=0.01, amsgrad=True)
        x, y = ag.randn(5, 6), ag.randint(0, 3, (5,))

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = ag.nn.functional.cross_entropy(m(x), y)
            loss.backward()
            opt.step()
            return loss
        return m, opt, step, (x, y)

    m1, o1, s1, args = make()
    compiled = ag.compile(s1)
    m2, o2, s2, _ = make()
    for _ in range(6):
        compiled(*args)
        s2(*args)
    entry = next(iter(compiled._entries.values()))
    assert entry.state == "replay"
    assert any(v is np.concatenate for v in entry.program._globals.values())
    # NOTE: values (a compiled call's record and check move version counters differently)
    _assert_same((list(m1.parameters()), o1), (list(m2.parameters()), o2), versions=False)
