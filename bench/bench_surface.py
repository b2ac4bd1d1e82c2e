"""Speed of the wider surface's heavy ops against PyTorch (CPU, one thread each, same process):
sort, argsort, topk, cumsum, einsum at about 10^6 float32 elements (issue #14's benchmark; aim:
ours / torch <= 1.5).

Values are checked equal to torch's first. Each case alternates the two libraries, batch by
batch, and reports the median (and best) of the batch times.

Usage: python bench/bench_surface.py [--rounds 9] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before numpy or torch is imported

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HEADING = "## Surface ops at 10^6 elements (issue #14)"
N = 1 << 20


def _data(m: Any, np: Any) -> tuple[Any, Any, Any, Any]:
    """The operands for library ``m``: a vector, two batches of matrices, a matrix."""
    rng = np.random.default_rng(0)
    v = m.tensor(rng.standard_normal(N, dtype=np.float32))
    a = m.tensor(rng.standard_normal((64, 128, 128), dtype=np.float32))
    b = m.tensor(rng.standard_normal((64, 128, 128), dtype=np.float32))
    x = m.tensor(rng.standard_normal((1024, 1024), dtype=np.float32))
    return v, a, b, x


def _cases(m: Any, data: tuple[Any, Any, Any, Any]) -> dict[str, tuple[Callable[[], Any], str]]:
    """name -> (the call, its shapes) for library ``m`` on ``data``."""
    v, a, b, x = data
    return {
        "sort": (lambda: m.sort(v), f"[{N}]"),
        "sort_stable": (lambda: m.sort(v, stable=True), f"[{N}]"),
        "argsort_2d_dim1": (lambda: m.argsort(x, dim=1), "[1024, 1024]"),
        "topk_10": (lambda: m.topk(v, 10), f"[{N}], k=10"),
        "cumsum": (lambda: m.cumsum(v, 0), f"[{N}]"),
        "cumsum_2d_dim0": (lambda: m.cumsum(x, 0), "[1024, 1024]"),
        "einsum_bij_bjk": (lambda: m.einsum("bij,bjk->bik", a, b), "[64, 128, 128] x2"),
        "einsum_ij_ij_i": (lambda: m.einsum("ij,ij->i", x, x), "[1024, 1024] x2"),
    }


def _same(ours: Any, theirs: Any) -> None:
    import numpy as np

    o = ours if isinstance(ours, tuple) else (ours,)
    t = theirs if isinstance(theirs, tuple) else (theirs,)
    for p, q in zip(o, t):
        np.testing.assert_allclose(np.asarray(p.tolist()), q.numpy(), rtol=2e-4, atol=2e-3)


def run(rounds: int) -> list[dict[str, Any]]:
    import numpy as np
    import torch

    import autograd_gpu as ag

    torch.set_num_threads(1)
    data_ours, data_theirs = _data(ag, np), _data(torch, np)
    ours, theirs = _cases(ag, data_ours), _cases(torch, data_theirs)
    x_ours, x_theirs = data_ours[3], data_theirs[3]
    rows = []
    for name, (fn, shape) in ours.items():
        try:
            got = fn()
        except AttributeError as e:
            rows.append({"case": name, "shape": shape, "missing": str(e)})
            continue
        tfn = theirs[name][0]
        if name.startswith("sort") or name.startswith("topk"):
            _same(got[0], tfn()[0])  # NOTE: values: the indices of ties may differ
        elif name.startswith("argsort"):
            _same(ag.tensor(np.take_along_axis(np.asarray(x_ours.tolist()),
                                               np.asarray(got.tolist()), 1)),
                  torch.from_numpy(np.sort(x_theirs.numpy(), 1)))
        else:
            _same(got, tfn())
        times: dict[str, list[float]] = {"ours": [], "torch": []}
        reps = 3
        for r in range(rounds):
            for who, f in ((("ours", fn), ("torch", tfn)) if r % 2 == 0 else
                           (("torch", tfn), ("ours", fn))):
                t0 = time.perf_counter()
                for _ in range(reps):
                    f()
                times[who].append((time.perf_counter() - t0) / reps * 1e3)
        med = {k: statistics.median(v) for k, v in times.items()}
        best = {k: min(v) for k, v in times.items()}
        rows.append({"case": name, "shape": shape, "ours_ms": med["ours"],
                     "torch_ms": med["torch"], "ratio": med["ours"] / med["torch"],
                     "best_ratio": best["ours"] / best["torch"]})
        print(rows[-1], file=sys.stderr)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| case | shape | torch ms | ours ms | ours/torch | ours/torch (best) |",
             "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        if "missing" in r:
            lines.append(f"| {r['case']} | {r['shape']} | - | missing | - | - |")
            continue
        lines.append(f"| {r['case']} | {r['shape']} | {r['torch_ms']:.2f} | {r['ours_ms']:.2f} |"
                     f" {r['ratio']:.2f} | {r['best_ratio']:.2f} |")
    return "\n".join(lines)


def _write(text: str) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_core import write_section

    write_section(HEADING, text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--write", action="store_true", help="record the table in bench/RESULTS.md")
    args = ap.parse_args()
    rows = run(args.rounds)
    text = table(rows)
    print(text)
    if args.write:
        import numpy as np
        import torch

        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        cpu = platform.processor() or platform.machine()
        _write(f"{HEADING}\n\nMachine: {cpu}, {os.cpu_count()} CPUs; Python "
               f"{platform.python_version()}, NumPy {np.__version__}, torch {torch.__version__}; "
               f"one thread; {datetime.date.today()}; commit {commit}; "
               "`python bench/bench_surface.py --write`. Median of alternating batches; values "
               "checked against torch first. Aim: ours/torch <= 1.5.\n\n" + text + "\n")


if __name__ == "__main__":
    main()
