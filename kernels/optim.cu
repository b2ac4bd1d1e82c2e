// optim.cu: fused optimizer updates for autograd_gpu: SGD (momentum, dampening, Nesterov,
// weight decay), Adam/AdamW (coupled or decoupled weight decay, AMSGrad) and RMSprop (centered,
// momentum), each updating every parameter of a group in one launch (PyTorch's fused=True and
// its multi_tensor_apply), with maximize.
// Types: T = float, double or half_t (float16 bits); see common.cuh.
// Table (const long long*, device memory, built by backends/cuda_optim.py), for n tensors, L
// lists (param, grad, then the optimizer's state buffers, in the order each kernel names) and
// `chunks` chunks of at most `chunk` elements:
//   table[l * n + t]                    address of tensor t's array in list l (0: absent list)
//   table[L * n + t]                    tensor t's element count
//   table[(L + 1) * n + c]              chunk c's tensor
//   table[(L + 1) * n + chunks + c]     chunk c's first element
// Every array of tensor t is C-contiguous (or all share one dense layout): element i of each
// is at offset i. The arrays are addressed through the table, not passed one by one.
// Launch: any grid; blocks stride over the chunks, a block's threads over a chunk's elements.
// Scalars: doubles, already rounded by the host as the single-tensor path rounds them (a Python
// float meeting a float32 array is a float32), converted to Elem<T>::acc here.
// Numerics: the single-tensor path's operations in its order, each rounded to Elem<T>::acc (the
// r_* helpers: IEEE round-to-nearest intrinsics, which nvcc never contracts into an FMA), so
// float and double results equal the single-tensor path's (optim/_foreach.py) bit for bit;
// half_t computes in float and rounds once on store, as PyTorch's fused kernels.
// Instantiated through RawModule name_expressions, e.g. "adam_step<float>".
#include "common.cuh"

__device__ __forceinline__ float r_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double r_add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float r_sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double r_sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float r_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double r_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float r_div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double r_div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float r_sqrt(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double r_sqrt(double a) { return __dsqrt_rn(a); }

// NumPy's maximum: the first operand when it is NaN or not smaller, else the second.
template <typename A>
__device__ __forceinline__ A np_maximum(A a, A b) { return (a >= b || is_nan(a)) ? a : b; }

// t + (end - t) * w (low) or end - (end - t) * w (w = 1 - weight, see _foreach.lerp_weight).
template <typename A>
__device__ __forceinline__ A lerp_of(A t, A end, A w, bool low) {
    const A d = r_mul(r_sub(end, t), w);
    return low ? r_add(t, d) : r_sub(end, d);
}

// Chunk c's tensor and element range [lo, hi).
struct Chunk {
    long long t, lo, hi;
};

__device__ __forceinline__ Chunk chunk_at(const long long* table, int lists, long long n,
                                          long long chunks, long long chunk, long long c) {
    const long long* meta = table + lists * n;  // element counts, chunk tensors, chunk starts
    Chunk k;
    k.t = meta[n + c];
    k.lo = meta[n + chunks + c];
    const long long end = k.lo + chunk, numel = meta[k.t];
    k.hi = end < numel ? end : numel;
    return k;
}

template <typename P>
__device__ __forceinline__ P* list_at(const long long* table, int list, long long n,
                                      long long t) {
    return reinterpret_cast<P*>(table[list * n + t]);
}

enum OptimFlags {
    F_MAXIMIZE = 1,       // the gradient is negated first
    F_WEIGHT_DECAY = 2,   // g += p * wd (coupled)
    F_DECOUPLED = 4,      // p *= decay first (AdamW)
    F_AMSGRAD = 8,        // Adam: the running maximum of exp_avg_sq (list 4)
    F_MOMENTUM = 16,      // SGD, RMSprop: a momentum buffer
    F_FIRST = 32,         // SGD: the buffer's first step (it becomes the gradient)
    F_NESTEROV = 64,      // SGD: g += momentum * buf
    F_CENTERED = 128,     // RMSprop: grad_avg (list 3)
    F_LERP_LOW = 256      // the lerp weight is taken from the t side
};

// SGD. Lists: 0 param, 1 grad, 2 momentum buffer (F_MOMENTUM).
template <typename T>
__global__ void sgd_step(const long long* table, long long n, long long chunks, long long chunk,
                         int lists, double wd_, double momentum_, double undamped_,
                         double neg_lr_, int flags) {
    typedef typename Elem<T>::acc A;
    const A wd = A(wd_), momentum = A(momentum_), undamped = A(undamped_), neg_lr = A(neg_lr_);
    for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
        const Chunk k = chunk_at(table, lists, n, chunks, chunk, c);
        T* p = list_at<T>(table, 0, n, k.t);
        const T* grad = list_at<const T>(table, 1, n, k.t);
        T* buf = (flags & F_MOMENTUM) ? list_at<T>(table, 2, n, k.t) : nullptr;
        for (long long i = k.lo + threadIdx.x; i < k.hi; i += blockDim.x) {
            A g = Elem<T>::load(grad[i]);
            if (flags & F_MAXIMIZE) g = -g;
            A w = Elem<T>::load(p[i]);
            if (flags & F_WEIGHT_DECAY) g = r_add(g, r_mul(w, wd));
            if (buf != nullptr) {
                A b = g;
                if (!(flags & F_FIRST))
                    b = r_add(r_mul(Elem<T>::load(buf[i]), momentum), r_mul(g, undamped));
                buf[i] = Elem<T>::store(b);
                g = (flags & F_NESTEROV) ? r_add(g, r_mul(b, momentum)) : b;
            }
            p[i] = Elem<T>::store(r_add(w, r_mul(g, neg_lr)));
        }
    }
}

