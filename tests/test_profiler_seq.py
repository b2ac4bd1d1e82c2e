"""Activation memory of the sequence modules (issue #16, item 4): ``profile_memory`` attributes
the recurrent loops' per-step saves and the attention activations (weights included) to their
modules, its totals equal the tracker's count, and ``savings_report`` checkpoints a transformer
layer by layer and an LSTM. Expected figures come from the shapes (float32: 4 bytes)."""

from __future__ import annotations

import gc
from typing import Any

import pytest

import autograd_gpu as ag
from autograd_gpu import nn
from autograd_gpu.profiler import MemoryProfile, profile_memory, savings_report
from autograd_gpu.utils.checkpoint import checkpoint
from tests._gc import gc_paused

T, B, I, H = 5, 3, 8, 16  # time steps, batch, input size, hidden size
L, N, E, HEADS, FF = 3, 5, 16, 2, 32  # target length, batch, model width, heads, feed-forward


def blk(nbytes: int, device: str) -> int:
    return nbytes if device == "cpu" else (nbytes + 511) // 512 * 512


def _roots(out: Any) -> dict[int, int]:
    """``{id(root buffer): nbytes}`` of every tensor in ``out`` (nested tuples)."""
    if isinstance(out, (tuple, list)):
        found: dict[int, int] = {}
        for o in out:
            found.update(_roots(o))
        return found
    a = out._data
    while getattr(a, "base", None) is not None and hasattr(a.base, "nbytes"):
        a = a.base
    return {id(a): int(a.nbytes)}


def run(model: Any, *args: Any, backward: bool = True) -> tuple[MemoryProfile, int, int]:
    """Profile ``model(*args)``; returns the profile, the tracker's growth over the forward and
    the output's bytes (both in the tracker's units: 512-byte blocks on CUDA)."""
    dev = str(args[0].device)
    profiler = profile_memory(model)
    with gc_paused(), profiler as prof:
        base = ag.memory_allocated(dev)
        out = model(*args)
        grown = ag.memory_allocated(dev) - base
        # NOTE: an output that is itself saved (a cell's tanh output) is counted once, as saved
        saved = set(profiler._live)
        kept_out = sum(blk(n, dev) for k, n in _roots(out).items() if k not in saved)
        first = out[0] if isinstance(out, tuple) else out
        if backward:
            first.sum().backward()
    return prof, grown, kept_out


def tracker_figure(prof: MemoryProfile, device: str) -> int:
    return sum(blk(r.bytes, device) for r in prof.saved if r.kind == "activation")


def by_module(prof: MemoryProfile) -> dict[str, int]:
    return {r["name"]: r["bytes"] for r in prof.rows("module")}


# ---- recurrent layers -----------------------------------------------------------------------

class Seq(nn.Module):
    """A recurrent layer and a head on its last output."""

    def __init__(self, rnn: Any) -> None:
        super().__init__()
        self.rnn = rnn
        self.head = nn.Linear(rnn.hidden_size * (2 if rnn.bidirectional else 1), 4)

    def forward(self, x: Any, hx: Any) -> Any:
        out, _ = self.rnn(x, hx)
        return self.head(out[-1])


def lstm_step_bytes(first: bool, device: str = "cpu") -> int:
    """One LSTM step keeps: the gate pre-activations (B, 4H) and the fused cell's i, f, g, o,
    tanh(c') (B, H each); from the second step on also c_{t-1} (the fused cell's input) and
    h_{t-1} (the recurrent matmul's input), the previous step's outputs. On CUDA (PyTorch's CUDA
    cell, ``ops/rnn.py: FusedLstmCell``): the pre-activations, the workspace i, f, g, o (B, 4H)
    and c' (B, H), which the next step's cell reads as c_{t-1}; h_{t-1} from the second step."""
    if device == "cuda":
        return 4 * (2 * B * 4 * H + B * H + (0 if first else B * H))
    return 4 * (B * 4 * H + 5 * B * H + (0 if first else 2 * B * H))


