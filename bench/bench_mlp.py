"""Training-step benchmarks against PyTorch CPU, one thread each (issue #3's benchmark).

1. ``step``: an MLP 784-256-256-10 (ReLU) on a batch of 128, cross-entropy, SGD:
   ``zero_grad(); cross_entropy(model(x), y).backward(); step()``.
2. ``small_adam``: an MLP 64-128-64-10 on a batch of 64 with Adam (the digits model's step on
   fixed data: per-op overhead and the optimizer, not the DataLoader).
3. ``digits_epoch``: one epoch of the digits job's training loop (64-128-64-10 MLP, Adam,
   batch 64, label smoothing 0.1, a shuffling DataLoader over 1437 samples).

The same workload code runs on both libraries (only the module differs, as the project promises).
Before timing, one step from identical weights must give the same loss and gradients. Each
measurement runs in its own process; the two libraries' rounds alternate, and the median of the
rounds is reported. Prints one JSON line per measurement; ``--write`` refreshes RESULTS.md.

Usage: python bench/bench_mlp.py [--rounds 7] [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before numpy or torch is imported

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
HEADING = "## Training step: MLP and digits epoch"


def _lib(impl: str) -> Any:
    if impl == "torch":
        import torch

        torch.set_num_threads(1)
        return torch
    import autograd_gpu

    return autograd_gpu


def _mlp(m: Any, sizes: list[int]) -> Any:
    layers: list[Any] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [m.nn.Linear(a, b), m.nn.ReLU()]
    return m.nn.Sequential(*layers[:-1])


def _copy_weights(src: Any, dst: Any, m: Any) -> None:
    with m.no_grad():
        for p, q in zip(src.parameters(), dst.parameters()):
            q.copy_(m.tensor(p.detach().numpy()))


def step_workload(m: Any, device: str = "cpu", batch: int = 128, seed: int = 0,
                  sizes: tuple[int, ...] = (784, 256, 256, 10), adam: bool = False
                  ) -> tuple[Any, Any]:
    """The step case, shared by the other benchmarks: ``(model, step)``, an MLP of ``sizes``
    (ReLU) on ``device`` with fixed random data (``seed``) and SGD (or Adam); ``step()`` runs
    ``zero_grad``, the forward, cross-entropy, backward and the update, and returns the loss."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = m.tensor(rng.standard_normal((batch, sizes[0]), dtype=np.float32), device=device)
    y = m.tensor(rng.integers(0, sizes[-1], batch), device=device)
    model = _mlp(m, list(sizes)).to(device)
    opt = m.optim.Adam(model.parameters(), lr=1e-3) if adam else \
        m.optim.SGD(model.parameters(), lr=0.01)

    def step() -> Any:
        opt.zero_grad()
        loss = m.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return model, step


def digits_workload(m: Any) -> Any:
    """The digits epoch case: returns a function running one training epoch."""
    import numpy as np
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = ((x - x.mean()) / x.std()).astype(np.float32)[:1437]  # the job's train-split size
    data = m.utils.data.TensorDataset(m.tensor(x), m.tensor(y[:1437]))
    gen = m.Generator().manual_seed(0)
    loader = m.utils.data.DataLoader(data, batch_size=64, shuffle=True, generator=gen)
    model = _mlp(m, [64, 128, 64, 10])
    opt = m.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = m.nn.CrossEntropyLoss(label_smoothing=0.1)

    def epoch() -> float:
        model.train()
        total = 0.0
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            total += float(loss.item())
        return total

    return epoch


WORKLOADS = {
    "step": lambda m: step_workload(m)[1],
    "small_adam": lambda m: step_workload(m, batch=64, sizes=(64, 128, 64, 10), adam=True)[1],
    "digits_epoch": digits_workload,
}


def serve(impl: str, case: str, reps: int) -> None:
    """Worker: warm up, then time ``reps`` repetitions; print seconds per repetition."""
    m = _lib(impl)
    m.manual_seed(0)
    fn = WORKLOADS[case](m)
    for _ in range(3):
        fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    print(json.dumps({"s": (time.perf_counter() - t0) / reps}))


def check() -> None:
    """One step (SGD; Adam for small_adam) from identical weights: same loss and updated weights
    (float32 rounding)."""
    import numpy as np
    import torch

    import autograd_gpu as ag

    for kw in ({}, {"batch": 64, "sizes": (64, 128, 64, 10), "adam": True}):
        torch.manual_seed(0)
        tmodel, tstep = step_workload(torch, **kw)  # type: ignore[arg-type]
        amodel, astep = step_workload(ag, **kw)  # type: ignore[arg-type]
        _copy_weights(tmodel, amodel, ag)
        for _ in range(2):
            lt, la = float(tstep().item()), float(astep().item())
            assert abs(lt - la) <= 1e-5 * abs(lt), (lt, la)
        for p, q in zip(tmodel.parameters(), amodel.parameters()):
            np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), rtol=1e-4,
                                       atol=1e-6)


def _time(impl: str, case: str, reps: int, script: str = __file__) -> float:
    """Seconds per repetition of ``case`` in a fresh ``script --serve`` worker process."""
    out = subprocess.run([sys.executable, script, "--serve", impl, case, str(reps)],
                         capture_output=True, text=True, check=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--write", action="store_true", help="refresh bench/RESULTS.md")
    ap.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve[0], args.serve[1], int(args.serve[2]))
        return
    check()
    from bench_core import git_commit, machine

    info = machine()
    rows = {}
    for case, reps in (("step", 30), ("small_adam", 100), ("digits_epoch", 5)):
        times: dict[str, list[float]] = {"torch": [], "ours": []}
        for r in range(args.rounds):
            for impl in (("torch", "ours") if r % 2 == 0 else ("ours", "torch")):
                times[impl].append(_time(impl, case, reps))
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        rows[case] = med
        print(json.dumps({"case": case, "torch_ms": round(med["torch"], 3),
                          "ours_ms": round(med["ours"], 3),
                          "ratio": round(med["ours"] / med["torch"], 3), **info,
                          "commit": git_commit()}))
    if args.write:
        _write(rows, info, git_commit())


def _write(rows: dict[str, dict[str, float]], info: dict[str, Any], commit: str) -> None:
    lines = [HEADING, "",
             f"Machine: {info['cpu']}, {info['cpu_count']} CPUs; Python {info['python']}, NumPy "
             f"{info['numpy']}, torch {info['torch']}; one thread; commit {commit}; "
             "`python bench/bench_mlp.py --write` (median of alternating rounds, ms).", "",
             "| case | torch ms | ours ms | ours/torch | aim |", "|---|---:|---:|---:|---:|"]
    aims = {"step": "<= 1.0", "small_adam": "<= 1.0", "digits_epoch": "<= 0.6"}
    for case, med in rows.items():
        lines.append(f"| {case} | {med['torch']:.2f} | {med['ours']:.2f} | "
                     f"{med['ours'] / med['torch']:.2f} | {aims[case]} |")
    from bench_core import write_section

    write_section(HEADING, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
