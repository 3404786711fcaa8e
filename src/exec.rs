//! Executors: how compiled NESL runs. An [`Executor`] takes the `vcode::Program` of one
//! top-level form, optimises it at its level, and runs it with the VCODE interpreter on
//! its vector library; [`Config::executor`] is the one place that builds them from a
//! backend choice and an optimisation level.

use crate::backend::{Backend, Library};
use crate::error::{Backtrace, Error, Result, RuntimeError};
use cvl_cuda::{CudaCvl, StatsProbe};
use vcode::{Const, Cvl, HostValue, OpStats, Residents, RunOptions, RunOutcome};

/// What running a compiled top-level expression gave.
#[derive(Clone, Debug, PartialEq)]
pub enum ExecResult {
    /// The program ran to its end; its final stack, bottom first: values the executor
    /// keeps in its vector library ([`Const::Resident`], which later programs of the same
    /// executor can hold as constants) or host constants. [`Executor::fetch`] copies one
    /// to the host.
    Finished(Vec<Const>),
    /// The program stopped with `EXIT` (after writing its runtime error message): where
    /// the `EXIT` was and how the program got there (empty when unknown).
    Exited(Backtrace),
}

/// Runs compiled programs. The top-level session does not know which vector library or
/// optimisation level is used.
pub trait Executor {
    /// Runs a compiled program; `out` receives what the program writes (`print_string`
    /// output, runtime error messages before `EXIT`). `Err` is a run-time error (with its
    /// place), a program that does not load, or an internal error of the optimiser.
    fn execute(&mut self, program: vcode::Program, out: &mut dyn std::io::Write) -> Result<ExecResult>;

    /// A host copy of a value a run of this executor left ([`ExecResult::Finished`]), or
    /// of a host constant. A value stays in the vector library while some handle to it
    /// is held (in a global, in a program) and is dropped at a later run after that.
    fn fetch(&mut self, value: &Const) -> Result<HostValue> {
        value.to_host().ok_or_else(|| Error::Backend("this executor keeps no values between runs".into()))
    }

    /// The first `n` elements of a value (its first `n` lengths, for a segment
    /// descriptor) on the host: what the top level prints of a result is copied, not
    /// the whole of it.
    fn fetch_prefix(&mut self, value: &Const, n: usize) -> Result<HostValue> {
        let mut h = self.fetch(value)?;
        h.truncate(n);
        Ok(h)
    }

    /// How many elements a value has (segments, for a segment descriptor) and, for a
    /// segment descriptor, its element count.
    fn shape(&mut self, value: &Const) -> Result<(usize, Option<usize>)> {
        Ok(self.fetch(value)?.shape())
    }

    /// True when a value is a `FLOAT` vector holding a NaN or an infinity.
    fn any_non_finite(&mut self, value: &Const) -> Result<bool> {
        Ok(matches!(self.fetch(value)?, HostValue::Float(v) if v.iter().any(|x| !x.is_finite())))
    }

    /// Puts a host value where this executor keeps values between runs; the constant
    /// that later programs hold to use it (the host value itself by default).
    fn keep(&mut self, value: HostValue) -> Result<Const> {
        Ok(Const::from(value))
    }

    /// Counts of the vector operations run so far (for `--stats`), when kept.
    fn stats(&self) -> Option<&OpStats> {
        None
    }

    /// For a backend on a device (the GPU): the device's name and its counters so far as
    /// `(name, value)` rows (kernel launches, host round trips, bytes moved), for
    /// `--stats`; `None` otherwise.
    fn device_stats(&self) -> Option<(String, Vec<(String, u64)>)> {
        None
    }
}

/// A rewrite of the compiled program before it runs (the FCODE optimiser plugs in here).
pub type Transform = Box<dyn FnMut(vcode::Program) -> Result<vcode::Program>>;

/// How compiled code runs: the backend, the optimisation level (0: VCODE as compiled; 1:
/// inlined, let form, re-stacked; 2: also fused into superoperators), whether operation
/// counts are kept and whether every program is verified before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The vector library.
    pub backend: Backend,
    /// The optimisation level (0, 1 or 2).
    pub opt: u8,
    /// Keep counts of the vector operations (`--stats`).
    pub stats: bool,
    /// Run the VCODE verifier on every program, as compiled and as optimised, so that
    /// code the verifier rejects is a failure even where the interpreter would happen to
    /// run it (the regression tests).
    pub verify: bool,
}

impl Config {
    /// Runs on `backend` at level `opt`, without statistics or verification.
    pub fn new(backend: Backend, opt: u8) -> Self {
        Config { backend, opt, stats: false, verify: false }
    }