@pytest.mark.parametrize("layers", [1, 2])
def test_lstm_per_step_saves(device: str, layers: int) -> None:
    model = Seq(nn.LSTM(I, H, num_layers=layers)).to(device)
    x = ag.randn(T, B, I, device=device)
    hx = (ag.randn(layers, B, H, device=device), ag.randn(layers, B, H, device=device))
    prof, grown, kept_out = run(model, x, hx)
    loop = lstm_step_bytes(True, device) + (T - 1) * lstm_step_bytes(False, device)
    stacked = 4 * T * B * H  # a layer's output: the next layer's and the head's input
    assert by_module(prof) == {"rnn (LSTM)": layers * loop + (layers - 1) * stacked,
                               "head (Linear)": stacked}
    fused = [r for r in prof.saved if r.op == "ThnnFusedLstmCellBackward0"
             and r.kind == "activation"]
    # per layer: 6 new storages every step (gates and five activations) + c_{t-1} from step 2;
    # on CUDA 3 (gates, workspace, c')
    assert len(fused) == layers * (3 * T if device == "cuda" else 6 * T + T - 1)
    assert sorted({tuple(r.shape) for r in fused}) == [(B, H), (B, 4 * H)]
    # the head saves a view of the stacked output: the whole buffer is kept and counted
    head = [r for r in prof.saved if r.module == "head (Linear)" and r.kind == "activation"]
    assert [r.shape for r in head] == [[T, B, H]]
    # the initial states are the caller's: kept apart
    assert all(r.kind == "input" for r in prof.saved if r.shape == [layers, B, H])
    assert grown == tracker_figure(prof, device) + kept_out
    assert prof.peaks["backward"] >= prof.baseline


@pytest.mark.parametrize("mode", ["GRU", "RNN"])
def test_gru_and_rnn_per_step_saves(device: str, mode: str) -> None:
    rnn = nn.GRU(I, H) if mode == "GRU" else nn.RNN(I, H)
    model = Seq(rnn).to(device)
    x = ag.randn(T, B, I, device=device)
    prof, grown, kept_out = run(model, x, ag.randn(1, B, H, device=device))
    if mode == "GRU" and device == "cuda":
        # PyTorch's CUDA cell (ops/rnn.py: FusedGruCell) keeps its inputs for a double backward:
        # the input projections (T, B, 3H) and per step W_hh h (B, 3H) and the workspace r, z,
        # n, h, W_hn h + b_hn (B, 5H); h_{t-1} from step 2
        loop = 4 * (T * 11 * B * H + (T - 1) * B * H)
    elif mode == "GRU":
        # per step: W_hh h + b_hh (B, 3H), r, z, n and h - n (B, H each); h_{t-1} from step 2
        loop = 4 * (T * 7 * B * H + (T - 1) * B * H)
    else:
        loop = 4 * T * B * H  # every step's tanh output (also the next step's matmul input)
    assert by_module(prof) == {f"rnn ({mode})": loop, "head (Linear)": 4 * T * B * H}
    assert grown == tracker_figure(prof, device) + kept_out


class CellLoop(nn.Module):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.cell = {"LSTMCell": nn.LSTMCell, "GRUCell": nn.GRUCell,
                     "RNNCell": nn.RNNCell}[kind](I, H)

    def forward(self, x: Any, h: Any) -> Any:
        state = (h, h) if self.kind == "LSTMCell" else h
        for t in range(x.shape[0]):
            state = self.cell(x[t], state)
        return state[0] if self.kind == "LSTMCell" else state


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_in_a_loop(device: str, kind: str) -> None:
    model = CellLoop(kind).to(device)
    x = ag.randn(T, B, I, device=device)
    prof, grown, kept_out = run(model, x, ag.randn(B, H, device=device))
    assert set(by_module(prof)) == {f"cell ({kind})"}
    # every step saves at least its new state's ingredients; the sizes are the per-step ones
    assert all(r.shape[0] == B for r in prof.saved if r.kind == "activation")
    if kind == "RNNCell":
        assert prof.total_bytes == 4 * T * B * H  # the tanh outputs
    assert grown == tracker_figure(prof, device) + kept_out


# ---- attention and transformer layers -------------------------------------------------------

def fused_attention(device: str) -> bool:
    """Whether SDPA runs our fused kernel here (CUDA with our kernels on: a GPU or the
    emulator), which keeps the row log-sum-exp instead of the attention weights."""
    x = ag.zeros(1, device=device)
    return device == "cuda" and bool(x.backend.fused_attention_ok(x._data))


