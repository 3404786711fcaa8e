//! Serial code for scalar contexts (issue 13), checked by structure, not by time:
//!
//! - a scalar loop runs at most 15 VCODE instructions per iteration and `fib` at most 20
//!   per call, at every optimisation level, and optimisation never adds instructions;
//! - ten million iterations of a tail-recursive loop run in bounded memory (the `nesl`
//!   binary's peak resident memory, beside a run of a trivial program);
//! - the serial version of a function (called in a scalar context) and its lifted version
//!   (called inside an apply-to-each) agree on random inputs, at every level.

use nesl::{Backend, Config, TopLevel};
use std::path::Path;

const LOOP: &str = "function loop(i, acc) = if i == 0 then acc else loop(i - 1, acc + i);\n";
const FIB: &str = "function fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2);\n";
const EVEN_ODD: &str = "function od(n) : int -> bool;\n\
                        function ev(n) = if n == 0 then t else od(n - 1);\n\
                        function od(n) = if n == 0 then f else ev(n - 1);\n";
const STRING: &str = "function build(i, s) = if i == 0 then s else build(i - 1, s ++ \"ab\");\n";

/// The transcript of `src` at `opt` (which must hold no error) and the VCODE
/// instructions it executed.
fn run_counted(src: &str, opt: u8) -> (String, u64) {
    let (text, stats) = run_with_stats(src, opt);
    assert!(!text.contains("rror"), "--opt {opt}:\n{text}");
    (text, stats.instructions)
}

/// The transcript of `src` at `opt`, errors included, and its statistics.
fn run_with_stats(src: &str, opt: u8) -> (String, vcode::OpStats) {
    let ex = Config::new(Backend::Cpu, opt).with_stats(true).executor().expect("cpu executor");
    let mut top = TopLevel::new(ex);
    let mut out = Vec::new();
    top.eval_source("serial.nesl", src, &mut out).expect("transcript");
    let stats = top.executor().stats().cloned().expect("statistics are kept");
    (String::from_utf8_lossy(&out).into_owned(), stats)
}

/// Instructions per unit of work: the difference between two sizes over the difference
/// of the work, so the set-up does not count.
fn per_unit(def: &str, call: impl Fn(u64) -> String, work: impl Fn(u64) -> u64, sizes: (u64, u64), opt: u8) -> f64 {
    let (_, a) = run_counted(&format!("{def}{};\n", call(sizes.0)), opt);
    let (_, b) = run_counted(&format!("{def}{};\n", call(sizes.1)), opt);
    (b - a) as f64 / (work(sizes.1) - work(sizes.0)) as f64
}

fn fib_calls(n: u64) -> u64 {
    // calls(n) = 1 + calls(n - 1) + calls(n - 2), calls(0) = calls(1) = 1.
    let (mut a, mut b) = (1u64, 1u64);
    for _ in 1..n {
        (a, b) = (b, a + b + 1);
    }
    if n == 0 {
        a
    } else {
        b
    }
}

#[test]
fn scalar_recursion_runs_few_instructions_at_every_level() {
    let mut rows = Vec::new();
    for opt in [0, 1, 2] {
        let lp = per_unit(LOOP, |n| format!("loop({n}, 0)"), |n| n, (1_000, 3_000), opt);
        let fib = per_unit(FIB, |n| format!("fib({n})"), fib_calls, (12, 16), opt);
        let eo = per_unit(EVEN_ODD, |n| format!("ev({n})"), |n| n, (1_000, 3_000), opt);
        let st = per_unit(STRING, |n| format!("#build({n}, \"\")"), |n| n, (100, 300), opt);
        println!("--opt {opt}: loop {lp:.2}/iteration, fib {fib:.2}/call, even/odd {eo:.2}/step, string {st:.2}/step");
        assert!(lp <= 15.0, "--opt {opt}: loop runs {lp} instructions per iteration");
        assert!(fib <= 20.0, "--opt {opt}: fib runs {fib} instructions per call");
        assert!(eo <= 15.0, "--opt {opt}: even/odd runs {eo} instructions per step");
        rows.push([lp, fib, eo, st]);
    }
    for k in 0..4 {
        assert!(rows[1][k] <= rows[0][k] && rows[2][k] <= rows[1][k], "optimisation adds instructions: {rows:?}");
    }
}

