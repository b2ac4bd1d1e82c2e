"""erf and exact GELU on the NumPy backend against PyTorch CPU, one thread each, in one process.

Measures, on a 512x256 float32 tensor (131072 elements) and its float64 copy:

- ``erf``: ``erf(x)`` (float32 and float64);
- ``gelu_fwd``: ``nn.functional.gelu(x)`` (``approximate='none'``), ``x`` requiring grad;
- ``gelu_bwd``: ``y.backward(g)`` on a fresh ``y = gelu(x)`` (the forward not timed).

The two libraries alternate, round by round; each round takes the best of ``--repeat`` calls, and
the median of the rounds is reported (ms). ``--tree`` imports autograd_gpu from another checkout
(say, main before a change), so that before and after run the same script.

Usage: python bench/bench_erf.py [--rounds 7] [--repeat 5] [--tree PATH]
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


def _best(fn: Callable[[], Callable[[], Any]], repeat: int) -> float:
    """The fastest of ``repeat`` timed calls of ``fn()``'s result (``fn`` prepares, untimed)."""
    best = float("inf")
    for _ in range(repeat):
        run = fn()
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def _cases(m: Any, data: Any) -> dict[str, Callable[[], Callable[[], Any]]]:
    x32 = m.tensor(data)
    x64 = m.tensor(data.astype("float64"))
    xg = m.tensor(data, requires_grad=True)
    g = m.ones_like(xg)
    gelu = m.nn.functional.gelu

    def backward() -> Callable[[], Any]:
        xg.grad = None
        y = gelu(xg)
        return lambda: y.backward(g)

    return {
        "erf_f32": lambda: lambda: m.erf(x32),
        "erf_f64": lambda: lambda: m.erf(x64),
        "gelu_fwd": lambda: lambda: gelu(xg),
        "gelu_bwd": backward,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tree", default=str(ROOT), help="the checkout to import autograd_gpu from")
    args = parser.parse_args()
    sys.path.insert(0, args.tree)
    import numpy as np
    import torch

    import autograd_gpu

    torch.set_num_threads(1)
    data = (np.random.default_rng(0).standard_normal((512, 256))).astype(np.float32)
    libs = {"autograd_gpu": _cases(autograd_gpu, data), "torch": _cases(torch, data)}
    times: dict[str, dict[str, list[float]]] = {k: {} for k in libs}
    for _ in range(args.rounds):
        for lib, cases in libs.items():
            for name, fn in cases.items():
                times[lib].setdefault(name, []).append(_best(fn, args.repeat))
    for name in libs["torch"]:
        ours = statistics.median(times["autograd_gpu"][name])
        theirs = statistics.median(times["torch"][name])
        print(json.dumps({"case": name, "tree": args.tree, "autograd_gpu_ms": round(ours, 3),
                          "torch_ms": round(theirs, 3), "ratio": round(ours / theirs, 2)}))


if __name__ == "__main__":
    main()
