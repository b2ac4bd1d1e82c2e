// softmax.cu: softmax / log_softmax forward and backward, and fused cross-entropy, for
// autograd_gpu.
// Types: T = float, double or half_t (float16 bits, computed in float); see common.cuh.
// Layout: C-contiguous (outer, C, inner), normalising over C. *_rows kernels (inner == 1) give
// each row to a group of blockDim.x threads (32 with any blockDim.y, or up to 1024 with
// blockDim.y == 1) and loop over rows grid-stride; *_cols kernels (inner > 1) give each (o, i)
// column to one thread. cross_entropy_* read logits (N, C), int64 target (N,); the backward is a
// 1-D grid-stride loop over N * C. Any grid size is correct.
// Numerics: a running (max, sum of exp(x - max)) pair per thread, merged across the group, so a
// row is read twice (once to reduce, once to write). A row of -inf, or holding +inf or NaN,
// gives NaN, as torch.
// Instantiated through RawModule name_expressions, e.g. "softmax_rows<float>".
#include "common.cuh"

// Running softmax statistics: m the max seen, s = sum of exp(x - m).
template <typename A>
__device__ __forceinline__ void online_add(A& m, A& s, A x) {
    if (x > m) {
        // NOTE: a +inf max makes its own term exp(inf - inf) = NaN, so the row is NaN, as torch
        // (which subtracts the max and sums).
        s = s * m_exp(m - x) + (x == inf_of<A>() ? nan_of<A>() : A(1));
        m = x;
    } else if (x != -inf_of<A>()) {  // NOTE: -inf adds 0; exp(-inf - -inf) would be NaN
        s += m_exp(x - m);           // a NaN x lands here and makes s NaN
    }
}

template <typename A>
__device__ __forceinline__ void online_merge(A& m, A& s, A m2, A s2) {
    const A mm = m > m2 ? m : m2;
    if (mm == -inf_of<A>()) {
        s = s + s2;
    } else {
        s = s * m_exp(m - mm) + s2 * m_exp(m2 - mm);
    }
    m = mm;
}

// Merge (m, s) over the group; every thread gets the result (see group_reduce in common.cuh).
template <typename A>
__device__ __forceinline__ void group_max_sum(A& m, A& s) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const A m2 = __shfl_down_sync(0xffffffffu, m, offset);
        const A s2 = __shfl_down_sync(0xffffffffu, s, offset);
        online_merge(m, s, m2, s2);
    }
    m = __shfl_sync(0xffffffffu, m, 0);
    s = __shfl_sync(0xffffffffu, s, 0);
    if (blockDim.x == 32) return;
    __shared__ A pm[32], ps[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) {
        pm[warp] = m;
        ps[warp] = s;
    }
    __syncthreads();
    m = pm[0];
    s = ps[0];
    for (int w = 1; w < warps; ++w) online_merge(m, s, pm[w], ps[w]);
}

// Grid-stride loop over rows, one row per group (uniform across a group, as group_* need).
#define AGPU_ROW_LOOP(row, rows)                                                            \
    for (long long row = blockIdx.x * (long long)blockDim.y + threadIdx.y; row < (rows);     \
         row += (long long)gridDim.x * blockDim.y)

// NOTE: log_softmax is (x - max) - log(sum), never log(softmax): no log(0) for small p.
template <typename T>
__global__ void softmax_rows(const T* x, T* out, long long rows, long long C, int use_log) {
    typedef typename Elem<T>::acc A;
    AGPU_ROW_LOOP(row, rows) {
        const T* xr = x + row * C;
        T* yr = out + row * C;
        A m = -inf_of<A>(), s = A(0);
        for (long long k = threadIdx.x; k < C; k += blockDim.x)
            online_add(m, s, Elem<T>::load(xr[k]));
        group_max_sum(m, s);
        const A log_s = m_log(s);
        for (long long k = threadIdx.x; k < C; k += blockDim.x) {
            const A z = Elem<T>::load(xr[k]) - m;
            yr[k] = Elem<T>::store(use_log ? z - log_s : m_exp(z) / s);
        }
    }
}

template <typename T>
__global__ void softmax_cols(const T* x, T* out, long long outer, long long C, long long inner,
                             int use_log) {
    typedef typename Elem<T>::acc A;
    AGPU_GRID_LOOP(u, outer * inner) {
        const long long o = u / inner, i = u - o * inner;
        const T* xc = x + o * C * inner + i;
        T* yc = out + o * C * inner + i;
        A m = -inf_of<A>(), s = A(0);
        for (long long k = 0; k < C; ++k) online_add(m, s, Elem<T>::load(xc[k * inner]));
        const A log_s = m_log(s);
        for (long long k = 0; k < C; ++k) {
            const A z = Elem<T>::load(xc[k * inner]) - m;
            yc[k * inner] = Elem<T>::store(use_log ? z - log_s : m_exp(z) / s);
        }
    }
}