/// Calls of CVL family `family` that running `src` (without an error) at `opt` made.
fn family_calls(src: &str, opt: u8, family: &str) -> u64 {
    let (text, stats) = run_with_stats(src, opt);
    assert!(!text.contains("rror"), "--opt {opt}:\n{text}");
    stats.rows.iter().find(|r| r.0 == family).map_or(0, |r| r.1)
}

/// A serial loop that reads `a[i]` checks the index as a scalar: no reduction of its one
/// flag over a descriptor made per iteration. Optimised, each iteration makes one
/// descriptor operation (`#a`'s `LENGTHS`; two before: the check made a descriptor to
/// reduce over); unoptimised, three (four before).
#[test]
fn a_checked_index_in_serial_code_makes_no_descriptor_per_iteration() {
    let def = "function sumloop(a, i, acc) = if i == #a then acc else sumloop(a, i + 1, acc + a[i] * a[i]);\n";
    for opt in [0, 1, 2] {
        let calls = |n: u64| family_calls(&format!("{def}sumloop({{j : j in dist(3, {n})}}, 0, 0);\n"), opt, "segdes");
        let per = (calls(3_000) - calls(1_000)) as f64 / 2_000.0;
        let most = if opt == 0 { 3.0 } else { 1.0 };
        assert!(per <= most, "--opt {opt}: {per} descriptor operations per iteration");
    }
    // A bad index still stops the loop, naming the index, the length and the place.
    let (t, _) = run_with_stats(&format!("{def}sumloop([1, 2, 3], 0, 0);\nfunction bad(a, i) = if i == 0 then a[5] else bad(a, i - 1);\nbad([1, 2], 3);\n"), 2);
    assert!(t.contains("it = 14 : int"), "{t}");
    assert!(t.contains("serial.nesl:3:37: runtime error: index 5 is out of bounds for a sequence of length 2"), "{t}");
}

#[test]
fn results_of_scalar_recursion() {
    for opt in [0, 1, 2] {
        let (t, _) = run_counted(&format!("{LOOP}{FIB}{EVEN_ODD}{STRING}loop(1000, 0);\nfib(15);\nev(1001);\n#build(50, \"x\");\n"), opt);
        for want in ["it = 500500 : int", "it = 610 : int", "it = F : bool", "it = 101 : int"] {
            assert!(t.contains(want), "--opt {opt}: {want}\n{t}");
        }
    }
}

/// Peak resident memory of `nesl run --stats-json` on `src`, in bytes.
fn peak_rss(src: &str, opt: u8, dir: &Path, name: &str) -> u64 {
    let file = dir.join(format!("{name}.nesl"));
    let json = dir.join(format!("{name}-{opt}.json"));
    std::fs::write(&file, src).expect("write program");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_nesl"))
        .args(["run", "--backend", "cpu", "--threads", "1", "--opt", &opt.to_string(), "--stats-json"])
        .arg(&json)
        .arg(&file)
        .output()
        .expect("run nesl");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "--opt {opt}: {text}{}", String::from_utf8_lossy(&out.stderr));
    let stats: bench::stats::RunStats = serde_json::from_str(&std::fs::read_to_string(&json).expect("stats")).expect("json");
    if name == "loop" {
        assert!(text.contains("it = 50000005000000 : int"), "{text}");
    }
    stats.peak_rss_bytes.expect("the system reports peak memory")
}

