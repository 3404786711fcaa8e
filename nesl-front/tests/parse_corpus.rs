//! Every program of the conformance corpus and of the benchmarks parses.
//!
//! Conformance programs (`shared/conformance/nesl/**.nesl`, skipped when the folder is
//! absent) must parse with no diagnostics, except where the reference transcript reports
//! a syntax error: there, exactly the forms the reference rejects (by line) must fail.

use nesl_front::diag::LineIndex;
use nesl_front::parser::{parse_items, parse_program};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn nesl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            nesl_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "nesl") {
            out.push(p);
        }
    }
}

fn conformance_dir() -> PathBuf {
    match std::env::var_os("NESL_CONFORMANCE") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/nesl"),
    }
}

/// Lines of the reference transcript's `Line N: Syntax error` reports.
fn expected_syntax_error_lines(expected: &str) -> BTreeSet<usize> {
    expected
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("Line ")?;
            let (n, msg) = rest.split_once(':')?;
            msg.trim_start().starts_with("Syntax error").then(|| n.trim().parse().ok())?
        })
        .collect()
}

#[test]
fn conformance_programs_parse() {
    let dir = conformance_dir();
    let mut files = Vec::new();
    nesl_files(&dir, &mut files);
    if files.is_empty() {
        eprintln!("conformance corpus not found at {}: skipped", dir.display());
        return;
    }
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).expect("read corpus file");
        let expected = std::fs::read_to_string(f.with_extension("expected")).unwrap_or_default();
        let want = expected_syntax_error_lines(&expected);
        let index = LineIndex::new(&src);
        let mut got = BTreeSet::new();
        let mut ok_forms = 0;
        for item in parse_items(&src) {
            match item {
                Ok(_) => ok_forms += 1,
                Err(diags) => {
                    got.insert(index.line_col(diags[0].span.start as usize).0);
                }
            }
        }
        if got != want || ok_forms == 0 {
            failures.push(format!(
                "{}: syntax errors on lines {got:?}, reference {want:?}",
                f.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(files.len() >= 10, "only {} corpus files", files.len());
}

/// Benchmark programs that are not valid NESL as committed (they use the reserved
/// boolean literals `t` / `f` as variable names, and `5%` inside a comment closes it):
/// reported to the coordinator; checked only once fixed (remove them from this list).
const KNOWN_INVALID_BENCH: [&str; 3] = ["barneshut.nesl", "blackscholes.nesl", "quickhull.nesl"];

#[test]
fn benchmark_programs_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/programs");
    let mut files = Vec::new();
    nesl_files(&dir, &mut files);
    assert!(!files.is_empty(), "no benchmark programs in {}", dir.display());
    for f in &files {
        let src = std::fs::read_to_string(f).expect("read benchmark");
        let (items, diags) = parse_program(&src);
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if KNOWN_INVALID_BENCH.contains(&name) {
            if !diags.is_empty() {
                eprintln!("known invalid benchmark {name}: {} errors", diags.len());
            }
            continue;
        }
        assert!(diags.is_empty(), "{}: {diags:?}", f.display());
        assert!(!items.is_empty(), "{}: no forms", f.display());
    }
}
