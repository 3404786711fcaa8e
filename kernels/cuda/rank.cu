// RANK_UP / RANK_DOWN (`rku_le?`, `rkd_le?`): stable LSD radix sort with 8-bit digits.
//
// Keys are turned into 64-bit unsigned integers whose order is the wanted order (sign bit
// flipped for ascending; all bits flipped again for descending, which keeps equal keys in
// their original order). Each pass: radix_hist counts the digits of each block's range,
// an exclusive +-scan (scan kernels, add_z) of the counts laid out digit-major gives every
// (digit, block) its first output place, radix_scatter moves keys and positions stably.
// Passes over digits that are equal in all keys are skipped (radix_diff finds them).
// Segmented ranks then sort stably by segment index (rank_segkeys + more passes) and
// rank_finish writes r[original position] = sorted position - segment start.

#define ROUNDS 16
#define RTILE (BLOCK * ROUNDS)

extern "C" __global__ void rank_keys_z(const i64* __restrict__ v, i64 n, int up,
                                       u64* __restrict__ keys, i64* __restrict__ perm) {
    GRID_LOOP(j, n) {
        u64 k = (u64)v[j] ^ 0x8000000000000000ull;
        keys[j] = up ? k : ~k;
        perm[j] = j;
    }
}

extern "C" __global__ void rank_keys_d(const double* __restrict__ v, i64 n, int up,
                                       u64* __restrict__ keys, i64* __restrict__ perm) {
    GRID_LOOP(j, n) {
        // By bit pattern, as the CPU library and the reference's radix sort order floats:
        // -0.0 before 0.0, NaNs (by sign) beyond the infinities.
        u64 b = (u64)__double_as_longlong(v[j]);
        u64 k = (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
        keys[j] = up ? k : ~k;
        perm[j] = j;
    }
}

// OR over all keys of (key ^ keys[0]) into out[0] (pre-zeroed): the bits that vary.
extern "C" __global__ void radix_diff(const u64* __restrict__ keys, i64 n, u64* out) {
    u64 k0 = keys[0];
    u64 acc = 0;
    GRID_LOOP(j, n) { acc |= keys[j] ^ k0; }
    for (int d = 16; d > 0; d >>= 1) acc |= __shfl_down_sync(FULL_MASK, acc, d);
    if ((threadIdx.x & 31) == 0 && acc != 0) atomicOr(out, acc);
}

extern "C" __global__ void __launch_bounds__(BLOCK) radix_hist(const u64* __restrict__ keys,
                                                               i64 n, int shift,
                                                               i64* __restrict__ hist,
                                                               i64 nblocks) {
    __shared__ int cnt[256];
    int t = threadIdx.x;
    cnt[t] = 0;
    __syncthreads();
    i64 start = (i64)blockIdx.x * RTILE;
    for (int r = 0; r < ROUNDS; r++) {
        i64 g = start + (i64)r * BLOCK + t;
        if (g < n) atomicAdd(&cnt[(keys[g] >> shift) & 255], 1);
    }
    __syncthreads();
    hist[(i64)t * nblocks + blockIdx.x] = cnt[t];
}

extern "C" __global__ void __launch_bounds__(BLOCK) radix_scatter(
    const u64* __restrict__ keys_in, const i64* __restrict__ perm_in, i64 n, int shift,
    const i64* __restrict__ hist_scan, i64 nblocks, u64* __restrict__ keys_out,
    i64* __restrict__ perm_out) {
    __shared__ i64 base[256];
    __shared__ int wcnt[NWARPS][256];
    __shared__ int tot[256];
    int t = threadIdx.x;
    int lane = t & 31;
    int w = t >> 5;
    u32 lt_mask = (1u << lane) - 1u;
    base[t] = hist_scan[(i64)t * nblocks + blockIdx.x];
    i64 start = (i64)blockIdx.x * RTILE;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < NWARPS; i++) wcnt[i][t] = 0;
        __syncthreads();
        i64 g = start + (i64)r * BLOCK + t;
        int d = 256;
        u64 key = 0;
        i64 pv = 0;
        if (g < n) {
            key = keys_in[g];
            pv = perm_in[g];
            d = (int)((key >> shift) & 255);
        }
        u32 peers = __match_any_sync(FULL_MASK, d);
        int leader = __ffs(peers) - 1;
        int rank = __popc(peers & lt_mask);
        if (lane == leader && d < 256) wcnt[w][d] = __popc(peers);
        __syncthreads();
        {
            int run = 0;
            for (int i = 0; i < NWARPS; i++) {
                int c = wcnt[i][t];
                wcnt[i][t] = run;
                run += c;
            }
            tot[t] = run;
        }
        __syncthreads();
        if (d < 256) {
            i64 pos = base[d] + wcnt[w][d] + rank;
            keys_out[pos] = key;
            perm_out[pos] = pv;
        }
        __syncthreads();
        base[t] += tot[t];
    }
}

// Keys for the final passes of a segmented rank: the segment index of each sorted element.
extern "C" __global__ void rank_segkeys(const i64* __restrict__ perm, const u32* __restrict__ seg,
                                        i64 n, u64* __restrict__ keys) {
    GRID_LOOP(p, n) { keys[p] = (u64)seg[perm[p]]; }
}

// r[perm[p]] = p - start of its segment.
extern "C" __global__ void rank_finish(const i64* __restrict__ perm, const u32* __restrict__ seg,
                                       const i64* __restrict__ offs, i64 n,
                                       i64* __restrict__ r) {
    GRID_LOOP(p, n) {
        i64 j = perm[p];
        i64 s = seg ? (i64)seg[j] : 0;
        r[j] = p - offs[s];
    }
}
