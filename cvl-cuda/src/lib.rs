//! cvl-cuda: the `Cvl` vector library on an NVIDIA GPU, through cudarc.
//!
//! Builds and links with no CUDA installed (cudarc's dynamic loading); when no driver or
//! GPU is present at run time, creating the backend returns a clean error.
