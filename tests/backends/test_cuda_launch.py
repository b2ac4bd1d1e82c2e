"""The launch path's caches (issue #18 item 4): kernel entries per (kernel, dtype, device),
elementwise plans per layout (``cuda_elementwise``), reduction plans (``cuda_reduce``), kept
scalars. A launch through a kept plan must be the launch the launcher works out from scratch
(``cuda_kernels.USE_PLANS = False``): same kernel, dtype, device, grid, block, the same array
pointers and the same scalar arguments bit for bit, and a result of the same shape, strides and
dtype (and the same values, where kernels run: a GPU, or the emulator under
AUTOGRAD_GPU_FAKE_CUDA=emulate). Under AUTOGRAD_GPU_FAKE_CUDA=1 the kernels are recorded, not
run. Without a CUDA device these skip.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from autograd_gpu.backends import cuda_elementwise as ce
from autograd_gpu.backends import cuda_kernels as ck
from autograd_gpu.backends import cuda_reduce as cr
from autograd_gpu.backends import cuda_support

CUDA = cuda_support.is_available()
pytestmark = pytest.mark.skipif(not CUDA, reason="no CUDA device (AUTOGRAD_GPU_FAKE_CUDA=1 or "
                                                 "=emulate gives one)")
if CUDA:
    import cupy as cp

    # kernels really run on a GPU and on the emulator; the plain stand-in only records them
    RUNS = not getattr(cp, "__autograd_gpu_fake__", False) or \
        getattr(cp, "__autograd_gpu_kernel_emulator__", False)


class _Recorder:
    """A kernel that records its launches (and runs the real one where kernels run)."""

    def __init__(self, name: str, dtype: str, device: int, real: Any, log: list[Any]) -> None:
        self.name, self.dtype, self.device, self.real, self.log = name, dtype, device, real, log

    def __call__(self, grid: Any, block: Any, args: Any, **kwargs: Any) -> None:
        self.log.append((self.name, self.dtype, self.device, tuple(grid), tuple(block),
                         tuple(args)))
        if self.real is not None:
            self.real(grid, block, args, **kwargs)


@pytest.fixture
def log(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The launches made while a test runs (the caches start empty, and end empty)."""
    launches: list[Any] = []
    real = ck.get_kernel

    def get_kernel(name: str, dtype: str) -> _Recorder:
        return _Recorder(name, dtype, ck._device(), real(name, dtype) if RUNS else None,
                         launches)

    monkeypatch.setattr(ck, "get_kernel", get_kernel)
    monkeypatch.setattr(ck, "USE_PLANS", True)
    ck.clear_caches()
    yield launches
    ck.clear_caches()


def _normal(launch: Any, known: dict[int, str]) -> tuple[Any, ...]:
    """A launch with arrays as the input they point into (``new`` for fresh ones) and scalars
    as (type, bytes)."""
    *head, args = launch
    out = []
    for a in args:
        if a is None:
            out.append(None)
        elif isinstance(a, cp.ndarray):
            out.append(known.get(a.data.ptr, "new") if a.size else "empty")
        elif isinstance(a, np.generic):
            out.append((a.dtype.str, a.tobytes()))
        else:
            out.append(("python", type(a).__name__, a))
    return (*head, tuple(out))


def _same_result(got: Any, want: Any, values: bool = True) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype
    assert got.strides == want.strides or got.size <= 1, (got.strides, want.strides)
    if RUNS and values:
        np.testing.assert_array_equal(cp.asnumpy(got), cp.asnumpy(want))


def _check(log: list[Any], fn: Callable[[], Any], *arrays: Any, values: bool = True) -> None:
    """``fn()`` through fresh plans and through kept ones launches as it does from scratch
    (``values``: and gives the same values, where kernels run)."""
    known = {a.data.ptr: f"input{k}" for k, a in enumerate(arrays) if a.size}
    del log[:]
    ck.USE_PLANS = False
    try:
        want = fn()
        reference = [_normal(x, known) for x in log]
    finally:
        ck.USE_PLANS = True
    for attempt in ("planning", "planned"):
        del log[:]
        got = fn()
        assert [_normal(x, known) for x in log] == reference, attempt
        _same_result(got, want, values)
        if isinstance(want, cp.ndarray) and any(want is a for a in arrays):
            assert any(got is a for a in arrays)


