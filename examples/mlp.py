"""A two-layer MLP classifying points of three interleaved spirals: plain PyTorch.

Run it with PyTorch (``python examples/mlp.py``) or on autograd_gpu, unchanged
(``autograd-gpu run examples/mlp.py``): after the same seed both print the same numbers.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
n, classes = 300, 3
t = torch.linspace(0.1, 1.0, n // classes).repeat(classes)
label = torch.arange(classes).repeat_interleave(n // classes)
angle = 4 * t + label * (2 * math.pi / classes) + 0.2 * torch.randn(n)
x = torch.stack([t * torch.cos(angle), t * torch.sin(angle)], dim=1)

model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, classes))
opt = torch.optim.Adam(model.parameters(), lr=0.01)
loader = DataLoader(TensorDataset(x, label), batch_size=32, shuffle=True)
for epoch in range(30):
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
with torch.no_grad():
    accuracy = (model(x).argmax(1) == label).float().mean().item()
print(f"loss {loss.item():.6f} accuracy {accuracy:.4f}")
