//! Fuzzing the whole front end and the optimiser (issue 16): mutated regression programs,
//! random operator chains, deep nesting and huge counts go through the type checker, the
//! flattener, the VCODE verifier and the optimiser at levels 1 and 2. Checked for every
//! input: no panic and no stack overflow; a failure is a compile error whose diagnostics
//! lie inside the text; what compiles verifies, and optimises to a program that verifies.
//!
//! Fixed seed, a fixed number of cases, and a time budget of a few seconds (whichever
//! ends first), on a thread with the stack the `nesl` binary runs on.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

const FRAGMENTS: &[&str] = &[
    "(", ")", "[", "]", "{", "}", ",", ";", ":", "=", "==", "<", "+", "-", "*", "/", "#",
    "++", "->", "<-", "|", "let ", " in ", "if ", " then ", " else ", "x", "y", "i", "1",
    "0", "-1", "2.5", "9223372036854775807", "99999999999999999999", "1e308", "`a", "\"s\"",
    "[] int", "[0:10]", "dist", "sum", "plus_scan", "length", "flatten", "reverse", " in ",
    "function g(a) = ", "t", "(1, 2)", "{a + 1 : a in [1, 2]}", "[1, 2, 3]", "4000000000",
];

const OPERATORS: &[&str] = &[" + ", " - ", " * ", " == ", " < ", " ++ ", " or ", " and ", ", "];

fn seeds() -> Vec<String> {
    let mut out = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("regression/nesl");
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "nesl") {
                if let Ok(s) = std::fs::read_to_string(&p) {
                    // Small programs only: the budget goes to many cases, not a few big ones.
                    if s.len() < 4000 {
                        out.push(s);
                    }
                }
            }
        }
    }
    out.sort();
    out
}

fn boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A mutation of `src`: fragments inserted, ranges deleted or duplicated.
fn mutate(rng: &mut Rng, src: &str) -> String {
    let mut s = src.to_string();
    for _ in 0..1 + rng.below(4) {
        let at = boundary(&s, rng.below(s.len() + 1));
        match rng.below(3) {
            0 => s.insert_str(at, rng.pick(FRAGMENTS)),
            1 => {
                let end = boundary(&s, at + rng.below(20));
                s.replace_range(at..end.max(at), "");
            }
            _ => {
                let end = boundary(&s, at + rng.below(40));
                let piece = s[at..end.max(at)].to_string();
                s.insert_str(at, &piece);
            }
        }
    }
    s
}

/// A generated form: a long operator chain, deep nesting of one kind, or a huge count.
fn generated(rng: &mut Rng) -> String {
    let n = [10, 300, 3000, 30_000][rng.below(4)];
    match rng.below(5) {
        0 => {
            let op = rng.pick(OPERATORS);
            let atom = rng.pick(&["1", "2.5", "t", "[1]", "x"]);
            let mut s = String::from(atom);
            for _ in 1..n {
                s.push_str(op);
                s.push_str(atom);
            }
            format!("x = 3;\n{s};\n")
        }
        1 => {
            let (open, close) = [("(", ")"), ("[", "]"), ("{", "}"), ("dist(", ", 2)"), ("#", ""), ("-", "")]
                [rng.below(6)];
            let n = n.min(1500);
            format!("{}1{};\n", open.repeat(n), close.repeat(n))
        }
        2 => format!("let {} in 1;\n", (0..n.min(5000)).map(|i| format!("v{i} = {i}")).collect::<Vec<_>>().join("; ")),
        3 => format!("[{}];\n", vec!["1"; n].join(", ")),
        _ => format!("if t then {} else 0;\n", "if f then 1 else ".repeat(n.min(300)) + "2"),
    }
}

/// Every input that compiles is optimised, the big generated ones included (30,000-term
/// chains, 30,000-component tuples): code generation is near-linear in them (it kept a
/// set of live variables per statement, and the optimiser was once only run below 20 KB).
fn exercise(src: &str) {
    let opts = nesl_front::flatten::CompileOptions::default();
    match nesl::pipeline::compile("fuzz.nesl", src, &opts) {
        Ok(program) => {
            if let Err(e) = vcode::verify(&program) {
                panic!("flattened VCODE does not verify: {e:?}");
            }
            let levels: &[u8] = &[1, 2];
            for &level in levels {
                match nesl::pipeline::optimise(&program, level) {
                    Ok(p) => {
                        if let Err(e) = vcode::verify(&p) {
                            panic!("optimised (level {level}) VCODE does not verify: {e:?}");
                        }
                    }
                    Err(e) => panic!("the optimiser failed at level {level}: {e}"),
                }
            }
        }
        Err(nesl::Error::Compile { diags, .. }) => {
            assert!(!diags.is_empty(), "a failed compile without a diagnostic");
            for d in &diags {
                assert!(d.span.end as usize <= src.len(), "diagnostic outside the text: {d:?}");
            }
        }
        Err(e) => panic!("not a compile error: {e}"),
    }
}

fn run(cases: usize, budget: Duration, mut input: impl FnMut(&mut Rng) -> String + Send + 'static) {
    let thread = std::thread::Builder::new().stack_size(nesl_front::STACK_SIZE).spawn(move || {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let start = Instant::now();
        let mut failures = Vec::new();
        for case in 0..cases {
            if start.elapsed() > budget {
                break;
            }
            let src = input(&mut rng);
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| exercise(&src))) {
                let why = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
                let shown: String = src.chars().take(300).collect();
                failures.push(format!("case {case}: {}\n--- input ---\n{shown}", why.unwrap_or_default()));
            }
        }
        failures
    });
    let failures = thread.unwrap().join().unwrap();
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n\n"));
}

#[test]
fn mutated_programs_compile_or_fail_cleanly() {
    let seeds = seeds();
    assert!(!seeds.is_empty());
    run(400, Duration::from_secs(4), move |rng| {
        let s = &seeds[rng.below(seeds.len())];
        mutate(rng, s)
    });
}

#[test]
fn long_chains_deep_nesting_and_huge_counts_compile_or_fail_cleanly() {
    run(40, Duration::from_secs(4), generated);
}

#[test]
fn token_soup_compiles_or_fails_cleanly() {
    run(1000, Duration::from_secs(3), |rng| {
        let n = 1 + rng.below(40);
        (0..n).map(|_| rng.pick(FRAGMENTS)).collect::<Vec<_>>().join(" ") + ";\n"
    });
}
