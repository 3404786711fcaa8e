//! bench: the benchmark programs (the GPU NESL paper's five and more, in `programs/`) and
//! the harness behind `nesl bench`, which runs them at the paper's sizes (or a sweep, or
//! small sizes with `--quick`) on every backend and optimisation level asked for, beside
//! hand-written Rust baselines, and prints one markdown table (plus JSON and a log–log SVG
//! plot of time against size per program).
//!
//! Each program starts with the line `n = SIZE;`, which the harness replaces, and ends with
//! the top-level binding `(ok, seconds) = ...;`: its self-check and its core time, measured
//! by the program itself with `time(...)` as the paper did. Programs run as child processes
//! of the `nesl` binary (`nesl run`), so a crash or a time-out in one does not stop the rest.

pub mod baseline;
mod report;

pub use report::{markdown, svg_plot, to_json};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One benchmark program.
#[derive(Debug, Clone)]
pub struct Program {
    /// Short name (`dotp`, `quicksort`, ...).
    pub name: &'static str,
    /// The NESL source, whose first line is `n = ...;`.
    pub source: &'static str,
    /// The size the paper used (Table 1), or our default for programs not in the paper.
    pub paper_size: usize,
    /// A small size for `--quick`.
    pub quick_size: usize,
    /// Number of elements per unit of size, for elements per second (1 for all but smvm).
    pub elements_per_unit: f64,
}

/// The benchmark programs, in the order of the paper's Table 1, then ours.
pub fn programs() -> Vec<Program> {
    vec![
        Program { name: "dotp", source: include_str!("../programs/dotp.nesl"), paper_size: 10_000_000, quick_size: 100_000, elements_per_unit: 1.0 },
        Program { name: "quicksort", source: include_str!("../programs/quicksort.nesl"), paper_size: 1_000_000, quick_size: 20_000, elements_per_unit: 1.0 },
        Program { name: "blackscholes", source: include_str!("../programs/blackscholes.nesl"), paper_size: 10_000_000, quick_size: 100_000, elements_per_unit: 1.0 },
        Program { name: "quickhull", source: include_str!("../programs/quickhull.nesl"), paper_size: 5_000_000, quick_size: 50_000, elements_per_unit: 1.0 },
        Program { name: "barneshut", source: include_str!("../programs/barneshut.nesl"), paper_size: 75_000, quick_size: 2_000, elements_per_unit: 1.0 },
        Program { name: "smvm", source: include_str!("../programs/smvm.nesl"), paper_size: 1_000_000, quick_size: 10_000, elements_per_unit: 9.0 },
        Program { name: "muladd", source: include_str!("../programs/muladd.nesl"), paper_size: 10_000_000, quick_size: 100_000, elements_per_unit: 1.0 },
    ]
}

/// Which sizes to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizes {
    /// The paper's sizes.
    Paper,
    /// Small sizes only (CI).
    Quick,
    /// The paper's size divided by 1000, 100, 10 and 1.
    Sweep,
}

