//! The vector libraries compiled code can run on, and which of them this machine has.

use crate::{Error, Result};
use cvl_cuda::CudaCvl;

/// Which vector library runs compiled code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The CPU vector library.
    Cpu,
    /// The CUDA vector library (needs an NVIDIA GPU and driver).
    Cuda,
    /// CUDA when a GPU is present, otherwise the CPU.
    Auto,
}

impl Backend {
    /// The name used in test names and messages (`cpu`, `cuda`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
            Backend::Auto => "auto",
        }
    }
}

/// A started vector library: what a [`Backend`] choice resolves to.
pub enum Library {
    /// The CPU vector library.
    Cpu(vcode::CpuCvl),
    /// The CUDA vector library (a GPU, or the CPU emulation of its kernels).
    Cuda(Box<CudaCvl>),
}

impl Library {
    /// Starts the library `backend` names. `Auto` is the CUDA library when a real GPU
    /// starts and its kernels can be built (not the emulation), otherwise the CPU.
    pub fn open(backend: Backend) -> Result<Library> {
        Ok(match backend {
            Backend::Cpu => Library::Cpu(vcode::CpuCvl::new()),
            Backend::Cuda => Library::Cuda(Box::new(cuda_library()?)),
            Backend::Auto => match gpu_present().then(|| CudaCvl::new().ok()).flatten().filter(CudaCvl::is_gpu) {
                Some(c) => Library::Cuda(Box::new(c)),
                None => Library::Cpu(vcode::CpuCvl::new()),
            },
        })
    }

    /// `cpu` or `cuda`.
    pub fn name(&self) -> &'static str {
        match self {
            Library::Cpu(_) => "cpu",
            Library::Cuda(_) => "cuda",
        }
    }
}

/// Starts the CUDA vector library (the CPU emulation of its kernels with
/// `NESL_CUDA_EMULATE=1`), or says in one line why it cannot start.
pub fn cuda_library() -> Result<CudaCvl> {
    CudaCvl::new().map_err(|e| Error::Backend(format!("the CUDA backend cannot start: {e} (use --backend cpu)")))
}

/// Whether this machine has a usable GPU (a real one: the emulation does not count),
/// probed once per process.
pub fn gpu_present() -> bool {
    static PRESENT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *PRESENT.get_or_init(|| {
        std::env::var_os("NESL_CUDA_DISABLE").is_none()
            && !std::env::var("NESL_CUDA_EMULATE").is_ok_and(|v| v == "1")
            && CudaCvl::new().is_ok_and(|c| c.is_gpu())
    })
}

/// The (backend, optimisation level) pairs the regression tests run every case on: every
/// backend this build can run on this machine, at every optimisation level (0, 1, 2). The
/// CUDA backend is in when a GPU is present, or when `NESL_CUDA_EMULATE=1` asks for the
/// CPU emulation of its kernels (slow) and that emulation builds.
pub fn configurations() -> Vec<(Backend, u8)> {
    let mut out = vec![(Backend::Cpu, 0), (Backend::Cpu, 1), (Backend::Cpu, 2)];
    let emulate = std::env::var("NESL_CUDA_EMULATE").is_ok_and(|v| v == "1");
    if gpu_present() || (emulate && CudaCvl::new().is_ok()) {
        out.extend([(Backend::Cuda, 0), (Backend::Cuda, 1), (Backend::Cuda, 2)]);
    }
    out
}

/// A short name for a configuration, used in test names (`cpu-O0`).
pub fn configuration_name(backend: Backend, opt: u8) -> String {
    format!("{}-O{opt}", backend.name())
}
