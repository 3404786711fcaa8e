//! Starting the CUDA backend: with no driver (or no GPU) `CudaCvl::new()` returns a clean
//! one-line error instead of panicking.

use cvl_cuda::{CudaCvl, CudaInitError};

#[test]
fn new_without_a_driver_is_a_clean_error() {
    // SAFETY: only tries to dlopen candidate library names.
    let driver = unsafe { cudarc::driver::sys::is_culib_present() };
    match CudaCvl::new() {
        Err(e) => {
            let msg = e.to_string();
            assert!(
                !msg.is_empty() && !msg.contains('\n'),
                "not one line: {msg:?}"
            );
            if !driver {
                assert_eq!(e, CudaInitError::NoDriver);
                assert!(msg.starts_with("no CUDA driver"), "{msg}");
            }
            eprintln!("CudaCvl::new() -> Err: {msg}");
        }
        Ok(c) => {
            // (`NESL_CUDA_EMULATE=1` starts the CPU emulation, which needs no driver.)
            assert!(driver || !c.is_gpu(), "a GPU backend started without a driver library");
            eprintln!("CUDA backend started on {} ({})", c.device_name(), c.arch());
        }
    }
}

#[test]
fn every_init_error_is_one_line() {
    let all = [
        CudaInitError::NoDriver,
        CudaInitError::NoDevice("cuInit: no CUDA-capable device is detected".into()),
        CudaInitError::NoNvrtc,
        CudaInitError::Disabled,
        CudaInitError::Driver("creating the context: CUDA_ERROR_UNKNOWN".into()),
        CudaInitError::Compile("scan for sm_90: error".into()),
    ];
    for e in all {
        let m = e.to_string();
        assert!(!m.contains('\n') && m.len() > 10, "{m:?}");
    }
}
