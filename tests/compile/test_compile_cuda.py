"""``compile`` on CUDA tensors: the step captured as one CUDA graph after one eager warm-up call,
checked once against eager, then replayed with one launch. Runs wherever a CUDA device is
present: a GPU, or the NumPy stand-in (``AUTOGRAD_GPU_FAKE_CUDA=1``), whose capture records and
replays its work as a graph does. On the stand-in every number is eager's bit for bit; on a GPU
too (the same kernels run in the graph as eagerly)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu import nn
from autograd_gpu._compile import FullGraphError

from ._steps import Setup, assert_same, classifier_step, run

pytestmark = pytest.mark.skipif(not ag.cuda.is_available(),
                                reason="no CUDA device (a GPU, or AUTOGRAD_GPU_FAKE_CUDA=1)")


def _batches(n: int = 5) -> list[tuple[Any, Any]]:
    rng = np.random.default_rng(0)
    return [(ag.tensor(rng.standard_normal((6, 8)).astype(np.float32)).cuda(),
             ag.tensor(rng.standard_normal((6, 4)).astype(np.float32)).cuda())
            for _ in range(n)]


def _mlp() -> Any:
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).cuda()


def _regression(opt_name: str, model: Any = None, **opt_kw: Any) -> Any:
    """A regression step (MSE) on ``model()`` (default the MLP) with optimizer ``opt_name``."""
    def make() -> Setup:
        m = _mlp() if model is None else model()
        opt = getattr(ag.optim, opt_name)(m.parameters(), lr=0.05, **opt_kw)
        return Setup(classifier_step(m, opt, nn.functional.mse_loss), [m], [opt])

    return make


def _compare(make: Any, batches: list[tuple[Any, Any]], **kw: Any) -> tuple[list[str], Any]:
    eager, _, _ = run(make, batches, False)
    compiled, warned, step = run(make, batches, True, **kw)
    assert_same(eager, compiled)
    return warned, step


@pytest.mark.parametrize("opt", [("SGD", {}), ("SGD", {"momentum": 0.9, "nesterov": True}),
                                 ("SGD", {"weight_decay": 0.01})], ids=["sgd", "nesterov", "wd"])
def test_a_cuda_step_replays_as_one_graph(opt: Any) -> None:
    warned, step = _compare(_regression(opt[0], **opt[1]), _batches())
    assert not warned, warned
    ex = step.explain()
    assert ex.replaying == 1 and ex.eager == 0, str(ex)
    (entry,) = [e for e in step._entries.values() if e.graphed is not None]
    assert entry.calls >= 3


def test_an_optimizer_that_is_not_capturable_runs_eagerly_with_one_warning() -> None:
    """Adam's bias corrections come from a step count on the CPU unless ``capturable=True``:
    a graph would freeze them, so the capture refuses it (PyTorch's health check); the step
    runs eagerly, with one warning naming it."""
    warned, step = _compare(_regression("Adam"), _batches())
    assert len(warned) == 1 and "param_groups' capturable is False" in warned[0], warned
    assert step.explain().eager == 1


def test_a_scheduler_outside_makes_a_new_graph_per_learning_rate() -> None:
    """The learning rate is a constant of the graph: part of the CUDA signature."""
    def make() -> Setup:
        s = _regression("SGD", momentum=0.9)()
        sched = ag.optim.lr_scheduler.StepLR(s.optimizers[0], step_size=3, gamma=0.5)
        s.schedulers.append(sched)
        s.after = lambda _: sched.step()
        return s

    warned, step = _compare(make, _batches(8))
    assert not warned, warned
    # NOTE: the first call's (no gradients yet) and one per learning rate (0.05, 0.025, 0.0125)
    assert step.explain().signatures == 4


def test_a_random_draw_in_the_step_runs_eagerly_with_a_warning() -> None:
    make = _regression("SGD", lambda: nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5),
                                                     nn.Linear(16, 4)).cuda())

    warned, _ = _compare(make, _batches())
    assert len(warned) == 1 and "the CUDA graph capture failed" in warned[0], warned
    with pytest.raises(FullGraphError, match="the CUDA graph capture failed"):
        s = make()
        f = ag.compile(s.step, fullgraph=True)
        for x, y in _batches(3):
            f(x, y)


def test_a_replaced_parameter_array_records_again() -> None:
    model = _mlp()
    opt = ag.optim.SGD(model.parameters(), lr=0.05)
    twin = _mlp()
    twin.load_state_dict(model.state_dict())
    topt = ag.optim.SGD(twin.parameters(), lr=0.05)

    def step(m: Any, o: Any, x: Any, y: Any) -> Any:
        o.zero_grad()
        loss = nn.functional.mse_loss(m(x), y)
        loss.backward()
        o.step()
        return loss

    f = ag.compile(lambda x, y: step(model, opt, x, y))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for i, (x, y) in enumerate(_batches(8)):
            if i == 4:
                for p, q in zip(model.parameters(), twin.parameters()):
                    p.data = p.data * 0.5
                    q.data = q.data * 0.5
            a, b = f(x, y), step(twin, topt, x, y)
            assert a.detach().cpu().numpy().tobytes() == b.detach().cpu().numpy().tobytes()
    for p, q in zip(model.parameters(), twin.parameters()):
        assert p.detach().cpu().numpy().tobytes() == q.detach().cpu().numpy().tobytes()


def test_results_are_copies_and_gradients_stay_on_their_parameters() -> None:
    """Each call's result outlives the next launch; .grad holds the last step's gradient."""
    s = _regression("SGD")()
    f = ag.compile(s.step)
    losses = [f(x, y) for x, y in _batches()]
    assert len({float(v.detach().cpu().numpy()) for v in losses}) == len(losses)
    model = s.modules[0]
    assert all(p.grad is not None and p.grad.device.type == "cuda" for p in model.parameters())


def test_mode_without_cudagraphs_runs_eagerly_quietly() -> None:
    s = _regression("SGD")()
    f = ag.compile(s.step, mode="max-autotune-no-cudagraphs")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for x, y in _batches(4):
            f(x, y)
    assert all(e.graphed is None for e in f._entries.values())


def test_a_compiled_module_whose_backward_runs_outside_runs_eagerly_on_cuda() -> None:
    """The CUDA replay keeps no autograd graph: the module runs eagerly, with one warning, and
    its gradients are eager's."""
    model = _mlp()
    twin = _mlp()
    twin.load_state_dict(model.state_dict())
    call = ag.compile(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x, y in _batches(4):
            nn.functional.mse_loss(call(x), y).backward()
            nn.functional.mse_loss(twin(x), y).backward()
    texts = [str(w.message) for w in caught if str(w.message).startswith("compile(")]
    assert len(texts) == 1 and "its backward runs outside" in texts[0], texts
    for p, q in zip(model.parameters(), twin.parameters()):
        assert p.grad.cpu().numpy().tobytes() == q.grad.cpu().numpy().tobytes()


def _classifier() -> Setup:
    model = _mlp()
    opt = ag.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return Setup(classifier_step(model, opt), [model], [opt])


def _targets(n: int = 5, bad_at: int | None = None) -> list[tuple[Any, Any]]:
    rng = np.random.default_rng(1)
    out = []
    for i in range(n):
        y = rng.integers(0, 4, 6)
        if i == bad_at:
            y[2] = 7
        out.append((ag.tensor(rng.standard_normal((6, 8)).astype(np.float32)).cuda(),
                    ag.tensor(y).cuda()))
    return out


def test_a_classifier_step_replays_with_its_target_check_before_each_launch() -> None:
    """cross_entropy checks its targets on the host eagerly; in a graph the check is made on
    the argument before the launch, so a bad target runs that call eagerly: eager's error,
    nothing changed, and the graph stays for the next call."""
    warned, step = _compare(_classifier, _targets(6))
    assert not warned, warned
    assert step.explain().replaying == 1
    s = _classifier()
    f = ag.compile(s.step)
    batches = _targets(6, bad_at=4)
    for x, y in batches[:4]:
        f(x, y)
    before = [p.detach().cpu().numpy().copy() for p in s.modules[0].parameters()]
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        f(*batches[4])
    after = [p.detach().cpu().numpy() for p in s.modules[0].parameters()]
    assert all(a.tobytes() == b.tobytes() for a, b in zip(before, after))
    f(*batches[5])
    assert [e.state for e in f._entries.values()].count("replay") == 1


def test_an_index_check_inside_a_graph_is_read_after_the_replay() -> None:
    """An index computed inside the captured region (not an argument): checked on the device,
    read after each replay, PyTorch's device-side assert error."""
    table = ag.randn(5, 3).cuda()
    idx = ag.tensor([0, 1, 2]).cuda()
    g = ag.cuda.CUDAGraph()
    with ag.cuda.graph(g):
        out = table.index_select(0, idx - 1 + 1)
    g.replay()
    assert out.cpu().numpy().tobytes() == table[idx].cpu().numpy().tobytes()
    # NOTE: -1 is out of [0, 5) for index_select (a wrap-around on a GPU, and in the stand-in)
    idx.copy_(ag.tensor([0, 1, -1]).cuda())
    with pytest.raises(RuntimeError, match="CUDA error: device-side assert triggered: index -1 "
                                           "is out of bounds for the range \\[0, 5\\)"):
        g.replay()


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_a_capturable_adam_step_replays_as_one_graph(name: str) -> None:
    """``capturable=True`` keeps the step count on the device: the whole update is in the
    graph and the compiled step replays, equal to eager."""
    warned, step = _compare(_regression(name, capturable=True), _batches(6))
    assert not warned, warned
    assert step.explain().replaying == 1


def test_a_step_mixing_devices_runs_eagerly_with_a_warning() -> None:
    """The first tensor decides the path: here a CPU buffer, then CUDA parameters."""
    class Scaled(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("scale", ag.tensor(2.0))
            self.lin = nn.Linear(8, 4).cuda()

        def forward(self, x: Any) -> Any:
            with ag.no_grad():
                return self.lin(x).sum() * self.scale.item()

    model = Scaled()
    f = ag.compile(model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outs = [f(x).item() for x, _ in _batches(3)]
    assert outs == [model(x).item() for x, _ in _batches(3)]
    texts = [str(w.message) for w in caught if str(w.message).startswith("compile(")]
    assert len(texts) == 1 and "tensor among CPU ones" in texts[0], texts
