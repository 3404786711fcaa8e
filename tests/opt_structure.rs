//! What the optimiser does to whole NESL programs, counted with the interpreter's
//! operation statistics (`--stats`) through the executor `nesl run` uses.
//!
//! - Black-Scholes (`bench/programs/blackscholes.nesl`): the CVL work per option of the
//!   timed core `blackscholes(ss, xs, tms)` drops at least fivefold from `--opt 0` to
//!   `--opt 2`, counted as elements touched per option (the difference between two
//!   sizes divided by the difference of the sizes, so operations on scalars do not
//!   count), and as CVL calls, scalar bookkeeping included; at `--opt 2` it is one pass
//!   (its argument checks guard the price);
//! - `nesl opt` (the optimiser at level 2) on every program of the regression corpus and
//!   of the conformance corpus: the longest time is printed (no timed assertion).

use nesl::{Backend, Config, TopLevel};
use std::path::Path;
use std::time::{Duration, Instant};
use vcode::OpStats;

fn totals(s: Option<&OpStats>) -> (u64, u64) {
    let s = s.expect("statistics are kept");
    let calls = s.rows.iter().filter(|r| r.0 != "io").map(|r| r.1).sum();
    let elements = s.rows.iter().filter(|r| r.0 != "io").map(|r| r.2).sum();
    (calls, elements)
}

/// The CVL calls and elements of the core form of a benchmark program at size `n` and
/// level `opt`: the forms before the line starting with `core` run first, then the
/// counts of the core form alone are returned (with its transcript).
fn core_counts(program: &str, core: &str, n: usize, opt: u8) -> (u64, u64, String) {
    let p = bench::programs().into_iter().find(|p| p.name == program).expect("benchmark program");
    let src = bench::source_at(&p, n);
    let at = src.find(core).unwrap_or_else(|| panic!("{program}: no line starting with `{core}`"));
    let end = at + src[at..].find(";\n").expect("the core form ends") + 2;
    let ex = Config::new(Backend::Cpu, opt).with_stats(true).executor().expect("cpu executor");
    let mut top = TopLevel::new(ex);
    let mut out = Vec::new();
    top.eval_source(program, &src[..at], &mut out).expect("setup");
    let before = totals(top.executor().stats());
    let mut core_out = Vec::new();
    top.eval_source(program, &src[at..end], &mut core_out).expect("core");
    let after = totals(top.executor().stats());
    let text = String::from_utf8_lossy(&core_out).into_owned();
    assert!(!text.contains("rror"), "{program} at --opt {opt}:\n{}{text}", String::from_utf8_lossy(&out));
    (after.0 - before.0, after.1 - before.1, text)
}

#[test]
fn black_scholes_work_per_option_drops_fivefold() {
    let (n1, n2) = (2_000, 4_000);
    let mut per_level = Vec::new();
    for opt in [0, 1, 2] {
        let (c1, e1, t1) = core_counts("blackscholes", "(prices, seconds)", n1, opt);
        let (c2, e2, _) = core_counts("blackscholes", "(prices, seconds)", n2, opt);
        assert_eq!(c1, c2, "--opt {opt}: the number of CVL calls does not depend on the size");
        let per_option = (e2 - e1) as f64 / (n2 - n1) as f64;
        println!("blackscholes --opt {opt}: {c1} CVL calls, {per_option:.1} elements touched per option");
        assert!(t1.contains("(prices, seconds) = ("), "{t1}");
        per_level.push((c1 as f64, per_option));
    }
    let (c0, e0) = per_level[0];
    let (c1, e1) = per_level[1];
    let (c2, e2) = per_level[2];
    assert!(c1 <= c0 && e1 <= e0, "level 1 never adds work: {per_level:?}");
    // The work per option: every CVL operation counts the elements it reads and writes,
    // so an operation applied to every option adds its operand count plus one.
    assert!(e0 >= 5.0 * e2, "elements per option: {e0:.1} at --opt 0, {e2:.1} at --opt 2");
    // Calls, scalar bookkeeping included (length checks on constants fold away, the NOT
    // before each check joins its superoperator).
    assert!(c0 >= 5.0 * c2, "CVL calls: {c0} at --opt 0, {c2} at --opt 2");
    // At --opt 2 the four argument checks are one test, `cnd` is inlined, `d1` and `d2`
    // move into the price with both `cnd`s, and the test is the price's guard: one pass
    // reading `s`, `x`, `tm` and writing the result, 4 elements per option (7 with the
    // test as a pass of its own, 16 with `d1` and `d2` as passes of their own too, 22
    // with a pass per check and `cnd` called twice).
    assert!(e2 <= 4.0, "elements per option at --opt 2: {e2:.1}");
}

/// The VCODE of every form of a NESL file, as the top level compiles it.
struct Capture(std::rc::Rc<std::cell::RefCell<Vec<String>>>);

