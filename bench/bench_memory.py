"""Memory tracker benchmark (issue #5): its cost on a training step.

1. ``overhead``: the MLP step of ``bench_mlp.py`` (784-256-256-10, ReLU, cross-entropy, SGD) at
   batch 128 and 16, with CPU tracking on and off (``autograd_gpu.memory.set_enabled``). Blocks
   of steps alternate on/off in one process, one thread; the median per-step time of each mode
   is reported. Aim: <= 3% slower with tracking on.
2. ``per_buffer``: the cost of ``Tensor._make`` per new CPU buffer, tracked and untracked.

The kept bytes against PyTorch's are ``bench_activation_memory.py``'s.

Prints one JSON line per measurement; ``--write`` refreshes the "## Memory tracker" section of
RESULTS.md. CPU numbers only.

Usage: python bench/bench_memory.py [--rounds 15] [--write]
"""

from __future__ import annotations

import argparse
import gc
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
HEADING = "## Memory tracker"
SIZES = [784, 256, 256, 10]


def _step(ag: Any, batch: int) -> Any:
    from bench_mlp import step_workload

    return step_workload(ag, batch=batch, sizes=tuple(SIZES))[1]


def overhead(batch: int, rounds: int, reps: int) -> dict[str, float]:
    """Median ms per step with tracking on and off, blocks alternating."""
    import autograd_gpu as ag

    ag.manual_seed(0)
    step = _step(ag, batch)
    for _ in range(20):
        step()
    times: dict[str, list[float]] = {"on": [], "off": []}
    for r in range(rounds):
        for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
            ag.memory.set_enabled(mode == "on")
            gc.collect()
            t0 = time.perf_counter()
            for _ in range(reps):
                step()
            times[mode].append((time.perf_counter() - t0) / reps * 1e3)
    ag.memory.set_enabled(True)
    return {k: statistics.median(v) for k, v in times.items()}


def per_buffer_ns(rounds: int) -> dict[str, float]:
    """Median ns of ``Tensor._make`` on a new 3-element buffer, tracking on and off, and the
    buffers one batch-16 step registers: a noise-free estimate of the step overhead."""
    import numpy as np

    import autograd_gpu as ag

    make, cpu, empty, n = ag.Tensor._make, ag.device("cpu"), np.empty, 20000
    times: dict[str, list[float]] = {"on": [], "off": []}
    for r in range(rounds):
        for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
            ag.memory.set_enabled(mode == "on")
            t0 = time.perf_counter()
            for _ in range(n):
                make(empty(3), cpu)
            times[mode].append((time.perf_counter() - t0) / n * 1e9)
    ag.memory.set_enabled(True)
    step = _step(ag, 16)
    step()
    before = ag.memory_stats()["allocation.all.allocated"]
    step()
    buffers = ag.memory_stats()["allocation.all.allocated"] - before
    return {**{k: statistics.median(v) for k, v in times.items()}, "buffers": buffers}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--write", action="store_true", help="refresh bench/RESULTS.md")
    args = ap.parse_args()
    from bench_core import git_commit, machine

    info, commit = machine(), git_commit()
    rows: list[tuple[int, dict[str, float]]] = []
    for batch, reps in ((128, 40), (16, 200)):
        med = overhead(batch, args.rounds, reps)
        rows.append((batch, med))
        print(json.dumps({"case": "overhead", "batch": batch, "on_ms": round(med["on"], 4),
                          "off_ms": round(med["off"], 4),
                          "overhead": round(med["on"] / med["off"] - 1, 4), **info,
                          "commit": commit}))
    cost = per_buffer_ns(args.rounds)
    print(json.dumps({"case": "per_buffer", "on_ns": round(cost["on"]), "off_ns": round(cost["off"]),
                      "buffers_per_step": cost["buffers"], **info, "commit": commit}))
    if args.write:
        _write(rows, cost, info, commit)


def _write(rows: list[tuple[int, dict[str, float]]], cost: dict[str, float],
           info: dict[str, Any], commit: str) -> None:
    from bench_core import write_section

    lines = [HEADING, "",
             f"Machine: {info['cpu']}, {info['cpu_count']} CPUs; Python {info['python']}, NumPy "
             f"{info['numpy']}, torch {info['torch']}; one thread; commit {commit}; "
             "`python bench/bench_memory.py --write`. CPU only.", "",
             "MLP 784-256-256-10 training step (SGD), CPU tracking on vs off "
             "(`autograd_gpu.memory.set_enabled`), blocks alternating in one process, median ms "
             "per step. Aim: <= 3% overhead.", "",
             "| batch | on ms | off ms | overhead |", "|---:|---:|---:|---:|"]
    for b, med in rows:
        lines.append(f"| {b} | {med['on']:.3f} | {med['off']:.3f} | "
                     f"{(med['on'] / med['off'] - 1) * 100:+.1f}% |")
    extra = (cost["on"] - cost["off"]) * cost["buffers"] / 1e6
    step16 = dict(rows)[16]["off"]
    lines += ["", f"Per new CPU buffer, `Tensor._make` takes {cost['on']:.0f} ns tracked and "
              f"{cost['off']:.0f} ns untracked; a batch-16 step registers {cost['buffers']:.0f} "
              f"new buffers: about {extra * 1e3:.0f} us, {extra / step16 * 100:.1f}% of that step "
              "(less at batch 128). The step A/B above is noisy where other jobs share the CPUs.",
              ""]
    lines += ["The bytes kept against PyTorch's: see \"Activation memory\" below.", ""]
    write_section(HEADING, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
