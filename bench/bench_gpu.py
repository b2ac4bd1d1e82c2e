"""GPU benchmarks (issue #4): kernel bandwidth, small-op latency and an MLP training step on CUDA.

1. ``kernels``: achieved bandwidth of our RawKernels (``backends/cuda_kernels.py``) on 2^26
   float32 elements: the bytes an op must move divided by its time, next to the device-to-device
   copy bandwidth measured in the same run, CuPy's own function (or the plain CuPy expression,
   marked "expr", where CuPy has none) and PyTorch CUDA. A few rows go through the public Tensor
   API instead of the launchers. Aims: elementwise >= 85% of copy bandwidth, reductions >= 80%.
2. ``latency``: (1,)- and (256,)-element add / mul / relu / sum through the Tensor API, forward
   only (inputs not requiring grad) and forward+backward, ours against PyTorch CUDA eager.
   Aim: ours/torch <= 1.5.
3. ``mlp``: one SGD training step of an MLP 784-256-256-10 at batch 128 and 1024, ours on CUDA
   against PyTorch CUDA, once the first steps' losses from identical weights agree.
   Aim: ours/torch <= 1.2.

Every result is checked against its reference before it is timed, on random inputs. Kernel times
come from CUDA events around a batch of calls after a warm-up (median of the batches, the
libraries' batches taking turns); the latency and MLP cases, bound by host-side work, use the
wall clock with one synchronize per batch.

Usage:
    python bench/bench_gpu.py                   # everything; one JSON line per measurement
    python bench/bench_gpu.py --quick           # fewer repetitions (faster, noisier)
    python bench/bench_gpu.py --write           # also refresh "## GPU (CUDA)" in RESULTS.md
    python bench/bench_gpu.py --only kernels --report gpu.md

Output: JSON lines on stdout; progress and the markdown report on stderr (and in ``--report``).
Exit status: 0 when every check passed (the aims are reported, not enforced); 1 when one of our
results disagreed with its reference or a measurement of ours failed; 2 for bad arguments.
Without a usable CUDA GPU it says why, measures nothing, never writes RESULTS.md, and exits 0,
or 77 (the conventional "skipped") with ``--require-gpu``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for _path in (str(ROOT), str(BENCH)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import bench_core  # noqa: E402  (machine, git_commit, write_section)

HEADING = "## GPU (CUDA)"
SECTIONS = ("kernels", "latency", "mlp")
EXIT_NO_GPU = 77
DEVICE = "cuda"  # where the latency and MLP tensors live
AIM_BANDWIDTH = {"elementwise": 0.85, "reduction": 0.80}
AIM_LATENCY = 1.5
AIM_MLP = 1.2
LATENCY_OPS = ("add", "mul", "relu", "sum")
LATENCY_SIZES = (1, 256)
MLP_SIZES = (784, 256, 256, 10)
MLP_BATCHES = (128, 1024)


def log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


# ---- what is here ---------------------------------------------------------------------------

def gpu_status() -> str | None:
    """None when CuPy sees a CUDA device here, else the reason it does not."""
    try:
        import cupy
    except ImportError as e:
        return f"CuPy is not installed ({e}); install autograd_gpu[cuda12] or [cuda13]"
    if getattr(cupy, "__autograd_gpu_fake__", False):
        return "the imported cupy is the tests' NumPy stand-in, not CuPy on a GPU"
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as e:  # noqa: BLE001  (no driver, no device: no GPU to measure)
        return f"CuPy finds no CUDA driver or device ({type(e).__name__}: {e})"
    return None if count > 0 else "CuPy sees 0 CUDA devices"


def load_torch() -> tuple[Any, str]:
    """``(torch, "")`` when PyTorch with CUDA is here, else ``(None, why not)``."""
    try:
        import torch
    except ImportError as e:
        return None, f"torch is not installed ({e})"
    if not torch.cuda.is_available():
        return None, f"torch {torch.__version__} sees no CUDA device"
    # NOTE: TF32 would make torch's float32 matmuls faster and less exact than ours (CuPy uses
    # TF32 only when CUPY_TF32=1): compare full float32 with full float32.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch, ""


def _cuda_version(v: int) -> str:
    return f"{v // 1000}.{v % 1000 // 10}"


def _driver_version() -> str:
    try:
        proc = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30)
        return proc.stdout.strip().splitlines()[0] if proc.returncode == 0 else "unknown"
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def start(name: str, require_gpu: bool) -> tuple[Any, dict[str, Any]] | int:
    """A GPU benchmark's start: ``(torch, env)`` with a GPU and PyTorch CUDA; else, after saying
    why, the exit code (``EXIT_NO_GPU`` with ``require_gpu``, else 0)."""
    why = gpu_status()
    torch, why_torch = (None, "") if why else load_torch()
    if why or torch is None:
        log(f"{name}: no GPU measurement: {why or why_torch}")
        return EXIT_NO_GPU if require_gpu else 0
    return torch, gpu_env(torch)


def gpu_env(torch: Any) -> dict[str, Any]:
    """The device and the software versions that every JSON line carries."""
    import cupy as cp

    rt = cp.cuda.runtime
    dev = cp.cuda.Device()
    props = rt.getDeviceProperties(dev.id)
    name = props["name"]
    try:
        host = bench_core.machine()
    except Exception:  # noqa: BLE001  (machine() wants torch's metadata; the host is a footnote)
        host = {}
    return {
        "gpu": name.decode() if isinstance(name, bytes) else str(name),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "sms": int(props["multiProcessorCount"]),
        "gpu_mem_gib": round(int(props["totalGlobalMem"]) / 2**30, 1),
        "driver": _driver_version(),
        "cuda_driver_api": _cuda_version(rt.driverGetVersion()),
        "cuda_runtime": _cuda_version(rt.runtimeGetVersion()),
        "cupy": cp.__version__,
        "torch": getattr(torch, "__version__", None),
        "torch_cuda": getattr(getattr(torch, "version", None), "cuda", None),
        "cpu": host.get("cpu"), "python": host.get("python"), "numpy": host.get("numpy"),
        "commit": bench_core.git_commit(),
    }


# ---- timing and checking --------------------------------------------------------------------

class EventTimer:
    """Milliseconds per call of ``fn``, from CUDA events around ``inner`` back-to-back calls.

    NOTE: a batch of calls hides the host-side launch cost of every call but the first behind
    the kernels still running, which is what a large-array benchmark should measure.
    """

    def __init__(self, new_event: Callable[[], Any], elapsed_ms: Callable[[Any, Any], float]):
        self.new_event = new_event
        self.elapsed_ms = elapsed_ms

    def batch(self, fn: Callable[[], Any], inner: int) -> float:
        start, end = self.new_event(), self.new_event()
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        return float(self.elapsed_ms(start, end)) / inner


def cupy_timer() -> EventTimer:
    import cupy as cp

    return EventTimer(cp.cuda.Event, cp.cuda.get_elapsed_time)


def torch_timer(torch: Any) -> EventTimer:
    return EventTimer(lambda: torch.cuda.Event(enable_timing=True),
                      lambda start, end: start.elapsed_time(end))


def time_interleaved(fns: dict[str, tuple[Callable[[], Any], EventTimer]], reps: int,
                     inner: int, warmup: int = 3) -> dict[str, float]:
    """Median ms per call of each function; their batches take turns (clock drift hits all)."""
    for fn, _ in fns.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(reps):
        for name, (fn, timer) in fns.items():
            samples[name].append(timer.batch(fn, inner))
    return {k: statistics.median(v) for k, v in samples.items()}


def as_cupy(x: Any) -> Any:
    """A CuPy view of a CuPy array, a torch CUDA tensor or an autograd_gpu CUDA tensor."""
    import cupy as cp

    if isinstance(x, cp.ndarray):
        return x
    try:
        return cp.from_dlpack(x)
    except Exception:  # noqa: BLE001
        data = getattr(x, "_data", None)  # an autograd_gpu tensor's own array
        if isinstance(data, cp.ndarray):
            return data
        raise


def mismatch(got: Any, want: Any, rtol: float, atol: Any, float32: bool = True) -> str | None:
    """None when ``got`` matches the reference ``want`` (arrays, or tuples of arrays), else
    what differs. Floats must lie within ``atol + rtol*|want|`` (``atol`` may be an array, for
    sums: a multiple of the sum of magnitudes) and, with ``float32``, be float32; integers must
    be equal."""
    import cupy as cp

    if isinstance(want, tuple):
        got = tuple(got)
        if len(got) != len(want):
            return f"{len(got)} results, expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            m = mismatch(g, w, rtol, atol, float32)
            if m:
                return f"result {i}: {m}"
        return None
    g, w = as_cupy(got), as_cupy(want)
    if g.shape != w.shape:
        return f"shape {g.shape}, expected {w.shape}"
    if w.dtype.kind in "iub":
        if g.dtype != w.dtype:
            return f"dtype {g.dtype}, expected {w.dtype}"
        wrong = int((g != w).sum())
        return f"{wrong} of {w.size} values differ" if wrong else None
    if float32 and g.dtype != cp.float32:
        return f"dtype {g.dtype}, expected float32"
    g64, w64 = g.astype(cp.float64), w.astype(cp.float64)
    err = cp.abs(g64 - w64)
    # NOTE: NaN compares False, so it counts as bad; equal infinities (x/0 in both) match.
    bad = ~((err <= atol + rtol * cp.abs(w64)) | (g64 == w64))
    n_bad = int(bad.sum())
    if not n_bad:
        return None
    i = int(bad.ravel().nonzero()[0][0])
    return (f"{n_bad} of {w.size} values off (rtol {rtol:g}); first at flat index {i}: "
            f"{float(g64.ravel()[i]):.8g} vs {float(w64.ravel()[i]):.8g}")


# ---- section 1: kernel bandwidth ------------------------------------------------------------

@dataclass
class KernelCase:
    """One op at one shape: ours, its reference, CuPy's and torch's versions, bytes moved."""

    op: str
    kind: str                                 # "elementwise" or "reduction" (which aim)
    shape: tuple[int, ...]
    nbytes: int                               # the least an implementation must read + write
    ours: Callable[[], Any]
    want: Callable[[], Any]                   # the reference result (float64 where it helps)
    cupy: Callable[[], Any] | None
    cupy_builtin: bool                        # False: a plain CuPy expression of several kernels
    torch: Callable[[], Any] | None = None
    torch_want: Callable[[Any], Any] = lambda w: w  # the part of ``want`` torch returns
    rtol: float = 1e-5
    atol: Any = 1e-6
    api: str = "kernels"                      # "kernels" (cuda_kernels) or "Tensor" (public API)
    note: str = ""


def kernel_cases(log2n: int, torch: Any, ag: Any) -> list[KernelCase]:
    """Every case of section 1 on 2**log2n float32 elements (random normal inputs)."""
    import cupy as cp
    import cupyx.scipy.special as sp

    from autograd_gpu.backends import cuda_kernels as K

    f32, f64 = cp.float32, cp.float64
    n = 2**log2n
    side = 2 ** (log2n // 2)
    cols = min(1024, n)
    mat, rows = (n // side, side), n // cols  # (8192, 8192) and (65536, 1024) at 2^26
    cp.random.seed(0)
    x = cp.random.standard_normal(n, dtype=f32)
    y = cp.random.standard_normal(n, dtype=f32)
    g = cp.random.standard_normal(n, dtype=f32)
    cond = cp.random.standard_normal(n, dtype=f32) > 0
    bias = cp.random.standard_normal(side, dtype=f32)
    target = cp.random.randint(0, cols, size=rows).astype(cp.int64)
    grad_loss = cp.random.standard_normal(rows, dtype=f32)
    xm, sx, sg = x.reshape(mat), x.reshape(rows, cols), g.reshape(rows, cols)
    r = cp.arange(rows)
    x64 = x.astype(f64)

    def erf_cdf(v: Any) -> Any:
        return 0.5 * (1.0 + sp.erf(v * (1 / math.sqrt(2.0))))

    def gelu_grad(v: Any) -> Any:
        return erf_cdf(v) + v * cp.exp(-0.5 * v * v) * (1 / math.sqrt(2 * math.pi))

    def lse64(v: Any) -> Any:
        v = v.astype(f64)
        m = v.max(axis=1, keepdims=True)
        return (m + cp.log(cp.exp(v - m).sum(axis=1, keepdims=True)))[:, 0]

    saved = {"relu": cp.maximum(x, 0), "sigmoid": sp.expit(x), "tanh": cp.tanh(x)}
    softmax_out = sp.softmax(sx, axis=1).astype(f32)
    log_softmax_out = sp.log_softmax(sx, axis=1).astype(f32)
    lse = lse64(sx)
    lse32 = lse.astype(f32)

    t: dict[str, Any] = {}
    aten: Any = None
    tf: Any = None
    if torch is not None:
        t = {k: torch.from_dlpack(v) for k, v in dict(
            x=x, y=y, g=g, bias=bias, target=target, grad_loss=grad_loss, xm=xm,
            sx=sx, sg=sg, relu=saved["relu"], sigmoid=saved["sigmoid"], tanh=saved["tanh"],
            softmax_out=softmax_out, log_softmax_out=log_softmax_out).items()}
        # NOTE: bool goes through DLPack as uint8 (older CuPy exports no kDLBool), then a copy.
        t["cond"] = torch.from_dlpack(cond.view(cp.uint8)).bool()
        aten = torch.ops.aten
        tf = torch.nn.functional
        t["sx_req"] = t["sx"].detach().clone().requires_grad_(True)
        t["ce_loss"] = tf.cross_entropy(t["sx_req"], t["target"], reduction="none")

    def tfn(make: Callable[[], Any]) -> Callable[[], Any] | None:
        return make if torch is not None else None

    cases: list[KernelCase] = []
    ew, red = "elementwise", "reduction"
    shape1 = (n,)

    # unary forward: read x, write out
    unary = {
        "relu": (lambda: cp.maximum(x64, 0), lambda: cp.maximum(x, 0), True,
                 lambda: torch.relu(t["x"])),
        "exp": (lambda: cp.exp(x64), lambda: cp.exp(x), True, lambda: torch.exp(t["x"])),
        "sigmoid": (lambda: sp.expit(x64), lambda: sp.expit(x), True,
                    lambda: torch.sigmoid(t["x"])),
        "tanh": (lambda: cp.tanh(x64), lambda: cp.tanh(x), True, lambda: torch.tanh(t["x"])),
        "gelu": (lambda: x64 * erf_cdf(x64), lambda: x * erf_cdf(x), False,
                 lambda: tf.gelu(t["x"])),
        "silu": (lambda: x64 * sp.expit(x64), lambda: x * sp.expit(x), False,
                 lambda: tf.silu(t["x"])),
    }
    for op, (want, ref, builtin, tor) in unary.items():
        cases.append(KernelCase(op, ew, shape1, 8 * n, lambda op=op: K.unary(op, x), want, ref,
                                builtin, tfn(tor), rtol=2e-5))

    # unary backward: read saved and grad, write grad_x
    def sv(op: str) -> Any:
        return saved[op].astype(f64)

    backward = {
        "relu": (lambda: g.astype(f64) * (sv("relu") > 0), lambda: g * (saved["relu"] > 0),
                 lambda: aten.threshold_backward(t["g"], t["relu"], 0)),
        "sigmoid": (lambda: g.astype(f64) * sv("sigmoid") * (1 - sv("sigmoid")),
                    lambda: g * saved["sigmoid"] * (1 - saved["sigmoid"]),
                    lambda: aten.sigmoid_backward(t["g"], t["sigmoid"])),
        "tanh": (lambda: g.astype(f64) * (1 - sv("tanh") ** 2),
                 lambda: g * (1 - saved["tanh"] * saved["tanh"]),
                 lambda: aten.tanh_backward(t["g"], t["tanh"])),
        "gelu": (lambda: g.astype(f64) * gelu_grad(x64), lambda: g * gelu_grad(x),
                 lambda: aten.gelu_backward(t["g"], t["x"])),
        "silu": (lambda: g.astype(f64) * sp.expit(x64) * (1 + x64 * (1 - sp.expit(x64))),
                 lambda: g * sp.expit(x) * (1 + x * (1 - sp.expit(x))),
                 lambda: aten.silu_backward(t["g"], t["x"])),
    }
    for op, (want, ref, tor) in backward.items():
        arg = x if K.UNARY_BACKWARD_OPS.get(op) == "x" else saved.get(op, x)
        cases.append(KernelCase(f"{op}_backward", ew, shape1, 12 * n,
                                lambda op=op, arg=arg: K.unary_backward(op, arg, g), want, ref,
                                False, tfn(tor), rtol=2e-5,
                                note=f"saves {K.UNARY_BACKWARD_OPS.get(op, '?')}"))

    # binary: read x and y, write out
    y64 = y.astype(f64)
    binary = {"add": (cp.add, torch.add if torch else None),
              "mul": (cp.multiply, torch.mul if torch else None),
              "div": (cp.divide, torch.div if torch else None),
              "maximum": (cp.maximum, torch.maximum if torch else None)}
    for op, (fn, tor) in binary.items():
        cases.append(KernelCase(op, ew, shape1, 12 * n, lambda op=op: K.binary(op, x, y),
                                lambda fn=fn: fn(x64, y64), lambda fn=fn: fn(x, y), True,
                                tfn(lambda tor=tor: tor(t["x"], t["y"])), rtol=1e-6, atol=0.0))
    cases.append(KernelCase(
        "add (row vector broadcast)", ew, mat, 8 * n + 4 * side, lambda: K.binary("add", xm, bias),
        lambda: xm.astype(f64) + bias.astype(f64), lambda: xm + bias, True,
        tfn(lambda: t["xm"] + t["bias"]), rtol=1e-6, atol=0.0))
    cases.append(KernelCase(
        "where", ew, shape1, 13 * n, lambda: K.where(cond, x, y), lambda: cp.where(cond, x, y),
        lambda: cp.where(cond, x, y), True, tfn(lambda: torch.where(t["cond"], t["x"], t["y"])),
        rtol=0.0, atol=0.0))

    # reductions: read the input once, write the (small) result
    abs_m = cp.abs(xm.astype(f64))
    cases += [
        KernelCase("sum (all)", red, shape1, 4 * n, lambda: K.reduce("sum", x),
                   lambda: x64.sum(), lambda: x.sum(), True, tfn(lambda: t["x"].sum()),
                   rtol=0.0, atol=1e-5 * float(cp.abs(x64).sum())),
        KernelCase("sum (last dim)", red, mat, 4 * n + 4 * mat[0],
                   lambda: K.reduce("sum", xm, axis=1), lambda: xm.astype(f64).sum(axis=1),
                   lambda: xm.sum(axis=1), True, tfn(lambda: t["xm"].sum(1)),
                   rtol=0.0, atol=1e-5 * abs_m.sum(axis=1)),
        KernelCase("sum (first dim)", red, mat, 4 * n + 4 * side,
                   lambda: K.reduce("sum", xm, axis=0), lambda: xm.astype(f64).sum(axis=0),
                   lambda: xm.sum(axis=0), True, tfn(lambda: t["xm"].sum(0)),
                   rtol=0.0, atol=1e-5 * abs_m.sum(axis=0)),
        KernelCase("max with indices (last dim)", red, mat, 4 * n + 12 * mat[0],
                   lambda: K.arg_reduce("max", xm, 1), lambda: (xm.max(axis=1), xm.argmax(axis=1)),
                   lambda: (xm.max(axis=1), xm.argmax(axis=1)), False,
                   tfn(lambda: torch.max(t["xm"], dim=1)), rtol=0.0, atol=0.0),
        KernelCase("logsumexp (last dim)", red, mat, 4 * n + 4 * mat[0],
                   lambda: K.logsumexp(xm, 1), lambda: lse64(xm),
                   lambda: sp.logsumexp(xm, axis=1), True,
                   tfn(lambda: torch.logsumexp(t["xm"], 1)), rtol=1e-5, atol=1e-5),
    ]

    # softmax family over rows of length 1024
    sm64, lsm64, sg64 = softmax_out.astype(f64), log_softmax_out.astype(f64), sg.astype(f64)
    onehot = cp.zeros((rows, cols), f64)
    onehot[r, target] = 1.0

    def ce_expr() -> tuple[Any, Any]:
        lse_rows = sp.logsumexp(sx, axis=1)
        return lse_rows - sx[r, target], lse_rows

    def ce_backward_expr() -> Any:
        p = cp.exp(sx - lse32[:, None])
        p[r, target] -= 1
        p *= grad_loss[:, None]
        return p

    cases += [
        KernelCase("softmax", red, (rows, cols), 8 * n, lambda: K.softmax(sx, 1),
                   lambda: cp.exp(sx.astype(f64) - lse[:, None]), lambda: sp.softmax(sx, axis=1),
                   True, tfn(lambda: torch.softmax(t["sx"], 1)), rtol=1e-5, atol=1e-8),
        KernelCase("log_softmax", red, (rows, cols), 8 * n, lambda: K.log_softmax(sx, 1),
                   lambda: sx.astype(f64) - lse[:, None], lambda: sp.log_softmax(sx, axis=1),
                   True, tfn(lambda: torch.log_softmax(t["sx"], 1)), rtol=1e-5, atol=1e-5),
        KernelCase("softmax_backward", red, (rows, cols), 12 * n,
                   lambda: K.softmax_backward(softmax_out, sg, 1),
                   lambda: sm64 * (sg64 - (sg64 * sm64).sum(axis=1, keepdims=True)),
                   lambda: softmax_out * (sg - (sg * softmax_out).sum(axis=1, keepdims=True)),
                   False, tfn(lambda: aten._softmax_backward_data(
                       t["sg"], t["softmax_out"], 1, torch.float32)), rtol=1e-4, atol=1e-7),
        KernelCase("log_softmax_backward", red, (rows, cols), 12 * n,
                   lambda: K.log_softmax_backward(log_softmax_out, sg, 1),
                   lambda: sg64 - cp.exp(lsm64) * sg64.sum(axis=1, keepdims=True),
                   lambda: sg - cp.exp(log_softmax_out) * sg.sum(axis=1, keepdims=True),
                   False, tfn(lambda: aten._log_softmax_backward_data(
                       t["sg"], t["log_softmax_out"], 1, torch.float32)), rtol=1e-4, atol=1e-5),
        KernelCase("cross_entropy", red, (rows, cols), 4 * n + 16 * rows,
                   lambda: K.cross_entropy(sx, target),
                   lambda: (lse - sx.astype(f64)[r, target], lse),
                   ce_expr, False, tfn(lambda: tf.cross_entropy(t["sx"], t["target"], reduction="none")),
                   torch_want=lambda w: w[0], rtol=1e-5, atol=1e-5,
                   note="returns (loss, lse); torch: loss only"),
        KernelCase("cross_entropy_backward", red, (rows, cols), 8 * n + 16 * rows,
                   lambda: K.cross_entropy_backward(sx, target, lse32, grad_loss),
                   lambda: (cp.exp(sx.astype(f64) - lse[:, None]) - onehot)
                   * grad_loss.astype(f64)[:, None],
                   ce_backward_expr, False,
                   tfn(lambda: torch.autograd.grad(t["ce_loss"], t["sx_req"], t["grad_loss"],
                                                   retain_graph=True)[0]),
                   rtol=1e-4, atol=1e-6, note="torch: autograd.grad of cross_entropy"),
    ]

    # the same work through the public Tensor API (autograd_gpu CUDA tensors on the same memory)
    if ag is not None:
        a = {k: ag.from_dlpack(v) for k, v in (("x", x), ("y", y), ("sx", sx))}
        cases += [
            KernelCase("relu", ew, shape1, 8 * n, lambda: a["x"].relu(),
                       lambda: cp.maximum(x64, 0), lambda: cp.maximum(x, 0), True,
                       tfn(lambda: t["x"].relu()), api="Tensor", note="Tensor.relu()"),
            KernelCase("add", ew, shape1, 12 * n, lambda: a["x"] + a["y"], lambda: x64 + y64,
                       lambda: x + y, True, tfn(lambda: t["x"] + t["y"]), rtol=1e-6, atol=0.0,
                       api="Tensor", note="a + b"),
            KernelCase("sum (all)", red, shape1, 4 * n, lambda: a["x"].sum(), lambda: x64.sum(),
                       lambda: x.sum(), True, tfn(lambda: t["x"].sum()), rtol=0.0,
                       atol=1e-5 * float(cp.abs(x64).sum()), api="Tensor", note="Tensor.sum()"),
            KernelCase("softmax", red, (rows, cols), 8 * n,
                       lambda: ag.nn.functional.softmax(a["sx"], dim=-1),
                       lambda: cp.exp(sx.astype(f64) - lse[:, None]),
                       lambda: sp.softmax(sx, axis=1), True,
                       tfn(lambda: torch.softmax(t["sx"], -1)), rtol=1e-5, atol=1e-8,
                       api="Tensor", note="F.softmax(x, dim=-1)"),
        ]
    return cases


def copy_bandwidth(log2n: int, torch: Any, reps: int, inner: int,
                   warm_s: float = 0.5) -> dict[str, float]:
    """GB/s (bytes read + written) of device-to-device copies of 2**log2n float32 elements."""
    import cupy as cp

    n = 2**log2n
    x = cp.random.standard_normal(n, dtype=cp.float32)
    out = cp.empty_like(x)
    kind = getattr(cp.cuda.runtime, "memcpyDeviceToDevice", 3)

    def assign() -> None:
        out[...] = x

    def memcpy() -> None:
        cp.cuda.runtime.memcpyAsync(out.data.ptr, x.data.ptr, x.nbytes, kind,
                                    cp.cuda.get_current_stream().ptr)

    # NOTE: the first timings run while the GPU clocks ramp up from idle: keep it busy first.
    deadline = time.perf_counter() + warm_s
    while time.perf_counter() < deadline:
        for _ in range(20):
            assign()
        cp.cuda.Device().synchronize()
    timer = cupy_timer()
    fns: dict[str, tuple[Callable[[], Any], EventTimer]] = {
        "cupy y[...] = x": (assign, timer), "cudaMemcpyAsync D2D": (memcpy, timer)}
    if torch is not None:
        tx, tout = torch.from_dlpack(x), torch.from_dlpack(out)
        fns["torch y.copy_(x)"] = (lambda: tout.copy_(tx), torch_timer(torch))
    ms = time_interleaved(fns, reps, inner)
    return {k: 8 * n / (v * 1e-3) / 1e9 for k, v in ms.items()}


def run_kernels(args: argparse.Namespace, torch: Any, ag: Any,
                emit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Section 1. Returns ``{"copy": {...}, "rows": [...], "failures": [...]}``."""
    import cupy as cp

    try:
        copies = copy_bandwidth(args.log2n, torch, args.reps, args.inner,
                                0.1 if args.quick else 0.5)
        cases = kernel_cases(args.log2n, torch, ag)
    except Exception as e:  # noqa: BLE001  (no launchers, no memory: nothing to time)
        msg = f"kernels: setup failed: {type(e).__name__}: {e}"[:500]
        log(msg)
        return {"copy": {}, "copy_gbps": 0.0, "rows": [], "failures": [msg]}
    copy_gbs = max(copies.values())
    emit({"section": "kernels", "op": "copy", "shape": [2**args.log2n], "dtype": "float32",
          "gbps": {k: round(v, 1) for k, v in copies.items()}, "copy_gbps": round(copy_gbs, 1)})
    log(f"copy bandwidth: {copy_gbs:.0f} GB/s (best of {', '.join(copies)})")
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    for case in cases:
        label = f"{case.op} [{case.api}]"
        row: dict[str, Any] = {"section": "kernels", "op": case.op, "api": case.api,
                               "kind": case.kind, "shape": list(case.shape), "dtype": "float32",
                               "bytes": case.nbytes, "cupy_builtin": case.cupy_builtin,
                               "note": case.note, "copy_gbps": round(copy_gbs, 1)}
        try:
            want = case.want()
            bad = mismatch(case.ours(), want, case.rtol, case.atol)
            if bad:
                raise AssertionError(f"ours disagrees with the reference: {bad}")
            fns = {"ours": (case.ours, cupy_timer())}
            for name, fn, timer, expect in (
                    ("cupy", case.cupy, cupy_timer(), want),
                    ("torch", case.torch, torch_timer(torch) if torch else None,
                     case.torch_want(want))):
                if fn is None or timer is None:
                    continue
                try:
                    other = mismatch(fn(), expect, case.rtol, case.atol, float32=False)
                except Exception as e:  # noqa: BLE001  (their failure: an empty column)
                    other = f"{type(e).__name__}: {e}"
                if other:
                    row[f"{name}_error"] = other[:300]
                    log(f"  {label}: {name} not timed: {other[:200]}")
                else:
                    fns[name] = (fn, timer)
            del want
            ms = time_interleaved(fns, args.reps, args.inner)
            for name, v in ms.items():
                row[f"{name}_ms"] = round(v, 5)
                row[f"{name}_gbps"] = round(case.nbytes / (v * 1e-3) / 1e9, 1)
            row["ours_pct_of_copy"] = round(100 * row["ours_gbps"] / copy_gbs, 1)
            row["aim_pct_of_copy"] = round(100 * AIM_BANDWIDTH[case.kind])
            row["meets_aim"] = row["ours_gbps"] >= AIM_BANDWIDTH[case.kind] * copy_gbs
            log(f"  {label:44s} {row['ours_gbps']:7.0f} GB/s ({row['ours_pct_of_copy']:.0f}% of "
                f"copy)")
        except Exception as e:  # noqa: BLE001  (report it, go on with the next op)
            row["error"] = f"{type(e).__name__}: {e}"[:500]
            failures.append(f"{label}: {row['error']}")
            log(f"  {label}: FAILED {row['error']}")
        emit(row)
        rows.append(row)
    cp.get_default_memory_pool().free_all_blocks()
    if torch is not None:
        torch.cuda.empty_cache()
    return {"copy": copies, "copy_gbps": copy_gbs, "rows": rows, "failures": failures}


