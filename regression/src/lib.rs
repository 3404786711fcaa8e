//! regression: the project's regression corpus and the runner that checks it.
//!
//! The corpus lives beside this crate: `regression/nesl/**` holds `.nesl` programs with
//! their expected transcripts, `regression/vcode/` VCODE fixtures. This crate provides
//! the comparison rule of the shared conformance corpus ([`compare`]), the discovery and
//! checking of cases ([`runner`]), the one place that chooses how compiled code runs
//! ([`executor`]), and the in-process way the tools produce a transcript
//! ([`nesl_transcript`]).

#![deny(missing_docs)]

pub mod compare;
pub mod runner;

pub use compare::compare;
pub use runner::{check_case, discover, run_suite, Case, Summary, Verdict};

use cvl_cuda::{CudaCvl, StatsProbe};
use nesl_front::toplevel::{CpuExecutor, ExecResult, Executor, Renderer, TopLevel, Transform, VcodeExecutor};
use std::path::{Path, PathBuf};

/// Which vector library runs compiled code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The CPU vector library.
    Cpu,
    /// The CUDA vector library.
    Cuda,
    /// CUDA when a GPU is present, otherwise the CPU.
    Auto,
}

/// The executor for a backend and optimisation level (0: VCODE as compiled; 1: inlined,
/// let-form, re-stacked; 2: also fused into superoperators, see [`optimiser`]), keeping
/// operation counts when `stats`. This is the one place that decides how compiled NESL
/// code runs.
pub fn executor(backend: Backend, opt: u8, stats: bool) -> Result<Box<dyn Executor>, String> {
    executor_checked(backend, opt, stats, false)
}

/// [`executor`] that, when `verify`, also runs the VCODE verifier on every program before
/// it runs (as compiled, and again as optimised), so that code the verifier rejects is a
/// failure even where the interpreter would happen to run it (the regression tests).
pub fn executor_checked(backend: Backend, opt: u8, stats: bool, verify: bool) -> Result<Box<dyn Executor>, String> {
    if opt > 2 {
        return Err(format!("optimisation level {opt} does not exist (0, 1 or 2)"));
    }
    let cuda = match backend {
        Backend::Cpu => None,
        Backend::Cuda => Some(cuda_library()?),
        // Silently the CPU unless a real GPU starts (not the emulation, not a GPU whose
        // kernels cannot be built).
        Backend::Auto => gpu_present().then(|| CudaCvl::new().ok()).flatten().filter(CudaCvl::is_gpu),
    };
    match cuda {
        Some(cvl) => Ok(Box::new(CudaExecutor::new(cvl, opt, stats).with_verify(verify))),
        None => {
            let ex = CpuExecutor::new().with_stats(stats).with_verify(verify);
            Ok(Box::new(match optimiser(opt) {
                Some(t) => ex.with_transform(t),
                None => ex,
            }))
        }
    }
}

