"""Step capture benchmark (issue #20): ours eager, ours compiled, PyTorch eager, torch.compile.

Cases (CPU, one thread; the issue's aims are ratios of ours compiled to PyTorch eager):

1. ``small_adam``: MLP 64-128-64-10 (ReLU), batch 64, cross-entropy, Adam. Aim <= 0.5x.
2. ``mlp_sgd``: MLP 784-256-256-10, batch 128, cross-entropy, SGD. Aim <= 0.9x.
3. ``digits_epoch``: one epoch of the digits job's loop (64-128-64-10 MLP, Adam, batch 64, label
   smoothing 0.1, a shuffling DataLoader over 1437 samples; the loop reads each loss with
   ``.item()`` outside the step, as the job does). No aim in the issue.

A step is ``zero_grad(); loss = cross_entropy(model(x), y); loss.backward(); opt.step()`` and
returns the loss tensor (an ``.item()`` inside would break the recording). Variants:
``ours_eager``; ``ours_compiled`` (``autograd_gpu.compile(step)`` after its first calls: record,
check, replay); ``torch_eager``; ``torch_compile_<backend>`` (``torch.compile(step,
backend=...)``; each backend is first tried in a subprocess with a time limit and reported as not
run, with the reason, when it fails or is too slow to compile here; the row gives the seconds its
first calls took there, compilation included, with inductor's on-disk cache warm from earlier
runs unless ``--cold-compile``). PyTorch starts from our initial weights. The step cases also get
``ours_compiled_module``: the module compiled and the step eager (``model = compile(model)``;
forward and backward replayed, the optimizer eager). When a real CUDA GPU is present, the step
cases get ``ours_eager_cuda`` and ``torch_eager_cuda``, and the whole step as one CUDA graph:
``ours_compiled_cuda`` (``compile`` on CUDA tensors) and ``torch_cudagraph_cuda`` (PyTorch's
``torch.cuda.graph`` whole-network capture), both with ``Adam(capturable=True)``.

Before timing, each case is checked: eager and compiled runs from the same seed give bit-for-bit
the same losses, parameters, gradients and optimizer state, and ``explain()`` shows no breaks.
The variants run in one process, in rotating order within each round (load from other programs
hits all of them alike). Reported: the medians over rounds of process CPU time (the ratios use
these: one thread, so time spent waiting for a core on a busy machine is left out) and of wall
time. The step cases also get a breakdown of the replayed call (the call's own overhead, the
opaque optimizer calls, loads/stores, the replayed forward/backward array ops).

Output: one JSON line per row on stdout; a markdown report on stderr, or in ``--report FILE``.
Exit status 1 when a case's compiled run is not bit for bit its eager run (or broke), else 0.

Usage: python bench/bench_compile.py [--quick] [--rounds 15] [--cases small_adam,mlp_sgd,...]
           [--torch-backends inductor,aot_eager | none] [--compile-timeout 90] [--cold-compile]
           [--report FILE]
"""

from __future__ import annotations

import argparse
import atexit
import dataclasses
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # NOTE: before numpy or torch is imported

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))


@dataclasses.dataclass(frozen=True)
class Case:
    """One workload: an MLP of ``sizes`` on ``batch`` samples with ``opt`` ("adam"/"sgd");
    ``samples`` > 0 makes it an epoch over that many digits samples (a shuffling DataLoader)
    instead of a step on fixed random data. ``reps``: steps (or epochs) per timed unit."""
    name: str
    sizes: tuple[int, ...]
    batch: int
    opt: str
    reps: int
    aim: float | None = None
    samples: int = 0

    @property
    def unit(self) -> str:
        return "epoch" if self.samples else "step"


CASES = {
    "small_adam": Case("small_adam", (64, 128, 64, 10), 64, "adam", reps=200, aim=0.5),
    "mlp_sgd": Case("mlp_sgd", (784, 256, 256, 10), 128, "sgd", reps=25, aim=0.9),
    "digits_epoch": Case("digits_epoch", (64, 128, 64, 10), 64, "adam", reps=2, samples=1437),
}
CHECK_STEPS = 8  # steps (epochs: 3) compared bit for bit, eager vs compiled


