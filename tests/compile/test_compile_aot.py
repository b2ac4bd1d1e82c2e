"""A compiled module (or function) whose result's backward runs outside it, PyTorch's most
common ``torch.compile`` use: the forward replays, the backward replays as a second program
behind one ``CompiledFunctionBackward`` node, and every number equals eager's bit for bit."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu import nn
from autograd_gpu._compile._trace import FullGraphError

from ._steps import Setup, assert_same, batches, run

BATCHES = batches(5, (6, 8), 4)


def _mlp() -> Any:
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))


def _cnn() -> Any:
    return nn.Sequential(nn.Unflatten(1, (2, 2, 2)), nn.Conv2d(2, 3, 2, padding=1),
                         nn.BatchNorm2d(3), nn.ReLU(), nn.Dropout(0.3), nn.Flatten(),
                         nn.Linear(27, 4))


class _Block(nn.Module):
    """Two outputs (one unused by the loss), an attention layer with dropout."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.2,
                                                batch_first=True)
        self.head = nn.Linear(8, 4)

    def forward(self, x: Any) -> Any:
        h = self.layer(self.proj(x).reshape(2, 3, 8)).reshape(6, 8)
        return self.head(h), h.sum()


def _setup(build: Callable[[], Any], compiled: bool, opt_name: str = "Adam") -> Setup:
    model = build()
    call = ag.compile(model) if compiled else model
    opt = getattr(ag.optim, opt_name)(model.parameters(), lr=1e-2)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        out = call(x)
        logits = out[0] if isinstance(out, tuple) else out
        loss = nn.functional.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        return loss, type(loss.grad_fn.next_functions[0][0]).__name__, call

    return Setup(step, [model], [opt], after=None)


def _compare(build: Callable[[], Any], opt_name: str = "Adam") -> Any:
    eager, _, _ = run(lambda: _setup(build, False, opt_name), BATCHES, False)
    compiled, warned, _ = run(lambda: _setup(build, True, opt_name), BATCHES, False)
    assert not warned, warned
    # NOTE: the node names differ by design (eager's last op vs the compiled call's node)
    strip = [[(n, v) for n, v in snap if n != "result[1]" and n != "result[2]"]
             for snap in eager]
    assert_same(strip, [[(n, v) for n, v in snap if n != "result[1]" and n != "result[2]"]
                        for snap in compiled])
    return compiled


@pytest.mark.parametrize("build", [_mlp, _cnn, _Block], ids=["mlp", "cnn_bn_dropout",
                                                            "transformer_two_outputs"])
def test_compiled_module_with_backward_outside_replays_bit_for_bit(build: Any) -> None:
    """Forward and backward replayed from the third call on, equal to eager bit for bit."""
    ag.manual_seed(0)
    model = build()
    call = ag.compile(model)
    ag.manual_seed(1)
    names = []
    for x, y in BATCHES:
        out = call(ag.tensor(x))
        logits = out[0] if isinstance(out, tuple) else out
        nn.functional.cross_entropy(logits, ag.tensor(y)).backward()
        names.append(type(logits.grad_fn).__name__)
    assert names[-1] == "CompiledFunctionBackward", names
    ex = call.explain()
    assert ex.replaying >= 1 and ex.eager == 0, str(ex)
    _compare(build)


def test_sgd_and_a_second_signature() -> None:
    _compare(_mlp, "SGD")


def _grads_through(compiled: bool, make_input: Callable[[Any], Any]) -> list[Any]:
    ag.manual_seed(0)
    model = _mlp()
    call = ag.compile(model) if compiled else model
    emb = nn.Linear(3, 8)
    seen = []
    for _ in range(5):
        x = make_input(emb)
        out = call(x)
        out.pow(2).mean().backward()
        seen.append([None if p.grad is None else p.grad.numpy().copy()
                     for p in list(model.parameters()) + list(emb.parameters())])
        if x.is_leaf:
            seen.append(x.grad.numpy().copy())
        for p in list(model.parameters()) + list(emb.parameters()):
            p.grad = None
    return seen


