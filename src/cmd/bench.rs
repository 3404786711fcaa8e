//! `nesl bench`: runs the benchmark programs of `bench/programs/` through this same binary
//! and prints one markdown table (see the `bench` crate); `nesl bench-peer` (hidden) runs
//! one hand-written Rust peer for it.

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

/// The command-line arguments of `nesl bench`.
pub struct Args {
    pub quick: bool,
    pub sweep: bool,
    pub runs: usize,
    pub programs: Vec<String>,
    pub opt: Vec<u8>,
    pub backend: Vec<String>,
    /// `--threads-list` (empty: 1 and the default thread count).
    pub threads: Vec<usize>,
    pub timeout: u64,
    pub out: Option<PathBuf>,
}

/// True when `nesl run --backend cuda` works on this machine (a GPU and driver are present).
fn cuda_present(exe: &std::path::Path) -> bool {
    let dir = std::env::temp_dir().join(format!("nesl-cuda-probe-{}", std::process::id()));
    let file = dir.join("probe.nesl");
    let ok = std::fs::create_dir_all(&dir).is_ok()
        && std::fs::write(&file, "1 + 1;\n").is_ok()
        && Command::new(exe)
            .args(["run", "--backend", "cuda"])
            .arg(&file)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
    let _ = std::fs::remove_dir_all(&dir);
    ok
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    format!("{cpu}, {cores} cores")
}

/// Entry point of `nesl bench`.
pub fn main(a: Args) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe()?;
    for p in &a.programs {
        if !bench::programs().iter().any(|q| q.name == p) {
            anyhow::bail!("unknown benchmark program `{p}`");
        }
    }
    for b in &a.backend {
        if b != "cpu" && b != "cuda" {
            anyhow::bail!("unknown backend `{b}` (expected cpu or cuda)");
        }
    }
    if a.opt.iter().any(|&o| o > 2) {
        anyhow::bail!("optimisation levels are 0, 1 and 2");
    }
    if a.runs == 0 {
        anyhow::bail!("--runs must be at least 1");
    }
    let backends = if a.backend.is_empty() {
        let mut v = vec!["cpu".to_string()];
        if cuda_present(&exe) {
            v.push("cuda".to_string());
        }
        v
    } else {
        a.backend.clone()
    };
    let cfg = bench::Config {
        nesl: exe,
        only: a.programs.clone(),
        sizes: if a.quick {
            bench::Sizes::Quick
        } else if a.sweep {
            bench::Sizes::Sweep
        } else {
            bench::Sizes::Paper
        },
        backends,
        opt_levels: a.opt.clone(),
        threads: bench::thread_list(&a.threads, vcode::cvl::cpu::threads::default_threads()),
        runs: a.runs,
        timeout: Duration::from_secs(a.timeout),
        peers: true,
    };
    let rows = bench::run(&cfg, &mut std::io::stderr());
    let table = bench::markdown(&rows);
    println!("{table}");
    if let Some(dir) = &a.out {
        std::fs::create_dir_all(dir)?;
        let command: Vec<String> = std::env::args().collect();
        let date = Command::new("date")
            .arg("-u")
            .arg("+%Y-%m-%dT%H:%MZ")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        std::fs::write(dir.join("results.json"), bench::to_json(&rows, &machine(), &command.join(" "), &date))?;
        std::fs::write(dir.join("table.md"), format!("Machine: {}\nDate: {date}\nCommand: `{}`\n\n{table}", machine(), command.join(" ")))?;
        for p in bench::programs() {
            if let Some(svg) = bench::svg_plot(&rows, p.name) {
                std::fs::write(dir.join(format!("{}.svg", p.name)), svg)?;
            }
        }
    }
    let failed = rows.iter().any(|r| r.error.is_some() || !r.ok);
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Entry point of `nesl bench-peer PROGRAM N`: one run of the Rust peer on the default
/// thread count (`--threads`, `NESL_THREADS`, else every core), as one JSON line on stdout.
/// The exit status is 1 when the peer's self-check failed.
pub fn peer_main(program: &str, n: usize) -> anyhow::Result<ExitCode> {
    let report = bench::peer::run(program, n, vcode::cvl::cpu::threads::default_threads()).map_err(anyhow::Error::msg)?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(if report.ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
