// Permutations (`*_pe?`), vector/scalar functions (dist, index, extract, replace) and pack.
//
// A segment descriptor on the device is: lens[m] (segment lengths), offs[m] (exclusive scan
// of lens) and, when m > 1, seg[n] (the segment index of every element). A null `seg` means a
// single segment (the fast path): every element is in segment 0. Data kernels move elements
// by size only: suffix _8 for INT and FLOAT (8 bytes), _1 for BOOL (1 byte).
// Indices are checked against their segment's length; a bad one is reported through `err`
// and its write skipped, so no kernel ever writes out of bounds.

#define SEG_OF(seg, j) ((seg) ? (i64)(seg)[j] : (i64)0)

__device__ __forceinline__ bool in_range(i64 i, i64 len, i64* err) {
    if (i < 0 || i >= len) {
        report_error(err, ERR_INDEX, i, len);
        return false;
    }
    return true;
}

#define DATA_KERNELS(S, T)                                                                 \
    /* PERMUTE: r[offs[s] + idx[j]] = v[j] (r pre-zeroed) */                                \
    extern "C" __global__ void smp_pe##S(const T* __restrict__ v, const i64* __restrict__ idx,\
                                         const u32* __restrict__ seg,                       \
                                         const i64* __restrict__ lens,                      \
                                         const i64* __restrict__ offs, i64 n,               \
                                         T* __restrict__ r, i64* err) {                     \
        GRID_LOOP(j, n) {                                                                  \
            i64 s = SEG_OF(seg, j);                                                        \
            i64 i = idx[j];                                                                \
            if (in_range(i, lens[s], err)) r[offs[s] + i] = v[j];                          \
        }                                                                                  \
    }                                                                                      \
    /* Scatter, phase 2 (after scatter_claim): the last source claiming a place writes it */\
    extern "C" __global__ void scatter_write##S(                                           \
        const T* __restrict__ v, const i64* __restrict__ idx, const b8* __restrict__ flags, \
        const u32* __restrict__ seg_s, const i64* __restrict__ lens_d,                     \
        const i64* __restrict__ offs_d, i64 n_s, const i64* __restrict__ win,              \
        T* __restrict__ r) {                                                               \
        GRID_LOOP(j, n_s) {                                                                \
            if (flags && !flags[j]) continue;                                              \
            i64 s = SEG_OF(seg_s, j);                                                      \
            i64 i = idx[j];                                                                \
            if (i < 0 || i >= lens_d[s]) continue;                                         \
            i64 p = offs_d[s] + i;                                                         \
            if (win[p] == j) r[p] = v[j];                                                  \
        }                                                                                  \
    }                                                                                      \
    /* BPERMUTE / BFPERMUTE: r[k] = v[offs_s[s] + idx[k]], s = segment of k (destination) */\
    extern "C" __global__ void bck_pe##S(                                                  \
        const T* __restrict__ v, const i64* __restrict__ idx, const b8* __restrict__ flags, \
        const u32* __restrict__ seg_d, const i64* __restrict__ lens_s,                     \
        const i64* __restrict__ offs_s, i64 n_d, T* __restrict__ r, i64* err) {            \
        GRID_LOOP(k, n_d) {                                                                \
            if (flags && !flags[k]) {                                                      \
                r[k] = (T)0;                                                               \
                continue;                                                                  \
            }                                                                              \
            i64 s = SEG_OF(seg_d, k);                                                      \
            i64 i = idx[k];                                                                \
            r[k] = in_range(i, lens_s[s], err) ? v[offs_s[s] + i] : (T)0;                  \
        }                                                                                  \
    }                                                                                      \
    /* DIST: r[j] = x[segment of j] */                                                     \
    extern "C" __global__ void dis_ve##S(const T* __restrict__ x,                          \
                                         const u32* __restrict__ seg, i64 n,                \
                                         T* __restrict__ r) {                               \
        if (seg == 0) {                                                                    \
            T x0 = x[0];                                                                   \
            GRID_LOOP(j, n) { r[j] = x0; }                                                 \
        } else {                                                                           \
            GRID_LOOP(j, n) { r[j] = x[seg[j]]; }                                          \
        }                                                                                  \
    }                                                                                      \
    /* EXTRACT: r[k] = v[offs[k] + idx[k]], one thread per segment */                      \
    extern "C" __global__ void ext_ve##S(const T* __restrict__ v, const i64* __restrict__ idx,\
                                         const i64* __restrict__ lens,                      \
                                         const i64* __restrict__ offs, i64 m,               \
                                         T* __restrict__ r, i64* err) {                     \
        GRID_LOOP(k, m) {                                                                  \
            i64 i = idx[k];                                                                \
            r[k] = in_range(i, lens[k], err) ? v[offs[k] + i] : (T)0;                      \
        }                                                                                  \
    }                                                                                      \
    /* REPLACE on a copy: r[offs[k] + idx[k]] = x[k] */                                    \
    extern "C" __global__ void rep_ve##S(T* __restrict__ r, const i64* __restrict__ idx,    \
                                         const T* __restrict__ x,                           \
                                         const i64* __restrict__ lens,                      \
                                         const i64* __restrict__ offs, i64 m, i64* err) {   \
        GRID_LOOP(k, m) {                                                                  \
            i64 i = idx[k];                                                                \
            if (in_range(i, lens[k], err)) r[offs[k] + i] = x[k];                          \
        }                                                                                  \
    }                                                                                      \
    /* PACK: flagged elements to pos[j] - 1 (pos = inclusive +-scan of the flags) */       \
    extern "C" __global__ void pk2_le##S(const T* __restrict__ v, const b8* __restrict__ f, \
                                         const i64* __restrict__ pos, i64 n,                \
                                         T* __restrict__ r) {                               \
        GRID_LOOP(j, n) {                                                                  \
            if (f[j]) r[pos[j] - 1] = v[j];                                                \
        }                                                                                  \
    }