# ---- section 2: small-op latency ------------------------------------------------------------

def _latency_op(m: Any, op: str, a: Any, b: Any) -> Any:
    if op == "add":
        return a + b
    if op == "mul":
        return a * b
    if op == "relu":
        return m.relu(a)
    return a.sum()


def _latency_loop(m: Any, op: str, size: int, mode: str) -> tuple[Callable[[int], None],
                                                                    Callable[[], list[Any]]]:
    """``(loop(n), results())`` for one library; the same source serves both (only ``m``
    differs). ``results`` runs the op once and returns the output and gradients on the host."""
    import numpy as np

    rng = np.random.default_rng(size)
    needs_grad = mode == "fwd_bwd"
    a, b = (m.tensor(rng.standard_normal(size, dtype=np.float32), device=DEVICE,
                     requires_grad=needs_grad) for _ in range(2))
    ones = None if op == "sum" else m.ones(size, device=DEVICE)

    def once() -> Any:
        if not needs_grad:
            return _latency_op(m, op, a, b)
        a.grad = None
        b.grad = None
        out = _latency_op(m, op, a, b)
        out.backward(ones)
        return out

    def loop(n: int) -> None:
        for _ in range(n):
            once()

    def results() -> list[Any]:
        out = once()
        grads = [t.grad for t in (a, b)] if needs_grad else []
        return [v.detach().cpu().numpy() for v in (out, *grads) if v is not None]

    return loop, results


