//! `nesl bench --quick` as CI runs it: every benchmark program at its small size, once,
//! on the CPU at the default optimisation level. Each program checks its own answer
//! (`(ok, seconds) = (T, ...)`), so this fails when a benchmark computes a wrong result,
//! does not compile, or the harness cannot read its output. It asserts nothing about
//! time (numbers belong in the printed table, not in tests).

use std::process::Command;

#[test]
fn bench_quick_runs_every_program_and_prints_the_table() {
    let out_dir = std::env::temp_dir().join(format!("nesl-bench-quick-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .args(["bench", "--quick", "--runs", "1", "--backend", "cpu", "--opt", "2", "--timeout", "600", "--out"])
        .arg(&out_dir)
        .output()
        .expect("run nesl bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "nesl bench --quick failed:\n{stdout}\n{stderr}");
    for p in ["dotp", "quicksort", "blackscholes", "quickhull", "barneshut", "smvm", "muladd"] {
        assert!(
            stdout.lines().any(|l| l.starts_with('|') && l.contains(p)),
            "no table row for {p}:\n{stdout}"
        );
    }
    for f in ["results.json", "table.md"] {
        let path = out_dir.join(f);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(text.contains("dotp"), "{} lacks the dotp row", path.display());
    }
    let _ = std::fs::remove_dir_all(&out_dir);
}
