"""Fused attention on the GPU (issue #16, item 3): our fused kernel (``kernels/attention.cu``)
against our math path and PyTorch CUDA's ``scaled_dot_product_attention``, time and memory.

For each case ``(B, H, L, E)`` (self-attention, ``S = L``, ``Ev = E``), dtype and causal flag:

- ``fused``: ``F.scaled_dot_product_attention`` on CUDA as it dispatches (our fused kernel where
  PyTorch would run its flash or memory-efficient kernel; the node name is recorded);
- ``math``: the same call under ``sdpa_kernel(SDPBackend.MATH)`` (materialises the weights);
- ``torch``: PyTorch CUDA's default dispatch.

Each is first checked against ``math`` (values and gradients), then timed: forward, and forward
plus backward, with the wall clock and one synchronize per batch (median of batches), and its
peak memory over one forward+backward measured from the allocator (``max_memory_allocated``
above what the inputs hold) with the bytes kept for backward (allocated after the forward, less
the output).

Usage: python bench/bench_attention_gpu.py [--quick] [--require-gpu]
Output: one JSON line per (case, implementation) on stdout; progress on stderr. Exit status 0
when every check passed, 1 when one failed; without a CUDA GPU it says why and exits 0 (77 with
``--require-gpu``), measuring nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for _path in (str(ROOT), str(BENCH)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import bench_gpu  # noqa: E402  (gpu_status, load_torch, gpu_env)

CASES = [(4, 8, 512, 64), (4, 8, 1024, 64), (2, 16, 2048, 64), (8, 12, 256, 128)]
QUICK_CASES = [(2, 8, 512, 64)]
TOL = {"float16": 2e-2, "float32": 2e-4}


def log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def _median_ms(fn: Callable[[], Any], sync: Callable[[], None], reps: int, inner: int) -> float:
    fn()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3 / inner)
    return statistics.median(times)


def _ours(case: tuple[int, int, int, int], dtype: str, causal: bool, math_only: bool) -> Any:
    import autograd_gpu as ag
    from autograd_gpu.nn.attention import SDPBackend, sdpa_kernel

    B, H, L, E = case
    ag.manual_seed(0)
    q, k, v = (ag.randn(B, H, L, E, device="cuda", dtype=getattr(ag, dtype), requires_grad=True)
               for _ in range(3))
    F = ag.nn.functional

    def forward() -> Any:
        if math_only:
            with sdpa_kernel(SDPBackend.MATH):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def step() -> Any:
        out = forward()
        out.backward(ag.ones_like(out))
        return out

    return ag, (q, k, v), forward, step


def _theirs(torch: Any, inputs: Any, causal: bool) -> Any:
    q, k, v = (torch.as_tensor(t.detach().cpu().numpy(), device="cuda").requires_grad_()
               for t in inputs)
    F = torch.nn.functional

    def forward() -> Any:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def step() -> Any:
        out = forward()
        out.backward(torch.ones_like(out))
        return out

    return (q, k, v), forward, step


def _grads(ts: Any) -> list[Any]:
    out = [t.grad.detach().cpu().numpy().astype("float64") for t in ts]
    for t in ts:
        t.grad = None
    return out


def _max_rel(a: Any, b: Any) -> float:
    import numpy as np

    return float(np.max(np.abs(a - b)) / max(1e-30, float(np.max(np.abs(b)))))


def run_case(torch: Any, env: dict[str, Any], case: tuple[int, int, int, int], dtype: str,
             causal: bool, reps: int) -> bool:
    import autograd_gpu as ag

    ok = True
    _, ins, fwd_math, step_math = _ours(case, dtype, causal, True)
    ref = step_math().detach().cpu().numpy().astype("float64")
    ref_grads = _grads(ins)
    impls: dict[str, Any] = {}
    _, ins_f, fwd_f, step_f = _ours(case, dtype, causal, False)
    impls["fused"] = (ins_f, fwd_f, step_f, ag.cuda, ag.ones_like)
    impls["math"] = (ins, fwd_math, step_math, ag.cuda, ag.ones_like)
    if torch is not None:
        ins_t, fwd_t, step_t = _theirs(torch, ins, causal)
        impls["torch"] = (ins_t, fwd_t, step_t, torch.cuda, torch.ones_like)
    for name, (ts, fwd, step, mem, ones_like) in impls.items():
        out = step()
        node = type(out.grad_fn).__name__ if out.grad_fn is not None else None
        err = max([_max_rel(out.detach().cpu().numpy().astype("float64"), ref)] +
                  [_max_rel(g, r) for g, r in zip(_grads(ts), ref_grads)])
        passed = err <= TOL[dtype]
        ok = ok and passed
        del out
        mem.synchronize()
        base = mem.memory_allocated()
        mem.reset_peak_memory_stats()
        out = fwd()
        mem.synchronize()
        kept = mem.memory_allocated() - base - out.numel() * out.element_size()
        out.backward(ones_like(out))
        mem.synchronize()
        peak = mem.max_memory_allocated() - base
        del out
        _grads(ts)

        def train_step(step: Callable[[], Any] = step, ts: Any = ts) -> Any:
            for t in ts:
                t.grad = None
            return step()

        sync = mem.synchronize
        fwd_ms = _median_ms(fwd, sync, reps, 5)
        step_ms = _median_ms(train_step, sync, reps, 3)
        B, H, L, E = case
        print(json.dumps({"bench": "attention", "impl": name, "B": B, "H": H, "L": L, "E": E,
                          "dtype": dtype, "causal": causal, "node": node,
                          "check_max_rel_err": err, "check_passed": passed,
                          "forward_ms": round(fwd_ms, 4), "forward_backward_ms": round(step_ms, 4),
                          "peak_bytes": peak, "kept_for_backward_bytes": kept, **env}),
              flush=True)
        log(f"{name:6s} {case} {dtype} causal={causal}: fwd {fwd_ms:.3f} ms, fwd+bwd "
            f"{step_ms:.3f} ms, peak {peak / 2**20:.1f} MiB, kept {kept / 2**20:.1f} MiB "
            f"({node}; max rel err {err:.1e}{'' if passed else ' FAILED'})")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one small case, few repetitions")
    ap.add_argument("--require-gpu", action="store_true", help="exit 77 without a GPU")
    args = ap.parse_args(argv)
    why = bench_gpu.gpu_status()
    if why is not None:
        log(f"bench_attention_gpu: no CUDA GPU here: {why}; nothing measured")
        return bench_gpu.EXIT_NO_GPU if args.require_gpu else 0
    torch, why_not = bench_gpu.load_torch()
    if torch is None:
        log(f"bench_attention_gpu: PyTorch CUDA not available ({why_not}): no torch rows")
    env = bench_gpu.gpu_env(torch)
    ok = True
    for case in QUICK_CASES if args.quick else CASES:
        for dtype in ("float16", "float32"):
            for causal in (False, True):
                ok = run_case(torch, env, case, dtype, causal, 3 if args.quick else 10) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
