"""A tiny GPT (causal self-attention blocks written out, as in minGPT) trained to continue a
repeating character pattern, then sampled greedily: plain PyTorch.

``python examples/gpt.py`` or ``autograd-gpu run examples/gpt.py``.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

text = "the quick brown fox jumps over the lazy dog. " * 8
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
data = torch.tensor([stoi[c] for c in text])
block, vocab, width, heads = 16, len(chars), 32, 4


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(width, dim=2)
        q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.zeros(1, block, width))
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(width, vocab)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos[:, :idx.shape[1]]
        return self.head(self.blocks(x))


torch.manual_seed(0)
model = GPT()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
for step in range(60):
    start = torch.randint(0, len(data) - block - 1, (16,))
    xb = torch.stack([data[s:s + block] for s in start])
    yb = torch.stack([data[s + 1:s + block + 1] for s in start])
    loss = F.cross_entropy(model(xb).view(-1, vocab), yb.view(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
idx = data[:block].unsqueeze(0)
with torch.no_grad():
    for _ in range(20):
        nxt = model(idx[:, -block:])[:, -1].argmax(-1, keepdim=True)
        idx = torch.cat([idx, nxt], dim=1)
print(f"loss {loss.item():.6f}")
print("sample:", "".join(chars[i] for i in idx[0, block:].tolist()))