@pytest.mark.parametrize("kind", ["leaf_input", "non_leaf_input"])
def test_gradients_reach_the_inputs(kind: str) -> None:
    """An input that requires grad gets its gradient; a non-leaf input passes it on to the
    graph it came from (an embedding-like layer outside the compiled module)."""
    rng = np.random.default_rng(3)
    data = [rng.standard_normal((4, 8 if kind == "leaf_input" else 3)).astype(np.float32)
            for _ in range(5)]
    it: dict[str, int] = {}

    def make_input(emb: Any) -> Any:
        i = it.setdefault("i", 0)
        it["i"] = (i + 1) % 5
        if kind == "leaf_input":
            return ag.tensor(data[i], requires_grad=True)
        return emb(ag.tensor(data[i]))

    eager = _grads_through(False, make_input)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = _grads_through(True, make_input)
    for a, b in zip(eager, compiled):
        for x, y in zip(a if isinstance(a, list) else [a], b if isinstance(b, list) else [b]):
            assert (x is None) == (y is None) and (x is None or x.tobytes() == y.tobytes())


def _warm(call: Any, x: Any) -> None:
    for _ in range(3):
        call(x).sum().backward()


def test_two_calls_then_one_backward_and_retain_graph() -> None:
    ag.manual_seed(0)
    model = _mlp()
    twin = _mlp()
    twin.load_state_dict(model.state_dict())
    call = ag.compile(model)
    x1, x2 = ag.randn(4, 8), ag.randn(4, 8)
    _warm(call, x1)
    for p in model.parameters():
        p.grad = None
    loss = (call(x1) * call(x2)).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    ref = (twin(x1) * twin(x2)).sum()
    ref.backward(retain_graph=True)
    ref.backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        assert p.grad.numpy().tobytes() == q.grad.numpy().tobytes()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def _replayed() -> tuple[Any, Any]:
    """(a model, the output of a replayed call of it compiled: forward and backward programs)."""
    model = _mlp()
    call = ag.compile(model)
    x = ag.randn(4, 8)
    _warm(call, x)
    out = call(x)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    return model, out


def test_double_backward_through_a_replayed_call_is_refused() -> None:
    model, out = _replayed()
    with pytest.raises(RuntimeError, match="torch.compile with aot_autograd does not currently "
                                           "support double backward"):
        ag.autograd.grad(out.sum(), list(model.parameters()), create_graph=True)


def test_a_backward_hook_inside_makes_it_eager_with_one_warning() -> None:
    counts = {"eager": 0, "compiled": 0}

    def build(which: str) -> Any:
        ag.manual_seed(0)
        m = _mlp()
        m[1].register_full_backward_hook(lambda *a: counts.__setitem__(which, counts[which] + 1))
        return m

    eager, model = build("eager"), build("compiled")
    call = ag.compile(model)
    x = ag.randn(4, 8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(4):
            eager(x).sum().backward()
            call(x).sum().backward()
    texts = [str(w.message) for w in caught if str(w.message).startswith("compile(")]
    assert len(texts) == 1 and "a backward hook inside the compiled function" in texts[0], texts
    assert counts["eager"] == counts["compiled"] == 4
    for p, q in zip(eager.parameters(), model.parameters()):
        assert p.grad.numpy().tobytes() == q.grad.numpy().tobytes()
    with pytest.raises(FullGraphError, match="a backward hook inside"):
        strict = ag.compile(build("compiled"), fullgraph=True)
        for _ in range(4):
            strict(x).sum().backward()


def test_results_never_backpropagated_record_again() -> None:
    """Forward calls in grad mode whose results are dropped (an evaluation without no_grad),
    then training: the backward is recorded from the first call that does get one."""
    ag.manual_seed(0)
    model = _mlp()
    twin = _mlp()
    twin.load_state_dict(model.state_dict())
    call = ag.compile(model)
    x = ag.randn(4, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(4):
            assert call(x).detach().numpy().tobytes() == twin(x).detach().numpy().tobytes()
        for _ in range(4):
            call(x).sum().backward()
            twin(x).sum().backward()
    for p, q in zip(model.parameters(), twin.parameters()):
        assert p.grad.numpy().tobytes() == q.grad.numpy().tobytes()
    out = call(x)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"


def test_saved_arrays_go_with_the_backward() -> None:
    """A replayed call's node frees what it saved when backward runs (no retain_graph)."""
    _, out = _replayed()
    node = out.grad_fn
    assert node._saved
    out.sum().backward()
    assert node._saved is None