// Adam and AdamW. Lists: 0 param, 1 grad, 2 exp_avg, 3 exp_avg_sq, 4 max_exp_avg_sq
// (F_AMSGRAD). weight: the lerp scalar of exp_avg (see lerp_of); neg_step = -lr / (1 - beta1^t).
template <typename T>
__global__ void adam_step(const long long* table, long long n, long long chunks, long long chunk,
                          int lists, double decay_, double wd_, double weight_, double beta2_,
                          double one_minus_beta2_, double bc2_sqrt_, double eps_,
                          double neg_step_, int flags) {
    typedef typename Elem<T>::acc A;
    const A decay = A(decay_), wd = A(wd_), weight = A(weight_), beta2 = A(beta2_);
    const A one_minus_beta2 = A(one_minus_beta2_), bc2_sqrt = A(bc2_sqrt_), eps = A(eps_);
    const A neg_step = A(neg_step_);
    const bool low = flags & F_LERP_LOW;
    for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
        const Chunk k = chunk_at(table, lists, n, chunks, chunk, c);
        T* p = list_at<T>(table, 0, n, k.t);
        const T* grad = list_at<const T>(table, 1, n, k.t);
        T* exp_avg = list_at<T>(table, 2, n, k.t);
        T* exp_avg_sq = list_at<T>(table, 3, n, k.t);
        T* max_sq = (flags & F_AMSGRAD) ? list_at<T>(table, 4, n, k.t) : nullptr;
        for (long long i = k.lo + threadIdx.x; i < k.hi; i += blockDim.x) {
            A g = Elem<T>::load(grad[i]);
            if (flags & F_MAXIMIZE) g = -g;
            A w = Elem<T>::load(p[i]);
            if (flags & F_DECOUPLED) w = r_mul(w, decay);
            if (flags & F_WEIGHT_DECAY) g = r_add(g, r_mul(w, wd));
            const A m = lerp_of(Elem<T>::load(exp_avg[i]), g, weight, low);
            const A v = r_add(r_mul(Elem<T>::load(exp_avg_sq[i]), beta2),
                              r_mul(r_mul(g, one_minus_beta2), g));
            exp_avg[i] = Elem<T>::store(m);
            exp_avg_sq[i] = Elem<T>::store(v);
            A second = v;
            if (max_sq != nullptr) {
                second = np_maximum(Elem<T>::load(max_sq[i]), v);
                max_sq[i] = Elem<T>::store(second);
            }
            const A denom = r_add(r_div(r_sqrt(second), bc2_sqrt), eps);
            p[i] = Elem<T>::store(r_add(w, r_div(r_mul(m, neg_step), denom)));
        }
    }
}

