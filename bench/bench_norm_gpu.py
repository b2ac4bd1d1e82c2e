"""GPU benchmark of the fused normalisation kernels (``kernels/norm.cu``, issue #15 item 2): layer
norm, RMS norm and group norm on CUDA, forward alone and forward + backward.

Columns, milliseconds per call:
- ``kernel``: the launchers of ``autograd_gpu/backends/cuda_norm.py`` on CuPy arrays (forward: one
  kernel; backward: the dx kernel and the column sums of the weight and bias gradients);
- ``fused``: the public API (``ag.nn.functional.layer_norm`` / ``rms_norm`` / ``group_norm``, then
  ``ag.autograd.grad``) on CUDA tensors, which runs those kernels;
- ``unfused``: the same calls with the fused entries switched off (``NormBackend.norm_kernels_ok``
  answering False): the ops' own formulas on the CuPy backend, several kernels each way;
- ``torch``: PyTorch CUDA eager, the same calls.
The report adds the kernel's forward bandwidth (bytes of x read and y written over its time) and
the ratios unfused/fused and fused/torch.

Before anything is timed, each of ours (kernel, fused, unfused) is checked against torch's result
from the same inputs (output; gradients of x, weight and bias); a mismatch is reported, that
column is not timed, and the exit status is 1. Times come from CUDA events around a batch of calls
after a warm-up (median of the batches, the columns' batches taking turns), as in bench_gpu.py.

Usage:
    python bench/bench_norm_gpu.py                 # every case; one JSON line per case
    python bench/bench_norm_gpu.py --quick         # one shape per op, fewer repetitions
    python bench/bench_norm_gpu.py --only layer,group --report norm.md

Output: JSON lines on stdout; progress and the markdown report on stderr (and in ``--report``).
Without a usable CUDA GPU it says why, measures nothing, and exits 0 (77 with --require-gpu).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for _path in (str(ROOT), str(BENCH)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import bench_gpu  # noqa: E402  (gpu_status, load_torch, timers, gpu_env, mismatch)

OPS = ("layer", "rms", "group")
EXIT_NO_GPU = 77
EPS = 1e-5
# (op, shape, groups): rows of 1024 and 8192 (layer/RMS); group norm with 32 groups over
# 32 x 32 and 64 x 64 images
CASES: list[tuple[str, tuple[int, ...], int]] = [
    ("layer", (8192, 1024), 0), ("layer", (2048, 8192), 0),
    ("rms", (8192, 1024), 0), ("rms", (2048, 8192), 0),
    ("group", (32, 128, 32, 32), 32), ("group", (8, 256, 64, 64), 32),
]
DTYPES = ("float32", "float16")
TOL = {"float32": (2e-4, 2e-4), "float16": (2e-2, 2e-2)}  # (rtol, atol) of one element


def log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def _param_shape(op: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    return (shape[1],) if op == "group" else (shape[-1],)


def _call(F: Any, op: str, x: Any, w: Any, b: Any, groups: int) -> Any:
    """The op through a library's functional API (``F``: ours or torch's)."""
    if op == "layer":
        return F.layer_norm(x, [x.shape[-1]], w, b, EPS)
    if op == "rms":
        return F.rms_norm(x, [x.shape[-1]], w, EPS)
    return F.group_norm(x, groups, w, b, EPS)


class Unfused:
    """Runs ``fn`` with the fused normalisation entries switched off."""

    def __init__(self) -> None:
        from autograd_gpu.backends.norm import NormBackend

        self.cls = NormBackend
        self.on = NormBackend.norm_kernels_ok

    def __call__(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            self.cls.norm_kernels_ok = lambda *_: False  # type: ignore[method-assign]
            try:
                return fn()
            finally:
                self.cls.norm_kernels_ok = self.on  # type: ignore[method-assign]

        return run


def _kernel_fns(op: str, xa: Any, wa: Any, ba: Any, ga: Any,
                groups: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """(forward, forward + backward) on the launchers; each returns what torch's call does."""
    from autograd_gpu.backends import cuda_norm as cn

    if op == "layer":
        def fwd() -> Any:
            return cn.layer_norm(xa, 1, wa, ba, EPS)[0]

        def both() -> Any:
            _, mean, rstd = cn.layer_norm(xa, 1, wa, ba, EPS)
            return cn.layer_norm_backward(ga, xa, 1, wa, mean, rstd)
    elif op == "rms":
        def fwd() -> Any:
            return cn.rms_norm(xa, 1, wa, EPS)[0]

        def both() -> Any:
            _, rstd = cn.rms_norm(xa, 1, wa, EPS)
            return cn.rms_norm_backward(ga, xa, 1, wa, rstd)
    else:
        def fwd() -> Any:
            return cn.group_norm(xa, groups, wa, ba, EPS)[0]

        def both() -> Any:
            _, mean, rstd = cn.group_norm(xa, groups, wa, ba, EPS)
            return cn.group_norm_backward(ga, xa, groups, wa, mean, rstd)
    return fwd, both


