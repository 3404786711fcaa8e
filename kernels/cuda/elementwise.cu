// Element-wise CVL functions (`*_wu?`): SELECT, fills, RAND (and the generated operators).
// One thread per element in a grid-stride loop. Kernel names: <op>_<type letter>
// (z = INT, d = FLOAT, b = BOOL), CVL style.

// The binary and unary operator kernels (`add_wuz`, `sqt_wud`, ...) are generated from
// cvl-cuda's table of element-wise semantics (`cvl-cuda/src/semantics.rs`) and appended to
// this text; the superoperator kernels use the same expressions.

// ----- SELECT: r = f ? a : b -----
#define SEL_KERNEL(NAME, T)                                                              \
    extern "C" __global__ void NAME(const b8* __restrict__ f, const T* __restrict__ a,   \
                                    const T* __restrict__ b, T* __restrict__ r, i64 n) { \
        GRID_LOOP(j, n) { r[j] = f[j] ? a[j] : b[j]; }                                   \
    }
SEL_KERNEL(sel_wuz, i64)
SEL_KERNEL(sel_wud, double)
SEL_KERNEL(sel_wub, b8)

// ----- fills (dis_vu?): the value arrives as its 64-bit pattern -----
extern "C" __global__ void dis_vu8(u64* __restrict__ r, u64 bits, i64 n) {
    GRID_LOOP(j, n) { r[j] = bits; }
}
extern "C" __global__ void dis_vu1(b8* __restrict__ r, u64 bits, i64 n) {
    GRID_LOOP(j, n) { r[j] = (b8)(bits != 0); }
}

// ----- RAND: r[j] uniform in [0, |bound[j]|) -----
// The generator is the CPU library's splitmix64 stream: element j of a call whose generator
// state is `state` gets mix(state + (j+1) * GOLDEN), so both backends draw the same numbers.
#define GOLDEN 0x9e3779b97f4a7c15ull
__device__ __forceinline__ u64 splitmix64_mix(u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
extern "C" __global__ void rnd_wuz(const i64* __restrict__ bound, i64* __restrict__ r, i64 n,
                                   u64 state, i64* err) {
    GRID_LOOP(j, n) {
        i64 b = bound[j];
        if (b == 0) {
            report_error(err, ERR_RAND_ZERO, j, 0);
            r[j] = 0;
            continue;
        }
        u64 m = b < 0 ? (0ull - (u64)b) : (u64)b;
        r[j] = (i64)(splitmix64_mix(state + ((u64)j + 1ull) * GOLDEN) % m);
    }
}

// ----- copy with type change: bool flags as 64-bit ints (used by pack) -----
extern "C" __global__ void cpy_b2z(const b8* __restrict__ a, i64* __restrict__ r, i64 n) {
    GRID_LOOP(j, n) { r[j] = a[j] ? 1 : 0; }
}
