//! `nesl test DIR...`: run regression suites. Every `.nesl` file under each directory
//! (or each file given) that has an `.expected` transcript beside it is evaluated
//! in-process and compared by the rule of the conformance corpus (numbers within 1e-9,
//! error paragraphs as marks). Prints `PASS`/`FAIL`/`SKIP` per file, the first
//! difference of each failure, and the pass count; exit status 1 when any case failed.

use crate::RunOpts;
use regression::{Summary, Verdict};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Entry point of `nesl test`.
pub fn main(dirs: &[PathBuf], opts: &RunOpts) -> anyhow::Result<ExitCode> {
    if dirs.is_empty() {
        anyhow::bail!("give at least one directory (or .nesl file) to test, e.g. `nesl test regression/nesl`");
    }
    // Graphics go to SVG files in a temporary folder unless asked otherwise: a test run
    // never starts a server or a browser by itself.
    let svg_dir = std::env::temp_dir().join(format!("nesl-test-svg-{}", std::process::id()));
    super::install_display(opts, false, &svg_dir)?;
    let config = opts.config();
    // Fail early, with one message, when the backend cannot run at all.
    config.executor()?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut total = Summary::default();
    for dir in dirs {
        let mut transcribe =
            |path: &Path, src: &str| nesl::corpus::transcript(path, src, &config, Some(nesl::diagnostics::render));
        let mut report = |case: &regression::Case, v: &Verdict| {
            let name = case.source.display();
            let _ = match v {
                Verdict::Pass => writeln!(out, "PASS {name}"),
                Verdict::Fail(diff) => writeln!(out, "FAIL {name}\n     {}", diff.replace('\n', "\n     ")),
                Verdict::Skip(why) => writeln!(out, "SKIP {name} ({why})"),
            };
            let _ = out.flush();
        };
        let summary = regression::run_suite(dir, &mut transcribe, &mut report).map_err(anyhow::Error::msg)?;
        total.passed += summary.passed;
        total.failed += summary.failed;
        total.skipped += summary.skipped;
    }
    writeln!(
        out,
        "{} of {} passed{}{}",
        total.passed,
        total.total(),
        if total.failed > 0 { format!(", {} failed", total.failed) } else { String::new() },
        if total.skipped > 0 { format!(", {} skipped (no .expected)", total.skipped) } else { String::new() },
    )?;
    out.flush()?;
    super::finish_display();
    Ok(if total.failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
