// norm.cu: layer norm, RMS norm and group norm, forward and backward, for autograd_gpu.
// Types: T = float, double or half_t (float16 bits, computed and accumulated in float); see
// common.cuh. Statistics and sums are taken, and mean and rstd stored, in Elem<T>::acc (A).
// Layout: x (and grad, y, dx) C-contiguous, viewed as (O, P, S): P parameter positions (the
// weight and bias have shape (P,), contiguous) split into G groups of Cg = P / G, and S spatial
// positions per parameter. A "row" is one (o, g): the L = Cg * S contiguous elements from
// (o * G + g) * L, normalised together; rows = O * G. Element k of row r takes the parameters
// at p = (r % G) * Cg + k / S.
//   layer norm / RMS norm over the last dims: S = 1, G = 1, P = L (normalised size), O = rows.
//   group norm over (N, C, *spatial): O = N, P = C, S = prod(spatial), G = groups.
// rms != 0: no centring (mean taken as 0, mean pointer unused): y = x * rstd * w.
// w, b, mean (rms), pw, pb may be null pointers: no weight / no bias / gradient not wanted.
// Launch: norm_forward and norm_backward_input give each row to a group of blockDim.x threads
// (32 with any blockDim.y, or up to 1024 with blockDim.y == 1) and loop over rows grid-stride;
// norm_backward_params gives each (chunk, column) unit to one thread, a column j in [0, P * S)
// being the elements (o, j) for o in its chunk of [0, O) (neighbouring threads on neighbouring
// columns, so loads coalesce), and writes partial sums in acc at ((j / S) * splits + c) * S +
// j % S: a C-contiguous (P, splits * S) array the launcher sums over its last axis. Any grid
// size is correct.
// Numerics: two passes over the row (mean, then the mean of squared deviations), as the unfused
// path; rstd = 1 / sqrt(var + eps). An empty row (L == 0) gives NaN mean and rstd.
// Instantiated through RawModule name_expressions, e.g. "norm_forward<float>".
#include "common.cuh"

// Grid-stride loop over rows, one row per group (uniform across a group, as group_reduce needs).
// NOTE: softmax.cu's AGPU_ROW_LOOP under another name: each file is compiled on its own.
#define AGPU_NORM_ROW_LOOP(row, rows)                                                        \
    for (long long row = blockIdx.x * (long long)blockDim.y + threadIdx.y; row < (rows);     \
         row += (long long)gridDim.x * blockDim.y)

// Parameter index of element k of a row whose first parameter is p0.
__device__ __forceinline__ long long param_of(long long p0, long long k, long long S) {
    return S == 1 ? p0 + k : p0 + k / S;
}

template <typename T>
__global__ void norm_forward(const T* x, const T* w, const T* b, T* y,
                             typename Elem<T>::acc* mean_out, typename Elem<T>::acc* rstd_out,
                             long long rows, long long L, long long G, long long S,
                             double eps, int rms) {
    typedef typename Elem<T>::acc A;
    const long long Cg = L / (S > 0 ? S : 1);
    AGPU_NORM_ROW_LOOP(row, rows) {
        const T* xr = x + row * L;
        T* yr = y + row * L;
        A mean = A(0);
        if (!rms) {
            A s = A(0);
            for (long long k = threadIdx.x; k < L; k += blockDim.x) s += Elem<T>::load(xr[k]);
            mean = group_reduce(COMBINE_SUM, s) / A(L);
        }
        A q = A(0);
        for (long long k = threadIdx.x; k < L; k += blockDim.x) {
            const A d = Elem<T>::load(xr[k]) - mean;
            q += d * d;
        }
        const A rstd = A(1) / m_sqrt(group_reduce(COMBINE_SUM, q) / A(L) + A(eps));
        if (threadIdx.x == 0) {
            if (!rms) mean_out[row] = mean;
            rstd_out[row] = rstd;
        }
        const long long p0 = (row % G) * Cg;
        for (long long k = threadIdx.x; k < L; k += blockDim.x) {
            const long long p = param_of(p0, k, S);
            A v = (Elem<T>::load(xr[k]) - mean) * rstd;
            if (w) v *= Elem<T>::load(w[p]);
            if (b) v += Elem<T>::load(b[p]);
            yr[k] = Elem<T>::store(v);
        }
    }
}

