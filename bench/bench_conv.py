"""Small-CNN benchmark: forward + backward of conv-relu-pool x2 + linear + cross-entropy.

Batch 64 of 1x8x8 inputs (a digits-like size): Conv2d(1, 8, 3, padding=1), ReLU, MaxPool2d(2),
Conv2d(8, 16, 3, padding=1), ReLU, MaxPool2d(2), Flatten, Linear(64, 10). autograd_gpu against
PyTorch CPU with one thread, same weights and data, in one process taking turns round by round.
The loss and every parameter gradient are checked against torch before timing.

Usage:
    .venv/bin/python bench/bench_conv.py [--batch 64] [--rounds 30] [--iters 20]

Output: one JSON line per implementation (median ms per step) and one with the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: must happen before numpy or torch is imported

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import autograd_gpu as ag  # noqa: E402


def build(T: Any) -> Any:
    nn = T.nn
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(64, 10))


def step(T: Any, net: Any, x: Any, y: Any) -> Any:
    for p in net.parameters():
        p.grad = None
    loss = T.nn.functional.cross_entropy(net(x), y)
    loss.backward()
    return loss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    xa = rng.random((args.batch, 1, 8, 8), dtype=np.float32)
    ya = rng.integers(0, 10, args.batch)
    ours, theirs = build(ag), build(torch)
    with torch.no_grad():
        for p, q in zip(ours.parameters(), theirs.parameters()):
            q.copy_(torch.from_numpy(np.array(p.detach().numpy())))
    runs = {
        "ours": (ag, ours, ag.tensor(xa), ag.tensor(ya)),
        "torch": (torch, theirs, torch.from_numpy(xa), torch.from_numpy(ya)),
    }
    losses = {k: float(step(*v).detach()) for k, v in runs.items()}
    assert abs(losses["ours"] - losses["torch"]) < 1e-5, losses
    for p, q in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6)
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(3):  # warm-up
        for v in runs.values():
            step(*v)
    for _ in range(args.rounds):
        for name, v in runs.items():
            t0 = time.perf_counter()
            for _ in range(args.iters):
                step(*v)
            times[name].append((time.perf_counter() - t0) / args.iters * 1e3)
    meta = {"bench": "small_cnn_fwd_bwd", "batch": args.batch, "input": [1, 8, 8],
            "device": "cpu", "threads": 1, "machine": platform.machine(),
            "numpy": np.__version__, "torch": torch.__version__}
    med = {k: statistics.median(v) for k, v in times.items()}
    for name, ms in med.items():
        print(json.dumps({**meta, "impl": name, "median_ms": round(ms, 4)}))
    print(json.dumps({**meta, "ratio_ours_over_torch": round(med["ours"] / med["torch"], 3)}))


if __name__ == "__main__":
    main()
