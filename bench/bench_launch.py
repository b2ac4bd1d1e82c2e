"""Our own host time per CUDA op (issue #18 item 4), measured on the NumPy stand-in for CuPy.

On a GPU a small op costs the host time of the Python that issues it: our dispatch, our launch
path (the CuPy backend, ``backends/cuda_kernels.py`` and friends) and CuPy's own launch. This
script measures the first two without a GPU. It runs the CUDA code path on ``tests/fake_cupy``
(the NumPy stand-in of ``AUTOGRAD_GPU_FAKE_CUDA=1``) with our kernels ON, as on a GPU, each
RawKernel launch a no-op (a GPU launch is asynchronous: the host pays CuPy's launch call, which
is not ours), and takes the stand-in's own time out by running it twice:

- ``total``: CPU time per op (process time: other work on a busy machine is not in it), best
  of ``--batches`` batches, in a process with nothing added.
- ``stand-in``: in a second process every call our code makes into the stand-in (its functions,
  its ``ndarray``'s methods, operators and emulated attributes such as ``flags`` and ``data``,
  its memory pool, the no-op kernels) goes through a wrapper that can run the call twice; the
  CPU time that the second run adds, batches with and without it taking turns, is the
  stand-in's time (array math, Python emulation, allocation and freeing). Our allocator hook
  (``cupy_backend``'s, which the stand-in's allocation calls) runs inside it: its own time,
  measured alone the same way, goes back to ours.
- ``ours`` = ``total`` - ``stand-in`` - the loop's own cost (an empty lambda), split into the
  ``launch path`` (the CuPy backend's entries and what they call: the launchers, the allocator
  hook; measured by running each top-level backend call twice, less the stand-in inside them)
  and ``dispatch`` (the rest: Tensor API and autograd, issue #18 item 1).

The fake ndarray's plain attributes (``shape``, ``dtype``, ``strides``, ...: a property
returning NumPy's attribute, about what CuPy's Cython property costs) count as ours. ``kernels``
counts our kernel launches per op, ``allocs`` device allocations (CuPy's own functions, e.g. the
matmul, or array operators a backward applies to raw arrays, launch kernels not counted here).

What it says nothing about: GPU time, CuPy's launch cost (per argument, in Cython), the
stand-in's speed against CuPy's. ``bench/bench_gpu.py``'s latency section measures whole ops
against PyTorch CUDA on a GPU.

Usage:
    python bench/bench_launch.py            # the table (markdown) on stdout
    python bench/bench_launch.py --quick    # fewer, shorter batches
    python bench/bench_launch.py --json     # one JSON line per op as well
    python bench/bench_launch.py --baseline /tmp/base   # 'before -> now' against another
                                            # checkout (git archive main | tar -x -C /tmp/base)
    python bench/bench_launch.py --kernels off   # CuPy's functions (AUTOGRAD_GPU_KERNELS=0)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

SIZE = 256  # elements of the elementwise operands (bench_gpu.py's small latency size)
MATMUL = (32, 64, 32)  # x (m, k) @ w (k, n)
OPS = ("mul", "add", "mul_scalar", "sum", "relu", "matmul", "mul_recorded", "fwd_bwd", "add_")
LABELS = {
    "mul": "a * b", "add": "a + b", "mul_scalar": "a * 2.0", "sum": "a.sum()",
    "relu": "relu(a)", "matmul": "x @ w (32x64 @ 64x32)",
    "mul_recorded": "a * b, requires_grad (recorded)",
    "fwd_bwd": "(a * b + c).sum().backward()", "add_": "a.add_(b) (in place)",
}
# The fake ndarray's attributes that cost about what CuPy's do: they count as ours.
CHEAP_ATTRIBUTES = frozenset(("shape", "dtype", "ndim", "size", "itemsize", "nbytes", "strides",
                              "base"))
_NEVER = frozenset(("__init__", "__new__", "__del__", "__getattr__", "__class_getitem__",
                    "__init_subclass__", "__repr__", "__str__"))
# Backend attributes that are not array work (error-state tokens, type objects' helpers).
_NOT_BACKEND_WORK = frozenset(("quiet_fp", "restore_fp", "errstate"))
BATCH_SECONDS = 0.02  # CPU time a timed batch aims at


# ---- the stand-in: fake CuPy with no-op kernels --------------------------------------------

class _NullKernel:
    """A RawKernel whose launch does nothing (counted)."""

    calls = [0]

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, grid: Any, block: Any, args: Any, **kwargs: Any) -> None:
        _NullKernel.calls[0] += 1


class _NullModule:
    """``cupy.RawModule`` compiling nothing: every name expression is a no-op kernel."""

    def __init__(self, code: str | None = None, *, options: Any = (), name_expressions: Any = (),
                 **kwargs: Any) -> None:
        self._names = set(name_expressions or ())

    def get_function(self, name: str) -> _NullKernel:
        if name not in self._names:
            raise KeyError(name)
        return _NullKernel(name)


def install_stand_in(kernels: bool, tree: Path) -> Any:
    """The fake CuPy of ``tree`` in ``sys.modules`` (before autograd_gpu's CuPy backend is
    imported); ``tree``'s autograd_gpu is the one imported."""
    sys.path.insert(0, str(tree))
    os.environ["AUTOGRAD_GPU_KERNELS"] = "1" if kernels else "0"
    from tests import fake_cupy

    fake_cupy.install()
    import cupy

    cupy.RawModule = _NullModule
    return cupy


