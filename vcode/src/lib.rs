//! VCODE: the vector stack-machine language of the CMU NESL system.
//!
//! This crate holds the VCODE IR (the instruction set defined once, in one table:
//! [`op`]), the parser and printer for the CMU text format, the verifier, the
//! interpreter (a stack machine generic over the [`Cvl`] trait) and the CPU
//! implementation of that trait. FCODE (VCODE plus `FUSED n` and a table of
//! superoperators, [`fused`]) is read, printed and run by the same code.
//! It does not know NESL: the front end (`nesl-front`) produces VCODE text that this
//! crate parses and runs.
//!
//! Two instructions are extensions, not CMU VCODE: `GETENV` (read an environment
//! variable) and `SHELL` (run a command on an input, collect its output), which CMU NESL
//! did in its Lisp front end; their rows in [`op`] say what they do. Like `SPAWN` and
//! `FOPEN` they are refused when [`RunOptions::file_access`] is false. A third,
//! `DISPLAY`, carries the graphics library's requests to the display the driver
//! installed ([`display`]).
//!
//! ```
//! let p = vcode::parse("FUNC MAIN\nCONST INT (1 2 3)\nCONST INT 3\nMAKE_SEGDES\n+_REDUCE INT\nRET\n").unwrap();
//! vcode::verify(&p).unwrap();
//! let mut out = Vec::new();
//! let r = vcode::run(&p, &mut vcode::CpuCvl::new(), &mut out, &Default::default()).unwrap();
//! let vcode::RunOutcome::Finished(stack) = r.outcome else { panic!() };
//! assert_eq!(vcode::format_vinterp(&stack), "( 6 )\n");
//! ```

#![deny(missing_docs)]

mod calls;
pub mod cvl;
pub mod display;
pub mod fused;
mod interp;
pub mod interrupt;
mod io;
pub mod ir;
mod lex;
pub mod memory;
pub mod op;
mod parse;
mod print;
pub mod region;
mod resident;
mod split;
mod step;
pub mod trap;
mod verify;

pub use cvl::cpu::threads::set_threads;
pub use cvl::cpu::CpuCvl;
pub use cvl::{Cvl, HostScalar, HostVector, OpStats, VType};
pub use fused::{Expr, Fold, FoldKind, Guard, Pack, SuperOp};
pub use ir::{Const, Function, Imm, Instances, Instr, Lane, Origin, Place, Pos, Program, Scope};
pub use op::{Opcode, Ty};
pub use parse::{parse, ParseError};
pub use resident::{run_resident, Resident, Residents};
pub use print::{c_exp, float_literal, format_value, format_vinterp, WithOrigins};
pub use step::{Location, SlotInfo, StepEvent, Stepper};
pub use trap::{CheckFailure, Frame, Trap, TrapKind, TrapSite};
pub use verify::{analyze, verify, Analysis, FunctionInfo, Slot, VerifyError};

/// Options of [`run`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// Count CVL operations by kind and the elements they touch ([`RunReport::stats`]).
    pub stats: bool,
    /// Most nested `CALL`s before the run traps (runaway recursion).
    pub max_call_depth: usize,
    /// Most instructions to execute before the run traps (`None`: no limit).
    pub max_steps: Option<u64>,
    /// What `READ` and `FREAD` of descriptor 0 read (`None`: the process's standard
    /// input).
    pub stdin: Option<Vec<u8>>,
    /// Whether `FOPEN` may open files and `SPAWN`, `SHELL` and `GETENV` may run (when
    /// false they fail with an error message, as for a file that cannot be opened): a
    /// guard for untrusted programs.
    pub file_access: bool,
}

/// The call depth limit of [`RunOptions::default`] (process-wide; the CLI's
/// `--max-call-depth`).
static DEFAULT_MAX_CALL_DEPTH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1 << 20);

/// Sets the `max_call_depth` of [`RunOptions::default`] for the rest of the process.
pub fn set_default_max_call_depth(n: usize) {
    DEFAULT_MAX_CALL_DEPTH.store(n.max(1), std::sync::atomic::Ordering::Relaxed);
}

impl Default for RunOptions {
    fn default() -> Self {
        let max_call_depth = DEFAULT_MAX_CALL_DEPTH.load(std::sync::atomic::Ordering::Relaxed);
        RunOptions { stats: false, max_call_depth, max_steps: None, stdin: None, file_access: true }
    }
}

