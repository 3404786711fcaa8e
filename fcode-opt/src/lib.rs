//! fcode-opt: the optimiser of the GPU NESL paper (section 5).
//!
//! Turns VCODE into FCODE: inlines small non-recursive functions, converts stack code to
//! let-form, reduces it, fuses element-wise operations into superoperators and generates
//! stack code again with `FUSED n` instructions; it can also emit the CUDA C of each
//! superoperator. It does not run anything: the `vcode` crate executes FCODE.
