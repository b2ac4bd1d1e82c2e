"""``compile`` against eager on the same step: bit-for-bit losses, parameters, gradients and
optimizer state; the three states (record, check, replay); breaks and their warnings."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import autograd_gpu as ag

RNG = np.random.default_rng(0)
BATCHES = [(RNG.standard_normal((16, 8)).astype(np.float32), RNG.integers(0, 4, 16))
           for _ in range(5)]


def _mlp_step(opt_name: str = "Adam", **opt_kw: Any) -> tuple[Callable[..., Any], Any, Any]:
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(8, 16), ag.nn.ReLU(), ag.nn.Linear(16, 4))
    opt = getattr(ag.optim, opt_name)(model.parameters(), **opt_kw)
    loss_fn = ag.nn.CrossEntropyLoss()

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step, model, opt


def _same_state(a: Any, b: Any) -> None:
    for p, q in zip(a.parameters(), b.parameters()):
        assert np.array_equal(p.detach().numpy(), q.detach().numpy())
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            assert np.array_equal(p.grad.numpy(), q.grad.numpy())


@pytest.mark.parametrize("opt_name, kw", [("Adam", {"lr": 1e-2}), ("SGD", {"lr": 0.1,
                                                                       "momentum": 0.9})])
def test_compiled_step_is_the_eager_step(opt_name: str, kw: dict[str, Any]) -> None:
    eager, m1, o1 = _mlp_step(opt_name, **kw)
    step, m2, o2 = _mlp_step(opt_name, **kw)
    compiled = ag.compile(step)
    for x, y in BATCHES:
        a = eager(ag.tensor(x), ag.tensor(y))
        b = compiled(ag.tensor(x), ag.tensor(y))
        assert a.item() == b.item()
        _same_state(m1, m2)
    ex = compiled.explain()
    # NOTE: two signatures (no grads at entry, then grads): the first runs once, recorded
    assert ex.replaying == 1 and ex.eager == 0, str(ex)
    for p, q in zip(o1.state.values(), o2.state.values()):
        for k in p:
            assert np.array_equal(np.asarray(p[k]), np.asarray(q[k]))


def test_item_in_the_step_breaks_with_one_warning() -> None:
    step, model, _ = _mlp_step()

    def with_item(x: Any, y: Any) -> float:
        return step(x, y).item()

    compiled = ag.compile(with_item)
    eager, m1, _ = _mlp_step()
    with pytest.warns(UserWarning, match=r"runs eagerly: Tensor\.item\(\) at .*reads a value"):
        compiled(ag.tensor(BATCHES[0][0]), ag.tensor(BATCHES[0][1]))
    eager(ag.tensor(BATCHES[0][0]), ag.tensor(BATCHES[0][1]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x, y in BATCHES[1:]:
            assert compiled(ag.tensor(x), ag.tensor(y)) == eager(ag.tensor(x), ag.tensor(y)).item()
    _same_state(m1, model)


def test_fullgraph_raises_on_a_break() -> None:
    step, _, _ = _mlp_step()
    compiled = ag.compile(lambda x, y: step(x, y).item(), fullgraph=True)
    with pytest.raises(RuntimeError, match=r"^compile\(fullgraph=True\): Tensor\.item\(\)"):
        compiled(ag.tensor(BATCHES[0][0]), ag.tensor(BATCHES[0][1]))
