//! `nesl bench --quick` as CI runs it: every benchmark program at its small size, once,
//! on the CPU at the default optimisation level, on 1 and 2 threads (`nesl --threads 2
//! bench` means the thread list `1,2`), beside the hand-written Rust peers at the same
//! thread counts. Each program and peer checks its own answer, so this fails when a
//! benchmark computes a wrong result, does not compile, or the harness cannot read its
//! output. It asserts nothing about time (numbers belong in the printed table, not in
//! tests), only that every measurement the table promises is there.

use std::process::Command;

const PROGRAMS: [&str; 7] = ["dotp", "quicksort", "blackscholes", "quickhull", "barneshut", "smvm", "muladd"];

#[test]
fn bench_quick_runs_every_program_and_prints_the_table() {
    let out_dir = std::env::temp_dir().join(format!("nesl-bench-quick-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .args(["--threads", "2", "bench", "--quick", "--runs", "1", "--backend", "cpu", "--opt", "2", "--timeout", "600", "--out"])
        .arg(&out_dir)
        .env_remove("NESL_THREADS")
        .output()
        .expect("run nesl bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "nesl bench --quick failed:\n{stdout}\n{stderr}");

    // the table: its columns, and a row per program
    let header = stdout.lines().find(|l| l.starts_with("| program |")).unwrap_or_else(|| panic!("no table:\n{stdout}"));
    for col in ["threads", "median ms", "Melem/s", "peak MiB", "speedup vs 1 thread", "ours/peer", "CVL ops", "launches", "round trips", "ok"] {
        assert!(header.contains(&format!("| {col} |")), "no column `{col}`: {header}");
    }
    for p in PROGRAMS {
        assert!(stdout.lines().any(|l| l.starts_with(&format!("| {p} |"))), "no table row for {p}:\n{stdout}");
    }

    // the JSON: every row has its thread count and peak memory; CPU rows and peer rows on
    // 1 and 2 threads, with the speedup and the ratio to the peer filled in
    let path = out_dir.join("results.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let rows = doc["rows"].as_array().expect("rows");
    for r in rows {
        assert!(r["threads"].as_u64().is_some_and(|t| t == 1 || t == 2), "threads: {r}");
        assert_eq!(r["ok"], true, "{r}");
        assert!(r["median_s"].is_number(), "{r}");
        if cfg!(target_os = "linux") {
            assert!(r["peak_rss_bytes"].as_u64().is_some_and(|b| b > 0), "peak memory: {r}");
            assert!(r["peak_mib"].is_number(), "{r}");
        }
    }
    let find = |p: &str, backend: &str, threads: u64| {
        rows.iter()
            .find(|r| r["program"] == p && r["backend"] == backend && r["threads"] == threads)
            .unwrap_or_else(|| panic!("no {backend} row for {p} on {threads} threads:\n{text}"))
    };
    for p in PROGRAMS {
        let one = find(p, "cpu", 1);
        assert!(one["cvl_ops"].as_u64().is_some_and(|c| c > 0), "{one}");
        assert!(one["speedup_vs_1_thread"].is_null(), "{one}");
        let two = find(p, "cpu", 2);
        assert!(two["speedup_vs_1_thread"].is_number(), "{two}");
        for t in [1, 2] {
            let peer = find(p, "rust-rayon", t);
            assert!(peer["opt"].is_null() && peer["ratio_to_peer"].is_null(), "{peer}");
            assert!(find(p, "cpu", t)["ratio_to_peer"].is_number(), "{p} on {t} threads");
        }
    }
    let md = std::fs::read_to_string(out_dir.join("table.md")).expect("table.md");
    assert!(md.contains("| dotp |") && md.contains("rust-rayon"), "{md}");
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// `nesl run --stats-json FILE` writes the documented fields; the thread count is the one
/// `--threads` set.
#[test]
fn run_writes_its_statistics_as_json() {
    let dir = std::env::temp_dir().join(format!("nesl-stats-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("p.nesl");
    std::fs::write(&src, "function double_sum(xs) = sum({x * 2 : x in xs});\ndouble_sum([1, 2, 3]);\n").unwrap();
    let json = dir.join("stats.json");
    let out = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .args(["--threads", "3", "run", "--backend", "cpu", "--stats-json"])
        .arg(&json)
        .arg(&src)
        .output()
        .expect("run nesl");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("12 : int"), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("total"), "--stats-json alone prints no table");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("stats file")).expect("JSON");
    assert_eq!(v["threads"], 3);
    assert!(v["device"].is_null());
    let ops = v["ops"].as_array().expect("ops");
    assert!(!ops.is_empty());
    let calls: u64 = ops.iter().map(|o| o["calls"].as_u64().unwrap()).sum();
    let elements: u64 = ops.iter().map(|o| o["elements"].as_u64().unwrap()).sum();
    assert!(ops.iter().all(|o| o["kind"].is_string()));
    assert_eq!((v["total_calls"].as_u64(), v["total_elements"].as_u64()), (Some(calls), Some(elements)));
    if cfg!(target_os = "linux") {
        assert!(v["peak_rss_bytes"].as_u64().is_some_and(|b| b > 0), "{v}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `nesl bench-peer PROGRAM N` runs the Rust peer on `NESL_THREADS` (or `--threads`)
/// threads and prints one JSON line.
#[test]
fn bench_peer_prints_one_json_line() {
    for (env, flag, want) in [(Some("2"), None, 2), (Some("1"), Some("3"), 3)] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_nesl"));
        if let Some(t) = flag {
            cmd.args(["--threads", t]);
        }
        if let Some(e) = env {
            cmd.env("NESL_THREADS", e);
        }
        let out = cmd.args(["bench-peer", "quickhull", "20000"]).output().expect("run nesl");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
        assert_eq!((v["program"].as_str(), v["size"].as_u64(), v["threads"].as_u64(), v["ok"].as_bool()), (Some("quickhull"), Some(20000), Some(want), Some(true)));
        assert!(v["seconds"].as_f64().is_some_and(|s| s >= 0.0));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_nesl")).args(["bench-peer", "nope", "10"]).output().expect("run nesl");
    assert!(!out.status.success());
}