def _lib(name: str) -> Any:
    if name == "torch":
        import torch

        torch.set_num_threads(1)
        return torch
    import autograd_gpu

    return autograd_gpu


# ---- workloads ---------------------------------------------------------------------------------

class Workload:
    """A case built on one library and device: ``model``, ``opt``, ``step`` (``step()`` for the
    step cases, ``step(xb, yb)`` for the epoch case) and ``unit(fn)``, which runs ``case.reps``
    steps or epochs with the step function ``fn`` (the eager ``step`` or a compiled one)."""

    def __init__(self, m: Any, case: Case, device: str = "cpu", seed: int = 0,
                 weights_from: Workload | None = None, compile_model: bool = False,
                 capturable: bool = False) -> None:
        import numpy as np
        from bench_mlp import _mlp

        self.m, self.case, self.device = m, case, device
        self.model: Any
        self.opt: Any
        m.manual_seed(seed)
        model = _mlp(m, list(case.sizes)).to(device)
        if weights_from is not None:
            with m.no_grad():
                for p, q in zip(weights_from.model.parameters(), model.parameters()):
                    q.copy_(m.tensor(p.detach().cpu().numpy(), device=device))
        opt = m.optim.Adam(model.parameters(), lr=1e-3, capturable=capturable) \
            if case.opt == "adam" else m.optim.SGD(model.parameters(), lr=0.01)
        self.model, self.opt = model, opt
        # NOTE: ``compile_model``: the module compiled, the step eager (backward outside it)
        call = m.compile(model) if compile_model else model
        F = m.nn.functional
        if case.samples:
            from sklearn.datasets import load_digits

            x, y = load_digits(return_X_y=True)
            x = ((x - x.mean()) / x.std()).astype(np.float32)[:case.samples]
            x = x[:, :case.sizes[0]]
            data = m.utils.data.TensorDataset(m.tensor(x), m.tensor(y[:case.samples]))
            gen = m.Generator().manual_seed(seed)
            self.loader = m.utils.data.DataLoader(data, batch_size=case.batch, shuffle=True,
                                                  generator=gen)
            loss_fn = m.nn.CrossEntropyLoss(label_smoothing=0.1)

            def epoch_step(xb: Any, yb: Any) -> Any:
                opt.zero_grad()
                loss = loss_fn(call(xb), yb)
                loss.backward()
                opt.step()
                return loss

            self.step: Callable[..., Any] = epoch_step
        else:
            rng = np.random.default_rng(seed)
            xs = m.tensor(rng.standard_normal((case.batch, case.sizes[0]), dtype=np.float32),
                          device=device)
            ys = m.tensor(rng.integers(0, case.sizes[-1], case.batch), device=device)

            def step() -> Any:
                opt.zero_grad()
                loss = F.cross_entropy(call(xs), ys)
                loss.backward()
                opt.step()
                return loss

            self.step = step
        self.sync: Callable[[], None] = (lambda: None) if device == "cpu" else \
            m.cuda.synchronize

    def losses(self, fn: Callable[..., Any], n: int) -> list[Any]:
        """The loss tensors of ``n`` steps (epoch case: of every batch of ``n`` epochs)."""
        if not self.case.samples:
            return [fn() for _ in range(n)]
        return [fn(xb, yb) for _ in range(n) for xb, yb in self.loader]

    def unit(self, fn: Callable[..., Any]) -> Callable[[], None]:
        """One timed unit: ``case.reps`` steps, or epochs (each batch's loss read with .item()
        outside the step, as the digits job does)."""
        reps, sync = self.case.reps, self.sync
        if not self.case.samples:
            def steps() -> None:
                for _ in range(reps):
                    fn()
                sync()
            return steps
        loader = self.loader

        def epochs() -> None:
            for _ in range(reps):
                total = 0.0
                for xb, yb in loader:
                    total += float(fn(xb, yb).item())
        return epochs


