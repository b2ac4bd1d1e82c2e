"""The optimizers' fast path (``optim/_foreach.py``; on CUDA the fused kernel, when it serves)
against their single-tensor path (``foreach=False``): the same parameters and state bit for bit,
the same version counters, after steps on fixed random gradients; and against torch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.optim import adagrad, adam, rmsprop, sgd

SHAPES = [(7, 5), (13,), (), (3, 0), (4, 33)]
CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.3, weight_decay=1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.3, 0.9), weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=0.01, maximize=True, decoupled_weight_decay=True, weight_decay=0.5)),
    ("AdamW", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.4, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, maximize=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, alpha=0.9)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.2,
                     maximize=True)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CASES]
MODULES = {"SGD": sgd, "Adam": adam, "AdamW": adam, "RMSprop": rmsprop, "Adagrad": adagrad}
SINGLE = {name: module._single for name, module in MODULES.items()}


def _grads(steps: int, shapes: list[tuple[int, ...]], dtype: Any) -> list[list[np.ndarray]]:
    """Per step, one gradient per shape: normal, with a spread of scales and some exact zeros."""
    rng = np.random.default_rng(7)
    out = []
    for _ in range(steps):
        row = []
        for shape in shapes:
            g = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 3, shape)
            row.append(np.where(rng.random(shape) < 0.1, 0.0, g).astype(dtype))
        out.append(row)
    return out


def _run(name: str, kw: dict[str, Any], device: str, dtype: Any, steps: int,
         shapes: list[tuple[int, ...]] = SHAPES, make: Any = None,
         calls: list[int] | None = None, monkeypatch: Any = None) -> tuple[list[Any], Any]:
    """``steps`` steps of optimizer ``name`` on fixed gradients; ``calls`` counts the parameter
    updates its single-tensor path made."""
    rng = np.random.default_rng(3)
    params = [ag.tensor(rng.standard_normal(s).astype(dtype), device=device, requires_grad=True)
              for s in shapes]
    if make is not None:
        params = make(params)
    if calls is not None:
        single = SINGLE[name]

        def counted(*args: Any) -> None:
            calls[0] += 1
            single(*args)

        monkeypatch.setattr(MODULES[name], "_single", counted)
    opt = getattr(ag.optim, name)(params, **kw)
    for row in _grads(steps, [tuple(p.shape) for p in params], dtype):
        for p, g in zip(params, row):
            p.grad = ag.tensor(g, device=device, dtype=p.dtype)
        opt.step()
    return params, opt


def _bits(t: Any) -> np.ndarray:
    a = np.ascontiguousarray(t.detach().cpu().numpy())
    return a.view(f"u{a.itemsize}") if a.dtype.kind == "f" else a


def _assert_same(fast: tuple[list[Any], Any], slow: tuple[list[Any], Any]) -> None:
    """Bitwise equal params and state, equal version counters, dtypes, shapes and strides."""
    (pf, of), (ps, os_) = fast, slow
    for a, b in zip(pf, ps):
        np.testing.assert_array_equal(_bits(a), _bits(b))
        assert a._version == b._version
    for a, b in zip(pf, ps):
        sa, sb = of.state[a], os_.state[b]
        assert list(sa) == list(sb)
        for key in sa:
            x, y = sa[key], sb[key]
            assert (x.dtype, x.shape, x.stride(), x.device) == (y.dtype, y.shape, y.stride(),
                                                                y.device), key
            np.testing.assert_array_equal(_bits(x), _bits(y), err_msg=key)
            assert x._version == y._version, key
    def groups(opt: Any) -> list[dict[str, Any]]:
        return [{k: v for k, v in g.items() if k not in ("foreach", "fused")}
                for g in opt.state_dict()["param_groups"]]

    assert groups(of) == groups(os_)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_fast_path_is_the_slow_path_bit_for_bit(device: str, name: str, kw: dict[str, Any],
                                                dtype: Any, monkeypatch: Any) -> None:
    calls = [0]
    fast = _run(name, kw, device, dtype, 6, calls=calls, monkeypatch=monkeypatch)
    assert calls[0] == 0  # no parameter took the single-tensor path
    slow = _run(name, {**kw, "foreach": False}, device, dtype, 6, calls=calls,
                monkeypatch=monkeypatch)
    assert calls[0] == 6 * len(SHAPES)
    _assert_same(fast, slow)
    explicit = _run(name, {**kw, "foreach": True}, device, dtype, 6)
    _assert_same(explicit, slow)
    assert "test_fast_path.py" in (fast[0][0]._counter().where or "")


# Parameters the fast path leaves to the single-tensor path, with the same results.
FALLBACKS = {
    "float16": (lambda ps: [p.detach().half().requires_grad_() for p in ps], {}),
    "strided": (lambda ps: [ag.tensor(np.arange(72.0, dtype=np.float32).reshape(2, 9, 4))
                            .permute(1, 0, 2)[:, :, 1].requires_grad_()], {}),
    "tensor-lr": (None, {"lr": ag.tensor(0.01)}),
    "numpy-scalar": (None, {"lr": np.float64(0.01)}),
}


@pytest.mark.parametrize("case", list(FALLBACKS))
@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_what_the_fast_path_leaves_to_the_slow_path(name: str, case: str,
                                                    monkeypatch: Any) -> None:
    make, extra = FALLBACKS[case]
    kw = {"lr": 0.01, **({"momentum": 0.9} if name in ("SGD", "RMSprop") else {}), **extra}
    calls = [0]
    fast = _run(name, kw, "cpu", np.float32, 3, make=make, calls=calls, monkeypatch=monkeypatch)
    assert calls[0] == 3 * len(fast[0])
    slow = _run(name, {**kw, "foreach": False}, "cpu", np.float32, 3, make=make)
    _assert_same(fast, slow)


def test_state_on_another_device_or_dtype_takes_the_slow_path(monkeypatch: Any) -> None:
    """A state tensor loaded in another dtype (float64 beside float32 params) is not the fast
    path's (the slow path's mixed-dtype ops decide)."""
    calls = [0]
    params, opt = _run("Adam", dict(lr=0.01), "cpu", np.float32, 2)
    opt.state[params[0]]["exp_avg"] = opt.state[params[0]]["exp_avg"].double()
    monkeypatch.setattr(adam, "_single", lambda *a: calls.__setitem__(0, calls[0] + 1))
    opt.step()
    assert calls[0] == 1


@pytest.mark.parametrize(("name", "kw"), [
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, maximize=True)),
    ("Adagrad", dict(lr=0.05, lr_decay=0.01)),
    ("RMSprop", dict(lr=0.001, centered=True, momentum=0.5)),
])
@pytest.mark.parametrize("mode", ["default", "foreach", "fused"])
def test_matches_torch_for_25_steps(device: str, name: str, kw: dict[str, Any],
                                    mode: str) -> None:
    """Our default, ``foreach=True`` and ``fused=True`` against torch's: float32 within 1e-5
    relative (torch's fused CPU kernels compute each element's update in one expression, its
    single-tensor SGD adds ``alpha * x`` with one rounding; ours round each operation)."""
    if mode == "fused" and name == "RMSprop":
        pytest.skip("torch.optim.RMSprop has no fused implementation")
    extra = {} if mode == "default" else {mode: True}
    ours = _run(name, {**kw, **extra}, device, np.float32, 25)[0]
    rng = np.random.default_rng(3)
    params = [torch.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
              for s in SHAPES]
    opt = getattr(torch.optim, name)(params, **kw, **extra)
    for row in _grads(25, SHAPES, np.float32):
        for p, g in zip(params, row):
            p.grad = torch.tensor(g)
        opt.step()
    for a, b in zip(ours, params):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_fused_and_foreach_checks_mirror_torch() -> None:
    w = ag.zeros(2, requires_grad=True)
    for cls in ("Adam", "AdamW", "SGD", "Adagrad"):
        with pytest.raises(RuntimeError, match="^`fused` and `foreach` cannot be `True` "
                                               "together.$"):
            getattr(ag.optim, cls)([w], lr=0.1, fused=True, foreach=True)
        with pytest.raises(RuntimeError, match="^`fused` does not support `differentiable`$"):
            getattr(ag.optim, cls)([w], lr=0.1, fused=True, differentiable=True)
        with pytest.raises(ValueError, match="^optimizer got an empty parameter list$"):
            getattr(ag.optim, cls)([], lr=0.1, fused=True, foreach=True)
    p = ag.zeros(3, dtype=ag.int64)
    p.grad = ag.zeros(3, dtype=ag.int64)
    opt = ag.optim.Adam([p], fused=True)
    with pytest.raises(RuntimeError, match=r"^`fused=True` requires all the params to be floating "
                                           r"point Tensors of supported devices: \['mps', 'cuda', "
                                           r"'xpu', 'hpu', 'cpu', 'mtia', 'privateuseone'\] but "
                                           r"torch.int64 and cpu$"):
        opt.step()


def test_scratch_buffers_stay_out_of_the_state_dict_and_are_shared() -> None:
    params, opt = _run("Adam", dict(lr=0.01), "cpu", np.float32, 2,
                       shapes=[(4, 3), (4, 3), (5,)])
    sd = opt.state_dict()
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "step"]
    # NOTE: the group's state in one flat buffer per kind (optim/_flat.py): one set for it
    assert list(opt._foreach_scratch) == [("flat", id(opt.param_groups[0]))]
    again = ag.optim.Adam(params, lr=0.01)
    again.load_state_dict(sd)  # NOTE: loaded state: each tensor its own, the per-param path
    again.step()
    assert len(again._foreach_scratch) == 2  # one set per layout, shared by the two (4, 3)
    import copy

    clone = copy.deepcopy(opt)
    assert "_foreach_scratch" not in clone.__dict__
    clone.step()


@pytest.mark.parametrize(("name", "kw", "make"), [
    ("SGD", dict(lr=0.1, momentum=0.9), lambda ps: [(p.detach() * (1 + 1j)).requires_grad_()
                                                    for p in ps[:2]]),
    ("Adam", dict(lr=0.01, betas=(ag.tensor(0.9), 0.999)), None),
], ids=["complex-SGD", "tensor-beta-Adam"])  # NOTE: capturable: tests/optim/test_capturable.py
def test_more_of_what_the_slow_path_keeps(name: str, kw: dict[str, Any], make: Any,
                                          monkeypatch: Any) -> None:
    calls = [0]
    fast = _run(name, kw, "cpu", np.float32, 2, make=make, calls=calls, monkeypatch=monkeypatch)
    assert calls[0] == 2 * len(fast[0])
    _assert_same(fast, _run(name, {**kw, "foreach": False}, "cpu", np.float32, 2, make=make))


def test_meta_parameters_take_the_slow_path() -> None:
    p = ag.zeros(3, 4, device="meta", requires_grad=True)
    p.grad = ag.zeros(3, 4, device="meta")
    opt = ag.optim.SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    opt.step()
    assert opt.state[p]["momentum_buffer"].device.type == "meta"
