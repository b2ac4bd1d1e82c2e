"""The CUDA kernels and their launchers (``autograd_gpu/backends/cuda_kernels.py``).

CPU tests (always run): the kernel registry agrees with the ``.cu`` sources, the op enums with the
Python op tuples, the layout helpers, nvcc compiles every file, and a non-editable install ships
the kernels. GPU tests (run whenever CuPy sees a GPU, and on the CPU kernel emulator under
AUTOGRAD_GPU_FAKE_CUDA=emulate, which checks their logic, not the GPU): every launcher against its
reference twin, the plain CuPy expression, computed in float64 from the same inputs.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autograd_gpu.backends import cuda_kernels as ck
from autograd_gpu.backends import cuda_reduce as cr
from autograd_gpu.backends import cuda_support

REPO = Path(__file__).resolve().parents[2]


def _kernel_cupy() -> Any:
    """Real CuPy with a GPU; or, under AUTOGRAD_GPU_FAKE_CUDA=emulate, the NumPy stand-in for
    CuPy with our kernels run by the CPU emulator (tests/kernel_emulator: their logic, not a
    GPU); else None (the stand-in under AUTOGRAD_GPU_FAKE_CUDA=1 runs no kernel)."""
    if not cuda_support._gpu_present():
        return None
    import cupy

    if getattr(cupy, "__autograd_gpu_fake__", False) and \
            not getattr(cupy, "__autograd_gpu_kernel_emulator__", False):
        return None
    return cupy


cp = _kernel_cupy()
EMULATED = bool(getattr(cp, "__autograd_gpu_kernel_emulator__", False))
gpu = pytest.mark.skipif(cp is None, reason="no CUDA GPU (AUTOGRAD_GPU_FAKE_CUDA=emulate runs "
                                            "these on the CPU kernel emulator, which needs g++)")
# NOTE: under emulation every GPU thread is a CPU fiber: the largest sizes (2**20 + 3 and the
# 2**22 + 5 reduction) give way to sizes that still take several grid-stride rounds and split
# reductions, unless AUTOGRAD_GPU_EMULATOR_FULL=1. Real GPUs always run the full set.
FULL = not EMULATED or os.environ.get("AUTOGRAD_GPU_EMULATOR_FULL", "") == "1"
BIG = 2**20 + 3 if FULL else 2**12 + 3
HUGE = 2**22 + 5 if FULL else 2**15 + 5


# ---- CPU: sources, registry, layout helpers, build ------------------------------------------


def _globals_in(file: str) -> set[str]:
    return set(re.findall(r"__global__ void (\w+)\(", ck.kernel_source(file)))


def test_every_requested_kernel_is_a_template_in_its_file() -> None:
    assert set(ck.KERNELS) == {p.name for p in ck.kernel_dir().glob("*.cu")}
    for file, names in ck.KERNELS.items():
        source = ck.kernel_source(file)
        assert not re.search(r"^\s*#include", source, re.M), f"{file}: an #include is left"
        for name in names:
            assert re.search(rf"template <typename T>\s*__global__ void {name}\(", source), (
                f"kernel {name} (requested from {file}) is not a template in {file}")
        assert _globals_in(file) == set(names), f"{file} defines kernels no launcher requests"
        for dtype in ck.KERNEL_DTYPES:
            exprs = ck.name_expressions(file, dtype)
            assert len(exprs) == len(names) and all(e.endswith(">") for e in exprs)


def test_sources_include_no_system_header() -> None:
    # NVRTC compiles them without the CUDA or C++ standard headers.
    for path in list(ck.kernel_dir().glob("*.cu")) + [ck.kernel_dir() / "common.cuh"]:
        includes = re.findall(r"^\s*#include\s*(\S+)", path.read_text(), re.M)
        assert all(inc == '"common.cuh"' for inc in includes), f"{path.name}: {includes}"


def _enum(file: str, name: str) -> list[str]:
    body = re.search(rf"enum {name} \{{([^}}]*)\}}", ck.kernel_source(file))
    assert body, f"enum {name} not found in {file}"
    return [item.split("=")[0].strip() for item in body.group(1).split(",") if item.strip()]


def test_op_codes_match_the_kernel_enums() -> None:
    assert [e[2:].lower() for e in _enum("elementwise.cu", "UnaryOp")] == list(ck.UNARY_OPS)
    assert [e[2:].lower() for e in _enum("elementwise.cu", "BinaryOp")] == list(ck.BINARY_OPS)
    codes = [e[2:].lower() for e in _enum("reduce.cu", "ReduceOp")]
    assert {name: codes.index(name) for name in ck._REDUCE_CODES} == ck._REDUCE_CODES
    assert set(ck.UNARY_BACKWARD_OPS) <= set(ck.UNARY_OPS)
    assert set(ck.UNARY_BACKWARD_OPS.values()) <= {"x", "out"}


def test_importable_without_gpu_and_rejects_host_arrays() -> None:
    assert ck.KERNEL_DTYPES == ("float16", "float32", "float64")
    assert not ck.supported(np.ones(3, np.float32))
    assert not ck.supported(1.0, 2)
    with pytest.raises(ValueError, match="unknown kernel"):
        ck.get_kernel("no_such_kernel", "float32")
    with pytest.raises(ValueError, match="no int64 version"):
        ck.get_kernel("unary", "int64")


def test_layout_drops_unit_dims_and_merges_contiguous_ones() -> None:
    x = np.zeros((4, 5, 6), np.float32)
    nd, *rest = ck._layout((4, 5, 6), [x])
    assert nd == 1 and rest[5] == 120 and rest[11] == 1
    bias = np.zeros(6, np.float32)
    nd, *rest = ck._layout((4, 5, 6), [x, bias, None])
    assert nd == 2 and rest[4:6] == [20, 6]
    assert rest[6 + 4:6 + 6] == [6, 1] and rest[12 + 4:12 + 6] == [0, 1]
    assert rest[18:] == [0] * 6
    xt = np.zeros((6, 4), np.float64).T  # transposed: no merge
    nd, *rest = ck._layout((4, 6), [xt])
    assert nd == 2 and rest[4:6] == [4, 6] and rest[10:12] == [1, 4]
    rev = np.zeros(8, np.float32)[::-2]  # negative stride
    nd, *rest = ck._layout((4,), [rev])
    assert nd == 1 and rest[11] == -2
    unmergeable = np.zeros((2,) * 7).transpose(6, 5, 4, 3, 2, 1, 0)
    assert ck._layout((2,) * 7, [unmergeable]) is None  # the launcher then materialises
    assert ck._layout((), [np.zeros(())])[0] == 1


def test_broadcast_shape_and_axes() -> None:
    assert ck._broadcast_shape((3, 1), (4,), ()) == (3, 4)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        ck._broadcast_shape((3,), (4,))
    assert cr._axes(None, 3) == (0, 1, 2)
    assert cr._axes((-1, 0), 3) == (0, 2)
    assert cr._axes(0, 0) == ()
    with pytest.raises(ValueError, match="out of bounds"):
        cr._axes(3, 3)
    with pytest.raises(ValueError, match="duplicate"):
        cr._axes((1, -2), 3)


def test_split_fills_the_gpu_without_empty_chunks() -> None:
    for items, r in [(1, 2**26), (1, 2**20 + 3), (7, 10**6), (10**6, 50), (3, 5000)]:
        splits, chunk = cr._split(items, r, 132 * 64, 1024)
        assert 1 <= splits <= ck._MAX_SPLITS and (splits - 1) * chunk < r <= splits * chunk
    assert cr._split(1, 2**26, 132 * 64, 1024)[0] >= 132 * 32
    assert cr._split(10**6, 2**20, 132 * 64, 1024) == (1, 2**20)


def test_plan_reads_transposes_in_place() -> None:
    x = np.zeros((3, 4, 5), np.float32)
    plan = cr._plan(x, (1,))
    assert plan.base is x and (plan.outer, plan.r, plan.inner) == (3, 4, 5)
    assert plan.kept == [0, 2]
    xt = np.zeros((5, 4, 3), np.float32).transpose(2, 1, 0)  # shape (3, 4, 5), reversed memory
    plan = cr._plan(xt, (0,))  # axis 0 is innermost in memory
    assert plan.base is xt and (plan.outer, plan.r, plan.inner) == (20, 3, 1)
    assert plan.kept == [2, 1]
    plan = cr._plan(xt, (1, 2))
    assert (plan.outer, plan.r, plan.inner) == (1, 20, 3) and plan.kept == [0]


def test_compile_script_builds_every_kernel_for_sm80_and_sm90() -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found (CI has it): kernels not compiled")
    result = subprocess.run(["bash", str(REPO / ".ci" / "compile_kernels.sh")],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:]
    for file in ck.KERNELS:
        assert f"compiled kernels/{file}" in result.stdout


def _setuptools_builds_wheels() -> bool:
    """True when this environment's setuptools can build a wheel by itself (>= 70.1, or with the
    wheel package); else pip builds in an isolated environment from its package index."""
    if importlib.util.find_spec("setuptools") is None:
        return False
    return (importlib.util.find_spec("setuptools.command.bdist_wheel") is not None
            or importlib.util.find_spec("wheel") is not None)


def test_non_editable_install_ships_the_kernels(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("autograd_gpu", "kernels"):
        shutil.copytree(REPO / name, src / name, ignore=ignore)
    target = tmp_path / "site"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    isolation: list[str] = []
    if _setuptools_builds_wheels():  # build with this venv's setuptools, offline
        isolation, env["PIP_NO_INDEX"] = ["--no-build-isolation"], "1"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", *isolation,
                          "--target", str(target), str(src)],
                         capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert pip.returncode == 0, pip.stderr[-4000:]
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); "
             "from autograd_gpu.backends import cuda_kernels as ck; "
             "d = ck.kernel_dir(); print(d); print(' '.join(sorted(p.name for p in d.iterdir())))")
    run = subprocess.run([sys.executable, "-c", probe, str(target)], capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-4000:]
    out = run.stdout.split("\n")
    assert Path(out[0]).resolve() == (target / "autograd_gpu" / "_kernels").resolve()
    shipped = set(out[1].split())
    assert {p.name for p in (REPO / "kernels").glob("*.cu")} | {"common.cuh"} <= shipped
    # The package list in pyproject.toml is explicit (the kernels map in as a subpackage):
    # every package of the source tree must be in the wheel.
    packages = {p.parent.relative_to(REPO) for p in (REPO / "autograd_gpu").rglob("*.py")}
    missing = [str(p) for p in sorted(packages)
               if not any((target / p).glob("*.py"))]
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml"


# ---- GPU: launchers against their reference twins -------------------------------------------

DTYPES = ("float16", "float32", "float64")
RTOL = {"float16": 4e-3, "float32": 2e-5, "float64": 1e-11}
ATOL = {"float16": 4e-3, "float32": 2e-6, "float64": 1e-12}
SIZES = (0, 1, 31, 1025, BIG)
LAYOUTS = ("contiguous", "transposed", "sliced", "reversed", "broadcast")


def _rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def _make(shape: tuple[int, ...], dtype: str, layout: str = "contiguous", low: float = -3.0,
          high: float = 3.0, seed: int = 0) -> Any:
    """A cupy array of ``shape`` with the given memory layout and values in [low, high)."""
    rng = np.random.default_rng(seed)

    def values(s: tuple[int, ...]) -> Any:
        return cp.asarray(rng.uniform(low, high, s).astype(dtype))

    if layout == "contiguous" or len(shape) == 0:
        return values(shape)
    if layout == "transposed":
        return values(shape[::-1]).transpose(tuple(range(len(shape)))[::-1])
    if layout == "sliced":
        return values(shape[:-1] + (2 * shape[-1],))[..., ::2]
    if layout == "reversed":  # negative strides
        return values(shape)[(slice(None, None, -1),) * len(shape)]
    assert layout == "broadcast"
    return cp.broadcast_to(values((1,) + shape[1:]), shape)


def _host(x: Any) -> np.ndarray:
    return cp.asnumpy(x).astype(np.float64)


def _dense(a: Any) -> bool:
    """``a`` is a new array's whole buffer: C-contiguous once its dims are put in the order of
    its strides (elementwise results are laid out as PyTorch's TensorIterator lays them out)."""
    return bool(a.transpose(sorted(range(a.ndim), key=lambda d: -a.strides[d])).flags.c_contiguous)


def _close(got: Any, want: Any, dtype: str, scale: float = 1.0, atol_scale: float = 1.0) -> None:
    """got (a new dense array of dtype) equals want within dtype's tolerance * scale;
    atol_scale widens the absolute tolerance alone (sums of r terms: sqrt(r))."""
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    assert _dense(got)
    np.testing.assert_allclose(_host(got), cp.asnumpy(want).astype(np.float64),
                               rtol=RTOL[dtype] * scale, atol=ATOL[dtype] * scale * atol_scale)


def _erf(x: Any) -> Any:
    try:
        from cupyx.scipy.special import erf

        return erf(x)
    except ImportError:  # a stand-in CuPy without cupyx: the C library's erf on the host
        return cp.asarray(np.vectorize(math.erf, otypes=[np.float64])(cp.asnumpy(x)))


def _sigmoid(x: Any) -> Any:
    return 1 / (1 + cp.exp(-x))


K = 0.7978845608028654  # sqrt(2 / pi)

# op -> (reference twin on float64 input, input range)
UNARY_REF: dict[str, tuple[Any, tuple[float, float]]] = {
    "neg": (lambda x: -x, (-3, 3)),
    "abs": (lambda x: cp.abs(x), (-3, 3)),
    "sign": (lambda x: cp.where(x != x, 0.0, cp.sign(x)), (-3, 3)),  # sign(nan) = 0, as torch
    "exp": (lambda x: cp.exp(x), (-3, 3)),
    "log": (lambda x: cp.log(x), (0.1, 4)),
    "log1p": (lambda x: cp.log1p(x), (-0.9, 3)),
    "expm1": (lambda x: cp.expm1(x), (-3, 3)),
    "sqrt": (lambda x: cp.sqrt(x), (0.1, 4)),
    "rsqrt": (lambda x: 1 / cp.sqrt(x), (0.1, 4)),
    "reciprocal": (lambda x: 1 / x, (0.2, 4)),
    "sin": (lambda x: cp.sin(x), (-3, 3)),
    "cos": (lambda x: cp.cos(x), (-3, 3)),
    "tanh": (lambda x: cp.tanh(x), (-3, 3)),
    "sigmoid": (_sigmoid, (-6, 6)),
    "relu": (lambda x: cp.maximum(x, 0), (-3, 3)),
    "silu": (lambda x: x * _sigmoid(x), (-6, 6)),
    "gelu": (lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), (-3, 3)),
    "gelu_tanh": (lambda x: 0.5 * x * (1 + cp.tanh(K * (x + 0.044715 * x**3))), (-3, 3)),
    "erf": (_erf, (-2, 2)),
    "floor": (lambda x: cp.floor(x), (-3, 3)),
    "leaky_relu": (lambda x: cp.where(x > 0, x, 0.1 * x), (-3, 3)),
    "elu": (lambda x: cp.where(x > 0, x, 0.7 * cp.expm1(x)), (-3, 3)),
}
PARAM = {"leaky_relu": 0.1, "elu": 0.7}


