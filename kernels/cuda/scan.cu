// Scans and reductions (`*_s??`, `*_r??`), segmented and not, for every operator and type:
// the templates of `scan.cuh` (compiled just before this text) over vector inputs.

#define SCAN_KERNELS(SUF, OP)                                                              \
    extern "C" __global__ void __launch_bounds__(BLOCK) scan_tiles_##SUF(                  \
        const OP::Sin* in, const u32* keys, i64 n, OP::T* agg_v, u32* agg_k) {             \
        scan_tiles<OP>(VecSrc<OP>{in}, keys, n, agg_v, agg_k);                             \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(BLOCK) scan_aggs_##SUF(                   \
        OP::T* agg_v, u32* agg_k, i64 ntiles) {                                            \
        scan_aggs<OP>(agg_v, agg_k, ntiles);                                               \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(BLOCK) scan_down_##SUF(                   \
        const OP::Sin* in, const u32* keys, i64 n, const OP::T* carry_v,                   \
        const u32* carry_k, OP::Sout* out, int mode) {                                     \
        scan_down<OP>(VecSrc<OP>{in}, keys, n, carry_v, carry_k, out, mode);               \
    }                                                                                      \
    extern "C" __global__ void __launch_bounds__(BLOCK) reduce_aggs_##SUF(                 \
        const OP::T* agg_v, i64 ntiles, OP::Sout* out) {                                   \
        reduce_aggs<OP>(agg_v, ntiles, out);                                               \
    }

SCAN_KERNELS(add_z, OpAddZ)
SCAN_KERNELS(mul_z, OpMulZ)
SCAN_KERNELS(max_z, OpMaxZ)
SCAN_KERNELS(min_z, OpMinZ)
SCAN_KERNELS(and_z, OpAndZ)
SCAN_KERNELS(ior_z, OpIorZ)
SCAN_KERNELS(xor_z, OpXorZ)
SCAN_KERNELS(add_d, OpAddD)
SCAN_KERNELS(mul_d, OpMulD)
SCAN_KERNELS(max_d, OpMaxD)
SCAN_KERNELS(min_d, OpMinD)
SCAN_KERNELS(and_b, OpAndB)
SCAN_KERNELS(ior_b, OpIorB)
SCAN_KERNELS(xor_b, OpXorB)
SCAN_KERNELS(add_bz, OpAddBZ)
SCAN_KERNELS(max_u, OpMaxU)
