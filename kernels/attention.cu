// attention.cu: fused scaled-dot-product attention (flash-attention style), forward and
// backward, for autograd_gpu.
// Problem: for each batch entry n = (b, h) of B x H, query rows i < L (q: E wide), keys j < S
// (k: E wide, v: Ev wide): s_ij = scale * q_i . k_j + bias_ij, or -inf where keep_ij == 0 or,
// with causal, where j > i (PyTorch's top-left alignment, also for L != S); P = softmax_j(s);
// out_i = sum_j P_ij v_j. Never materialises an (L, S) array: K/V tiles stream through shared
// memory and the softmax is online (a running max and sum per row, rescaled as tiles come in).
// The forward writes out and the row log-sum-exp lse_i = max + log(sum); the backward
// recomputes P tile by tile as exp(s - lse), with delta_i = sum_d dout_id * out_id:
// dP = dout v^T, dS = P * (dP - delta), dq = scale * dS k, dk = scale * dS^T q, dv = P^T dout,
// dbias = dS (only when asked: grad_bias != nullptr). dk/dv: one block per key tile, looping
// over query tiles; dq: one block per query tile, looping over key tiles (no atomics, so the
// results are deterministic).
// A row with no key to attend (every s_ij == -inf) gets out 0 and lse +inf (so that the
// backward's exp(s - lse) is 0 there): the zeros of PyTorch's math path (_safe_softmax), with
// zero gradients. NaN or +inf scores make the row NaN, as softmax does.
// Types: T = float, double or half_t (float16 bits, computed in float); A = Elem<T>::acc.
// Layout: q, k, v, bias / keep (bytes, nonzero = attend), grad_out and out are addressed
// through element strides (batch b, head h, row, column); a stride of 0 broadcasts (masks).
// lse and delta are C-contiguous (B * H, L) arrays of A; grad_q (B*H, L, E), grad_k (B*H, S, E),
// grad_v (B*H, S, Ev) and grad_bias (B*H, L, S) are C-contiguous arrays of T.
// Head dims: E, Ev <= AttDims<A>::D (128; 64 for double, to fit 48 KiB of static shared memory).
// Launch: block (32, ATT_WARPS) = 128 threads; a 1-D grid-stride loop over work units (a tile
// of query rows or of keys of one (b, h)), so any grid size is correct. attention_delta takes
// any blockDim.y with blockDim.x == 32 (one warp per row).
// Instantiated through RawModule name_expressions, e.g. "attention_forward<float>".
#include "common.cuh"

#define ATT_WARPS 4     // warps per block
#define ATT_BN 32       // keys per tile: one per lane
#define ATT_FWD_ROWS 4  // query rows per warp in the forward (tiles of 16 rows)
#define ATT_BWD_ROWS 2  // query rows per warp in the backward (tiles of 8 rows)

template <typename A>
struct AttDims {
    enum { D = 128 };
};
template <>
struct AttDims<double> {
    enum { D = 64 };
};

// The masked, scaled score of one (row, key) pair; `at` is the pair's mask offset.
template <typename T, typename A>
__device__ __forceinline__ A att_score(A dot, A scale, const T* bias, const unsigned char* keep,
                                       long long at) {
    A s = dot * scale;
    if (bias) {
        s += Elem<T>::load(bias[at]);
    } else if (keep && !keep[at]) {
        s = -inf_of<A>();
    }
    return s;
}

// att_score where (row i, key j) is live (inside L x S, and on or below the diagonal with
// `causal`), else -inf; `live` says which.
template <typename T, typename A>
__device__ __forceinline__ A att_cell(A dot, A scale, const T* bias, const unsigned char* keep,
                                      long long at, long long i, long long j, long long L,
                                      long long S, int causal, bool& live) {
    live = i < L && j < S && !(causal && j > i);
    return live ? att_score(dot, scale, bias, keep, at) : -inf_of<A>();
}

