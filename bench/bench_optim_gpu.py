"""GPU benchmark of the fused optimizer kernels (issue #18 item 2: ``kernels/optim.cu``).

Only ``opt.step()`` with fixed gradients, on CUDA, float32: Adam, SGD with momentum 0.9 and
RMSprop, on two parameter sets: ``mlp`` (784-256-128-10, 235,146 parameters in 6 tensors: bound
by launches and host work) and ``big`` (4 blocks of 1024x4096, 4096x1024 and their biases,
33.6 M parameters in 16 tensors: bound by memory bandwidth). Implementations:

- ``fused``: ours by default on CUDA (one launch per group per step);
- ``foreach``: ours with ``foreach=True`` (``optim/_foreach.py``'s sequence with CuPy's ufuncs,
  about 13 launches per tensor for Adam: the unfused path);
- ``single``: ours with ``foreach=False`` (Tensor ops: the path before the fast paths);
- ``torch_fused`` and ``torch_foreach`` (PyTorch CUDA's ``fused=True`` and its default).

Before timing, 3 steps from identical weights and gradients: ``fused``, ``foreach`` and
``single`` must agree bit for bit, and torch within float32 rounding (rtol 1e-5). Wall clock,
one synchronize per batch, batches interleaved; medians in microseconds per step.
Output: JSON lines on stdout, a summary on stderr. Exit status: 0 when every check passed, 1
when one disagreed. Without a usable CUDA GPU it says why and exits 0, or 77 with
``--require-gpu``.

Usage:
    python bench/bench_optim_gpu.py            # everything
    python bench/bench_optim_gpu.py --quick    # the mlp set, fewer batches
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for _path in (str(ROOT), str(BENCH)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from bench_gpu import (  # noqa: E402
    EXIT_NO_GPU, _wall_interleaved, log, start,
)

SETS = {"mlp": [(256, 784), (256,), (128, 256), (128,), (10, 128), (10,)],
        "big": [shape for _ in range(4) for shape in ((4096, 1024), (4096,), (1024, 4096),
                                                     (1024,))]}
OPTIMIZERS = {"adam": ("Adam", dict(lr=1e-3)), "sgd": ("SGD", dict(lr=1e-2, momentum=0.9)),
              "rmsprop": ("RMSprop", dict(lr=1e-3))}
OURS = {"fused": {}, "foreach": {"foreach": True}, "single": {"foreach": False}}
THEIRS = {"torch_fused": {"fused": True}, "torch_foreach": {}}


def _workload(m: Any, opt_name: str, kw: dict[str, Any], shapes: list[tuple[int, ...]]
              ) -> tuple[list[Any], Any]:
    """Parameters (seeded values, fixed gradients) on CUDA and the optimizer over them."""
    import numpy as np

    rng = np.random.default_rng(0)
    params = []
    for shape in shapes:
        p = m.tensor(rng.standard_normal(shape, dtype=np.float32) * 0.05, device="cuda",
                     requires_grad=True)
        p.grad = m.tensor(rng.standard_normal(shape, dtype=np.float32) * 0.01, device="cuda")
        params.append(p)
    return params, getattr(m.optim, opt_name)(params, **kw)


def _check(results: dict[str, list[Any]]) -> list[str]:
    import numpy as np

    bad = []
    for name in ("foreach", "single"):
        if any(not np.array_equal(a, b) for a, b in zip(results[name], results["fused"])):
            bad.append(f"{name} is not the fused result bit for bit")
    for name in THEIRS:
        if name in results and any(not np.allclose(a, b, rtol=1e-5, atol=1e-7)
                                   for a, b in zip(results["fused"], results[name])):
            bad.append(f"fused differs from {name} beyond float32 rounding")
    return bad


def run(args: argparse.Namespace, torch: Any, ag: Any,
        emit: Callable[[dict[str, Any]], None]) -> list[str]:
    failures = []
    for set_name in (("mlp",) if args.quick else tuple(SETS)):
        shapes = SETS[set_name]
        for case, (opt_name, kw) in OPTIMIZERS.items():
            theirs = {} if torch is None else dict(THEIRS)
            if opt_name == "RMSprop":
                theirs.pop("torch_fused", None)  # NOTE: torch's RMSprop has no fused version
            impls = {**OURS, **theirs}
            loops: dict[str, tuple[Callable[[int], None], Callable[[], None]]] = {}
            results: dict[str, list[Any]] = {}
            for name, extra in impls.items():
                m = torch if name.startswith("torch") else ag
                params, opt = _workload(m, opt_name, {**kw, **extra}, shapes)
                for _ in range(3):
                    opt.step()
                results[name] = [p.detach().cpu().numpy() for p in params]

                def loop(n: int, opt: Any = opt) -> None:
                    for _ in range(n):
                        opt.step()

                loops[name] = (loop, m.cuda.synchronize)
            row: dict[str, Any] = {"section": "optim", "set": set_name, "optimizer": case,
                                   "params": sum(math.prod(s) for s in shapes)}
            bad = _check(results)
            if bad:
                row["mismatch"] = bad
                failures += [f"{set_name}/{case}: {b}" for b in bad]
            times = _wall_interleaved(loops, args.batch_s, args.batches)
            for name, v in times.items():
                row[f"{name}_us"] = round(statistics.median(v) * 1e6, 2)
            for name in ("foreach", "single", *THEIRS):
                if f"{name}_us" in row:
                    row[f"fused_vs_{name}"] = round(row["fused_us"] / row[f"{name}_us"], 3)
            log(f"  {set_name} {case}: " + ", ".join(f"{k} {row[f'{k}_us']:.1f} us"
                                                      for k in impls))
            emit(row)
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the mlp set, fewer batches")
    parser.add_argument("--batch-s", type=float, default=0.2, help="seconds per timed batch")
    parser.add_argument("--batches", type=int, default=7)
    parser.add_argument("--require-gpu", action="store_true",
                        help=f"exit {EXIT_NO_GPU} (skipped) instead of 0 without a GPU")
    args = parser.parse_args(argv)
    if args.quick:
        args.batches, args.batch_s = 3, 0.1
    started = start("bench_optim_gpu", args.require_gpu)
    if isinstance(started, int):
        return started
    torch, env = started
    import autograd_gpu as ag

    def emit(row: dict[str, Any]) -> None:
        print(json.dumps({**row, **env}), flush=True)

    failures = run(args, torch, ag, emit)
    for f in failures:
        log(f"MISMATCH: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
