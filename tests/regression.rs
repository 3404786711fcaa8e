//! The regression suites as tests, one per file (libtest-mimic; `harness = false`).
//!
//! - `regression/nesl/**`: the project's own NESL corpus, each `.nesl` with its
//!   `.expected` transcript, evaluated in-process on every configuration of
//!   `nesl::backend::configurations()` (test names start with it: `cpu-O0/...`);
//! - `regression/bad-syntax`, `regression/bad-types`: included when their `.expected`
//!   files are transcripts (error paragraphs and result lines);
//! - `conformance_report`: runs the shared conformance corpus on every configuration when
//!   it is present and prints the pass counts (the corpus is a target, not yet a gate);
//!   it fails only when a case that passes at `cpu-O0` fails on another configuration
//!   (an optimisation level or backend that changes a transcript);
//!   `NESL_CONFORMANCE_VERBOSE=1` also lists the failures.
//!
//! Filter as with any test binary: `cargo test --test regression -- nesl/scalar`; see the
//! conformance report with `cargo test --test regression -- conformance_report`.

use libtest_mimic::{Arguments, Failed, Trial};
use nesl::backend::{configuration_name, configurations};
use nesl::{Backend, Config};
use regression::{Case, Summary, Verdict};
use std::path::Path;

/// True when `text` looks like a top-level transcript: every line is blank, inside an
/// error paragraph, or a result line `lhs = value : type`, and there is at least one
/// result line (a file of error paragraphs alone is a diagnostics snapshot, which the
/// front end's own tests check).
fn is_transcript(text: &str) -> bool {
    let mut in_error = false;
    let mut results = 0;
    for line in text.lines() {
        if line.trim().is_empty() {
            in_error = false;
        } else if regression::compare::is_error_start(line) {
            in_error = true;
        } else if in_error {
            continue;
        } else if line.contains(" = ") && line.contains(" : ") {
            results += 1;
        } else {
            return false;
        }
    }
    results > 0
}

/// One case on one configuration, every program verified before it runs.
fn check(case: &Case, backend: Backend, opt: u8) -> Verdict {
    nesl::corpus::check_case(case, &Config::new(backend, opt).with_verify(true))
}

fn verdict_to_result(v: Verdict) -> Result<(), Failed> {
    match v {
        Verdict::Pass | Verdict::Skip(_) => Ok(()),
        Verdict::Fail(diff) => Err(diff.into()),
    }
}

fn suite_trials(root: &Path, suite: &str, only_transcripts: bool, trials: &mut Vec<Trial>) {
    let dir = root.join(suite);
    if !dir.is_dir() {
        return;
    }
    let cases = match regression::discover(&dir) {
        Ok(c) => c,
        Err(e) => {
            trials.push(Trial::test(format!("{suite}/(discover)"), move || Err(e.into())));
            return;
        }
    };
    for case in cases {
        let Some(expected) = &case.expected else { continue };
        if only_transcripts {
            let text = std::fs::read_to_string(expected).unwrap_or_default();
            if !is_transcript(&text) {
                continue;
            }
        }
        for (backend, opt) in configurations() {
            let name = format!("{}/{suite}/{}", configuration_name(backend, opt), case.name);
            let case = case.clone();
            trials.push(Trial::test(name, move || verdict_to_result(check(&case, backend, opt))));
        }
    }
}

fn conformance_report(root: &Path) -> Result<(), Failed> {
    let Some(dir) = regression::conformance_dir(root) else {
        println!("conformance corpus not found (set NESL_CONFORMANCE or put it at ../shared/conformance): skipped");
        return Ok(());
    };
    let cases: Vec<Case> = regression::discover(&dir)?;
    // Level 0 of the CPU is the reference: a case it passes must pass on every other
    // configuration (the optimiser and the other backends never change a transcript).
    let mut baseline: Vec<bool> = Vec::new();
    let mut regressions = Vec::new();
    let mut configurations = configurations();
    configurations.sort_by_key(|&c| c != (Backend::Cpu, 0));
    for (backend, opt) in configurations {
        let config = configuration_name(backend, opt);
        let mut summary = Summary::default();
        let mut failures = Vec::new();
        for (i, case) in cases.iter().enumerate() {
            let v = check(case, backend, opt);
            if let Verdict::Fail(diff) = &v {
                let first = diff.lines().next().unwrap_or("");
                failures.push(format!("  {}: {first}", case.name));
                if baseline.get(i) == Some(&true) {
                    regressions.push(format!("{config}/{}: passes at cpu-O0 but not here: {diff}", case.name));
                }
            }
            if (backend, opt) == (Backend::Cpu, 0) {
                baseline.push(matches!(v, Verdict::Pass));
            }
            summary.add(&v);
        }
        println!("conformance corpus {} on {config}: {} of {} pass", dir.display(), summary.passed, summary.total());
        if std::env::var_os("NESL_CONFORMANCE_VERBOSE").is_some() {
            for f in &failures {
                println!("{f}");
            }
        }
    }
    if regressions.is_empty() {
        Ok(())
    } else {
        Err(regressions.join("\n").into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    let mut trials = Vec::new();
    suite_trials(&root, "regression/nesl", false, &mut trials);
    suite_trials(&root, "regression/bad-syntax", true, &mut trials);
    suite_trials(&root, "regression/bad-types", true, &mut trials);
    trials.push(Trial::test("conformance_report", move || conformance_report(&root)));
    libtest_mimic::run(&args, trials).exit();
}