def _check(got: Any, want: Any, dtype: str, rows: int) -> str | None:
    """None when ``got`` matches torch's ``want`` (one array, or the tuple of gradients: the
    weight and bias ones, sums over ``rows``, get a wider absolute tolerance)."""
    rtol, atol = TOL[dtype]
    if not isinstance(want, tuple):
        return bench_gpu.mismatch(got, want, rtol, atol, float32=False)
    got = tuple(got)
    for i, (g, w) in enumerate(zip(got, want)):
        m = bench_gpu.mismatch(g, w, rtol, atol * (1 if i == 0 else math.sqrt(rows)),
                               float32=False)
        if m:
            return f"gradient {i}: {m}"
    return None


def run_case(op: str, shape: tuple[int, ...], groups: int, dtype: str, torch: Any, ag: Any,
             args: argparse.Namespace) -> dict[str, Any]:
    import cupy as cp
    import numpy as np

    rng = np.random.default_rng(0)
    pshape = _param_shape(op, shape)
    host = {k: rng.standard_normal(s).astype(dtype) + (0.5 if k == "x" else 0.0)
            for k, s in (("x", shape), ("w", pshape), ("b", pshape), ("g", shape))}
    arrays = {k: cp.asarray(v) for k, v in host.items()}
    ours = {k: ag.from_dlpack(arrays[k]).requires_grad_(k != "g") for k in host}
    if torch is not None:
        theirs = {k: torch.as_tensor(v, device="cuda").requires_grad_(k != "g")
                  for k, v in host.items()}
    bias = op != "rms"
    inputs = ["x", "w", "b"] if bias else ["x", "w"]

    def ag_fwd() -> Any:
        with ag.no_grad():
            return _call(ag.nn.functional, op, ours["x"], ours["w"], ours["b"] if bias else None,
                         groups)

    def ag_both() -> Any:
        out = _call(ag.nn.functional, op, ours["x"], ours["w"], ours["b"] if bias else None,
                    groups)
        return tuple(ag.autograd.grad(out, [ours[k] for k in inputs], ours["g"]))

    def torch_fwd() -> Any:
        with torch.no_grad():
            return _call(torch.nn.functional, op, theirs["x"], theirs["w"],
                         theirs["b"] if bias else None, groups)

    def torch_both() -> Any:
        out = _call(torch.nn.functional, op, theirs["x"], theirs["w"],
                    theirs["b"] if bias else None, groups)
        return tuple(torch.autograd.grad(out, [theirs[k] for k in inputs], theirs["g"]))

    unfused = Unfused()
    k_fwd, k_both = _kernel_fns(op, arrays["x"], arrays["w"], arrays["b"] if bias else None,
                                arrays["g"], groups)
    rows = shape[0] if op == "group" else math.prod(shape[:-1])
    cupy_t = bench_gpu.cupy_timer()
    torch_t = None if torch is None else bench_gpu.torch_timer(torch)
    row: dict[str, Any] = {"op": op, "shape": list(shape), "dtype": dtype, "failures": []}
    for mode, fns in (("fwd", {"kernel": k_fwd, "fused": ag_fwd, "unfused": unfused(ag_fwd),
                               "torch": torch_fwd}),
                      ("fwd+bwd", {"kernel": k_both, "fused": ag_both,
                                   "unfused": unfused(ag_both), "torch": torch_both})):
        timed: dict[str, tuple[Callable[[], Any], Any]] = {}
        want = fns["torch"]() if torch is not None else None
        for name, fn in fns.items():
            if name == "torch":
                if torch is not None:
                    timed[name] = (fn, torch_t)
                continue
            try:
                got = fn()
                bad = None if want is None else _check(got, want, dtype, rows)
            except Exception as e:  # noqa: BLE001  (a failure is reported, not fatal)
                bad = f"{type(e).__name__}: {e}"
            if bad:
                row["failures"].append(f"{mode} {name}: {bad}")
                log(f"  MISMATCH {op} {shape} {dtype} {mode} {name}: {bad}")
            else:
                timed[name] = (fn, cupy_t)
        times = bench_gpu.time_interleaved(timed, args.reps, args.inner)
        row[mode] = {k: round(v, 5) for k, v in times.items()}
    k_ms = row["fwd"].get("kernel")
    nbytes = 2 * arrays["x"].nbytes
    row["kernel_fwd_gbps"] = None if not k_ms else round(nbytes / (k_ms * 1e-3) / 1e9, 1)
    return row


