// elementwise.cu: unary, unary-backward, binary, comparison and where kernels for autograd_gpu.
// Types: T = float, double or half_t (float16 bits, computed in float); see common.cuh.
// Launch: 1-D grid-stride loops, any grid and block size is correct (the wrapper uses 256
// threads and min(ceil(n / 256), 32 * SMs) blocks).
// Layout: outputs are C-contiguous, length n. Plain kernels read C-contiguous inputs of length n;
// *_strided kernels read each input through element strides over up to 6 collapsed dims, right-
// aligned in d0..d5 (nd of them used; stride 0 broadcasts). Python scalars arrive as double
// values with a `scalars` bit mask (bit 0: x is the scalar, bit 1: y), the pointer then null.
// Op codes: the enums below, in the order of UNARY_OPS and BINARY_OPS in cuda_kernels.py.
// Instantiated through RawModule name_expressions, e.g. "unary<float>", "where_strided<half_t>".
// Reference twins: the CuPy expressions in tests/backends/test_cuda_kernels.py.
#include "common.cuh"

enum UnaryOp {
    U_NEG, U_ABS, U_SIGN, U_EXP, U_LOG, U_LOG1P, U_EXPM1, U_SQRT, U_RSQRT, U_RECIPROCAL,
    U_SIN, U_COS, U_TANH, U_SIGMOID, U_RELU, U_SILU, U_GELU, U_GELU_TANH, U_ERF, U_FLOOR,
    U_LEAKY_RELU, U_ELU
};

enum BinaryOp {
    B_ADD, B_SUB, B_MUL, B_DIV, B_POW, B_MAXIMUM, B_MINIMUM, B_FLOOR_DIVIDE,
    B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE
};

// sqrt(2 / pi), 1 / sqrt(2), 1 / sqrt(2 pi), 2 / sqrt(pi)
#define AGPU_SQRT_2_OVER_PI 0.7978845608028654
#define AGPU_SQRT1_2 0.7071067811865476
#define AGPU_INV_SQRT_2PI 0.3989422804014327
#define AGPU_2_OVER_SQRT_PI 1.1283791670955126
#define AGPU_GELU_C 0.044715

// NOTE: as PyTorch: sign(NaN) and sign(-0.0) are +0; relu keeps NaN and -0.0 (x < 0 is false).
template <typename A>
__device__ __forceinline__ A unary_apply(int op, A x, A p) {
    const A zero = A(0), one = A(1), half = A(0.5);
    switch (op) {
        case U_NEG: return -x;
        case U_ABS: return m_fabs(x);
        case U_SIGN: return x > zero ? one : (x < zero ? -one : zero);
        case U_EXP: return m_exp(x);
        case U_LOG: return m_log(x);
        case U_LOG1P: return m_log1p(x);
        case U_EXPM1: return m_expm1(x);
        case U_SQRT: return m_sqrt(x);
        case U_RSQRT: return m_rsqrt(x);
        case U_RECIPROCAL: return one / x;
        case U_SIN: return m_sin(x);
        case U_COS: return m_cos(x);
        case U_TANH: return m_tanh(x);
        case U_SIGMOID: return one / (one + m_exp(-x));
        case U_RELU: return x < zero ? zero : x;
        case U_SILU: return x / (one + m_exp(-x));
        case U_GELU: return half * x * (one + m_erf(x * A(AGPU_SQRT1_2)));
        case U_GELU_TANH: {
            const A inner = A(AGPU_SQRT_2_OVER_PI) * (x + A(AGPU_GELU_C) * x * x * x);
            return half * x * (one + m_tanh(inner));
        }
        case U_ERF: return m_erf(x);
        case U_FLOOR: return m_floor(x);
        case U_LEAKY_RELU: return x > zero ? x : x * p;
        case U_ELU: return x > zero ? x : p * m_expm1(x);
        default: return x;
    }
}