# ---- running calls twice ---------------------------------------------------------------------

class _State:
    """``mode``: which top-level calls run twice: none (``single``), those into the stand-in
    (``standin``), those into the stand-in made inside a backend entry (``standin_in_backend``)
    or the backend entries (``backend``). Depths: inside a stand-in call / a backend entry."""

    mode = "single"
    s_depth = 0
    b_depth = 0
    allocs = 0
    allocs_in_backend = 0


STATE = _State()


def _standin_call(fn: Callable[..., Any]) -> Callable[..., Any]:
    st = STATE

    def run(*args: Any, **kwargs: Any) -> Any:
        if st.s_depth:
            return fn(*args, **kwargs)
        st.s_depth = 1
        try:
            mode = st.mode
            if mode == "standin" or (mode == "standin_in_backend" and st.b_depth):
                fn(*args, **kwargs)
            return fn(*args, **kwargs)
        finally:
            st.s_depth = 0

    run.__name__ = getattr(fn, "__name__", "standin")
    return run


def _backend_call(fn: Callable[..., Any]) -> Callable[..., Any]:
    st = STATE

    def run(*args: Any, **kwargs: Any) -> Any:
        if st.b_depth:
            return fn(*args, **kwargs)
        st.b_depth = 1
        try:
            if st.mode == "backend":
                fn(*args, **kwargs)
            return fn(*args, **kwargs)
        finally:
            st.b_depth = 0

    run.__name__ = getattr(fn, "__name__", "backend")
    return run


def _wrap_class(cls: type, skip: frozenset[str] = frozenset(), init: bool = False) -> None:
    """Wrap the public methods, properties and operators of a stand-in class (``__init__`` too
    with ``init``: classes our code constructs); private helpers run inside those."""
    for name, obj in list(vars(cls).items()):
        if name in skip or (name in _NEVER and not (init and name == "__init__")) or \
                (name.startswith("_") and not name.startswith("__")):
            continue
        if isinstance(obj, types.FunctionType):
            setattr(cls, name, _standin_call(obj))
        elif isinstance(obj, property):
            setattr(cls, name, property(
                _standin_call(obj.fget) if obj.fget else None,
                _standin_call(obj.fset) if obj.fset else None, obj.fdel, obj.__doc__))
        elif isinstance(obj, staticmethod):
            setattr(cls, name, staticmethod(_standin_call(obj.__func__)))


