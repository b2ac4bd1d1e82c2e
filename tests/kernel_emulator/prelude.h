// prelude.h: the subset of CUDA that kernels/*.cu use, emulated on the host by g++ for
// tests/kernel_emulator (a test tool: it checks kernel logic, never GPU numerics or speed).
//
// Execution: blocks run one after another; each thread of a block is a fiber with its own stack.
// Barriers: __syncthreads() waits for every thread of the block, a warp shuffle for the 32 lanes
// of its warp, at the same call site (source line). Any other arrival pattern is undefined
// behaviour on a GPU and is reported as an error: threads at different barriers, a barrier that
// some threads of the block (lanes of the warp) never reach because they exited or wait elsewhere.
// Between two __syncthreads the warps of a block run one at a time, each as far as it can (its
// shuffles included), lanes one at a time; the order of warps and of lanes alternates (first
// to last, then last to first), so that a missing barrier tends to change the result.
// Warp shuffles exchange any value of at most 8 bytes; only the full mask and width 32.
// Arrays: the kernel sees staged copies between guard bytes (see "arrays" below).
// Not emulated: atomics, dynamic shared memory, partial-warp masks, the memory model beyond
// what the barriers order, device-side printf/assert; shared memory is not poisoned per block.
// The Python side (tests/kernel_emulator/_build.py) pastes this text before the kernel source
// and adds one extern "C" signature/launch pair per name expression; see emu_signature and
// emu_launch at the end.
#include <cmath>
#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

struct dim3 {
    unsigned int x = 1, y = 1, z = 1;
};
static dim3 threadIdx, blockIdx, blockDim, gridDim;
static const int warpSize = 32;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static  // one block at a time: a static is the block's shared memory

// ---- device intrinsics ---------------------------------------------------------------------

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
// The round-to-nearest arithmetic intrinsics (kernels/optim.cu): one IEEE operation each, as
// g++ on x86-64 computes them (it contracts nothing into an FMA without -mfma).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return sqrt(a); }
inline float __int_as_float(int v) { float f; memcpy(&f, &v, 4); return f; }
inline int __float_as_int(float f) { int v; memcpy(&v, &f, 4); return v; }
inline double __longlong_as_double(long long v) { double f; memcpy(&f, &v, 8); return f; }
inline long long __double_as_longlong(double f) { long long v; memcpy(&v, &f, 8); return v; }

// What the loader puts in place of the inline PTX conversions (cvt.f32.f16, cvt.rn.f16.f32):
// IEEE binary16 <-> binary32, round to nearest even, as the PTX instructions.
inline float emu_half_to_float(unsigned short h) {
    _Float16 v;
    memcpy(&v, &h, 2);
    return (float)v;
}
inline unsigned short emu_float_to_half(float f) {
    _Float16 v = (_Float16)f;
    unsigned short h;
    memcpy(&h, &v, 2);
    return h;
}

// ---- threads as fibers ---------------------------------------------------------------------

namespace emu {

enum State { RUNNING, AT_SYNC, AT_SHUFFLE, DONE };

struct Thread {
    ucontext_t start;  // its first entry: makecontext on its own stack
    jmp_buf resume;    // every later entry
    bool started;      // it has a live stack frame (its body loop) to resume
    State state;
    int site;          // source line of the barrier it waits at
    unsigned parity;   // which slot buffer its next shuffle uses
    unsigned tx, ty, tz;
};

static const size_t kStack = 64 * 1024;  // usable stack per thread
static size_t page = 0, slot = 0;        // slot: a guard page, then the stack
static const int kMaxThreads = 1024;
static Thread threads[kMaxThreads];
static char* stacks = nullptr;  // kMaxThreads slots, mapped on first launch
static jmp_buf scheduler;
static int current = 0, nthreads = 0;
static unsigned long long slots[2][kMaxThreads];  // shuffle values, double-buffered
static std::function<void()> body;
static char error[1024];
static bool in_block = false;  // error messages name the block

static void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char* fmt, ...) {
    if (error[0]) return;  // keep the first error
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!in_block) {
        snprintf(error, sizeof error, "%s", msg);
        return;
    }
    snprintf(error, sizeof error, "%s (block %u,%u,%u of grid %u,%u,%u; block size %u,%u,%u)",
             msg, blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, gridDim.y, gridDim.z,
             blockDim.x, blockDim.y, blockDim.z);
}

