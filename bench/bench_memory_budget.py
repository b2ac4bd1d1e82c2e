"""Training steps under a memory budget (issue #19): ``auto_checkpoint`` against the unplanned
step and against checkpointing every other block by hand.

Models: a 12-block MLP (Linear 256 -> 256, GELU, Dropout; batch 512) and a 6-layer transformer
encoder (d 256, 4 heads, feed-forward 1024, sequence 128, batch 8). For each: the unplanned
step, every other block checkpointed by hand, and ``auto_checkpoint`` at the hand placement's
peak and at 100/75/50/30% of the unplanned step's peak: the peak of ``memory_allocated`` over
a step and the step's time (best of ``--repeats``, as a ratio to the unplanned step's, the two
measured in turn; on the CPU its CPU seconds, one thread; on CUDA wall seconds between
synchronisations). A budget out of reach is reported with the smallest peak the planner found.
On CUDA the planner may also offload blocks to the host (``offloaded``). On the CPU, with
PyTorch installed, a last row gives PyTorch's own cost of checkpointing every MLP block and its
forward's share of its step.

Usage: python bench/bench_memory_budget.py [--quick] [--repeats 3] [--device cuda [--require-gpu]]
(without a usable GPU, ``--device cuda`` says why and exits 0, or 77 with --require-gpu)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before numpy is imported

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import autograd_gpu as ag  # noqa: E402
from autograd_gpu.utils.checkpoint import auto_checkpoint, checkpoint  # noqa: E402

nn = ag.nn


class Encoder(nn.Module):
    def __init__(self, layers: int, d: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.1,
                                                                batch_first=True)
                                     for _ in range(layers)])

    def forward(self, x: Any) -> Any:
        for layer in self.layers:
            x = layer(x)
        return x


EXIT_NO_GPU = 77


def models(quick: bool, device: str = "cpu") -> dict[str, Callable[[], tuple[Any, Any, list[Any]]]]:
    """name -> a builder of (model, input, its blocks in order); built one at a time, so that
    one model's parameters do not count in the other's peaks."""
    width, batch = (128, 256) if quick else (256, 512)
    d, seq, n = (64, 64, 4) if quick else (256, 128, 8)

    def mlp() -> tuple[Any, Any, list[Any]]:
        ag.manual_seed(0)
        m = nn.Sequential(*[nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Dropout(0.1))
                            for _ in range(12)])
        return m.to(device), ag.randn(batch, width, device=device), list(m)

    def transformer() -> tuple[Any, Any, list[Any]]:
        ag.manual_seed(0)
        enc = Encoder(6, d).to(device)
        return enc, ag.randn(n, seq, d, device=device), list(enc.layers)

    return {"mlp12": mlp, "transformer6": transformer}


def _clock(dev: Any) -> float:
    """CPU seconds on the CPU (one thread: immune to the other jobs' load); wall seconds after a
    synchronisation on CUDA."""
    if dev.type == "cuda":
        ag.cuda.synchronize()
        return time.perf_counter()
    return time.process_time()


def measure(model: Any, x: Any, repeats: int) -> tuple[int, float]:
    """(peak bytes, best step seconds) of ``model(x).square().mean()`` and its backward."""
    best = float("inf")
    peak = 0
    for _ in range(repeats):
        for p in model.parameters():
            p.grad = None
        ag.memory.reset_peak_memory_stats(x.device)
        t0 = _clock(x.device)
        (model(x) ** 2).mean().backward()
        best = min(best, _clock(x.device) - t0)
        peak = ag.memory.max_memory_allocated(x.device)
    for p in model.parameters():
        p.grad = None
    return peak, best


def paired(model: Any, x: Any, repeats: int, on: Callable[[], Any],
           off: Callable[[], Any]) -> tuple[int, float, float]:
    """A/B, interleaved: (the planned step's peak, its best time, the unplanned step's best
    time), ``on()`` and ``off()`` installing and removing the plan between the steps, so that
    the machine's drift falls on both alike."""
    planned, plain = float("inf"), float("inf")
    peak = 0
    for _ in range(repeats):
        on()
        peak, t = measure(model, x, 1)
        planned = min(planned, t)
        off()
        plain = min(plain, measure(model, x, 1)[1])
    return peak, planned, plain


def torch_reference(quick: bool, repeats: int) -> dict[str, Any] | None:
    """PyTorch on the same MLP (CPU, one thread): its no_grad forward's share of its step and
    its step with every block under ``torch.utils.checkpoint``, as a ratio (None without
    torch): what recomputing all blocks costs there."""
    try:
        import torch
        from torch.utils.checkpoint import checkpoint as torch_checkpoint
    except ImportError:
        return None
    torch.set_num_threads(1)
    torch.manual_seed(0)
    width, batch = (128, 256) if quick else (256, 512)
    blocks = [torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU(),
                                  torch.nn.Dropout(0.1)) for _ in range(12)]
    x = torch.randn(batch, width)

    def best(fn: Callable[[], Any]) -> float:
        out = float("inf")
        for _ in range(repeats):
            t0 = time.process_time()
            fn()
            out = min(out, time.process_time() - t0)
        return out

    def run(wrap: bool) -> None:
        h = x
        for b in blocks:
            h = torch_checkpoint(b, h, use_reentrant=False) if wrap else b(h)
        (h ** 2).mean().backward()
        for b in blocks:
            b.zero_grad(set_to_none=True)

    def forward() -> None:
        with torch.no_grad():
            h = x
            for b in blocks:
                h = b(h)

    step, ckpt, fwd = best(lambda: run(False)), best(lambda: run(True)), best(forward)
    return {"model": "mlp12", "device": "cpu", "run": "torch: every block checkpointed",
            "step_s": round(ckpt, 4), "time_ratio": round(ckpt / step, 3),
            "torch_step_s": round(step, 4), "torch_forward_share": round(fwd / step, 3)}


