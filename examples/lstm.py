"""An LSTM that learns to add up a sequence of digits (regression on the running total):
plain PyTorch (nn.LSTM with batch_first, gradient clipping).

``python examples/lstm.py`` or ``autograd-gpu run examples/lstm.py``.
"""

import torch
from torch import nn


class Summer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(1, 24, batch_first=True)
        self.out = nn.Linear(24, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(x)
        return self.out(h).squeeze(-1)


torch.manual_seed(0)
x = torch.randint(0, 10, (64, 10, 1)).float() / 10
target = x.squeeze(-1).cumsum(1)
model = Summer()
opt = torch.optim.Adam(model.parameters(), lr=0.005)
for step in range(60):
    loss = nn.functional.mse_loss(model(x), target)
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
print(f"loss {loss.item():.6f}")