// grad_x from the saved value s (x or out, as UNARY_BACKWARD_OPS says) and the incoming grad g.
// NOTE: as PyTorch's threshold_backward, relu's gradient is 0 where out <= 0 (so at 0) and passes
// at NaN; elu's is grad (not alpha * grad) at NaN (x <= 0 is false); sign and floor give 0.
template <typename A>
__device__ __forceinline__ A unary_grad(int op, A s, A g, A p) {
    const A zero = A(0), one = A(1), half = A(0.5);
    switch (op) {
        case U_NEG: return -g;
        case U_ABS: return g * unary_apply(U_SIGN, s, p);  // s = x
        case U_EXP: return g * s;                          // s = out
        case U_LOG: return g / s;                          // s = x
        case U_LOG1P: return g / (one + s);                // s = x
        case U_EXPM1: return g * (s + one);                // s = out
        case U_SQRT: return g / (A(2) * s);                // s = out
        case U_RSQRT: return A(-0.5) * g * s * s * s;      // s = out
        case U_RECIPROCAL: return -g * s * s;              // s = out
        case U_SIN: return g * m_cos(s);                   // s = x
        case U_COS: return -g * m_sin(s);                  // s = x
        case U_TANH: return g * (one - s * s);             // s = out
        case U_SIGMOID: return g * s * (one - s);          // s = out
        case U_RELU: return s <= zero ? zero : g;          // s = out
        case U_SILU: {                                     // s = x
            const A sg = one / (one + m_exp(-s));
            return g * sg * (one + s * (one - sg));
        }
        case U_GELU: {                                     // s = x
            const A cdf = half * (one + m_erf(s * A(AGPU_SQRT1_2)));
            const A pdf = A(AGPU_INV_SQRT_2PI) * m_exp(-half * s * s);
            return g * (cdf + s * pdf);
        }
        case U_GELU_TANH: {                                // s = x
            const A k = A(AGPU_SQRT_2_OVER_PI), c = A(AGPU_GELU_C);
            const A t = m_tanh(k * (s + c * s * s * s));
            return g * (half * (one + t) + half * s * (one - t * t) * k * (one + A(3) * c * s * s));
        }
        case U_ERF: return g * A(AGPU_2_OVER_SQRT_PI) * m_exp(-s * s);  // s = x
        case U_LEAKY_RELU: return s > zero ? g : g * p;    // s = x
        case U_ELU: return s <= zero ? g * p * m_exp(s) : g;  // s = x
        default: return zero;                              // sign, floor
    }
}

// Floor division of floats as PyTorch's div_floor: through fmod, so that the quotient is exact
// where floor(a / b) would round (7.1 // 0.1 is 70, not 71) and -1 // inf is -1; a / b at b = 0.
template <typename A>
__device__ __forceinline__ A div_floor(A a, A b) {
    if (b == A(0)) return a / b;
    const A mod = m_fmod(a, b);
    A div = (a - mod) / b;
    if (mod != A(0) && (b < A(0)) != (mod < A(0))) div -= A(1);
    if (div == A(0)) return m_copysign(A(0), a / b);
    A floordiv = m_floor(div);
    if (div - floordiv > A(0.5)) floordiv += A(1);
    return floordiv;
}

// NOTE: maximum/minimum propagate NaN (torch.maximum); add/sub carry alpha (x + alpha * y).
template <typename A>
__device__ __forceinline__ A binary_apply(int op, A a, A b, A alpha) {
    switch (op) {
        case B_ADD: return a + alpha * b;
        case B_SUB: return a - alpha * b;
        case B_MUL: return a * b;
        case B_DIV: return a / b;
        case B_POW: return m_pow(a, b);
        case B_MAXIMUM: return max_nan(a, b);
        case B_FLOOR_DIVIDE: return div_floor(a, b);
        default: return min_nan(a, b);
    }
}

template <typename A>
__device__ __forceinline__ bool compare_apply(int op, A a, A b) {
    switch (op) {
        case B_EQ: return a == b;
        case B_NE: return a != b;
        case B_LT: return a < b;
        case B_LE: return a <= b;
        case B_GT: return a > b;
        default: return a >= b;
    }
}

// Strided addressing: K operands over nd <= 6 dims stored right-aligned in dim[6 - nd .. 5].
template <int K>
struct Layout {
    int nd;
    long long dim[6];
    long long st[K][6];
};

// Element offsets of linear (row-major) index i in each operand. I is the index type: 32-bit
// when n fits, since 64-bit division costs several times more.
template <typename I, int K>
__device__ __forceinline__ void layout_offsets(const Layout<K>& L, I i, long long (&off)[K]) {
    const int first = 6 - L.nd;
#pragma unroll
    for (int k = 0; k < K; ++k) off[k] = 0;
#pragma unroll
    for (int d = 5; d >= 0; --d) {
        if (d == first) {  // the outermost dim takes what is left of i, no division needed
#pragma unroll
            for (int k = 0; k < K; ++k) off[k] += (long long)i * L.st[k][d];
            break;
        }
        const I size = (I)L.dim[d];
        const I q = i / size;
        const I r = i - q * size;
        i = q;
#pragma unroll
        for (int k = 0; k < K; ++k) off[k] += (long long)r * L.st[k][d];
    }
}

