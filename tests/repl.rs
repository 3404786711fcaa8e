//! `nesl repl` driven by a script on standard input (not a terminal: no prompts, no line
//! editing), compared with an expected transcript.

mod common;

use common::{check_transcript, run_nesl, run_nesl_merged};

/// Defines, uses and redefines a function, loads a file, describes three built-ins,
/// switches settings, and goes on after errors (type, syntax, runtime, bad settings).
/// The transcript is both streams as a terminal shows them; the results alone are on
/// standard output, the error paragraphs alone on standard error. Forms failed, so the
/// status is 1.
#[test]
fn scripted_session_matches_its_transcript() {
    let input = std::fs::read_to_string(common::sessions().join("repl-basic.in")).unwrap();
    let (status, both) = run_nesl_merged(&["repl", "--backend", "cpu"], &input);
    assert_eq!(status, 1, "{both}");
    check_transcript("repl-basic.expected", &both);
    let (status, out, err) = run_nesl(&["repl", "--backend", "cpu"], &input);
    assert_eq!(status, 1);
    let errors = regression::compare::is_error_start;
    assert!(!out.lines().any(errors), "an error paragraph on stdout:\n{out}");
    assert!(err.lines().next().is_some_and(errors), "{err}");
    assert!(err.lines().all(|l| !l.contains(" = ") || l.contains("|") || l.contains("note")), "a result on stderr:\n{err}");
    // In order: the terminal's view less its error paragraphs (each up to and with its
    // blank line) is stdout.
    let mut rest = String::new();
    let mut in_error = false;
    for line in both.lines() {
        if in_error || errors(line) {
            in_error = !line.is_empty();
            continue;
        }
        rest.push_str(line);
        rest.push('\n');
    }
    assert_eq!(rest, out);
}

/// A REPL fed by a pipe exits with status 0 when every form went through.
#[test]
fn status_is_zero_when_no_form_failed() {
    let (status, out, err) = run_nesl(&["repl"], "function inc(x) = x + 1;\ninc(1);\n");
    assert_eq!((status, err.as_str()), (0, ""), "{out}");
}

/// Without `exit;`, the end of the input ends the session; an unterminated last form is
/// reported, not dropped.
#[test]
fn end_of_input_ends_the_session() {
    let (status, out, err) = run_nesl(&["repl"], "x = 2;\nx * 21;\n1 +\n");
    assert_eq!(status, 1, "the unterminated form failed");
    assert_eq!(out, "x = 2 : int\nit = 42 : int\n");
    assert!(err.contains("end of input"), "{err}");
}

/// A definition made in one input is used by a later one, and `it` carries over.
#[test]
fn definitions_and_it_persist_between_inputs() {
    let (_, out, _) = run_nesl(&["repl"], "function twice(x) = 2 * x;\n[1, 2, 3];\n{twice(e) : e in it};\n");
    assert_eq!(out, "twice = fn : int -> int\nit = [1, 2, 3] : [int]\nit = [2, 4, 6] : [int]\n");
}

/// `set backend cuda;` either switches (a GPU is present) or says why not and keeps the
/// backend it had; either way the session goes on.
#[test]
fn switching_to_cuda_switches_or_says_why_not() {
    let (status, out, err) = run_nesl(&["repl", "--backend", "cpu"], "set backend cuda;\n1 + 1;\n");
    assert_eq!(out, "it = 2 : int\n");
    assert!(
        (status, err.as_str()) == (0, "") || (status == 1 && err.starts_with("error: <stdin>:1:1: the setting was not changed: ")),
        "{status} {err}"
    );
}

/// A run-time error in a function defined by an earlier input points into that input's
/// text (every input is named `<stdin>`), with the apply-to-each level of the call.
#[test]
fn runtime_errors_point_into_the_input_that_defined_the_function() {
    let input = "function get(a, i) = a[i];\n\nget([1, 2], 5);\nfunction g2(xs) = {get(xs, i) : i in [0, 9]};\ng2([1]);\n";
    let (status, _, out) = run_nesl(&["repl", "--backend", "cpu"], input);
    assert_eq!(status, 1);
    let snippet = "  --> <stdin>:1:22\n  |\n1 | function get(a, i) = a[i];\n  |                      ^^^^\n";
    assert_eq!(out.matches(snippet).count(), 2, "{out}");
    assert!(out.contains("= note: called from function `g2` at <stdin>:4:20, applied to each element at 4:19\n"), "{out}");
}
