//! The error type that crosses the driver's boundaries: from the pipeline, the executors
//! and the session to the command line, which renders it.

use nesl_front::Diagnostic;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Everything that can go wrong between a file name and a finished run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("cannot {action} {}: {io}", path.display())]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why (part of the message, not a separate source).
        io: std::io::Error,
    },
    /// NESL source that does not compile (syntax, name, type or compile errors).
    #[error("{}", crate::diagnostics::plain_render(file, text, diags).trim_end())]
    Compile {
        /// The source's name in messages.
        file: String,
        /// The source text the diagnostics' spans point into.
        text: Arc<str>,
        /// What is wrong, in source order.
        diags: Vec<Diagnostic>,
    },
    /// VCODE (or FCODE) text that does not parse or verify: one `line:col: message` per
    /// problem.
    #[error("{}", errors.iter().map(|e| format!("{file}:{e}")).collect::<Vec<_>>().join("\n"))]
    Vcode {
        /// The file's name in messages.
        file: String,
        /// The problems, each starting with its `line:col`.
        errors: Vec<String>,
    },
    /// A run that stopped with a run-time error.
    #[error("{0}")]
    Runtime(RuntimeError),
    /// A vector library that cannot start or cannot load a program (no GPU, no driver,
    /// kernels that do not build).
    #[error("{0}")]
    Backend(String),
    /// An optimisation level other than 0, 1 and 2.
    #[error("optimisation level {0} does not exist (0, 1 or 2)")]
    OptLevel(u8),
    /// The optimiser rejected a program (the front end's VCODE is always well formed, so
    /// this is an internal error for compiled NESL).
    #[error("internal error: the optimiser (level {level}) failed: {error}")]
    Optimise {
        /// The level asked for.
        level: u8,
        /// What the optimiser said (part of the message).
        error: fcode_opt::OptError,
    },
    /// A program that the VCODE verifier rejects where it must accept it (checked runs).
    #[error("internal error: the {what} does not verify: {}{}", first(errors), more(errors))]
    Verify {
        /// Which program: `compiled VCODE` or `optimised program`.
        what: &'static str,
        /// The verifier's complaints.
        errors: Vec<vcode::VerifyError>,
    },
}

fn first(errors: &[vcode::VerifyError]) -> String {
    errors.first().map(|e| e.to_string()).unwrap_or_default()
}

fn more(errors: &[vcode::VerifyError]) -> String {
    match errors.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    }
}

impl Error {
    /// An I/O error reading `path`.
    pub fn read(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { action: "read", path: path.into(), io: source }
    }

    /// An I/O error writing `path`.
    pub fn write(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { action: "write", path: path.into(), io: source }
    }
}

impl From<RuntimeError> for Error {
    fn from(e: RuntimeError) -> Self {
        Error::Runtime(e)
    }
}

/// A trap of the interpreter, with the NESL places that led to it.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    /// What went wrong (its data: index and length, ...) and at which VCODE instruction.
    pub trap: vcode::Trap,
    /// Where it went wrong in the NESL source and how the program got there; empty for
    /// VCODE that was not compiled from NESL.
    pub backtrace: Backtrace,
}

/// Where a run stopped and how it got there.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Backtrace {
    /// The places, innermost first, calls the optimiser inlined included
    /// ([`vcode::Program::backtrace`]).
    pub places: Vec<vcode::Place>,
    /// True when the interpreter kept only the innermost [`vcode::trap::MAX_FRAMES`]
    /// calls (a runaway recursion).
    pub truncated: bool,
}

impl Backtrace {
    /// The backtrace of `site` in `program`.
    pub fn new(program: &vcode::Program, site: &vcode::TrapSite) -> Self {
        Backtrace { places: program.backtrace(site), truncated: site.stack.len() >= vcode::trap::MAX_FRAMES }
    }
}

impl RuntimeError {
    /// The trap `trap` of `program`, with its NESL backtrace when the trapping
    /// instruction came from NESL source.
    pub fn new(program: &vcode::Program, trap: vcode::Trap) -> Self {
        let backtrace = match &trap.site {
            Some(s) if s.origin.scope != 0 => Backtrace::new(program, s),
            _ => Backtrace::default(),
        };
        RuntimeError { trap, backtrace }
    }

    /// True when the trap happened in code compiled from NESL (the message then names no
    /// VCODE place: the backtrace says where).
    pub fn is_located(&self) -> bool {
        self.trap.site.as_ref().is_some_and(|s| s.origin.scope != 0)
    }
}

impl fmt::Display for RuntimeError {
    /// The message the top level prints after `RUNTIME ERROR: ` (or in the located
    /// rendering): the trap alone in NESL code, with its VCODE function and line
    /// otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_located() {
            write!(f, "{}", self.trap.kind)
        } else {
            f.write_str(&trap_message(&self.trap))
        }
    }
}

/// A trap with its VCODE place, as the top level and the debugger print it after
/// `RUNTIME ERROR: `: the kind, then `(VCODE function F, line N, at `INSTR`)` when the
/// interpreter saw where.
pub fn trap_message(trap: &vcode::Trap) -> String {
    match &trap.site {
        Some(s) => format!("{} (VCODE function {}, line {}, at `{}`)", trap.kind, s.function, s.line, s.instr),
        None => trap.kind.to_string(),
    }
}

/// The driver's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