def every_other(blocks: list[Any]) -> Callable[[], None]:
    """Checkpoint blocks 0, 2, 4, ... by hand; returns the undo."""
    undo = []
    for b in blocks[::2]:
        inner = b.forward

        def forward(*a: Any, _f: Any = inner, **k: Any) -> Any:
            return checkpoint(_f, *a, use_reentrant=False, **k)

        b.forward = forward
        undo.append(b)

    def remove() -> None:
        for b in undo:
            b.__dict__.pop("forward", None)

    return remove


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--require-gpu", action="store_true",
                    help=f"with --device cuda: exit {EXIT_NO_GPU} (skipped) instead of 0 when "
                         "there is no CUDA GPU")
    args = ap.parse_args(argv)
    if args.device == "cuda" and not ag.cuda.is_available():
        print("bench_memory_budget: no CUDA GPU here; nothing was measured.", file=sys.stderr)
        return EXIT_NO_GPU if args.require_gpu else 0

    def loss(out: Any) -> Any:
        return (out ** 2).mean()

    for name, build in models(args.quick, args.device).items():
        gc.collect()  # NOTE: peaks are absolute: the previous model's garbage must not count
        model, x, blocks = build()
        base_peak, base_t = measure(model, x, args.repeats)

        def emit(kind: str, peak: int | None, t: float | None, base_t: float | None = None,
                 _name: str = name, base_peak: int = base_peak, **extra: Any) -> None:
            row = {"model": _name, "device": args.device, "run": kind, "peak_bytes": peak,
                   "peak_share": None if peak is None else round(peak / base_peak, 3),
                   "step_s": None if t is None else round(t, 4),
                   "time_ratio": None if t is None or base_t is None else round(t / base_t, 3),
                   **extra}
            print(json.dumps(row), flush=True)

        # NOTE: each time ratio is to the unplanned step measured between the planned ones (the
        # plan removed and installed again), so that the machine's drift does not enter it
        emit("unplanned", base_peak, base_t, base_t)
        undo: list[Callable[[], None]] = []
        peak, t, u = paired(model, x, args.repeats,
                            lambda _u=undo, _b=blocks: _u.append(every_other(_b)),
                            lambda _u=undo: _u.pop()())
        emit("every other block by hand", peak, t, u)
        hand_peak = peak
        for share in ("hand's peak", 100, 75, 50, 30):
            budget: int | str = hand_peak if isinstance(share, str) else f"{share}%"
            label = f"auto at {share}" if isinstance(share, str) else f"auto {share}%"
            t0 = _clock(x.device)
            try:
                plan = auto_checkpoint(model, x, budget=budget, loss_fn=loss)
            except ValueError as e:
                emit(label, None, None, planning_s=round(_clock(x.device) - t0, 2),
                     error=str(e))
                continue
            planning = _clock(x.device) - t0
            segments, offloaded = list(plan.segments), list(plan.offloaded)
            peak, t, u = paired(model, x, args.repeats, plan.install, plan.remove)
            emit(label, peak, t, u, planning_s=round(planning, 2),
                 predicted_peak=plan.predicted_peak, segments=segments, offloaded=offloaded,
                 predicted_overhead=round(plan.predicted_overhead, 3))
    if args.device == "cpu":
        row = torch_reference(args.quick, max(args.repeats, 5))
        if row is not None:
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