def _gelu_grad(x: Any) -> Any:
    return 0.5 * (1 + _erf(x / math.sqrt(2))) + x * cp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _gelu_tanh_grad(x: Any) -> Any:
    t = cp.tanh(K * (x + 0.044715 * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * K * (1 + 3 * 0.044715 * x * x)


# op -> d out / d x as a function of the saved value (x or out per UNARY_BACKWARD_OPS)
GRAD_REF: dict[str, Any] = {
    "neg": lambda s: -cp.ones_like(s), "abs": lambda s: cp.sign(s),
    "sign": lambda s: cp.zeros_like(s),
    "exp": lambda s: s, "log": lambda s: 1 / s, "log1p": lambda s: 1 / (1 + s),
    "expm1": lambda s: s + 1, "sqrt": lambda s: 0.5 / s, "rsqrt": lambda s: -0.5 * s**3,
    "reciprocal": lambda s: -s * s, "sin": lambda s: cp.cos(s),
    "cos": lambda s: -cp.sin(s), "tanh": lambda s: 1 - s * s, "sigmoid": lambda s: s * (1 - s),
    "relu": lambda s: cp.where(s <= 0, 0.0, 1.0),  # passes at NaN: torch's threshold_backward
    "silu": lambda s: _sigmoid(s) * (1 + s * (1 - _sigmoid(s))),
    "gelu": _gelu_grad, "gelu_tanh": _gelu_tanh_grad,
    "erf": lambda s: 2 / math.sqrt(math.pi) * cp.exp(-s * s),
    "floor": lambda s: cp.zeros_like(s),
    "leaky_relu": lambda s: cp.where(s > 0, 1.0, 0.1),
    "elu": lambda s: cp.where(s <= 0, 0.7 * cp.exp(s), 1.0),
}


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ck.UNARY_OPS)
def test_unary_matches_cupy(op: str, dtype: str) -> None:
    ref, (low, high) = UNARY_REF[op]
    for n in SIZES:
        for layout in LAYOUTS if n in (31, 1025) else ("contiguous",):
            x = _make((n,) if layout == "contiguous" else (3, n), dtype, layout, low, high)
            _close(ck.unary(op, x, PARAM.get(op, 0.0)), ref(x.astype(np.float64)), dtype)
    x0 = _make((), dtype, low=low, high=high)
    _close(ck.unary(op, x0, PARAM.get(op, 0.0)), ref(x0.astype(np.float64)), dtype)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(ck.UNARY_BACKWARD_OPS))