def wrap_stand_in() -> None:
    """Route every call our code makes into the fake CuPy through ``_standin_call`` (before
    autograd_gpu is imported: the CuPy backend binds some functions at import)."""
    from tests.fake_cupy import _array, _cuda, _cupy, _cupyx, _linalg, _random

    done: dict[int, Any] = {}
    for mod in (_cupy, _cuda.cuda, _cuda.runtime, _cuda.memory, _random.random, _cupyx.cupyx,
                _cupyx.special, _linalg.linalg, _cupy.stride_tricks):
        ns = vars(mod)
        for name, obj in list(ns.items()):
            if isinstance(obj, types.FunctionType) and not name.startswith("_") and \
                    obj.__module__.startswith("tests.fake_cupy"):
                ns[name] = done.setdefault(id(obj), _standin_call(obj))
    make = _cupy._function  # the NumPy functions the fake serves on first use
    _cupy._function = lambda fn: _standin_call(make(fn))  # type: ignore[attr-defined]
    _wrap_class(_array.ndarray, CHEAP_ATTRIBUTES)
    for cls in (_array.Ufunc, _cuda.Device, _cuda.MemoryPool, _cuda.PinnedMemoryPool,
                _cuda.Stream, _cuda.Event, _random.RandomState, _NullKernel):
        _wrap_class(cls)
    for cls in (_cuda.UnownedMemory, _array.MemoryPointer):  # our allocator hook makes these
        _wrap_class(cls, init=True)


def wrap_backend() -> None:
    """Route the calls into the CuPy backend's array entries through ``_backend_call``."""
    from autograd_gpu.backends.cupy_backend import cupy_backend

    for name in dir(cupy_backend):
        if name.startswith("__") or name in _NOT_BACKEND_WORK:
            continue
        value = getattr(cupy_backend, name)
        if callable(value) and not isinstance(value, type):
            setattr(cupy_backend, name, _backend_call(value))


def count_allocations() -> Callable[[int], Any]:
    """Count the allocator hook's calls (and those inside backend entries); returns the hook."""
    from tests.fake_cupy import _array

    hook = _array.ALLOCATOR[0]
    st = STATE

    def counted(nbytes: int) -> Any:
        st.allocs += 1
        if st.b_depth:
            st.allocs_in_backend += 1
        return hook(nbytes)

    _array.ALLOCATOR[0] = counted
    return counted


# ---- the ops -------------------------------------------------------------------------------

def make_ops(ag: Any) -> dict[str, Callable[[], Any]]:
    """One callable per op, on CUDA tensors made once."""
    import numpy as np

    rng = np.random.default_rng(0)

    def t(*shape: int, grad: bool = False) -> Any:
        return ag.tensor(rng.standard_normal(shape, dtype=np.float32), device="cuda",
                         requires_grad=grad)

    a, b, c = t(SIZE), t(SIZE), t(SIZE)
    ga, gb, gc = t(SIZE, grad=True), t(SIZE, grad=True), t(SIZE, grad=True)
    m, k, n = MATMUL
    x, w = t(m, k), t(k, n)

    def fwd_bwd() -> None:
        ga.grad = gb.grad = gc.grad = None
        (ga * gb + gc).sum().backward()

    return {
        "mul": lambda: a * b,
        "add": lambda: a + b,
        "mul_scalar": lambda: a * 2.0,
        "sum": lambda: a.sum(),
        "relu": lambda: ag.relu(a),
        "matmul": lambda: x @ w,
        "mul_recorded": lambda: ga * gb,
        "fwd_bwd": fwd_bwd,
        "add_": lambda: c.add_(b),
    }


def _batch(fn: Callable[[], Any], n: int) -> float:
    """CPU seconds per call of ``fn`` (process time: a busy machine's other work is not in it),
    without the cyclic garbage collector (as timeit: a collection lands in one batch or
    another, and the doubled calls make more garbage)."""
    gc.collect()
    gc.disable()
    try:
        t = time.process_time()
        for _ in range(n):
            fn()
        return (time.process_time() - t) / n
    finally:
        gc.enable()


def _calls_per_batch(fn: Callable[[], Any]) -> int:
    _batch(fn, 20)  # warm-up: kernels looked up, caches filled
    return max(20, int(BATCH_SECONDS / max(_batch(fn, 50), 1e-7)))


def _best_by_mode(fn: Callable[[], Any], modes: tuple[str, ...], batches: int) -> dict[str, float]:
    """Best CPU seconds per call in each mode, the modes' batches taking turns."""
    n = _calls_per_batch(fn)
    best = dict.fromkeys(modes, 1.0)
    for _ in range(batches):
        for mode in modes:
            STATE.mode = mode
            best[mode] = min(best[mode], _batch(fn, n))
    STATE.mode = "single"
    return best