def _a(shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    return cp.asarray(rng.uniform(0.5, 2.0, shape).astype(dtype))


def _layouts(dtype: str) -> dict[str, tuple[Any, Any]]:
    """Operand pairs (x, y) of several layouts."""
    m, n = _a((3, 4), dtype, 1), _a((3, 4), dtype, 2)
    t = _a((4, 3), dtype, 3).T
    row, col = _a((4,), dtype, 4), _a((3, 1), dtype, 5)
    cube = _a((2, 3, 4), dtype, 6).transpose(2, 0, 1)
    wide = _a((3, 8), dtype, 7)
    return {
        "contiguous": (m, n), "transposed": (t, m), "both_transposed": (t, _a((4, 3), dtype).T),
        "row": (m, row), "outer": (col, row), "expanded": (cp.broadcast_to(row, (3, 4)), m),
        "sliced": (wide[:, ::2], m), "reversed": (m[::-1], n), "permuted": (cube, cube),
        "0-d": (_a((), dtype, 8), _a((), dtype, 9)), "0-d_and_matrix": (_a((), dtype), m),
        "empty": (_a((0, 4), dtype), row), "empty_both": (_a((0, 4), dtype), _a((0, 4), dtype)),
        "seven_dims": (_a((2,) * 7, dtype).transpose(6, 5, 4, 3, 2, 1, 0), _a((2,) * 7, dtype)),
    }


LAYOUTS = ("contiguous", "transposed", "both_transposed", "row", "outer", "expanded", "sliced",
           "reversed", "permuted", "0-d", "0-d_and_matrix", "empty", "empty_both", "seven_dims")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_elementwise_plans_launch_as_from_scratch(log: list[Any], layout: str,
                                                  dtype: str) -> None:
    layouts = _layouts(dtype)
    assert set(layouts) == set(LAYOUTS)
    x, y = layouts[layout]
    _check(log, lambda: ck.binary("mul", x, y), x, y)
    _check(log, lambda: ck.binary("sub", y, x, alpha=0.5), x, y)
    _check(log, lambda: ck.binary("gt", x, y), x, y)
    _check(log, lambda: ck.binary("add", x, 1.5), x)
    _check(log, lambda: ck.binary("mul", -0.0, y), y)  # the sign of a zero scalar stays
    _check(log, lambda: ck.binary("mul", y, 1e-8), y)
    _check(log, lambda: ck.unary("exp", x), x)
    _check(log, lambda: ck.unary("leaky_relu", y, 0.25), y)
    if x.shape == y.shape:
        _check(log, lambda: ck.unary_backward("tanh", x, y), x, y)
    cond = ck.binary("gt", x, 1.0) if RUNS else cp.asarray(cp.asnumpy(x) > 1.0)
    _check(log, lambda: ck.where(cond, x, y), cond, x, y)
    _check(log, lambda: ck.where(cond, 0.5, y), cond, y)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_out_plans_launch_as_from_scratch(log: list[Any], dtype: str) -> None:
    def fresh(shape: tuple[int, ...], seed: int = 0) -> Any:
        return _a(shape, dtype, seed)

    row = fresh((4,), 1)
    pair: list[Any] = []  # the out and the operand of the latest run

    def run(make_out: Callable[[], Any], operand: Callable[[Any], Any]) -> Any:
        # NOTE: each run writes into a fresh out (in place ops change what they read)
        out = make_out()
        pair[:] = [out, operand(out)]
        return ck.binary("add", out, pair[1], out=out)

    def known() -> dict[int, str]:
        return {pair[1].data.ptr: "operand", pair[0].data.ptr: "out"} if pair[0].size else {}

    for make_out, operand in [
        (lambda: fresh((3, 4)), lambda o: row),                        # C-contiguous, in place
        (lambda: fresh((4, 3)).T, lambda o: fresh((3, 4), 2)),         # permuted dense out
        (lambda: fresh((3, 8))[:, ::2], lambda o: row),                # out with gaps: buffered
        (lambda: fresh((4, 4)), lambda o: o.T),                        # x += x.T: buffered
        (lambda: fresh((4, 4)), lambda o: o),                          # x += x: in place
        (lambda: fresh((0, 4)), lambda o: row),                        # empty out
        (lambda: fresh(()), lambda o: fresh((), 3)),                   # 0-d
    ]:
        del log[:]
        ck.USE_PLANS = False
        try:
            want = run(make_out, operand)
            reference = [_normal(x, known()) for x in log]
        finally:
            ck.USE_PLANS = True
        for _ in range(2):
            del log[:]
            got = run(make_out, operand)
            assert got is pair[0]
            assert [_normal(x, known()) for x in log] == reference
            _same_result(got, want)
    out = fresh((3, 4))
    with pytest.raises(ValueError, match="broadcast"):
        ck.binary("add", out, fresh((5, 4)), out=fresh((3, 4)))
    with pytest.raises(ValueError, match="dtype"):
        ck.binary("add", out, out, out=cp.zeros((3, 4), "float16"))


def test_plans_are_kept_per_dtype_and_layout(log: list[Any]) -> None:
    # float32 every other element and float64 contiguous: the same shape and byte strides
    sliced = _a((16,), "float32")[::2]
    dense = _a((8,), "float64")
    assert sliced.strides == dense.strides
    _check(log, lambda: ck.unary("exp", sliced), sliced)
    assert log[-1][0] == "unary_strided" and log[-1][1] == "float32"
    _check(log, lambda: ck.unary("exp", dense), dense)
    assert log[-1][0] == "unary" and log[-1][1] == "float64"
    _check(log, lambda: ck.unary("exp", sliced), sliced)
    assert log[-1][0] == "unary_strided"


def test_plans_are_kept_per_device(log: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan made on one device never serves another: its kernel and grid (the device's SM
    count caps it) are that device's. Large arrays, so that the grid meets the cap. (The second
    device is simulated: kernels recorded, not run.)"""
    big, rows = _a((2**21,)), _a((2, 2**20))
    monkeypatch.setattr(ck, "get_kernel", lambda name, dtype: _Recorder(
        name, dtype, ck._device(), None, log))

    def launches() -> list[Any]:
        del log[:]
        for fn, arrays in ((lambda: ck.unary("exp", big), (big,)),
                           (lambda: ck.reduce("sum", big), (big,)),
                           (lambda: ck.reduce("sum", rows, 1), (rows,)),
                           (lambda: ck.binary("add", rows, big[:2**20]), (rows, big))):
            _check(log, fn, *arrays, values=False)  # the kept plan launches as from scratch
        return [x[:5] for x in log]

    first = launches()
    assert {x[2] for x in first} == {0}
    monkeypatch.setitem(ck._sm_counts, 1, 1)  # device 1: one SM
    monkeypatch.setattr(ck, "_get_device", lambda: 1)
    other = launches()
    assert {x[2] for x in other} == {1} and all(x[3][0] <= 32 for x in other)
    assert [x[3] for x in first] != [x[3] for x in other]
    monkeypatch.setattr(ck, "_get_device", lambda: 0)
    assert launches() == first


REDUCTIONS = [((3, 4, 5), None), ((3, 4, 5), 0), ((3, 4, 5), 1), ((3, 4, 5), 2),
              ((3, 4, 5), (0, 2)), ((3, 4, 5), (1, 2)), ((5,), 0), ((), None), ((3, 1), 1),
              ((0, 3), 0), ((0, 3), 1), ((1, 5000), 1), ((5000, 3), 0), ((2, 3), [0, 1])]


@pytest.mark.parametrize("shape,axis", REDUCTIONS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduction_plans_launch_as_from_scratch(log: list[Any], shape: tuple[int, ...],
                                                axis: Any, keepdims: bool) -> None:
    x = _a(shape)
    # a transposed array: read in place (results in or out of order) or copied first
    xt = _a(shape[::-1]).transpose(tuple(range(len(shape)))[::-1])
    for op in ("sum", "mean", "max"):
        if op == "max" and 0 in shape:
            continue
        for a in (x, xt):
            _check(log, lambda a=a, op=op: ck.reduce(op, a, axis, keepdims), a)


def test_kept_scalars_keep_their_value_and_sign() -> None:
    ce.clear_caches()
    for value in (1.5, -0.0, 0.0, 1e-8, 1e10, float("inf"), 3):
        for dtype in ("float16", "float32", "float64"):
            for opmath in (False, True):
                first = ce._scalar(value, dtype, opmath)
                again = ce._scalar(value, dtype, opmath)
                ce.clear_caches()
                fresh = ce._scalar(value, dtype, opmath)
                assert first.tobytes() == again.tobytes() == fresh.tobytes(), (value, dtype)
    assert np.signbit(ce._scalar(-0.0, "float32"))
    assert ce._scalar(1e-8, "float16").item() == 0.0
    assert ce._scalar(1e-8, "float16", True).item() != 0.0
    nan = ce._scalar(float("nan"), "float32")
    assert np.isnan(nan)


def test_reduction_key_takes_unhashable_axes(log: list[Any]) -> None:
    x = _a((2, 3))
    _check(log, lambda: cr.reduce("sum", x, [0, 1]), x)


def test_plans_keep_no_array_alive(log: list[Any]) -> None:
    import gc
    import weakref

    x, y = _a((3, 4)), _a((4,))
    out = _a((3, 4))
    ck.binary("add", x, y)
    ck.binary("mul", out, y, out=out)
    ck.reduce("sum", x, 1)
    refs = [weakref.ref(a) for a in (x, y, out)]
    del x, y, out, log[:]  # the log holds the launches' arguments
    gc.collect()
    assert all(r() is None for r in refs)
    assert ce._PLANS and cr._PLANS  # the plans are still there
