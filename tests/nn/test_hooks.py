"""Module hooks against the torch oracle: forward pre/post hooks that change values, handles,
and full backward (pre-)hooks, down to where grad_input holds None."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest

import autograd_gpu as ag
from tests.autograd._util import both, same_error
from tests.nn._util import t

W = np.arange(6.0).reshape(2, 3) / 10


def _lin(T: Any, dev: str) -> Any:
    m = T.nn.Linear(3, 2).double().to(dev)
    with T.no_grad():
        m.weight.copy_(t(T, dev, W))
        m.bias.fill_(0.5)
    return m


def _warns_if(no_input_grad: bool) -> Any:
    """PyTorch warns when a full backward hook fires with no input requiring grad; so do we."""
    if no_input_grad:
        return pytest.warns(UserWarning, match="Full backward hook is firing when gradients")
    return contextlib.nullcontext()


def _d(x: Any) -> Any:
    """A hook argument in comparable form: tensors detached, tuples element-wise."""
    if isinstance(x, tuple):
        return [_d(v) for v in x]
    return x.detach() if x is not None and hasattr(x, "detach") else x


def test_forward_hooks_change_values(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        m = _lin(T, dev)
        log: list[Any] = []
        h1 = m.register_forward_pre_hook(lambda mod, args: args[0] * 2)
        h2 = m.register_forward_pre_hook(lambda mod, args: log.append(("pre", _d(args))))
        h3 = m.register_forward_hook(lambda mod, args, out: out + 1)
        h4 = m.register_forward_hook(lambda mod, args, out: log.append(("post", _d(out))),
                                     prepend=True)
        x = t(T, dev, [[1.0, 2.0, 3.0]], grad=True)
        y = m(x)
        y.sum().backward()
        res = [y, x.grad, log]
        for h in (h1, h2, h3, h4):
            h.remove()
        res.append(m(x))
        return res

    both(run, device)


def test_forward_hooks_with_kwargs(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        class Scale(T.nn.Module):
            def forward(self, x: Any, scale: float = 1.0) -> Any:
                return x * scale

        m = Scale()
        m.register_forward_pre_hook(lambda mod, args, kw: (args, {"scale": 3.0}),
                                    with_kwargs=True)
        m.register_forward_hook(lambda mod, args, kw, out: out - kw["scale"], with_kwargs=True)
        return m(t(T, dev, [1.0, 2.0]), scale=5.0)

    both(run, device)


class _Recorder:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def pre(self, mod: Any, grad_output: Any) -> None:
        self.events.append(("pre", _d(grad_output)))

    def full(self, mod: Any, grad_input: Any, grad_output: Any) -> None:
        self.events.append(("full", _d(grad_input), _d(grad_output)))


def _three_inputs(T: Any) -> Any:
    class M(T.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = _lin(T, "cpu")

        def forward(self, a: Any, b: Any, c: Any, k: int) -> Any:
            return self.lin(a) * b + c * k, a.sum(1)

    return M()


@pytest.mark.parametrize("grads", [(True, False, True), (False, False, True), (False, False, False),
                                   (True, True, True)])
def test_full_backward_hook_grad_input_matches_torch(grads: tuple[bool, ...], device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        m = _three_inputs(T).to(dev)
        rec = _Recorder()
        m.register_full_backward_pre_hook(rec.pre)
        m.register_full_backward_hook(rec.full)
        rng = np.random.default_rng(3)
        a, b, c = (t(T, dev, rng.standard_normal(s), grad=g)
                   for s, g in zip([(4, 3), (4, 2), (4, 2)], grads))
        out, s = m(a, b, c, 2)
        with _warns_if(not any(grads)):
            (out * out).sum().backward()
        return rec.events, [x.grad for x in (a, b, c)]

    both(run, device)


def test_full_backward_hook_sees_unused_output_as_none(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        m = _three_inputs(T).to(dev)
        rec = _Recorder()
        m.register_full_backward_hook(rec.full)
        a = t(T, dev, np.ones((2, 3)), grad=True)
        out, s = m(a, t(T, dev, np.ones((2, 2))), t(T, dev, np.ones((2, 2))), 1)
        s.sum().backward()  # only the second output is used
        return rec.events, a.grad

    both(run, device)


def test_backward_hooks_replace_gradients(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        m = _lin(T, dev)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
        x = t(T, dev, np.ones((2, 3)), grad=True)
        m(x * 2).sum().backward()
        return x.grad, m.weight.grad, m.bias.grad

    both(run, device)


def test_backward_hook_handles_remove(device: str) -> None:
    calls: list[int] = []
    m = ag.nn.Linear(3, 2).to(device)
    h = m.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
    x = ag.ones(2, 3, device=device, requires_grad=True)
    m(x).sum().backward()
    h.remove()
    m(x).sum().backward()
    assert calls == [1]


@pytest.mark.parametrize("case", ["full", "pre", "no_input_grad"])
def test_backward_hook_errors(case: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        m = _lin(T, dev)
        if case == "full":
            m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        elif case == "pre":
            m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        else:
            m.register_full_backward_hook(lambda mod, gi, go: (go[0],))
        x = t(T, dev, np.ones((2, 3)), grad=case != "no_input_grad")
        with _warns_if(case == "no_input_grad"):
            m(x).sum().backward()

    same_error(run, device)


def _mlp(T: Any, dev: str) -> Any:
    T.manual_seed(0)
    return T.nn.Sequential(T.nn.Linear(8, 16), T.nn.ReLU(), T.nn.Linear(16, 16), T.nn.ReLU(),
                           T.nn.Linear(16, 4)).to(dev)


def test_seed_exercise_hook_norm_and_detach(device: str) -> None:
    model = _mlp(ag, device)
    norms: list[float] = []

    def hook(mod: Any, grad_input: Any, grad_output: Any) -> None:
        assert grad_input == (None,)  # the data does not require grad
        norms.append(float(grad_output[0].norm()))

    model[0].register_full_backward_hook(hook)
    x = ag.randn(32, 8, device=device)
    y = ag.randint(0, 4, (32,), device=device)
    with _warns_if(True):
        ag.nn.functional.cross_entropy(model(x), y).backward()
    assert len(norms) == 1 and norms[0] > 0
    assert model[0].weight.grad is not None and float(model[0].weight.grad.norm()) > 0

    model.zero_grad()
    h = model[3](model[2](model[1](model[0](x)))).detach()  # detach between layers 2 and 3
    ag.nn.functional.cross_entropy(model[4](h), y).backward()
    assert len(norms) == 1  # the hook never fires: no gradient reaches layer one
    assert model[0].weight.grad is None and model[2].weight.grad is None
    assert model[4].weight.grad is not None


def test_seed_exercise_matches_torch(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        model = _mlp(T, dev)
        for m in model:
            if isinstance(m, T.nn.Linear):
                with T.no_grad():
                    rng = np.random.default_rng(m.in_features)
                    m.weight.copy_(t(T, dev, rng.standard_normal(tuple(m.weight.shape)),
                                     dtype=T.float32))
                    m.bias.fill_(0.1)
        seen: list[Any] = []
        model[0].register_full_backward_hook(lambda mod, gi, go: seen.append(_d((gi, go))))
        x = t(T, dev, np.random.default_rng(0).standard_normal((5, 8)), dtype=T.float32)
        y = t(T, dev, [0, 1, 2, 3, 0])
        with _warns_if(True):
            T.nn.functional.cross_entropy(model(x), y).backward()
        return seen, [p.grad for p in model.parameters()]

    both(run, device, rtol=1e-4, atol=1e-6)
