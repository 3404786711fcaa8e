//! bench: the benchmark programs (the GPU NESL paper's five and more, in `programs/`) and
//! the harness behind `nesl bench`, which runs them at the paper's sizes (or a sweep, or
//! small sizes with `--quick`) on every backend and optimisation level asked for, on the
//! CPU at each thread count asked for (1 and all cores by default), beside hand-written
//! Rust peers (`peer`) at the same thread counts, and prints one markdown table (plus JSON
//! and a log–log SVG plot of time against size per program).
//!
//! Each program starts with the line `n = SIZE;`, which the harness replaces, and ends with
//! the top-level binding `(ok, seconds) = ...;`: its self-check and its core time, measured
//! by the program itself with `time(...)` as the paper did. Programs run as child processes
//! of the `nesl` binary (`nesl run --stats-json FILE`, with `NESL_THREADS` set), and so do
//! the peers (`nesl bench-peer PROGRAM N`), so a crash or a time-out in one does not stop
//! the rest and each child's peak memory is its own. The configurations take turns: every
//! configuration runs once, then every one again, `runs` times, so that noise on the
//! machine spreads over all of them; the table shows medians.

pub mod peer;
mod report;
pub mod stats;

pub use report::{markdown, peer_ratio, speedup, svg_plot, to_json};

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
    /// The sizes of `--sweep`, where the default rule (the paper's size divided by 1000,
    /// 100, 10 and 1) does not fit: scalar recursion, whose size is a depth.
    pub sweep: Option<&'static [usize]>,
}

