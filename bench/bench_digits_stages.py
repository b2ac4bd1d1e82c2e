"""The digits epoch of ``bench_mlp.py`` taken apart: each stage timed alone, ours against
PyTorch CPU, one thread (issue #18: where the epoch's time goes).

Stages, each over the epoch's 23 batches (CPU ms per epoch, best of ``--repeats``):
``loader`` (iterating the shuffling DataLoader), ``loss`` (the label-smoothed cross-entropy,
forward and backward, on detached logits), ``forward`` (model and loss), ``fwd_bwd`` (zero_grad,
forward, backward) and ``epoch`` (the job's loop: with Adam's step and ``loss.item()``).

Each library runs in its own process, alternating; prints one JSON line per (library, stage).

Usage: python bench/bench_digits_stages.py [--rounds 2] [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before numpy or torch is imported

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def stages(m: Any) -> dict[str, Callable[[], float]]:
    """Each stage as a function returning its CPU seconds for one epoch."""
    import numpy as np
    from sklearn.datasets import load_digits

    from bench_mlp import _mlp

    x, y = load_digits(return_X_y=True)
    x = ((x - x.mean()) / x.std()).astype(np.float32)[:1437]
    data = m.utils.data.TensorDataset(m.tensor(x), m.tensor(y[:1437]))
    loader = m.utils.data.DataLoader(data, batch_size=64, shuffle=True,
                                     generator=m.Generator().manual_seed(0))
    model = _mlp(m, [64, 128, 64, 10])
    opt = m.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = m.nn.CrossEntropyLoss(label_smoothing=0.1)
    batches = list(loader)

    def timed(body: Callable[[], None]) -> Callable[[], float]:
        def run() -> float:
            t0 = time.process_time()
            body()
            return time.process_time() - t0
        return run

    def loader_only() -> None:
        for _ in loader:
            pass

    def forward() -> None:
        for xb, yb in batches:
            loss_fn(model(xb), yb)

    def fwd_bwd() -> None:
        for xb, yb in batches:
            opt.zero_grad()
            loss_fn(model(xb), yb).backward()

    def epoch() -> None:
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            float(loss.item())

    def loss_only() -> float:
        logits = [model(xb).detach().requires_grad_() for xb, _ in batches]
        t0 = time.process_time()
        for z, (_, yb) in zip(logits, batches):
            loss_fn(z, yb).backward()
        return time.process_time() - t0

    return {"loader": timed(loader_only), "loss": loss_only, "forward": timed(forward),
            "fwd_bwd": timed(fwd_bwd), "epoch": timed(epoch)}


def serve(impl: str, repeats: int) -> None:
    if impl == "torch":
        import torch as m

        m.set_num_threads(1)
    else:
        import autograd_gpu as m  # type: ignore[no-redef]
    for name, run in stages(m).items():
        ms = min(run() for _ in range(repeats)) * 1e3
        print(json.dumps({"impl": impl, "stage": name, "ms_per_epoch": round(ms, 3)}), flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        serve(args.serve, args.repeats)
        return 0
    for _ in range(args.rounds):
        for impl in ("torch", "ours"):
            out = subprocess.run([sys.executable, __file__, "--serve", impl, "--repeats",
                                  str(args.repeats)], capture_output=True, text=True, check=True)
            sys.stdout.write(out.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