// dx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)), gy = grad * w, xhat = (x - mean) * rstd;
// without the mean(gy) term for rms.
template <typename T>
__global__ void norm_backward_input(const T* x, const T* grad, const T* w,
                                    const typename Elem<T>::acc* mean,
                                    const typename Elem<T>::acc* rstd, T* dx, long long rows,
                                    long long L, long long G, long long S, int rms) {
    typedef typename Elem<T>::acc A;
    const long long Cg = L / (S > 0 ? S : 1);
    AGPU_NORM_ROW_LOOP(row, rows) {
        const long long base = row * L, p0 = (row % G) * Cg;
        const A m = rms ? A(0) : mean[row];
        const A r = rstd[row];
        A s_gy = A(0), s_gyx = A(0);
        for (long long k = threadIdx.x; k < L; k += blockDim.x) {
            A gy = Elem<T>::load(grad[base + k]);
            if (w) gy *= Elem<T>::load(w[param_of(p0, k, S)]);
            s_gy += gy;
            s_gyx += gy * (Elem<T>::load(x[base + k]) - m) * r;
        }
        const A inv_l = A(1) / A(L);
        const A c1 = rms ? A(0) : group_reduce(COMBINE_SUM, s_gy) * inv_l;
        const A c2 = group_reduce(COMBINE_SUM, s_gyx) * inv_l;
        for (long long k = threadIdx.x; k < L; k += blockDim.x) {
            A gy = Elem<T>::load(grad[base + k]);
            if (w) gy *= Elem<T>::load(w[param_of(p0, k, S)]);
            const A xhat = (Elem<T>::load(x[base + k]) - m) * r;
            dx[base + k] = Elem<T>::store(r * (gy - c1 - xhat * c2));
        }
    }
}

// Partial column sums: pw gets sum(grad * xhat), pb sum(grad), over the unit's chunk of O.
template <typename T>
__global__ void norm_backward_params(const T* x, const T* grad,
                                     const typename Elem<T>::acc* mean,
                                     const typename Elem<T>::acc* rstd,
                                     typename Elem<T>::acc* pw, typename Elem<T>::acc* pb,
                                     long long O, long long P, long long S, long long G,
                                     long long splits, long long chunk, int rms) {
    typedef typename Elem<T>::acc A;
    const long long cols = P * S, Cg = P / G;
    AGPU_GRID_LOOP(u, cols * splits) {
        const long long c = u / cols, j = u - c * cols;
        const long long p = S == 1 ? j : j / S, s = j - p * S;
        const long long g = p / Cg;
        const long long begin = c * chunk;
        const long long end = begin + chunk < O ? begin + chunk : O;
        A sw = A(0), sb = A(0);
        for (long long o = begin; o < end; ++o) {
            const long long at = o * cols + j, row = o * G + g;
            const A gr = Elem<T>::load(grad[at]);
            if (pw) {
                const A m = rms ? A(0) : mean[row];
                sw += gr * (Elem<T>::load(x[at]) - m) * rstd[row];
            }
            sb += gr;
        }
        const long long out = (p * splits + c) * S + s;
        if (pw) pw[out] = sw;
        if (pb) pb[out] = sb;
    }
}

#ifdef AUTOGRAD_GPU_COMPILE_CHECK
#define AGPU_INSTANTIATE(T)                                                                    \
    template __global__ void norm_forward<T>(const T*, const T*, const T*, T*, Elem<T>::acc*,  \
                                             Elem<T>::acc*, long long, long long, long long,   \
                                             long long, double, int);                          \
    template __global__ void norm_backward_input<T>(const T*, const T*, const T*,              \
                                                    const Elem<T>::acc*, const Elem<T>::acc*,  \
                                                    T*, long long, long long, long long,       \
                                                    long long, int);                           \
    template __global__ void norm_backward_params<T>(                                          \
        const T*, const T*, const Elem<T>::acc*, const Elem<T>::acc*, Elem<T>::acc*,           \
        Elem<T>::acc*, long long, long long, long long, long long, long long, long long, int);
AGPU_INSTANTIATE(float)
AGPU_INSTANTIATE(double)
AGPU_INSTANTIATE(half_t)
#undef AGPU_INSTANTIATE
#endif
