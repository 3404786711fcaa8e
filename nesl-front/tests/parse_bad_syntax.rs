//! Snapshot tests of the lexer's and parser's diagnostics on `regression/bad-syntax/*.nesl`.
//!
//! For each program the snapshot `NAME.expected` holds its diagnostics, in order, as
//! `error: FILE:LINE:COL: KIND: MESSAGE` with `note:` lines and a blank line after each
//! (the format of `check_bad_types.rs`). Files are read as bytes: one that is not UTF-8
//! gives the binary-input diagnostic of `lexer::source_from_bytes`. Every program must
//! produce at least one error; every error must lie inside the file. Run with
//! `NESL_BLESS=1` to rewrite the snapshots.

use nesl_front::diag::{DiagKind, Diagnostic, LineIndex};
use nesl_front::lexer::source_from_bytes;
use nesl_front::parser::parse_program;
use std::path::{Path, PathBuf};


fn render(file: &str, index: &LineIndex, d: &Diagnostic) -> String {
    let (line, col) = index.line_col(d.span.start as usize);
    let mut out = format!("error: {file}:{line}:{col}: {}: {}\n", d.kind.describe(), d.message);
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

/// The diagnostics for one file's bytes, rendered, and the diagnostics themselves.
fn report(file: &str, bytes: &[u8]) -> (String, Vec<Diagnostic>, usize) {
    let (src, diags) = match source_from_bytes(bytes) {
        Ok(src) => (src.to_string(), parse_program(src).1),
        Err(d) => (String::from_utf8_lossy(&bytes[..d.span.start as usize]).into_owned(), vec![d]),
    };
    let index = LineIndex::new(&src);
    let text = diags.iter().map(|d| render(file, &index, d)).collect();
    (text, diags, src.len())
}

fn programs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../regression/bad-syntax");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "nesl"));
    files.sort();
    files
}

#[test]
fn bad_syntax_snapshots() {
    let files = programs();
    assert!(files.len() >= 30, "expected at least 30 bad programs, found {}", files.len());
    let bless = std::env::var_os("NESL_BLESS").is_some();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let bytes = std::fs::read(path).expect("read bad program");
        let (text, diags, len) = report(&name, &bytes);
        if diags.is_empty() {
            failures.push(format!("{name}: no error reported"));
            continue;
        }
        for d in &diags {
            if d.span.start > d.span.end || d.span.end as usize > len.max(bytes.len()) {
                failures.push(format!("{name}: span {:?} outside the file", d.span));
            }
            if !matches!(d.kind, DiagKind::Lex | DiagKind::Syntax) {
                failures.push(format!("{name}: unexpected kind {:?}", d.kind));
            }
        }
        let expected_path = path.with_extension("expected");
        if bless {
            std::fs::write(&expected_path, &text).expect("write snapshot");
            continue;
        }
        match std::fs::read_to_string(&expected_path) {
            Ok(expected) if expected == text => {}
            Ok(expected) => failures.push(format!(
                "{name}: diagnostics differ\n--- expected\n{expected}--- actual\n{text}"
            )),
            Err(_) => failures.push(format!("{name}: no snapshot (run with NESL_BLESS=1)\n{text}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