impl Sizes {
    /// The sizes to run for `p`.
    pub fn for_program(self, p: &Program) -> Vec<usize> {
        match self {
            Sizes::Paper => vec![p.paper_size],
            Sizes::Quick => vec![p.quick_size],
            Sizes::Sweep => {
                let mut v: Vec<usize> =
                    [1000, 100, 10, 1].iter().map(|d| (p.paper_size / d).max(1000)).collect();
                v.dedup();
                v
            }
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The `nesl` executable that runs the programs.
    pub nesl: PathBuf,
    /// Program names to run (empty: all).
    pub only: Vec<String>,
    /// Sizes.
    pub sizes: Sizes,
    /// Backends (`cpu`, `cuda`).
    pub backends: Vec<String>,
    /// Optimisation levels.
    pub opt_levels: Vec<u8>,
    /// Runs per configuration.
    pub runs: usize,
    /// Time limit for one run.
    pub timeout: Duration,
    /// Whether to run the Rust baselines.
    pub baselines: bool,
}

/// The measurements of one (program, size, backend, level).
#[derive(Debug, Clone)]
pub struct Row {
    /// Program name.
    pub program: String,
    /// Size `n`.
    pub size: usize,
    /// Elements processed (size times the program's elements per unit).
    pub elements: f64,
    /// `cpu`, `cuda`, or `rust-rayon` for a baseline.
    pub backend: String,
    /// Optimisation level (none for a baseline).
    pub opt: Option<u8>,
    /// Core times in seconds, one per successful run.
    pub times: Vec<f64>,
    /// Whole-process wall times in seconds.
    pub walls: Vec<f64>,
    /// Every run's self-check passed.
    pub ok: bool,
    /// CVL operations executed (from `--stats`), when reported.
    pub cvl_ops: Option<u64>,
    /// Kernel launches (from `--stats` on a GPU backend).
    pub launches: Option<u64>,
    /// Host round trips (from `--stats` on a GPU backend).
    pub round_trips: Option<u64>,
    /// Why a run failed, if one did.
    pub error: Option<String>,
}

impl Row {
    /// Median core time.
    pub fn median(&self) -> Option<f64> {
        let mut t = self.times.clone();
        if t.is_empty() {
            return None;
        }
        t.sort_by(|a, b| a.total_cmp(b));
        Some(t[t.len() / 2])
    }
    /// Minimum and maximum core time.
    pub fn range(&self) -> Option<(f64, f64)> {
        let min = self.times.iter().copied().reduce(f64::min)?;
        let max = self.times.iter().copied().reduce(f64::max)?;
        Some((min, max))
    }
}

/// The instantiated source of `p` at size `n`.
pub fn source_at(p: &Program, n: usize) -> String {
    let mut out = String::new();
    let mut replaced = false;
    for line in p.source.lines() {
        if !replaced && line.trim_start().starts_with("n = ") {
            out.push_str(&format!("n = {n};\n"));
            replaced = true;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Parses the program's `(ok, seconds) = (T, 1.2E-2) : bool, float` line.
pub fn parse_result(transcript: &str) -> Option<(bool, f64)> {
    let line = transcript.lines().rev().find(|l| l.trim_start().starts_with("(ok, seconds) ="))?;
    let rest = line.split_once('=')?.1.trim();
    let inner = rest.strip_prefix('(')?;
    let (ok, rest) = inner.split_once(',')?;
    let secs = rest.split(')').next()?.trim();
    let ok = match ok.trim() {
        "T" => true,
        "F" => false,
        _ => return None,
    };
    Some((ok, secs.parse().ok()?))
}

/// Parses the total CVL operation count from `--stats` output: the number after
/// `total` on a line that starts with `total` (case-insensitive).
pub fn parse_cvl_ops(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let l = l.trim().to_ascii_lowercase();
        let rest = l.strip_prefix("total")?;
        rest.split(|c: char| !c.is_ascii_digit()).find(|s| !s.is_empty())?.parse().ok()
    })
}

/// Parses the first number on the line of `--stats` output that starts with `name`
/// (`kernel launches`, `host round trips`: the device counters of a GPU backend).
pub fn parse_stat(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|l| l.trim().strip_prefix(name)?.split_whitespace().next()?.parse().ok())
}

/// What `--stats` reported: CVL operations, kernel launches, host round trips.
type Counts = (Option<u64>, Option<u64>, Option<u64>);

fn parse_counts(err: &str, out: &str) -> Counts {
    let both = |f: &dyn Fn(&str) -> Option<u64>| f(err).or_else(|| f(out));
    (
        both(&parse_cvl_ops),
        both(&|t| parse_stat(t, "kernel launches")),
        both(&|t| parse_stat(t, "host round trips")),
    )
}

/// Runs one program once; returns (ok, core seconds, wall seconds, counts).
fn run_once(
    cfg: &Config,
    file: &Path,
    backend: &str,
    opt: u8,
) -> Result<(bool, f64, f64, Counts), String> {
    let start = Instant::now();
    let mut child = Command::new(&cfg.nesl)
        .args(["run", "--stats", "--backend", backend, "--opt", &opt.to_string()])
        .arg(file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", cfg.nesl.display()))?;
    // Drain the pipes on threads so a chatty child cannot block.
    let mut so = child.stdout.take().ok_or("no stdout")?;
    let mut se = child.stderr.take().ok_or("no stderr")?;
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut so, &mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut se, &mut s);
        s
    });
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > cfg.timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {:.0} s", cfg.timeout.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("wait failed: {e}")),
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let out = t_out.join().unwrap_or_default();
    let err = t_err.join().unwrap_or_default();
    match parse_result(&out) {
        Some((ok, secs)) => Ok((ok, secs, wall, parse_counts(&err, &out))),
        None => {
            let tail: String = format!("{out}\n{err}")
                .lines()
                .filter(|l| !l.trim().is_empty())
                .last()
                .unwrap_or("no output")
                .chars()
                .take(160)
                .collect();
            Err(format!("no result line: {tail}"))
        }
    }
}