// NOTE: switches use _setjmp/_longjmp, which do not save the signal mask: swapcontext makes a
// system call for it at every switch, and threads switch at every barrier. A thread's fiber
// also outlives its block: once done it waits for the next block's body, so only the first
// entry into a thread slot (or the first after an error abandoned the fibers) goes through
// setcontext. Built with _FORTIFY_SOURCE off: its longjmp check refuses jumps between stacks.
static void wait_at(State state, int site) {
    Thread& t = threads[current];
    t.state = state;
    t.site = site;
    if (!_setjmp(t.resume)) _longjmp(scheduler, 1);
}

static void thread_main() {
    for (;;) {
        body();
        wait_at(DONE, 0);
    }
}

static void enter(Thread& t) {
    if (_setjmp(scheduler)) return;
    if (t.started) _longjmp(t.resume, 1);
    t.started = true;
    setcontext(&t.start);
}

static void abandon_threads() {
    for (int i = 0; i < kMaxThreads; ++i) threads[i].started = false;
}

template <typename V>
inline V exchange(int site, unsigned mask, int width, V v, int src_lane) {
    static_assert(sizeof(V) <= 8 && std::is_trivially_copyable<V>::value,
                  "the emulator shuffles values of at most 8 bytes");
    if (mask != 0xffffffffu) fail("warp shuffle at line %d with mask %#x: only the full mask "
                                  "is emulated", site, mask);
    if (width != 32) fail("warp shuffle at line %d with width %d: only 32 is emulated", site,
                          width);
    Thread& t = threads[current];
    const unsigned p = t.parity;
    t.parity ^= 1u;
    memcpy(&slots[p][current], &v, sizeof(V));
    wait_at(AT_SHUFFLE, site);
    V r;
    memcpy(&r, &slots[p][(current & ~31) + (src_lane & 31)], sizeof(V));
    return r;
}

inline int lane() { return current & 31; }

// Runs the lanes of warp w (in reverse order if `reverse`) until each waits at __syncthreads
// or has exited; whenever all 32 wait at one shuffle, they are released at once. NOTE: a warp
// runs ahead of the others as far as it can, as it may on a GPU, so that a barrier missing
// between warps (one warp writes shared memory that another has yet to read) changes results.
static void run_warp(int w, bool reverse) {
    Thread* lanes = threads + 32 * w;
    for (;;) {
        for (int k = 0; k < 32; ++k) {
            const int l = reverse ? 31 - k : k;
            Thread& t = lanes[l];
            if (t.state != RUNNING) continue;
            current = 32 * w + l;
            threadIdx.x = t.tx;
            threadIdx.y = t.ty;
            threadIdx.z = t.tz;
            enter(t);
        }
        if (error[0]) return;
        for (int l = 0; l < 32; ++l)
            if (lanes[l].state != AT_SHUFFLE || lanes[l].site != lanes[0].site) return;
        for (int l = 0; l < 32; ++l) lanes[l].state = RUNNING;
    }
}

