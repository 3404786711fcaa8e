//! `nesl check FILE`: parse and type-check a NESL program without running it.
//!
//! Forms are checked in order, each against what the earlier ones defined. For each
//! function or datatype definition the line the NESL top level prints is written
//! (`name = fn : type`); an erroneous form (syntax, name or type error) prints its
//! rendered diagnostics instead, and checking goes on with the next form. Everything is
//! written to stdout in source order. The exit status is 1 when any form failed.

use anyhow::Context;
use nesl_front::check::definition_line;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Entry point of `nesl check`.
pub fn main(file: &Path) -> anyhow::Result<ExitCode> {
    let src = nesl::pipeline::read_source(file)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut failed = 0;
    let mut written = Ok(());
    nesl::pipeline::check_each(&src.name, &src.text, |form| {
        let text = match form {
            Ok(info) => definition_line(info).map(|line| format!("{line}\n")),
            Err(diags) => {
                failed += 1;
                Some(nesl::diagnostics::render(&src.name, &src.text, diags))
            }
        };
        if let (Some(text), Ok(())) = (text, &written) {
            written = out.write_all(text.as_bytes());
        }
    });
    written.and_then(|()| out.flush()).context("writing the output failed")?;
    Ok(if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
