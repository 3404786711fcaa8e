// The scan and reduction algorithm (templates; `scan.cu` instantiates them for every operator
// and type, and each folding superoperator for its own element-wise source).
//
// One algorithm serves all cases: a scan over (key, value) pairs with the operator
//   (ka, va) . (kb, vb) = (kb, ka == kb ? va op vb : vb)
// where the key is the per-element segment index (keys == 0 means one segment: key 0). Keys
// never decrease, so the operator is associative and restarts at every segment boundary.
//
// Three phases over tiles of TILE = BLOCK * ITEMS elements:
//   scan_tiles_X   one block per tile: the tile's aggregate pair
//   scan_aggs_X    one block: exclusive scan of the tile aggregates, in place (the carries)
//   scan_down_X    one block per tile: rescan with the carry; mode 0 writes the exclusive
//                  scan, mode 1 the inclusive scan, mode 2 writes each segment's total to
//                  out[key] (a segmented reduction; the caller pre-fills out with the output
//                  identity so that empty segments keep it)
//   reduce_aggs_X  one block: total of the tile aggregates (unsegmented reduction)
// With a single tile the middle phase is skipped.
//
// Identities. Each operator has two: `id()`, a true neutral element used inside the
// kernels (padding, carries, warp lanes past the end), which never changes an element it is
// combined with; and `out_id()`, the reference library's identity, which is only ever
// written as a result (the first element of each segment of an exclusive scan) and never
// combined with an element, as the CPU library does. They differ for MAX/MIN: on INT the
// outputs are the 32-bit INT_MIN / INT_MAX of the reference (64-bit elements beyond them
// still reduce exactly), on FLOAT -/+1.0e36 rounded through a float (elements beyond it,
// and infinities, too); and for FLOAT `+`, whose neutral is -0.0 (so a sum of -0.0 stays
// -0.0) while the output identity is 0.0.
//
// Float MAX and MIN. The CPU library (and CMU's) folds a segment from its first element with
// an operator that keeps its left operand unless the right one is strictly beyond it: a NaN
// first element therefore stays to the end (every comparison with it fails), and any other
// NaN is passed over. A tree of that operator is not the fold (a NaN that lands on the left
// of an inner combination would stick). So each element is loaded through `in(x, start)`:
// a NaN that does not start its segment becomes the neutral `id()`, and the operator lets a
// NaN win from either side (`b != b`); the only NaNs left are segment starts, which the fold
// keeps whichever way the tree groups them. Ties (only 0.0 and -0.0 are equal and differ)
// keep the left operand, so every combination must keep the elements' order, as the scans
// do and `reduce_aggs` does.

#define ITEMS 8
#define TILE (BLOCK * ITEMS)

// LOAD: an element `x` as the accumulator type (`start`: it begins its segment).
#define DEF_OP_LOAD(NAME, SIN, TT, SOUT, ID, OUT_ID, EXPR, LOAD)                   \
    struct NAME {                                                                \
        typedef SIN Sin;                                                         \
        typedef TT T;                                                            \
        typedef SOUT Sout;                                                       \
        __device__ static __forceinline__ TT id() { return (ID); }               \
        __device__ static __forceinline__ TT out_id() { return (OUT_ID); }       \
        __device__ static __forceinline__ TT ap(TT a, TT b) { return (EXPR); }   \
        __device__ static __forceinline__ TT in(SIN x, bool start) {             \
            (void)start;                                                         \
            return (LOAD);                                                       \
        }                                                                        \
    };
#define DEF_OP(NAME, SIN, TT, SOUT, ID, OUT_ID, EXPR) \
    DEF_OP_LOAD(NAME, SIN, TT, SOUT, ID, OUT_ID, EXPR, (TT)x)

#define NEG_INF_D __longlong_as_double((i64)0xfff0000000000000ull)
#define POS_INF_D __longlong_as_double((i64)0x7ff0000000000000ull)
#define NEG_ZERO_D __longlong_as_double(INT_MIN64)