def test_unary_backward_matches_cupy(op: str, dtype: str) -> None:
    ref, (low, high) = UNARY_REF[op]
    for shape, layout in [((0,), "contiguous"), ((1,), "contiguous"), ((BIG,), "contiguous"),
                          ((33, 31), "transposed"), ((7, 1025), "sliced"),
                          ((9, 31), "reversed"), ((5, 31), "broadcast")]:
        x = _make(shape, dtype, layout, low, high, seed=1)
        saved = x if ck.UNARY_BACKWARD_OPS[op] == "x" else ck.unary(op, x, PARAM.get(op, 0.0))
        grad = _make(shape, dtype, "contiguous", seed=2)
        want = grad.astype(np.float64) * GRAD_REF[op](saved.astype(np.float64))
        _close(ck.unary_backward(op, saved, grad, PARAM.get(op, 0.0)), want, dtype, scale=4)


def _torch_unary(op: str) -> Any:
    """PyTorch's function for kernel op ``op`` (with the parameters of ``PARAM``)."""
    import torch
    import torch.nn.functional as F

    special = {"relu": torch.relu, "silu": F.silu, "gelu": F.gelu,
               "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
               "leaky_relu": lambda x: F.leaky_relu(x, PARAM["leaky_relu"]),
               "elu": lambda x: F.elu(x, PARAM["elu"])}
    return special.get(op) or getattr(torch, op)


SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -30.0]


@gpu
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ck.UNARY_OPS)
def test_unary_and_backward_at_nan_inf_and_signed_zero_match_torch(op: str, dtype: str) -> None:
    # NOTE: PyTorch is the yardstick: sign(nan) = sign(-0.0) = +0, relu's gradient passes at NaN,
    # elu's is unscaled there; every other op must carry NaN and inf as PyTorch does.
    import torch

    x = torch.tensor(SPECIALS, dtype=getattr(torch, dtype), requires_grad=True)
    out = _torch_unary(op)(x)
    (want_grad,) = torch.autograd.grad(out.sum(), x, allow_unused=True)
    want, param = out.detach().numpy(), PARAM.get(op, 0.0)
    xs = cp.asarray(np.array(SPECIALS, dtype))
    got = _host(ck.unary(op, xs, param))
    if op == "gelu" and dtype == "float32":  # NOTE: torch's float32 vector path: gelu(inf) nan
        want = _torch_unary(op)(x.detach().double()).float().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, equal_nan=True)
    assert np.array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0])), (got, want)
    saved = xs if ck.UNARY_BACKWARD_OPS[op] == "x" else cp.asarray(want)
    got_grad = _host(ck.unary_backward(op, saved, cp.ones_like(xs), param))
    want_g = np.zeros_like(want) if want_grad is None else want_grad.numpy()
    np.testing.assert_allclose(got_grad, want_g, rtol=1e-6, atol=1e-7, equal_nan=True)


BINARY_REF: dict[str, Any] = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y, "pow": lambda x, y: x**y,
    "maximum": lambda x, y: cp.maximum(x, y), "minimum": lambda x, y: cp.minimum(x, y),
    # NOTE: NumPy's float floor_divide goes through fmod as PyTorch's does; CuPy's does not
    "floor_divide": lambda x, y: _host_floor_divide(x, y),
    "eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y,
}


