"""The CPU kernel emulator finds what it is for: writes and reads outside arrays, kernels that
rely on the grid size, barriers some threads miss, missing barriers, argument lists that do not
match the C signature; and it runs correct kernels (grid-stride loops, warp shuffles, float16
conversions) correctly. Runs in every mode where g++ is present, on tests/fake_cupy arrays,
without installing the fake."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests import kernel_emulator
from tests.fake_cupy import _cupy as fake
from tests.kernel_emulator import _build

pytestmark = pytest.mark.skipif(not kernel_emulator.available(),
                                reason=kernel_emulator.unavailable_reason())

SOURCE = r"""
typedef unsigned short half_t;

__device__ __forceinline__ half_t f2h(float f) {
    half_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

__device__ __forceinline__ float h2f(half_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

#define GRID_LOOP(i, n) \
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); \
         i += (long long)blockDim.x * gridDim.x)

template <typename T>
__global__ void scale(const T* x, T* out, long long n, double a) {
    GRID_LOOP(i, n) out[i] = T(a) * x[i];
}

__global__ void to_half_and_back(const float* x, half_t* h, float* back, long long n) {
    GRID_LOOP(i, n) {
        h[i] = f2h(x[i]);
        back[i] = h2f(h[i]);
    }
}

__global__ void write_past_end(float* out, long long n) {
    GRID_LOOP(i, n + 1) out[i] = 1.0f;
}

__global__ void read_past_end(const float* x, float* out, long long n) {
    GRID_LOOP(i, n) out[i] = x[i + 1];
}

__global__ void one_per_thread(float* out, long long n) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f;
}

__global__ void writes_its_input(const float* x) {
    const_cast<float*>(x)[threadIdx.x] = 0.0f;
}

__global__ void warp_sums(const float* x, float* out) {
    float v = x[threadIdx.x];
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    v = __shfl_sync(0xffffffffu, v, 0);
    out[threadIdx.x] = v;
}

__global__ void shuffle_after_exit(const float* x, float* out) {
    if (threadIdx.x == 3) return;
    out[threadIdx.x] = __shfl_sync(0xffffffffu, x[threadIdx.x], 0);
}

__global__ void sync_in_branch(float* out) {
    if (threadIdx.x < 64) __syncthreads();
    out[threadIdx.x] = 1.0f;
}

__global__ void two_barriers(float* out) {
    if (threadIdx.x & 1)
        __syncthreads();
    else
        __syncthreads();
    out[threadIdx.x] = 1.0f;
}

// Block sums of two rows, one after the other, through one shared array: without the first
// barrier a warp may overwrite its partial sum before another warp has read the previous one.
__global__ void block_sums(const float* x, float* out, int sync) {
    __shared__ float partial[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int row = 0; row < 2; ++row) {
        float v = x[row * blockDim.x + threadIdx.x];
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (sync) __syncthreads();
        if (lane == 0) partial[warp] = v;
        __syncthreads();
        float total = 0.0f;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) total += partial[w];
        out[row * blockDim.x + threadIdx.x] = total;
    }
}

__global__ void rotate(const float* x, float* out, int sync) {
    __shared__ float s[256];
    s[threadIdx.x] = x[threadIdx.x];
    if (sync) __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}