/// Starts the CUDA vector library (the CPU emulation of its kernels with
/// `NESL_CUDA_EMULATE=1`), or says in one line why it cannot start.
pub fn cuda_library() -> Result<CudaCvl, String> {
    CudaCvl::new().map_err(|e| format!("the CUDA backend cannot start: {e} (use --backend cpu)"))
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

/// Compiled NESL code on the CUDA vector library: the VCODE interpreter (through the
/// optimiser at levels 1 and 2, so that level 2 runs each superoperator as one generated
/// kernel) on a [`CudaCvl`] kept from one evaluation to the next, plus the device's
/// counters for `--stats`.
pub struct CudaExecutor {
    inner: VcodeExecutor<CudaCvl>,
    probe: StatsProbe,
    stats: bool,
}

impl CudaExecutor {
    /// Runs on `cvl` at optimisation level `opt`, keeping operation counts when `stats`.
    pub fn new(cvl: CudaCvl, opt: u8, stats: bool) -> Self {
        let probe = cvl.stats_probe();
        // On a GPU, a program's superoperator kernels are compiled (in parallel, through the
        // kernel cache) and loaded when the program is loaded, not at their first use.
        let loader = cvl.is_gpu().then(|| cvl.kernel_loader());
        let ex = VcodeExecutor::with_cvl(cvl).with_stats(stats);
        let inner = match (optimiser(opt), loader) {
            (Some(mut t), Some(loader)) => ex.with_transform(Box::new(move |p: vcode::Program| {
                let p = t(p)?;
                loader.prepare_superops(&p.superops).map_err(|e| format!("the superoperator kernels do not build: {e}"))?;
                Ok(p)
            })),
            (Some(t), None) => ex.with_transform(t),
            (None, _) => ex,
        };
        CudaExecutor { inner, probe, stats }
    }

    /// Verifies every program before it runs when `on` ([`VcodeExecutor::with_verify`]).
    pub fn with_verify(mut self, on: bool) -> Self {
        self.inner = self.inner.with_verify(on);
        self
    }
}

impl Executor for CudaExecutor {
    fn execute(&mut self, program: vcode::Program, out: &mut dyn std::io::Write) -> Result<ExecResult, nesl_front::toplevel::ExecError> {
        self.inner.execute(program, out)
    }

    fn stats(&self) -> Option<&vcode::OpStats> {
        self.inner.stats()
    }

    fn device_stats(&self) -> Option<(String, Vec<(String, u64)>)> {
        self.stats.then(|| {
            let rows = self.probe.stats().rows().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            (self.probe.device(), rows)
        })
    }
}

/// The rewrite an executor applies to every compiled program at optimisation level
/// `opt`: `None` at level 0, otherwise the FCODE optimiser at that level. A program the
/// optimiser rejects is reported as an internal error (the front end's VCODE is always
/// well formed).
pub fn optimiser(opt: u8) -> Option<Transform> {
    if opt == 0 {
        return None;
    }
    let opts = fcode_opt::OptOptions::default();
    Some(Box::new(move |p: vcode::Program| {
        fcode_opt::optimize_report(&p, opt, &opts)
            .map(|(q, _)| q)
            .map_err(|e| format!("internal error: the optimiser (level {opt}) failed: {e}"))
    }))
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
    let b = match backend {
        Backend::Cpu => "cpu",
        Backend::Cuda => "cuda",
        Backend::Auto => "auto",
    };
    format!("{b}-O{opt}")
}

/// Evaluates a NESL program in a fresh top level running on `executor` and returns its
/// transcript (diagnostics rendered by `render`, the plain renderer when `None`).
pub fn nesl_transcript(path: &Path, src: &str, executor: Box<dyn Executor>, render: Option<Renderer>) -> String {
    let mut top = TopLevel::new(executor);
    if let Some(r) = render {
        top = top.with_renderer(r);
    }
    let mut out = Vec::new();
    if let Err(e) = top.eval_source(&path.display().to_string(), src, &mut out) {
        out.extend_from_slice(format!("\nerror: writing the transcript failed: {e}\n\n").as_bytes());
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Programs that use files run one at a time: a program runs on several configurations
/// at once, and its file names are fixed.
static FILE_PROGRAMS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Checks one case in-process on `backend` at level `opt`, every program verified before
/// it runs ([`executor_checked`]). Cases whose source names a file under `/tmp/` never
/// run concurrently with one another.
pub fn check_nesl_case(case: &Case, backend: Backend, opt: u8) -> Verdict {
    let uses_files = std::fs::read_to_string(&case.source).is_ok_and(|s| s.contains("/tmp/"));
    let _one_at_a_time = uses_files.then(|| FILE_PROGRAMS.lock().unwrap_or_else(|e| e.into_inner()));
    let mut transcribe = |path: &Path, src: &str| match executor_checked(backend, opt, false, true) {
        Ok(ex) => nesl_transcript(path, src, ex, None),
        Err(e) => format!("error: {e}\n\n"),
    };
    check_case(case, &mut transcribe)
}

/// The shared conformance corpus, when it is present: `$NESL_CONFORMANCE`, or
/// `../shared/conformance/nesl` (then `/work/shared/conformance/nesl`) relative to the
/// workspace root `root`.
pub fn conformance_dir(root: &Path) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("NESL_CONFORMANCE") {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(root.join("../shared/conformance/nesl"));
    candidates.push(PathBuf::from("/work/shared/conformance/nesl"));
    candidates.into_iter().find(|p| p.is_dir())
}