def mha_bytes(first_layer: bool, device: str) -> int:
    """Self-attention (SDPA path, no weights returned) keeps: q * scale, k and v split by head
    (L, N, E each), the attention weights (N, heads, L, L), the heads merged for the output
    projection (L, N, E), and, unless it is the caller's, its input (L, N, E). The fused kernel
    keeps q, k, v split by head, its output (L, N, E each) and the row log-sum-exp (N, heads,
    L) instead of q * scale and the weights."""
    if fused_attention(device):
        return 4 * ((5 if first_layer else 6) * L * N * E + N * HEADS * L)
    return 4 * ((4 if first_layer else 5) * L * N * E + N * HEADS * L * L)


def encoder(device: str, layers: int = 2) -> Any:
    layer = nn.TransformerEncoderLayer(E, HEADS, FF, dropout=0.0)
    return nn.TransformerEncoder(layer, layers, enable_nested_tensor=False).to(device)


def test_transformer_encoder_attribution(device: str) -> None:
    model = encoder(device)
    x = ag.randn(L, N, E, device=device)
    prof, grown, kept_out = run(model, x)
    norm = 4 * (L * N * E + 2 * L * N)  # the normalised input, its mean and 1/std
    expected = {}
    for k in range(2):
        p = f"layers.{k}"
        expected.update({
            f"{p}.self_attn (MultiheadAttention)": mha_bytes(k == 0, device),
            f"{p}.norm1 (LayerNorm)": norm, f"{p}.norm2 (LayerNorm)": norm,
            f"{p}.linear1 (Linear)": 4 * L * N * E,  # norm1's output
            f"{p} (TransformerEncoderLayer)": 4 * L * N * FF,  # F.relu's output, in the layer
        })
    assert by_module(prof) == expected
    weights = [r for r in prof.saved if r.shape == [N, HEADS, L, L]]
    if fused_attention(device):
        assert weights == []
        lse = [r for r in prof.saved if r.shape == [N, HEADS, L]]
        assert [(r.op, r.module) for r in lse] == [
            ("ScaledDotProductEfficientAttentionBackward0",
             f"layers.{k}.self_attn (MultiheadAttention)") for k in range(2)]
    else:
        assert [(r.op, r.module) for r in weights] == [
            ("SoftmaxBackward0", f"layers.{k}.self_attn (MultiheadAttention)") for k in range(2)]
        assert all(r.count == 2 for r in weights)  # by softmax and by weights @ v
    assert grown == tracker_figure(prof, device) + kept_out


def test_multihead_attention_with_weights(device: str) -> None:
    """``need_weights=True`` takes the bmm path: the weights (N * heads, L, S) are saved by the
    softmax and by the bmm with v; the averaged weights returned are an output."""
    S = 4
    model = nn.MultiheadAttention(E, HEADS).to(device)
    q = ag.randn(L, N, E, device=device)
    kv = ag.randn(S, N, E, device=device)
    prof, grown, kept_out = run(model, q, kv, kv)
    weights = [r for r in prof.saved if r.shape == [N * HEADS, L, S]]
    assert [(r.op, r.module, r.count) for r in weights] == [
        ("SoftmaxBackward0", "MultiheadAttention", 2)]
    assert set(by_module(prof)) == {"MultiheadAttention"}
    assert grown == tracker_figure(prof, device) + kept_out


def test_transformer_decoder_layer(device: str) -> None:
    S = 4
    model = nn.TransformerDecoderLayer(E, HEADS, FF, dropout=0.0).to(device)
    tgt = ag.randn(L, N, E, device=device)
    memory = ag.randn(S, N, E, device=device)
    prof, grown, kept_out = run(model, tgt, memory)
    rows = by_module(prof)
    assert set(rows) == {"self_attn (MultiheadAttention)", "multihead_attn (MultiheadAttention)",
                         "norm1 (LayerNorm)", "norm2 (LayerNorm)", "norm3 (LayerNorm)",
                         "linear1 (Linear)", "TransformerDecoderLayer"}
    assert rows["TransformerDecoderLayer"] == 4 * L * N * FF
    cross = [r for r in prof.saved if r.shape == [N, HEADS, L, S]]
    assert [(r.op, r.module) for r in cross] == ([] if fused_attention(device) else [
        ("SoftmaxBackward0", "multihead_attn (MultiheadAttention)")])
    assert grown == tracker_figure(prof, device) + kept_out