impl nesl::Executor for Capture {
    fn execute(&mut self, program: vcode::Program, out: &mut dyn std::io::Write) -> nesl::Result<nesl::ExecResult> {
        self.0.borrow_mut().push(program.to_string());
        let mut cpu = nesl::exec::CpuExecutor::new();
        nesl::Executor::execute(&mut cpu, program, out)
    }
}

fn nesl_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            nesl_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "nesl") {
            out.push(p);
        }
    }
}

#[test]
fn optimising_every_corpus_program_is_fast() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    nesl_files(&root.join("regression/nesl"), &mut files);
    if let Some(dir) = regression::conformance_dir(root) {
        nesl_files(&dir, &mut files);
    }
    files.sort();
    assert!(files.len() > 50, "the corpus is there");
    let mut slowest = (Duration::ZERO, String::new());
    let mut forms = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).expect("read");
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let mut top = TopLevel::new(Box::new(Capture(seen.clone())));
        let _ = top.eval_source(&f.display().to_string(), &src, &mut Vec::new());
        // One program's worth of VCODE: every form it compiled, optimised one by one.
        let mut total = Duration::ZERO;
        for text in seen.borrow().iter() {
            let p = vcode::parse(text).unwrap_or_else(|e| panic!("{}: {e:?}", f.display()));
            let t0 = Instant::now();
            let q = fcode_opt::optimize(&p, 2, &fcode_opt::OptOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            total += t0.elapsed();
            assert!(vcode::verify(&q).is_ok(), "{}: the optimised form does not verify", f.display());
            forms += 1;
        }
        if total > slowest.0 {
            slowest = (total, f.display().to_string());
        }
    }
    println!(
        "optimised {forms} forms of {} programs; slowest program {:.1} ms ({})",
        files.len(),
        slowest.0.as_secs_f64() * 1e3,
        slowest.1
    );
}

/// Global values of more than a few elements reach compiled code as large constants,
/// which the optimiser keeps out of its passes and puts back (`fcode_opt::consts`):
/// every level prints the same transcript, with values computed independently here.
#[test]
fn large_globals_survive_optimisation() {
    let src = "xs = index(1000);\nfs = {float(x) / 4.0 : x in xs};\nnest = {index(mod(x, 7)) : x in xs};\n\
               function g(a) = {x * 2 + 1 : x in a};\nsum(g(xs));\nsum(g(xs)) + sum(g(xs));\n\
               sum({sum(n) : n in nest});\nsum({x * 0.5 + 1.0 : x in fs});\n{x : x in g(xs) | x < 12};\n";
    let path = Path::new("large-globals.nesl");
    let mut transcripts = Vec::new();
    for opt in [0, 1, 2] {
        transcripts.push(nesl::corpus::transcript(path, src, &Config::new(Backend::Cpu, opt), None));
    }
    let t = &transcripts[0];
    let nest_sum: i64 = (0..1000).map(|x: i64| (0..x % 7).sum::<i64>()).sum();
    let fs_sum: f64 = (0..1000).map(|x| x as f64 / 4.0 * 0.5 + 1.0).sum();
    for expected in [
        "it = 1000000 : int".to_string(),
        "it = 2000000 : int".to_string(),
        format!("it = {nest_sum} : int"),
        format!("it = {fs_sum:.1} : float"),
        "it = [1, 3, 5, 7, 9, 11] : [int]".to_string(),
    ] {
        assert!(t.contains(&expected), "{expected}\n{t}");
    }
    assert_eq!(&transcripts[1], t, "--opt 1");
    assert_eq!(&transcripts[2], t, "--opt 2");
}

/// CVL calls of the form `core` after the forms `setup`, at `--opt 2`, and its transcript.
fn calls_of(setup: &str, core: &str) -> (u64, String) {
    let ex = Config::new(Backend::Cpu, 2).with_stats(true).executor().expect("cpu executor");
    let mut top = TopLevel::new(ex);
    let mut out = Vec::new();
    top.eval_source("setup", setup, &mut out).expect("setup");
    let before = totals(top.executor().stats());
    let mut core_out = Vec::new();
    top.eval_source("core", core, &mut core_out).expect("core");
    let after = totals(top.executor().stats());
    (after.0 - before.0, String::from_utf8_lossy(&core_out).into_owned())
}