// Load rows [r0, r0 + rows) x columns [0, cols) of a strided (row, column) matrix with `n`
// rows into shared memory `dst` (row pitch `pitch`), zeros past row n. Every thread of the
// block takes part.
template <typename T, typename A>
__device__ __forceinline__ void att_load(A* dst, int pitch, const T* src, long long sr,
                                         long long sc, long long r0, int rows, long long n,
                                         int cols) {
    const int tid = threadIdx.y * 32 + threadIdx.x, nt = blockDim.y * 32;
    for (int x = tid; x < rows * cols; x += nt) {
        const int r = x / cols, c = x - r * cols;
        dst[r * pitch + c] = r0 + r < n ? Elem<T>::load(src[(r0 + r) * sr + c * sc]) : A(0);
    }
}

// acc[t] += sum_{e < n} rows[warp + ATT_WARPS t][e] * col[e]: the lane's key (or value) row
// `col` against the warp's query rows (shared memory, row pitch `pitch`).
template <int R, typename A>
__device__ __forceinline__ void att_dots(A (&acc)[R], const A* rows, int pitch, const A* col,
                                         int n, int warp) {
    for (int e = 0; e < n; ++e) {
        const A c = col[e];
#pragma unroll
        for (int t = 0; t < R; ++t) acc[t] += rows[(warp + ATT_WARPS * t) * pitch + e] * c;
    }
}

// acc[t][c] += sum_{jj < rows} w_jj[t] * tile[jj][lane + 32 c] for columns < width: each lane
// holds one key's weight per row (w[t] of lane jj), broadcast by shuffles. Warp-uniform `rows`.
template <int R, int C, typename A>
__device__ __forceinline__ void att_add_rows(A (&acc)[R][C], const A (&w)[R], const A* tile,
                                             int pitch, int rows, int width, int lane) {
    for (int jj = 0; jj < rows; ++jj) {
        A wj[R];
#pragma unroll
        for (int t = 0; t < R; ++t) wj[t] = __shfl_sync(0xffffffffu, w[t], jj);
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const int d = lane + 32 * c;
            if (d < width) {
                const A x = tile[jj * pitch + d];
#pragma unroll
                for (int t = 0; t < R; ++t) acc[t][c] += wj[t] * x;
            }
        }
    }
}