DEF_OP(OpAddZ, i64, i64, i64, 0, 0, wadd(a, b))
DEF_OP(OpMulZ, i64, i64, i64, 1, 1, wmul(a, b))
DEF_OP(OpMaxZ, i64, i64, i64, INT_MIN64, INT_MAX_ID32, b > a ? b : a)
DEF_OP(OpMinZ, i64, i64, i64, INT_MAX64, INT_MIN_ID32, b < a ? b : a)
DEF_OP(OpAndZ, i64, i64, i64, -1, -1, a & b)
DEF_OP(OpIorZ, i64, i64, i64, 0, 0, a | b)
DEF_OP(OpXorZ, i64, i64, i64, 0, 0, a ^ b)
DEF_OP(OpAddD, double, double, double, NEG_ZERO_D, 0.0, a + b)
DEF_OP(OpMulD, double, double, double, 1.0, 1.0, a * b)
DEF_OP_LOAD(OpMaxD, double, double, double, NEG_INF_D, FLOAT_MAX_ID, (b > a || b != b) ? b : a,
            (!start && x != x) ? NEG_INF_D : x)
DEF_OP_LOAD(OpMinD, double, double, double, POS_INF_D, -FLOAT_MAX_ID, (b < a || b != b) ? b : a,
            (!start && x != x) ? POS_INF_D : x)
DEF_OP(OpAndB, b8, int, b8, 1, 1, a & b)
DEF_OP(OpIorB, b8, int, b8, 0, 0, a | b)
DEF_OP(OpXorB, b8, int, b8, 0, 0, a ^ b)
DEF_OP(OpAddBZ, b8, i64, i64, 0, 0, a + b)
DEF_OP(OpMaxU, u32, u32, u32, 0u, 0u, a > b ? a : b)

// The pair operator: a then b.
template <class OP>
__device__ __forceinline__ void combine(u32 ka, typename OP::T va, u32& kb, typename OP::T& vb) {
    if (ka == kb) vb = OP::ap(va, vb);
}

// Block-wide exclusive scan of one pair per thread. Returns in (pk, pv) the combination of
// the pairs of all earlier threads (has = false for thread 0), and in (tk, tv) the total.
template <class OP>
__device__ void block_scan(u32 k, typename OP::T v, bool& has, u32& pk, typename OP::T& pv,
                           u32& tk, typename OP::T& tv) {
    typedef typename OP::T T;
    __shared__ u32 wk[NWARPS];
    __shared__ T wv[NWARPS];
    int lane = threadIdx.x & 31;
    int w = threadIdx.x >> 5;
    u32 ik = k;
    T iv = v;
    for (int d = 1; d < 32; d <<= 1) {
        u32 ok = __shfl_up_sync(FULL_MASK, ik, d);
        T ov = __shfl_up_sync(FULL_MASK, iv, d);
        if (lane >= d && ok == ik) iv = OP::ap(ov, iv);
    }
    u32 ek = __shfl_up_sync(FULL_MASK, ik, 1);
    T ev = __shfl_up_sync(FULL_MASK, iv, 1);
    if (lane == 31) {
        wk[w] = ik;
        wv[w] = iv;
    }
    __syncthreads();
    if (w == 0) {
        u32 sk = lane < NWARPS ? wk[lane] : 0u;
        T sv = lane < NWARPS ? wv[lane] : OP::id();
        for (int d = 1; d < NWARPS; d <<= 1) {
            u32 ok = __shfl_up_sync(FULL_MASK, sk, d);
            T ov = __shfl_up_sync(FULL_MASK, sv, d);
            if (lane >= d && ok == sk) sv = OP::ap(ov, sv);
        }
        if (lane < NWARPS) {
            wk[lane] = sk;
            wv[lane] = sv;
        }
    }
    __syncthreads();
    if (w == 0) {
        has = lane > 0;
        pk = ek;
        pv = ev;
    } else {
        has = true;
        pk = wk[w - 1];
        pv = wv[w - 1];
        if (lane > 0) {
            u32 k2 = ek;
            T v2 = ev;
            combine<OP>(pk, pv, k2, v2);
            pk = k2;
            pv = v2;
        }
    }
    tk = wk[NWARPS - 1];
    tv = wv[NWARPS - 1];
    __syncthreads();
}

