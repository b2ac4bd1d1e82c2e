"""What thread-safe gradient accumulation costs the single-threaded path (issue #13, finding 2).

Accumulation into a leaf's ``.grad`` holds the leaf's lock, and a node runs on bare arrays
under a per-thread flag; this benchmark checks that neither slows one thread down.

1. ``small_ops``: ``(x * w + b).tanh().sum().backward()`` on 8-element float32 leaves. The
   engine's fixed cost per node and per leaf dominates, so a lock shows here first.
2. ``mlp_step``: bench_mlp's step (MLP 784-256-256-10, batch 128, cross-entropy, SGD).

Both run against two package trees in the same run, each copied into a temporary folder: the
working tree ("after") and a base ("before"): the working tree with ``--paths`` (default: all of
``autograd_gpu``) taken from the git revision ``--base`` (default ``HEAD``) by ``git archive``.
``--paths`` naming a file unchanged since ``--base`` gives the control run (two equal trees):
its ratio shows the noise, about 1-2 % on a busy 2-core machine.
First the check: one step gives the same loss and gradients in both trees, and N threads x M
backward calls into shared leaves give exactly N*M contributions in the working tree. Then pairs
of worker processes (one per tree, ``--procs`` fresh pairs) time short batches in alternation;
``ratio`` comes from the after/before ratios of back-to-back batches (the figure least moved by
other load), next to the median and best batch times. Prints one JSON line per case.

Usage: python bench/bench_accumulate.py [--base HEAD] [--paths autograd_gpu/autograd ...]
       [--procs 8] [--rounds 8] [--device cpu]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before numpy is imported

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent
CASES = {"small_ops": 300, "mlp_step": 10}  # case -> steps per timed batch


def small_ops(m: Any, dev: str) -> tuple[Callable[[], Any], list[Any]]:
    gen = m.Generator().manual_seed(0)
    x, w, b = (m.randn(8, generator=gen).to(dev).requires_grad_() for _ in range(3))

    def step() -> Any:
        loss = (x * w + b).tanh().sum()
        loss.backward()
        return loss

    return step, [x, w, b]


def mlp_step(m: Any, dev: str) -> tuple[Callable[[], Any], list[Any]]:
    sys.path.insert(0, str(BENCH))
    from bench_mlp import step_workload

    m.manual_seed(0)
    model, step = step_workload(m, dev)
    return step, list(model.parameters())


def _sync(m: Any, dev: str) -> None:
    if dev != "cpu":
        m.cuda.synchronize()


def serve(root: str, case: str, dev: str) -> None:
    """Worker: import the package from ``root`` and build the case; print one step's numbers,
    warm up, then for each ``N`` read from stdin time ``N`` steps and print seconds per step."""
    sys.path.insert(0, root)
    import autograd_gpu as m

    assert Path(m.__file__).resolve().is_relative_to(Path(root).resolve()), m.__file__
    step, params = {"small_ops": small_ops, "mlp_step": mlp_step}[case](m, dev)
    loss = float(step().item())
    grads = [p.grad.detach().cpu().numpy().ravel()[:64].tolist() for p in params]
    print(json.dumps({"loss": loss, "grads": grads}), flush=True)
    for _ in range(CASES[case]):
        step()
    for line in sys.stdin:
        reps = int(line)
        _sync(m, dev)
        t0 = time.perf_counter()
        for _ in range(reps):
            step()
        _sync(m, dev)
        print(json.dumps({"s": (time.perf_counter() - t0) / reps}), flush=True)


class Worker:
    """A ``serve`` process kept alive between batches, so batches of the two trees can alternate
    quickly (the machine's load then hits both alike)."""

    def __init__(self, root: Path, case: str, dev: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(root), case, "--device", dev],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tempfile.gettempdir(),
            env=dict(os.environ, PYTHONHASHSEED="0"))
        self.first = self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"worker {self.proc.args} failed with exit code {self.proc.wait()}")
        return json.loads(line)  # type: ignore[no-any-return]

    def time(self, reps: int) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{reps}\n")
        self.proc.stdin.flush()
        return float(self._read()["s"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def threads_check(dev: str, n_threads: int = 8, calls: int = 50) -> None:
    """N threads x M backward calls into shared leaves: exactly N*M contributions each."""
    import threading

    sys.path.insert(0, str(ROOT))
    import autograd_gpu as m

    big = m.zeros(20000, dtype=m.float64, device=dev, requires_grad=True)
    small = m.zeros(3, dtype=m.float64, device=dev, requires_grad=True)
    start = threading.Barrier(n_threads)

    def work() -> None:
        start.wait()
        for _ in range(calls):
            (big * 1.0 + small.sum()).sum().backward()

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # NOTE: switch threads often, so a missing lock shows
    try:
        ts = [threading.Thread(target=work) for _ in range(n_threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    n = n_threads * calls
    assert big.grad is not None and small.grad is not None
    assert float(big.grad.min()) == float(big.grad.max()) == n, (big.grad.min(), n)
    assert float(small.grad.min()) == float(small.grad.max()) == 20000 * n, small.grad


def make_tree(dest: Path, base: str | None = None, paths: tuple[str, ...] = ()) -> Path:
    """The working tree's package in ``dest``, with ``paths`` replaced by their ``base`` version."""
    shutil.copytree(ROOT / "autograd_gpu", dest / "autograd_gpu",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if base is None:
        return dest
    for p in paths:
        target = dest / p
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    tar = subprocess.run(["git", "archive", "--format=tar", base, "--", *paths], cwd=ROOT,
                         capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        t.extractall(dest, filter="data")
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="HEAD", help="git revision of the 'before' tree")
    ap.add_argument("--paths", nargs="+", default=["autograd_gpu"],
                    help="paths taken from --base (the rest is the working tree)")
    ap.add_argument("--procs", type=int, default=8, help="worker processes per tree")
    ap.add_argument("--rounds", type=int, default=8, help="batches per worker process")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve[0], args.serve[1], args.device)
        return
    sys.path.insert(0, str(BENCH))
    from bench_core import git_commit, machine

    threads_check(args.device)
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"before": make_tree(Path(tmp) / "before", args.base, tuple(args.paths)),
                 "after": make_tree(Path(tmp) / "after")}
        for case in args.cases:
            times: dict[str, list[float]] = {"before": [], "after": []}
            first: list[str] = []  # which tree ran first in each back-to-back pair
            reps = CASES[case]
            # NOTE: a process keeps its speed (memory layout) for life: a fresh pair per --procs.
            for _ in range(args.procs):
                workers = {k: Worker(root, case, args.device) for k, root in trees.items()}
                a, b = workers["before"].first, workers["after"].first
                assert abs(a["loss"] - b["loss"]) <= 1e-6 * max(1.0, abs(a["loss"])), (a, b)
                for ga, gb in zip(a["grads"], b["grads"]):
                    for u, v in zip(ga, gb):
                        assert abs(u - v) <= 1e-6 * max(1.0, abs(u)), (case, u, v)
                for r in range(args.rounds):
                    order = ("before", "after") if r % 2 == 0 else ("after", "before")
                    first.append(order[0])
                    for k in order:
                        times[k].append(workers[k].time(reps))
                for w in workers.values():
                    w.close()
            med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
            best = {k: min(v) * 1e6 for k, v in times.items()}
            # NOTE: each round's pair ran back to back, so other load on the machine hits both
            # alike; the batch that runs second in a pair is a little faster (caches), so the
            # pairs of each order give a median ratio and the two are averaged (geometrically).
            ratios = {k: statistics.median(a / b for a, b, f in zip(times["after"], times["before"],
                                                                 first) if f == k)
                      for k in ("before", "after")}
            pairs = (ratios["before"] * ratios["after"]) ** 0.5
            print(json.dumps({
                "case": case, "device": args.device, "before_us": round(med["before"], 2),
                "after_us": round(med["after"], 2), "ratio": round(pairs, 4),
                "best_before_us": round(best["before"], 2), "best_after_us": round(best["after"], 2),
                "best_ratio": round(best["after"] / best["before"], 4),
                "base": args.base, "paths": args.paths, "procs": args.procs,
                "rounds": args.rounds, "reps": reps,
                "commit": git_commit(), **machine(),
            }))


if __name__ == "__main__":
    main()
