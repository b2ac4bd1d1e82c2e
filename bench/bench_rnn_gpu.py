"""GPU benchmark of the fused recurrent cells (issue #16 item 3: ``kernels/rnn.cu``).

1. ``cell``: one time step's pointwise part on arrays, forward and backward, at a few
   (batch, hidden) sizes: our fused kernels (``backends/cuda_rnn.py``) against the unfused path
   (the backend's reference twin: one CuPy/kernel call per elementwise op, what a step cost
   before) and PyTorch CUDA's own fused cells (``_thnn_fused_lstm_cell`` / ``_gru_cell`` and
   their backwards). CUDA events around batches of calls.
2. ``step``: whole modules on CUDA, forward + backward, in milliseconds per time step:
   ``nn.LSTMCell`` / ``nn.GRUCell`` (one step) and ``nn.LSTM`` / ``nn.GRU`` (``T`` steps), ours
   fused against ours unfused (``ops.rnn.FUSED_ON_CUDA = False``: the CPU graph on CUDA) and
   PyTorch CUDA (its cells are the fused ones; its layers use cuDNN, and are also timed with
   cuDNN off, where they run its fused cells step by step). Wall clock, one synchronize per
   batch (these are bound by host-side work).

Every result is checked against the others before it is timed. Output: JSON lines on stdout, a
markdown summary on stderr. Exit status: 0 when every check passed, 1 when one disagreed.
Without a usable CUDA GPU it says why and exits 0, or 77 with ``--require-gpu``.

Usage:
    python bench/bench_rnn_gpu.py            # everything
    python bench/bench_rnn_gpu.py --quick    # fewer sizes and repetitions
    python bench/bench_rnn_gpu.py --only cell
"""

from __future__ import annotations

import argparse
import json
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
    EXIT_NO_GPU, _wall_interleaved, cupy_timer, log, start, time_interleaved, torch_timer,
)

SECTIONS = ("cell", "step")
CELL_SIZES = ((64, 256), (256, 1024), (1024, 1024))
STEP_SIZES = ((64, 256), (128, 1024))  # (batch, hidden); input size = hidden
STEPS = 32


def _close(got: Any, want: Any, rtol: float, atol: float) -> str | None:
    import numpy as np

    a = np.asarray(got, dtype=np.float64)
    b = np.asarray(want, dtype=np.float64)
    if a.shape != b.shape:
        return f"shape {a.shape} != {b.shape}"
    bad = ~np.isclose(a, b, rtol=rtol, atol=atol)
    return f"{int(bad.sum())} of {a.size} differ (max {float(np.abs(a - b).max()):.3g})" \
        if bad.any() else None


# ---- section 1: the pointwise part of one step --------------------------------------------

