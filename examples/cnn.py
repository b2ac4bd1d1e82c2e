"""A small CNN telling horizontal from vertical bars in noisy 12x12 images: plain PyTorch
(Conv2d, BatchNorm2d, MaxPool2d, Dropout, SGD with momentum, a learning-rate schedule).

``python examples/cnn.py`` or ``autograd-gpu run examples/cnn.py``.
"""

import torch
from torch import nn, optim


def bars(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    y = torch.randint(0, 2, (n,))
    img = 0.3 * torch.randn(n, 1, 12, 12)
    pos = torch.randint(2, 10, (n,))
    for i in range(n):
        if y[i] == 0:
            img[i, 0, pos[i], :] += 1.0
        else:
            img[i, 0, :, pos[i]] += 1.0
    return img, y


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(16, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


torch.manual_seed(0)
x, y = bars(256)
model = Net()
opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
sched = optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
for epoch in range(20):
    model.train()
    for i in range(0, len(x), 64):
        loss = nn.functional.cross_entropy(model(x[i:i + 64]), y[i:i + 64])
        opt.zero_grad()
        loss.backward()
        opt.step()
    sched.step()
model.eval()
with torch.no_grad():
    accuracy = (model(x).argmax(1) == y).float().mean().item()
print(f"loss {loss.item():.6f} accuracy {accuracy:.4f}")
