"""Activation memory of the MLP (issue #5): what the graph keeps for backward, ours vs PyTorch's.

MLP 784-256-256-10 (ReLU), batch 4096, float32, on the CPU, both frameworks in one run:

- ``saved``: unique storages saved for backward, less the input and the parameters (which the
  caller holds anyway). Ours from ``autograd_gpu.profiler.profile_memory`` (kind "activation");
  PyTorch's from ``torch.autograd.graph.saved_tensors_hooks`` (pack hook keyed by
  ``untyped_storage().data_ptr()``). Measured for the model's forward alone (the hidden
  activations) and with ``cross_entropy`` on top (the issue's 8.59 MB figure).
- ``kept``: ours also from the tracker: ``memory_allocated()`` after the forward less before
  (the logits included).

Aim: we keep no more than PyTorch. Prints one JSON line per case; ``--write`` refreshes the
"## Activation memory" section of RESULTS.md.

Usage: python bench/bench_activation_memory.py [--batch 4096] [--write]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before numpy or torch is imported

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
HEADING = "## Activation memory"
SIZES = [784, 256, 256, 10]


def _mlp(m: Any) -> Any:
    from bench_mlp import _mlp as mlp

    return mlp(m, SIZES)


def ours(batch: int) -> dict[str, Any]:
    import autograd_gpu as ag
    from autograd_gpu.profiler import profile_memory

    ag.manual_seed(0)
    model = _mlp(ag)
    x = ag.randn(batch, SIZES[0])
    y = ag.randint(0, SIZES[-1], (batch,))
    gc.collect()
    base = ag.memory_allocated()
    with profile_memory(model) as fwd:
        out = model(x)
    kept = ag.memory_allocated() - base
    del out
    with profile_memory(model) as step:
        ag.nn.functional.cross_entropy(model(x), y).backward()
    by_op = {r["name"]: r["bytes"] for r in step.rows("op")}
    return {"saved_forward": fwd.total_bytes, "saved_with_loss": step.total_bytes,
            "kept_forward": int(kept), "by_op": by_op}


def theirs(batch: int) -> dict[str, Any]:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = _mlp(torch)
    x = torch.randn(batch, SIZES[0])
    y = torch.randint(0, SIZES[-1], (batch,))
    held = {p.untyped_storage().data_ptr() for p in model.parameters()}
    held.add(x.untyped_storage().data_ptr())

    def saved(fn: Any) -> int:
        seen: dict[int, int] = {}

        def pack(t: Any) -> Any:
            s = t.untyped_storage()
            if s.data_ptr() not in held:
                seen[s.data_ptr()] = s.nbytes()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = fn()
        del out
        return sum(seen.values())

    return {"saved_forward": saved(lambda: model(x)),
            "saved_with_loss": saved(lambda: torch.nn.functional.cross_entropy(model(x), y))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--write", action="store_true", help="refresh bench/RESULTS.md")
    args = ap.parse_args()
    from bench_core import git_commit, machine

    info, commit = machine(), git_commit()
    batch = args.batch
    o, t = ours(batch), theirs(batch)
    hidden = 2 * batch * SIZES[1] * 4
    assert o["saved_forward"] == hidden, (o["saved_forward"], hidden)  # the analytic figure
    for case in ("saved_forward", "saved_with_loss"):
        print(json.dumps({"case": case, "batch": batch, "ours_bytes": o[case],
                          "torch_bytes": t[case], "ours_le_torch": o[case] <= t[case],
                          "device": "cpu", **info, "commit": commit}))
    print(json.dumps({"case": "kept_forward", "batch": batch, "ours_bytes": o["kept_forward"],
                      "by_op": o["by_op"], "device": "cpu", "commit": commit}))
    if args.write:
        _write(batch, o, t, info, commit)


def _write(batch: int, o: dict[str, Any], t: dict[str, Any], info: dict[str, Any],
           commit: str) -> None:
    from bench_core import write_section

    lines = [HEADING, "",
             f"Machine: {info['cpu']}; Python {info['python']}, NumPy {info['numpy']}, torch "
             f"{info['torch']}; commit {commit}; `python bench/bench_activation_memory.py "
             "--write`. CPU only; byte counts are exact and deterministic.", "",
             f"MLP 784-256-256-10, batch {batch}, float32: unique storages saved for backward "
             "(less the input and the parameters). Ours: `profile_memory`; PyTorch: "
             "`saved_tensors_hooks`. Aim: no more than PyTorch.", "",
             "| case | ours bytes | PyTorch bytes | ours - PyTorch |", "|---|---:|---:|---:|"]
    for case, label in (("saved_forward", "model forward (hidden activations)"),
                        ("saved_with_loss", "forward + cross_entropy")):
        lines.append(f"| {label} | {o[case]:,} | {t[case]:,} | {o[case] - t[case]:+,} |")
    lines += ["", f"Kept by our forward (tracker, logits included): {o['kept_forward']:,} bytes. "
              "Ours per op with the loss: " + ", ".join(
                  f"{k} {v:,}" for k, v in o["by_op"].items()) + "."]
    write_section(HEADING, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
