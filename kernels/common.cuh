// common.cuh: element types, float16 conversion, math overloads and group reductions shared by
// every kernels/*.cu file.
// Loading: the Python loader (autograd_gpu/backends/cuda_kernels.py) pastes this text in place of
// the `#include "common.cuh"` line before NVRTC sees a file, so that CuPy's on-disk cache key (the
// source text) changes whenever this header does; nvcc (.ci/compile_kernels.sh) includes it.
// Uses no system header: NVRTC compiles it with the built-in device math only.
#ifndef AUTOGRAD_GPU_COMMON_CUH
#define AUTOGRAD_GPU_COMMON_CUH

// float16 is stored as its 16 raw bits and computed in float.
typedef unsigned short half_t;

__device__ __forceinline__ float half_to_float(half_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

__device__ __forceinline__ half_t float_to_half(float f) {
    half_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

// Elem<T>::acc is the type T is computed and accumulated in; load/store convert to and from it.
template <typename T>
struct Elem {
    typedef T acc;
    static __device__ __forceinline__ acc load(T v) { return v; }
    static __device__ __forceinline__ T store(acc v) { return v; }
};

template <>
struct Elem<half_t> {
    typedef float acc;
    static __device__ __forceinline__ float load(half_t v) { return half_to_float(v); }
    static __device__ __forceinline__ half_t store(float v) { return float_to_half(v); }
};

// Math overloads named m_*: one name for float and double, so templates need no dispatch.
#define AGPU_MATH1(name, ffn, dfn)                                                       \
    __device__ __forceinline__ float name(float x) { return ffn(x); }                  \
    __device__ __forceinline__ double name(double x) { return dfn(x); }
AGPU_MATH1(m_exp, expf, exp)
AGPU_MATH1(m_log, logf, log)
AGPU_MATH1(m_log1p, log1pf, log1p)
AGPU_MATH1(m_expm1, expm1f, expm1)
AGPU_MATH1(m_sqrt, sqrtf, sqrt)
AGPU_MATH1(m_rsqrt, rsqrtf, rsqrt)
AGPU_MATH1(m_sin, sinf, sin)
AGPU_MATH1(m_cos, cosf, cos)
AGPU_MATH1(m_tanh, tanhf, tanh)
AGPU_MATH1(m_erf, erff, erf)
AGPU_MATH1(m_floor, floorf, floor)
AGPU_MATH1(m_fabs, fabsf, fabs)
#undef AGPU_MATH1
__device__ __forceinline__ float m_pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double m_pow(double x, double y) { return pow(x, y); }
__device__ __forceinline__ float m_fmod(float x, float y) { return fmodf(x, y); }
__device__ __forceinline__ double m_fmod(double x, double y) { return fmod(x, y); }
__device__ __forceinline__ float m_copysign(float x, float y) { return copysignf(x, y); }
__device__ __forceinline__ double m_copysign(double x, double y) { return copysign(x, y); }

template <typename A>
__device__ __forceinline__ bool is_nan(A x) { return x != x; }

template <typename A>
__device__ __forceinline__ A inf_of();
template <>
__device__ __forceinline__ float inf_of<float>() { return __int_as_float(0x7f800000); }
template <>
__device__ __forceinline__ double inf_of<double>() {
    return __longlong_as_double(0x7ff0000000000000LL);
}

template <typename A>
__device__ __forceinline__ A nan_of();
template <>
__device__ __forceinline__ float nan_of<float>() { return __int_as_float(0x7fc00000); }
template <>
__device__ __forceinline__ double nan_of<double>() {
    return __longlong_as_double(0x7ff8000000000000LL);
}

// max/min that propagate NaN, as torch.maximum/torch.minimum and torch.max do.
template <typename A>
__device__ __forceinline__ A max_nan(A a, A b) { return (a > b || is_nan(a)) ? a : b; }
template <typename A>
__device__ __forceinline__ A min_nan(A a, A b) { return (a < b || is_nan(a)) ? a : b; }

// 64-bit grid-stride loop over [0, n).
#define AGPU_GRID_LOOP(i, n)                                                              \
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n);          \
         i += (long long)blockDim.x * gridDim.x)

// Group reduction: a "group" is the blockDim.x threads of one block row (threadIdx.y picks the
// row). blockDim.x is 32 (one warp per group, any blockDim.y) or a multiple of 32 up to 1024 with
// blockDim.y == 1. Every thread of the group gets the result. With blockDim.x > 32 it calls
// __syncthreads, so the whole block must reach it together.
enum ReduceCombine { COMBINE_SUM = 0, COMBINE_PROD = 1, COMBINE_MAX = 2, COMBINE_MIN = 3 };

template <typename A>
__device__ __forceinline__ A combine(int how, A a, A b) {
    switch (how) {
        case COMBINE_SUM: return a + b;
        case COMBINE_PROD: return a * b;
        case COMBINE_MAX: return max_nan(a, b);
        default: return min_nan(a, b);
    }
}

template <typename A>
__device__ __forceinline__ A warp_reduce(int how, A v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v = combine(how, v, __shfl_down_sync(0xffffffffu, v, offset));
    return __shfl_sync(0xffffffffu, v, 0);
}

template <typename A>
__device__ __forceinline__ A group_reduce(int how, A v) {
    v = warp_reduce(how, v);
    if (blockDim.x == 32) return v;
    __shared__ A partial[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = blockDim.x >> 5;
    __syncthreads();  // a previous call may still be reading `partial`
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = partial[0];
    for (int w = 1; w < warps; ++w) v = combine(how, v, partial[w]);
    return v;
}

#endif  // AUTOGRAD_GPU_COMMON_CUH
