//! The thread count of the CPU vector library never changes a result: the whole
//! regression corpus passes at `--threads 1` and `--threads 2` (the in-process suite runs
//! at the default, all cores), the programs on the parallel paths print byte-identical
//! transcripts at 1, 2 and 3 threads, and `NESL_THREADS` is honoured and checked.

use std::path::Path;
use std::process::Command;

fn nesl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nesl"));
    c.current_dir(env!("CARGO_MANIFEST_DIR")).env_remove("NESL_THREADS");
    c
}

#[test]
fn the_regression_corpus_passes_on_one_and_on_two_threads() {
    for t in ["1", "2"] {
        let out = nesl().args(["--threads", t, "test", "regression/nesl"]).output().expect("runs nesl");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "--threads {t}: {}\n{}", text.lines().filter(|l| !l.starts_with("PASS")).collect::<Vec<_>>().join("\n"), String::from_utf8_lossy(&out.stderr));
        assert!(text.lines().any(|l| l.contains(" passed")), "--threads {t}: no summary in {text}");
    }
}

#[test]
fn parallel_paths_print_the_same_transcript_at_every_thread_count() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("regression/nesl/parallel");
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("parallel corpus").filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "nesl")).collect();
    files.sort();
    assert!(files.len() >= 2);
    for f in files {
        // Results, run-time errors (a file may end in one) and the exit status.
        let run = |threads: &str| {
            let out = nesl().args(["--threads", threads, "run"]).arg(&f).output().expect("runs nesl");
            (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
        };
        let one = run("1");
        assert_eq!(one, run("2"), "{}: 1 and 2 threads differ", f.display());
        assert_eq!(one, run("3"), "{}: 1 and 3 threads differ", f.display());
    }
}

/// On several threads a recursion's call over many short instances runs in parts, one
/// per thread (`--stats` counts them); on one thread, never. (The transcripts are the
/// same: `parallel_paths_print_the_same_transcript_at_every_thread_count`.)
#[test]
fn calls_over_many_instances_run_in_parts_on_several_threads() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("regression/nesl/parallel/04-calls-in-parts.nesl");
    let parts = |threads: &str| {
        let out = nesl().args(["--threads", threads, "run", "--stats"]).arg(&f).output().expect("runs nesl");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let row = err.lines().find(|l| l.starts_with("calls in parts")).map(|l| l.split_whitespace().skip(3).map(|n| n.parse::<u64>().expect("a count")).collect::<Vec<_>>());
        (row, err)
    };
    let (one, err) = parts("1");
    assert_eq!(one, None, "{err}");
    for (threads, per_call) in [("2", 2), ("3", 3)] {
        let (row, err) = parts(threads);
        let row = row.unwrap_or_else(|| panic!("no call ran in parts on {threads} threads: {err}"));
        // The sort's and the sum's calls (the division's parts fail: it runs whole).
        assert_eq!(row, [2, 2 * per_call], "{threads} threads: {err}");
    }
}

#[test]
fn nesl_threads_is_honoured_and_checked() {
    let dir = std::env::temp_dir().join(format!("nesl-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let f = dir.join("sum.nesl");
    std::fs::write(&f, "sum({float(i) * 0.5 : i in [0:200000]});\n").expect("write");
    let a = nesl().env("NESL_THREADS", "1").arg("run").arg(&f).output().expect("runs");
    let b = nesl().env("NESL_THREADS", "2").arg("run").arg(&f).output().expect("runs");
    assert!(a.status.success() && b.status.success());
    assert_eq!(a.stdout, b.stdout);
    assert!(String::from_utf8_lossy(&a.stdout).contains("9.99995E9"), "{}", String::from_utf8_lossy(&a.stdout));
    let bad = nesl().env("NESL_THREADS", "many").arg("run").arg(&f).output().expect("runs");
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("NESL_THREADS") && err.contains("many"), "{err}");
    let zero = nesl().args(["--threads", "0", "run"]).arg(&f).output().expect("runs");
    assert!(!zero.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}
