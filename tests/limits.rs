//! Hostile input and runaway programs (issue 16): a 100,000-term operator chain runs,
//! deep nesting is a located error and never a stack overflow, a deep sequence literal
//! type-checks quickly, and `--max-memory` stops an allocation past it with an error while
//! the next form still runs.

mod common;
use common::Scratch;
use std::process::{Command, Output};

fn scratch(name: &str, text: &str) -> Scratch {
    Scratch::file("limits", name, text)
}

fn nesl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nesl")).env("NESL_THREADS", "2").args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `1 + 1 + ... + 1` with 100,000 terms, as generated code writes it, at every level.
#[test]
fn a_sum_of_100000_terms_runs() {
    let mut src = String::from("1");
    for _ in 1..100_000 {
        src.push_str(" + 1");
    }
    src.push_str(";\n2 * 3;\n");
    let file = scratch("sum.nesl", &src);
    for opt in ["0", "2"] {
        let out = nesl(&["run", "--backend", "cpu", "--opt", opt, file.as_str()]);
        assert_eq!(text(&out.stdout), "it = 100000 : int\nit = 6 : int\n", "stderr: {}", text(&out.stderr));
        assert_eq!(out.status.code(), Some(0));
    }
    let out = nesl(&["check", file.as_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// 100,000 nested sequence literals: a located error (not a stack overflow), and the
/// next form runs.
#[test]
fn deeply_nested_sequences_are_a_located_error() {
    let n = 100_000;
    let src = format!("{}1{};\n2 * 3;\n", "[".repeat(n), "]".repeat(n));
    let file = scratch("nested.nesl", &src);
    let out = nesl(&["run", "--backend", "cpu", file.as_str()]);
    let err = text(&out.stderr);
    assert_eq!(text(&out.stdout), "it = 6 : int\n", "stderr: {err}");
    assert!(err.contains("nested too deeply") && err.contains("nested.nesl:1:"), "{err}");
    assert_eq!(out.status.code(), Some(1));
}

/// 300,000 nested applications `inc(inc(...inc(1)...))`: past the checker's depth limit, a
/// located error.
#[test]
fn deeply_nested_calls_are_a_located_error() {
    let n = 300_000;
    let src = format!("function inc(x) = x + 1;\n{}1{};\n2 * 3;\n", "inc(".repeat(n), ")".repeat(n));
    let file = scratch("calls.nesl", &src);
    let out = nesl(&["run", "--backend", "cpu", file.as_str()]);
    let err = text(&out.stderr);
    assert_eq!(text(&out.stdout), "inc = fn : int -> int\nit = 6 : int\n", "stderr: {err}");
    assert!(err.contains("nested too deeply") && err.contains("calls.nesl:2:"), "{err}");
}

/// 100,000 nested parentheses are no nesting at all.
#[test]
fn deeply_nested_parentheses_run() {
    let n = 100_000;
    let src = format!("{}1{};\n", "(".repeat(n), ")".repeat(n));
    let out = nesl(&["run", "--backend", "cpu", scratch("parens.nesl", &src).as_str()]);
    assert_eq!(text(&out.stdout), "it = 1 : int\n", "stderr: {}", text(&out.stderr));
}

/// A sequence literal nested 1000 deep type-checks and runs (it took 70 s to check when
/// unification copied the whole type at each level).
#[test]
fn a_deep_sequence_literal_checks_quickly() {
    let n = 1000;
    let src = format!("{}1{};\n", "[".repeat(n), "]".repeat(n));
    let file = scratch("deep-literal.nesl", &src);
    let start = std::time::Instant::now();
    let out = nesl(&["run", "--backend", "cpu", file.as_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.ends_with(&format!(" : {}int{}\n", "[".repeat(n), "]".repeat(n))), "{shown}");
    assert!(start.elapsed().as_secs() < 60, "took {:?}", start.elapsed());
}

/// `--max-memory`: an allocation past the limit is an out-of-memory error at the NESL
/// line that asked for it, and the next form runs; `NESL_MAX_MEMORY` does the same.
#[test]
fn max_memory_stops_a_runaway_allocation() {
    let file = scratch("oom.nesl", "x = dist(0, 10000000000);\nsum(dist(1, 1000));\n");
    let out = nesl(&["run", "--backend", "cpu", "--max-memory", "64M", file.as_str()]);
    let err = text(&out.stderr);
    assert_eq!(text(&out.stdout), "it = 1000 : int\n", "stderr: {err}");
    assert!(err.contains("out of memory") && err.contains("memory limit is 64.0 MiB") && err.contains("oom.nesl:1:5"), "{err}");
    assert_eq!(out.status.code(), Some(1));

    let out = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .env("NESL_MAX_MEMORY", "64M")
        .args(["run", "--backend", "cpu", file.as_str()])
        .output()
        .unwrap();
    assert!(text(&out.stderr).contains("memory limit is 64.0 MiB"), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "it = 1000 : int\n");

    let out = nesl(&["run", "--max-memory", "lots", file.as_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not a size"), "{}", text(&out.stderr));
}

/// `--max-memory` covers the CUDA backend's buffers too (here its kernels' CPU emulation,
/// where available): the same runaway allocation is an out-of-memory error at its NESL
/// line, and the next form runs.
#[test]
fn max_memory_covers_the_cuda_backend() {
    if let Err(e) = cvl_cuda::CudaCvl::new_emulated() {
        eprintln!("SKIPPED: no kernel emulation ({e})");
        return;
    }
    let file = scratch("oom-cuda.nesl", "x = dist(0, 100000000);\nsum(dist(1, 1000));\n");
    let out = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .env("NESL_CUDA_EMULATE", "1")
        .args(["run", "--backend", "cuda", "--max-memory", "64M", file.as_str()])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(text(&out.stdout), "it = 1000 : int\n", "stderr: {err}");
    assert!(err.contains("out of memory") && err.contains("memory limit is 64.0 MiB") && err.contains("oom-cuda.nesl:1:5"), "{err}");
    assert_eq!(out.status.code(), Some(1));
}

/// The default limit is a share of physical memory: the same runaway program fails
/// cleanly without any option (10^10 integers are 80 GB, more than this machine's memory
/// times three quarters on every machine the tests run on).
#[test]
fn the_default_limit_stops_a_runaway_allocation() {
    let file = scratch("oom-default.nesl", "dist(0, 10000000000);\n1 + 2;\n");
    let out = nesl(&["run", "--backend", "cpu", file.as_str()]);
    let err = text(&out.stderr);
    assert_eq!(text(&out.stdout), "it = 3 : int\n", "stderr: {err}");
    assert!(err.contains("out of memory"), "{err}");
}

/// In the REPL a form that ran out of memory is followed by the next.
#[test]
fn the_repl_goes_on_after_running_out_of_memory() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .args(["repl", "--backend", "cpu", "--max-memory", "32M"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"y = 5;\ndist(1.5, 100000000);\ny + 1;\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(text(&out.stderr).contains("out of memory"), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("it = 6 : int"), "{}", text(&out.stdout));
}

/// A tuple of 100,000 components is a located error (past the checker's limit of 50,000),
/// and the next form runs; a tuple of 1,000 runs.
#[test]
fn a_huge_tuple_is_a_located_error() {
    let src = format!("({});\n2 * 3;\n({});\n", vec!["1"; 100_000].join(", "), vec!["7"; 1000].join(", "));
    let file = scratch("tuple.nesl", &src);
    let out = nesl(&["run", "--backend", "cpu", file.as_str()]);
    let (stdout, err) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.starts_with("it = 6 : int\nit = (7, 7, "), "stdout: {stdout}\nstderr: {err}");
    assert!(err.contains("nested too deeply") && err.contains("tuple.nesl:1:"), "{err}");
}

/// A 20,000-component tuple, matched by a function's parameter pattern and by a `let`,
/// checks and runs at every opt level (checking it was quadratic: 2,000 components took
/// seconds).
#[test]
fn a_wide_tuple_runs() {
    let n = 20_000;
    let terms: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let names: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
    let src = format!(
        "function wide(({names})) = x1 + x{last};\nwide(({terms}));\n\
         let ({names}) = ({terms}) in x3 * x{last};\n",
        terms = terms.join(", "),
        names = names.join(", "),
        last = n - 1,
    );
    let file = scratch("wide.nesl", &src);
    for opt in ["0", "1", "2"] {
        let out = nesl(&["run", "--backend", "cpu", "--opt", opt, file.as_str()]);
        let (stdout, err) = (text(&out.stdout), text(&out.stderr));
        assert!(stdout.ends_with("\nit = 20000 : int\nit = 59997 : int\n"), "stdout: {}\nstderr: {err}", &stdout[stdout.len().saturating_sub(200)..]);
        assert_eq!(out.status.code(), Some(0), "{err}");
    }
}

/// Resident memory of process `pid` in bytes (Linux `/proc`).
#[cfg(target_os = "linux")]
fn resident_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS in /proc status");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// The REPL gives memory back after a form: a form whose vectors take 400 MB leaves the
/// idle process well under that (the allocator keeps freed memory mapped while a form
/// runs; the top level purges it between forms).
#[cfg(target_os = "linux")]
#[test]
fn the_repl_gives_memory_back_after_a_form() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .env("NESL_THREADS", "2")
        .env_remove("MIMALLOC_PURGE_DELAY")
        .args(["repl", "--backend", "cpu", "--opt", "2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Two 400 MB vectors live at once (the sequence and its scan), freed at the form's end.
    writeln!(stdin, "let v = dist(1, 50000000); w = plus_scan(v) in w[49999999] + #v;").unwrap();
    stdin.flush().unwrap();
    let result = lines.find(|l| l.as_ref().is_ok_and(|l| l.contains("it ="))).expect("a result").unwrap();
    assert!(result.contains("it = 99999999 : int"), "{result}");
    // The next form's result shows the first form is over, memory given back included.
    writeln!(stdin, "7 * 6;").unwrap();
    stdin.flush().unwrap();
    let next = lines.find(|l| l.as_ref().is_ok_and(|l| l.contains("it ="))).expect("a result").unwrap();
    assert!(next.contains("it = 42 : int"), "{next}");
    let rss = resident_bytes(child.id());
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    assert!(rss < 200 << 20, "the idle REPL holds {} MB after the form", rss >> 20);
}

/// Runs `nesl` with `args`, failing the test if it takes longer than `limit` (a
/// quadratic pass on the inputs below takes minutes; these finish in seconds).
fn nesl_within(args: &[&str], limit: std::time::Duration) -> Output {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .env("NESL_THREADS", "2")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The pipes are drained as the child writes (a transcript bigger than a pipe's
    // buffer would otherwise block it until the limit).
    fn drain(mut r: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            r.read_to_end(&mut buf).unwrap();
            buf
        })
    }
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() };
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("nesl {args:?} took more than {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// 20,000 nested `if`s compile and run at every optimisation level within a minute (the
/// optimiser was quadratic in the depth: 5,000 took 12 s and 20,000 several minutes
/// and gigabytes at `--opt 2`).
#[test]
fn twenty_thousand_nested_ifs_compile_quickly() {
    let mut src = String::from("function g(x) = ");
    for i in 0..20_000 {
        src.push_str(&format!("if x == {i} then {} else ", i * 2));
    }
    src.push_str("-1;\ng(7);\ng(19999);\ng(20000);\n");
    let file = scratch("ifs.nesl", &src);
    for opt in ["0", "1", "2"] {
        let out = nesl_within(&["run", "--backend", "cpu", "--opt", opt, file.as_str()], std::time::Duration::from_secs(60));
        assert_eq!(
            text(&out.stdout),
            "g = fn : int -> int\nit = 14 : int\nit = 39998 : int\nit = -1 : int\n",
            "opt {opt}, stderr: {}",
            text(&out.stderr)
        );
    }
}

/// A chain of 100,000 operators inside an apply-to-each (`{i * i * ... : i in s}`) runs
/// at every level: the flattener asked at every node whether the subtree uses locals (a
/// walk of the whole subtree), the reducer copied the growing tree at every link (6 GB at
/// 8,000 terms at `--opt 2`), and constant folding, the trap test and the stack code
/// generator each walked it again per link.
#[test]
fn a_lifted_chain_of_100000_terms_runs() {
    let n = 100_000;
    let src = format!("{{{} : i in [1, 1, 1]}};\n{{{} : i in [2, 3]}};\n", vec!["i"; n].join(" * "), vec!["i"; n].join(" + "));
    let file = scratch("lifted.nesl", &src);
    for opt in ["0", "1", "2"] {
        let out = nesl_within(&["run", "--backend", "cpu", "--opt", opt, file.as_str()], std::time::Duration::from_secs(120));
        assert_eq!(
            text(&out.stdout),
            "it = [1, 1, 1] : [int]\nit = [200000, 300000] : [int]\n",
            "opt {opt}, stderr: {}",
            text(&out.stderr)
        );
    }
}

/// 100,000 errors in one form (a chain of `true and true ...`, where `true` is not a
/// NESL name, and 100,000 nested `#` that each fail to type): the first 50 are shown, the
/// last of them saying how many more there were, instead of minutes of rendering each
/// from the whole 600 KB line.
#[test]
fn a_form_with_100000_errors_shows_50() {
    let n = 100_000;
    let src = format!("{};\n{}[1];\n2 * 3;\n", vec!["true"; n].join(" and "), "#".repeat(n));
    let file = scratch("errors.nesl", &src);
    let out = nesl_within(&["run", "--backend", "cpu", file.as_str()], std::time::Duration::from_secs(120));
    let err = text(&out.stderr);
    assert_eq!(text(&out.stdout), "it = 6 : int\n", "stderr: {}", &err[..err.len().min(2000)]);
    assert_eq!(err.matches("error[Name]: `true` is undefined").count(), 50);
    assert_eq!(err.matches("error[Type]: for function `length`").count(), 50);
    assert!(err.contains("= note: 99950 more errors in this form not shown"), "{}", &err[..2000]);
    assert!(err.contains("= note: 99949 more errors in this form not shown"), "{}", &err[..2000]);
    assert!(err.len() < 100_000, "{} bytes of errors", err.len());
}

/// A 30,000-component left-nested tuple `((((1, 2), 3), 4), ...)` and a 3,000-term
/// `[1] ++ [1] ++ ...` chain compile and run at `--opt 1` and `--opt 2` within a minute
/// (they take seconds; code generation kept a set of live variables per statement and
/// merged adjacent shuffles by trying every depth: each took close to a minute and the
/// tuple 11 GB).
#[test]
fn a_wide_nested_tuple_and_a_long_append_chain_optimise_quickly() {
    let n = 30_000;
    let mut tuple = "(".repeat(n - 1) + "1";
    for i in 2..=n {
        tuple.push_str(&format!(", {i})"));
    }
    let chain = vec!["[1]"; 3000].join(" ++ ");
    let file = scratch("wide_chain.nesl", &format!("{tuple};\n#({chain});\n{chain};\n"));
    for opt in ["1", "2"] {
        let out = nesl_within(&["run", "--backend", "cpu", "--opt", opt, file.as_str()], std::time::Duration::from_secs(60));
        let (stdout, err) = (text(&out.stdout), text(&out.stderr));
        let tail = &stdout[stdout.len().saturating_sub(200)..];
        assert_eq!(out.status.code(), Some(0), "opt {opt}: {err}");
        assert!(stdout.starts_with(&format!("it = {}1, 2), 3), 4), ", "(".repeat(n - 1))), "opt {opt}: {tail}");
        assert!(stdout.contains(", 29999), 30000) : "), "opt {opt}: {tail}");
        assert!(stdout.contains("\nit = 3000 : int\nit = [1, 1, 1, "), "opt {opt}: {tail}");
        assert!(stdout.ends_with(", 1,...] : [int]\n"), "opt {opt}: {tail}");
    }
}

/// A `.vcode` chain of 20,000 functions, each calling the next: verified, optimised and
/// run at every level. The verifier re-checked every function per round until the
/// signatures settled (cubic: 2,000 took 8 s) and the inliner gave each instruction its
/// whole chain of call sites (20,000 took minutes and 9 GB at `--opt 1`).
#[test]
fn a_vcode_call_chain_of_20000_runs() {
    let n = 20_000;
    let mut src = String::from("FUNC MAIN\nCONST INT 0\nCALL F0\nRET\n");
    for i in 0..n {
        src.push_str(&format!("FUNC F{i}\nCONST INT 1\n+ INT\nCALL F{}\nRET\n", i + 1));
    }
    src.push_str(&format!("FUNC F{n}\nRET\n"));
    let file = scratch("chain.vcode", &src);
    for opt in ["0", "1", "2"] {
        let out = nesl_within(&["--max-call-depth", "100000", "vcode", "--opt", opt, file.as_str()], std::time::Duration::from_secs(120));
        assert_eq!(text(&out.stdout).trim(), "( 20000 )", "opt {opt}, stderr: {}", text(&out.stderr));
    }
}