// Where the elements of a scan come from: a source is a functor of the element index. A
// vector (`VecSrc`), or a folding superoperator's element-wise tree, generated with its
// operands as members (so the values are computed as the tile is loaded, never stored).
template <class OP>
struct VecSrc {
    const typename OP::Sin* in;
    __device__ __forceinline__ typename OP::Sin operator()(i64 g) const { return in[g]; }
};

// Loads one tile into shared memory (coalesced). Padding: identity values with the key of the
// vector's last element, so the tile aggregate is unchanged.
template <class OP, class SRC>
__device__ void load_tile(const SRC& in, const u32* keys, i64 n, i64 base,
                          typename OP::T* sv, u32* sk) {
    u32 pad_key = keys ? keys[n - 1] : 0u;
    for (int i = threadIdx.x; i < TILE; i += BLOCK) {
        i64 g = base + i;
        if (g < n) {
            u32 k = keys ? keys[g] : 0u;
            bool start = g == 0 || (keys && keys[g - 1] != k);
            sv[i] = OP::in(in(g), start);
            sk[i] = k;
        } else {
            sv[i] = OP::id();
            sk[i] = pad_key;
        }
    }
    __syncthreads();
}

template <class OP>
__device__ void thread_aggregate(const typename OP::T* sv, const u32* sk, u32& k,
                                 typename OP::T& v) {
    int first = threadIdx.x * ITEMS;
    k = sk[first];
    v = sv[first];
    for (int i = 1; i < ITEMS; i++) {
        u32 k2 = sk[first + i];
        typename OP::T v2 = sv[first + i];
        combine<OP>(k, v, k2, v2);
        k = k2;
        v = v2;
    }
}

// The first steps of both per-tile phases: this block's tile loaded into (sv, sk), each
// thread's run aggregated, and the block-wide exclusive scan of those (see block_scan).
template <class OP, class SRC>
__device__ void scan_tile(const SRC& in, const u32* keys, i64 n, i64 base,
                          typename OP::T* sv, u32* sk, bool& has, u32& pk,
                          typename OP::T& pv, u32& tk, typename OP::T& tv) {
    load_tile<OP, SRC>(in, keys, n, base, sv, sk);
    u32 k;
    typename OP::T v;
    thread_aggregate<OP>(sv, sk, k, v);
    block_scan<OP>(k, v, has, pk, pv, tk, tv);
}

template <class OP, class SRC>
__device__ void scan_tiles(const SRC& in, const u32* keys, i64 n,
                           typename OP::T* agg_v, u32* agg_k) {
    typedef typename OP::T T;
    __shared__ T sv[TILE];
    __shared__ u32 sk[TILE];
    i64 base = (i64)blockIdx.x * TILE;
    bool has;
    u32 pk, tk;
    T pv, tv;
    scan_tile<OP, SRC>(in, keys, n, base, sv, sk, has, pk, pv, tk, tv);
    if (threadIdx.x == 0) {
        agg_v[blockIdx.x] = tv;
        if (agg_k) agg_k[blockIdx.x] = tk;
    }
}

