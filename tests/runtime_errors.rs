//! Snapshot tests of rendered runtime errors: every program in `tests/runtime-errors/`
//! fails at run time, and `nesl run` must print the same transcript (error paragraph with
//! the NESL file:line:col, a source snippet and the calls that led there) at `--opt 0`,
//! `1` and `2`: the transcript in the `.expected` file beside it.
//!
//! `NESL_UPDATE_SNAPSHOTS=1 cargo test --test runtime_errors` rewrites the snapshots from
//! `--opt 0` (review the diff).

use std::path::{Path, PathBuf};
use std::process::Command;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime-errors");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/runtime-errors exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "nesl"))
        .collect();
    v.sort();
    v
}

/// The transcript of `nesl run --opt N` as a terminal shows it: results (stdout) and
/// error paragraphs (stderr) in the order they were written, both sent into one pipe
/// (`2>&1`; each stream is flushed before the other is written). Run from the package
/// root so the file names in it are relative.
fn transcript(file: &Path, opt: u8) -> String {
    transcript_on(file, opt, "cpu", true)
}

/// [`transcript`] on `backend` (`cuda`: the kernels' CPU emulation, with its error checks
/// deferred to the next read or not).
fn transcript_on(file: &Path, opt: u8, backend: &str, deferred: bool) -> String {
    let rel = file.strip_prefix(env!("CARGO_MANIFEST_DIR")).expect("inside the package");
    let out = Command::new("sh")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("-c")
        .arg("exec \"$0\" \"$@\" 2>&1")
        .arg(env!("CARGO_BIN_EXE_nesl"))
        .env_remove("NESL_CUDA_DISABLE")
        .env("NESL_CUDA_EMULATE", "1")
        .env("NESL_CUDA_DEFER_CHECKS", if deferred { "1" } else { "0" })
        .args(["--threads", "1", "--max-call-depth", "5000", "run", "--backend", backend, "--opt", &opt.to_string()])
        .arg(rel)
        .output()
        .expect("nesl runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every runtime error reads the same on the CUDA backend (its kernels' CPU emulation,
/// where available): the failed argument checks (their data come from the check record
/// the program exits on), traps of one operation of a superoperator (the generated kernel
/// says which one), and errors found inside kernels (bad indices, division by zero), whose
/// checks are deferred to the next read by default and still name the instruction, the
/// source place and the calls of the operation that failed. Out of memory differs (device
/// and host memory are not the same limit).
#[test]
fn runtime_errors_read_the_same_on_the_cuda_backend() {
    if let Err(e) = cvl_cuda::CudaCvl::new_emulated() {
        eprintln!("SKIPPED: no kernel emulation ({e})");
        return;
    }
    let mut failures = Vec::new();
    for case in cases() {
        let name = case.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if name.starts_with("07-") {
            continue;
        }
        let expected = std::fs::read_to_string(case.with_extension("expected")).expect("snapshot");
        for (opt, deferred) in [(0, true), (2, true), (2, false)] {
            let got = transcript_on(&case, opt, "cuda", deferred);
            if got != expected {
                failures.push(format!("{name} at --opt {opt} (deferred checks: {deferred}):\n--- expected\n{expected}\n--- got\n{got}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn runtime_errors_name_their_nesl_source_at_every_opt_level() {
    let update = std::env::var("NESL_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1");
    let cases = cases();
    assert!(cases.len() >= 15, "at least 15 runtime error cases, found {}", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let expected_path = case.with_extension("expected");
        if update {
            std::fs::write(&expected_path, transcript(case, 0)).expect("writes the snapshot");
        }
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e} (NESL_UPDATE_SNAPSHOTS=1 writes it)", expected_path.display()));
        let name = case.file_name().unwrap_or_default().to_string_lossy().into_owned();
        // Each snapshot says where: the paragraph points into the NESL file.
        assert!(expected.contains(&format!("--> tests/runtime-errors/{name}:")), "{name}: no NESL location in\n{expected}");
        for opt in [0, 1, 2] {
            let got = transcript(case, opt);
            if got != expected {
                failures.push(format!("{name} at --opt {opt}:\n--- expected\n{expected}\n--- got\n{got}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