#[test]
fn ten_million_iterations_run_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("nesl-serial-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for opt in [0, 2] {
        let base = peak_rss("1 + 1;\n", opt, &dir, "trivial");
        let peak = peak_rss(&format!("{LOOP}loop(10000000, 0);\n"), opt, &dir, "loop");
        let grown = peak.saturating_sub(base) as f64 / 1e6;
        println!("--opt {opt}: 10^7 iterations, {:.1} MB peak, {grown:.1} MB beyond start-up", peak as f64 / 1e6);
        assert!(grown < 20.0, "--opt {opt}: 10^7 iterations took {grown:.1} MB beyond start-up");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A deterministic pseudo-random generator (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> i64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n) as i64
    }
}

/// Functions with scalar recursion, `let`, conditionals, floats, tuples, sequences,
/// strings and function arguments, each of one argument built from `x`.
const FUNCTIONS: &str = "\
function fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2);
function euclid(a, b) = if b == 0 then a else euclid(b, rem(a, b));
function collatz(n, k) = if n <= 1 then k else if rem(n, 2) == 0 then collatz(n / 2, k + 1) else collatz(3 * n + 1, k + 1);
function poly(x) = let y = x * x; z = float(y) / 3.0 in if z > 10.0 then (y, z) else (x, sqrt(z));
function digits(n) = if n < 10 then [n] else digits(n / 10) ++ [rem(n, 10)];
function sumsq(n) = sum({i * i : i in index(n)});
function twice(g, x) = g(g(x));
function inc(x) = x + 3;
function label(n) = if n > 50 then \"big\" ++ @n else \"small\";
function od(n) : int -> bool;
function ev(n) = if n == 0 then t else od(n - 1);
function od(n) = if n == 0 then f else ev(n - 1);
";

/// Calls of those functions on inputs `X` and `Y`.
const CALLS: &[&str] = &[
    "fib(rem(X, 18))",
    "euclid(X, Y)",
    "collatz(X + 1, 0)",
    "poly(X)",
    "digits(X * 977)",
    "sumsq(rem(X, 40))",
    "twice(inc, X)",
    "label(X)",
    "ev(rem(X, 60))",
];

#[test]
fn serial_and_lifted_versions_agree_on_random_inputs() {
    let mut rng = Lcg(0x5eed_0013);
    let inputs: Vec<(i64, i64)> = (0..12).map(|_| (rng.below(100), 1 + rng.below(60))).collect();
    let pairs: Vec<String> = inputs.iter().map(|&(x, y)| format!("({x}, {y})")).collect();
    let mut src = FUNCTIONS.to_string();
    for c in CALLS {
        // The serial calls, one per element of a sequence literal at the top level, then
        // the lifted ones, one apply-to-each over the same inputs.
        let serial: Vec<String> =
            inputs.iter().map(|&(x, y)| c.replace('X', &x.to_string()).replace('Y', &y.to_string())).collect();
        src.push_str(&format!("[{}];
", serial.join(", ")));
        src.push_str(&format!("{{{} : (x, y) in [{}]}};
", c.replace('X', "x").replace('Y', "y"), pairs.join(", ")));
    }
    for opt in [0, 1, 2] {
        let ex = Config::new(Backend::Cpu, opt).executor().expect("cpu executor");
        let mut top = TopLevel::new(ex);
        let mut out = Vec::new();
        top.eval_source("agree.nesl", &src, &mut out).expect("transcript");
        let text = String::from_utf8_lossy(&out);
        assert!(!text.contains("rror"), "--opt {opt}:\n{src}\n{text}");
        let values: Vec<&str> = text.lines().filter(|l| l.starts_with("it = ")).collect();
        assert_eq!(values.len(), 2 * CALLS.len(), "--opt {opt}:\n{text}");
        for (k, c) in CALLS.iter().enumerate() {
            assert_eq!(values[2 * k], values[2 * k + 1], "--opt {opt}: serial and lifted {c} differ");
        }
    }
}
