//! kernels: the CUDA C sources of the CVL primitives, embedded as strings.
//!
//! No logic lives here beyond exposing the sources; `cvl-cuda` compiles them with NVRTC.
//! [`COMMON`] holds the definitions every source relies on (types, the error mailbox,
//! wrapping arithmetic); a compilable unit is `COMMON` followed by one of [`SOURCES`].
//! The kernel naming follows CVL (`add_wuz`, `bck_pe8`, ...): see `spec/cvl.md`.

/// Shared definitions, prepended to every source before compilation.
pub const COMMON: &str = include_str!("../cuda/common.cuh");

/// Element-wise operators, SELECT, fills and RAND.
pub const ELEMENTWISE: &str = include_str!("../cuda/elementwise.cu");

/// Scans and reductions, segmented and not, for every operator and type.
pub const SCAN: &str = include_str!("../cuda/scan.cu");

/// Permutations, dist, index, extract, replace and pack.
pub const PERMUTE: &str = include_str!("../cuda/permute.cu");

/// Segment-descriptor construction.
pub const SEGDES: &str = include_str!("../cuda/segdes.cu");

/// Stable radix-sort ranks.
pub const RANK: &str = include_str!("../cuda/rank.cu");

/// Every kernel source as `(module name, source)`, each to be compiled after [`COMMON`].
pub const SOURCES: &[(&str, &str)] = &[
    ("elementwise", ELEMENTWISE),
    ("scan", SCAN),
    ("permute", PERMUTE),
    ("segdes", SEGDES),
    ("rank", RANK),
];

/// A C++ emulation of the CUDA features the kernels use (for tests without a GPU): prepend
/// it to `COMMON` + a source and compile the whole as C++17 into a shared library that
/// exports the kernels and `emu_launch`.
pub const EMU_HEADER: &str = include_str!("../emu/emu.h");

/// Threads per block that every kernel assumes (`BLOCK` in `common.cuh`).
pub const BLOCK: u32 = 256;

/// Elements per tile of the scan kernels (`TILE` = `BLOCK * ITEMS` in `scan.cu`).
pub const SCAN_TILE: usize = 2048;

/// Elements per block of the radix-sort kernels (`RTILE` = `BLOCK * ROUNDS` in `rank.cu`).
pub const RADIX_TILE: usize = 4096;
