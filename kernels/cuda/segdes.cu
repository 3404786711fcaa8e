// Segment descriptors (`mke_fov`, `len_fos`). Device layout: one buffer of 2m long longs,
// lens[0..m) then offs[0..m) (offs = exclusive +-scan of lens, computed by the scan kernels);
// plus, built on first use and only when m > 1, seg[0..n): the segment index of each element.

// Checks that no length is negative; the thread of the last segment writes the element
// count N = offs[m-1] + lens[m-1] into err[3] so that one read brings back both.
extern "C" __global__ void mke_check(const i64* __restrict__ lens, const i64* __restrict__ offs,
                                     i64 m, i64* err) {
    GRID_LOOP(k, m) {
        i64 l = lens[k];
        if (l < 0) report_error(err, ERR_NEG_LEN, l, k);
        if (k == m - 1) err[3] = offs[k] + l;
    }
}

// Per-element segment index, step 1 (seg pre-zeroed): write k at the start of every
// non-empty segment k. Step 2 is an inclusive max-scan of seg (scan kernels, max_u).
extern "C" __global__ void mke_mark(const i64* __restrict__ lens, const i64* __restrict__ offs,
                                    i64 m, u32* __restrict__ seg) {
    GRID_LOOP(k, m) {
        if (lens[k] > 0) seg[offs[k]] = (u32)k;
    }
}
