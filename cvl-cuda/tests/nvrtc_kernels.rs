//! Compiles every kernel source of the `kernels` crate with NVRTC for sm_90 (H100/H200),
//! when `libnvrtc` is loadable; otherwise says that it was skipped and why.

use cvl_cuda::compile::{self, CompileError};

#[test]
fn every_kernel_source_compiles_for_sm_90() {
    if !compile::nvrtc_present() {
        eprintln!(
            "SKIPPED every_kernel_source_compiles_for_sm_90: {} (LD_LIBRARY_PATH={:?})",
            CompileError::NoNvrtc,
            std::env::var("LD_LIBRARY_PATH").unwrap_or_default()
        );
        return;
    }
    let (major, minor) = compile::nvrtc_version().expect("version of a present NVRTC");
    match compile::compile_all_kernels("sm_90") {
        Ok(mods) => {
            assert_eq!(mods.len(), kernels::SOURCES.len());
            for (name, size) in &mods {
                assert!(*size > 0, "{name}: empty cubin");
                eprintln!("compiled {name} for sm_90 with NVRTC {major}.{minor}: {size} bytes");
            }
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn a_bad_source_is_an_error_with_the_log() {
    if !compile::nvrtc_present() {
        eprintln!(
            "SKIPPED a_bad_source_is_an_error_with_the_log: {}",
            CompileError::NoNvrtc
        );
        return;
    }
    let text =
        compile::module_text("extern \"C\" __global__ void k(i64* r) { r[0] = undefined_name; }");
    match compile::compile_cubin("bad", &text, "sm_90") {
        Err(CompileError::Failed { log, .. }) => assert!(log.contains("undefined_name"), "{log}"),
        other => panic!("expected a compile failure, got {other:?}"),
    }
}
