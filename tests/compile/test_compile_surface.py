"""``torch.compiler`` and ``torch._dynamo`` names around ``compile``: against PyTorch where it
answers the same question, and by behaviour where ours replays instead of compiling."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import same_error


@pytest.mark.parametrize("kwargs", [{"mode": "bad"}, {"mode": "default", "options": {}}])
def test_argument_errors_match_torch(kwargs: dict[str, Any]) -> None:
    same_error(lambda T, dev: T.compile(lambda x: x, **kwargs), "cpu")


def test_unknown_backend_matches_torch() -> None:
    errors = []
    for T in (torch, ag):
        with pytest.raises(RuntimeError) as e:
            T.compile(lambda x: x, backend="nope")
        errors.append((type(e.value).__name__, str(e.value)))
    assert errors[0] == errors[1]


def test_not_callable_matches_torch() -> None:
    same_error(lambda T, dev: T.compile(3), "cpu")


def test_disable_and_backends() -> None:
    f = lambda x: x  # noqa: E731
    assert ag.compile(f, disable=True) is f
    assert ag.compiler.list_backends() == torch.compiler.list_backends()
    assert not ag.compiler.is_compiling()
    assert ag._dynamo.config.cache_size_limit == torch._dynamo.config.cache_size_limit == 8


def test_limit_reset_and_graph_break() -> None:
    seen: list[bool] = []

    def f(x: Any) -> Any:
        seen.append(ag.compiler.is_compiling())
        return x * 2

    compiled = ag.compile(f)
    old = ag._dynamo.config.cache_size_limit
    ag._dynamo.config.cache_size_limit = 2
    try:
        for n in (1, 2):
            compiled(ag.ones(n))
        with pytest.warns(UserWarning, match=r"hit cache_size_limit \(2\)"):
            assert compiled(ag.ones(3)).tolist() == [2.0, 2.0, 2.0]
        ag.compiler.reset()
        assert compiled.explain().signatures == 0
    finally:
        ag._dynamo.config.cache_size_limit = old
    assert seen[:2] == [True, True] and seen[2] is False

    def broken(x: Any) -> Any:
        y = x + 1
        ag._dynamo.graph_break()
        return y * 3

    ex = ag._dynamo.explain(broken)(ag.ones(2))
    assert ex.graph_break_count == 1 and "graph_break()" in ex.break_reasons[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = ag.compile(broken)(ag.ones(2))
    assert np.array_equal(out.numpy(), [6.0, 6.0])


def test_a_compiled_function_called_inside_a_recorded_step_runs_inline() -> None:
    """The inner compiled function records nothing of its own while the outer step records: the
    outer recording holds its work, replays it, and stays exact."""
    rng = np.random.default_rng(3)
    w = ag.tensor(rng.standard_normal((4, 3)), requires_grad=True)

    @ag.compile
    def inner(x: Any) -> Any:
        return (x @ w).tanh()

    def outer(x: Any) -> Any:
        w.grad = None
        loss = inner(x).pow(2).sum()
        loss.backward()
        with ag.no_grad():
            w.sub_(0.1 * w.grad)
        return loss

    compiled = ag.compile(outer)
    w_eager = ag.tensor(w.detach().numpy().copy(), requires_grad=True)

    def eager_step(x: Any) -> Any:
        w_eager.grad = None
        loss = (x @ w_eager).tanh().pow(2).sum()
        loss.backward()
        with ag.no_grad():
            w_eager.sub_(0.1 * w_eager.grad)
        return loss

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(5):
            x = rng.standard_normal((2, 4))
            assert compiled(ag.tensor(x)).item() == eager_step(ag.tensor(x)).item()
    assert np.array_equal(w.detach().numpy(), w_eager.detach().numpy())
    assert compiled.explain().replaying == 1 and inner.explain().signatures == 0