// Calls body(i, off) for every linear output index i in [0, n) with the operands' offsets.
template <int K, typename F>
__device__ __forceinline__ void strided_loop(const Layout<K>& L, long long n, F body) {
    if (n <= 0x7fffffffLL) {
        const unsigned int un = (unsigned int)n;
        for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < un;
             i += blockDim.x * gridDim.x) {
            long long off[K];
            layout_offsets<unsigned int, K>(L, i, off);
            body((long long)i, off);
        }
    } else {
        AGPU_GRID_LOOP(i, n) {
            long long off[K];
            layout_offsets<long long, K>(L, i, off);
            body(i, off);
        }
    }
}

#define AGPU_DIMS(p) \
    long long p##0, long long p##1, long long p##2, long long p##3, long long p##4, long long p##5
#define AGPU_LIST(p) {p##0, p##1, p##2, p##3, p##4, p##5}

// ---- unary: out = f(x) ----

template <typename T>
__global__ void unary(const T* x, T* out, long long n, int op, double param) {
    typedef typename Elem<T>::acc A;
    const A p = A(param);
    AGPU_GRID_LOOP(i, n) out[i] = Elem<T>::store(unary_apply<A>(op, Elem<T>::load(x[i]), p));
}

template <typename T>
__global__ void unary_strided(const T* x, T* out, long long n, int op, double param, int nd,
                              AGPU_DIMS(d), AGPU_DIMS(xs)) {
    typedef typename Elem<T>::acc A;
    const A p = A(param);
    const Layout<1> L = {nd, AGPU_LIST(d), {AGPU_LIST(xs)}};
    strided_loop(L, n, [&](long long i, const long long* off) {
        out[i] = Elem<T>::store(unary_apply<A>(op, Elem<T>::load(x[off[0]]), p));
    });
}

// ---- unary backward: grad_x = f'(saved) * grad ----

template <typename T>
__global__ void unary_backward(const T* saved, const T* grad, T* grad_x, long long n, int op,
                               double param) {
    typedef typename Elem<T>::acc A;
    const A p = A(param);
    AGPU_GRID_LOOP(i, n) {
        const A s = Elem<T>::load(saved[i]), g = Elem<T>::load(grad[i]);
        grad_x[i] = Elem<T>::store(unary_grad<A>(op, s, g, p));
    }
}

template <typename T>
__global__ void unary_backward_strided(const T* saved, const T* grad, T* grad_x, long long n,
                                       int op, double param, int nd, AGPU_DIMS(d),
                                       AGPU_DIMS(ss), AGPU_DIMS(gs)) {
    typedef typename Elem<T>::acc A;
    const A p = A(param);
    const Layout<2> L = {nd, AGPU_LIST(d), {AGPU_LIST(ss), AGPU_LIST(gs)}};
    strided_loop(L, n, [&](long long i, const long long* off) {
        const A s = Elem<T>::load(saved[off[0]]), g = Elem<T>::load(grad[off[1]]);
        grad_x[i] = Elem<T>::store(unary_grad<A>(op, s, g, p));
    });
}

// ---- binary: out = x op y (arithmetic, T out) ----

template <typename T>
__global__ void binary(const T* x, const T* y, T* out, long long n, int op, double alpha,
                       double xval, double yval, int scalars) {
    typedef typename Elem<T>::acc A;
    const A al = A(alpha), xv = A(xval), yv = A(yval);
    const bool xs = scalars & 1, ys = scalars & 2;
    AGPU_GRID_LOOP(i, n) {
        const A a = xs ? xv : Elem<T>::load(x[i]);
        const A b = ys ? yv : Elem<T>::load(y[i]);
        out[i] = Elem<T>::store(binary_apply<A>(op, a, b, al));
    }
}

template <typename T>
__global__ void binary_strided(const T* x, const T* y, T* out, long long n, int op, double alpha,
                               double xval, double yval, int scalars, int nd, AGPU_DIMS(d),
                               AGPU_DIMS(xs), AGPU_DIMS(ys)) {
    typedef typename Elem<T>::acc A;
    const A al = A(alpha), xv = A(xval), yv = A(yval);
    const bool x_scalar = scalars & 1, y_scalar = scalars & 2;
    const Layout<2> L = {nd, AGPU_LIST(d), {AGPU_LIST(xs), AGPU_LIST(ys)}};
    strided_loop(L, n, [&](long long i, const long long* off) {
        const A a = x_scalar ? xv : Elem<T>::load(x[off[0]]);
        const A b = y_scalar ? yv : Elem<T>::load(y[off[1]]);
        out[i] = Elem<T>::store(binary_apply<A>(op, a, b, al));
    });
}

// ---- comparisons: out = x op y as bool (1 byte, 0 or 1) ----

template <typename T>
__global__ void compare(const T* x, const T* y, unsigned char* out, long long n, int op,
                        double xval, double yval, int scalars) {
    typedef typename Elem<T>::acc A;
    const A xv = A(xval), yv = A(yval);
    const bool xs = scalars & 1, ys = scalars & 2;
    AGPU_GRID_LOOP(i, n) {
        const A a = xs ? xv : Elem<T>::load(x[i]);
        const A b = ys ? yv : Elem<T>::load(y[i]);
        out[i] = compare_apply<A>(op, a, b) ? 1 : 0;
    }
}