template <typename T>
__global__ void attention_forward(
        const T* q, const T* k, const T* v, const T* bias, const unsigned char* keep, T* out,
        typename Elem<T>::acc* lse, long long B, long long H, long long L, long long S, int E,
        int Ev, long long qb, long long qh, long long ql, long long qe, long long kb,
        long long kh, long long ks, long long ke, long long vb, long long vh, long long vs,
        long long ve, long long mb, long long mh, long long ml, long long ms, long long ob,
        long long oh, long long ol, int causal, double scale_) {
    typedef typename Elem<T>::acc A;
    enum { D = AttDims<A>::D, R = ATT_FWD_ROWS, BM = ATT_WARPS * ATT_FWD_ROWS, C = D / 32 };
    __shared__ A sq[BM][D];
    __shared__ A sk[ATT_BN][D + 1];  // NOTE: +1: lane j reads row j, no bank conflicts
    __shared__ A sv[ATT_BN][D];
    const int lane = threadIdx.x, warp = threadIdx.y;
    const A scale = A(scale_), ninf = -inf_of<A>();
    const long long tiles = (L + BM - 1) / BM;
    for (long long u = blockIdx.x; u < B * H * tiles; u += gridDim.x) {
        const long long n = u / tiles, i0 = (u - n * tiles) * BM;
        const long long b = n / H, h = n - b * H;
        const T* qn = q + b * qb + h * qh;
        const T* kn = k + b * kb + h * kh;
        const T* vn = v + b * vb + h * vh;
        const long long mn_ = b * mb + h * mh;
        __syncthreads();  // the previous unit may still be reading sq, sk, sv
        att_load(&sq[0][0], D, qn, ql, qe, i0, BM, L, E);
        A m[R], l[R], o[R][C];
#pragma unroll
        for (int t = 0; t < R; ++t) {
            m[t] = ninf;
            l[t] = A(0);
#pragma unroll
            for (int c = 0; c < C; ++c) o[t][c] = A(0);
        }
        // NOTE: causal: rows of this tile see keys j <= i0 + BM - 1 only
        const long long j_end = causal && i0 + BM < S ? i0 + BM : S;
        for (long long j0 = 0; j0 < j_end; j0 += ATT_BN) {
            __syncthreads();
            att_load(&sk[0][0], D + 1, kn, ks, ke, j0, ATT_BN, S, E);
            att_load(&sv[0][0], D, vn, vs, ve, j0, ATT_BN, S, Ev);
            __syncthreads();
            const long long j = j0 + lane;
            A dot[R];
#pragma unroll
            for (int t = 0; t < R; ++t) dot[t] = A(0);
            att_dots(dot, &sq[0][0], D, &sk[lane][0], E, warp);
            A p[R];
#pragma unroll
            for (int t = 0; t < R; ++t) {
                const long long i = i0 + warp + ATT_WARPS * t;
                bool valid;
                const A s = att_cell(dot[t], scale, bias, keep, mn_ + i * ml + j * ms, i, j, L,
                                     S, causal, valid);
                const A m_new = max_nan(m[t], warp_reduce(COMBINE_MAX, s));
                p[t] = A(0);
                if (m_new == ninf) continue;  // NOTE: warp-uniform: nothing to attend yet
                const A alpha = m_exp(m[t] - m_new);  // 0 on the first live tile (m = -inf)
                p[t] = m_exp(s - m_new);
                l[t] = l[t] * alpha + warp_reduce(COMBINE_SUM, p[t]);
#pragma unroll
                for (int c = 0; c < C; ++c) o[t][c] *= alpha;
                m[t] = m_new;
            }
            const int jn = S - j0 < ATT_BN ? (int)(S - j0) : ATT_BN;
            att_add_rows(o, p, &sv[0][0], D, jn, Ev, lane);
        }
#pragma unroll
        for (int t = 0; t < R; ++t) {
            const long long i = i0 + warp + ATT_WARPS * t;
            if (i >= L) continue;
            // NOTE: l == 0: no key to attend, out 0 and lse +inf; a NaN l stays NaN
            const A inv = l[t] == A(0) ? A(0) : A(1) / l[t];
            T* orow = out + b * ob + h * oh + i * ol;
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const int d = lane + 32 * c;
                if (d < Ev) orow[d] = Elem<T>::store(o[t][c] * inv);
            }
            if (lane == 0) lse[n * L + i] = l[t] == A(0) ? inf_of<A>() : m[t] + m_log(l[t]);
        }
    }
}

// delta[n * L + i] = sum_d grad_out[b, h, i, d] * out[b, h, i, d]: one warp per row.
template <typename T>
__global__ void attention_delta(const T* out, const T* grad_out, typename Elem<T>::acc* delta,
                                long long B, long long H, long long L, int Ev, long long ob,
                                long long oh, long long ol, long long oe, long long gb,
                                long long gh, long long gl, long long ge) {
    typedef typename Elem<T>::acc A;
    for (long long row = blockIdx.x * (long long)blockDim.y + threadIdx.y; row < B * H * L;
         row += (long long)gridDim.x * blockDim.y) {
        const long long n = row / L, i = row - n * L, b = n / H, h = n - b * H;
        const T* orow = out + b * ob + h * oh + i * ol;
        const T* grow = grad_out + b * gb + h * gh + i * gl;
        A acc = A(0);
        for (int d = threadIdx.x; d < Ev; d += 32)
            acc += Elem<T>::load(orow[d * oe]) * Elem<T>::load(grow[d * ge]);
        acc = warp_reduce(COMBINE_SUM, acc);
        if (threadIdx.x == 0) delta[row] = acc;
    }
}

