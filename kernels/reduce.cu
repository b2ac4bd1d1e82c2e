// reduce.cu: sum, mean, max, min, prod, logsumexp and argmax/argmin reductions for autograd_gpu.
// Types: T = float, double or half_t (float16 bits, accumulated in float); see common.cuh.
// Layout: the wrapper views the input as a C-contiguous (outer, r, inner) array and reduces r:
// an output item is (o, i), at item = o * inner + i. Each item's r is cut into `splits` chunks of
// `chunk` elements (the last may be shorter, none is empty) so that a few long reductions still
// fill the GPU. splits == 1 writes the final T output; splits > 1 writes one partial per (item,
// chunk) at partial[item * splits + c], which reduce_finish (or arg_reduce_rows with xidx) then
// reduces as a (items, splits) array.
// Launch: *_rows kernels give each (item, chunk) unit to a group of blockDim.x threads (32 with
// any blockDim.y, or up to 1024 with blockDim.y == 1) and loop over units grid-stride; *_cols
// kernels (inner > 1) give each unit to one thread, neighbouring threads on neighbouring columns
// so loads coalesce. Any grid size is correct.
// Op codes: ReduceOp below (the order of _REDUCE_CODES in cuda_kernels.py). logsumexp reads the
// items' max in `shift` (a first R_MAX pass) and sums exp(x - shift); non-finite maxima shift by 0.
// NaN propagates through max/min; argmax/argmin take the first NaN, else the first extreme.
// Instantiated through RawModule name_expressions, e.g. "reduce_rows<float>".
#include "common.cuh"

enum ReduceOp { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_LOGSUMEXP };

__device__ __forceinline__ int combine_of(int op) {
    switch (op) {
        case R_MAX: return COMBINE_MAX;
        case R_MIN: return COMBINE_MIN;
        case R_PROD: return COMBINE_PROD;
        default: return COMBINE_SUM;  // sum, mean, and logsumexp's sum of exponentials
    }
}

template <typename A>
__device__ __forceinline__ A identity_of(int op) {
    switch (op) {
        case R_MAX: return -inf_of<A>();
        case R_MIN: return inf_of<A>();
        case R_PROD: return A(1);
        default: return A(0);
    }
}

// NOTE: logsumexp subtracts the item's max before exp (no overflow). An all -inf item shifts
// by 0 and gives log(0) = -inf, an item holding +inf gives inf, one holding NaN gives NaN.
template <typename T>
__device__ __forceinline__ typename Elem<T>::acc load_shift(int op, const T* shift,
                                                            long long item) {
    typedef typename Elem<T>::acc A;
    if (op != R_LOGSUMEXP) return A(0);
    const A m = Elem<T>::load(shift[item]);
    return (m - m == A(0)) ? m : A(0);  // m finite
}

template <typename A>
__device__ __forceinline__ A finalize(int op, A v, A shift, A scale) {
    if (op == R_MEAN) return v * scale;
    if (op == R_LOGSUMEXP) return m_log(v) + shift;
    return v;
}

// One (item, chunk) unit per group; In is T for a first pass, acc for reduce_finish (finishing:
// the values are partials, already exponentiated for logsumexp).
template <typename In, typename T>
__device__ __forceinline__ void reduce_rows_body(const In* x, T* out,
                                                 typename Elem<T>::acc* partial, const T* shift,
                                                 long long items, long long r, long long splits,
                                                 long long chunk, int op, double scale,
                                                 bool finishing) {
    typedef typename Elem<T>::acc A;
    const int how = combine_of(op);
    const A ident = identity_of<A>(op);
    const bool take_exp = op == R_LOGSUMEXP && !finishing;
    const long long units = items * splits;
    for (long long u = blockIdx.x * (long long)blockDim.y + threadIdx.y; u < units;
         u += (long long)gridDim.x * blockDim.y) {
        const long long item = u / splits, c = u - item * splits;
        const long long begin = c * chunk;
        const long long end = begin + chunk < r ? begin + chunk : r;
        const A sh = load_shift(op, shift, item);
        const In* row = x + item * r;
        A v = ident;
#pragma unroll 4
        for (long long k = begin + threadIdx.x; k < end; k += blockDim.x) {
            const A e = Elem<In>::load(row[k]);
            v = combine(how, v, take_exp ? m_exp(e - sh) : e);
        }
        v = group_reduce(how, v);
        if (threadIdx.x == 0) {
            if (splits == 1)
                out[item] = Elem<T>::store(finalize(op, v, sh, A(scale)));
            else
                partial[u] = v;
        }
    }
}