"""

NAMES = ["scale<float>", "scale<double>", "to_half_and_back", "write_past_end", "read_past_end",
         "one_per_thread", "writes_its_input", "warp_sums", "shuffle_after_exit",
         "sync_in_branch", "two_barriers", "block_sums", "rotate"]

_module: list[Any] = []


def kernel(name: str) -> Any:
    if not _module:
        _module.append(kernel_emulator.RawModule(code=SOURCE, name_expressions=NAMES))
    return _module[0].get_function(name)


def dev(values: Any, dtype: Any = np.float32) -> Any:
    return fake.asarray(np.asarray(values, dtype))


def test_a_grid_stride_kernel_gives_the_same_result_for_any_grid() -> None:
    x = np.random.default_rng(0).uniform(-1, 1, 5000)
    for dtype, name in ((np.float32, "scale<float>"), (np.float64, "scale<double>")):
        for grid in (1, 3, 40):
            out = kernel_emulator.cupy_with_kernels(fake).empty(5000, dtype)
            kernel(name)((grid,), (256,), (dev(x, dtype), out, np.int64(5000), np.float64(0.5)))
            np.testing.assert_allclose(out.get(), (0.5 * x).astype(dtype))
    # in place, and into a view of the same buffer: aliasing survives the staging of arrays
    y = dev(x)
    kernel("scale<float>")((2,), (256,), (y, y, np.int64(5000), np.float64(2.0)))
    np.testing.assert_array_equal(y.get(), 2 * x.astype(np.float32))
    kernel("scale<float>")((2,), (256,), (y[:2500], y[2500:], np.int64(2500), np.float64(1.0)))
    np.testing.assert_array_equal(y.get()[2500:], 2 * x.astype(np.float32)[:2500])


def test_float16_conversions_round_to_nearest_even_as_the_ptx() -> None:
    x = np.array([0.0, -0.0, 1.0, 1.0 + 2**-11, 1.0 + 3 * 2**-11, 65504.0, 65520.0, 1e-7, 6e-8,
                  -3.14159, np.inf, -np.inf, np.nan], np.float32)
    h, back = fake.empty(x.size, np.float16), fake.empty(x.size, np.float32)
    kernel("to_half_and_back")((1,), (32,), (dev(x), h, back, np.int64(x.size)))
    with np.errstate(over="ignore"):  # 65520 rounds up to inf, as in PTX
        want = x.astype(np.float16)
    np.testing.assert_array_equal(h.get(), want)
    np.testing.assert_array_equal(back.get(), want.astype(np.float32))


def test_writes_outside_an_array_are_reported() -> None:
    with pytest.raises(kernel_emulator.LaunchError, match="wrote outside an array"):
        kernel("write_past_end")((1,), (64,), (fake.zeros(10, np.float32), np.int64(10)))


def test_reads_outside_an_array_give_nan() -> None:
    out = fake.zeros(10, np.float32)
    kernel("read_past_end")((1,), (32,), (dev(np.arange(10)), out, np.int64(10)))
    got = out.get()
    assert got[:9].tolist() == list(range(1, 10)) and np.isnan(got[9])


def test_the_grid_cap_catches_kernels_that_need_the_whole_grid(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTOGRAD_GPU_EMULATOR_MAX_BLOCKS", "4")
    out = kernel_emulator.cupy_with_kernels(fake).empty(4096, np.float32)  # poisoned: NaN
    kernel("one_per_thread")((16,), (256,), (out, np.int64(4096)))
    got = out.get()
    assert (got[:1024] == 2.0).all() and np.isnan(got[1024:]).all()


def test_writes_through_a_const_pointer_are_reported() -> None:
    with pytest.raises(kernel_emulator.LaunchError, match="only through const pointers"):
        kernel("writes_its_input")((1,), (32,), (dev(np.ones(32)),))


def test_warp_shuffles_reduce_each_warp() -> None:
    x = np.arange(128, dtype=np.float32)
    out = fake.zeros(128, np.float32)
    kernel("warp_sums")((1,), (128,), (dev(x), out))
    want = np.repeat(x.reshape(4, 32).sum(axis=1), 32)
    np.testing.assert_array_equal(out.get(), want)


@pytest.mark.parametrize("name, args, message", [
    ("shuffle_after_exit", "x, out", "lanes wait at the shuffle .* lane 3 has exited"),
    ("sync_in_branch", "out", "__syncthreads at line .*: 64 of 256 threads wait there"),
    ("two_barriers", "out", "wait at different __syncthreads"),
])
def test_barriers_that_not_every_thread_meets_are_reported(name: str, args: str,
                                                           message: str) -> None:
    x, out = dev(np.ones(256)), fake.zeros(256, np.float32)
    values = tuple({"x": x, "out": out}[a] for a in args.split(", "))
    with pytest.raises(kernel_emulator.LaunchError, match=message):
        kernel(name)((1,), (256,), values)


def test_a_missing_barrier_changes_the_result() -> None:
    x = np.random.default_rng(1).uniform(1, 2, 256).astype(np.float32)
    out = fake.zeros(256, np.float32)
    kernel("rotate")((1,), (256,), (dev(x), out, np.int32(1)))
    np.testing.assert_array_equal(out.get(), np.roll(x, -1))
    x2 = x + 1
    kernel("rotate")((1,), (256,), (dev(x2), out, np.int32(0)))
    assert (out.get() != np.roll(x2, -1)).any()  # threads ran before their neighbour wrote


def test_a_missing_barrier_between_warps_changes_the_result() -> None:
    x = np.random.default_rng(2).integers(1, 9, (2, 256)).astype(np.float32)
    want = np.repeat(x.sum(axis=1), 256)
    out = fake.zeros(512, np.float32)
    kernel("block_sums")((1,), (256,), (dev(x), out, np.int32(1)))
    np.testing.assert_array_equal(out.get(), want)
    kernel("block_sums")((1,), (256,), (dev(x), out, np.int32(0)))
    assert (out.get() != want).any()  # a warp ran ahead into the second row


@pytest.mark.parametrize("args, error, message", [
    ((1, "out", np.int64(4), np.float64(1)), TypeError, "Unsupported type"),
    (("x", "out", 4, np.float64(1)), kernel_emulator.LaunchError, "untyped Python int"),
    (("x", "out", np.int32(4), np.float64(1)), kernel_emulator.LaunchError, "got int32"),
    (("x", "out", np.int64(4), np.float32(1)), kernel_emulator.LaunchError, "got float32"),
    (("x", "out", np.float64(4), np.float64(1)), kernel_emulator.LaunchError, "got float64"),
    (("x64", "out", np.int64(4), np.float64(1)), kernel_emulator.LaunchError, "float64 array"),
    (("host", "out", np.int64(4), np.float64(1)), TypeError, "numpy.ndarray"),
    (("x", "out", np.int64(4)), kernel_emulator.LaunchError, "3 arguments for 4 parameters"),
])
def test_arguments_must_match_the_c_signature(args: tuple[Any, ...], error: type,
                                              message: str) -> None:
    named = {"x": dev(np.ones(4)), "out": fake.zeros(4, np.float32),
             "x64": dev(np.ones(4), np.float64), "host": np.ones(4, np.float32)}
    values = tuple(named[a] if isinstance(a, str) else a for a in args)
    with pytest.raises(error, match=message):
        kernel("scale<float>")((1,), (32,), values)


def test_launch_shapes_outside_cuda_limits_are_refused() -> None:
    args = (dev(np.ones(4)), fake.zeros(4, np.float32), np.int64(4), np.float64(1))
    for grid, block in [((0,), (32,)), ((1,), (2048,)), ((1,), (64, 32)), ((1,), (48,))]:
        with pytest.raises((kernel_emulator.LaunchError, TypeError)):
            kernel("scale<float>")(grid, block, args)


def test_unknown_inline_ptx_is_refused() -> None:
    with pytest.raises(kernel_emulator.CompileError, match="does not know"):
        _build.translate('int f() { int x; asm("mov.u32 %0, %1;" : "=r"(x) : "r"(1)); }', [])


def test_the_fake_cupy_stays_as_it_was() -> None:
    emulated = kernel_emulator.cupy_with_kernels(fake)
    assert emulated.__autograd_gpu_fake__ and emulated.__autograd_gpu_kernel_emulator__
    assert emulated.ndarray is fake.ndarray and emulated.cuda is fake.cuda
    assert emulated.RawModule is kernel_emulator.RawModule
    assert fake.RawModule is not kernel_emulator.RawModule
    assert not getattr(fake, "__autograd_gpu_kernel_emulator__", False)
    assert np.isnan(emulated.empty(3, np.float32).get()).all()
    assert float(emulated.exp(emulated.zeros(1)).sum()) == 1.0