// Runs the block blockIdx with every thread from the start of body; false on an error.
static bool run_block() {
    nthreads = (int)(blockDim.x * blockDim.y * blockDim.z);
    for (int i = 0; i < nthreads; ++i) {
        Thread& t = threads[i];
        t.state = RUNNING;
        t.site = 0;
        t.parity = 0;
        t.tx = i % blockDim.x;
        t.ty = (i / blockDim.x) % blockDim.y;
        t.tz = i / (blockDim.x * blockDim.y);
        if (!t.started) {
            getcontext(&t.start);
            t.start.uc_stack.ss_sp = stacks + (size_t)i * slot + page;
            t.start.uc_stack.ss_size = kStack;
            t.start.uc_link = nullptr;  // thread_main never returns
            makecontext(&t.start, thread_main, 0);
        }
    }
    for (unsigned phase = 0;; ++phase) {
        const int warps = nthreads / 32;
        for (int k = 0; k < warps; ++k) run_warp((phase & 1u) ? warps - 1 - k : k, phase & 1u);
        if (error[0]) return false;
        // run_warp released every warp whose lanes all met at one shuffle: a lane still
        // waiting at a shuffle is an error.
        for (int w = 0; w < warps; ++w) {
            Thread* lanes = threads + 32 * w;
            int waiting = 0;
            for (int l = 0; l < 32; ++l) waiting += lanes[l].state == AT_SHUFFLE;
            if (!waiting) continue;
            for (int l = 0; l < 32; ++l) {
                if (lanes[l].state != AT_SHUFFLE) {
                    int site = 0;
                    for (int m = 0; m < 32 && !site; ++m)
                        if (lanes[m].state == AT_SHUFFLE) site = lanes[m].site;
                    fail("warp %d: %d lanes wait at the shuffle at line %d, but lane %d %s", w,
                         waiting, site, l,
                         lanes[l].state == DONE ? "has exited" : "waits at __syncthreads");
                    return false;
                }
                if (lanes[l].site != lanes[0].site) {
                    fail("warp %d: lanes wait at different shuffles (lines %d and %d)", w,
                         lanes[0].site, lanes[l].site);
                    return false;
                }
            }
        }
        int done = 0, first = -1;
        for (int i = 0; i < nthreads; ++i) {
            if (threads[i].state == DONE) {
                ++done;
            } else if (first < 0) {
                first = i;
            } else if (threads[i].site != threads[first].site) {
                fail("threads %d and %d wait at different __syncthreads (lines %d and %d)", first,
                     i, threads[first].site, threads[i].site);
                return false;
            }
        }
        if (done == nthreads) return true;
        if (done) {
            fail("__syncthreads at line %d: %d of %d threads wait there, the others have exited",
                 threads[first].site, nthreads - done, nthreads);
            return false;
        }
        for (int i = 0; i < nthreads; ++i) threads[i].state = RUNNING;
    }
}

// ---- arrays: staged copies between guard bytes -----------------------------------------------

static const size_t kGuard = 256;
static const unsigned char kPoison = 0xFF;  // NaN in float16, float32 and float64

// Host memory [lo, hi) that array arguments reach, copied to `copy` between guard bytes.
struct Extent {
    unsigned long long lo, hi;
    bool writable;  // reached through a non-const pointer
    unsigned char* buffer;
    unsigned char* copy;
};

static bool stage(Extent* extents, int count) {
    for (int r = 0; r < count; ++r) {
        Extent& e = extents[r];
        const size_t n = e.hi - e.lo;
        e.buffer = static_cast<unsigned char*>(malloc(n + 2 * kGuard + 64));
        if (!e.buffer) return false;
        memset(e.buffer, kPoison, n + 2 * kGuard + 64);
        // keep the address's alignment modulo 64
        e.copy = e.buffer + kGuard + ((e.lo - (unsigned long long)(e.buffer + kGuard)) & 63);
        memcpy(e.copy, reinterpret_cast<const void*>(e.lo), n);
    }
    return true;
}

static bool guards_intact(const Extent& e) {
    const unsigned char* end = e.buffer + (e.hi - e.lo) + 2 * kGuard + 64;
    for (const unsigned char* p = e.buffer; p < e.copy; ++p)
        if (*p != kPoison) return false;
    for (const unsigned char* p = e.copy + (e.hi - e.lo); p < end; ++p)
        if (*p != kPoison) return false;
    return true;
}

