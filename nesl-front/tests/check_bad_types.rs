//! Snapshot tests of the checker's diagnostics on `regression/bad-types/*.nesl`.
//!
//! For each program the snapshot `NAME.expected` holds what the checker reports, form by
//! form: the definition line (`name = fn : type`) of each good definition and, for each
//! bad form, its diagnostics as `error: FILE:LINE:COL: KIND: MESSAGE` with `note:` lines
//! and a blank line after each. (Each error paragraph starts with `error` and ends with
//! a blank line, so the files also satisfy the conformance comparison rule for `nesl
//! run`, which prints no other lines for these programs.) Every program must produce at
//! least one error, each with a non-empty span. Run with `NESL_BLESS=1` to rewrite the
//! snapshots.

use nesl_front::check::{definition_line, Session};
use nesl_front::diag::{DiagKind, Diagnostic, LineIndex};
use nesl_front::parser::parse_items;
use std::path::{Path, PathBuf};


fn render(file: &str, index: &LineIndex, d: &Diagnostic) -> String {
    let (line, col) = index.line_col(d.span.start as usize);
    let mut out = format!(
        "error: {file}:{line}:{col}: {}: {}\n",
        d.kind.describe(),
        d.message
    );
    for (span, note) in &d.notes {
        match span {
            Some(s) => {
                let (l, c) = index.line_col(s.start as usize);
                out.push_str(&format!("  note: {file}:{l}:{c}: {note}\n"));
            }
            None => out.push_str(&format!("  note: {note}\n")),
        }
    }
    out.push('\n');
    out
}

/// The report for one program, and the number of diagnostics in it.
fn report(file: &str, src: &str) -> (String, Vec<Diagnostic>) {
    let index = LineIndex::new(src);
    let mut session = Session::new();
    let mut out = String::new();
    let mut all = Vec::new();
    for item in parse_items(src) {
        match item.and_then(|mut form| session.check_item(&mut form)) {
            Ok(info) => {
                if let Some(line) = definition_line(&info) {
                    out.push_str(&line);
                    out.push('\n');
                }
            }
            Err(diags) => {
                for d in &diags {
                    out.push_str(&render(file, &index, d));
                }
                all.extend(diags);
            }
        }
    }
    (out, all)
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../regression/bad-types")
}

#[test]
fn bad_types_snapshots() {
    let bless = std::env::var_os("NESL_BLESS").is_some();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("regression/bad-types exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "nesl"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "only {} bad-types programs", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let src = std::fs::read_to_string(f).expect("readable program");
        let (got, diags) = report(&name, &src);
        if diags.is_empty() {
            failures.push(format!("{name}: no error reported"));
        }
        for d in &diags {
            if d.span.end <= d.span.start || d.span.end as usize > src.len() {
                failures.push(format!("{name}: diagnostic without a proper span: {d:?}"));
            }
            if !matches!(d.kind, DiagKind::Name | DiagKind::Type) {
                failures.push(format!("{name}: not a name or type error: {d:?}"));
            }
        }
        let snap = f.with_extension("expected");
        if bless {
            std::fs::write(&snap, &got).expect("snapshot written");
            continue;
        }
        match std::fs::read_to_string(&snap) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!(
                "{name}: snapshot differs\n--- expected\n{want}--- got\n{got}"
            )),
            Err(_) => failures.push(format!(
                "{name}: no snapshot (run with NESL_BLESS=1)\n{got}"
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