// grad_k, grad_v (and grad_bias): one block per tile of ATT_BN keys, over the query rows in
// tiles of ATT_WARPS * ATT_BWD_ROWS. Thread (lane, warp) owns key j0 + lane and the columns
// warp + ATT_WARPS * c of its dk and dv rows.
template <typename T>
__global__ void attention_backward_kv(
        const T* q, const T* k, const T* v, const T* bias, const unsigned char* keep,
        const T* grad_out, const typename Elem<T>::acc* lse, const typename Elem<T>::acc* delta,
        T* grad_k, T* grad_v, T* grad_bias, long long B, long long H, long long L, long long S,
        int E, int Ev, long long qb, long long qh, long long ql, long long qe, long long kb,
        long long kh, long long ks, long long ke, long long vb, long long vh, long long vs,
        long long ve, long long mb, long long mh, long long ml, long long ms, long long gb,
        long long gh, long long gl, long long ge, int causal, double scale_) {
    typedef typename Elem<T>::acc A;
    enum { D = AttDims<A>::D, R = ATT_BWD_ROWS, BM = ATT_WARPS * ATT_BWD_ROWS,
           CW = D / ATT_WARPS };
    __shared__ A sk[ATT_BN][D + 1];
    __shared__ A sv[ATT_BN][D + 1];
    __shared__ A sq[BM][D];
    __shared__ A sg[BM][D];
    __shared__ A sp[BM][ATT_BN + 1];
    __shared__ A sds[BM][ATT_BN + 1];
    __shared__ A slse[BM], sdelta[BM];
    const int lane = threadIdx.x, warp = threadIdx.y, tid = warp * 32 + lane;
    const A scale = A(scale_);
    const long long tiles = (S + ATT_BN - 1) / ATT_BN;
    for (long long u = blockIdx.x; u < B * H * tiles; u += gridDim.x) {
        const long long n = u / tiles, j0 = (u - n * tiles) * ATT_BN;
        const long long b = n / H, h = n - b * H;
        const T* qn = q + b * qb + h * qh;
        const T* gn = grad_out + b * gb + h * gh;
        const long long mn_ = b * mb + h * mh;
        __syncthreads();
        att_load(&sk[0][0], D + 1, k + b * kb + h * kh, ks, ke, j0, ATT_BN, S, E);
        att_load(&sv[0][0], D + 1, v + b * vb + h * vh, vs, ve, j0, ATT_BN, S, Ev);
        A dk[CW], dv[CW];
#pragma unroll
        for (int c = 0; c < CW; ++c) dk[c] = dv[c] = A(0);
        const long long j = j0 + lane;
        // NOTE: causal: rows i < j0 see none of these keys
        for (long long i0 = causal ? j0 / BM * BM : 0; i0 < L; i0 += BM) {
            __syncthreads();
            att_load(&sq[0][0], D, qn, ql, qe, i0, BM, L, E);
            att_load(&sg[0][0], D, gn, gl, ge, i0, BM, L, Ev);
            if (tid < BM) {
                slse[tid] = i0 + tid < L ? lse[n * L + i0 + tid] : inf_of<A>();
                sdelta[tid] = i0 + tid < L ? delta[n * L + i0 + tid] : A(0);
            }
            __syncthreads();
            A dot[R], dp[R];
#pragma unroll
            for (int t = 0; t < R; ++t) dot[t] = dp[t] = A(0);
            att_dots(dot, &sq[0][0], D, &sk[lane][0], E, warp);
            att_dots(dp, &sg[0][0], D, &sv[lane][0], Ev, warp);
#pragma unroll
            for (int t = 0; t < R; ++t) {
                const int r = warp + ATT_WARPS * t;
                const long long i = i0 + r;
                bool valid;
                const A s = att_cell(dot[t], scale, bias, keep, mn_ + i * ml + j * ms, i, j, L,
                                     S, causal, valid);
                const A p = valid ? m_exp(s - slse[r]) : A(0);
                const A ds = p * (dp[t] - sdelta[r]);
                sp[r][lane] = p;
                sds[r][lane] = ds;
                if (grad_bias && i < L && j < S)
                    grad_bias[(n * L + i) * S + j] = Elem<T>::store(ds);
            }
            __syncthreads();
            for (int r = 0; r < BM; ++r) {
                const A pr = sp[r][lane], dsr = sds[r][lane];
#pragma unroll
                for (int c = 0; c < CW; ++c) {
                    const int e = warp + ATT_WARPS * c;
                    if (e < Ev) dv[c] += pr * sg[r][e];
                    if (e < E) dk[c] += dsr * sq[r][e];
                }
            }
        }
        // NOTE: staged through shared memory so that the rows are written coalesced
        __syncthreads();
#pragma unroll
        for (int c = 0; c < CW; ++c) {
            const int e = warp + ATT_WARPS * c;
            if (e < E) sk[lane][e] = dk[c] * scale;
            if (e < Ev) sv[lane][e] = dv[c];
        }
        __syncthreads();
        const int jn = S - j0 < ATT_BN ? (int)(S - j0) : ATT_BN;
        for (int x = tid; x < jn * E; x += ATT_WARPS * 32) {
            const int jj = x / E, e = x - jj * E;
            grad_k[(n * S + j0 + jj) * E + e] = Elem<T>::store(sk[jj][e]);
        }
        for (int x = tid; x < jn * Ev; x += ATT_WARPS * 32) {
            const int jj = x / Ev, d = x - jj * Ev;
            grad_v[(n * S + j0 + jj) * Ev + d] = Elem<T>::store(sv[jj][d]);
        }
    }
}

