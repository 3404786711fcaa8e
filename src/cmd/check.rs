//! `nesl check FILE`: parse and type-check a NESL program without running it.
//!
//! Forms are checked in order, each against what the earlier ones defined. For each
//! function or datatype definition the line the NESL top level prints is written
//! (`name = fn : type`); an erroneous form (syntax, name or type error) prints its
//! rendered diagnostics instead, and checking goes on with the next form. Everything is
//! written to stdout in source order. The exit status is 1 when any form failed.

use anyhow::Context;
use nesl_front::check::{definition_line, Session};
use nesl_front::parser::parse_items;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Entry point of `nesl check`.
pub fn main(file: &Path) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let src = String::from_utf8_lossy(&bytes);
    let name = file.display().to_string();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let failed = check_source(&name, &src, &mut out).context("writing the output failed")?;
    out.flush()?;
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Checks every form of `src`, writing definition lines and rendered errors to `out`;
/// returns how many forms failed.
pub fn check_source(file: &str, src: &str, out: &mut dyn Write) -> std::io::Result<usize> {
    let mut session = Session::new();
    let mut failed = 0;
    for item in parse_items(src) {
        let result = item.and_then(|mut form| session.check_item(&mut form));
        match result {
            Ok(info) => {
                if let Some(line) = definition_line(&info) {
                    writeln!(out, "{line}")?;
                }
            }
            Err(diags) => {
                failed += 1;
                write!(out, "{}", crate::diagnostics::render(file, src, &diags))?;
            }
        }
    }
    Ok(failed)
}