// RMSprop. Lists: 0 param, 1 grad, 2 square_avg, 3 grad_avg (F_CENTERED), 4 momentum buffer
// (F_MOMENTUM). weight: the lerp scalar of grad_avg (1 - alpha, see lerp_of).
template <typename T>
__global__ void rmsprop_step(const long long* table, long long n, long long chunks,
                             long long chunk, int lists, double wd_, double alpha_,
                             double one_minus_alpha_, double weight_, double eps_,
                             double momentum_, double neg_lr_, int flags) {
    typedef typename Elem<T>::acc A;
    const A wd = A(wd_), alpha = A(alpha_), one_minus_alpha = A(one_minus_alpha_);
    const A weight = A(weight_), eps = A(eps_), momentum = A(momentum_), neg_lr = A(neg_lr_);
    const bool low = flags & F_LERP_LOW;
    for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
        const Chunk k = chunk_at(table, lists, n, chunks, chunk, c);
        T* p = list_at<T>(table, 0, n, k.t);
        const T* grad = list_at<const T>(table, 1, n, k.t);
        T* square_avg = list_at<T>(table, 2, n, k.t);
        T* grad_avg = (flags & F_CENTERED) ? list_at<T>(table, 3, n, k.t) : nullptr;
        T* buf = (flags & F_MOMENTUM) ? list_at<T>(table, 4, n, k.t) : nullptr;
        for (long long i = k.lo + threadIdx.x; i < k.hi; i += blockDim.x) {
            A g = Elem<T>::load(grad[i]);
            if (flags & F_MAXIMIZE) g = -g;
            const A w = Elem<T>::load(p[i]);
            if (flags & F_WEIGHT_DECAY) g = r_add(g, r_mul(w, wd));
            const A sq = r_add(r_mul(Elem<T>::load(square_avg[i]), alpha),
                               r_mul(r_mul(g, one_minus_alpha), g));
            square_avg[i] = Elem<T>::store(sq);
            A avg;
            if (grad_avg != nullptr) {
                const A ga = lerp_of(Elem<T>::load(grad_avg[i]), g, weight, low);
                grad_avg[i] = Elem<T>::store(ga);
                avg = r_sqrt(r_add(sq, r_mul(r_mul(ga, A(-1)), ga)));
            } else {
                avg = r_sqrt(sq);
            }
            avg = r_add(avg, eps);
            if (buf != nullptr) {
                const A b = r_add(r_mul(Elem<T>::load(buf[i]), momentum), r_div(g, avg));
                buf[i] = Elem<T>::store(b);
                p[i] = Elem<T>::store(r_add(w, r_mul(b, neg_lr)));
            } else {
                p[i] = Elem<T>::store(r_add(w, r_div(r_mul(g, neg_lr), avg)));
            }
        }
    }
}

#ifdef AUTOGRAD_GPU_COMPILE_CHECK
#define AGPU_INSTANTIATE(T)                                                                    \
    template __global__ void sgd_step<T>(const long long*, long long, long long, long long,    \
                                         int, double, double, double, double, int);            \
    template __global__ void adam_step<T>(const long long*, long long, long long, long long,   \
                                          int, double, double, double, double, double,         \
                                          double, double, double, int);                        \
    template __global__ void rmsprop_step<T>(const long long*, long long, long long,           \
                                             long long, int, double, double, double, double,   \
                                             double, double, double, int);
AGPU_INSTANTIATE(float)
AGPU_INSTANTIATE(double)
AGPU_INSTANTIATE(half_t)
#undef AGPU_INSTANTIATE
#endif