template <typename T>
__global__ void compare_strided(const T* x, const T* y, unsigned char* out, long long n, int op,
                                double xval, double yval, int scalars, int nd, AGPU_DIMS(d),
                                AGPU_DIMS(xs), AGPU_DIMS(ys)) {
    typedef typename Elem<T>::acc A;
    const A xv = A(xval), yv = A(yval);
    const bool x_scalar = scalars & 1, y_scalar = scalars & 2;
    const Layout<2> L = {nd, AGPU_LIST(d), {AGPU_LIST(xs), AGPU_LIST(ys)}};
    strided_loop(L, n, [&](long long i, const long long* off) {
        const A a = x_scalar ? xv : Elem<T>::load(x[off[0]]);
        const A b = y_scalar ? yv : Elem<T>::load(y[off[1]]);
        out[i] = compare_apply<A>(op, a, b) ? 1 : 0;
    });
}

// ---- where: out = cond ? x : y (cond bool, 1 byte) ----

template <typename T>
__global__ void where(const unsigned char* cond, const T* x, const T* y, T* out, long long n,
                      double xval, double yval, int scalars) {
    typedef typename Elem<T>::acc A;
    const T xv = Elem<T>::store(A(xval)), yv = Elem<T>::store(A(yval));
    const bool xs = scalars & 1, ys = scalars & 2;
    AGPU_GRID_LOOP(i, n) out[i] = cond[i] ? (xs ? xv : x[i]) : (ys ? yv : y[i]);
}

template <typename T>
__global__ void where_strided(const unsigned char* cond, const T* x, const T* y, T* out,
                              long long n, double xval, double yval, int scalars, int nd,
                              AGPU_DIMS(d), AGPU_DIMS(cs), AGPU_DIMS(xs), AGPU_DIMS(ys)) {
    typedef typename Elem<T>::acc A;
    const T xv = Elem<T>::store(A(xval)), yv = Elem<T>::store(A(yval));
    const bool x_scalar = scalars & 1, y_scalar = scalars & 2;
    const Layout<3> L = {nd, AGPU_LIST(d), {AGPU_LIST(cs), AGPU_LIST(xs), AGPU_LIST(ys)}};
    strided_loop(L, n, [&](long long i, const long long* off) {
        out[i] = cond[off[0]] ? (x_scalar ? xv : x[off[1]]) : (y_scalar ? yv : y[off[2]]);
    });
}

#ifdef AUTOGRAD_GPU_COMPILE_CHECK
#define AGPU_INSTANTIATE(T)                                                                    \
    template __global__ void unary<T>(const T*, T*, long long, int, double);                  \
    template __global__ void unary_strided<T>(const T*, T*, long long, int, double, int,      \
                                              AGPU_DIMS(d), AGPU_DIMS(xs));                    \
    template __global__ void unary_backward<T>(const T*, const T*, T*, long long, int, double); \
    template __global__ void unary_backward_strided<T>(const T*, const T*, T*, long long, int, \
                                                       double, int, AGPU_DIMS(d),             \
                                                       AGPU_DIMS(ss), AGPU_DIMS(gs));          \
    template __global__ void binary<T>(const T*, const T*, T*, long long, int, double, double, \
                                       double, int);                                           \
    template __global__ void binary_strided<T>(const T*, const T*, T*, long long, int, double, \
                                               double, double, int, int, AGPU_DIMS(d),        \
                                               AGPU_DIMS(xs), AGPU_DIMS(ys));                  \
    template __global__ void compare<T>(const T*, const T*, unsigned char*, long long, int,    \
                                        double, double, int);                                  \
    template __global__ void compare_strided<T>(const T*, const T*, unsigned char*, long long, \
                                                int, double, double, int, int, AGPU_DIMS(d),  \
                                                AGPU_DIMS(xs), AGPU_DIMS(ys));                 \
    template __global__ void where<T>(const unsigned char*, const T*, const T*, T*, long long, \
                                      double, double, int);                                    \
    template __global__ void where_strided<T>(const unsigned char*, const T*, const T*, T*,    \
                                              long long, double, double, int, int,            \
                                              AGPU_DIMS(d), AGPU_DIMS(cs), AGPU_DIMS(xs),     \
                                              AGPU_DIMS(ys));
AGPU_INSTANTIATE(float)
AGPU_INSTANTIATE(double)
AGPU_INSTANTIATE(half_t)
#undef AGPU_INSTANTIATE
#endif