def child(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    """One measuring process: ``plain`` (nothing added), ``standin`` (stand-in calls wrapped:
    modes single / standin / standin_in_backend, plus the allocator hook alone) or ``backend``
    (backend entries wrapped: modes single / backend)."""
    kernels = args.kernels == "on"
    install_stand_in(kernels, args.tree)
    if kind == "standin":
        wrap_stand_in()
    import autograd_gpu as ag

    out: dict[str, Any] = {}
    if kind == "plain":
        fns = make_ops(ag)
        out["_loop"] = {"plain": _best_by_mode(lambda: None, ("single",), args.batches)["single"]}
        for op in args.ops:
            fns[op]()
            before = _NullKernel.calls[0]
            fns[op]()
            out[op] = {"kernels": _NullKernel.calls[0] - before,
                       "plain": _best_by_mode(fns[op], ("single",), args.batches)["single"]}
        return out
    if kind == "backend":
        wrap_backend()
        fns = make_ops(ag)
        for op in args.ops:
            out[op] = _best_by_mode(fns[op], ("single", "backend"), args.batches)
        return out
    wrap_backend_depth_only()
    hook = count_allocations()
    fns = make_ops(ag)
    for op in args.ops:
        fns[op]()
        STATE.allocs = STATE.allocs_in_backend = 0
        fns[op]()
        counts = {"allocs": STATE.allocs, "allocs_in_backend": STATE.allocs_in_backend}
        out[op] = {**counts, **_best_by_mode(fns[op], ("single", "standin", "standin_in_backend"),
                                             args.batches)}
    # the allocator hook alone (allocate and free 1 KiB), and its stand-in calls run twice
    out["_hook"] = _best_by_mode(lambda: hook(1024), ("single", "standin"), args.batches)
    return out


def wrap_backend_depth_only() -> None:
    """Mark calls inside the CuPy backend's entries (``b_depth``) without ever running them
    twice (the ``standin_in_backend`` mode needs to know where a stand-in call comes from)."""
    from autograd_gpu.backends.cupy_backend import cupy_backend

    st = STATE

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            if st.b_depth:
                return fn(*a, **k)
            st.b_depth = 1
            try:
                return fn(*a, **k)
            finally:
                st.b_depth = 0

        return run

    for name in dir(cupy_backend):
        if name.startswith("__") or name in _NOT_BACKEND_WORK:
            continue
        value = getattr(cupy_backend, name)
        if callable(value) and not isinstance(value, type):
            setattr(cupy_backend, name, mark(value))


# ---- putting it together -------------------------------------------------------------------

def _run_child(kind: str, args: argparse.Namespace, tree: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--_child", kind, "--kernels", args.kernels,
           "--batches", str(args.batches), "--ops", ",".join(args.ops), "--tree", str(tree)]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False,
                         env={**os.environ, "PYTHONPATH": str(tree)})
    if res.returncode:
        raise SystemExit(f"{kind} run of {tree} failed:\n{res.stderr[-4000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _merge_best(into: dict[str, Any], new: dict[str, Any]) -> None:
    """Keep the smallest time per (op, key) over rounds; counts as they are."""
    for op, row in new.items():
        mine = into.setdefault(op, {})
        for key, value in row.items():
            if isinstance(value, float):
                mine[key] = min(mine.get(key, value), value)
            else:
                mine[key] = value


def measure(args: argparse.Namespace, tree: Path) -> dict[str, dict[str, Any]]:
    """Per op, microseconds by part (see the module docstring), best over ``--rounds``."""
    runs: dict[str, dict[str, Any]] = {"plain": {}, "standin": {}, "backend": {}}
    for _ in range(args.rounds):
        for kind in runs:
            _merge_best(runs[kind], _run_child(kind, args, tree))
    plain, s, b = runs["plain"], runs["standin"], runs["backend"]
    hook = s.pop("_hook")
    hook_standin = hook["standin"] - hook["single"]
    hook_own = hook["single"] - hook_standin  # the hook's own time, as it runs inside a call
    loop = plain.pop("_loop")["plain"]
    out = {}
    for op in args.ops:
        d_standin = s[op]["standin"] - s[op]["single"]
        d_standin_b = s[op]["standin_in_backend"] - s[op]["single"]
        d_backend = b[op]["backend"] - b[op]["single"]
        standin = d_standin - s[op]["allocs"] * hook_own
        total = plain[op]["plain"]
        ours = total - loop - standin
        launch = d_backend - d_standin_b + s[op]["allocs_in_backend"] * hook_own
        out[op] = {"kernels": plain[op]["kernels"], "allocs": s[op]["allocs"],
                   **{k: round(v * 1e6, 2) for k, v in (
                       ("total_us", total), ("standin_us", standin), ("ours_us", ours),
                       ("launch_us", launch), ("dispatch_us", ours - launch))}}
    out["_info"] = {"loop_us": round(loop * 1e6, 3), "hook_us": round(hook_own * 1e6, 3),
                    "hook_standin_us": round(hook_standin * 1e6, 3)}
    return out


_COLUMNS = (("total_us", "total us"), ("standin_us", "stand-in us"), ("ours_us", "ours us"),
            ("launch_us", "of ours: launch path us"), ("dispatch_us", "of ours: dispatch us"))


def table(now: dict[str, Any], ops: list[str], before: dict[str, Any] | None = None) -> str:
    """Markdown; with ``before`` (the baseline's results) each cell reads ``before -> now``."""
    head = "| op | kernels | allocs | " + " | ".join(title for _, title in _COLUMNS) + " |"
    lines = [head, "| --- | ---: | ---: |" + " ---: |" * len(_COLUMNS)]
    for op in ops:
        r = now[op]
        cells = [f"{r[key]:.1f}" if before is None else f"{before[op][key]:.1f} -> {r[key]:.1f}"
                 for key, _ in _COLUMNS]
        lines.append(f"| `{LABELS[op]}` | {r['kernels']} | {r['allocs']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="1 round of 5 batches per mode (default 3 rounds of 9)")
    p.add_argument("--kernels", choices=("on", "off"), default="on",
                   help="our RawKernels (on, as on a GPU) or CuPy's functions (off)")
    p.add_argument("--json", action="store_true", help="also print one JSON line per op")
    p.add_argument("--ops", default=",".join(OPS), help=f"comma-separated subset of {OPS}")
    p.add_argument("--batches", type=int, default=None, help="timed batches per mode")
    p.add_argument("--rounds", type=int, default=None,
                   help="measuring processes of each kind per tree, taking turns")
    p.add_argument("--baseline", type=Path, default=None, metavar="TREE",
                   help="also measure the checkout at TREE and show 'before -> now'")
    p.add_argument("--tree", type=Path, default=ROOT, help=argparse.SUPPRESS)
    p.add_argument("--_child", choices=("plain", "standin", "backend"), default=None,
                   help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.ops = [o for o in args.ops.split(",") if o]
    unknown = set(args.ops) - set(OPS)
    if unknown:
        p.error(f"unknown ops {sorted(unknown)}; choose from {OPS}")
    args.batches = args.batches or (5 if args.quick else 9)
    args.rounds = args.rounds or (1 if args.quick else 3)
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args._child:
        print(json.dumps(child(args._child, args)))
        return
    trees = [args.baseline.resolve(), ROOT] if args.baseline else [ROOT]
    results = [measure(args, tree) for tree in trees]
    now, info = results[-1], results[-1]["_info"]
    print(f"# CUDA launch path on the NumPy stand-in (kernels {args.kernels}, float32, {SIZE} "
          f"elements; CPU time per op, best of {args.rounds} x {args.batches} batches; loop "
          f"{info['loop_us']:.2f} us; allocator hook {info['hook_us']:.2f} us per allocation, "
          "counted as ours)\n")
    if args.baseline:
        print(f"before: {trees[0]}; now: {ROOT}\n")
    print(table(now, args.ops, results[0] if args.baseline else None))
    if args.json:
        for tree, res in zip(trees, results):
            for op in args.ops:
                print(json.dumps({"op": op, **res[op], "kernels_on": args.kernels == "on",
                                  "tree": str(tree)}))


if __name__ == "__main__":
    main()