# ---- the savings report ---------------------------------------------------------------------

def measured(device: str, fn: Any) -> tuple[int, int]:
    """Kept bytes and peak above the start of ``fn()``, measured here, apart from the report."""
    gc.collect()
    base = ag.memory_allocated(device)
    ag.reset_peak_memory_stats(device)
    out = fn()
    gc.collect()
    kept = ag.memory_allocated(device) - base
    peak = ag.max_memory_allocated(device) - base
    del out
    return kept, peak


def test_savings_report_checkpoints_each_transformer_layer(device: str) -> None:
    model = encoder(device)
    x = ag.randn(L, N, E, device=device)
    rep = savings_report(model, x, checkpoint=nn.TransformerEncoderLayer)
    prof, _, _ = run(model, x, backward=False)
    act = blk(L * N * E * 4, device)
    # grad keeps what the profile attributes, and the output
    assert rep["grad"]["kept_bytes"] == tracker_figure(prof, device) + act
    assert rep["no_grad"]["kept_bytes"] == act
    assert rep["checkpoint (one segment)"]["kept_bytes"] == act
    # per layer: layer 1's input (layer 0's output) and the output
    per = rep["checkpoint (per TransformerEncoderLayer)"]
    assert per["kept_bytes"] == 2 * act
    assert per["saved_bytes"] == rep["grad"]["kept_bytes"] - 2 * act

    def by_layer() -> Any:
        h = x
        with ag.enable_grad():
            for layer in model.layers:
                h = checkpoint(layer, h, use_reentrant=False)
        return h

    def plain() -> Any:
        with ag.enable_grad():
            return model(x)

    assert measured(device, by_layer) == (per["kept_bytes"], per["peak_bytes"])
    assert measured(device, plain) == (rep["grad"]["kept_bytes"], rep["grad"]["peak_bytes"])
    assert not any("forward" in vars(m) for m in model.modules())  # the wrappers are gone
    # the checkpointed layers still train: the gradients equal the plain ones
    plain().sum().backward()
    ref = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    by_layer().sum().backward()
    assert all(ag.allclose(p.grad, g, atol=1e-6) for p, g in zip(model.parameters(), ref))


class LastStep(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(I, H, num_layers=2)
        self.head = nn.Linear(H, 4)

    def forward(self, x: Any) -> Any:
        out, _ = self.lstm(x)
        return self.head(out[-1])


def test_savings_report_lstm(device: str) -> None:
    model = LastStep().to(device)
    x = ag.randn(T, B, I, device=device)
    rep = savings_report(model, x, checkpoint=nn.LSTM)
    prof, _, _ = run(model, x, backward=False)
    logits = blk(B * 4 * 4, device)
    zeros = 2 * blk(2 * B * H * 4, device)  # the LSTM's own h0 and c0 (kept: saved)
    kept = sum(blk(r.bytes, device) for r in prof.saved
               if r.kind == "activation" or r.shape == [2, B, H])
    assert rep["grad"]["kept_bytes"] == kept + logits
    assert kept - zeros == sum(blk(r.bytes, device) for r in prof.saved
                               if r.kind == "activation" and r.shape != [2, B, H])
    assert rep["checkpoint (one segment)"]["kept_bytes"] == logits
    # per LSTM: its output, which the head keeps a view of, and the logits
    per = rep["checkpoint (per LSTM)"]
    assert per["kept_bytes"] == blk(T * B * H * 4, device) + logits

    def seg() -> Any:
        with ag.enable_grad():
            out, _ = checkpoint(model.lstm, x, use_reentrant=False)
            return model.head(out[-1])

    assert measured(device, seg) == (per["kept_bytes"], per["peak_bytes"])
    assert "checkpoint (per LSTM)" in rep.table()


def test_savings_report_rejects_unknown_checkpoint(device: str) -> None:
    model = encoder(device, layers=1)
    x = ag.randn(L, N, E, device=device)
    with pytest.raises(ValueError, match="no module of TransformerEncoder"):
        savings_report(model, x, checkpoint=nn.LSTM)
    with pytest.raises(ValueError, match="checkpoint takes"):
        savings_report(model, x, checkpoint="layers")