/// The benchmark programs, in the order of the paper's Table 1, then ours.
pub fn programs() -> Vec<Program> {
    vec![
        Program { name: "dotp", source: include_str!("../programs/dotp.nesl"), paper_size: 10_000_000, quick_size: 100_000, elements_per_unit: 1.0, sweep: None },
        Program { name: "quicksort", source: include_str!("../programs/quicksort.nesl"), paper_size: 1_000_000, quick_size: 20_000, elements_per_unit: 1.0, sweep: None },
        Program { name: "blackscholes", source: include_str!("../programs/blackscholes.nesl"), paper_size: 10_000_000, quick_size: 100_000, elements_per_unit: 1.0, sweep: None },
        Program { name: "quickhull", source: include_str!("../programs/quickhull.nesl"), paper_size: 5_000_000, quick_size: 50_000, elements_per_unit: 1.0, sweep: None },
        Program { name: "barneshut", source: include_str!("../programs/barneshut.nesl"), paper_size: 75_000, quick_size: 2_000, elements_per_unit: 1.0, sweep: None },
        Program { name: "smvm", source: include_str!("../programs/smvm.nesl"), paper_size: 1_000_000, quick_size: 10_000, elements_per_unit: 9.0, sweep: None },
        Program { name: "muladd", source: include_str!("../programs/muladd.nesl"), paper_size: 10_000_000, quick_size: 100_000, elements_per_unit: 1.0, sweep: None },
        // Serial code (issue 13): scalar recursion, where the size is a depth.
        Program { name: "loop", source: include_str!("../programs/loop.nesl"), paper_size: 1_000_000, quick_size: 100_000, elements_per_unit: 1.0, sweep: Some(&[10_000, 100_000, 1_000_000, 10_000_000]) },
        Program { name: "fib", source: include_str!("../programs/fib.nesl"), paper_size: 25, quick_size: 18, elements_per_unit: 1.0, sweep: Some(&[15, 20, 25]) },
        Program { name: "strbuild", source: include_str!("../programs/strbuild.nesl"), paper_size: 20_000, quick_size: 2_000, elements_per_unit: 1.0, sweep: Some(&[2_000, 5_000, 20_000]) },
        Program { name: "collatz", source: include_str!("../programs/collatz.nesl"), paper_size: 10_000, quick_size: 1_000, elements_per_unit: 1.0, sweep: Some(&[1_000, 3_000, 10_000]) },
        Program { name: "indexloop", source: include_str!("../programs/indexloop.nesl"), paper_size: 200_000, quick_size: 10_000, elements_per_unit: 1.0, sweep: Some(&[10_000, 50_000, 200_000]) },
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
            Sizes::Sweep if p.sweep.is_some() => p.sweep.map(<[usize]>::to_vec).unwrap_or_default(),
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
    /// The `nesl` executable that runs the programs (and the peers, `nesl bench-peer`).
    pub nesl: PathBuf,
    /// Program names to run (empty: all).
    pub only: Vec<String>,
    /// Sizes.
    pub sizes: Sizes,
    /// Backends (`cpu`, `cuda`).
    pub backends: Vec<String>,
    /// Optimisation levels.
    pub opt_levels: Vec<u8>,
    /// Thread counts of the CPU runs and the peers (see [`thread_list`]); a GPU backend
    /// runs once, at the largest.
    pub threads: Vec<usize>,
    /// Runs per configuration.
    pub runs: usize,
    /// Time limit for one run.
    pub timeout: Duration,
    /// Whether to run the hand-written Rust peers.
    pub peers: bool,
}

/// The thread counts to run: `asked` without repeats, in the order given, or `1` and
/// `all` when nothing was asked (just `1` when `all` is 1).
pub fn thread_list(asked: &[usize], all: usize) -> Vec<usize> {
    let src: Vec<usize> = if asked.is_empty() { vec![1, all.max(1)] } else { asked.to_vec() };
    let mut out: Vec<usize> = Vec::new();
    for t in src {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The backend name of the peer rows.
pub const PEER_BACKEND: &str = "rust-rayon";

/// The measurements of one (program, size, backend, level, threads).
#[derive(Debug, Clone)]
pub struct Row {
    /// Program name.
    pub program: String,
    /// Size `n`.
    pub size: usize,
    /// Elements processed (size times the program's elements per unit).
    pub elements: f64,
    /// `cpu`, `cuda`, or `rust-rayon` for a peer.
    pub backend: String,
    /// Optimisation level (none for a peer).
    pub opt: Option<u8>,
    /// Threads of the CPU vector library (or of the peer's pool).
    pub threads: usize,
    /// Core times in seconds, one per successful run.
    pub times: Vec<f64>,
    /// Whole-process wall times in seconds.
    pub walls: Vec<f64>,
    /// The largest peak resident memory (`VmHWM`) of the runs' processes, in bytes.
    pub peak_rss_bytes: Option<u64>,
    /// Every run's self-check passed.
    pub ok: bool,
    /// CVL operations executed, when counted.
    pub cvl_ops: Option<u64>,
    /// VCODE instructions executed, when counted.
    pub instructions: Option<u64>,
    /// Kernel launches (GPU backend).
    pub launches: Option<u64>,
    /// Host round trips (GPU backend).
    pub round_trips: Option<u64>,
    /// Why a run failed, if one did.
    pub error: Option<String>,
}

impl Row {
    /// An empty row (no runs yet).
    pub fn new(p: &Program, size: usize, backend: &str, opt: Option<u8>, threads: usize) -> Row {
        Row {
            program: p.name.to_string(),
            size,
            elements: size as f64 * p.elements_per_unit,
            backend: backend.to_string(),
            opt,
            threads,
            times: vec![],
            walls: vec![],
            peak_rss_bytes: None,
            ok: true,
            cvl_ops: None,
            instructions: None,
            launches: None,
            round_trips: None,
            error: None,
        }
    }
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
    /// Whether this is a hand-written peer's row (the program's own peer, or one of its
    /// [`peer::EXTRA_PEERS`]).
    pub fn is_peer(&self) -> bool {
        self.backend == PEER_BACKEND || peer::EXTRA_PEERS.iter().any(|e| e.2 == self.backend)
    }
    /// Adds one run's measurements.
    fn add(&mut self, o: &Outcome) {
        self.ok &= o.ok;
        self.times.push(o.seconds);
        self.walls.push(o.wall);
        self.peak_rss_bytes = self.peak_rss_bytes.max(o.peak_rss_bytes);
        self.cvl_ops = o.cvl_ops.or(self.cvl_ops);
        self.instructions = o.instructions.or(self.instructions);
        self.launches = o.launches.or(self.launches);
        self.round_trips = o.round_trips.or(self.round_trips);
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

/// Parses the JSON line `nesl bench-peer` prints (the last non-blank line of `stdout`).
pub fn parse_peer_report(stdout: &str) -> Option<peer::PeerReport> {
    serde_json::from_str(stdout.lines().rev().find(|l| !l.trim().is_empty())?).ok()
}

/// What one run of one configuration measured.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    ok: bool,
    seconds: f64,
    wall: f64,
    peak_rss_bytes: Option<u64>,
    cvl_ops: Option<u64>,
    instructions: Option<u64>,
    launches: Option<u64>,
    round_trips: Option<u64>,
}

/// The last non-blank line of a child's output, shortened, for an error message.
fn tail(out: &str, err: &str) -> String {
    format!("{out}\n{err}")
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .chars()
        .take(160)
        .collect()
}

/// Runs `nesl ARGS` with `NESL_THREADS=threads` under the time limit; returns its stdout,
/// stderr and wall time.
fn run_child(cfg: &Config, args: &[String], threads: usize) -> Result<(String, String, f64), String> {
    let start = Instant::now();
    let mut child = Command::new(&cfg.nesl)
        .args(args)
        .env("NESL_THREADS", threads.to_string())
        .stdin(Stdio::null())
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
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("wait failed: {e}")),
        }
    }
    let wall = start.elapsed().as_secs_f64();
    Ok((t_out.join().unwrap_or_default(), t_err.join().unwrap_or_default(), wall))
}

/// Runs one program once through `nesl run --stats-json`, the statistics going to `stats`.
fn run_nesl(cfg: &Config, file: &Path, backend: &str, opt: u8, threads: usize, stats: &Path) -> Result<Outcome, String> {
    let _ = std::fs::remove_file(stats);
    let args: Vec<String> = vec![
        "run".into(),
        "--stats-json".into(),
        stats.display().to_string(),
        "--backend".into(),
        backend.into(),
        "--opt".into(),
        opt.to_string(),
        file.display().to_string(),
    ];
    let (out, err, wall) = run_child(cfg, &args, threads)?;
    let (ok, seconds) = parse_result(&out).ok_or_else(|| format!("no result line: {}", tail(&out, &err)))?;
    let text = std::fs::read_to_string(stats).map_err(|e| format!("no statistics ({e}): {}", tail(&out, &err)))?;
    let st: stats::RunStats = serde_json::from_str(&text).map_err(|e| format!("unreadable statistics: {e}"))?;
    if st.threads != threads {
        return Err(format!("ran on {} threads, not {threads}", st.threads));
    }
    Ok(Outcome {
        ok,
        seconds,
        wall,
        peak_rss_bytes: st.peak_rss_bytes,
        cvl_ops: st.cvl_ops(),
        instructions: st.instructions,
        launches: st.counter("kernel launches"),
        round_trips: st.counter("host round trips"),
    })
}

/// Runs one peer once through `nesl bench-peer`.
fn run_peer(cfg: &Config, program: &str, n: usize, threads: usize) -> Result<Outcome, String> {
    let args: Vec<String> = vec!["bench-peer".into(), program.into(), n.to_string()];
    let (out, err, wall) = run_child(cfg, &args, threads)?;
    let r = parse_peer_report(&out).ok_or_else(|| format!("no peer report: {}", tail(&out, &err)))?;
    if r.threads != threads {
        return Err(format!("ran on {} threads, not {threads}", r.threads));
    }
    Ok(Outcome { ok: r.ok, seconds: r.seconds, wall, peak_rss_bytes: r.peak_rss_bytes, cvl_ops: None, instructions: None, launches: None, round_trips: None })
}

/// What a configuration runs.
enum Job {
    /// A NESL program: its instantiated source, backend and level.
    Nesl { file: PathBuf, backend: String, opt: u8 },
    /// A hand-written peer (its name in [`peer::PEERS`]).
    Peer(&'static str),
}

/// The configurations to run, in table order: for each program and size, each backend and
/// level at each thread count (a GPU backend at the largest only), then the peer at each
/// thread count. Writes the instantiated sources into `dir`.
fn plan(cfg: &Config, dir: &Path, log: &mut dyn Write) -> Vec<(Row, Job)> {
    let threads = thread_list(&cfg.threads, 1);
    let most = threads.iter().copied().max().unwrap_or(1);
    let mut slots = Vec::new();
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
                let counts = if backend == "cpu" { threads.clone() } else { vec![most] };
                for &opt in &cfg.opt_levels {
                    for &t in &counts {
                        let job = Job::Nesl { file: file.clone(), backend: backend.clone(), opt };
                        slots.push((Row::new(&p, n, backend, Some(opt), t), job));
                    }
                }
            }
            if cfg.peers && peer::peer(p.name).is_some() {
                for &t in &threads {
                    slots.push((Row::new(&p, n, PEER_BACKEND, None, t), Job::Peer(p.name)));
                }
                for &(_, name, label) in peer::EXTRA_PEERS.iter().filter(|e| e.0 == p.name) {
                    for &t in &threads {
                        slots.push((Row::new(&p, n, label, None, t), Job::Peer(name)));
                    }
                }
            }
        }
    }
    slots
}