// grad_q: one block per tile of ATT_WARPS * ATT_BWD_ROWS query rows, over the key tiles; each
// warp takes its rows, lane j the key j0 + j for the scores and column lane + 32 c of dq.
template <typename T>
__global__ void attention_backward_q(
        const T* q, const T* k, const T* v, const T* bias, const unsigned char* keep,
        const T* grad_out, const typename Elem<T>::acc* lse, const typename Elem<T>::acc* delta,
        T* grad_q, long long B, long long H, long long L, long long S, int E, int Ev,
        long long qb, long long qh, long long ql, long long qe, long long kb, long long kh,
        long long ks, long long ke, long long vb, long long vh, long long vs, long long ve,
        long long mb, long long mh, long long ml, long long ms, long long gb, long long gh,
        long long gl, long long ge, int causal, double scale_) {
    typedef typename Elem<T>::acc A;
    enum { D = AttDims<A>::D, R = ATT_BWD_ROWS, BM = ATT_WARPS * ATT_BWD_ROWS, C = D / 32 };
    __shared__ A sq[BM][D];
    __shared__ A sg[BM][D];
    __shared__ A sk[ATT_BN][D + 1];
    __shared__ A sv[ATT_BN][D + 1];
    const int lane = threadIdx.x, warp = threadIdx.y;
    const A scale = A(scale_);
    const long long tiles = (L + BM - 1) / BM;
    for (long long u = blockIdx.x; u < B * H * tiles; u += gridDim.x) {
        const long long n = u / tiles, i0 = (u - n * tiles) * BM;
        const long long b = n / H, h = n - b * H;
        const T* kn = k + b * kb + h * kh;
        const T* vn = v + b * vb + h * vh;
        const long long mn_ = b * mb + h * mh;
        __syncthreads();
        att_load(&sq[0][0], D, q + b * qb + h * qh, ql, qe, i0, BM, L, E);
        att_load(&sg[0][0], D, grad_out + b * gb + h * gh, gl, ge, i0, BM, L, Ev);
        A row_lse[R], row_delta[R], dq[R][C];
#pragma unroll
        for (int t = 0; t < R; ++t) {
            const long long i = i0 + warp + ATT_WARPS * t;
            row_lse[t] = i < L ? lse[n * L + i] : inf_of<A>();
            row_delta[t] = i < L ? delta[n * L + i] : A(0);
#pragma unroll
            for (int c = 0; c < C; ++c) dq[t][c] = A(0);
        }
        const long long j_end = causal && i0 + BM < S ? i0 + BM : S;
        for (long long j0 = 0; j0 < j_end; j0 += ATT_BN) {
            __syncthreads();
            att_load(&sk[0][0], D + 1, kn, ks, ke, j0, ATT_BN, S, E);
            att_load(&sv[0][0], D + 1, vn, vs, ve, j0, ATT_BN, S, Ev);
            __syncthreads();
            const long long j = j0 + lane;
            A dot[R], dp[R];
#pragma unroll
            for (int t = 0; t < R; ++t) dot[t] = dp[t] = A(0);
            att_dots(dot, &sq[0][0], D, &sk[lane][0], E, warp);
            att_dots(dp, &sg[0][0], D, &sv[lane][0], Ev, warp);
            A ds[R];
#pragma unroll
            for (int t = 0; t < R; ++t) {
                const long long i = i0 + warp + ATT_WARPS * t;
                bool valid;
                const A s = att_cell(dot[t], scale, bias, keep, mn_ + i * ml + j * ms, i, j, L,
                                     S, causal, valid);
                const A p = valid ? m_exp(s - row_lse[t]) : A(0);
                ds[t] = p * (dp[t] - row_delta[t]);
            }
            const int jn = S - j0 < ATT_BN ? (int)(S - j0) : ATT_BN;
            att_add_rows(dq, ds, &sk[0][0], D + 1, jn, E, lane);
        }
#pragma unroll
        for (int t = 0; t < R; ++t) {
            const long long i = i0 + warp + ATT_WARPS * t;
            if (i >= L) continue;
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const int e = lane + 32 * c;
                if (e < E) grad_q[(n * L + i) * E + e] = Elem<T>::store(dq[t][c] * scale);
            }
        }
    }
}

