// A CPU emulation of the small part of CUDA that the CVL kernels use, so that the kernels
// (and the CUDA backend driving them) can be tested on a machine without a GPU.
//
// This header is prepended to a kernel module (after which common.cuh and the module follow)
// and the result is compiled as C++17 into a shared library. Each block runs as BLOCK
// cooperative fibers (ucontext); __syncthreads and the warp shuffles are barriers at which a
// fiber yields to the next one. Blocks run one after the other, so `__shared__` (mapped to
// `static`) is shared by the threads of the running block, as on a GPU. Atomics need no
// synchronisation because only one fiber runs at a time. Slow, but exact enough to check
// the algorithms: scans, segmented operators, radix sort, error reports.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ucontext.h>

struct emu_dim3 {
    unsigned x, y, z;
};

struct EmuFiber {
    ucontext_t ctx;
    emu_dim3 tid;
    bool done;
};

struct EmuState {
    EmuFiber* cur;
    emu_dim3 bid, bdim, gdim;
    unsigned live;
    unsigned bar_count, bar_gen;
    unsigned wcount[32], wgen[32];
    uint64_t slot[1024];
    ucontext_t sched;
    void* fn;
    int nargs;
    const uint64_t* args;
};
static EmuState emu_s;

#define threadIdx (emu_s.cur->tid)
#define blockIdx (emu_s.bid)
#define blockDim (emu_s.bdim)
#define gridDim (emu_s.gdim)
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(x)
#define __shared__ static

static inline void emu_yield() { swapcontext(&emu_s.cur->ctx, &emu_s.sched); }

static inline void __syncthreads() {
    unsigned g = emu_s.bar_gen;
    if (++emu_s.bar_count == emu_s.live) {
        emu_s.bar_count = 0;
        emu_s.bar_gen++;
    } else {
        while (emu_s.bar_gen == g) emu_yield();
    }
}

static inline void emu_warp_sync() {
    unsigned w = threadIdx.x >> 5;
    unsigned g = emu_s.wgen[w];
    if (++emu_s.wcount[w] == 32) {
        emu_s.wcount[w] = 0;
        emu_s.wgen[w]++;
    } else {
        while (emu_s.wgen[w] == g) emu_yield();
    }
}

template <class T>
static inline T emu_shfl(T v, int src_lane) {
    unsigned l = threadIdx.x;
    uint64_t b = 0;
    memcpy(&b, &v, sizeof(T));
    emu_s.slot[l] = b;
    emu_warp_sync();
    T r = v;
    if (src_lane >= 0 && src_lane < 32) memcpy(&r, &emu_s.slot[(l & ~31u) + src_lane], sizeof(T));
    emu_warp_sync();
    return r;
}
template <class T>
static inline T __shfl_up_sync(unsigned, T v, int d) {
    int lane = threadIdx.x & 31;
    return emu_shfl(v, lane >= d ? lane - d : lane);
}
template <class T>
static inline T __shfl_down_sync(unsigned, T v, int d) {
    int lane = threadIdx.x & 31;
    return emu_shfl(v, lane + d < 32 ? lane + d : lane);
}
static inline unsigned __match_any_sync(unsigned, int v) {
    unsigned l = threadIdx.x;
    emu_s.slot[l] = (uint64_t)(int64_t)v;
    emu_warp_sync();
    unsigned m = 0, base = l & ~31u;
    for (unsigned j = 0; j < 32; j++)
        if ((int)(int64_t)emu_s.slot[base + j] == v) m |= 1u << j;
    emu_warp_sync();
    return m;
}

static inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long c,
                                           unsigned long long v) {
    unsigned long long o = *p;
    if (o == c) *p = v;
    return o;
}
static inline long long atomicMax(long long* p, long long v) {
    long long o = *p;
    if (v > o) *p = v;
    return o;
}
static inline long long atomicMin(long long* p, long long v) {
    long long o = *p;
    if (v < o) *p = v;
    return o;
}
static inline int atomicAdd(int* p, int v) {
    int o = *p;
    *p = o + v;
    return o;
}
static inline unsigned long long atomicOr(unsigned long long* p, unsigned long long v) {
    unsigned long long o = *p;
    *p = o | v;
    return o;
}
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __ffs(unsigned x) { return __builtin_ffs((int)x); }
static inline long long __double_as_longlong(double x) {
    long long r;
    memcpy(&r, &x, 8);
    return r;
}
static inline double __longlong_as_double(long long x) {
    double r;
    memcpy(&r, &x, 8);
    return r;
}
// Float -> int conversions saturate and map NaN to 0, as the PTX cvt instructions do.
static inline long long emu_sat(double x) {
    if (std::isnan(x)) return 0;
    if (x >= 9223372036854775808.0) return 0x7fffffffffffffffll;
    if (x < -9223372036854775808.0) return (long long)0x8000000000000000ull;
    return (long long)x;
}
static inline long long __double2ll_rd(double x) { return emu_sat(std::floor(x)); }
static inline long long __double2ll_ru(double x) { return emu_sat(std::ceil(x)); }
static inline long long __double2ll_rz(double x) { return emu_sat(std::trunc(x)); }

