// rnn.cu: fused LSTM and GRU cells (the pointwise part of one time step, after the two gate
// matmuls) and their backwards, for autograd_gpu; PyTorch's CUDA _thnn_fused_lstm_cell and
// _thnn_fused_gru_cell contracts.
// Types: T = float, double or half_t (float16 bits, computed in float); see common.cuh.
// Launch: 1-D grid-stride loop over n = B * H elements (batch row b, hidden unit j); any grid.
// Layout (all C-contiguous): gates (B, G * H) with G = 4 (LSTM: i, f, g, o) or 3 (GRU: r, z, n),
// gate k of element (b, j) at b * G * H + k * H + j; biases (G * H,); states (B, H).
// Optional pointers (nullptr: absent): the hidden gates and both biases of the LSTM (each adds
// to the pre-activation), the GRU's biases, the workspace in the forwards (not written: no
// backward will run), grad_hy and grad_cy of the LSTM backward (absent: zero).
// Workspace (what the backward reads): LSTM (B, 4H) the activated gates i, f, g, o; GRU (B, 5H)
// r, z, n, h_prev and W_hn h + b_hn (the term r multiplies).
// Numerics: every input is loaded into Elem<T>::acc and the step computed there (h' from the
// unrounded c'), results rounded once on store, as PyTorch's kernels.
// Instantiated through RawModule name_expressions, e.g. "lstm_cell_forward<float>".
#include "common.cuh"

template <typename A>
__device__ __forceinline__ A sigmoid_of(A x) { return A(1) / (A(1) + m_exp(-x)); }

// The pre-activation at `at` of gate column `col`: input gates + hidden gates + both biases
// (absent ones add nothing).
template <typename T>
__device__ __forceinline__ typename Elem<T>::acc preact(const T* ig, const T* hg, const T* b_ih,
                                                        const T* b_hh, long long at,
                                                        long long col) {
    typename Elem<T>::acc v = Elem<T>::load(ig[at]);
    if (hg != nullptr) v += Elem<T>::load(hg[at]);
    if (b_ih != nullptr) v += Elem<T>::load(b_ih[col]);
    if (b_hh != nullptr) v += Elem<T>::load(b_hh[col]);
    return v;
}

// c' = f * c + i * g, h' = o * tanh(c') with i, f, o = sigmoid and g = tanh of the
// pre-activations.
template <typename T>
__global__ void lstm_cell_forward(const T* ig, const T* hg, const T* b_ih, const T* b_hh,
                                  const T* cx, T* hy, T* cy, T* ws, long long n, long long H) {
    typedef typename Elem<T>::acc A;
    AGPU_GRID_LOOP(e, n) {
        const long long row = e / H, j = e - row * H;
        const long long at = row * 4 * H + j;
        const A i = sigmoid_of(preact(ig, hg, b_ih, b_hh, at, j));
        const A f = sigmoid_of(preact(ig, hg, b_ih, b_hh, at + H, j + H));
        const A g = m_tanh(preact(ig, hg, b_ih, b_hh, at + 2 * H, j + 2 * H));
        const A o = sigmoid_of(preact(ig, hg, b_ih, b_hh, at + 3 * H, j + 3 * H));
        const A c = f * Elem<T>::load(cx[e]) + i * g;
        cy[e] = Elem<T>::store(c);
        hy[e] = Elem<T>::store(o * m_tanh(c));
        if (ws != nullptr) {
            ws[at] = Elem<T>::store(i);
            ws[at + H] = Elem<T>::store(f);
            ws[at + 2 * H] = Elem<T>::store(g);
            ws[at + 3 * H] = Elem<T>::store(o);
        }
    }
}

// From grad_hy, grad_cy (either may be absent), c, c' and the workspace: the gradient of the
// four pre-activations (also the gradient of both biases, once summed over the batch) and of c.
template <typename T>
__global__ void lstm_cell_backward(const T* grad_hy, const T* grad_cy, const T* cx, const T* cy,
                                   const T* ws, T* grad_gates, T* grad_cx, long long n,
                                   long long H) {
    typedef typename Elem<T>::acc A;
    AGPU_GRID_LOOP(e, n) {
        const long long row = e / H, j = e - row * H;
        const long long at = row * 4 * H + j;
        const A i = Elem<T>::load(ws[at]), f = Elem<T>::load(ws[at + H]);
        const A g = Elem<T>::load(ws[at + 2 * H]), o = Elem<T>::load(ws[at + 3 * H]);
        const A gh = grad_hy != nullptr ? Elem<T>::load(grad_hy[e]) : A(0);
        const A gc_out = grad_cy != nullptr ? Elem<T>::load(grad_cy[e]) : A(0);
        const A tc = m_tanh(Elem<T>::load(cy[e]));
        const A gc = gh * o * (A(1) - tc * tc) + gc_out;  // through h' and directly
        grad_gates[at] = Elem<T>::store(gc * g * i * (A(1) - i));
        grad_gates[at + H] = Elem<T>::store(gc * Elem<T>::load(cx[e]) * f * (A(1) - f));
        grad_gates[at + 2 * H] = Elem<T>::store(gc * i * (A(1) - g * g));
        grad_gates[at + 3 * H] = Elem<T>::store(gh * tc * o * (A(1) - o));
        grad_cx[e] = Elem<T>::store(gc * f);
    }
}

