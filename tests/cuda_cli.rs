//! The `nesl` binary with `--backend cuda` / `auto`, run as a subprocess.
//!
//! * With the CUDA backend unavailable (`NESL_CUDA_DISABLE`, so this also holds on a GPU
//!   machine; and, on a machine with no driver, without it): `run`, `test` and `vcode`
//!   print one line on stderr, exit non-zero, and never panic.
//! * `--backend auto` falls back to the CPU silently.
//! * With the CPU emulation of the kernels (`NESL_CUDA_EMULATE=1`, needs `g++`): `run`,
//!   `vcode` and `test` give the CPU's results, and `--stats` prints the device counters.

mod common;
use common::Scratch;
use std::path::Path;
use std::process::{Command, Output};

const PROGRAM: &str = "function g(a) = {x * 2 + 1 : x in a};\n\
g([1, 2, 3]);\n\
max_val([] int);\n\
sum({x * 0.5 : x in [1.0, 2.0, 3.0]});\n";

const VCODE: &str = "FUNC MAIN\nCONST INT 40\nCONST INT 2\n+ INT\nRET\n";

fn nesl(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nesl"));
    c.args(args);
    c.env_remove("NESL_CUDA_DISABLE").env_remove("NESL_CUDA_EMULATE");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the nesl binary runs")
}

