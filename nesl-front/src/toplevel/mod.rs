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
    /// The program stopped with `EXIT` (after writing its runtime error message).
    Exited,
}

/// Runs the VCODE text of one top-level expression. The top level does not know which
/// vector library or optimisation level is used: the CLI chooses an executor.
pub trait Executor {
    /// Parses and runs `vcode_text`; `out` receives what the program writes
    /// (`print_string` output, runtime error messages before `EXIT`). `Err` is the
    /// message of an interpreter trap or of a program that does not load.
    fn execute(&mut self, vcode_text: &str, out: &mut dyn std::io::Write) -> Result<ExecResult, String>;

    /// [`Executor::execute`] for a program with external constants (see
    /// [`crate::flatten::Compiled`]): `consts` fill the placeholder `CONST`s of
    /// `vcode_text` by line. The provided version writes them into the text and calls
    /// `execute`; executors that parse the text themselves fill them in after parsing
    /// (no text round trip for large values).
    fn execute_with_consts(
        &mut self,
        vcode_text: &str,
        consts: Vec<(u32, HostValue)>,
        out: &mut dyn std::io::Write,
    ) -> Result<ExecResult, String> {
        if consts.is_empty() {
            return self.execute(vcode_text, out);
        }
        let mut program = vcode::parse(vcode_text).map_err(|errors| {
            let first = errors.first().map(|e| e.to_string()).unwrap_or_default();
            format!("internal error: the compiled VCODE does not parse: {first}")
        })?;
        fill_consts(&mut program, consts).map_err(|e| format!("internal error: {e}"))?;
        self.execute(&program.to_string(), out)
    }

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

/// Temporary (replaced by the typed builder): fills placeholder constants by line.
pub(crate) fn fill_consts(p: &mut vcode::Program, consts: Vec<(u32, HostValue)>) -> Result<(), String> {
    use vcode::{Const, Imm};
    for (line, value) in consts {
        let site = p.functions.iter_mut().flat_map(|f| {
            let lines: Vec<u32> = (0..f.body.len()).map(|i| f.pos_of(i).line).collect();
            f.body.iter_mut().zip(lines)
        }).find(|(ins, l)| *l == line && matches!(ins.imm, Imm::Const(_)));
        let Some((ins, _)) = site else { return Err(format!("no CONST on line {line} to fill")) };
        ins.imm = Imm::Const(match value {
            HostValue::Int(x) => Const::Int(x.into(), true),
            HostValue::Float(x) => Const::Float(x.into(), true),
            HostValue::Bool(x) => Const::Bool(x.into(), true),
            HostValue::Segdes(x) => Const::Segdes(x.into(), true),
        });
    }
    Ok(())
}