template <class OP>
__device__ void scan_aggs(typename OP::T* agg_v, u32* agg_k, i64 ntiles) {
    typedef typename OP::T T;
    __shared__ u32 last_k;
    bool chas = false;
    u32 ck = 0;
    T cv = OP::id();
    if (threadIdx.x == 0) last_k = agg_k[ntiles - 1];
    __syncthreads();
    for (i64 base = 0; base < ntiles; base += BLOCK) {
        i64 idx = base + threadIdx.x;
        u32 k = idx < ntiles ? agg_k[idx] : last_k;
        T v = idx < ntiles ? agg_v[idx] : OP::id();
        bool has;
        u32 pk, tk;
        T pv, tv;
        block_scan<OP>(k, v, has, pk, pv, tk, tv);
        if (has && chas) {
            combine<OP>(ck, cv, pk, pv);
        } else if (chas) {
            pk = ck;
            pv = cv;
            has = true;
        }
        if (idx < ntiles) {
            agg_k[idx] = has ? pk : 0u;
            agg_v[idx] = has ? pv : OP::id();
        }
        if (chas) {
            combine<OP>(ck, cv, tk, tv);
        }
        ck = tk;
        cv = tv;
        chas = true;
    }
}

template <class OP, class SRC>
__device__ void scan_down(const SRC& in, const u32* keys, i64 n,
                          const typename OP::T* carry_v, const u32* carry_k,
                          typename OP::Sout* out, int mode) {
    typedef typename OP::T T;
    __shared__ T sv[TILE];
    __shared__ u32 sk[TILE];
    i64 base = (i64)blockIdx.x * TILE;
    bool has;
    u32 pk, tk;
    T pv, tv;
    scan_tile<OP, SRC>(in, keys, n, base, sv, sk, has, pk, pv, tk, tv);
    if (blockIdx.x > 0 && carry_v) {
        u32 ck = carry_k ? carry_k[blockIdx.x] : 0u;
        T cv = carry_v[blockIdx.x];
        if (has) {
            combine<OP>(ck, cv, pk, pv);
        } else {
            pk = ck;
            pv = cv;
            has = true;
        }
    }
    int first = threadIdx.x * ITEMS;
    for (int i = 0; i < ITEMS; i++) {
        u32 kj = sk[first + i];
        T xj = sv[first + i];
        bool pred = has && pk == kj;  // an earlier element of the same segment
        T inc = pred ? OP::ap(pv, xj) : xj;
        if (mode == 2) {
            i64 g = base + first + i;
            if (g < n) {
                bool last;
                if (g == n - 1) last = true;
                else if (first + i + 1 < TILE) last = sk[first + i + 1] != kj;
                else last = (keys ? keys[g + 1] : 0u) != kj;
                if (last) out[kj] = (typename OP::Sout)inc;
            }
        } else {
            sv[first + i] = mode == 1 ? inc : (pred ? pv : OP::out_id());
        }
        pk = kj;
        pv = inc;
        has = true;
    }
    if (mode == 2) return;
    __syncthreads();
    for (int i = threadIdx.x; i < TILE; i += BLOCK) {
        i64 g = base + i;
        if (g < n) out[g] = (typename OP::Sout)sv[i];
    }
}

template <class OP>
__device__ void reduce_aggs(const typename OP::T* agg_v, i64 ntiles, typename OP::Sout* out) {
    typedef typename OP::T T;
    __shared__ T wv[NWARPS];
    // In the tiles' order (see the float MAX/MIN note above): each thread folds a run of
    // consecutive tiles, then lane i takes lane i + d's for d = 1, 2, 4, ... (only lanes
    // that are multiples of 2d carry on), then the warps in order.
    T acc = OP::id();
    i64 per = (ntiles + BLOCK - 1) / BLOCK;
    i64 lo = (i64)threadIdx.x * per;
    i64 hi = lo + per < ntiles ? lo + per : ntiles;
    for (i64 i = lo; i < hi; i++) acc = OP::ap(acc, agg_v[i]);
    for (int d = 1; d < 32; d <<= 1) {
        T o = __shfl_down_sync(FULL_MASK, acc, d);
        if (((threadIdx.x & 31) & (2 * d - 1)) == 0) acc = OP::ap(acc, o);
    }
    int lane = threadIdx.x & 31;
    int w = threadIdx.x >> 5;
    if (lane == 0) wv[w] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        T t = wv[0];
        for (int i = 1; i < NWARPS; i++) t = OP::ap(t, wv[i]);
        out[0] = (typename OP::Sout)t;
    }
}
