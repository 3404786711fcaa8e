//! `nesl compile FILE [-o OUT]`: compile a NESL program to one VCODE program.
//!
//! Every form is parsed and checked in order. The VCODE program's entry function (the
//! first in the file, `MAIN1_1`) evaluates the file's top-level expressions in order and
//! leaves their values on the stack, one after the other, each in the flat layout of
//! vcode.md section 3; global bindings (`x = e;`) are evaluated in place and used by the
//! later forms. Running the result with `nesl vcode` (or CMU's `vinterp`) prints those
//! values as vinterp prints a final stack. Errors are reported with their location and
//! the exit status is 1. With `--origins` each instruction is followed by a comment
//! naming the NESL place it was compiled from.

use anyhow::Context;
use nesl_front::diag::{Diagnostic, LineIndex};
use nesl_front::flatten::CompileOptions;
use std::path::Path;
use std::process::ExitCode;

/// Renders diagnostics as `file:line:col: error: message` lines.
fn render(file: &str, src: &str, diags: &[Diagnostic]) -> String {
    let idx = LineIndex::new(src);
    let mut s = String::new();
    for d in diags {
        let (l, c) = idx.line_col(d.span.start as usize);
        s.push_str(&format!("Error: {file}:{l}:{c}: {}\n", d.message));
        for (_, n) in &d.notes {
            s.push_str(&format!("  note: {n}\n"));
        }
    }
    s
}

/// Entry point of `nesl compile`.
pub fn main(file: &Path, output: Option<&Path>, origins: bool) -> anyhow::Result<ExitCode> {
    let src = nesl::pipeline::read_source(file)?;
    let code = match nesl::pipeline::compile(&src.name, &src.text, &CompileOptions::default()) {
        Ok(c) => c,
        Err(nesl::Error::Compile { file, text, diags }) => {
            eprint!("{}", render(&file, &text, &diags));
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(e.into()),
    };
    let text = if origins { code.with_origins(None).to_string() } else { code.to_string() };
    match output {
        Some(p) => std::fs::write(p, text).map_err(|e| nesl::Error::write(p, e))?,
        None => {
            // A closed pipe (`nesl compile f.nesl | head`) is not an error.
            use std::io::Write;
            match std::io::stdout().lock().write_all(text.as_bytes()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                r => r.context("cannot write the VCODE to standard output")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
