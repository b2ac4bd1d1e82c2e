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