    /// The same with operation counts kept when `on`.
    pub fn with_stats(self, on: bool) -> Self {
        Config { stats: on, ..self }
    }

    /// The same with every program verified when `on`.
    pub fn with_verify(self, on: bool) -> Self {
        Config { verify: on, ..self }
    }

    /// The executor: the vector library started (an unusable backend is an
    /// [`Error::Backend`]), the optimiser at the level asked for.
    pub fn executor(&self) -> Result<Box<dyn Executor>> {
        if self.opt > 2 {
            return Err(Error::OptLevel(self.opt));
        }
        match Library::open(self.backend)? {
            Library::Cuda(cvl) => Ok(Box::new(CudaExecutor::new(*cvl, self.opt, self.stats).with_verify(self.verify))),
            Library::Cpu(cvl) => {
                let ex = VcodeExecutor::with_cvl(cvl).with_stats(self.stats).with_verify(self.verify);
                Ok(Box::new(match optimiser(self.opt) {
                    Some(t) => ex.with_transform(t),
                    None => ex,
                }))
            }
        }
    }
}

/// The rewrite an executor applies to every compiled program at optimisation level
/// `opt`: `None` at level 0, otherwise [`crate::pipeline::optimise`] at that level.
pub fn optimiser(opt: u8) -> Option<Transform> {
    (opt > 0).then(|| -> Transform { Box::new(move |p: vcode::Program| crate::pipeline::optimise(&p, opt)) })
}

/// Values of at most this many elements that a run leaves come back to the host as
/// constants (scalars the optimiser can fold into later programs); larger ones stay in
/// the vector library ([`vcode::run_resident`]).
const SMALL: usize = 16;

/// Runs programs with the VCODE interpreter on the vector library `C`, which is kept from
/// one evaluation to the next (a GPU library keeps its context and compiled kernels),
/// after an optional rewrite (the optimiser).
pub struct VcodeExecutor<C: Cvl> {
    cvl: C,
    /// The final stacks of earlier runs, kept in the library for later ones.
    residents: Residents<C>,
    options: RunOptions,
    transform: Option<Transform>,
    stats: Option<OpStats>,
    verify: bool,
}

/// The interpreter on the CPU vector library.
pub type CpuExecutor = VcodeExecutor<vcode::CpuCvl>;

impl VcodeExecutor<vcode::CpuCvl> {
    /// Runs on a fresh CPU vector library, without statistics.
    pub fn new() -> Self {
        VcodeExecutor::with_cvl(vcode::CpuCvl::new())
    }
}

impl Default for VcodeExecutor<vcode::CpuCvl> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Cvl + 'static> VcodeExecutor<C> {
    /// Runs on `cvl`.
    pub fn with_cvl(cvl: C) -> Self {
        VcodeExecutor { cvl, residents: Residents::new(), options: RunOptions::default(), transform: None, stats: None, verify: false }
    }

    /// Keeps counts of the vector operations (summed over all evaluations) when `on`.
    pub fn with_stats(mut self, on: bool) -> Self {
        self.options.stats = on;
        self.stats = on.then(OpStats::default);
        self
    }

    /// When `on`, runs the VCODE verifier (stack effects and operand types) on every
    /// program as compiled and again after the rewrite, and reports a program it rejects
    /// as an internal error instead of running it.
    pub fn with_verify(mut self, on: bool) -> Self {
        self.verify = on;
        self
    }

    /// Rewrites every program with `f` before running it.
    pub fn with_transform(mut self, f: Transform) -> Self {
        self.transform = Some(f);
        self
    }
}

/// `Ok` when the VCODE verifier accepts `program`; otherwise [`Error::Verify`] naming
/// `what`.
fn verified(program: &vcode::Program, what: &'static str) -> Result<()> {
    vcode::verify(program).map_err(|errors| Error::Verify { what, errors })
}

