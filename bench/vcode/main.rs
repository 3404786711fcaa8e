//! `vcode-bench`: the VCODE benchmark of the VCODE core. Runs `bench/vcode/ops.vcode` on
//! the CPU vector library over vectors of `n` elements (default 10,000,000), checks every
//! section's checksum against a plain Rust computation, and prints the seconds and the
//! elements per second of each operation (the best of `--runs` runs).
//!
//! ```text
//! cargo run --release -p bench --bin vcode-bench -- [--n N] [--runs R] [--stats] [FILE]
//! ```

use std::process::ExitCode;

/// One section of the program's result: its name, element count, best time, checksum.
struct Section {
    name: String,
    elements: i64,
    seconds: f64,
    check: Check,
}

#[derive(Debug, Clone, Copy)]
enum Check {
    Int(i64),
    Float(f64),
}

/// Integers must be equal; float sums within rounding (the library sums long vectors in
/// fixed blocks, not strictly left to right as the serial reference here does).
impl PartialEq for Check {
    fn eq(&self, o: &Check) -> bool {
        match (*self, *o) {
            (Check::Int(a), Check::Int(b)) => a == b,
            (Check::Float(a), Check::Float(b)) => (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0),
            _ => false,
        }
    }
}

fn scalar(v: &vcode::HostValue) -> Option<Check> {
    match v {
        vcode::HostValue::Int(x) if x.len() == 1 => Some(Check::Int(x[0])),
        vcode::HostValue::Float(x) if x.len() == 1 => Some(Check::Float(x[0])),
        _ => None,
    }
}

/// Splits the final stack into sections (seconds, checksum, name, elements).
fn sections(stack: &[vcode::HostValue]) -> Result<Vec<Section>, String> {
    if !stack.len().is_multiple_of(4) {
        return Err(format!("the program left {} values, not a multiple of 4", stack.len()));
    }
    stack
        .chunks(4)
        .map(|c| {
            let seconds = match scalar(&c[0]) {
                Some(Check::Float(s)) => s,
                _ => return Err("a section's first value is not its seconds".to_string()),
            };
            let check = scalar(&c[1]).ok_or("a section's checksum is not a scalar")?;
            let name = match &c[2] {
                vcode::HostValue::Int(codes) => codes.iter().filter_map(|&x| char::from_u32(x as u32)).collect(),
                _ => return Err("a section's name is not a string".into()),
            };
            let elements = match scalar(&c[3]) {
                Some(Check::Int(n)) => n,
                _ => return Err("a section's element count is not an INT".into()),
            };
            Ok(Section { name, elements, seconds, check })
        })
        .collect()
}

/// The checksums the sections must produce, computed directly (same operations, same
/// order, so floats agree exactly).
fn expected(n: i64) -> Vec<Check> {
    let xs = 0..n;
    let chain = xs.clone().fold(0.0f64, |acc, j| acc + ((j as f64) * 0.5 + 1.0).sqrt() * 3.0);
    let sum = n.wrapping_mul(n - 1) / 2;
    let scan_one: i64 = xs.clone().fold((0i64, 0i64), |(acc, tot), j| (acc + j, tot.wrapping_add(acc))).1;
    let scan_seg: i64 = xs
        .clone()
        .fold((0i64, 0i64), |(acc, tot), j| {
            let acc = if j % 1000 == 0 { 0 } else { acc };
            (acc + j, tot.wrapping_add(acc))
        })
        .1;
    let perm: i64 = xs.clone().fold(0i64, |t, j| t.wrapping_add(j.wrapping_mul(j.wrapping_mul(7919) % n)));
    let pack: i64 = xs.filter(|j| j % 3 == 0).sum();
    vec![
        Check::Float(chain),
        Check::Int(sum),
        Check::Int(sum),
        Check::Int(scan_one),
        Check::Int(scan_seg),
        Check::Int(perm),
        Check::Int(perm),
        Check::Int(pack),
        // The keys are a permutation of 0..n, so each key's rank is the key itself.
        Check::Int(perm),
    ]
}

