"""The activation-memory profiler, the savings report and the graph-leak detector (issue #5,
parts 4 and 5). Figures are exact: saved storages are counted by ``nbytes`` of their root buffer
(on CUDA too); kept bytes come from the tracker (512-byte blocks on CUDA)."""

from __future__ import annotations

import gc
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

import autograd_gpu as ag
from autograd_gpu import nn
from autograd_gpu.profiler import (
    GraphLeakWarning, LeakDetector, MemoryProfile, detect_graph_leaks, profile_memory,
    savings_report,
)
from tests._gc import gc_paused

BATCH = 64


def blk(nbytes: int, device: str) -> int:
    return nbytes if device == "cpu" else (nbytes + 511) // 512 * 512


def mlp(device: str) -> Any:
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10)).to(device)


def profiled_step(device: str, loss: bool = False) -> tuple[Any, MemoryProfile]:
    model = mlp(device)
    x = ag.randn(BATCH, 784, device=device)
    # NOTE: a collection mid-profile would free other tests' buffers and move the baseline.
    with gc_paused(), profile_memory(model) as prof:
        out = model(x)
        if loss:
            out = nn.functional.cross_entropy(out, ag.randint(0, 10, (BATCH,), device=device))
        out.sum().backward()
    return model, prof


def test_totals_equal_the_analytic_mlp_figure(device: str) -> None:
    """The unique saved activations of the MLP are its two ReLU outputs (each saved by ReLU and
    again by the next Linear: counted once); the input and weights are kept apart."""
    _, prof = profiled_step(device)
    assert prof.total_bytes == 2 * BATCH * 256 * 4
    acts = [r for r in prof.saved if r.kind == "activation"]
    assert [(r.op, r.module, r.count) for r in acts] == [
        ("ReluBackward0", "1 (ReLU)", 2), ("ReluBackward0", "3 (ReLU)", 2)]
    kinds = {tuple(r.shape): r.kind for r in prof.saved}
    assert kinds[(BATCH, 784)] == "input"
    assert kinds[(256, 256)] == "parameter"
    assert {r.op for r in prof.saved if r.kind != "activation"} == {"AddmmBackward0"}


def test_views_of_leaves_are_not_activations(device: str) -> None:
    # NOTE: a batched matmul saves reshaped views of its leaf operands (their own storage); on
    # CUDA there is no live-storage registry, so the view's base decides. Only the product,
    # saved by the softmax and the second matmul, is an activation.
    q, k, v = (ag.randn(2, 3, 8, 4, device=device, requires_grad=True) for _ in range(3))
    with profile_memory() as prof:
        out = q.matmul(k.transpose(-2, -1)).softmax(-1).matmul(v)
    assert prof.total_bytes == 2 * 3 * 8 * 8 * 4
    assert {r.kind for r in prof.saved} <= {"parameter", "input", "activation"}
    del out


def test_tables_sum_to_the_total(device: str) -> None:
    _, prof = profiled_step(device, loss=True)
    for by in ("module", "op"):
        rows = prof.rows(by)
        assert sum(r["bytes"] for r in rows) == prof.total_bytes
        assert sum(r["count"] for r in rows) == len([r for r in prof.saved
                                                     if r.kind == "activation"])
        assert sum(r["share"] for r in rows) == pytest.approx(1.0)
        text = prof.table(by)
        assert f"{prof.total_bytes:,}" in text.splitlines()[-1]
    ops = {r["name"] for r in prof.rows("op")}
    assert {"ReluBackward0", "LogSoftmaxBackward0"} <= ops
    with pytest.raises(ValueError, match="'module' or 'op'"):
        prof.rows("layer")


def test_timeline_phases_and_peaks(device: str) -> None:
    _, prof = profiled_step(device)
    assert [p["name"] for p in prof.phases] == ["forward", "backward"]
    events = [s["event"] for s in prof.timeline]
    assert events[0] == "start" and events[-1] == "end"
    assert {"enter", "exit", "pack", "unpack"} <= set(events)
    fwd, bwd = prof.phases
    assert fwd["end"] + 1 == bwd["start"] and bwd["end"] == len(prof.timeline) - 1
    assert all(s["phase"] == "forward" for s in prof.timeline[:bwd["start"]])
    assert all(s["event"] in ("unpack", "end") for s in prof.timeline[bwd["start"]:])
    peaks = prof.peaks
    assert peaks["overall"] == max(peaks["forward"], peaks["backward"])
    assert all(s["peak"] >= s["allocated"] for s in prof.timeline)
    # the forward holds the saved activations at its end
    last_fwd = prof.timeline[fwd["end"]]["allocated"]
    assert last_fwd - prof.baseline >= blk(BATCH * 256 * 4, device) * 2