/// The order of the configurations in repetition `rep` (from 1), given each one's
/// program and size (configurations of one program and size are consecutive). Every
/// other repetition takes the programs in reverse order (a slow spell of a shared machine
/// then weighs on both sides of a ratio alike), and within a program the configurations
/// start one later each repetition: the first run of a program after another one finds
/// its memory cold (on the virtual machines of CI, pages another process freed a while
/// ago fault in again slowly: Barnes-Hut's first run took 2.4 s against 1.2 s for the
/// runs right after it), and without the rotation the same configuration, ours on one
/// thread, took that place in every forward repetition.
fn run_order(groups: &[(&str, usize)], rep: usize) -> Vec<usize> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (k, g) in groups.iter().enumerate() {
        match spans.last_mut() {
            Some(sp) if groups[sp.0] == *g => sp.1 = k + 1,
            _ => spans.push((k, k + 1)),
        }
    }
    if rep % 2 == 0 {
        spans.reverse();
    }
    let mut order = Vec::with_capacity(groups.len());
    for (a, b) in spans {
        let shift = (rep.max(1) - 1) % (b - a);
        order.extend((a..b).cycle().skip(shift).take(b - a));
    }
    order
}

/// Runs the benchmark; `log` receives one progress line per run.
pub fn run(cfg: &Config, log: &mut dyn Write) -> Vec<Row> {
    let dir = std::env::temp_dir().join(format!("nesl-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let mut slots = plan(cfg, &dir, log);
    let stats_file = dir.join("stats.json");
    let runs = cfg.runs.max(1);
    for rep in 1..=runs {
        let groups: Vec<(&str, usize)> = slots.iter().map(|(r, _)| (r.program.as_str(), r.size)).collect();
        for k in run_order(&groups, rep) {
            let (row, job) = &mut slots[k];
            if row.error.is_some() {
                continue;
            }
            let outcome = match job {
                Job::Nesl { file, backend, opt } => run_nesl(cfg, file, backend, *opt, row.threads, &stats_file),
                Job::Peer(name) => run_peer(cfg, name, row.size, row.threads),
            };
            let what = match outcome {
                Ok(o) => {
                    row.add(&o);
                    format!("{:.3} ms{}", o.seconds * 1e3, if o.ok { "" } else { " (self-check FAILED)" })
                }
                Err(e) => {
                    row.ok = false;
                    let line = format!("FAILED: {e}");
                    row.error = Some(e);
                    line
                }
            };
            let level = row.opt.map(|o| format!("--opt {o}")).unwrap_or_default();
            let _ = writeln!(
                log,
                "[{rep}/{runs}] {:<12} n={:<9} {:<10} {:<7} {:>3} thr  {what}",
                row.program, row.size, row.backend, level, row.threads
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    slots.into_iter().map(|(row, _)| row).collect()
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

    /// Programs alternate direction by repetition; inside a program the first
    /// configuration moves on by one each repetition; every configuration runs once.
    #[test]
    fn each_configuration_takes_a_programs_first_place_in_turn() {
        let groups = [("dotp", 10), ("dotp", 10), ("dotp", 10), ("qs", 5), ("qs", 5), ("qs", 7)];
        assert_eq!(run_order(&groups, 1), vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(run_order(&groups, 2), vec![5, 4, 3, 1, 2, 0]);
        assert_eq!(run_order(&groups, 3), vec![2, 0, 1, 3, 4, 5]);
        for rep in 1..=7 {
            let mut o = run_order(&groups, rep);
            o.sort();
            assert_eq!(o, (0..groups.len()).collect::<Vec<_>>(), "repetition {rep}");
        }
        let firsts: Vec<usize> = (1..=3).map(|rep| run_order(&groups[..3], rep)[0]).collect();
        assert_eq!(firsts, vec![0, 1, 2], "each dotp configuration first once in three");
    }

    #[test]
    fn result_lines_parse() {
        assert_eq!(parse_result("x\n(ok, seconds) = (T, 1.5E-2) : bool, float\n"), Some((true, 0.015)));
        assert_eq!(parse_result("(ok, seconds) = (F, 2.0) : bool, float"), Some((false, 2.0)));
        assert_eq!(parse_result("it = 3 : int"), None);
    }

    #[test]
    fn peer_reports_parse() {
        let line = r#"{"program":"quicksort","size":1000,"threads":2,"seconds":0.5,"ok":true,"peak_rss_bytes":4096}"#;
        let r = parse_peer_report(&format!("{line}\n\n")).expect("report");
        assert_eq!((r.program.as_str(), r.size, r.threads, r.seconds, r.ok, r.peak_rss_bytes), ("quicksort", 1000, 2, 0.5, true, Some(4096)));
        let r = parse_peer_report(&line.replace("4096", "null")).expect("report");
        assert_eq!(r.peak_rss_bytes, None);
        assert!(parse_peer_report("").is_none());
        assert!(parse_peer_report("panicked at ...").is_none());
    }

    #[test]
    fn thread_lists_default_to_one_and_all_without_repeats() {
        assert_eq!(thread_list(&[], 8), vec![1, 8]);
        assert_eq!(thread_list(&[], 1), vec![1]);
        assert_eq!(thread_list(&[1, 4, 4, 1, 2], 8), vec![1, 4, 2]);
    }

    #[test]
    fn the_plan_lists_every_configuration_in_table_order() {
        let dir = std::env::temp_dir().join(format!("nesl-bench-plan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = Config {
            nesl: PathBuf::from("nesl"),
            only: vec!["dotp".into(), "quicksort".into()],
            sizes: Sizes::Quick,
            backends: vec!["cpu".into(), "cuda".into()],
            opt_levels: vec![1, 2],
            threads: vec![1, 4],
            runs: 3,
            timeout: Duration::from_secs(1),
            peers: true,
        };
        let slots = plan(&cfg, &dir, &mut std::io::sink());
        let keys: Vec<(String, String, Option<u8>, usize)> =
            slots.iter().map(|(r, _)| (r.program.clone(), r.backend.clone(), r.opt, r.threads)).collect();
        let k = |p: &str, b: &str, o: Option<u8>, t: usize| (p.to_string(), b.to_string(), o, t);
        assert_eq!(&keys[..8], &[
            k("dotp", "cpu", Some(1), 1), k("dotp", "cpu", Some(1), 4), k("dotp", "cpu", Some(2), 1), k("dotp", "cpu", Some(2), 4),
            k("dotp", "cuda", Some(1), 4), k("dotp", "cuda", Some(2), 4), k("dotp", PEER_BACKEND, None, 1), k("dotp", PEER_BACKEND, None, 4),
        ]);
        assert_eq!(keys.len(), 16);
        assert!(dir.join("quicksort-20000.nesl").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_program_with_a_second_peer_gets_its_rows_and_the_ratio_stays_with_its_own_peer() {
        let dir = std::env::temp_dir().join(format!("nesl-bench-plan2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cfg = Config {
            nesl: PathBuf::from("nesl"),
            only: vec!["barneshut".into()],
            sizes: Sizes::Quick,
            backends: vec!["cpu".into()],
            opt_levels: vec![2],
            threads: vec![1, 2],
            runs: 1,
            timeout: Duration::from_secs(1),
            peers: true,
        };
        let slots = plan(&cfg, &dir, &mut std::io::sink());
        let rows: Vec<(&str, usize, Option<&str>)> = slots
            .iter()
            .map(|(r, j)| (r.backend.as_str(), r.threads, match j { Job::Peer(n) => Some(*n), Job::Nesl { .. } => None }))
            .collect();
        assert_eq!(rows, vec![
            ("cpu", 1, None), ("cpu", 2, None),
            (PEER_BACKEND, 1, Some("barneshut")), (PEER_BACKEND, 2, Some("barneshut")),
            ("rust-rayon-tree", 1, Some("barneshut-tree")), ("rust-rayon-tree", 2, Some("barneshut-tree")),
        ]);
        let mut rows: Vec<Row> = slots.into_iter().map(|(r, _)| r).collect();
        for (r, t) in rows.iter_mut().zip([4.0, 2.0, 2.0, 1.0, 0.5, 0.25]) {
            r.times.push(t);
        }
        assert!(rows[4].is_peer() && rows[2].is_peer() && !rows[0].is_peer());
        assert_eq!(report::peer_ratio(&rows, &rows[0]), Some(2.0), "against the same algorithm, not the tree");
        assert_eq!(report::peer_ratio(&rows, &rows[1]), Some(2.0));
        assert_eq!(report::peer_ratio(&rows, &rows[4]), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn sweep_sizes_grow_to_the_paper_size() {
        let p = &programs()[0];
        let s = Sizes::Sweep.for_program(p);
        assert_eq!(s.last(), Some(&p.paper_size));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    /// The whole loop against a stand-in `nesl` (a shell script that logs its calls and
    /// answers as `nesl run --stats-json` and `nesl bench-peer` do): configurations take
    /// turns, every row gets its runs, threads and peak memory.
    #[cfg(unix)]
    #[test]
    fn configurations_take_turns_and_rows_collect_their_runs() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("nesl-bench-fake-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("calls.log");
        let script = format!(
            r#"#!/bin/sh
echo "$NESL_THREADS $1 $2" >> '{}'
if [ "$1" = run ]; then
  printf '{{"ops":[{{"kind":"scan","calls":4,"elements":9}}],"total_calls":4,"total_elements":9,"device":null,"threads":%s,"peak_rss_bytes":1048576}}' "$NESL_THREADS" > "$3"
  echo "(ok, seconds) = (T, 0.5) : bool, float"
else
  echo "{{\"program\":\"$2\",\"size\":$3,\"threads\":$NESL_THREADS,\"seconds\":0.25,\"ok\":true,\"peak_rss_bytes\":2048}}"
fi
"#,
            log.display()
        );
        let fake = dir.join("fake-nesl");
        std::fs::write(&fake, script).unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cfg = Config {
            nesl: fake,
            only: vec!["dotp".into()],
            sizes: Sizes::Quick,
            backends: vec!["cpu".into()],
            opt_levels: vec![2],
            threads: vec![1, 3],
            runs: 2,
            timeout: Duration::from_secs(60),
            peers: true,
        };
        let rows = run(&cfg, &mut std::io::sink());
        let calls = std::fs::read_to_string(&log).unwrap();
        let once = ["1 run --stats-json", "3 run --stats-json", "1 bench-peer dotp", "3 bench-peer dotp"];
        // The second repetition starts one configuration later ([`run_order`]).
        let want: Vec<&str> = once.iter().chain(once[1..].iter()).chain(&once[..1]).copied().collect();
        assert_eq!(calls.lines().collect::<Vec<_>>(), want);
        assert_eq!(rows.len(), 4);
        for r in &rows {
            assert!(r.ok && r.error.is_none(), "{r:?}");
            assert_eq!(r.times.len(), 2);
        }
        assert_eq!((rows[1].threads, rows[1].cvl_ops, rows[1].peak_rss_bytes, rows[1].median()), (3, Some(4), Some(1048576), Some(0.5)));
        assert_eq!((rows[3].backend.as_str(), rows[3].threads, rows[3].peak_rss_bytes, rows[3].median()), (PEER_BACKEND, 3, Some(2048), Some(0.25)));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
