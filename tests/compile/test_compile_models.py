"""Whole programs' steps through ``compile``: the examples' tiny GPT (embedding, LayerNorm,
causal attention, GELU, AdamW with weight decay, ``zero_grad(set_to_none=True)``) replays
without a break and gives eager's losses and weights bit for bit."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import autograd_gpu as torch
import autograd_gpu.nn as nn
import autograd_gpu.nn.functional as F

WIDTH, HEADS, BLOCK, VOCAB = 16, 2, 8, 11


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(), nn.Linear(4 * WIDTH, WIDTH))

    def forward(self, x: Any) -> Any:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(WIDTH, dim=2)
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.mlp(self.ln2(x))


class _GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(VOCAB, WIDTH)
        self.pos = nn.Parameter(torch.zeros(1, BLOCK, WIDTH))
        self.blocks = nn.Sequential(_Block(), _Block())
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, idx: Any) -> Any:
        return self.head(self.blocks(self.tok(idx) + self.pos[:, :idx.shape[1]]))


def _train(compiled: bool) -> tuple[list[float], Any, Any]:
    torch.manual_seed(0)
    model = _GPT()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)

    def step(xb: Any, yb: Any) -> Any:
        loss = F.cross_entropy(model(xb).view(-1, VOCAB), yb.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    fn = torch.compile(step) if compiled else step
    rng = np.random.default_rng(1)
    losses = []
    for _ in range(6):
        seq = torch.tensor(rng.integers(0, VOCAB, (4, BLOCK + 1)))
        losses.append(fn(seq[:, :-1].contiguous(), seq[:, 1:].contiguous()).item())
    return losses, model, fn


def test_tiny_gpt_step_replays_exactly() -> None:
    eager, m1, _ = _train(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled, m2, fn = _train(True)
    assert eager == compiled
    for (name, p), q in zip(m1.state_dict().items(), m2.state_dict().values()):
        assert np.array_equal(p.numpy(), q.numpy()), name
    ex = fn.explain()
    assert ex.replaying == 1 and ex.graph_break_count == 0, str(ex)


class _Summer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(1, 12, batch_first=True)
        self.out = nn.Linear(12, 1)

    def forward(self, x: Any) -> Any:
        h, _ = self.lstm(x)
        return self.out(h).squeeze(-1)


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(8, 2))

    def forward(self, x: Any) -> Any:
        return self.head(self.features(x))


def _examples_run(kind: str, compiled: bool) -> tuple[list[float], Any, Any]:
    """examples/lstm.py's step (Adam, clip_grad_norm_) or examples/cnn.py's (SGD with momentum,
    StepLR stepped outside, slices of one batch tensor as inputs), shrunk."""
    torch.manual_seed(0)
    if kind == "lstm":
        x = torch.randint(0, 10, (8, 6, 1)).float() / 10
        y = x.squeeze(-1).cumsum(1)
        model: Any = _Summer()
        opt: Any = torch.optim.Adam(model.parameters(), lr=0.005)
        sched = None
    else:
        x, y = torch.randn(32, 1, 8, 8), torch.randint(0, 2, (32,))
        model = _Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

    def step(xb: Any, yb: Any) -> Any:
        out = model(xb)
        loss = F.mse_loss(out, yb) if kind == "lstm" else F.cross_entropy(out, yb)
        opt.zero_grad()
        loss.backward()
        if kind == "lstm":
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    fn = torch.compile(step) if compiled else step
    losses = []
    for _ in range(3):
        for i in range(0, len(x), 16 if kind == "cnn" else len(x)):
            losses.append(fn(x[i:i + 16], y[i:i + 16]).item() if kind == "cnn"
                          else fn(x, y).item())
        if sched is not None:
            sched.step()
    return losses, model, fn


def test_the_examples_lstm_and_cnn_steps_replay_exactly() -> None:
    for kind in ("lstm", "cnn"):
        eager, m1, _ = _examples_run(kind, False)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compiled, m2, fn = _examples_run(kind, True)
        assert eager == compiled, kind
        for (name, p), q in zip(m1.state_dict().items(), m2.state_dict().values()):
            assert np.array_equal(p.numpy(), q.numpy()), (kind, name)
        ex = fn.explain()
        assert ex.replaying >= 1 and ex.graph_break_count == 0, (kind, str(ex))