def run_latency(args: argparse.Namespace, torch: Any, ag: Any,
                emit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Section 2: microseconds per op (wall clock, one synchronize per batch)."""
    import numpy as np

    libs = {"ours": (ag, ag.cuda.synchronize)}
    if torch is not None:
        libs["torch"] = (torch, torch.cuda.synchronize)
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    for mode in ("fwd", "fwd_bwd"):
        for size in LATENCY_SIZES:
            for op in LATENCY_OPS:
                row: dict[str, Any] = {"section": "latency", "op": op, "shape": [size],
                                       "mode": mode, "dtype": "float32"}
                try:
                    loops = {k: _latency_loop(m, op, size, mode) for k, (m, _) in libs.items()}
                    if "torch" in loops:
                        ours, theirs = loops["ours"][1](), loops["torch"][1]()
                        if len(ours) != len(theirs):
                            raise AssertionError(f"{len(ours)} results against {len(theirs)}")
                        for o, t in zip(ours, theirs):
                            np.testing.assert_allclose(o, t, rtol=1e-6, atol=1e-6)
                    times = _wall_interleaved(
                        {k: (loop, libs[k][1]) for k, (loop, _) in loops.items()},
                        args.latency_batch_s, args.batches)
                    for k, v in times.items():
                        row[f"{k}_us"] = round(statistics.median(v) * 1e6, 2)
                        row[f"{k}_min_us"] = round(min(v) * 1e6, 2)
                    if "torch_us" in row:
                        row["ratio_vs_torch"] = round(row["ours_us"] / row["torch_us"], 3)
                        row["meets_aim"] = row["ratio_vs_torch"] <= AIM_LATENCY
                    log(f"  {op} {mode} ({size},): ours {row['ours_us']:.1f} us, torch "
                        f"{row.get('torch_us', float('nan')):.1f} us")
                except Exception as e:  # noqa: BLE001
                    row["error"] = f"{type(e).__name__}: {e}"[:500]
                    failures.append(f"latency {op} {mode} ({size},): {row['error']}")
                    log(f"  {op} {mode} ({size},): FAILED {row['error']}")
                emit(row)
                rows.append(row)
    return {"rows": rows, "failures": failures}


def _wall_interleaved(loops: dict[str, tuple[Callable[[int], None], Callable[[], None]]],
                      batch_s: float, batches: int) -> dict[str, list[float]]:
    """Seconds per iteration of each ``loop(n)``, one batch each in turn; ``n`` is calibrated
    per library so that a batch takes about ``batch_s``."""
    def timed(loop: Callable[[int], None], sync: Callable[[], None], n: int) -> float:
        sync()
        t0 = time.perf_counter()
        loop(n)
        sync()
        return time.perf_counter() - t0

    iters = {}
    for name, (loop, sync) in loops.items():
        timed(loop, sync, 3)  # warm-up (and kernel compiles)
        n = 1
        while (dt := timed(loop, sync, n)) < batch_s and n < 10**6:
            n = max(n + 1, int(n * min(10.0, 1.2 * batch_s / max(dt, 1e-9))))
        iters[name] = n
    out: dict[str, list[float]] = {k: [] for k in loops}
    for _ in range(batches):
        for name, (loop, sync) in loops.items():
            out[name].append(timed(loop, sync, iters[name]) / iters[name])
    return out


# ---- section 3: MLP training step -----------------------------------------------------------

def _mlp_step(m: Any, batch: int) -> tuple[Any, Callable[[], Any]]:
    """An MLP 784-256-256-10 on CUDA with fixed random data and SGD: ``(model, step)``."""
    from bench_mlp import step_workload

    return step_workload(m, DEVICE, batch, seed=batch, sizes=MLP_SIZES)


def run_mlp(args: argparse.Namespace, torch: Any, ag: Any,
            emit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Section 3: milliseconds per training step (the first steps' losses checked first)."""
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    for batch in MLP_BATCHES:
        row: dict[str, Any] = {"section": "mlp", "op": "mlp_sgd_step", "dtype": "float32",
                               "shape": [batch, *MLP_SIZES], "batch": batch}
        try:
            ag.manual_seed(0)
            amodel, astep = _mlp_step(ag, batch)
            steps: dict[str, Callable[[], Any]] = {"ours": astep}
            syncs: dict[str, Callable[[], None]] = {"ours": ag.cuda.synchronize}
            if torch is not None:
                torch.manual_seed(0)
                tmodel, tstep = _mlp_step(torch, batch)
                with ag.no_grad():
                    for p, q in zip(tmodel.parameters(), amodel.parameters()):
                        q.copy_(ag.tensor(p.detach().cpu().numpy(), device=DEVICE))
                losses = [(float(astep().item()), float(tstep().item())) for _ in range(3)]
                row["first_losses"] = [[round(a, 6), round(b, 6)] for a, b in losses]
                # NOTE: same weights and data, both full float32 (TF32 off): only the summation
                # order inside cuBLAS and the kernels differs, a few ulps per step.
                if any(abs(a - b) > 1e-4 * max(abs(b), 1.0) for a, b in losses):
                    raise AssertionError(f"first losses differ (ours, torch): {losses}")
                steps["torch"], syncs["torch"] = tstep, torch.cuda.synchronize

            def loop_of(step: Callable[[], Any]) -> Callable[[int], None]:
                def loop(n: int) -> None:
                    for _ in range(n):
                        step()
                return loop

            times = _wall_interleaved({k: (loop_of(s), syncs[k]) for k, s in steps.items()},
                                      args.mlp_batch_s, args.batches)
            for k, v in times.items():
                row[f"{k}_ms"] = round(statistics.median(v) * 1e3, 4)
            if "torch_ms" in row:
                row["ratio_vs_torch"] = round(row["ours_ms"] / row["torch_ms"], 3)
                row["meets_aim"] = row["ratio_vs_torch"] <= AIM_MLP
            log(f"  MLP batch {batch}: ours {row['ours_ms']:.3f} ms, torch "
                f"{row.get('torch_ms', float('nan')):.3f} ms")
        except Exception as e:  # noqa: BLE001
            row["error"] = f"{type(e).__name__}: {e}"[:500]
            failures.append(f"mlp batch {batch}: {row['error']}")
            log(f"  MLP batch {batch}: FAILED {row['error']}")
        emit(row)
        rows.append(row)
    return {"rows": rows, "failures": failures}


# ---- the report -----------------------------------------------------------------------------

def _num(v: Any, fmt: str = ".0f") -> str:
    return "" if v is None else format(v, fmt)


def _ratio(a: Any, b: Any) -> str:
    return f"{a / b:.2f}" if a is not None and b else ""


def render_report(env: dict[str, Any], results: dict[str, Any], args: argparse.Namespace,
                  notes: list[str] | None = None, date: str | None = None) -> str:
    """The markdown section for RESULTS.md (it opens with ``HEADING``; subsections use ###)."""
    date = date or datetime.date.today().isoformat()
    torch_v = env.get("torch") or "not available"
    lines = [
        HEADING, "",
        f"GPU: {env['gpu']} (compute capability {env['compute_capability']}, {env['sms']} SMs, "
        f"{env['gpu_mem_gib']} GiB); driver {env['driver']} (CUDA {env['cuda_driver_api']}); "
        f"CUDA runtime {env['cuda_runtime']}; CuPy {env['cupy']}; PyTorch {torch_v}"
        f"{' (CUDA ' + str(env['torch_cuda']) + ')' if env.get('torch_cuda') else ''}.  ",
        f"Date: {date}; commit {env['commit']}; `python bench/bench_gpu.py"
        f"{' --quick' if args.quick else ''}` ({args.reps} batches of {args.inner} calls per "
        "kernel, median).",
    ]
    k = results.get("kernels")
    if k and k["rows"]:
        n = 2**args.log2n
        copies = ", ".join(f"{name} {v:.0f}" for name, v in k["copy"].items())
        lines += [
            "", "### Kernel bandwidth (float32)", "",
            f"GB/s = bytes the op must read and write / median time (CUDA events). Copy "
            f"bandwidth of {n:,} float32 (read + write): {copies} GB/s; the best, "
            f"{k['copy_gbps']:.0f} GB/s, is the 100% mark. CuPy column: its built-in function, "
            "or a plain CuPy expression (several kernels) marked \"expr\". Aims: elementwise "
            ">= 85% of copy, reductions (softmax and cross-entropy included) >= 80%.", "",
            "| op | via | shape | ours GB/s | % of copy | aim | CuPy GB/s | ours/CuPy time "
            "| torch GB/s | ours/torch time |",
            "|---|---|---|---:|---:|---|---:|---:|---:|---:|",
        ]
        for row in k["rows"]:
            via = "Tensor API" if row["api"] == "Tensor" else "cuda_kernels"
            shape = "x".join(str(s) for s in row["shape"])
            if "error" in row:
                lines.append(f"| {row['op']} | {via} | {shape} | FAILED | | | | | | |")
                continue
            met = "met" if row["meets_aim"] else "**not met**"
            cupy_label = _num(row.get("cupy_gbps"))
            if cupy_label and not row["cupy_builtin"]:
                cupy_label += " (expr)"
            lines.append(
                f"| {row['op']} | {via} | {shape} | {row['ours_gbps']:.0f} | "
                f"{row['ours_pct_of_copy']:.0f}% | >= {row['aim_pct_of_copy']}% {met} | "
                f"{cupy_label} | {_ratio(row['ours_ms'], row.get('cupy_ms'))} | "
                f"{_num(row.get('torch_gbps'))} | {_ratio(row['ours_ms'], row.get('torch_ms'))} |")
    lat = results.get("latency")
    if lat and lat["rows"]:
        lines += [
            "", "### Small-op latency (Tensor API)", "",
            "Microseconds per op, wall clock, median of batches with one synchronize per batch. "
            "fwd: inputs not requiring grad; fwd+bwd: `.grad = None`, the op, `backward()` "
            "(with a ones gradient for non-scalars). Aim: ours/torch <= 1.5.", "",
            "| op | size | mode | ours us | torch us | ours/torch | aim |",
            "|---|---:|---|---:|---:|---:|---|",
        ]
        for row in lat["rows"]:
            mode = "fwd+bwd" if row["mode"] == "fwd_bwd" else "fwd"
            if "error" in row:
                lines.append(f"| {row['op']} | {row['shape'][0]} | {mode} | FAILED | | | |")
                continue
            aim = "" if "meets_aim" not in row else ("met" if row["meets_aim"] else "**not met**")
            lines.append(f"| {row['op']} | {row['shape'][0]} | {mode} | {row['ours_us']:.1f} | "
                         f"{_num(row.get('torch_us'), '.1f')} | "
                         f"{_num(row.get('ratio_vs_torch'), '.2f')} | {aim} |")
    mlp = results.get("mlp")
    if mlp and mlp["rows"]:
        lines += [
            "", "### MLP training step", "",
            "MLP 784-256-256-10 (ReLU), cross-entropy, SGD lr 0.01, float32 (TF32 off in torch); "
            "ms per step, wall clock, median of batches. The first three steps from identical "
            "weights must give the same losses (rtol 1e-4). Aim: ours/torch <= 1.2.", "",
            "| batch | ours ms | torch ms | ours/torch | aim |", "|---:|---:|---:|---:|---|",
        ]
        for row in mlp["rows"]:
            if "error" in row:
                lines.append(f"| {row['batch']} | FAILED | | | |")
                continue
            aim = "" if "meets_aim" not in row else ("met" if row["meets_aim"] else "**not met**")
            lines.append(f"| {row['batch']} | {row['ours_ms']:.3f} | "
                         f"{_num(row.get('torch_ms'), '.3f')} | "
                         f"{_num(row.get('ratio_vs_torch'), '.2f')} | {aim} |")
    failures = [f for part in results.values() for f in part["failures"]]
    if failures or notes:
        lines += ["", "### Failures and notes", ""]
        lines += [f"- {f}" for f in failures + (notes or [])]
    return "\n".join(lines) + "\n"


# ---- JUnit summary (used by gpu_check.sh) ---------------------------------------------------

def junit_summary(path: str | Path) -> dict[str, Any]:
    """Counts of a pytest JUnit XML file, overall and for CUDA tests, with the failed ids and
    the CUDA skip reasons. A CUDA test has ``cuda`` as one of its ``-``-separated parameters
    (the ``device`` fixture's id) or ``cuda`` in its module or class name."""
    counts = {scope: dict.fromkeys(("passed", "failed", "error", "skipped"), 0)
              for scope in ("all", "cuda")}
    failed: list[str] = []
    cuda_skips: dict[str, int] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name, cls = case.get("name", ""), case.get("classname", "")
        params = name.partition("[")[2].rstrip("]").split("-")
        is_cuda = "cuda" in params or "cuda" in cls
        tags = {child.tag for child in case}
        status = ("failed" if "failure" in tags else "error" if "error" in tags
                  else "skipped" if "skipped" in tags else "passed")
        for scope in ("all", "cuda") if is_cuda else ("all",):
            counts[scope][status] += 1
        if status in ("failed", "error"):
            failed.append(f"{cls}::{name}")
        if status == "skipped" and is_cuda:
            skip = case.find("skipped")
            reason = (skip.get("message") if skip is not None else None) or "no reason"
            cuda_skips[reason] = cuda_skips.get(reason, 0) + 1
    # NOTE: a CUDA failure whose CPU twin (the same id with ``cpu``) did not fail is the GPU's;
    # where both fail it is the test or the oracle (the GPU image's torch is not the pinned one)
    failed_set = set(failed)
    gpu_only = [f for f in failed if "[cuda" in f and f.replace("[cuda", "[cpu") not in failed_set]
    # NOTE: tests without a device parameter run on the default device, the GPU where there is
    # one (the train command's), or compare with the image's PyTorch: read each of these
    untwinned = [f for f in failed if "cuda" not in f and "cpu" not in f]
    return {"counts": counts, "failed": failed, "cuda_skip_reasons": cuda_skips,
            "gpu_only": gpu_only, "untwinned": untwinned}


def format_junit_summary(summary: dict[str, Any], limit: int = 40) -> str:
    c = summary["counts"]
    lines = [f"{scope}: " + ", ".join(f"{v} {k}" for k, v in c[scope].items())
             for scope in ("all", "cuda")]
    gpu_only = summary.get("gpu_only", [])
    lines.append(f"failed on CUDA only (the CPU twin passed): {len(gpu_only)}")  # NOTE: fix first
    lines += [f"  {f}" for f in gpu_only[:limit]]
    untwinned = summary.get("untwinned", [])
    lines.append(f"failed without a device parameter (no twin; read each): {len(untwinned)}")
    lines += [f"  {f}" for f in untwinned[:limit]]
    if summary["failed"]:
        lines.append(f"failed or errored ({len(summary['failed'])}):")
        lines += [f"  {f}" for f in summary["failed"][:limit]]
        if len(summary["failed"]) > limit:
            lines.append(f"  ... and {len(summary['failed']) - limit} more")
    if summary["cuda_skip_reasons"]:
        lines.append("CUDA tests skipped, by reason (they should run on a GPU):")
        lines += [f"  {n} x {r}" for r, n in sorted(summary["cuda_skip_reasons"].items(),
                                                    key=lambda kv: -kv[1])[:limit]]
    return "\n".join(lines)


# ---- the driver -----------------------------------------------------------------------------

@dataclass
class Emitter:
    """Prints one JSON line per measurement, each carrying the environment."""

    env: dict[str, Any]
    lines: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, row: dict[str, Any]) -> None:
        record = {**row, "env": self.env}
        self.lines.append(record)
        print(json.dumps(record), flush=True)


