"""``compile``'s API against ``torch.compile`` (argument errors, decorator forms, ``disable``,
``OptimizedModule``) and its guards: a new signature retraces, ``cache_size_limit`` makes the
function eager with one warning; ``explain``."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu._compile import _api
from tests.compile._steps import Setup, assert_same, batches, classifier_step, replays, run

nn = ag.nn


def _f(x: Any) -> Any:
    return x * 2


def _outcome(call: Callable[[], Any]) -> tuple[Any, str]:
    try:
        call()
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e), str(e).split(". ")[0].split("\n")[0]
    return None, ""


ERRORS: list[Any] = [
    pytest.param(lambda C: C(_f, mode="default", options={}), id="mode-and-options"),
    pytest.param(lambda C: C(_f, mode="fast"), id="bad-mode"),
    pytest.param(lambda C: C(3), id="not-callable"),
    pytest.param(lambda C: C("abc"), id="a-string"),
]


@pytest.mark.parametrize("case", ERRORS)
def test_argument_errors_as_torch_compile(case: Callable[[Any], Any]) -> None:
    ours = _outcome(lambda: case(ag.compile))
    theirs = _outcome(lambda: case(torch.compile))
    assert theirs[0] is not None
    assert ours == theirs


@pytest.mark.parametrize("mode", [None, "default", "reduce-overhead", "max-autotune",
                                  "max-autotune-no-cudagraphs"])
def test_accepted_modes_and_backends(mode: Any) -> None:
    for backend in ("inductor", "eager", "aot_eager", lambda gm, inputs: gm):
        compiled = ag.compile(_f, mode=mode, backend=backend, dynamic=True)
        assert compiled(ag.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]


def test_decorator_forms_and_disable() -> None:
    @ag.compile
    def plain(x: Any) -> Any:
        return x + 1

    @ag.compile(fullgraph=True)
    def full(x: Any) -> Any:
        return x.exp()

    @ag.compile()
    def empty(x: Any) -> Any:
        return x - 1

    x = ag.tensor([0.5, 1.5])
    for _ in range(4):  # NOTE: record, check, replay
        assert plain(x).tolist() == [1.5, 2.5]
        assert full(x).numpy().tobytes() == x.exp().numpy().tobytes()
        assert empty(x).tolist() == [-0.5, 0.5]
    assert isinstance(plain, _api.CompiledFunction) and plain.__name__ == "plain"
    assert full.explain().replaying == 1
    assert ag.compile(_f, disable=True) is _f
    assert ag.compile(disable=True)(_f) is _f
    model = nn.Linear(2, 2)
    assert ag.compile(model, disable=True) is model


def test_optimized_module_as_torch() -> None:
    def build(lib: Any) -> Any:
        return lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Flatten(),
                                 lib.nn.Linear(144, 2))

    model, theirs = build(ag), torch.compile(build(torch))  # NOTE: torch compiles on call only
    om = ag.compile(model)
    assert type(om).__name__ == type(theirs).__name__ == "OptimizedModule"
    assert om._orig_mod is model
    assert list(om.state_dict()) == list(theirs.state_dict())
    assert all(k.startswith("_orig_mod.") for k in om.state_dict())
    assert [n for n, _ in om.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert repr(om) == repr(theirs)
    assert all(p is q for p, q in zip(om.parameters(), model.parameters()))
    om.eval()
    assert not model.training and not model[1].training
    om.load_state_dict({k: v * 0 for k, v in om.state_dict().items()})
    assert float(model[0].weight.abs().sum()) == 0.0


def test_optimized_module_forwards_attributes() -> None:
    om = ag.compile(nn.Linear(2, 3))
    assert om.in_features == torch.compile(torch.nn.Linear(2, 3)).in_features
    assert om.weight is om._orig_mod.weight


def _mlp_setup() -> Setup:
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = ag.optim.Adam(model.parameters(), lr=1e-2)
    return Setup(classifier_step(model, opt), [model], [opt])


def test_shape_change_retraces_and_stays_exact() -> None:
    rng = np.random.default_rng(4)
    data = []
    for n in (16, 16, 16, 8, 8, 8, 16, 8, 16, 8):
        data.append((rng.standard_normal((n, 8)).astype(np.float32), rng.integers(0, 4, n)))
    step = replays(_mlp_setup, data)
    ex = step.explain()
    # NOTE: the first step makes the optimizer's state (not kept: it records again if it comes
    # back), then batch 16 and batch 8 (the inputs' shapes differ)
    assert ex.signatures == 2 and ex.replaying == 2, str(ex)


def test_non_tensor_argument_is_part_of_the_signature() -> None:
    def make() -> Setup:
        model = nn.Linear(8, 4)
        opt = ag.optim.SGD(model.parameters(), lr=0.1)

        def step(x: Any, y: Any, scale: float = 1.0) -> Any:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x) * scale, y)
            loss.backward()
            opt.step()
            return loss

        return Setup(step, [model], [opt])

    data = [(x, y, s) for (x, y), s in zip(batches(8, (16, 8), 4), [1.0] * 4 + [0.5] * 4)]
    step = replays(make, data)
    assert step.explain().signatures == 3


def test_cache_size_limit_warns_once_and_runs_eagerly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_api.LIMITS, "signatures", 2)
    rng = np.random.default_rng(6)
    data = [(rng.standard_normal((n, 8)).astype(np.float32), rng.integers(0, 4, n))
            for n in (4, 4, 5, 6, 7, 5, 8)]
    eager, _, _ = run(_mlp_setup, data, False)
    compiled, warned, step = run(_mlp_setup, data, True)
    assert_same(eager, compiled)
    assert warned == [f"{step._name()} hit cache_size_limit (2): more signatures (shapes, dtypes, "
                      "training flags, which grads exist) than that run eagerly"], warned
    assert step.explain().signatures == 2


def test_explain_report() -> None:
    step = ag.compile(_mlp_setup().step)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x, y in batches(4, (16, 8), 4):
            step(ag.tensor(x), ag.tensor(y))
    text = str(step.explain())
    assert text.startswith("Signatures: 1 (1 replaying, 0 eager)\nGraph Break Count: 0\n")
    assert "array ops recorded" in text
