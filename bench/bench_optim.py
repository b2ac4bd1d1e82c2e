"""Optimizer update benchmarks against PyTorch CPU, one thread each (issue #18 item 2).

Only ``opt.step()`` with fixed gradients, on the parameters of an MLP 784-256-128-10 (235,146
parameters in 6 tensors): Adam, SGD with momentum 0.9 and RMSprop. Three implementations:
``torch`` (its default on the CPU, the single-tensor path), ``ours`` (the default, the
multi-tensor fast path of ``optim/_foreach.py``) and ``ours_slow`` (``foreach=False``, our
single-tensor path: the "before"). Also ``small``: Adam on the digits MLP 64-128-64-10 (6 small
tensors, where per-step overhead shows).

Before timing, 3 steps from identical weights and gradients must give the same parameters
(within float32 rounding). Each measurement runs in its own process; the implementations' rounds
alternate and the median of the rounds is reported (best-of-5 batches of steps inside each
process, in process CPU time: one thread each, so time spent descheduled on a busy machine does
not count). Prints one JSON line per case.

Usage: python bench/bench_optim.py [--rounds 5] [--cases adam,sgd,rmsprop,small]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before numpy or torch is imported

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SIZES = {"small": (64, 128, 64, 10)}
OPTIMIZERS = {"adam": ("Adam", dict(lr=1e-3)), "sgd": ("SGD", dict(lr=1e-2, momentum=0.9)),
              "rmsprop": ("RMSprop", dict(lr=1e-3)), "small": ("Adam", dict(lr=1e-3))}
IMPLS = ("torch", "ours", "ours_slow")


def _lib(impl: str) -> Any:
    if impl == "torch":
        import torch

        torch.set_num_threads(1)
        return torch
    import autograd_gpu

    return autograd_gpu


def workload(impl: str, case: str) -> tuple[list[Any], Any]:
    """``(params, opt)``: the case's parameters (seeded normal values) with fixed gradients."""
    import numpy as np

    m = _lib(impl)
    sizes = SIZES.get(case, (784, 256, 128, 10))
    rng = np.random.default_rng(0)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        for shape in ((b, a), (b,)):
            p = m.tensor(rng.standard_normal(shape, dtype=np.float32) * 0.05, requires_grad=True)
            p.grad = m.tensor(rng.standard_normal(shape, dtype=np.float32) * 0.01)
            params.append(p)
    name, kw = OPTIMIZERS[case]
    extra = {"foreach": False} if impl == "ours_slow" else {}
    return params, getattr(m.optim, name)(params, **kw, **extra)


def serve(impl: str, case: str, reps: int) -> None:
    """Worker: warm up, then the best of 5 batches of ``reps`` steps; print seconds per step."""
    _, opt = workload(impl, case)
    for _ in range(5):
        opt.step()
    best = float("inf")
    for _ in range(5):
        t0 = time.process_time()
        for _ in range(reps):
            opt.step()
        best = min(best, (time.process_time() - t0) / reps)
    print(json.dumps({"s": best}))


def check(case: str) -> None:
    """3 steps from identical weights and gradients: the same parameters in all three."""
    import numpy as np

    results = []
    for impl in IMPLS:
        params, opt = workload(impl, case)
        for _ in range(3):
            opt.step()
        results.append([p.detach().numpy() for p in params])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-7)
    for a, b in zip(results[1], results[2]):
        np.testing.assert_array_equal(a, b)  # the fast path is the slow path, bit for bit


def _time(impl: str, case: str, reps: int) -> float:
    from bench_mlp import _time as worker_time

    return worker_time(impl, case, reps, __file__)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cases", default="adam,sgd,rmsprop,small")
    ap.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve[0], args.serve[1], int(args.serve[2]))
        return
    from bench_core import git_commit, machine

    info = machine()
    for case in args.cases.split(","):
        check(case)
        reps = 100 if case == "small" else 30
        times: dict[str, list[float]] = {impl: [] for impl in IMPLS}
        for r in range(args.rounds):
            for impl in (IMPLS if r % 2 == 0 else IMPLS[::-1]):
                times[impl].append(_time(impl, case, reps))
        med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
        print(json.dumps({"case": case, **{f"{k}_us": round(v, 1) for k, v in med.items()},
                          "ratio": round(med["ours"] / med["torch"], 3),
                          "ratio_before": round(med["ours_slow"] / med["torch"], 3), **info,
                          "commit": git_commit()}))


if __name__ == "__main__":
    main()