# ---- the exactness check -----------------------------------------------------------------------

def _bits(arrays: list[Any]) -> list[bytes]:
    import numpy as np

    return [np.ascontiguousarray(np.asarray(a)).tobytes() for a in arrays]


def _state(w: Workload) -> dict[str, list[bytes]]:
    params = list(w.model.parameters())
    opt_state = [v for p in params for _, v in sorted(w.opt.state.get(p, {}).items())]
    return {"params": _bits([p.detach().numpy() for p in params]),
            "grads": _bits([p.grad.numpy() for p in params if p.grad is not None]),
            "optimizer state": _bits([v.numpy() if hasattr(v, "numpy") else v
                                      for v in opt_state])}


def check_exact(case: Case, steps: int = CHECK_STEPS, with_torch: bool = True
                ) -> dict[str, Any]:
    """Eager and compiled runs of ``case`` from the same seed: are losses, parameters, gradients
    and optimizer state bit for bit the same, and did the recording break? Also the largest
    relative loss difference of ours eager vs PyTorch eager from the same weights."""
    import numpy as np

    ag = _lib("ours")
    n = 3 if case.samples else steps  # NOTE: 3 epochs: every signature reaches its replay
    eager, other = Workload(ag, case), Workload(ag, case)
    compiled = ag.compile(other.step)
    want = [v.item() for v in eager.losses(eager.step, n)]
    got = [v.item() for v in other.losses(compiled, n)]
    ex = compiled.explain()
    replays = sum(e.calls - 1 for e in compiled._entries.values() if e.state == "replay")
    s1, s2 = _state(eager), _state(other)
    row: dict[str, Any] = {
        "case": case.name, "kind": "check", "steps": len(want),
        "losses_identical": _bits([np.asarray(want, np.float32)])
        == _bits([np.asarray(got, np.float32)]),
        **{f"{k.replace(' ', '_')}_identical": s1[k] == s2[k] for k in s1},
        "breaks": len(ex.break_reasons), "break_reasons": ex.break_reasons,
        "signatures": ex.signatures, "replaying": ex.replaying, "replayed_calls": replays,
        "ops_recorded": ex.ops_recorded, "ops_replayed": ex.ops_replayed}
    if not case.samples:
        # NOTE: the module compiled, backward outside it (forward and backward programs)
        mod = Workload(ag, case, compile_model=True)
        got_m = [v.item() for v in mod.losses(mod.step, n)]
        row["module_losses_identical"] = _bits([np.asarray(want, np.float32)]) \
            == _bits([np.asarray(got_m, np.float32)])
        row["module_params_identical"] = _state(mod)["params"] == s1["params"]
    row["exact"] = all(row[k] for k in row if k.endswith("_identical")) and not row["breaks"] \
        and replays > 0
    if with_torch:
        torch = _lib("torch")
        tw = Workload(torch, case, weights_from=Workload(ag, case))
        ref = [v.item() for v in tw.losses(tw.step, n)]
        row["torch_loss_max_rel_diff"] = float(max(abs(a - b) / abs(b)
                                                   for a, b in zip(want, ref)))
    return row


# ---- timing ------------------------------------------------------------------------------------

def measure(units: dict[str, Callable[[], None]], rounds: int, per_unit: int
            ) -> dict[str, list[tuple[float, float]]]:
    """Seconds per step (or epoch) of each unit, ``rounds`` times, in rotating order: pairs of
    wall time and process CPU time (one thread: the CPU time leaves out the time this process
    waited for a core while other programs ran)."""
    names = list(units)
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in names}
    for r in range(rounds):
        k = r % len(names)
        order = names[k:] + names[:k]
        if r % 2:
            order.reverse()
        for name in order:
            gc.collect()
            t0, c0 = time.perf_counter(), time.process_time()
            units[name]()
            c1, t1 = time.process_time(), time.perf_counter()
            times[name].append(((t1 - t0) / per_unit, (c1 - c0) / per_unit))
    return times


