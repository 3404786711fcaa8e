//! kernels: the CUDA C sources of the CVL primitives, embedded as strings.
//!
//! No logic lives here beyond exposing the sources; `cvl-cuda` compiles them with NVRTC.
