//! `nesl frontbench [PATH...]` (hidden): how long the compiler takes. For every `.nesl`
//! file under each path (default: `bench/programs` and `regression/nesl`), the file is
//! parsed, checked, flattened into one VCODE program (as `nesl compile` does) and
//! optimised at level 2, each stage timed separately; the best of `--runs` runs of each
//! stage is kept. Prints one row per file of the first path (the benchmark programs),
//! then one total row per path. Files that do not compile (the corpus's error cases) are
//! counted and left out of the totals.

use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// The stages timed, in order.
const STAGES: [&str; 4] = ["parse", "check", "flatten", "optimise"];

/// Best time of each stage for one file, or why it does not compile.
fn time_file(path: &Path, runs: usize) -> anyhow::Result<Result<[Duration; 4], String>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let src = String::from_utf8_lossy(&bytes);
    let name = path.display().to_string();
    let mut best = [Duration::MAX; 4];
    for _ in 0..runs.max(1) {
        match nesl::pipeline::timed_compile(&name, &src, 2) {
            Ok(t) => {
                for (b, d) in best.iter_mut().zip(t) {
                    *b = (*b).min(d);
                }
            }
            Err(why) => return Ok(Err(why.to_string())),
        }
    }
    Ok(Ok(best))
}

fn nesl_files(root: &Path) -> anyhow::Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, out)?;
            } else if path.extension().is_some_and(|e| e == "nesl") {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    if root.is_file() {
        out.push(root.to_path_buf());
    } else {
        walk(root, &mut out).with_context(|| format!("cannot list {}", root.display()))?;
    }
    out.sort();
    Ok(out)
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

/// Entry point of `nesl frontbench`.
pub fn main(paths: &[PathBuf], runs: usize) -> anyhow::Result<ExitCode> {
    let defaults = [PathBuf::from("bench/programs"), PathBuf::from("regression/nesl")];
    let paths = if paths.is_empty() { &defaults[..] } else { paths };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    writeln!(out, "best of {runs} runs, milliseconds (release build, level-2 optimisation)")?;
    writeln!(out, "| file | {} | total |", STAGES.join(" | "))?;
    writeln!(out, "|---|{}---:|", "---:|".repeat(STAGES.len()))?;
    for (k, root) in paths.iter().enumerate() {
        let mut total = [Duration::ZERO; 4];
        let (mut files, mut skipped) = (0, 0);
        for file in nesl_files(root)? {
            match time_file(&file, runs)? {
                Ok(t) => {
                    files += 1;
                    for (s, d) in total.iter_mut().zip(t) {
                        *s += d;
                    }
                    if k == 0 {
                        let cells: Vec<String> = t.iter().copied().map(ms).collect();
                        writeln!(out, "| {} | {} | {} |", file.display(), cells.join(" | "), ms(t.iter().sum()))?;
                    }
                }
                Err(_) => skipped += 1,
            }
        }
        let cells: Vec<String> = total.iter().copied().map(ms).collect();
        let skip = if skipped > 0 { format!(", {skipped} not compiled") } else { String::new() };
        writeln!(
            out,
            "| **{} ({files} files{skip})** | {} | {} |",
            root.display(),
            cells.join(" | "),
            ms(total.iter().sum())
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