def breakdown(compiled: Any, reps: int, torch_opt: Any = None) -> dict[str, float]:
    """Microseconds per replayed call of ``compiled`` (a warmed-up ``autograd_gpu.compile``
    step without arguments), by part, all measured in the same calls: the call's own work
    around the replay (discovery of the step's state, its signature, the entry lookup), each
    opaque call (optimizer ``zero_grad``/``step``, run for real), the loads and stores of places,
    and the replayed array ops (the rest of the replay). Best of 3 batches of ``reps`` calls;
    the timers add about a microsecond per part call, counted in the parts. With
    ``torch_opt``: its ``step()`` alone (same parameters, existing gradients), to compare with
    the opaque optimizer step."""
    entry = next(e for e in compiled._entries.values() if e.state == "replay")
    # NOTE: the replay takes its callables as keyword-only defaults (locals, not globals)
    g = entry.program.run.__kwdefaults__
    spent: dict[str, float] = {}
    originals: dict[str, Any] = {}

    def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*a: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*a)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t0
        return call

    def per_step(fn: Callable[[], Any]) -> float:
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        return (time.perf_counter() - t0) / reps * 1e6

    for name, fn in list(g.items()):
        if name[:1] in "OLS" and name[1:].isdigit():
            if name[0] == "O":
                owner = getattr(fn, "__self__", None)
                label = f"opaque {type(owner).__name__}.{fn.__name__}" if owner is not None \
                    else f"opaque {getattr(fn, '__name__', name)}"
            else:
                label = "loads" if name[0] == "L" else "stores"
            originals[name] = fn
            g[name] = timed(label, fn)
    compiled._replay = timed("replay", compiled._replay)  # NOTE: shadows the method
    best: tuple[float, dict[str, float]] = (float("inf"), {})
    try:
        for _ in range(3):
            spent.clear()
            whole = per_step(compiled)
            if whole < best[0]:
                best = (whole, dict(spent))
    finally:
        g.update(originals)
        del compiled._replay
    whole = best[0]
    parts = {k: v / reps * 1e6 for k, v in sorted(best[1].items())}
    replay = parts.pop("replay")
    for label in ("loads", "stores"):
        # NOTE: the loads and stores of fixed tensors are written out in the replay (no call
        # to time): only those through a locator (the arguments) count here
        parts.setdefault(label, 0.0)
    out = {"step_us": whole, "call_overhead_us": whole - replay, **parts,
           "replayed array ops": replay - sum(parts.values())}
    if torch_opt is not None:
        out["torch_opt_step_alone_us"] = min(per_step(torch_opt.step) for _ in range(3))
    return out

def _probe(case_name: str, backend: str) -> None:
    """Worker: compile ``case_name``'s torch step with ``backend`` and run it until every shape
    compiled; print the seconds that took."""
    torch = _lib("torch")
    w = Workload(torch, CASES[case_name])
    fn = torch.compile(w.step, backend=backend)
    t0 = time.perf_counter()
    w.losses(fn, 1 if w.case.samples else 3)
    print(json.dumps({"compile_s": time.perf_counter() - t0}))


def try_backend(case: Case, backend: str, timeout: float) -> tuple[float | None, str]:
    """``(seconds, "")`` when ``torch.compile(backend=...)`` compiles ``case`` in a subprocess
    within ``timeout`` s, else ``(None, why not)``."""
    cmd = [sys.executable, __file__, "--probe", case.name, backend]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"did not compile within {timeout:g} s on this machine"
    if done.returncode != 0:
        tail = [ln for ln in done.stderr.strip().splitlines() if ln.strip()][-1:] or ["?"]
        return None, f"failed to compile: {tail[0][:200]}"
    return float(json.loads(done.stdout.strip().splitlines()[-1])["compile_s"]), ""


