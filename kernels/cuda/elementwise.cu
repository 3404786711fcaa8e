// Element-wise CVL functions (`*_wu?`): binary and unary operators, SELECT, fills, RAND.
// One thread per element in a grid-stride loop. Kernel names: <op>_<type letter>
// (z = INT, d = FLOAT, b = BOOL), CVL style.

#define BIN_KERNEL(NAME, TA, TR, EXPR)                                                   \
    extern "C" __global__ void NAME(const TA* __restrict__ a, const TA* __restrict__ b,  \
                                    TR* __restrict__ r, i64 n, i64* err) {               \
        GRID_LOOP(j, n) {                                                                \
            TA x = a[j];                                                                 \
            TA y = b[j];                                                                 \
            r[j] = (EXPR);                                                               \
        }                                                                                \
    }

#define UN_KERNEL(NAME, TA, TR, EXPR)                                                    \
    extern "C" __global__ void NAME(const TA* __restrict__ a, TR* __restrict__ r, i64 n) {\
        GRID_LOOP(j, n) {                                                                \
            TA x = a[j];                                                                 \
            r[j] = (EXPR);                                                               \
        }                                                                                \
    }

// ----- INT -----
BIN_KERNEL(add_wuz, i64, i64, wadd(x, y))
BIN_KERNEL(sub_wuz, i64, i64, wsub(x, y))
BIN_KERNEL(mul_wuz, i64, i64, wmul(x, y))
BIN_KERNEL(div_wuz, i64, i64, idiv(x, y, err))
BIN_KERNEL(mod_wuz, i64, i64, imod(x, y, err))
BIN_KERNEL(les_wuz, i64, b8, (b8)(x < y))
BIN_KERNEL(leq_wuz, i64, b8, (b8)(x <= y))
BIN_KERNEL(grt_wuz, i64, b8, (b8)(x > y))
BIN_KERNEL(geq_wuz, i64, b8, (b8)(x >= y))
BIN_KERNEL(eql_wuz, i64, b8, (b8)(x == y))
BIN_KERNEL(neq_wuz, i64, b8, (b8)(x != y))
BIN_KERNEL(lsh_wuz, i64, i64, ishl(x, y))
BIN_KERNEL(rsh_wuz, i64, i64, ishr(x, y))
BIN_KERNEL(and_wuz, i64, i64, x & y)
BIN_KERNEL(ior_wuz, i64, i64, x | y)
BIN_KERNEL(xor_wuz, i64, i64, x ^ y)
BIN_KERNEL(max_wuz, i64, i64, y > x ? y : x)
BIN_KERNEL(min_wuz, i64, i64, y < x ? y : x)

// ----- FLOAT -----
BIN_KERNEL(add_wud, double, double, x + y)
BIN_KERNEL(sub_wud, double, double, x - y)
BIN_KERNEL(mul_wud, double, double, x * y)
BIN_KERNEL(div_wud, double, double, x / y)
BIN_KERNEL(les_wud, double, b8, (b8)(x < y))
BIN_KERNEL(leq_wud, double, b8, (b8)(x <= y))
BIN_KERNEL(grt_wud, double, b8, (b8)(x > y))
BIN_KERNEL(geq_wud, double, b8, (b8)(x >= y))
BIN_KERNEL(eql_wud, double, b8, (b8)(x == y))
BIN_KERNEL(neq_wud, double, b8, (b8)(x != y))
BIN_KERNEL(max_wud, double, double, y > x ? y : x)
BIN_KERNEL(min_wud, double, double, y < x ? y : x)

// ----- BOOL (stored 0/1; results normalised) -----
BIN_KERNEL(and_wub, b8, b8, (b8)((x != 0) & (y != 0)))
BIN_KERNEL(ior_wub, b8, b8, (b8)((x != 0) | (y != 0)))
BIN_KERNEL(xor_wub, b8, b8, (b8)((x != 0) ^ (y != 0)))
BIN_KERNEL(eql_wub, b8, b8, (b8)((x != 0) == (y != 0)))
BIN_KERNEL(neq_wub, b8, b8, (b8)((x != 0) != (y != 0)))

// ----- unary -----
UN_KERNEL(not_wuz, i64, i64, ~x)
UN_KERNEL(not_wub, b8, b8, (b8)(x == 0))
// Float -> int conversions saturate and map NaN to 0 (the cvt.*.s64.f64 instructions).
UN_KERNEL(flr_wud, double, i64, __double2ll_rd(x))
UN_KERNEL(cei_wud, double, i64, __double2ll_ru(x))
UN_KERNEL(trn_wud, double, i64, __double2ll_rz(x))
UN_KERNEL(rou_wud, double, i64, __double2ll_rz(x + 0.5))
UN_KERNEL(dbl_wuz, i64, double, (double)x)
UN_KERNEL(boo_wuz, i64, b8, (b8)(x != 0))
UN_KERNEL(int_wub, b8, i64, (i64)(x != 0))
UN_KERNEL(log_wud, double, double, log(x))
UN_KERNEL(sqt_wud, double, double, sqrt(x))
UN_KERNEL(exp_wud, double, double, exp(x))
UN_KERNEL(sin_wud, double, double, sin(x))
UN_KERNEL(cos_wud, double, double, cos(x))
UN_KERNEL(tan_wud, double, double, tan(x))
UN_KERNEL(asn_wud, double, double, asin(x))
UN_KERNEL(acs_wud, double, double, acos(x))
UN_KERNEL(atn_wud, double, double, atan(x))
UN_KERNEL(snh_wud, double, double, sinh(x))
UN_KERNEL(csh_wud, double, double, cosh(x))
UN_KERNEL(tnh_wud, double, double, tanh(x))

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
