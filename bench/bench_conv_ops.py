"""Per-op breakdown of bench_conv.py's small CNN step against PyTorch CPU (one thread).

Each op of the network (conv2d, relu, max_pool2d, flatten, linear, cross_entropy) runs in
isolation on inputs of the shapes it sees in the step (batch 64 of 1x8x8), leaves requiring
grad: the forward (recording the graph), and the forward then ``backward`` with a gradient of
ones; the backward is their difference. The two libraries take turns round by round and each
time is the best of ``--rounds`` rounds of ``--iters`` calls, in CPU time of this process
(``time.process_time``: on a shared machine, time spent preempted is not the op's; the minimum
for the same reason). ``--batch`` and ``--size`` change the input.

Usage: python bench/bench_conv_ops.py [--rounds 15] [--iters 50] [--batch 64] [--size 8]
Output: a table in microseconds per call, and one JSON line per op.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: must happen before numpy or torch is imported

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import autograd_gpu as ag  # noqa: E402


def ops(T: Any, batch: int, size: int) -> dict[str, Callable[[], Any]]:
    """The step's ops on fixed random inputs of library ``T``."""
    rng = np.random.default_rng(0)
    F = T.nn.functional

    def leaf(*shape: int, grad: bool = True) -> Any:
        return T.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=grad)

    s1, s2 = size // 2, size // 4
    x = leaf(batch, 1, size, size, grad=False)
    w1, b1, h1 = leaf(8, 1, 3, 3), leaf(8), leaf(batch, 8, size, size)
    p1, w2, b2 = leaf(batch, 8, s1, s1), leaf(16, 8, 3, 3), leaf(16)
    h2, q2, f = leaf(batch, 16, s1, s1), leaf(batch, 16, s2, s2), leaf(batch, 16 * s2 * s2)
    wl, bl, logits = leaf(10, 16 * s2 * s2), leaf(10), leaf(batch, 10)
    y = T.tensor(rng.integers(0, 10, batch))
    return {
        "conv1": lambda: F.conv2d(x, w1, b1, padding=1),
        "relu1": lambda: F.relu(h1),
        "pool1": lambda: F.max_pool2d(h1, 2),
        "conv2": lambda: F.conv2d(p1, w2, b2, padding=1),
        "relu2": lambda: F.relu(h2),
        "pool2": lambda: F.max_pool2d(h2, 2),
        "flatten": lambda: T.flatten(q2, 1),
        "linear": lambda: F.linear(f, wl, bl),
        "cross_entropy": lambda: F.cross_entropy(logits, y),
    }


def best_of(fn: Callable[[], Any], iters: int) -> float:
    t0 = time.process_time()
    for _ in range(iters):
        fn()
    return (time.process_time() - t0) / iters * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--size", type=int, default=8)
    args = parser.parse_args()
    torch.set_num_threads(1)
    libs = {"ours": ag, "torch": torch}
    calls: dict[str, dict[str, tuple[Callable[[], Any], Callable[[], Any]]]] = {}
    for impl, T in libs.items():
        for name, fn in ops(T, args.batch, args.size).items():
            grad = T.ones_like(fn())

            def both(fn: Callable[[], Any] = fn, grad: Any = grad) -> None:
                fn().backward(grad)

            calls.setdefault(name, {})[impl] = (fn, both)
    best: dict[tuple[str, str, int], float] = {}
    for _ in range(args.rounds):
        for name, per in calls.items():
            for impl, pair in per.items():
                for i, fn in enumerate(pair):
                    t = best_of(fn, args.iters)
                    key = (name, impl, i)
                    best[key] = min(best.get(key, t), t)
    print(f"{'op':14s} {'ours fwd':>9s} {'torch fwd':>9s} {'ours bwd':>9s} {'torch bwd':>9s}"
          f" {'ratio':>6s}   (us per call; ratio of fwd+bwd)")
    totals = [0.0] * 4
    for name in calls:
        row = [best[(name, "ours", 0)], best[(name, "torch", 0)],
               best[(name, "ours", 1)] - best[(name, "ours", 0)],
               best[(name, "torch", 1)] - best[(name, "torch", 0)]]
        totals = [a + b for a, b in zip(totals, row)]
        ratio = best[(name, "ours", 1)] / best[(name, "torch", 1)]
        print(f"{name:14s} " + " ".join(f"{v:9.1f}" for v in row) + f" {ratio:6.2f}")
        print(json.dumps({"bench": "conv_ops", "op": name, "ours_fwd_us": round(row[0], 1),
                          "torch_fwd_us": round(row[1], 1), "ours_bwd_us": round(row[2], 1),
                          "torch_bwd_us": round(row[3], 1), "ratio": round(ratio, 2)}),
              file=sys.stderr)
    ratio = (totals[0] + totals[2]) / (totals[1] + totals[3])
    print(f"{'total':14s} " + " ".join(f"{v:9.1f}" for v in totals) + f" {ratio:6.2f}")


if __name__ == "__main__":
    main()
