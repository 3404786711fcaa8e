//! Executors that run compiled top-level expressions on a VCODE vector library.

use super::{ExecError, ExecResult, Executor};
use vcode::{Cvl, OpStats, RunOptions, RunOutcome, Trap};

/// A rewrite of the parsed program before it runs (the FCODE optimiser plugs in here).
pub type Transform = Box<dyn FnMut(vcode::Program) -> Result<vcode::Program, String>>;

/// Parses VCODE text, optionally rewrites it, and runs it with the VCODE interpreter on
/// the vector library `C`, which is kept from one evaluation to the next (a GPU library
/// keeps its context and compiled kernels).
pub struct VcodeExecutor<C: Cvl> {
    cvl: C,
    options: RunOptions,
    transform: Option<Transform>,
    stats: Option<OpStats>,
    verify: bool,
}

/// The default executor: the VCODE interpreter on the CPU vector library.
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

impl<C: Cvl> VcodeExecutor<C> {
    /// Runs on `cvl`.
    pub fn with_cvl(cvl: C) -> Self {
        VcodeExecutor { cvl, options: RunOptions::default(), transform: None, stats: None, verify: false }
    }

    /// Keeps counts of the vector operations (summed over all evaluations) when `on`.
    pub fn with_stats(mut self, on: bool) -> Self {
        self.options.stats = on;
        self.stats = on.then(OpStats::default);
        self
    }

    /// When `on`, runs the VCODE verifier (stack effects and operand types) on every
    /// program as compiled and again after the rewrite, and reports a program it rejects
    /// as an internal error instead of running it (the regression tests switch it on).
    pub fn with_verify(mut self, on: bool) -> Self {
        self.verify = on;
        self
    }

    /// Rewrites every program with `f` after parsing it and before running it.
    pub fn with_transform(mut self, f: Transform) -> Self {
        self.transform = Some(f);
        self
    }
}

/// A trap as the top level reports it after `RUNTIME ERROR: `.
pub fn trap_message(trap: &Trap) -> String {
    match &trap.site {
        Some(s) => format!("{} (VCODE function {}, line {}, at `{}`)", trap.kind, s.function, s.line, s.instr),
        None => trap.kind.to_string(),
    }
}

/// A trap as an [`ExecError`]: in code compiled from NESL, the trap's kind and the NESL
/// places of the backtrace; otherwise [`trap_message`] (the VCODE function and line).
fn trap_error(program: &vcode::Program, trap: &Trap) -> ExecError {
    match &trap.site {
        Some(s) if s.origin.scope != 0 => ExecError { message: trap.kind.to_string(), backtrace: program.backtrace(s) },
        _ => ExecError::from(trap_message(trap)),
    }
}

/// `Ok` when the VCODE verifier accepts `program`; otherwise an internal error naming
/// `what` and the verifier's first complaint.
fn verified(program: &vcode::Program, what: &str) -> Result<(), String> {
    vcode::verify(program).map_err(|errors| {
        let first = errors.first().map(|e| e.to_string()).unwrap_or_default();
        let more = match errors.len() {
            0 | 1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        format!("internal error: the {what} does not verify: {first}{more}")
    })
}

impl<C: Cvl> Executor for VcodeExecutor<C> {
    fn execute(&mut self, program: vcode::Program, out: &mut dyn std::io::Write) -> Result<ExecResult, ExecError> {
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
        self.cvl.srand(0).map_err(|t| trap_message(&t))?;
        let report = vcode::run(&program, &mut self.cvl, out, &self.options).map_err(|t| trap_error(&program, &t))?;
        if let Some(total) = &mut self.stats {
            total.instructions += report.stats.instructions;
            for (kind, calls, elements) in &report.stats.rows {
                match total.rows.iter_mut().find(|r| r.0 == *kind) {
                    Some(r) => {
                        r.1 += calls;
                        r.2 += elements;
                    }
                    None => total.rows.push((kind.clone(), *calls, *elements)),
                }
            }
        }
        Ok(match report.outcome {
            RunOutcome::Finished(values) => ExecResult::Finished(values),
            RunOutcome::Exited(_) => ExecResult::Exited(report.exit_site.map(|s| program.backtrace(&s)).unwrap_or_default()),
        })
    }

    fn stats(&self) -> Option<&OpStats> {
        self.stats.as_ref()
    }
}