def _ms(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"


def _ratio(a: Any, b: Any) -> str:
    return "-" if not a or not b else f"{a / b:.2f}"


def render(env: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [f"### Fused normalisation kernels on {env.get('gpu')} (commit {env.get('commit')})",
             "",
             "ms per call; unfused/fused > 1: the kernels help; fused/torch < 1: faster than "
             "PyTorch CUDA.", "",
             "| op | shape | dtype | mode | kernel | fused | unfused | torch | unfused/fused "
             "| fused/torch | kernel fwd GB/s |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        for mode in ("fwd", "fwd+bwd"):
            t = r.get(mode, {})
            gbps = r.get("kernel_fwd_gbps") if mode == "fwd" else None
            lines.append(f"| {r['op']} | {'x'.join(map(str, r['shape']))} | {r['dtype']} | "
                         f"{mode} | {_ms(t.get('kernel'))} | {_ms(t.get('fused'))} | "
                         f"{_ms(t.get('unfused'))} | {_ms(t.get('torch'))} | "
                         f"{_ratio(t.get('unfused'), t.get('fused'))} | "
                         f"{_ratio(t.get('fused'), t.get('torch'))} | "
                         f"{'-' if gbps is None else gbps} |")
    failures = [f for r in rows for f in r["failures"]]
    if failures:
        lines += ["", "Mismatches (not timed):"] + [f"- {f}" for f in failures]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--only", default=",".join(OPS),
                    help=f"comma-separated subset of {','.join(OPS)} (default: all)")
    ap.add_argument("--quick", action="store_true", help="one shape per op, fewer repetitions")
    ap.add_argument("--reps", type=int, default=None, help="timed batches per column")
    ap.add_argument("--report", metavar="FILE.md", help="also write the markdown report here")
    ap.add_argument("--require-gpu", action="store_true",
                    help=f"exit {EXIT_NO_GPU} (skipped) instead of 0 when there is no CUDA GPU")
    args = ap.parse_args(argv)
    args.ops = tuple(s for s in args.only.split(",") if s)
    unknown = [s for s in args.ops if s not in OPS]
    if unknown or not args.ops:
        ap.error(f"--only takes a comma-separated subset of {','.join(OPS)}; got {args.only!r}")
    if args.reps is not None and args.reps < 1:
        ap.error(f"--reps must be >= 1, got {args.reps}")
    args.reps = args.reps or (5 if args.quick else 15)
    args.inner = 3 if args.quick else 10
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    why = bench_gpu.gpu_status()
    if why is not None:
        log(f"bench_norm_gpu: no CUDA GPU here: {why}. Nothing was measured.")
        return EXIT_NO_GPU if args.require_gpu else 0
    torch, torch_why = bench_gpu.load_torch()
    if torch is None:
        log(f"bench_norm_gpu: {torch_why}; the torch column stays empty and nothing is checked "
            "against torch")
    import autograd_gpu as ag

    env = bench_gpu.gpu_env(torch)
    log(f"bench_norm_gpu on {env['gpu']}, CuPy {env['cupy']}, torch {env['torch']}, "
        f"commit {env['commit']}")
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for op, shape, groups in CASES:
        if op not in args.ops or (args.quick and op in seen):
            continue
        seen.add(op)
        for dtype in DTYPES:
            log(f"== {op} {shape} {dtype}")
            row = run_case(op, shape, groups, dtype, torch, ag, args)
            print(json.dumps({"bench": "norm_gpu", **env, **row}), flush=True)
            rows.append(row)
    report = render(env, rows)
    log("\n" + report)
    if args.report:
        Path(args.report).write_text(report + "\n")
    return 1 if any(r["failures"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
