"""Per-sample gradients of a small model with torch.func (functional_call, grad, vmap),
checked against a loop of ordinary backward passes: plain PyTorch.

``python examples/per_sample_grads.py`` or ``autograd-gpu run examples/per_sample_grads.py``.
"""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
x, y = torch.randn(10, 5), torch.randn(10, 1)
params = {k: v.detach() for k, v in model.named_parameters()}


def loss_of(p: dict, xi: torch.Tensor, yi: torch.Tensor) -> torch.Tensor:
    out = functional_call(model, p, (xi.unsqueeze(0),))
    return ((out - yi.unsqueeze(0)) ** 2).mean()


per_sample = vmap(grad(loss_of), in_dims=(None, 0, 0))(params, x, y)
worst = 0.0
for i in range(len(x)):
    model.zero_grad()
    ((model(x[i:i + 1]) - y[i:i + 1]) ** 2).mean().backward()
    for name, p in model.named_parameters():
        worst = max(worst, (per_sample[name][i] - p.grad).abs().max().item())
norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).sum(0)
print(f"max difference to the loop {worst:.2e}")
print("per-sample gradient norms:", " ".join(f"{v:.5f}" for v in norms.tolist()))