def _host_floor_divide(x: Any, y: Any) -> Any:
    dtype = x.dtype
    wide = np.float32 if dtype == np.float16 else dtype  # NOTE: float16 computes in float32
    with np.errstate(over="ignore"):  # NOTE: float16 rounds large quotients to inf
        got = np.floor_divide(cp.asnumpy(x).astype(wide), cp.asnumpy(y).astype(wide))
        return cp.asarray(got.astype(dtype))


BINARY_SHAPES = [((0,), (0,)), ((1,), (1,)), ((31,), (31,)), ((1025,), (1,)),
                 ((BIG,), (BIG,)), ((33, 31), (31,)), ((33, 1), (1, 31)),
                 ((), (5,)), ((2, 3, 4, 5), (3, 1, 5))]


def _operands(op: str, xs: tuple[int, ...], ys: tuple[int, ...], dtype: str,
              layout: str) -> tuple[Any, Any]:
    low = 0.5 if op in ("pow", "div") else -3.0
    x = _make(xs, dtype, layout if len(xs) >= 2 else "contiguous", low, 3.0, seed=3)
    y = _make(ys, dtype, "contiguous", low, 3.0, seed=4)
    if op in ("eq", "ne", "le", "ge") and x.shape == y.shape and x.size:
        y = cp.where(cp.asarray(np.arange(y.size).reshape(y.shape) % 3 == 0), x, y)  # some ties
    return x, y


def _binary_close(op: str, got: Any, want: Any, dtype: str) -> None:
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        assert got.dtype == np.bool_ and _dense(got)
        np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(want))
    elif op == "floor_divide":  # NOTE: exact: fmod and one rounded division, as the reference
        np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(want))
    else:
        _close(got, want, dtype, scale=2)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ck.BINARY_OPS)
def test_binary_matches_cupy(op: str, dtype: str) -> None:
    ref = BINARY_REF[op]
    for xs, ys in BINARY_SHAPES:
        for layout in LAYOUTS:
            x, y = _operands(op, xs, ys, dtype, layout)
            _binary_close(op, ck.binary(op, x, y), ref(x, y), dtype)
            _binary_close(op, ck.binary(op, y, x), ref(y, x), dtype)
    x, _ = _operands(op, (1025,), (1,), dtype, "contiguous")
    s = 1.5  # Python scalars on either side, rounded to the array dtype as NumPy does
    _binary_close(op, ck.binary(op, x, s), ref(x, x.dtype.type(s)), dtype)
    _binary_close(op, ck.binary(op, s, x), ref(x.dtype.type(s), x), dtype)
    _binary_close(op, ck.binary(op, x, 2), ref(x, x.dtype.type(2)), dtype)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_alpha_out_and_aliasing(dtype: str) -> None:
    x = _make((33, 31), dtype, seed=5)
    y = _make((31,), dtype, seed=6)
    _close(ck.binary("add", x, y, alpha=-0.5), x + (-0.5) * y.astype(np.float64), dtype, 2)
    _close(ck.binary("sub", x, y, alpha=2.0), x - 2.0 * y.astype(np.float64), dtype, 2)
    # in place (out=x), through a broadcast operand
    want = x.astype(np.float64) * y
    got = ck.binary("mul", x, y, out=x)
    assert got is x
    _close(x, want, dtype, 2)
    # out overlapping an input other than element for element: x += x.T
    sq = _make((64, 64), dtype, seed=7)
    want = sq.astype(np.float64) + sq.T
    ck.binary("add", sq, sq.T, out=sq)
    _close(sq, want, dtype, 2)
    # non-contiguous out
    base = _make((8, 10), dtype, seed=8)
    view = base[:, ::2]
    want = view.astype(np.float64) * 3
    ck.binary("mul", view, 3.0, out=view)
    np.testing.assert_allclose(_host(view), cp.asnumpy(want), rtol=RTOL[dtype], atol=ATOL[dtype])
    with pytest.raises(ValueError, match="alpha"):
        ck.binary("mul", x, y, alpha=2.0)
    # as NumPy's out=: the operands broadcast up to out's shape, out never to theirs
    wide = cp.zeros((4, 31), dtype)
    ck.binary("add", y, y[:1], out=wide)
    _close(wide, cp.broadcast_to(y.astype(np.float64) + y[:1], (4, 31)), dtype)
    with pytest.raises(ValueError, match="broadcast"):
        ck.binary("add", x, y, out=cp.zeros((31,), dtype))


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_maximum_minimum_propagate_nan(dtype: str) -> None:
    x = cp.asarray(np.array([np.nan, 1.0, 2.0, np.nan], dtype))
    y = cp.asarray(np.array([1.0, np.nan, 1.0, np.nan], dtype))
    for op in ("maximum", "minimum"):
        got = cp.asnumpy(ck.binary(op, x, y))
        assert np.isnan(got[[0, 1, 3]]).all() and got[2] == (2.0 if op == "maximum" else 1.0)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_where_matches_cupy(dtype: str) -> None:
    for cs, xs, ys in [((0,), (0,), (0,)), ((1,), (1,), (1,)), ((BIG,),) * 3,
                       ((33, 31), (31,), (33, 1)), ((33, 1), (33, 31), ()), ((), (5,), (5,))]:
        cond = cp.asarray(np.random.default_rng(9).random(cs) > 0.5)
        x, y = _make(xs, dtype, seed=10), _make(ys, dtype, seed=11)
        _close(ck.where(cond, x, y), cp.where(cond, x, y), dtype)
        _close(ck.where(cond, x, 0.25), cp.where(cond, x, x.dtype.type(0.25)), dtype)
        _close(ck.where(cond, -1, y), cp.where(cond, y.dtype.type(-1), y), dtype)
    xt = _make((31, 33), dtype, "transposed", seed=12)
    cond = cp.asarray(np.random.default_rng(13).random((31, 33)) > 0.5).T.copy().T
    _close(ck.where(cond, xt, xt[:, :1]), cp.where(cond, xt, xt[:, :1]), dtype)


