"""A custom autograd.Function (a straight-through rounding) and a checked gradient: plain
PyTorch (ctx.save_for_backward, gradcheck, a hook on a tensor).

``python examples/custom_function.py`` or ``autograd-gpu run examples/custom_function.py``.
"""

import torch


class SoftClamp(torch.autograd.Function):
    """``tanh(x) * scale`` with its derivative written out by hand."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, scale: float) -> torch.Tensor:
        y = torch.tanh(x)
        ctx.save_for_backward(y)
        ctx.scale = scale
        return y * scale

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (y,) = ctx.saved_tensors
        return grad * ctx.scale * (1 - y * y), None


class RoundSTE(torch.autograd.Function):
    """Round in the forward pass, pass the gradient straight through."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return grad


torch.manual_seed(0)
x = torch.randn(8, dtype=torch.float64, requires_grad=True)
print("gradcheck:", torch.autograd.gradcheck(lambda t: SoftClamp.apply(t, 2.0), (x,)))
w = torch.randn(8, requires_grad=True)
seen = []
w.register_hook(lambda g: seen.append(g.norm().item()))
opt = torch.optim.SGD([w], lr=0.1)
for _ in range(25):
    loss = ((RoundSTE.apply(SoftClamp.apply(w, 3.0)) - 1.0) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"loss {loss.item():.6f} first grad norm {seen[0]:.6f}")