struct Args {
    n: i64,
    runs: usize,
    stats: bool,
    file: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut a = Args { n: 10_000_000, runs: 3, stats: false, file: None };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        match x.as_str() {
            "--n" => a.n = it.next().and_then(|v| v.replace('_', "").parse().ok()).ok_or("--n needs a number")?,
            "--runs" => a.runs = it.next().and_then(|v| v.parse().ok()).ok_or("--runs needs a number")?,
            "--stats" => a.stats = true,
            "-h" | "--help" => {
                return Err("usage: vcode-bench [--n N] [--runs R] [--stats] [FILE.vcode]".into());
            }
            f if !f.starts_with('-') => a.file = Some(f.to_string()),
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    if a.n < 1000 || a.n % 1000 != 0 {
        return Err("--n must be a positive multiple of 1000".into());
    }
    a.runs = a.runs.max(1);
    Ok(a)
}

/// Runs the program `runs` times over `n` elements: its sections with the best time of
/// each, and the operation counts of the last run.
fn measure(src: &str, n: i64, runs: usize, stats: bool) -> Result<(Vec<Section>, Option<vcode::OpStats>), String> {
    let prog = vcode::parse(src).map_err(|e| format!("{e:?}"))?;
    vcode::verify(&prog).map_err(|e| format!("{e:?}"))?;
    let opts = vcode::RunOptions { stats, stdin: Some(format!("( {n} )").into_bytes()), ..Default::default() };
    let mut best: Option<Vec<Section>> = None;
    let mut counts = None;
    for _ in 0..runs {
        let rep = vcode::run(&prog, &mut vcode::CpuCvl::new(), &mut std::io::stderr(), &opts)
            .map_err(|t| t.to_string())?;
        let vcode::RunOutcome::Finished(stack) = rep.outcome else {
            return Err("the program exited early".into());
        };
        let secs = sections(&stack)?;
        best = Some(match best {
            None => secs,
            Some(mut b) => {
                for (x, y) in b.iter_mut().zip(secs) {
                    x.seconds = x.seconds.min(y.seconds);
                }
                b
            }
        });
        counts = Some(rep.stats);
    }
    Ok((best.unwrap_or_default(), counts))
}

fn main() -> ExitCode {
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("vcode-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<(), String> {
    let a = args()?;
    let src = match &a.file {
        Some(f) => std::fs::read_to_string(f).map_err(|e| format!("{f}: {e}"))?,
        None => include_str!("ops.vcode").to_string(),
    };
    let t0 = std::time::Instant::now();
    let (secs, stats) = measure(&src, a.n, a.runs, a.stats)?;
    let total = t0.elapsed().as_secs_f64();
    let want = expected(a.n);
    if a.file.is_none() && secs.len() != want.len() {
        return Err(format!("{} sections, expected {}", secs.len(), want.len()));
    }
    println!("VCODE benchmark, CPU vector library, n = {}, best of {} runs", a.n, a.runs);
    println!();
    println!("| operation | elements | seconds | Melem/s | check |");
    println!("|---|---:|---:|---:|---|");
    let mut bad = 0;
    for (i, s) in secs.iter().enumerate() {
        let ok = match want.get(i) {
            Some(w) if a.file.is_none() => {
                if *w == s.check {
                    "ok".to_string()
                } else {
                    bad += 1;
                    format!("WRONG: {:?}, expected {w:?}", s.check)
                }
            }
            _ => "-".to_string(),
        };
        let rate = if s.seconds > 0.0 { s.elements as f64 / s.seconds / 1e6 } else { f64::INFINITY };
        println!("| {} | {} | {:.4} | {:.1} | {} |", s.name, s.elements, s.seconds, rate, ok);
    }
    println!();
    println!("whole program, {} runs including setup: {total:.2} s", a.runs);
    if let Some(st) = stats.filter(|_| a.stats) {
        println!();
        println!("| kind | calls | elements |");
        println!("|---|---:|---:|");
        for (k, c, e) in &st.rows {
            println!("| {k} | {c} | {e} |");
        }
    }
    if bad > 0 {
        return Err(format!("{bad} wrong checksum(s)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_run_gives_the_expected_checksums() {
        let n = 50_000;
        let (secs, _) = measure(include_str!("ops.vcode"), n, 1, false).expect("runs");
        let got: Vec<Check> = secs.iter().map(|s| s.check).collect();
        assert_eq!(got, expected(n));
        assert!(secs.iter().all(|s| s.elements == n && s.seconds >= 0.0 && !s.name.is_empty()));
    }
}