// Checks the guards, copies writable extents back, frees the copies.
static void unstage(Extent* extents, int count, bool ran) {
    for (int r = 0; r < count; ++r) {
        Extent& e = extents[r];
        if (!e.buffer) continue;
        const size_t n = e.hi - e.lo;
        if (ran && !guards_intact(e))
            fail("the kernel wrote outside an array argument (guard bytes around host bytes "
                 "[%#llx, %#llx) changed)", e.lo, e.hi);
        else if (ran && e.writable)
            memcpy(reinterpret_cast<void*>(e.lo), e.copy, n);
        else if (ran && memcmp(e.copy, reinterpret_cast<const void*>(e.lo), n))
            fail("the kernel changed an array passed only through const pointers (host bytes "
                 "[%#llx, %#llx))", e.lo, e.hi);
        free(e.buffer);
        e.buffer = nullptr;
    }
}

// The staged address of `address`, in the extent that holds it.
static unsigned long long translate(unsigned long long address, const Extent* extents,
                                    int count) {
    for (int pass = 0; pass < 2; ++pass) {  // an empty extent only when no other holds it
        for (int r = 0; r < count; ++r) {
            const Extent& e = extents[r];
            if (pass == 0 ? (e.lo <= address && address < e.hi) : e.lo == address)
                return (unsigned long long)e.copy + (address - e.lo);
        }
    }
    return address;
}

template <typename A>
constexpr char kind() {
    typedef typename std::remove_pointer<A>::type P;
    return std::is_pointer<A>::value ? (std::is_const<P>::value ? 'P' : 'p')
           : std::is_floating_point<A>::value ? 'f'
           : (std::is_integral<A>::value || std::is_enum<A>::value) ? 'i'
                                                                   : '?';
}

template <typename A>
constexpr int size() {
    typedef typename std::remove_cv<typename std::remove_pointer<A>::type>::type P;
    return std::is_pointer<A>::value ? (std::is_void<P>::value ? 0 : (int)sizeof(P))
                                     : (int)sizeof(A);
}

template <typename A>
A load(const unsigned char* from) {
    A value;
    memcpy(&value, from, sizeof(A));
    return value;
}

template <typename... Args, size_t... I>
std::tuple<Args...> unpack(const unsigned char* packed, std::index_sequence<I...>) {
    return std::tuple<Args...>(load<Args>(packed + 8 * I)...);
}

}  // namespace emu

// __syncthreads and the shuffles record their call site, to check that threads meet at one.
inline void emu_syncthreads(int site) { emu::wait_at(emu::AT_SYNC, site); }
#define __syncthreads() emu_syncthreads(__LINE__)
#define __shfl_sync(mask, v, src, ...) \
    emu::exchange(__LINE__, mask, emu_width(__VA_ARGS__), v, (int)(src))
#define __shfl_down_sync(mask, v, delta, ...) emu_shfl_down(__LINE__, mask, \
    emu_width(__VA_ARGS__), v, (int)(delta))
#define __shfl_up_sync(mask, v, delta, ...) emu_shfl_up(__LINE__, mask, \
    emu_width(__VA_ARGS__), v, (int)(delta))
#define __shfl_xor_sync(mask, v, bits, ...) \
    emu::exchange(__LINE__, mask, emu_width(__VA_ARGS__), v, emu::lane() ^ (int)(bits))
inline int emu_width(int width = 32) { return width; }
template <typename V>
inline V emu_shfl_down(int site, unsigned mask, int width, V v, int delta) {
    const int src = emu::lane() + delta;
    return emu::exchange(site, mask, width, v, src < 32 ? src : emu::lane());
}
template <typename V>
inline V emu_shfl_up(int site, unsigned mask, int width, V v, int delta) {
    const int src = emu::lane() - delta;
    return emu::exchange(site, mask, width, v, src >= 0 ? src : emu::lane());
}