template <typename T>
__global__ void reduce_rows(const T* x, T* out, typename Elem<T>::acc* partial, const T* shift,
                            long long items, long long r, long long splits, long long chunk,
                            int op, double scale) {
    reduce_rows_body<T, T>(x, out, partial, shift, items, r, splits, chunk, op, scale, false);
}

// Second pass: (items, splits) partials -> T output; call with r = the first pass's splits,
// splits = 1, chunk = r.
template <typename T>
__global__ void reduce_finish(const typename Elem<T>::acc* x, T* out, const T* shift,
                              long long items, long long r, int op, double scale) {
    reduce_rows_body<typename Elem<T>::acc, T>(x, out, nullptr, shift, items, r, 1, r, op,
                                               scale, true);
}

template <typename T>
__global__ void reduce_cols(const T* x, T* out, typename Elem<T>::acc* partial, const T* shift,
                            long long outer, long long r, long long inner, long long splits,
                            long long chunk, int op, double scale) {
    typedef typename Elem<T>::acc A;
    const int how = combine_of(op);
    const A ident = identity_of<A>(op);
    const long long units = outer * inner * splits;
    AGPU_GRID_LOOP(u, units) {
        const long long i = u % inner, rest = u / inner;  // unit order (o, c, i), i fastest
        const long long c = rest % splits, o = rest / splits;
        const long long item = o * inner + i;
        const long long begin = c * chunk;
        const long long end = begin + chunk < r ? begin + chunk : r;
        const A sh = load_shift(op, shift, item);
        const T* col = x + o * r * inner + i;
        A v = ident;
#pragma unroll 4
        for (long long k = begin; k < end; ++k) {
            const A e = Elem<T>::load(col[k * inner]);
            v = combine(how, v, op == R_LOGSUMEXP ? m_exp(e - sh) : e);
        }
        if (splits == 1)
            out[item] = Elem<T>::store(finalize(op, v, sh, A(scale)));
        else
            partial[item * splits + c] = v;
    }
}

// ---- argmax / argmin: (value, index) pairs ----

// Is (w, j) a better candidate than (v, i)? NaN beats numbers; ties go to the lower index.
template <typename A>
__device__ __forceinline__ bool arg_better(bool is_max, A v, long long i, A w, long long j) {
    const bool nv = is_nan(v), nw = is_nan(w);
    if (nv || nw) return nw && (!nv || j < i);
    if (w == v) return j < i;
    return is_max ? w > v : w < v;
}

template <typename A>
__device__ __forceinline__ void group_arg_reduce(bool is_max, A& v, long long& i) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const A w = __shfl_down_sync(0xffffffffu, v, offset);
        const long long j = __shfl_down_sync(0xffffffffu, i, offset);
        if (arg_better(is_max, v, i, w, j)) {
            v = w;
            i = j;
        }
    }
    v = __shfl_sync(0xffffffffu, v, 0);
    i = __shfl_sync(0xffffffffu, i, 0);
    if (blockDim.x == 32) return;
    __shared__ A pv[32];
    __shared__ long long pi[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warps = blockDim.x >> 5;
    __syncthreads();
    if (lane == 0) {
        pv[warp] = v;
        pi[warp] = i;
    }
    __syncthreads();
    v = pv[0];
    i = pi[0];
    for (int w = 1; w < warps; ++w)
        if (arg_better(is_max, v, i, pv[w], pi[w])) {
            v = pv[w];
            i = pi[w];
        }
}