# Views of shape (2, 3, 4): (base shape, then permute / slice / expand), the same for torch.
LAYOUT_VIEWS: dict[str, tuple[tuple[int, ...], Any]] = {
    "contiguous": ((2, 3, 4), lambda a, t: a),
    "transposed": ((4, 3, 2), lambda a, t: a.permute(2, 1, 0) if t else a.transpose(2, 1, 0)),
    "permuted": ((3, 4, 2), lambda a, t: a.permute(2, 0, 1) if t else a.transpose(2, 0, 1)),
    "sliced": ((2, 3, 8), lambda a, t: a[..., ::2]),
    "expanded_permuted": ((4, 1, 3), lambda a, t: a.expand(4, 2, 3).permute(1, 2, 0) if t
                          else cp.broadcast_to(a, (4, 2, 3)).transpose(1, 2, 0)),
    "row": ((3, 4), lambda a, t: a),  # broadcast along the first dim
}


def _layout_pair(kind: str, seed: int) -> tuple[Any, Any]:
    """A cupy view and the same torch view (float64) of the ``LAYOUT_VIEWS`` kind."""
    import torch

    shape, view = LAYOUT_VIEWS[kind]
    host = np.random.default_rng(seed).uniform(0.5, 3.0, shape)
    return view(cp.asarray(host), False), view(torch.from_numpy(host), True)