DATA_KERNELS(8, u64)
DATA_KERNELS(1, b8)

// Scatter, phase 1 (DPERMUTE, FPERMUTE, DFPERMUTE): every (flagged) source element claims
// its destination with atomicMax of its position, so the last writer wins as in the serial
// library. `win` is pre-filled with -1.
extern "C" __global__ void scatter_claim(const i64* __restrict__ idx, const b8* __restrict__ flags,
                                         const u32* __restrict__ seg_s,
                                         const i64* __restrict__ lens_d,
                                         const i64* __restrict__ offs_d, i64 n_s,
                                         i64* __restrict__ win, i64* err) {
    GRID_LOOP(j, n_s) {
        if (flags && !flags[j]) continue;
        i64 s = SEG_OF(seg_s, j);
        i64 i = idx[j];
        if (in_range(i, lens_d[s], err)) atomicMax(&win[offs_d[s] + i], j);
    }
}

// INDEX: r[j] = b[s] + (j - offs[s]) * k[s], s = segment of j (wrapping arithmetic).
extern "C" __global__ void ind_lez(const i64* __restrict__ b, const i64* __restrict__ k,
                                   const u32* __restrict__ seg, const i64* __restrict__ offs,
                                   i64 n, i64* __restrict__ r) {
    if (seg == 0) {
        i64 b0 = b[0];
        i64 k0 = k[0];
        GRID_LOOP(j, n) { r[j] = wadd(b0, wmul(j, k0)); }
    } else {
        GRID_LOOP(j, n) {
            u32 s = seg[j];
            r[j] = wadd(b[s], wmul(j - offs[s], k[s]));
        }
    }
}

// PACK, new descriptor: from the inclusive +-scan `pos` of the flags and the old descriptor,
// write the new lengths and offsets (lens2, offs2) of each segment.
extern "C" __global__ void pk1_lev(const i64* __restrict__ pos, const i64* __restrict__ lens,
                                   const i64* __restrict__ offs, i64 m,
                                   i64* __restrict__ lens2, i64* __restrict__ offs2) {
    GRID_LOOP(k, m) {
        i64 o = offs[k];
        i64 l = lens[k];
        i64 before = o > 0 ? pos[o - 1] : 0;
        i64 upto = (o + l) > 0 ? pos[o + l - 1] : 0;
        lens2[k] = upto - before;
        offs2[k] = before;
    }
}
