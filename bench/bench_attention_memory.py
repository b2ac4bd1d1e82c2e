"""Bytes attention keeps for backward (issue #16, item 4): SDPA against unfused attention.

For one attention call on leaf ``q, k, v`` (which the caller holds: not counted), the unique
storages saved for backward by

- ``sdpa``: ``F.scaled_dot_product_attention``: ours on the CPU runs PyTorch's math path (it
  keeps the (L, S) weights); ours on CUDA (``--device cuda``) the fused kernel of
  ``kernels/attention.cu``, which keeps the output and the row log-sum-exp; PyTorch on the CPU
  its fused flash kernel, which keeps the same two,
- ``unfused``: the hand-written ``softmax(q @ k^T * scale) @ v``, the baseline,

ours from ``profile_memory`` (kind "activation"), PyTorch's (always the CPU) from
``saved_tensors_hooks`` keyed by storage. Prints one JSON line per case (float32, exact byte
counts). The counts are what the code saves, not timings: ``--device cuda --emulate`` (the NumPy stand-in
for CuPy with our kernels run by the CPU emulator, ``tests/kernel_emulator``; needs g++) counts
on a machine without a GPU what a GPU run keeps; use a small shape there (the emulator is slow).

Usage: python bench/bench_attention_memory.py [--batch 4] [--heads 8] [--length 256] [--dim 64]
       [--device cpu|cuda] [--emulate]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before numpy or torch is imported

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _unfused(lib: Any, q: Any, k: Any, v: Any) -> Any:
    scores = q.matmul(k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    return scores.softmax(-1).matmul(v)


def ours(shape: tuple[int, ...], device: str = "cpu") -> dict[str, int]:
    import autograd_gpu as ag
    from autograd_gpu.profiler import profile_memory

    q, k, v = (ag.randn(*shape, device=device, requires_grad=True) for _ in range(3))
    found = {}
    for case, fn in (("sdpa", lambda: ag.nn.functional.scaled_dot_product_attention(q, k, v)),
                     ("unfused", lambda: _unfused(ag, q, k, v))):
        with profile_memory() as prof:
            out = fn()
        found[case] = prof.total_bytes
        del out
    return found


def theirs(shape: tuple[int, ...]) -> dict[str, int]:
    import torch

    torch.set_num_threads(1)
    q, k, v = (torch.randn(*shape, requires_grad=True) for _ in range(3))
    held = {t.untyped_storage().data_ptr() for t in (q, k, v)}
    found = {}
    for case, fn in (("sdpa", lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v)),
                     ("unfused", lambda: _unfused(torch, q, k, v))):
        seen: dict[int, int] = {}

        def pack(t: Any, seen: dict[int, int] = seen) -> Any:
            s = t.untyped_storage()
            if s.data_ptr() not in held:
                seen[s.data_ptr()] = s.nbytes()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = fn()
        found[case] = sum(seen.values())
        del out
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--length", type=int, default=256)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--device", default="cpu", help="ours: cpu or cuda (torch: always the CPU)")
    ap.add_argument("--emulate", action="store_true",
                    help="no GPU: CUDA on the NumPy stand-in, our kernels on the CPU emulator")
    args = ap.parse_args()
    if args.emulate:
        from tests import fake_cupy, kernel_emulator

        if not kernel_emulator.available():
            sys.exit(f"--emulate: {kernel_emulator.unavailable_reason()}")
        fake_cupy.install(emulate_kernels=True)  # NOTE: before autograd_gpu is imported
    shape = (args.batch, args.heads, args.length, args.dim)
    b, h, n, d = shape
    weights, qkv = 4 * b * h * n * n, 4 * b * h * n * d
    o, t = ours(shape, args.device), theirs(shape)
    for case in ("sdpa", "unfused"):
        print(json.dumps({"case": case, "shape": list(shape), "ours_bytes": o[case],
                          "torch_bytes": t[case], "weights_bytes": weights,
                          "qkv_sized_bytes": qkv,
                          "device": args.device + (" (emulated)" if args.emulate else "")}))
    print(json.dumps({"case": "sdpa_vs_unfused", "ours_delta_bytes": o["sdpa"] - o["unfused"],
                      "torch_delta_bytes": t["sdpa"] - t["unfused"]}))


if __name__ == "__main__":
    main()