def test_plot_writes_a_png(device: str, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    _, prof = profiled_step(device)
    path = prof.plot(str(tmp_path / "memory.png"))
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000


def test_to_json_round_trips(device: str) -> None:
    _, prof = profiled_step(device, loss=True)
    text = prof.to_json()
    d = json.loads(text)
    assert d["total_bytes"] == prof.total_bytes and d["device"].startswith(device)
    again = MemoryProfile.from_json(text)
    assert again == prof
    assert again.to_json() == text


def test_gradients_are_unchanged_by_profiling(device: str) -> None:
    ag.manual_seed(1)
    model = mlp(device)
    x = ag.randn(8, 784, device=device)
    model(x).tanh().sum().backward()
    ref = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    with profile_memory(model):
        model(x).tanh().sum().backward()
    for p, g in zip(model.parameters(), ref):
        assert ag.allclose(p.grad, g)


def test_inplace_on_a_saved_tensor_still_raises(device: str) -> None:
    x = ag.randn(5, device=device, requires_grad=True)
    with profile_memory():
        y = x.exp()
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_no_module_and_bare_ops(device: str) -> None:
    w = ag.randn(32, 32, device=device, requires_grad=True)
    x = ag.randn(16, 32, device=device)
    with profile_memory(device=device) as prof:
        (x @ w).relu().sum().backward()
    assert prof.total_bytes == 16 * 32 * 4
    assert {r.module for r in prof.saved} == {"-"}


def test_profile_releases_memory(device: str) -> None:
    gc.collect()
    base = ag.memory_allocated(device)
    model = mlp(device)
    x = ag.randn(BATCH, 784, device=device)
    with_model = ag.memory_allocated(device)
    with profile_memory(model):
        model(x).sum().backward()
    model.zero_grad(set_to_none=True)
    gc.collect()
    assert ag.memory_allocated(device) == with_model
    del model, x
    gc.collect()
    assert ag.memory_allocated(device) == base


# ---- the savings report ---------------------------------------------------------------------

def test_savings_report_modes(device: str) -> None:
    model = mlp(device)
    x = ag.randn(BATCH, 784, device=device)
    rep = savings_report(model, x)
    hidden, logits = blk(BATCH * 256 * 4, device), blk(BATCH * 10 * 4, device)
    assert rep["grad"]["kept_bytes"] == 2 * hidden + logits
    assert rep["no_grad"]["kept_bytes"] == logits  # only the output
    assert rep["inference_mode"]["kept_bytes"] == logits
    # one segment keeps the input (already held) and the output: saves both hidden activations
    assert rep["checkpoint (one segment)"]["kept_bytes"] == logits
    assert rep["checkpoint (one segment)"]["saved_bytes"] == 2 * hidden
    # per child, every child's input is kept: the Linear outputs too (two more hidden)
    assert rep["checkpoint (per child)"]["kept_bytes"] == 4 * hidden + logits
    for r in rep.rows:
        assert r["peak_bytes"] >= r["kept_bytes"]
    assert "checkpoint (one segment)" in rep.table()
    assert json.loads(json.dumps(rep.to_dict()))["rows"][0]["mode"] == "grad"
    if device == "cuda":
        assert rep["save_on_cpu"]["kept_bytes"] < rep["grad"]["kept_bytes"]


# ---- the leak detector ----------------------------------------------------------------------

def run_loop(device: str, mode: str, steps: int = 6) -> list[warnings.WarningMessage]:
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
    opt = ag.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = ag.randn(4, 8, device=device)
    y = ag.randint(0, 2, (4,), device=device)
    total: Any = 0
    h = ag.zeros(4, 2, device=device)
    with warnings.catch_warnings(record=True) as caught, detect_graph_leaks(device) as leaks:
        warnings.simplefilter("always")
        for _ in range(steps):
            opt.zero_grad()
            if mode == "retain_graph":
                # the state is carried without detach: every backward walks the whole history
                h = model(x) + 0.5 * h
                nn.functional.cross_entropy(h, y).backward(retain_graph=True)
            else:
                loss = nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                if mode == "total_loss":
                    total += loss
                elif mode == "correct":
                    total += loss.item()
            leaks.step()
    assert isinstance(leaks, LeakDetector) and len(leaks.history) == steps
    return [w for w in caught if issubclass(w.category, GraphLeakWarning)]


@pytest.mark.parametrize("mode", ["total_loss", "retain_graph"])
def test_leak_detector_fires(device: str, mode: str) -> None:
    found = run_loop(device, mode)
    assert len(found) == 1
    assert "grows every iteration" in str(found[0].message)


def test_leak_detector_is_quiet_for_a_correct_loop(device: str) -> None:
    assert run_loop(device, "correct", steps=8) == []


def test_graph_leak_warning_is_a_user_warning() -> None:
    assert issubclass(GraphLeakWarning, UserWarning)


def test_checkpointed_forward_saves_no_activations(device: str) -> None:
    """Inside ``checkpoint`` its own hooks win: the profiler sees only the segment's input."""
    from autograd_gpu.utils.checkpoint import checkpoint

    model = mlp(device)
    x = ag.randn(BATCH, 784, device=device)
    # NOTE: a collection mid-profile would free other tests' buffers and move the baseline.
    with gc_paused(), profile_memory(model) as prof:
        checkpoint(model, x, use_reentrant=False).sum().backward()
    assert prof.total_bytes == 0
    assert [r.kind for r in prof.saved] == ["input"]
    assert all(p.grad is not None for p in model.parameters())