def cuda_rows() -> tuple[tuple[str, ...], list[str]]:
    """The libraries ("ours", "torch") that get CUDA rows here (a real GPU), and why the others
    do not."""
    from bench_gpu import gpu_status, load_torch

    libs: list[str] = []
    why = gpu_status()
    notes = [] if why is None else [f"ours: {why}"]
    if why is None:
        libs.append("ours")
        torch_why = load_torch()[1]
        if torch_why:
            notes.append(f"torch: {torch_why}")
        else:
            libs.append("torch")
    return tuple(libs), notes


# ---- one case ----------------------------------------------------------------------------------

def run_case(case: Case, rounds: int, backends: tuple[str, ...], timeout: float,
             info: dict[str, Any], cuda: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The check row, then one row per variant (median ms per step/epoch), a summary row, and
    for small_adam the breakdown row; rows for torch.compile backends that did not run say why."""
    ag = _lib("ours")
    check = check_exact(case, with_torch=True)
    rows = [check]
    if not check["exact"]:
        print(f"{case.name}: compiled differs from eager or broke: {check}", file=sys.stderr)
    torch = _lib("torch")
    ours, ours_c = Workload(ag, case), Workload(ag, case)
    tw = Workload(torch, case, weights_from=ours)
    fns: dict[str, tuple[Workload, Callable[..., Any]]] = {
        "ours_eager": (ours, ours.step), "ours_compiled": (ours_c, ag.compile(ours_c.step)),
        "torch_eager": (tw, tw.step)}
    compile_s: dict[str, float] = {}
    for b in backends:
        name = f"torch_compile_{b}"
        secs, why = try_backend(case, b, timeout)
        if secs is not None:
            try:
                tw = Workload(torch, case, weights_from=ours)
                fns[name] = (tw, torch.compile(tw.step, backend=b))
                tw.losses(fns[name][1], 1 if case.samples else 3)
                compile_s[name] = secs
                continue
            except Exception as e:  # noqa: BLE001 - any failure: the row says why
                fns.pop(name, None)
                why = f"failed in process: {type(e).__name__}: {str(e)[:200]}"
        rows.append({"case": case.name, "variant": name, "device": "cpu", "status": "not run",
                     "reason": why})
    if not case.samples:
        om = Workload(ag, case, compile_model=True)
        fns["ours_compiled_module"] = (om, om.step)
    if not case.samples:  # NOTE: the epoch case's DataLoader makes CPU batches
        for lib in cuda:
            w = Workload(ag if lib == "ours" else torch, case, device="cuda", weights_from=ours)
            fns[f"{lib}_eager_cuda"] = (w, w.step)
            # NOTE: the whole step as one CUDA graph: ours through compile, PyTorch's through
            # torch.cuda.graph (its documented whole-network capture); Adam capturable in both
            w = Workload(ag if lib == "ours" else torch, case, device="cuda", weights_from=ours,
                         capturable=True)
            if lib == "ours":
                fns["ours_compiled_cuda"] = (w, ag.compile(w.step))
            else:
                fns["torch_cudagraph_cuda"] = (w, _torch_graphed(torch, w))
    units = {}
    for name, (w, fn) in fns.items():
        # NOTE: warm-up: the compiled step records and checks each signature, then replays
        w.losses(fn, 2 if case.samples else 5)
        units[name] = w.unit(fn)
        units[name]()
    per_unit = case.reps
    times = measure(units, rounds, per_unit)
    wall = {k: statistics.median(w for w, _ in v) * 1e3 for k, v in times.items()}
    med = {k: statistics.median(c for _, c in v) * 1e3 for k, v in times.items()}
    compiled: Any = fns["ours_compiled"][1]
    ex = compiled.explain()
    for name, ts in times.items():
        row = {"case": case.name, "variant": name,
               "device": "cuda" if name.endswith("_cuda") else "cpu", "unit": case.unit,
               "cpu_ms": round(med[name], 4), "ms": round(wall[name], 4),
               "min_ms": round(min(w for w, _ in ts) * 1e3, 4), "rounds": rounds,
               "reps": per_unit}
        ref = "torch_eager_cuda" if name.endswith("_cuda") else "torch_eager"
        base = wall if name.endswith("_cuda") else med  # NOTE: a GPU's time is not our CPU's
        if ref in base:
            row["vs_torch_eager"] = round(base[name] / base[ref], 3)
        if name in compile_s:
            row["compile_s"] = round(compile_s[name], 1)
        rows.append(row)
    ratio = med["ours_compiled"] / med["torch_eager"]
    summary = {"case": case.name, "kind": "summary", "sizes": list(case.sizes),
               "batch": case.batch, "optimizer": case.opt, "unit": case.unit,
               "compiled_vs_torch_eager": round(ratio, 3),
               "compiled_vs_torch_eager_wall": round(wall["ours_compiled"] / wall["torch_eager"],
                                                     3),
               "compiled_vs_ours_eager": round(med["ours_compiled"] / med["ours_eager"], 3),
               "aim": case.aim, "meets_aim": None if case.aim is None else ratio <= case.aim,
               "explain_breaks": len(ex.break_reasons), "explain_replaying": ex.replaying,
               "explain_signatures": ex.signatures, "exact": check["exact"], **info}
    for name in fns:
        if name.startswith("torch_compile_"):
            summary[f"compiled_vs_{name}"] = round(med["ours_compiled"] / med[name], 3)
    rows.append(summary)
    if not case.samples:
        parts = breakdown(compiled, max(20, case.reps // 2), tw.opt)
        rows.append({"case": case.name, "kind": "breakdown",
                     **{k: round(v, 1) for k, v in parts.items()}})
    return rows


def _torch_graphed(torch: Any, w: Workload) -> Callable[[], Any]:
    """PyTorch's whole-step CUDA graph (its documented recipe): warm-up on a side stream, one
    capture, then each call is ``g.replay()`` returning the static loss."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            w.step()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    w.opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(g):
        loss = w.step()

    def replay() -> Any:
        g.replay()
        return loss

    return replay


# ---- report ------------------------------------------------------------------------------------

def report(rows: list[dict[str, Any]], info: dict[str, Any], commit: str, argv: list[str],
           notes: tuple[str, ...] | list[str] = ()) -> str:
    lines = ["## Step capture: compile vs eager vs PyTorch", "",
             f"Machine: {info['cpu']}, {info['cpu_count']} CPUs, load {info['loadavg_1min']}; "
             f"Python {info['python']}, NumPy {info['numpy']}, torch {info['torch']}; one "
             f"thread; commit {commit}; `python bench/bench_compile.py {' '.join(argv)}` "
             "(median of rotating rounds in one process; ratios from the medians of process "
             "CPU time, which leave out time spent waiting for a core on a busy machine).",
             *notes, ""]
    by_case: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    for name, rs in by_case.items():
        case = CASES.get(name)
        summ = next((r for r in rs if r.get("kind") == "summary"), None)
        chk = next(r for r in rs if r.get("kind") == "check")
        head = f"### {name}"
        if summ:
            head += (f": MLP {'-'.join(map(str, summ['sizes']))}, batch {summ['batch']}, "
                     f"{summ['optimizer']}")
        lines += [head, ""]
        unit = summ["unit"] if summ else (case.unit if case else "step")
        lines += [f"| variant | device | CPU ms/{unit} | wall ms | min wall ms | vs torch eager |",
                  "|---|---|---:|---:|---:|---:|"]
        for r in rs:
            if "variant" not in r:
                continue
            if r.get("status") == "not run":
                lines.append(f"| {r['variant']} | {r['device']} | not run: {r['reason']} | | | |")
                continue
            extra = f" (compiled in {r['compile_s']} s)" if "compile_s" in r else ""
            lines.append(f"| {r['variant']}{extra} | {r['device']} | {r['cpu_ms']:.3f} | "
                         f"{r['ms']:.3f} | {r['min_ms']:.3f} | "
                         f"{r.get('vs_torch_eager', float('nan')):.2f} |")
        lines.append("")
        if summ:
            aim = f"aim <= {summ['aim']}: {'met' if summ['meets_aim'] else 'NOT met'}" \
                if summ["aim"] is not None else "no aim"
            lines.append(f"Compiled / PyTorch eager = {summ['compiled_vs_torch_eager']:.2f} "
                         f"({aim}; wall time: {summ['compiled_vs_torch_eager_wall']:.2f}); "
                         f"compiled / ours eager = {summ['compiled_vs_ours_eager']:.2f}.")
        ok = "bit for bit identical" if chk["exact"] else "NOT identical (see the JSON row)"
        lines.append(
            f"Check: {chk['steps']} losses, parameters, gradients and optimizer state of eager "
            f"vs compiled from one seed: {ok}; explain(): {chk['breaks']} breaks"
            f"{' ' + str(chk['break_reasons']) if chk['break_reasons'] else ''}, "
            f"{chk['signatures']} signatures "
            f"({chk['replaying']} replaying, {chk['replayed_calls']} replayed calls), array ops "
            f"recorded/replayed {chk['ops_recorded']}/{chk['ops_replayed']}"
            + (f"; ours eager vs PyTorch eager losses: max rel. diff "
               f"{chk['torch_loss_max_rel_diff']:.1e}." if "torch_loss_max_rel_diff" in chk
               else "."))
        bd = next((r for r in rs if r.get("kind") == "breakdown"), None)
        if bd:
            parts = ", ".join(f"{k.removesuffix('_us')} {v:.0f} us" for k, v in bd.items()
                              if isinstance(v, float) and k != "step_us")
            lines.append(f"Replayed step {bd['step_us']:.0f} us: {parts}.")
        lines.append("")
    return "\n".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds and steps (noisier)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 15, quick 5)")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--torch-backends", default="inductor",
                    help="torch.compile backends to try, comma-separated, or 'none'")
    ap.add_argument("--compile-timeout", type=float, default=90.0,
                    help="seconds a torch.compile backend may take to compile a case")
    ap.add_argument("--cold-compile", action="store_true",
                    help="torch.compile without inductor's on-disk cache of earlier runs (a "
                         "fresh TORCHINDUCTOR_CACHE_DIR): the compile times reported are cold")
    ap.add_argument("--report", help="write the markdown report here (default: stderr)")
    ap.add_argument("--probe", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    bad = [c for c in cases if c not in CASES]
    if bad or not cases:
        ap.error(f"--cases: unknown {bad or 'empty'}; choose from {', '.join(CASES)}")
    args.cases = cases
    args.torch_backends = () if args.torch_backends in ("", "none") else \
        tuple(args.torch_backends.split(","))
    if args.rounds is None:
        args.rounds = 5 if args.quick else 15
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    return args


def main(argv: list[str] | None = None, cases: dict[str, Case] | None = None) -> int:
    """Run the benchmark; ``cases`` replaces the case table (the tests' tiny configs)."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.probe:
        _probe(*args.probe)
        return 0
    from bench_core import git_commit, machine

    table = CASES if cases is None else cases
    if args.cold_compile:  # NOTE: before torch is imported; the probes inherit it
        cache = tempfile.mkdtemp(prefix="bench_compile_inductor_")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache
        atexit.register(shutil.rmtree, cache, True)
    info, commit = machine(), git_commit()
    cuda, notes = cuda_rows()
    if notes:
        notes = [f"No CUDA rows for {'; '.join(notes)}."]
    rows: list[dict[str, Any]] = []
    for name in args.cases:
        case = table[name]
        if args.quick:
            case = dataclasses.replace(case, reps=max(1, case.reps // 4))
        for row in run_case(case, args.rounds, args.torch_backends, args.compile_timeout, info,
                            cuda=cuda):
            row.setdefault("commit", commit)
            print(json.dumps(row), flush=True)
            rows.append(row)
    text = report(rows, info, commit, argv, notes)
    if args.report:
        Path(args.report).write_text(text + "\n")
    else:
        print(text, file=sys.stderr)
    return 0 if all(r["exact"] for r in rows if r.get("kind") == "check") else 1


if __name__ == "__main__":
    sys.exit(main())
