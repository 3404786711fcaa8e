//! `nesl run`: evaluate a NESL file's forms in order, printing the top-level transcript
//! on stdout (program output included, where it happens). The exit status is 1 when
//! any form failed (syntax, type, compile or run-time error), 0 otherwise.

use crate::{Backend, RunOpts};
use anyhow::Context;
use nesl_front::toplevel::{Executor, TopLevel};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// The regression crate's name for a CLI backend choice.
pub fn backend(b: Backend) -> regression::Backend {
    match b {
        Backend::Cpu => regression::Backend::Cpu,
        Backend::Cuda => regression::Backend::Cuda,
        Backend::Auto => regression::Backend::Auto,
    }
}

/// Prints the operation counts of `executor` on stderr (after flushing stdout).
pub fn print_stats(executor: &dyn Executor) {
    let _ = std::io::stdout().flush();
    match executor.stats() {
        Some(stats) if !stats.rows.is_empty() => {
            eprintln!("{:<16} {:>12} {:>16}", "operation", "calls", "elements");
            for (kind, calls, elements) in &stats.rows {
                eprintln!("{kind:<16} {calls:>12} {elements:>16}");
            }
        }
        Some(_) => eprintln!("no vector operations ran"),
        None => eprintln!("this backend keeps no operation counts"),
    }
}

/// Entry point of `nesl run`.
pub fn main(file: &Path, opts: &RunOpts) -> anyhow::Result<ExitCode> {
    let executor = regression::executor(backend(opts.backend), opts.opt, opts.stats).map_err(anyhow::Error::msg)?;
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let src = String::from_utf8_lossy(&bytes);
    let mut top = TopLevel::new(executor).with_renderer(crate::diagnostics::render);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let summary = top
        .eval_source(&file.display().to_string(), &src, &mut out)
        .context("writing the transcript failed")?;
    out.flush()?;
    drop(out);
    if opts.stats {
        print_stats(top.executor());
    }
    Ok(if summary.failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