/// A value of the final stack, copied to the host.
#[derive(Debug, Clone, PartialEq)]
pub enum HostValue {
    /// An `INT` vector (also characters).
    Int(Vec<i64>),
    /// A `FLOAT` vector.
    Float(Vec<f64>),
    /// A `BOOL` vector.
    Bool(Vec<bool>),
    /// A segment descriptor, as its segment lengths.
    Segdes(Vec<i64>),
}

impl From<cvl::HostVector> for HostValue {
    fn from(v: cvl::HostVector) -> HostValue {
        match v {
            cvl::HostVector::Int(a) => HostValue::Int(a),
            cvl::HostVector::Float(a) => HostValue::Float(a),
            cvl::HostVector::Bool(a) => HostValue::Bool(a),
        }
    }
}

impl HostValue {
    /// Its element count (segments, for a segment descriptor) and, for a segment
    /// descriptor, the sum of its lengths (negative ones counted as 0).
    pub fn shape(&self) -> (usize, Option<usize>) {
        match self {
            HostValue::Int(v) => (v.len(), None),
            HostValue::Float(v) => (v.len(), None),
            HostValue::Bool(v) => (v.len(), None),
            HostValue::Segdes(l) => (l.len(), Some(l.iter().map(|&x| x.max(0) as usize).sum())),
        }
    }
    /// Keeps the first `n` elements (lengths, for a segment descriptor).
    pub fn truncate(&mut self, n: usize) {
        match self {
            HostValue::Int(v) | HostValue::Segdes(v) => v.truncate(n),
            HostValue::Float(v) => v.truncate(n),
            HostValue::Bool(v) => v.truncate(n),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome<T = HostValue> {
    /// The entry function returned; the final stack, bottom first (host copies from
    /// [`run`], handles to values kept in the library from [`run_resident`]).
    Finished(Vec<T>),
    /// `EXIT` ran; nothing is printed. The status is always 0 (spec 6.3); the field is
    /// kept for callers that pass a status on.
    Exited(i64),
}

/// The result of [`run`] (and of [`run_resident`], whose final stack is kept).
#[derive(Debug, Clone, PartialEq)]
pub struct RunReport<T = HostValue> {
    /// How the run ended.
    pub outcome: RunOutcome<T>,
    /// Operation counts (empty unless [`RunOptions::stats`]).
    pub stats: OpStats,
    /// When the run stopped by `EXIT`: the place of that `EXIT` instruction, with the
    /// call stack (compiled NESL checks print their message and then `EXIT`, so this
    /// says where the check failed). `None` when the entry function returned.
    pub exit_site: Option<TrapSite>,
}

/// Runs a parsed program on the vector library `cvl` from its entry function (the one
/// named `MAIN`, otherwise the first). Everything `WRITE`/`FWRITE` prints to the standard
/// streams goes to `out`. A run-time failure is a [`Trap`] naming the function and the
/// instruction.
pub fn run<C: Cvl + 'static>(
    p: &Program,
    cvl: &mut C,
    out: &mut dyn std::io::Write,
    opts: &RunOptions,
) -> Result<RunReport, Trap> {
    let report = interp::run(p, cvl, &Residents::new(), out, opts)?;
    report.try_map(|v| interp::to_host_value(cvl, &v))
}

impl<T> RunReport<T> {
    /// The same report with every final stack slot replaced by `f` of it.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> RunReport<U> {
        let outcome = match self.outcome {
            RunOutcome::Finished(v) => RunOutcome::Finished(v.into_iter().map(f).collect()),
            RunOutcome::Exited(s) => RunOutcome::Exited(s),
        };
        RunReport { outcome, stats: self.stats, exit_site: self.exit_site }
    }

    /// [`RunReport::map`] with a fallible `f`: the first error.
    pub fn try_map<U, E>(self, mut f: impl FnMut(T) -> Result<U, E>) -> Result<RunReport<U>, E> {
        let outcome = match self.outcome {
            RunOutcome::Finished(v) => RunOutcome::Finished(v.into_iter().map(&mut f).collect::<Result<_, E>>()?),
            RunOutcome::Exited(s) => RunOutcome::Exited(s),
        };
        Ok(RunReport { outcome, stats: self.stats, exit_site: self.exit_site })
    }
}