impl<C: Cvl + 'static> Executor for VcodeExecutor<C> {
    fn execute(&mut self, program: vcode::Program, out: &mut dyn std::io::Write) -> Result<ExecResult> {
        if self.verify {
            verified(&program, "compiled VCODE")?;
        }
        let program = match &mut self.transform {
            Some(f) => {
                let p = f(program)?;
                if self.verify {
                    verified(&p, "optimised program")?;
                }
                p
            }
            None => program,
        };
        // Every evaluation is a fresh VCODE process in the reference: the random
        // generator starts again from its initial state (spec section 4, "Random numbers").
        self.cvl.srand(0).map_err(|t| RuntimeError::new(&program, t))?;
        let report = vcode::run_resident(&program, &mut self.cvl, &mut self.residents, SMALL, out, &self.options)
            .map_err(|t| RuntimeError::new(&program, t))?;
        if let Some(total) = &mut self.stats {
            total.merge(&report.stats);
        }
        Ok(match report.outcome {
            RunOutcome::Finished(values) => ExecResult::Finished(values),
            RunOutcome::Exited(_) => ExecResult::Exited(report.exit_site.map(|s| Backtrace::new(&program, &s)).unwrap_or_default()),
        })
    }

    fn fetch(&mut self, value: &Const) -> Result<HostValue> {
        self.residents
            .to_host(&mut self.cvl, value)
            .map_err(copy_out)
    }

    fn fetch_prefix(&mut self, value: &Const, n: usize) -> Result<HostValue> {
        self.residents.to_host_prefix(&mut self.cvl, value, n).map_err(copy_out)
    }

    fn shape(&mut self, value: &Const) -> Result<(usize, Option<usize>)> {
        self.residents.shape(&mut self.cvl, value).map_err(copy_out)
    }

    fn any_non_finite(&mut self, value: &Const) -> Result<bool> {
        self.residents.any_non_finite(&mut self.cvl, value).map_err(copy_out)
    }

    fn keep(&mut self, value: HostValue) -> Result<Const> {
        self.residents
            .insert_host(&mut self.cvl, value)
            .map_err(|t| Error::Backend(format!("cannot copy a value into the vector library: {}", t.kind)))
    }

    fn stats(&self) -> Option<&OpStats> {
        self.stats.as_ref()
    }
}

/// A value that could not be read out of the vector library.
fn copy_out(t: vcode::Trap) -> Error {
    Error::Backend(format!("cannot copy a value out of the vector library: {}", t.kind))
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
                loader
                    .prepare_superops(&p.superops)
                    .map_err(|e| Error::Backend(format!("the superoperator kernels do not build: {e}")))?;
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
    fn execute(&mut self, program: vcode::Program, out: &mut dyn std::io::Write) -> Result<ExecResult> {
        self.inner.execute(program, out)
    }

    fn fetch(&mut self, value: &Const) -> Result<HostValue> {
        self.inner.fetch(value)
    }

    fn fetch_prefix(&mut self, value: &Const, n: usize) -> Result<HostValue> {
        self.inner.fetch_prefix(value, n)
    }

    fn shape(&mut self, value: &Const) -> Result<(usize, Option<usize>)> {
        self.inner.shape(value)
    }

    fn any_non_finite(&mut self, value: &Const) -> Result<bool> {
        self.inner.any_non_finite(value)
    }

    fn keep(&mut self, value: HostValue) -> Result<Const> {
        self.inner.keep(value)
    }

    fn stats(&self) -> Option<&OpStats> {
        self.inner.stats()
    }

    fn device_stats(&self) -> Option<(String, Vec<(String, u64)>)> {
        self.stats.then(|| {
            let rows = self.probe.stats().rows().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            (self.probe.device(), rows)
        })
    }
}

/// How a program run once to its end went ([`run_once`]).
pub struct RunOnce {
    /// The interpreter's report (final stack or exit status, operation counts), or the
    /// run-time error (with its VCODE place) or a program the library cannot load.
    pub result: Result<vcode::RunReport>,
    /// On a device backend, with statistics asked for: the device's name and counters.
    pub device: Option<(String, Vec<(String, u64)>)>,
}

/// Runs a whole VCODE or FCODE program once on `library` (what `nesl vcode` does), with
/// the program's output going to `out`. On a GPU, every superoperator kernel is built
/// when the program is loaded. Operation counts are kept when `stats`.
pub fn run_once(program: &vcode::Program, library: Library, stats: bool, out: &mut dyn std::io::Write) -> RunOnce {
    let options = RunOptions { stats, ..Default::default() };
    let (result, device) = match library {
        Library::Cpu(mut cvl) => (vcode::run(program, &mut cvl, out, &options), None),
        Library::Cuda(mut cvl) => {
            if cvl.is_gpu() {
                if let Err(e) = cvl.prepare_superops(&program.superops) {
                    let e = Error::Backend(format!("the superoperator kernels do not build: {e}"));
                    return RunOnce { result: Err(e), device: None };
                }
            }
            let probe = stats.then(|| cvl.stats_probe());
            let result = vcode::run(program, &mut *cvl, out, &options);
            let device = probe.map(|p| {
                let rows = p.stats().rows().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                (p.device(), rows)
            });
            (result, device)
        }
    };
    RunOnce { result: result.map_err(|t| Error::Runtime(RuntimeError::new(program, t))), device }
}