def _strides(a: Any, is_torch: bool) -> tuple[Any, ...]:
    """Strides in elements, None for dims of size 1 (their stride is free)."""
    st = a.stride() if is_torch else tuple(s // a.itemsize for s in a.strides)
    return tuple(None if n == 1 else s for s, n in zip(st, a.shape))


@gpu
def test_elementwise_results_are_laid_out_as_torch() -> None:
    """A new result has the strides PyTorch's TensorIterator gives it (C order for C-contiguous
    operands, the one flat launch; else the first operand that tells two dims apart orders
    them), so that ``view``/``reshape`` of it behave as in PyTorch; out= of any dense layout is
    written in place."""
    import torch

    kinds = list(LAYOUT_VIEWS)
    for i, kx in enumerate(kinds[:-1]):
        x, tx = _layout_pair(kx, i)
        got = ck.unary("exp", x)
        assert _strides(got, False) == _strides(tx.exp(), True), kx
        _close(got, cp.exp(x), "float64")
        grad, tgrad = _layout_pair("contiguous", 99)
        got = ck.unary_backward("exp", x, grad)
        assert _strides(got, False) == _strides(tx * tgrad, True), kx
        for j, ky in enumerate(kinds):
            y, ty = _layout_pair(ky, 10 + j)
            got = ck.binary("mul", x, y)
            assert _strides(got, False) == _strides(tx * ty, True), (kx, ky)
            _close(got, x * y, "float64")
            got = ck.binary("mul", y, x)
            assert _strides(got, False) == _strides(ty * tx, True), (ky, kx)
            cond = ck.binary("gt", x, 1.5)  # NOTE: CuPy's own `x > 1.5` would be C order
            got = ck.where(cond, y, x)
            assert _strides(got, False) == _strides(torch.where(tx > 1.5, ty, tx), True), (kx, ky)
            _close(got, cp.where(cond, y, x), "float64")
    # out= a permuted (dense) array: written in place, in its own order
    x, _ = _layout_pair("transposed", 1)
    y, _ = _layout_pair("permuted", 2)
    out = cp.zeros((3, 4, 2)).transpose(2, 0, 1)
    assert ck.binary("add", x, y, out=out) is out
    np.testing.assert_allclose(cp.asnumpy(out), cp.asnumpy(x + y))


REDUCE_SHAPES = [(0,), (1,), (31,), (1025,), (BIG,), (33, 31), (1025, 3), (3, 1025),
                 (4, 5, 6), (2, 0, 3), (2048, 5)]


def _axis_choices(ndim: int) -> list[Any]:
    choices: list[Any] = [None, *range(ndim)]
    if ndim == 3:
        choices += [(0, 2), (1, 2), (0, 1)]
    return choices


def _reduce_ref(op: str, x: Any, axis: Any, keepdims: bool) -> Any:
    x64 = x.astype(np.float64)
    if op == "logsumexp":
        m = cp.max(x64, axis=axis, keepdims=True)
        m = cp.where(cp.isfinite(m), m, 0)
        out = cp.log(cp.sum(cp.exp(x64 - m), axis=axis, keepdims=True)) + m
        return out if keepdims else cp.squeeze(out, axis=axis)
    return getattr(cp, op)(x64, axis=axis, keepdims=keepdims)


def _reduce_values(op: str, shape: tuple[int, ...], dtype: str, layout: str) -> Any:
    if op == "prod":
        return _make(shape, dtype, layout, 0.999, 1.001, seed=14)
    return _make(shape, dtype, layout, seed=14)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", (*ck.REDUCE_OPS, "logsumexp"))
def test_reduce_matches_cupy(op: str, dtype: str) -> None:
    for shape in REDUCE_SHAPES:
        for layout in LAYOUTS if len(shape) >= 2 else ("contiguous", "sliced", "reversed"):
            x = _reduce_values(op, shape, dtype, layout)
            for axis in _axis_choices(len(shape)):
                r = x.size if axis is None else math.prod(
                    shape[a] for a in ((axis,) if isinstance(axis, int) else axis))
                for keepdims in (False, True):
                    out_size = math.prod(_out(shape, axis, keepdims))
                    if r == 0 and out_size and op in ("max", "min"):
                        with pytest.raises(ValueError):
                            ck.reduce(op, x, axis, keepdims)
                        continue
                    if op == "logsumexp":
                        got = ck.logsumexp(x, axis, keepdims)
                    else:
                        got = ck.reduce(op, x, axis, keepdims)
                    want = (_reduce_ref(op, x, axis, keepdims) if r
                            else _empty_ref(op, shape, axis, keepdims))
                    assert got.shape == want.shape, (shape, axis, keepdims, got.shape, want.shape)
                    spread = max(1.0, math.sqrt(r))  # rounding error grows with the terms
                    _close(got, want, dtype, spread if op == "prod" else 2.0, spread)


def _out(shape: tuple[int, ...], axis: Any, keepdims: bool) -> tuple[int, ...]:
    axes = cr._axes(axis, len(shape))
    return cr._out_shape(shape, axes, keepdims)


def _empty_ref(op: str, shape: tuple[int, ...], axis: Any, keepdims: bool) -> Any:
    fill = {"sum": 0.0, "prod": 1.0, "mean": np.nan, "logsumexp": -np.inf}[op]
    return cp.full(_out(shape, axis, keepdims), fill)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_nan_and_full_reduction_of_large_array(dtype: str) -> None:
    x = cp.asarray(np.array([[1.0, np.nan, 3.0], [-np.inf, -np.inf, -np.inf]], dtype))
    assert np.isnan(cp.asnumpy(ck.reduce("max", x, 1))[0])
    assert cp.asnumpy(ck.reduce("max", x, 1))[1] == -np.inf
    lse = cp.asnumpy(ck.logsumexp(x, 1))
    assert np.isnan(lse[0]) and lse[1] == -np.inf
    big = _make((HUGE,), dtype, low=-1.0, high=1.0, seed=15)
    _close(ck.reduce("mean", big), cp.mean(big.astype(np.float64)), dtype, 2)
    _close(ck.reduce("sum", big), cp.sum(big.astype(np.float64)), dtype, 2, 2**11)


def _arg_ref(op: str, x: Any, axis: Any, keepdims: bool) -> tuple[np.ndarray, np.ndarray]:
    # NumPy's argmax/argmin: the first NaN, else the first extreme, as torch
    h = cp.asnumpy(x).astype(np.float64)
    fn = np.argmax if op == "max" else np.argmin
    idx = fn(h, axis=axis, keepdims=keepdims)
    flat = h.reshape(-1) if axis is None else h
    vals = (flat[idx] if axis is None else np.take_along_axis(
        h, idx if keepdims else np.expand_dims(idx, axis), axis))
    if axis is not None and not keepdims:
        vals = np.squeeze(vals, axis)
    return np.asarray(vals).reshape(np.shape(idx)), idx


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ("max", "min"))
def test_arg_reduce_matches_numpy_with_ties_and_nan(op: str, dtype: str) -> None:
    rng = np.random.default_rng(16)
    for shape in [(1,), (31,), (1025,), (BIG,), (33, 31), (1025, 3), (3, 1025), (4, 5, 6)]:
        h = rng.integers(-3, 4, shape).astype(dtype)  # few values: many ties
        if len(shape) >= 2:
            h.reshape(-1)[rng.integers(0, h.size, max(1, h.size // 50))] = np.nan
        for layout in ("contiguous", "transposed") if len(shape) >= 2 else ("contiguous",):
            x = cp.asarray(h) if layout == "contiguous" else cp.asarray(h.T.copy()).T
            for axis in [None, *range(len(shape))]:
                for keepdims in (False, True):
                    values, indices = ck.arg_reduce(op, x, axis, keepdims)
                    want_v, want_i = _arg_ref(op, x, axis, keepdims)
                    assert indices.dtype == np.int64 and indices.shape == want_i.shape
                    np.testing.assert_array_equal(cp.asnumpy(indices), want_i)
                    np.testing.assert_array_equal(cp.asnumpy(values).astype(np.float64), want_v)
    with pytest.raises(ValueError):
        ck.arg_reduce(op, cp.zeros((0,), dtype), None)


def _softmax_ref(x: Any, axis: int, log: bool) -> Any:
    x64 = x.astype(np.float64)
    z = x64 - cp.max(x64, axis=axis, keepdims=True)
    s = cp.sum(cp.exp(z), axis=axis, keepdims=True)
    return z - cp.log(s) if log else cp.exp(z) / s


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("log", (False, True))
def test_softmax_forward_and_backward_match_cupy(log: bool, dtype: str) -> None:
    fwd = ck.log_softmax if log else ck.softmax
    bwd = ck.log_softmax_backward if log else ck.softmax_backward
    for shape in [(5, 1), (7, 1025), (3, 4, 5), (0, 3), (2, 3000), (31,)]:
        for layout in ("contiguous", "transposed", "sliced", "reversed"):
            x = _make(shape, dtype, layout, -5, 5, seed=17)
            for axis in range(-len(shape), len(shape)):
                out = fwd(x, axis)
                if x.size == 0:
                    assert out.shape == shape and bwd(out, out, axis).shape == shape
                    continue
                _close(out, _softmax_ref(x, axis, log), dtype, 2)
                grad = _make(shape, dtype, layout, seed=18)
                y, g = out.astype(np.float64), grad.astype(np.float64)
                if log:
                    want = g - cp.exp(y) * cp.sum(g, axis=axis, keepdims=True)
                else:
                    want = y * (g - cp.sum(g * y, axis=axis, keepdims=True))
                _close(bwd(out, grad, axis), want, dtype, 8)
    rows = cp.asarray(np.array([[-np.inf, 0.0, -np.inf], [-np.inf] * 3], dtype))
    got = cp.asnumpy(fwd(rows, 1))
    assert np.allclose(got[0], [-np.inf, 0.0, -np.inf] if log else [0.0, 1.0, 0.0])
    assert np.isnan(got[1]).all()  # a row of -inf gives NaN, as torch
    # NOTE: as torch (which sums exp(x - max)): a row holding +inf, or NaN, is NaN throughout
    for row in ([0.0, np.inf, -1.0], [np.inf, np.inf, 0.0], [np.inf, -np.inf, 1.0],
                [1.0, np.nan, 2.0]):
        for axis, x in ((1, cp.asarray(np.array([row] * 33, dtype))),
                        (0, cp.asarray(np.array([row] * 33, dtype).T.copy()))):
            assert np.isnan(cp.asnumpy(fwd(x, axis))).all(), (row, axis)


def _ce_ref(logits: Any, target: np.ndarray, ignore: int) -> tuple[np.ndarray, np.ndarray]:
    h = cp.asnumpy(logits).astype(np.float64)
    m = h.max(axis=1, keepdims=True)
    lse = (np.log(np.exp(h - m).sum(axis=1, keepdims=True)) + m)[:, 0]
    keep = target != ignore
    picked = h[np.arange(len(h)), np.where(keep, target, 0)]
    return np.where(keep, lse - picked, 0.0), lse


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_with_ignored_rows_matches_reference(dtype: str) -> None:
    rng = np.random.default_rng(19)
    for n, c in [(0, 5), (1, 1), (37, 10), (64, 1025), (9, 5000)]:
        logits = _make((n, c), dtype, "contiguous", -4, 4, seed=20)
        t = rng.integers(0, c, n)
        t[::4] = -100
        loss, lse = ck.cross_entropy(logits, cp.asarray(t), ignore_index=-100)
        want_loss, want_lse = _ce_ref(logits, t, -100)
        assert loss.shape == (n,) and lse.dtype == np.dtype(dtype)
        np.testing.assert_allclose(_host(loss), want_loss, rtol=RTOL[dtype] * 4,
                                   atol=ATOL[dtype] * 4)
        np.testing.assert_allclose(_host(lse), want_lse, rtol=RTOL[dtype] * 4,
                                   atol=ATOL[dtype] * 4)
        for grad_loss in (cp.asarray(rng.uniform(0.5, 2, n).astype(dtype)),
                          cp.asarray(np.array(0.25, dtype)),
                          cp.asarray(rng.uniform(0.5, 2, 2 * n).astype(dtype))[::2],
                          cp.broadcast_to(cp.asarray(np.array(0.5, dtype)), (n,))):
            got = ck.cross_entropy_backward(logits, cp.asarray(t), lse, grad_loss, -100)
            h = cp.asnumpy(logits).astype(np.float64)
            p = np.exp(h - want_lse[:, None])
            onehot = np.zeros_like(p)
            keep = t != -100
            onehot[np.arange(n)[keep], t[keep]] = 1
            g = np.broadcast_to(cp.asnumpy(grad_loss).astype(np.float64), (n,))
            want = np.where(keep[:, None], (p - onehot) * g[:, None], 0.0)
            assert got.shape == (n, c) and got.dtype == np.dtype(dtype)
            np.testing.assert_allclose(_host(got), want, rtol=RTOL[dtype] * 4,
                                       atol=ATOL[dtype] * 4)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_at_nan_and_inf_matches_torch(dtype: str) -> None:
    import torch

    rows = [[0.0, np.inf, 1.0], [0.0, -np.inf, 1.0], [np.nan, 0.0, 1.0], [2.0, -np.inf, -np.inf],
            [np.inf, np.inf, 0.0]]
    target = [0, 1, 2, 1, 2]
    x = torch.tensor(rows, dtype=getattr(torch, dtype), requires_grad=True)
    want = torch.nn.functional.cross_entropy(x, torch.tensor(target), reduction="none")
    (want_grad,) = torch.autograd.grad(want.sum(), x)
    logits, t = cp.asarray(np.array(rows, dtype)), cp.asarray(np.array(target))
    loss, lse = ck.cross_entropy(logits, t, ignore_index=-100)
    got_grad = ck.cross_entropy_backward(logits, t, lse, cp.ones_like(loss), -100)
    np.testing.assert_allclose(_host(loss), want.detach().double().numpy(), rtol=1e-6,
                               equal_nan=True)
    np.testing.assert_allclose(_host(got_grad), want_grad.double().numpy(), rtol=1e-6,
                               atol=1e-7, equal_nan=True)