def _sections(text: str) -> tuple[str, ...]:
    chosen = tuple(s.strip() for s in text.split(",") if s.strip())
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(
            f"unknown section(s) {unknown or text!r}; choose from {', '.join(SECTIONS)}")
    return chosen


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0],
                                 epilog="Exit status: 0 checks passed (or no GPU), 1 a check or "
                                        f"measurement failed, 2 bad arguments, {EXIT_NO_GPU} no "
                                        "GPU with --require-gpu.")
    ap.add_argument("--only", type=_sections, default=SECTIONS, metavar="SECTIONS",
                    help=f"comma-separated subset of {','.join(SECTIONS)} (default: all)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, shorter batches")
    ap.add_argument("--log2n", type=int, default=26, choices=range(10, 28), metavar="K",
                    help="kernel section size: 2**K float32 elements (default 26; 10..27)")
    ap.add_argument("--reps", type=int, default=None, help="timed batches per kernel")
    ap.add_argument("--write", action="store_true",
                    help=f"refresh the '{HEADING}' section of bench/RESULTS.md (only after a "
                         "GPU run)")
    ap.add_argument("--report", metavar="FILE.md", help="also write the markdown report here")
    ap.add_argument("--require-gpu", action="store_true",
                    help=f"exit {EXIT_NO_GPU} (skipped) instead of 0 when there is no CUDA GPU")
    ap.add_argument("--junit-summary", metavar="JUNIT.xml", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.reps is not None and args.reps < 1:
        ap.error(f"--reps must be >= 1, got {args.reps}")
    args.reps = args.reps or (5 if args.quick else 15)
    args.inner = 3 if args.quick else 10
    args.batches = 3 if args.quick else 7
    args.latency_batch_s = 0.005 if args.quick else 0.02
    args.mlp_batch_s = 0.02 if args.quick else 0.1
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.junit_summary:
        print(format_junit_summary(junit_summary(args.junit_summary)))
        return 0
    why = gpu_status()
    if why is not None:
        log(f"bench_gpu: no CUDA GPU here: {why}. Nothing was measured and "
            f"{bench_core.RESULTS.name} was not touched.")
        return EXIT_NO_GPU if args.require_gpu else 0

    torch, torch_why = load_torch()
    if torch is None:
        log(f"bench_gpu: {torch_why}; the torch columns stay empty")
    import autograd_gpu as ag

    ag_ok = ag.cuda.is_available()
    env = gpu_env(torch)
    log(f"bench_gpu on {env['gpu']}, driver {env['driver']}, CUDA {env['cuda_runtime']}, CuPy "
        f"{env['cupy']}, torch {env['torch']}, commit {env['commit']}")
    emit = Emitter(env)
    results: dict[str, Any] = {}
    notes: list[str] = []
    if torch is None:
        notes.append(f"torch columns empty: {torch_why}")
    if not ag_ok:
        notes.append("autograd_gpu reports CUDA unavailable (ag.cuda.is_available() is False): "
                     "the kernel table has no Tensor API rows")
    for section in args.only:
        log(f"== {section}")
        if section == "kernels":
            results["kernels"] = run_kernels(args, torch, ag if ag_ok else None, emit)
        elif not ag_ok:
            results[section] = {"rows": [], "failures": [
                f"{section}: autograd_gpu cannot make CUDA tensors (ag.cuda.is_available() "
                "is False)"]}
        elif section == "latency":
            results["latency"] = run_latency(args, torch, ag, emit)
        else:
            results["mlp"] = run_mlp(args, torch, ag, emit)
    report = render_report(env, results, args, notes)
    log("\n" + report)
    if args.report:
        Path(args.report).write_text(report)
    if args.write:
        bench_core.write_section(HEADING, report)
        log(f"wrote the '{HEADING}' section of {bench_core.RESULTS}")
    failures = [f for part in results.values() for f in part["failures"]]
    if failures:
        log(f"bench_gpu: {len(failures)} failure(s):\n  " + "\n  ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