/// A float division whose divisor is `1 + c * |x|` (Black-Scholes' `cnd`) can never divide
/// by zero: its check is dropped and the divisor and the quotient are one superoperator.
/// With `0 + c * |x|`, which could be zero (it is not, for these `x`), the check stays:
/// one more operation (the check, which computes the divisor itself, as the quotient
/// does: the divisor is small, so it is not stored for the two).
#[test]
fn a_division_check_on_a_divisor_of_at_least_one_is_dropped() {
    let setup = "xs = {float(i) - 499.5 : i in index(1000)};\n";
    let (safe, t1) = calls_of(setup, "{1.0 / (1.0 + 0.25 * abs(x)) : x in xs};\n");
    let (kept, t2) = calls_of(setup, "{1.0 / (0.0 + 0.25 * abs(x)) : x in xs};\n");
    assert!(t1.starts_with("it = [0.0079"), "{t1}");
    assert!(t2.starts_with("it = [0.0080"), "{t2}");
    assert!(kept >= safe + 1, "CVL calls: {safe} with the check dropped, {kept} with it kept");
}

/// smvm (`bench/programs/smvm.nesl`) reads the dense vector `v[j]` of every matrix entry
/// in place: `v` comes from the unit context of `smvm`'s body, so the nested
/// apply-to-each needs no per-entry replicated instance numbers, lengths or starts
/// (three passes over the entries), and the bounds check compares the extremes of the
/// indices with the one length instead of a replicated one. Counted as CVL elements
/// touched per matrix entry of the timed form at `--opt 2`.
#[test]
fn smvm_reads_a_free_vector_without_replicating_its_descriptor() {
    let (n1, n2) = (4_000, 8_000);
    let (_, e1, _) = core_counts("smvm", "(res, seconds)", n1, 2);
    let (_, e2, t) = core_counts("smvm", "(res, seconds)", n2, 2);
    // Rows have 0..16 entries, 8 on average (the same generator at both sizes).
    let per_entry = (e2 - e1) as f64 / ((n2 - n1) as f64 * 8.0);
    println!("smvm --opt 2: {per_entry:.2} elements touched per matrix entry");
    assert!(t.contains("(res, seconds) = ("), "{t}");
    assert!(per_entry < 9.0, "{per_entry:.2} elements touched per matrix entry");
}

/// The two components of a force (Barnes-Hut's `pull`) share the square root and the
/// division of their distance: at `--opt 2` both are one superoperator with two
/// results, so the pair costs the CVL calls of its first component alone (one more
/// before), and prints what `--opt 0` prints.
#[test]
fn the_components_of_a_force_are_one_superoperator() {
    let force = |result: &str| {
        format!(
            "let xs = {{float(i) / 7.0 - 20.0 : i in index(300)}}; ys = {{float(i) / 5.0 - 9.0 : i in index(300)}}\n\
             in {{let r2 = x * x + y * y + 1.0e-6; fm = 2.0 / (r2 * sqrt(r2)) in {result} : x in xs; y in ys}};\n"
        )
    };
    let (pair, t2) = calls_of("", &force("(fm * x, fm * y)"));
    let (one, _) = calls_of("", &force("fm * x"));
    assert_eq!(pair, one, "CVL calls of both components, and of the first alone");
    let t0 = nesl::corpus::transcript(Path::new("force.nesl"), &force("(fm * x, fm * y)"), &Config::new(Backend::Cpu, 0), None);
    assert!(t2.starts_with("it = [("), "{t2}");
    assert!(t0.ends_with(&t2), "--opt 0:\n{t0}\n--opt 2:\n{t2}");
}

/// The two sums of a direct N-body step (each body's total force: the sum of every other
/// body's pull, by component) reduce trees that share the square root and the division:
/// at `--opt 2` they are one superoperator with two reductions, so the pair of sums costs
/// the CVL calls of the first sum alone (one more before), and prints what `--opt 0`
/// prints.
#[test]
fn the_sums_of_a_direct_force_are_one_superoperator() {
    let forces = |result: &str| {
        format!(
            "let xs = {{float(i) / 7.0 - 20.0 : i in index(60)}}; ys = {{float(i) / 5.0 - 9.0 : i in index(60)}}\n\
             in {{let ps = {{let dx = qx - x; dy = qy - y; r2 = dx * dx + dy * dy + 1.0e-6; fm = 1.5 / (r2 * sqrt(r2)) in (fm * dx, fm * dy)\n\
                            : qx in xs; qy in ys}}\n\
                 in {result} : x in xs; y in ys}};\n"
        )
    };
    let both = "(sum({a : (a, b) in ps}), sum({b : (a, b) in ps}))";
    let (pair, t2) = calls_of("", &forces(both));
    let (one, _) = calls_of("", &forces("sum({a : (a, b) in ps})"));
    assert_eq!(pair, one, "CVL calls of both sums, and of the first alone");
    let t0 = nesl::corpus::transcript(Path::new("forces.nesl"), &forces(both), &Config::new(Backend::Cpu, 0), None);
    assert!(t2.starts_with("it = [("), "{t2}");
    assert!(t0.ends_with(&t2), "--opt 0:\n{t0}\n--opt 2:\n{t2}");
}
