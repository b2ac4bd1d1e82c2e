"""Function transforms benchmark (issue #6): per-sample gradients.

An MLP 64-128-10 (ReLU, cross-entropy) and a batch of 256 samples; the gradient of every
sample's loss w.r.t. all parameters, three ways in one process:

- ``vmap``: ``vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)`` (one batched pass);
- ``loop``: a Python loop of ``autograd.grad`` over the 256 samples (same library);
- ``torch.func``: PyTorch's ``vmap(grad(...))`` on the same data.

Results are checked against each other first (float32, rtol 1e-4), then each way is timed,
alternating, and the median is reported. Aims: ``loop / vmap >= 20`` and
``vmap / torch.func <= 1.5``. Prints one JSON line; ``--write`` refreshes RESULTS.md.

Usage: python bench/bench_func.py [--rounds 7] [--device cpu|cuda] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before numpy or torch is imported

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
HEADING = "## Function transforms: per-sample gradients"
BATCH, SIZES = 256, (64, 128, 10)


def _data() -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    d_in, hidden, d_out = SIZES
    return {
        "w1": rng.standard_normal((hidden, d_in), dtype=np.float32) / 8,
        "b1": rng.standard_normal(hidden, dtype=np.float32) / 8,
        "w2": rng.standard_normal((d_out, hidden), dtype=np.float32) / 11,
        "b2": rng.standard_normal(d_out, dtype=np.float32) / 11,
        "x": rng.standard_normal((BATCH, d_in), dtype=np.float32),
        "y": rng.integers(0, d_out, BATCH),
    }


def _loss(m: Any) -> Callable[..., Any]:
    F = m.nn.functional

    def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
        h = F.relu(F.linear(x, params["w1"], params["b1"]))
        out = F.linear(h, params["w2"], params["b2"])
        return F.cross_entropy(out.unsqueeze(0), y.unsqueeze(0))

    return loss


def workloads(device: str) -> dict[str, Callable[[], Any]]:
    """The three ways, each returning the per-sample gradients as a dict of arrays."""
    import torch

    import autograd_gpu as ag

    data = _data()
    names = ("w1", "b1", "w2", "b2")

    def to(m: Any, a: Any) -> Any:
        return m.tensor(a, device=device) if m is ag else torch.tensor(a, device=device)

    p_ag = {k: to(ag, data[k]) for k in names}
    x_ag, y_ag = to(ag, data["x"]), to(ag, data["y"])
    p_t = {k: to(torch, data[k]) for k in names}
    x_t, y_t = to(torch, data["x"]), to(torch, data["y"])
    loss_ag, loss_t = _loss(ag), _loss(torch)
    per_sample_ag = ag.func.vmap(ag.func.grad(loss_ag), in_dims=(None, 0, 0))
    per_sample_t = torch.func.vmap(torch.func.grad(loss_t), in_dims=(None, 0, 0))
    leaves = {k: v.detach().requires_grad_() for k, v in p_ag.items()}
    order = [leaves[k] for k in names]

    def vmap_ag() -> Any:
        g = per_sample_ag(p_ag, x_ag, y_ag)
        return {k: g[k].cpu().numpy() for k in names}

    def loop_ag() -> Any:
        rows = [ag.autograd.grad(loss_ag(leaves, x_ag[i], y_ag[i]), order) for i in range(BATCH)]
        return {k: ag.stack([r[j] for r in rows]).cpu().numpy() for j, k in enumerate(names)}

    def func_torch() -> Any:
        g = per_sample_t(p_t, x_t, y_t)
        return {k: g[k].cpu().numpy() for k in names}

    return {"vmap": vmap_ag, "loop": loop_ag, "torch.func": func_torch}


def check(ways: dict[str, Callable[[], Any]]) -> None:
    import numpy as np

    ref = ways["torch.func"]()
    for name in ("vmap", "loop"):
        got = ways[name]()
        for k, v in ref.items():
            if got[k].shape != v.shape or not np.allclose(got[k], v, rtol=1e-4, atol=1e-6):
                raise SystemExit(f"{name}: per-sample gradient of {k} differs from torch.func")


def measure(ways: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Median ms per call of each way, the ways alternating within each round."""
    for fn in ways.values():
        fn()
    times: dict[str, list[float]] = {k: [] for k in ways}
    for _ in range(rounds):
        for name, fn in ways.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--write", action="store_true", help="refresh bench/RESULTS.md")
    args = ap.parse_args()
    from bench_core import git_commit, machine

    from autograd_gpu.func._batched import FALLBACKS

    ways = workloads(args.device)
    check(ways)
    if FALLBACKS:
        print(f"note: ops run by the per-sample loop fallback: {FALLBACKS}", file=sys.stderr)
    med = measure(ways, args.rounds)
    info, commit = machine(), git_commit()
    row = {"case": "per_sample_grads", "batch": BATCH, "sizes": list(SIZES),
           "device": args.device, **{f"{k}_ms": round(v, 3) for k, v in med.items()},
           "loop_over_vmap": round(med["loop"] / med["vmap"], 2),
           "vmap_over_torch_func": round(med["vmap"] / med["torch.func"], 2),
           "fallbacks": dict(FALLBACKS), **info, "commit": commit}
    print(json.dumps(row))
    if args.write:
        _write(row, info, commit)


def _write(row: dict[str, Any], info: dict[str, Any], commit: str) -> None:
    from bench_core import write_section

    lines = [HEADING, "",
             f"Machine: {info['cpu']}, {info['cpu_count']} CPUs; Python {info['python']}, NumPy "
             f"{info['numpy']}, torch {info['torch']}; one thread; commit {commit}; "
             f"`python bench/bench_func.py --write` (device {row['device']}).", "",
             f"Per-sample gradients of an MLP {'-'.join(map(str, SIZES))} (ReLU, cross-entropy) "
             f"loss for a batch of {BATCH}, w.r.t. all four parameters, float32; results checked "
             "equal first; median ms of "
             "alternating calls. Aims: loop / vmap >= 20x, vmap / torch.func <= 1.5x.", "",
             "| way | ms | ratio |", "|---|---:|---:|",
             f"| autograd_gpu `vmap(grad(loss))` | {row['vmap_ms']:.2f} | 1 |",
             f"| autograd_gpu loop of `autograd.grad` | {row['loop_ms']:.2f} | "
             f"{row['loop_over_vmap']:.1f}x slower than vmap |",
             f"| torch.func `vmap(grad(loss))` | {row['torch.func_ms']:.2f} | vmap / torch.func = "
             f"{row['vmap_over_torch_func']:.2f} |", "",
             "Where vmap's time goes (cProfile): the per-sample weight gradients themselves "
             "(outer products into fresh arrays, 2.1 M floats for the first layer), then Python "
             "dispatch of about 130 batched op calls. The forward's products with the lifted "
             "weights (broadcast along the batch, stride 0) run as one GEMM each "
             "(`ops/linalg._bmm`); before that fold a profiling run took twice as long. "
             "Ops run by the per-sample loop fallback: "
             f"{row['fallbacks'] or 'none'}. Not measured on a GPU yet (issue #7).", ""]
    write_section(HEADING, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