/// Runs the benchmark; `log` receives one progress line per configuration.
pub fn run(cfg: &Config, log: &mut dyn Write) -> Vec<Row> {
    let dir = std::env::temp_dir().join(format!("nesl-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let mut rows = Vec::new();
    for p in programs() {
        if !cfg.only.is_empty() && !cfg.only.iter().any(|o| o == p.name) {
            continue;
        }
        for n in cfg.sizes.for_program(&p) {
            let file = dir.join(format!("{}-{n}.nesl", p.name));
            if let Err(e) = std::fs::write(&file, source_at(&p, n)) {
                let _ = writeln!(log, "cannot write {}: {e}", file.display());
                continue;
            }
            for backend in &cfg.backends {
                for &opt in &cfg.opt_levels {
                    let mut row = Row {
                        program: p.name.to_string(),
                        size: n,
                        elements: n as f64 * p.elements_per_unit,
                        backend: backend.clone(),
                        opt: Some(opt),
                        times: vec![],
                        walls: vec![],
                        ok: true,
                        cvl_ops: None,
                        launches: None,
                        round_trips: None,
                        error: None,
                    };
                    for _ in 0..cfg.runs {
                        match run_once(cfg, &file, backend, opt) {
                            Ok((ok, secs, wall, (ops, launches, trips))) => {
                                row.ok &= ok;
                                row.times.push(secs);
                                row.walls.push(wall);
                                row.cvl_ops = ops.or(row.cvl_ops);
                                row.launches = launches.or(row.launches);
                                row.round_trips = trips.or(row.round_trips);
                            }
                            Err(e) => {
                                row.ok = false;
                                row.error = Some(e);
                                break;
                            }
                        }
                    }
                    let _ = writeln!(
                        log,
                        "{:<12} n={:<9} {:<5} --opt {}  {}",
                        p.name,
                        n,
                        backend,
                        opt,
                        match (&row.error, row.median()) {
                            (Some(e), _) => format!("FAILED: {e}"),
                            (None, Some(m)) => format!("{:.3} ms{}", m * 1e3, if row.ok { "" } else { " (self-check FAILED)" }),
                            (None, None) => "no runs".to_string(),
                        }
                    );
                    rows.push(row);
                }
            }
            if cfg.baselines && (p.name == "dotp" || p.name == "blackscholes") {
                let mut row = Row {
                    program: p.name.to_string(),
                    size: n,
                    elements: n as f64,
                    backend: "rust-rayon".to_string(),
                    opt: None,
                    times: vec![],
                    walls: vec![],
                    ok: true,
                    cvl_ops: None,
                    launches: None,
                    round_trips: None,
                    error: None,
                };
                for _ in 0..cfg.runs.max(1) {
                    let (t, r) = if p.name == "dotp" { baseline::dotp(n) } else { baseline::blackscholes(n) };
                    row.ok &= r.is_finite();
                    row.times.push(t);
                }
                let _ = writeln!(log, "{:<12} n={:<9} rust-rayon  {:.3} ms", p.name, n, row.median().unwrap_or(0.0) * 1e3);
                rows.push(row);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_has_a_size_line_and_a_result_binding() {
        for p in programs() {
            assert!(p.source.lines().any(|l| l.starts_with("n = ")), "{}", p.name);
            assert!(p.source.contains("(ok, seconds) ="), "{}", p.name);
            let s = source_at(&p, 1234);
            assert!(s.contains("n = 1234;"), "{}", p.name);
        }
    }

    #[test]
    fn result_lines_parse() {
        assert_eq!(parse_result("x\n(ok, seconds) = (T, 1.5E-2) : bool, float\n"), Some((true, 0.015)));
        assert_eq!(parse_result("(ok, seconds) = (F, 2.0) : bool, float"), Some((false, 2.0)));
        assert_eq!(parse_result("it = 3 : int"), None);
        assert_eq!(parse_cvl_ops("elementwise 3 100\nTotal: 42 ops"), Some(42));
        let stats = "total  9  32\ndevice           NVIDIA H100 (sm_90)\nkernel launches   5\nhost round trips  9\n";
        assert_eq!(parse_stat(stats, "kernel launches"), Some(5));
        assert_eq!(parse_stat(stats, "host round trips"), Some(9));
        assert_eq!(parse_counts(stats, ""), (Some(9), Some(5), Some(9)));
        assert_eq!(parse_stat("total 3 4\n", "kernel launches"), None);
    }

    #[test]
    fn sweep_sizes_grow_to_the_paper_size() {
        let p = &programs()[0];
        let s = Sizes::Sweep.for_program(p);
        assert_eq!(s.last(), Some(&p.paper_size));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }
}
