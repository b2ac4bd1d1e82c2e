"""``autograd-gpu``: ``demo`` (the seeds' examples, checked) until the training job lands."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tensor import Tensor


def _grad(t: Tensor) -> Tensor:
    """``t.grad``, which the backward call just before has filled in."""
    g = t.grad
    if g is None:
        raise RuntimeError("backward left no gradient")
    return g


def demo() -> int:
    """Run the seeds' examples and print what autograd computed next to the closed forms."""
    import autograd_gpu as torch

    torch.manual_seed(0)
    t0 = time.perf_counter()
    x = torch.randn(8, requires_grad=True)
    (x ** 3 - 2 * x).sum().backward()
    ok1 = torch.allclose(_grad(x), 3 * x.detach() ** 2 - 2)
    print(f"d/dx sum(x^3 - 2x) == 3x^2 - 2: {ok1}")
    x.grad = None
    torch.sigmoid(x).sum().backward()
    sig = torch.sigmoid(x.detach())
    ok2 = torch.allclose(_grad(x), sig * (1 - sig))
    print(f"d/dx sum(sigmoid(x)) == s(1 - s): {ok2}")
    w = torch.tensor([1.5], requires_grad=True)
    b = torch.tensor([0.3], requires_grad=True)
    loss = (torch.sigmoid(torch.tensor([2.0]) * w + b) - 1.0) ** 2
    print("loss.grad_fn:", loss.grad_fn, "->", loss.grad_fn.next_functions)
    loss.backward()
    print("w.grad:", w.grad, "b.grad:", b.grad)
    xs = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    ok3 = torch.autograd.gradcheck(lambda t: (t.sin() * t.exp()).sum(), (xs,))
    print(f"gradcheck(sin(x) * exp(x)) in float64: {ok3}")
    print(f"done in {time.perf_counter() - t0:.3f} s")
    return 0 if ok1 and ok2 and ok3 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="autograd-gpu", description=__doc__)
    sub = parser.add_subparsers(dest="cmd")
    sub.add_parser("demo", help="the seeds' autograd examples, checked against closed forms")
    args = parser.parse_args(argv)
    if args.cmd in (None, "demo"):
        return demo()
    parser.error(f"unknown command {args.cmd}")
    return 2