def _cell_case(kind: str, batch: int, hidden: int, torch: Any, ag: Any
               ) -> tuple[dict[str, Callable[[], Any]], dict[str, Callable[[], Any]], list[str]]:
    """(forward fns, backward fns, mismatches) for ours fused, ours unfused and torch."""
    import cupy as cp

    from autograd_gpu.backends import cuda_rnn

    backend = ag.device("cuda").backend
    g = (4 if kind == "lstm" else 3) * hidden
    rng = cp.random.default_rng(batch + hidden)
    ig, hg = (rng.standard_normal((batch, g), dtype=cp.float32) for _ in range(2))
    b_ih, b_hh = (rng.standard_normal(g, dtype=cp.float32) for _ in range(2))
    state, grad_h, grad_c = (rng.standard_normal((batch, hidden), dtype=cp.float32)
                             for _ in range(3))
    t = {k: torch.as_tensor(v, device="cuda") for k, v in
         dict(ig=ig, hg=hg, b_ih=b_ih, b_hh=b_hh, state=state, gh=grad_h, gc=grad_c).items()}
    aten = torch.ops.aten
    problems: list[str] = []
    if kind == "lstm":
        hy, cy, ws = cuda_rnn.lstm_cell(ig, hg, state, b_ih, b_hh)
        ref = backend.lstm_cell_reference(ig, hg, state, b_ih, b_hh)
        th = aten._thnn_fused_lstm_cell(t["ig"], t["hg"], t["state"], t["b_ih"], t["b_hh"])
        for name, ours, theirs in (("hy", hy, th[0]), ("cy", cy, th[1]), ("ws", ws, th[2])):
            for other, label in ((theirs.cpu().numpy(), "torch"),
                                 (cp.asnumpy(ref[("hy", "cy", "ws").index(name)]), "unfused")):
                bad = _close(cp.asnumpy(ours), other, 1e-5, 1e-6)
                if bad:
                    problems.append(f"lstm {name} vs {label}: {bad}")
        grads = cuda_rnn.lstm_cell_backward(grad_h, grad_c, state, cy, ws)
        tg = aten._thnn_fused_lstm_cell_backward_impl(t["gh"], t["gc"], t["state"], th[1], th[2],
                                                       True)
        for ours, theirs in zip(grads, tg[:2]):
            bad = _close(cp.asnumpy(ours), theirs.cpu().numpy(), 1e-5, 1e-6)
            if bad:
                problems.append(f"lstm backward vs torch: {bad}")
        fwd = {"fused": lambda: cuda_rnn.lstm_cell(ig, hg, state, b_ih, b_hh),
               "unfused": lambda: backend.lstm_cell_reference(ig, hg, state, b_ih, b_hh),
               "torch": lambda: aten._thnn_fused_lstm_cell(t["ig"], t["hg"], t["state"],
                                                          t["b_ih"], t["b_hh"])}
        bwd = {"fused": lambda: cuda_rnn.lstm_cell_backward(grad_h, grad_c, state, cy, ws),
               "unfused": lambda: backend.lstm_cell_backward_reference(grad_h, grad_c, state, cy,
                                                                       ws),
               "torch": lambda: aten._thnn_fused_lstm_cell_backward_impl(
                   t["gh"], t["gc"], t["state"], th[1], th[2], True)}
        return fwd, bwd, problems
    hy, ws = cuda_rnn.gru_cell(ig, hg, state, b_ih, b_hh)
    th = aten._thnn_fused_gru_cell(t["ig"], t["hg"], t["state"], t["b_ih"], t["b_hh"])
    ref = backend.gru_cell_reference(ig, hg, state, b_ih, b_hh)
    for ours, theirs, label in ((hy, th[0].cpu().numpy(), "torch"), (ws, th[1].cpu().numpy(),
                                "torch ws"), (hy, cp.asnumpy(ref[0]), "unfused")):
        bad = _close(cp.asnumpy(ours), theirs, 1e-5, 1e-6)
        if bad:
            problems.append(f"gru vs {label}: {bad}")
    grads = cuda_rnn.gru_cell_backward(grad_h, ws)
    tg = aten._thnn_fused_gru_cell_backward(t["gh"], th[1], True)
    for ours, theirs in zip(grads, tg[:3]):
        bad = _close(cp.asnumpy(ours), theirs.cpu().numpy(), 1e-5, 1e-6)
        if bad:
            problems.append(f"gru backward vs torch: {bad}")
    fwd = {"fused": lambda: cuda_rnn.gru_cell(ig, hg, state, b_ih, b_hh),
           "unfused": lambda: backend.gru_cell_reference(ig, hg, state, b_ih, b_hh),
           "torch": lambda: aten._thnn_fused_gru_cell(t["ig"], t["hg"], t["state"], t["b_ih"],
                                                     t["b_hh"])}
    bwd = {"fused": lambda: cuda_rnn.gru_cell_backward(grad_h, ws),
           "unfused": lambda: backend.gru_cell_backward_reference(grad_h, ws),
           "torch": lambda: aten._thnn_fused_gru_cell_backward(t["gh"], th[1], True)}
    return fwd, bwd, problems


def run_cell(args: argparse.Namespace, torch: Any, ag: Any,
             emit: Callable[[dict[str, Any]], None]) -> list[str]:
    failures: list[str] = []
    reps, inner = (5, 20) if args.quick else (15, 100)
    sizes = CELL_SIZES[:2] if args.quick else CELL_SIZES
    log("| cell | batch | hidden | pass | fused ms | unfused ms | torch ms | unfused/fused "
        "| fused/torch |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for kind in ("lstm", "gru"):
        for batch, hidden in sizes:
            fwd, bwd, problems = _cell_case(kind, batch, hidden, torch, ag)
            failures += problems
            for direction, fns in (("forward", fwd), ("backward", bwd)):
                timers = {k: (fn, torch_timer(torch) if k == "torch" else cupy_timer())
                          for k, fn in fns.items()}
                ms = time_interleaved(timers, reps, inner)
                row = {"section": "cell", "cell": kind, "pass": direction, "batch": batch,
                       "hidden": hidden, "dtype": "float32", "ms": ms, "ok": not problems}
                emit(row)
                log(f"| {kind} | {batch} | {hidden} | {direction} | {ms['fused']:.4f} | "
                    f"{ms['unfused']:.4f} | {ms['torch']:.4f} | "
                    f"{ms['unfused'] / ms['fused']:.2f} | {ms['fused'] / ms['torch']:.2f} |")
    return failures


# ---- section 2: modules, forward + backward per time step -----------------------------------

def _module_step(lib: Any, name: str, batch: int, hidden: int, seed: int) -> tuple[Any, Any]:
    """(module on CUDA, step()) with fixed random data (the same input for both libraries: their
    CUDA generators differ); step runs forward + backward and returns the loss."""
    import numpy as np

    lib.manual_seed(seed)
    m = getattr(lib.nn, name)(hidden, hidden).to("cuda")
    cell = name.endswith("Cell")
    shape = (batch, hidden) if cell else (STEPS, batch, hidden)
    x = lib.tensor(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32),
                   device="cuda")

    def step() -> Any:
        for p in m.parameters():
            p.grad = None
        out = m(x)
        first = out[0] if isinstance(out, tuple) else out
        loss = (first * first).mean()
        loss.backward()
        return loss

    return m, step