// softmax:     grad_x = out * (grad - sum(grad * out))
// log_softmax: grad_x = grad - exp(out) * sum(grad)
template <typename T>
__global__ void softmax_backward_rows(const T* out, const T* grad, T* grad_x, long long rows,
                                      long long C, int use_log) {
    typedef typename Elem<T>::acc A;
    AGPU_ROW_LOOP(row, rows) {
        const long long base = row * C;
        A dot = A(0);
        for (long long k = threadIdx.x; k < C; k += blockDim.x) {
            const A g = Elem<T>::load(grad[base + k]);
            dot += use_log ? g : g * Elem<T>::load(out[base + k]);
        }
        dot = group_reduce(COMBINE_SUM, dot);
        for (long long k = threadIdx.x; k < C; k += blockDim.x) {
            const A y = Elem<T>::load(out[base + k]), g = Elem<T>::load(grad[base + k]);
            grad_x[base + k] = Elem<T>::store(use_log ? g - m_exp(y) * dot : y * (g - dot));
        }
    }
}

template <typename T>
__global__ void softmax_backward_cols(const T* out, const T* grad, T* grad_x, long long outer,
                                      long long C, long long inner, int use_log) {
    typedef typename Elem<T>::acc A;
    AGPU_GRID_LOOP(u, outer * inner) {
        const long long o = u / inner, i = u - o * inner;
        const long long base = o * C * inner + i;
        A dot = A(0);
        for (long long k = 0; k < C; ++k) {
            const A g = Elem<T>::load(grad[base + k * inner]);
            dot += use_log ? g : g * Elem<T>::load(out[base + k * inner]);
        }
        for (long long k = 0; k < C; ++k) {
            const long long at = base + k * inner;
            const A y = Elem<T>::load(out[at]), g = Elem<T>::load(grad[at]);
            grad_x[at] = Elem<T>::store(use_log ? g - m_exp(y) * dot : y * (g - dot));
        }
    }
}

// Per row: lse = logsumexp(logits[row]); loss = lse - logits[row, target] (0 where target ==
// ignore_index, NaN where the target is out of [0, C)). lse is stored as T, like the loss.
template <typename T>
__global__ void cross_entropy_forward(const T* logits, const long long* target, T* loss, T* lse,
                                      long long N, long long C, long long ignore_index) {
    typedef typename Elem<T>::acc A;
    AGPU_ROW_LOOP(row, N) {
        const T* xr = logits + row * C;
        A m = -inf_of<A>(), s = A(0);
        for (long long k = threadIdx.x; k < C; k += blockDim.x)
            online_add(m, s, Elem<T>::load(xr[k]));
        group_max_sum(m, s);
        if (threadIdx.x == 0) {
            const A l = m + m_log(s);
            const long long t = target[row];
            A v = A(0);
            if (t != ignore_index)
                v = (t >= 0 && t < C) ? l - Elem<T>::load(xr[t]) : nan_of<A>();
            lse[row] = Elem<T>::store(l);
            loss[row] = Elem<T>::store(v);
        }
    }
}

// grad_logits[row, c] = (exp(logits - lse[row]) - (c == target[row])) * grad_loss[row], and 0
// on ignored rows. grad_loss is read with element stride grad_stride (0: one broadcast value).
template <typename T>
__global__ void cross_entropy_backward(const T* logits, const long long* target, const T* lse,
                                       const T* grad_loss, long long grad_stride, T* grad_logits,
                                       long long N, long long C, long long ignore_index) {
    typedef typename Elem<T>::acc A;
    AGPU_GRID_LOOP(i, N * C) {
        const long long row = i / C, c = i - row * C;
        const long long t = target[row];
        A v = A(0);
        if (t != ignore_index) {
            const A p = m_exp(Elem<T>::load(logits[i]) - Elem<T>::load(lse[row]));
            v = (p - (c == t ? A(1) : A(0))) * Elem<T>::load(grad_loss[row * grad_stride]);
        }
        grad_logits[i] = Elem<T>::store(v);
    }
}

#ifdef AUTOGRAD_GPU_COMPILE_CHECK
#define AGPU_INSTANTIATE(T)                                                                    \
    template __global__ void softmax_rows<T>(const T*, T*, long long, long long, int);         \
    template __global__ void softmax_cols<T>(const T*, T*, long long, long long, long long,    \
                                             int);                                             \
    template __global__ void softmax_backward_rows<T>(const T*, const T*, T*, long long,       \
                                                      long long, int);                         \
    template __global__ void softmax_backward_cols<T>(const T*, const T*, T*, long long,       \
                                                      long long, long long, int);              \
    template __global__ void cross_entropy_forward<T>(const T*, const long long*, T*, T*,      \
                                                      long long, long long, long long);        \
    template __global__ void cross_entropy_backward<T>(const T*, const long long*, const T*,   \
                                                       const T*, long long, T*, long long,     \
                                                       long long, long long);
AGPU_INSTANTIATE(float)
AGPU_INSTANTIATE(double)
AGPU_INSTANTIATE(half_t)
#undef AGPU_INSTANTIATE
#endif