// The most argument slots a kernel may take (superoperators take one per operand).
#define EMU_MAX_ARGS 32
#define EMU_A8 uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t
typedef void (*emu_fmax)(EMU_A8, EMU_A8, EMU_A8, EMU_A8);

// Every kernel argument is passed as a 64-bit integer slot: on x86-64 (System V) pointers,
// 64-bit integers and `int`s all travel in integer slots, and an `int` parameter reads the
// low half of its slot. Every kernel is called with EMU_MAX_ARGS slots (the unused ones
// zero): a System V callee reads only its own parameters and the caller pops the stack, so
// one call shape serves every arity.
static void emu_trampoline() {
    uint64_t a[EMU_MAX_ARGS] = {0};
    for (int i = 0; i < emu_s.nargs && i < EMU_MAX_ARGS; i++) a[i] = emu_s.args[i];
    ((emu_fmax)emu_s.fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                         a[11], a[12], a[13], a[14], a[15], a[16], a[17], a[18], a[19],
                         a[20], a[21], a[22], a[23], a[24], a[25], a[26], a[27], a[28],
                         a[29], a[30], a[31]);
    emu_s.cur->done = true;
    emu_s.live--;
    // A barrier that only this thread's exit was holding back opens now.
    if (emu_s.bar_count > 0 && emu_s.bar_count == emu_s.live) {
        emu_s.bar_count = 0;
        emu_s.bar_gen++;
    }
}

#define EMU_STACK (256 * 1024)

// Runs kernel `fn` with `nargs` argument slots on `blocks` blocks of `threads` threads.
// Returns 0, or -1 when the threads of a block deadlock (a barrier nobody can pass).
extern "C" int emu_launch(void* fn, int nargs, const uint64_t* args, unsigned blocks,
                          unsigned threads) {
    static EmuFiber* fibers = 0;
    static char* stacks = 0;
    static unsigned have = 0;
    if (threads > 1024 || nargs < 0 || nargs > EMU_MAX_ARGS) return -1;
    if (have < threads) {
        free(fibers);
        free(stacks);
        fibers = (EmuFiber*)calloc(threads, sizeof(EmuFiber));
        stacks = (char*)malloc((size_t)threads * EMU_STACK);
        if (!fibers || !stacks) return -1;
        have = threads;
    }
    emu_s.fn = fn;
    emu_s.nargs = nargs;
    emu_s.args = args;
    emu_s.gdim = emu_dim3{blocks, 1, 1};
    emu_s.bdim = emu_dim3{threads, 1, 1};
    for (unsigned b = 0; b < blocks; b++) {
        emu_s.bid = emu_dim3{b, 0, 0};
        emu_s.live = threads;
        emu_s.bar_count = 0;
        memset(emu_s.wcount, 0, sizeof emu_s.wcount);
        for (unsigned t = 0; t < threads; t++) {
            EmuFiber* f = &fibers[t];
            getcontext(&f->ctx);
            f->ctx.uc_stack.ss_sp = stacks + (size_t)t * EMU_STACK;
            f->ctx.uc_stack.ss_size = EMU_STACK;
            f->ctx.uc_link = &emu_s.sched;
            makecontext(&f->ctx, emu_trampoline, 0);
            f->tid = emu_dim3{t, 0, 0};
            f->done = false;
        }
        unsigned long long idle_rounds = 0;
        while (emu_s.live > 0) {
            unsigned gen = emu_s.bar_gen, live = emu_s.live;
            unsigned wg = 0;
            for (unsigned w = 0; w < 32; w++) wg += emu_s.wgen[w];
            for (unsigned t = 0; t < threads; t++) {
                if (fibers[t].done) continue;
                emu_s.cur = &fibers[t];
                swapcontext(&emu_s.sched, &fibers[t].ctx);
            }
            unsigned wg2 = 0;
            for (unsigned w = 0; w < 32; w++) wg2 += emu_s.wgen[w];
            if (gen == emu_s.bar_gen && live == emu_s.live && wg == wg2) {
                if (++idle_rounds > 3) return -1;
            } else {
                idle_rounds = 0;
            }
        }
    }
    return 0;
}
