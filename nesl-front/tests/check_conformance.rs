//! The checker against the shared conformance corpus (skipped when it is absent):
//! every `name = fn : type` line of each program's reference transcript must equal the
//! line the checker prints for that definition, and every form outside `errors/` must
//! type-check.

use nesl_front::check::{definition_line, Session};
use nesl_front::parser::parse_items;
use std::path::{Path, PathBuf};

/// The corpus folder: `$NESL_CONFORMANCE`, or `shared/conformance/nesl` beside the
/// repository.
fn corpus() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Ok(p) = std::env::var("NESL_CONFORMANCE") {
        candidates.push(PathBuf::from(p));
    }
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    candidates.push(manifest.join("../../shared/conformance/nesl"));
    candidates.push(manifest.join("../shared/conformance/nesl"));
    candidates.into_iter().find(|p| p.is_dir())
}

fn nesl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            nesl_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "nesl") {
            out.push(p);
        }
    }
}

/// What the checker says about each form: `Ok(definition line or empty)` or the error
/// messages.
fn check_forms(src: &str) -> Vec<Result<String, Vec<String>>> {
    let mut session = Session::new();
    parse_items(src)
        .into_iter()
        .map(|item| {
            item.and_then(|mut form| session.check_item(&mut form))
                .map(|info| definition_line(&info).unwrap_or_default())
                .map_err(|ds| ds.into_iter().map(|d| d.message).collect())
        })
        .collect()
}

#[test]
fn definition_lines_match_the_reference() {
    let Some(dir) = corpus() else {
        eprintln!("conformance corpus not found: skipped");
        return;
    };
    let mut files = Vec::new();
    nesl_files(&dir, &mut files);
    let mut pass = 0;
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).expect("readable program");
        let expected_path = f.with_extension("expected");
        let Ok(expected) = std::fs::read_to_string(&expected_path) else {
            continue;
        };
        let want: Vec<String> = expected
            .lines()
            .filter(|l| l.contains(" = fn : "))
            .map(|l| l.trim().to_string())
            .collect();
        let got: Vec<String> = check_forms(&src)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|l| !l.is_empty())
            .collect();
        if got == want {
            pass += 1;
        } else {
            failures.push(format!(
                "{}:\n  expected {want:#?}\n  got {got:#?}",
                f.display()
            ));
        }
    }
    eprintln!(
        "conformance: definition lines of {pass}/{} programs match",
        files.len()
    );
    assert!(!files.is_empty());
    assert!(
        failures.is_empty(),
        "{} programs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_valid_form_checks() {
    let Some(dir) = corpus() else { return };
    let mut files = Vec::new();
    nesl_files(&dir, &mut files);
    let mut failures = Vec::new();
    for f in files
        .iter()
        .filter(|f| !f.components().any(|c| c.as_os_str() == "errors"))
    {
        let src = std::fs::read_to_string(f).expect("readable program");
        for (i, r) in check_forms(&src).into_iter().enumerate() {
            if let Err(msgs) = r {
                failures.push(format!("{} form {}: {msgs:?}", f.display(), i + 1));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The reference rejects exactly seven forms of `errors/04-type-unbound.nesl` at
/// compile time; so must we.
#[test]
fn type_errors_of_the_reference_are_found() {
    let Some(dir) = corpus() else { return };
    let Ok(src) = std::fs::read_to_string(dir.join("errors/04-type-unbound.nesl")) else {
        return;
    };
    let results = check_forms(&src);
    let failed: Vec<usize> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| r.is_err())
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(failed, vec![3, 4, 5, 6, 7, 8, 9], "{results:#?}");
}