#ifdef AUTOGRAD_GPU_COMPILE_CHECK
#define AGPU_LL long long
#define AGPU_STRIDES4 AGPU_LL, AGPU_LL, AGPU_LL, AGPU_LL
#define AGPU_INSTANTIATE(T)                                                                    \
    template __global__ void attention_forward<T>(                                            \
        const T*, const T*, const T*, const T*, const unsigned char*, T*, Elem<T>::acc*,      \
        AGPU_LL, AGPU_LL, AGPU_LL, AGPU_LL, int, int, AGPU_STRIDES4, AGPU_STRIDES4,           \
        AGPU_STRIDES4, AGPU_STRIDES4, AGPU_LL, AGPU_LL, AGPU_LL, int, double);                \
    template __global__ void attention_delta<T>(const T*, const T*, Elem<T>::acc*, AGPU_LL,   \
                                                AGPU_LL, AGPU_LL, int, AGPU_STRIDES4,         \
                                                AGPU_STRIDES4);                               \
    template __global__ void attention_backward_kv<T>(                                        \
        const T*, const T*, const T*, const T*, const unsigned char*, const T*,               \
        const Elem<T>::acc*, const Elem<T>::acc*, T*, T*, T*, AGPU_LL, AGPU_LL, AGPU_LL,      \
        AGPU_LL, int, int, AGPU_STRIDES4, AGPU_STRIDES4, AGPU_STRIDES4, AGPU_STRIDES4,        \
        AGPU_STRIDES4, int, double);                                                           \
    template __global__ void attention_backward_q<T>(                                         \
        const T*, const T*, const T*, const T*, const unsigned char*, const T*,               \
        const Elem<T>::acc*, const Elem<T>::acc*, T*, AGPU_LL, AGPU_LL, AGPU_LL, AGPU_LL, int, \
        int, AGPU_STRIDES4, AGPU_STRIDES4, AGPU_STRIDES4, AGPU_STRIDES4, AGPU_STRIDES4, int,  \
        double);
AGPU_INSTANTIATE(float)
AGPU_INSTANTIATE(double)
AGPU_INSTANTIATE(half_t)
#undef AGPU_INSTANTIATE
#undef AGPU_STRIDES4
#undef AGPU_LL
#endif