def run_step(args: argparse.Namespace, torch: Any, ag: Any,
             emit: Callable[[dict[str, Any]], None]) -> list[str]:
    import numpy as np

    from autograd_gpu.ops import rnn as ops_rnn

    failures: list[str] = []
    batch_s, batches = (0.1, 3) if args.quick else (0.4, 7)
    sizes = STEP_SIZES[:1] if args.quick else STEP_SIZES
    log("\n| module | batch | hidden | fused ms/step | unfused ms/step | torch ms/step | "
        "torch no-cuDNN ms/step | unfused/fused | fused/torch |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in ("LSTMCell", "GRUCell", "LSTM", "GRU"):
        for batch, hidden in sizes:
            ours, step_o = _module_step(ag, name, batch, hidden, 0)
            theirs, step_t = _module_step(torch, name, batch, hidden, 0)
            with torch.no_grad():  # identical weights
                for p_o, p_t in zip(ours.parameters(), theirs.parameters()):
                    p_t.copy_(torch.as_tensor(np.asarray(p_o.detach().cpu().numpy()),
                                              device="cuda"))

            def unfused(step: Callable[[], Any] = step_o) -> Any:
                ops_rnn.FUSED_ON_CUDA = False
                try:
                    return step()
                finally:
                    ops_rnn.FUSED_ON_CUDA = True

            def no_cudnn(step: Callable[[], Any] = step_t) -> Any:
                with torch.backends.cudnn.flags(enabled=False):
                    return step()

            losses = {"fused": float(step_o().item()), "unfused": float(unfused().item()),
                      "torch": float(step_t().item())}
            for k, v in losses.items():
                if abs(v - losses["torch"]) > 1e-4 * max(1.0, abs(losses["torch"])):
                    failures.append(f"{name} {batch}x{hidden}: {k} loss {v} != torch "
                                    f"{losses['torch']}")

            def loop_of(fn: Callable[[], Any]) -> Callable[[int], None]:
                def loop(n: int) -> None:
                    for _ in range(n):
                        fn()
                return loop

            ag_sync = ag.cuda.synchronize
            loops = {"fused": (loop_of(step_o), ag_sync), "unfused": (loop_of(unfused), ag_sync),
                     "torch": (loop_of(step_t), torch.cuda.synchronize)}
            if not name.endswith("Cell"):
                loops["torch_no_cudnn"] = (loop_of(no_cudnn), torch.cuda.synchronize)
            per = 1 if name.endswith("Cell") else STEPS
            raw = _wall_interleaved(loops, batch_s, batches)
            ms = {k: 1e3 * statistics.median(v) / per for k, v in raw.items()}
            emit({"section": "step", "module": name, "batch": batch, "hidden": hidden,
                  "dtype": "float32", "ms_per_step": ms, "ok": not failures})
            nc = f"{ms['torch_no_cudnn']:.3f}" if "torch_no_cudnn" in ms else "-"
            log(f"| {name} | {batch} | {hidden} | {ms['fused']:.3f} | {ms['unfused']:.3f} | "
                f"{ms['torch']:.3f} | {nc} | {ms['unfused'] / ms['fused']:.2f} | "
                f"{ms['fused'] / ms['torch']:.2f} |")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repetitions")
    parser.add_argument("--only", choices=SECTIONS, help="run one section")
    parser.add_argument("--require-gpu", action="store_true",
                        help=f"exit {EXIT_NO_GPU} (skipped) instead of 0 without a GPU")
    args = parser.parse_args(argv)
    started = start("bench_rnn_gpu", args.require_gpu)
    if isinstance(started, int):
        return started
    torch, env = started
    import autograd_gpu as ag

    def emit(row: dict[str, Any]) -> None:
        print(json.dumps({**row, **env}), flush=True)

    failures: list[str] = []
    if args.only in (None, "cell"):
        failures += run_cell(args, torch, ag, emit)
    if args.only in (None, "step"):
        failures += run_step(args, torch, ag, emit)
    for f in failures:
        log(f"MISMATCH: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