// "P4,p2,i8,f8": per parameter, its kind (P const pointer, p pointer, i integer, f floating,
// ? other) and size (the pointee's for pointers, 0 for void*).
template <typename... Args>
const char* emu_signature(void (*)(Args...)) {
    static std::string sig;
    if (sig.empty()) {
        const char kinds[] = {emu::kind<Args>()..., 0};
        const int sizes[] = {emu::size<Args>()..., 0};
        for (size_t k = 0; k < sizeof...(Args); ++k) {
            if (k) sig += ',';
            sig += kinds[k];
            sig += std::to_string(sizes[k]);
        }
        if (sig.empty()) sig = "-";
    }
    return sig.c_str();
}

// Runs kernel<<<grid, block>>>: dims = grid x, y, z, block x, y, z; `packed` holds one 8-byte
// slot per argument (a value, or the host address an array starts at); `extents` holds
// `count` (lo, hi, writable) triples, the memory the arrays reach, disjoint. Pointers are
// translated to staged copies of the extents. Returns "" or an error message.
template <typename... Args>
const char* emu_launch(void (*kernel)(Args...), const unsigned* dims, unsigned char* packed,
                       const unsigned long long* extents, int count) {
    emu::error[0] = 0;
    if (!emu::stacks) {
        // NOTE: a thread that overflows its stack hits a guard page (a crash, never a silent
        // write into its neighbour's stack).
        emu::page = (size_t)sysconf(_SC_PAGESIZE);
        emu::slot = emu::page + (emu::kStack + emu::page - 1) / emu::page * emu::page;
        void* mapped = mmap(nullptr, emu::kMaxThreads * emu::slot, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mapped == MAP_FAILED) return "out of host memory for thread stacks";
        emu::stacks = static_cast<char*>(mapped);
        for (int i = 0; i < emu::kMaxThreads; ++i)
            mprotect(emu::stacks + (size_t)i * emu::slot, emu::page, PROT_NONE);
    }
    gridDim.x = dims[0], gridDim.y = dims[1], gridDim.z = dims[2];
    blockDim.x = dims[3], blockDim.y = dims[4], blockDim.z = dims[5];
    const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    if (threads == 0 || threads > (unsigned)emu::kMaxThreads || threads % 32) {
        emu::fail("%u threads per block: the emulator runs whole warps, up to %d", threads,
                  emu::kMaxThreads);
        return emu::error;
    }
    std::vector<emu::Extent> staged(count);
    for (int r = 0; r < count; ++r)
        staged[r] = {extents[3 * r], extents[3 * r + 1], extents[3 * r + 2] != 0, nullptr,
                     nullptr};
    const bool ready = emu::stage(staged.data(), count);
    if (ready) {
        const bool is_pointer[] = {std::is_pointer<Args>::value..., false};
        for (size_t k = 0; k < sizeof...(Args); ++k) {
            if (!is_pointer[k]) continue;
            unsigned long long address;
            memcpy(&address, packed + 8 * k, 8);
            if (address) address = emu::translate(address, staged.data(), count);
            memcpy(packed + 8 * k, &address, 8);
        }
        std::tuple<Args...> args =
            emu::unpack<Args...>(packed, std::index_sequence_for<Args...>{});
        emu::body = [&]() { std::apply(kernel, args); };
        bool ok = true;
        emu::in_block = true;
        for (blockIdx.z = 0; ok && blockIdx.z < gridDim.z; ++blockIdx.z)
            for (blockIdx.y = 0; ok && blockIdx.y < gridDim.y; ++blockIdx.y)
                for (blockIdx.x = 0; ok && blockIdx.x < gridDim.x; ++blockIdx.x)
                    ok = emu::run_block();
        emu::in_block = false;
        if (!ok) emu::abandon_threads();
        emu::unstage(staged.data(), count, ok);
    } else {
        emu::unstage(staged.data(), count, false);
        emu::fail("out of host memory for staged arrays");
    }
    return emu::error;
}