#define AGPU_NO_INDEX 0x7fffffffffffffffLL

// Values and indices of the best element of each (item, chunk) unit: into val/idx[item] when
// splits == 1, else into val/idx[item * splits + c]. A first pass has xidx null (the index is
// the position along r); a finishing pass reads the partials' indices from xidx.
template <typename T>
__global__ void arg_reduce_rows(const T* x, const long long* xidx, T* val, long long* idx,
                                long long items, long long r, long long splits, long long chunk,
                                int is_max) {
    typedef typename Elem<T>::acc A;
    const long long units = items * splits;
    for (long long u = blockIdx.x * (long long)blockDim.y + threadIdx.y; u < units;
         u += (long long)gridDim.x * blockDim.y) {
        const long long item = u / splits, c = u - item * splits;
        const long long begin = c * chunk;
        const long long end = begin + chunk < r ? begin + chunk : r;
        A best = is_max ? -inf_of<A>() : inf_of<A>();
        long long at = AGPU_NO_INDEX;
        for (long long k = begin + threadIdx.x; k < end; k += blockDim.x) {
            const A w = Elem<T>::load(x[item * r + k]);
            const long long j = xidx ? xidx[item * r + k] : k;
            if (arg_better<A>(is_max, best, at, w, j)) {
                best = w;
                at = j;
            }
        }
        group_arg_reduce(is_max != 0, best, at);
        if (threadIdx.x == 0) {
            val[u] = Elem<T>::store(best);
            idx[u] = at;
        }
    }
}

template <typename T>
__global__ void arg_reduce_cols(const T* x, T* val, long long* idx, long long outer, long long r,
                                long long inner, long long splits, long long chunk, int is_max) {
    typedef typename Elem<T>::acc A;
    const long long units = outer * inner * splits;
    AGPU_GRID_LOOP(u, units) {
        const long long i = u % inner, rest = u / inner;
        const long long c = rest % splits, o = rest / splits;
        const long long item = o * inner + i;
        const long long begin = c * chunk;
        const long long end = begin + chunk < r ? begin + chunk : r;
        const T* col = x + o * r * inner + i;
        A best = is_max ? -inf_of<A>() : inf_of<A>();
        long long at = AGPU_NO_INDEX;
        for (long long k = begin; k < end; ++k) {
            const A w = Elem<T>::load(col[k * inner]);
            if (arg_better<A>(is_max, best, at, w, k)) {
                best = w;
                at = k;
            }
        }
        const long long dst = item * splits + c;
        val[dst] = Elem<T>::store(best);
        idx[dst] = at;
    }
}

#ifdef AUTOGRAD_GPU_COMPILE_CHECK
#define AGPU_INSTANTIATE(T)                                                                    \
    template __global__ void reduce_rows<T>(const T*, T*, Elem<T>::acc*, const T*, long long,  \
                                            long long, long long, long long, int, double);    \
    template __global__ void reduce_finish<T>(const Elem<T>::acc*, T*, const T*, long long,    \
                                              long long, int, double);                         \
    template __global__ void reduce_cols<T>(const T*, T*, Elem<T>::acc*, const T*, long long,  \
                                            long long, long long, long long, long long, int,  \
                                            double);                                           \
    template __global__ void arg_reduce_rows<T>(const T*, const long long*, T*, long long*,    \
                                                long long, long long, long long, long long,   \
                                                int);                                          \
    template __global__ void arg_reduce_cols<T>(const T*, T*, long long*, long long,           \
                                                long long, long long, long long, long long,   \
                                                int);
AGPU_INSTANTIATE(float)
AGPU_INSTANTIATE(double)
AGPU_INSTANTIATE(half_t)
#undef AGPU_INSTANTIATE
#endif
