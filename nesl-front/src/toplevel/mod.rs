//! The NESL top level: evaluate forms in order, print the transcript.
//!
//! [`TopLevel`] owns the type-checking session and the values of the global variables;
//! for each form of a file it prints what the NESL top level prints (spec section 6.2):
//! `name = fn : type` for a function or datatype, `it = value : type` for an expression,
//! `pattern = value : type` for a binding, an error paragraph (starting with `error` or
//! `RUNTIME ERROR`, ending with a blank line) for a form that fails, after which the
//! evaluation goes on with the next form.
//!
//! Running compiled code is pluggable ([`Executor`]): the CLI chooses the vector library
//! and the optimisation level; [`CpuExecutor`] is the VCODE interpreter on the CPU.
//! [`value`] prints values from their type and flat VCODE slots; [`output`] tracks the
//! transcript's line state (the reference glues program output onto the previous
//! result line, and every error paragraph must start a line and end with a blank one).

mod eval;
mod exec;
pub mod output;
pub mod value;
#[cfg(test)]
mod tests;

pub use eval::{pattern_text, plain_render, EvalSummary, Renderer, Settings, TopLevel};
pub use exec::{trap_message, CpuExecutor, Transform, VcodeExecutor};

pub use value::{format_float, format_value};
pub use vcode::HostValue;

/// What running a compiled top-level expression gave.
#[derive(Clone, Debug, PartialEq)]
pub enum ExecResult {
    /// The program ran to its end; its final stack, bottom first.
    Finished(Vec<HostValue>),
    /// The program stopped with `EXIT` (after writing its runtime error message): where
    /// the `EXIT` was and how the program got there, innermost first
    /// ([`vcode::Program::backtrace`]; empty when unknown).
    Exited(Vec<vcode::Place>),
}

/// A run that failed: a trap of the interpreter or a program that does not load.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecError {
    /// What went wrong (no place in it).
    pub message: String,
    /// Where it went wrong and how the program got there, innermost first (empty when
    /// unknown).
    pub backtrace: Vec<vcode::Place>,
}

impl From<String> for ExecError {
    fn from(message: String) -> Self {
        ExecError { message, backtrace: Vec::new() }
    }
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<&str> for ExecError {
    fn from(message: &str) -> Self {
        ExecError::from(message.to_string())
    }
}

/// Runs the VCODE text of one top-level expression. The top level does not know which
/// vector library or optimisation level is used: the CLI chooses an executor.
pub trait Executor {
    /// Runs a compiled program; `out` receives what the program writes
    /// (`print_string` output, runtime error messages before `EXIT`). `Err` is an
    /// interpreter trap (with its place) or a program that does not load.
    fn execute(&mut self, program: vcode::Program, out: &mut dyn std::io::Write) -> Result<ExecResult, ExecError>;

    /// Counts of the vector operations run so far (for `--stats`), when kept.
    fn stats(&self) -> Option<&vcode::OpStats> {
        None
    }

    /// For a backend on a device (the GPU): the device's name and its counters so far as
    /// `(name, value)` rows (kernel launches, host round trips, bytes moved), for
    /// `--stats`; `None` otherwise.
    fn device_stats(&self) -> Option<(String, Vec<(String, u64)>)> {
        None
    }
}