// r = sigmoid(i_r + h_r), z = sigmoid(i_z + h_z), n = tanh(i_n + r * h_n) (biases included in
// the terms they belong to), h' = n + z * (h - n) = (1 - z) * n + z * h.
template <typename T>
__global__ void gru_cell_forward(const T* ig, const T* hg, const T* b_ih, const T* b_hh,
                                 const T* hx, T* hy, T* ws, long long n, long long H) {
    typedef typename Elem<T>::acc A;
    AGPU_GRID_LOOP(e, n) {
        const long long row = e / H, j = e - row * H;
        const long long at = row * 3 * H + j;
        const A r = sigmoid_of(preact(ig, hg, b_ih, b_hh, at, j));
        const A z = sigmoid_of(preact(ig, hg, b_ih, b_hh, at + H, j + H));
        const T* none = nullptr;
        const A hn = preact(hg, none, none, b_hh, at + 2 * H, j + 2 * H);
        const A nn = m_tanh(preact(ig, none, b_ih, none, at + 2 * H, j + 2 * H) + r * hn);
        const A h = Elem<T>::load(hx[e]);
        hy[e] = Elem<T>::store(nn + z * (h - nn));
        if (ws != nullptr) {
            const long long w = row * 5 * H + j;
            ws[w] = Elem<T>::store(r);
            ws[w + H] = Elem<T>::store(z);
            ws[w + 2 * H] = Elem<T>::store(nn);
            ws[w + 3 * H] = hx[e];
            ws[w + 4 * H] = Elem<T>::store(hn);
        }
    }
}

// From grad_hy and the workspace: the gradients of the input gates, of the hidden gates (they
// differ in the n column: r * grad) and of h.
template <typename T>
__global__ void gru_cell_backward(const T* grad_hy, const T* ws, T* grad_ig, T* grad_hg,
                                  T* grad_hx, long long n, long long H) {
    typedef typename Elem<T>::acc A;
    AGPU_GRID_LOOP(e, n) {
        const long long row = e / H, j = e - row * H;
        const long long w = row * 5 * H + j, at = row * 3 * H + j;
        const A r = Elem<T>::load(ws[w]), z = Elem<T>::load(ws[w + H]);
        const A nn = Elem<T>::load(ws[w + 2 * H]), h = Elem<T>::load(ws[w + 3 * H]);
        const A hn = Elem<T>::load(ws[w + 4 * H]);
        const A go = Elem<T>::load(grad_hy[e]);
        const A gz = go * (h - nn) * z * (A(1) - z);
        const A gn = go * (A(1) - z) * (A(1) - nn * nn);
        const A gr = gn * hn * r * (A(1) - r);
        grad_ig[at] = Elem<T>::store(gr);
        grad_ig[at + H] = Elem<T>::store(gz);
        grad_ig[at + 2 * H] = Elem<T>::store(gn);
        grad_hg[at] = Elem<T>::store(gr);
        grad_hg[at + H] = Elem<T>::store(gz);
        grad_hg[at + 2 * H] = Elem<T>::store(gn * r);
        grad_hx[e] = Elem<T>::store(go * z);
    }
}

#ifdef AUTOGRAD_GPU_COMPILE_CHECK
#define AGPU_INSTANTIATE(T)                                                                    \
    template __global__ void lstm_cell_forward<T>(const T*, const T*, const T*, const T*,      \
                                                  const T*, T*, T*, T*, long long, long long); \
    template __global__ void lstm_cell_backward<T>(const T*, const T*, const T*, const T*,     \
                                                   const T*, T*, T*, long long, long long);    \
    template __global__ void gru_cell_forward<T>(const T*, const T*, const T*, const T*,       \
                                                 const T*, T*, T*, long long, long long);      \
    template __global__ void gru_cell_backward<T>(const T*, const T*, T*, T*, T*, long long,   \
                                                  long long);
AGPU_INSTANTIATE(float)
AGPU_INSTANTIATE(double)
AGPU_INSTANTIATE(half_t)
#undef AGPU_INSTANTIATE
#endif
