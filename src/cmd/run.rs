//! `nesl run`: evaluate a NESL file's forms in order, printing the top-level transcript:
//! results and program output on stdout (program output where it happens), diagnostics
//! and run-time errors on stderr, each stream flushed before the other is written. The
//! exit status is 1 when any form failed (syntax, type, compile or run-time error), 130
//! when Ctrl-C stopped it, 0 otherwise; a closed stdout (`| head`) ends it quietly.

use crate::RunOpts;
use anyhow::Context;
use nesl::{Executor, TopLevel};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Prints the operation counts of `executor` on stderr (after flushing stdout): one row
/// per CVL family, a `total` row, and on a device backend the device's counters (`kernel
/// launches`, `host round trips`, bytes moved). `--stats-json` writes the same as JSON.
pub fn print_stats(executor: &dyn Executor) {
    let _ = std::io::stdout().flush();
    // The transcript's last line has no newline (as the reference prints it).
    eprintln!();
    match executor.stats() {
        Some(stats) => {
            print_op_rows(&stats.rows);
            print_instructions(stats.instructions);
            print_parts(stats.parts);
        }
        None => eprintln!("this backend keeps no operation counts"),
    }
    if let Some((device, rows)) = executor.device_stats() {
        print_device_rows(&device, &rows);
        if let Some(stats) = executor.stats() {
            print_round_trips(&stats.round_trips);
        }
    }
}

/// The host round trips by the kind of instruction that caused them (stderr); the device's
/// total also counts the reads of the results the top level prints.
pub fn print_round_trips(rows: &[(String, u64)]) {
    if rows.is_empty() {
        return;
    }
    eprintln!("round trips by instruction kind (the total also counts printed results):");
    for (kind, n) in rows {
        eprintln!("  {kind:<14} {n:>12}");
    }
}

/// The table of CVL operation counts and its `total` row (stderr).
pub fn print_op_rows(rows: &[(String, u64, u64)]) {
    if rows.is_empty() {
        eprintln!("no vector operations ran");
        return;
    }
    eprintln!("{:<16} {:>12} {:>16}", "operation", "calls", "elements");
    for (kind, calls, elements) in rows {
        eprintln!("{kind:<16} {calls:>12} {elements:>16}");
    }
    let calls: u64 = rows.iter().map(|r| r.1).sum();
    let elements: u64 = rows.iter().map(|r| r.2).sum();
    eprintln!("{:<16} {calls:>12} {elements:>16}", "total");
}

/// The number of VCODE instructions executed (stderr).
pub fn print_instructions(n: u64) {
    eprintln!("{:<16} {n:>12}", "instructions");
}

/// The calls run in parts (one part per thread, each run on its own) and their parts, when
/// there were any (stderr).
pub fn print_parts((calls, parts): (u64, u64)) {
    if calls > 0 {
        eprintln!("{:<16} {calls:>12} {parts:>16}", "calls in parts");
    }
}

/// The device counters of a GPU backend (stderr): `device NAME (ARCH)`, then one
/// `name value` row each.
pub fn print_device_rows(device: &str, rows: &[(String, u64)]) {
    eprintln!("device           {device}");
    for (name, value) in rows {
        eprintln!("{name:<16} {value:>12}");
    }
}

/// Writes the statistics of `executor` as JSON to `path` (see `bench::stats::RunStats`):
/// operation counts, device counters, the CPU library's thread count, peak memory.
pub fn write_stats_json(executor: &dyn Executor, path: &Path) -> anyhow::Result<()> {
    let rows = executor.stats().map(|s| s.rows.as_slice()).unwrap_or(&[]);
    let mut stats = bench::stats::RunStats::new(rows, executor.device_stats(), vcode::cvl::cpu::threads::default_threads());
    stats.instructions = executor.stats().map(|s| s.instructions);
    stats.round_trips = executor.stats().map(|s| s.round_trips.clone()).unwrap_or_default();
    let text = serde_json::to_string(&stats)?;
    std::fs::write(path, text + "\n").with_context(|| format!("cannot write {}", path.display()))
}

/// Entry point of `nesl run`; `stats_json` is where `--stats-json` writes the statistics.
pub fn main(file: &Path, opts: &RunOpts, stats_json: Option<&Path>) -> anyhow::Result<ExitCode> {
    let count = opts.stats || stats_json.is_some();
    let executor = opts.config().with_stats(count).executor()?;
    let src = nesl::pipeline::read_source(file)?;
    super::install_display(opts, super::person_at_terminal(), Path::new("."))?;
    // The program is the whole file: a variable's value goes when no later form needs it.
    let mut top = TopLevel::new(executor).with_renderer(nesl::diagnostics::render).dropping_dead_globals();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut err = std::io::stderr().lock();
    let summary = top.eval_source_split(&src.name, &src.text, &mut out, &mut err)?;
    drop(err);
    out.flush()?;
    drop(out);
    super::finish_display();
    if summary.interrupted {
        // Promptly: the memory the session holds goes back with the process.
        let _ = std::io::stderr().flush();
        std::process::exit(i32::from(super::INTERRUPTED));
    }
    if opts.stats {
        print_stats(top.executor());
    }
    if let Some(path) = stats_json {
        write_stats_json(top.executor(), path)?;
    }
    Ok(if summary.failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