fn scratch(name: &str, text: &str) -> Scratch {
    Scratch::file("cuda-cli", name, text)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// One line on stderr saying why the CUDA backend cannot start; non-zero exit; no panic.
fn assert_clean_refusal(out: &Output, why: &str) {
    let err = text(&out.stderr);
    assert!(!out.status.success(), "exit status {:?}; stderr: {err}", out.status);
    assert!(!err.contains("panicked"), "panic: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "want one line on stderr, got: {err}");
    assert!(lines[0].starts_with("error"), "{}", lines[0]);
    assert!(lines[0].contains("CUDA backend cannot start"), "{}", lines[0]);
    assert!(lines[0].contains(why), "want `{why}` in: {}", lines[0]);
}

#[test]
fn cuda_backend_refused_cleanly_when_disabled() {
    let prog = scratch("refused.nesl", PROGRAM);
    let vc = scratch("refused.vcode", VCODE);
    let dir = Scratch::dir("cuda-cli", "refused-suite");
    let env = [("NESL_CUDA_DISABLE", "1")];
    for args in [
        vec!["run", "--backend", "cuda", prog.to_str().unwrap()],
        vec![
            "run",
            "--backend",
            "cuda",
            "--stats",
            "--opt",
            "0",
            prog.to_str().unwrap(),
        ],
        vec!["test", "--backend", "cuda", dir.as_str()],
        vec!["vcode", "--backend", "cuda", vc.to_str().unwrap()],
    ] {
        let out = nesl(&args, &env);
        assert_clean_refusal(&out, "disabled");
        assert!(out.stdout.is_empty(), "{args:?}: stdout {}", text(&out.stdout));
    }
}

#[test]
fn no_driver_is_one_line() {
    match cvl_cuda::CudaCvl::new() {
        Err(cvl_cuda::CudaInitError::NoDriver) => {}
        Err(e) => {
            eprintln!("SKIPPED: CUDA fails here for another reason ({e})");
            return;
        }
        Ok(_) => {
            eprintln!("SKIPPED: a GPU is present");
            return;
        }
    }
    let prog = scratch("nodriver.nesl", PROGRAM);
    let out = nesl(&["run", "--backend", "cuda", prog.to_str().unwrap()], &[]);
    assert_clean_refusal(&out, "no CUDA driver");
}

#[test]
fn auto_falls_back_to_the_cpu_silently() {
    let prog = scratch("auto.nesl", PROGRAM);
    let want = nesl(&["run", "--backend", "cpu", prog.to_str().unwrap()], &[]);
    assert!(want.status.success(), "{}", text(&want.stderr));
    let out = nesl(
        &["run", "--backend", "auto", prog.to_str().unwrap()],
        &[("NESL_CUDA_DISABLE", "1")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), text(&want.stdout));
    assert!(
        text(&out.stdout).contains("it = -2147483648 : int"),
        "{}",
        text(&out.stdout)
    );
}

fn emulation() -> bool {
    match cvl_cuda::CudaCvl::new_emulated() {
        Ok(_) => true,
        Err(e) => {
            eprintln!("SKIPPED: no kernel emulation ({e})");
            false
        }
    }
}

/// The first number of the row `name` in `--stats` output.
fn stat(stderr: &str, name: &str) -> Option<u64> {
    stderr.lines().find_map(|l| l.strip_prefix(name)?.split_whitespace().next()?.parse().ok())
}

#[test]
fn emulated_cuda_backend_runs_and_reports_device_counters() {
    if !emulation() {
        return;
    }
    let prog = scratch("emu.nesl", PROGRAM);
    let env = [("NESL_CUDA_EMULATE", "1")];
    for opt in ["0", "2"] {
        let want = nesl(&["run", "--backend", "cpu", "--opt", opt, prog.to_str().unwrap()], &[]);
        let out = nesl(
            &[
                "run",
                "--backend",
                "cuda",
                "--stats",
                "--opt",
                opt,
                prog.to_str().unwrap(),
            ],
            &env,
        );
        let err = text(&out.stderr);
        assert!(out.status.success(), "--opt {opt}: {err}");
        assert_eq!(text(&out.stdout), text(&want.stdout), "--opt {opt}");
        assert!(err.contains("device           CPU emulation"), "{err}");
        assert!(stat(&err, "kernel launches").is_some_and(|n| n > 0), "{err}");
        assert!(stat(&err, "host round trips").is_some_and(|n| n > 0), "{err}");
        assert!(stat(&err, "bytes to host").is_some_and(|n| n > 0), "{err}");
        assert!(stat(&err, "total").is_some_and(|n| n > 0), "{err}");
        if opt == "2" {
            // The comprehension's element-wise work runs as a generated superoperator kernel.
            assert!(err.lines().any(|l| l.starts_with("fused")), "{err}");
        }
    }
    let vc = scratch("emu.vcode", VCODE);
    let out = nesl(&["vcode", "--backend", "cuda", "--stats", vc.to_str().unwrap()], &env);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let want = nesl(&["vcode", "--backend", "cpu", vc.to_str().unwrap()], &[]);
    assert_eq!(text(&out.stdout), text(&want.stdout));
    assert!(text(&out.stdout).contains("42"), "{}", text(&out.stdout));
    assert!(stat(&err, "kernel launches").is_some(), "{err}");
}

/// Serial code on the CUDA backend stays on the host (no launch, no round trip), and
/// `--stats` attributes the round trips of vector code to the instructions causing them.
#[test]
fn emulated_cuda_backend_keeps_serial_code_on_the_host() {
    if !emulation() {
        return;
    }
    let prog = scratch(
        "serial.nesl",
        "function loop(i, acc) = if i == 0 then acc else loop(i - 1, acc + i);\nloop(500, 0);\n",
    );
    let env = [("NESL_CUDA_EMULATE", "1")];
    for opt in ["0", "2"] {
        let out = nesl(&["run", "--backend", "cuda", "--stats", "--opt", opt, prog.to_str().unwrap()], &env);
        let err = text(&out.stderr);
        assert!(out.status.success(), "--opt {opt}: {err}");
        assert!(text(&out.stdout).contains("125250"), "{}", text(&out.stdout));
        assert_eq!(stat(&err, "kernel launches"), Some(0), "--opt {opt}: {err}");
        assert_eq!(stat(&err, "host round trips"), Some(0), "--opt {opt}: {err}");
    }
    // A data-dependent `IF` over a vector reads its flag back: counted under `control`.
    let prog = scratch(
        "vector_if.nesl",
        "function twice_big(v) = if sum(v) > 10 then {x * 2 : x in v} else v;\ntwice_big([1, 5, 9]);\n",
    );
    let out = nesl(&["run", "--backend", "cuda", "--stats", prog.to_str().unwrap()], &env);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(text(&out.stdout).contains("[2, 10, 18]"), "{}", text(&out.stdout));
    assert!(err.contains("round trips by instruction kind"), "{err}");
    assert!(stat(&err, "  control").is_some_and(|n| n > 0), "{err}");
    // `time` waits for the device at both ends (the timers' round trips count as `io`),
    // so it measures finished kernels, not their launches.
    let prog = scratch("timed.nesl", "(res, secs) = time({x * 2 : x in [1, 5, 9]});\nres;\n");
    let out = nesl(&["run", "--backend", "cuda", "--stats", prog.to_str().unwrap()], &env);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(stat(&err, "  io").is_some_and(|n| n >= 2), "{err}");
}

#[test]
fn emulated_cuda_backend_passes_a_regression_directory() {
    if !emulation() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("regression/nesl/scalar");
    let dir = if dir.is_dir() {
        dir
    } else {
        root.join("regression/nesl")
    };
    let out = nesl(
        &["test", "--backend", "cuda", dir.to_str().unwrap()],
        &[("NESL_CUDA_EMULATE", "1")],
    );
    let so = text(&out.stdout);
    assert!(out.status.success(), "{so}\n{}", text(&out.stderr));
    assert!(so.lines().last().is_some_and(|l| l.contains(" passed")), "{so}");
}

/// `--stats-json` on the (emulated) GPU: the device's name and counters; `nesl bench`
/// reads its launches and round trips from there, at the largest thread count only.
#[test]
fn emulated_cuda_backend_writes_device_counters_as_json() {
    if !emulation() {
        return;
    }
    let prog = scratch("emu-json.nesl", PROGRAM);
    let json = Scratch::path("cuda-cli", "emu-json.json");
    let env = [("NESL_CUDA_EMULATE", "1")];
    let out = nesl(&["run", "--backend", "cuda", "--stats-json", json.to_str().unwrap(), prog.to_str().unwrap()], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("stats file")).expect("JSON");
    assert!(v["device"]["name"].as_str().is_some_and(|n| n.contains("emulation")), "{v}");
    for c in ["kernel launches", "host round trips", "bytes to host"] {
        assert!(v["device"]["counters"][c].as_u64().is_some_and(|n| n > 0), "{c}: {v}");
    }
    assert!(v["total_calls"].as_u64().is_some_and(|n| n > 0), "{v}");

    let dir = Scratch::dir("cuda-cli", "bench-out");
    let out = nesl(
        &["bench", "--quick", "--programs", "dotp", "--backend", "cpu,cuda", "--threads-list", "1,2", "--opt", "2", "--runs", "1", "--out", dir.to_str().unwrap()],
        &env,
    );
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    let gpu: Vec<&serde_json::Value> = rows.iter().filter(|r| r["backend"] == "cuda").collect();
    assert_eq!(gpu.len(), 1, "{doc}");
    assert_eq!(gpu[0]["threads"], 2);
    assert!(gpu[0]["launches"].as_u64().is_some_and(|n| n > 0), "{}", gpu[0]);
    assert!(gpu[0]["round_trips"].as_u64().is_some_and(|n| n > 0), "{}", gpu[0]);
    assert!(gpu[0]["ratio_to_peer"].is_number(), "{}", gpu[0]);
    assert!(rows.iter().filter(|r| r["backend"] == "cpu").all(|r| r["launches"].is_null()), "{doc}");
    let _ = std::fs::remove_dir_all(&dir);
}
