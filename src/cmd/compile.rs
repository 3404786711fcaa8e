//! `nesl compile FILE [-o OUT]`: compile a NESL program to one VCODE program.
//!
//! Every form is parsed and checked in order. The VCODE program's entry function (the
//! first in the file, `MAIN1_1`) evaluates the file's top-level expressions in order and
//! leaves their values on the stack, one after the other, each in the flat layout of
//! vcode.md section 3; global bindings (`x = e;`) are evaluated in place and used by the
//! later forms. Running the result with `nesl vcode` (or CMU's `vinterp`) prints those
//! values as vinterp prints a final stack. Errors are reported with their location and
//! the exit status is 1.

use anyhow::Context;
use nesl_front::check::Session;
use nesl_front::diag::{Diagnostic, LineIndex};
use nesl_front::flatten::{compile_program, CompileOptions};
use nesl_front::parser::parse_items;
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
pub fn main(file: &Path, output: Option<&Path>) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let src = String::from_utf8_lossy(&bytes);
    let name = file.display().to_string();
    let mut session = Session::new();
    session.set_source(&name, &src);
    let mut items = Vec::new();
    let mut failed = false;
    for item in parse_items(&src) {
        match item.and_then(|mut form| session.check_item(&mut form).map(|_| form)) {
            Ok(form) => items.push(form),
            Err(diags) => {
                failed = true;
                eprint!("{}", render(&name, &src, &diags));
            }
        }
    }
    if failed {
        return Ok(ExitCode::from(1));
    }
    let code = match compile_program(&session, &items, &CompileOptions::default()) {
        Ok(c) => c,
        Err(diags) => {
            eprint!("{}", render(&name, &src, &diags));
            return Ok(ExitCode::from(1));
        }
    };
    match output {
        Some(p) => std::fs::write(p, code.to_string()).with_context(|| format!("cannot write {}", p.display()))?,
        None => {
            // A closed pipe (`nesl compile f.nesl | head`) is not an error.
            use std::io::Write;
            match std::io::stdout().lock().write_all(code.to_string().as_bytes()) {
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                r => r.context("cannot write the VCODE to standard output")?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
