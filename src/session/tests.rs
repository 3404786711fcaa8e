//! Tests of the top level: whole transcripts on the CPU executor, and the handling of
//! results, exits and traps with scripted executors.

use super::*;
use crate::exec::CpuExecutor;
use crate::{Backtrace, RuntimeError};
use std::collections::VecDeque;
use std::io::Write;

/// The transcript of `src` on the CPU executor, and the number of failed forms.
fn run(src: &str) -> (String, usize) {
    let mut top = TopLevel::new(Box::new(CpuExecutor::new()));
    let mut out = Vec::new();
    let summary = top.eval_source("test.nesl", src, &mut out).expect("writing to a Vec");
    (String::from_utf8_lossy(&out).into_owned(), summary.failed)
}

/// An executor that ignores the code and plays back scripted results, writing the
/// scripted program output first.
struct Scripted {
    steps: VecDeque<(&'static str, Result<ExecResult, Error>)>,
}

impl Executor for Scripted {
    fn execute(&mut self, _code: vcode::Program, out: &mut dyn Write) -> crate::Result<ExecResult> {
        let (text, result) = self.steps.pop_front().unwrap_or(("", Err(Error::Backend("no more scripted results".into()))));
        out.write_all(text.as_bytes()).map_err(|e| Error::Backend(e.to_string()))?;
        result
    }
}

fn scripted(src: &str, steps: Vec<(&'static str, Result<ExecResult, Error>)>) -> (String, EvalSummary) {
    let mut top = TopLevel::new(Box::new(Scripted { steps: steps.into() }));
    let mut out = Vec::new();
    let summary = top.eval_source("test.nesl", src, &mut out).expect("writing to a Vec");
    (String::from_utf8_lossy(&out).into_owned(), summary)
}

/// A run-time error with no place (as from VCODE not compiled from NESL).
fn trap(kind: vcode::TrapKind) -> Error {
    Error::Runtime(RuntimeError { trap: vcode::Trap::new(kind), backtrace: Backtrace::default() })
}

fn int(v: i64) -> vcode::Const {
    vcode::Const::ints(vec![v])
}

#[test]
fn results_exits_and_traps() {
    let src = "1 + 2;\n[1, 2] ++ [3];\n4 * 5;\n6 - 1;\n7;\n";
    let steps = vec![
        ("", Ok(ExecResult::Finished(vec![int(3)]))),
        ("hi", Ok(ExecResult::Finished(vec![HostValue::Segdes(vec![3]).into(), HostValue::Int(vec![1, 2, 3]).into()]))),
        ("\nRUNTIME ERROR: Divide by zero.\n", Ok(ExecResult::Exited(Backtrace::default()))),
        ("", Err(trap(vcode::TrapKind::IndexOutOfRange { index: 7, len: 2 }))),
        ("", Ok(ExecResult::Exited(Backtrace::default()))),
    ];
    let (text, summary) = scripted(src, steps);
    assert_eq!(
        text,
        "it = 3 : int\nhi\nit = [1, 2, 3] : [int]\nRUNTIME ERROR: Divide by zero.\n\n\
         RUNTIME ERROR: index 7 out of range for a segment of length 2\n\n\
         RUNTIME ERROR: the evaluation was aborted\n\n"
    );
    assert_eq!(summary, EvalSummary { forms: 5, failed: 3, exited: false, interrupted: false });
}

/// With two streams, every error paragraph (a diagnostic, a check the program failed
/// and its place, a trap) goes to the second; results and program output to the first,
/// each line whole.
#[test]
fn errors_go_to_their_own_stream() {
    let src = "1 + 2;\n1 + true;\n4 * 5;\n6 - 1;\n7;\n";
    let steps = vec![
        ("abc", Ok(ExecResult::Finished(vec![int(3)]))),
        ("half", Ok(ExecResult::Exited(Backtrace::default()))),
        ("\nRUNTIME ERROR: Divide by zero.\n", Ok(ExecResult::Exited(Backtrace::default()))),
        ("", Err(trap(vcode::TrapKind::IndexOutOfRange { index: 7, len: 2 }))),
    ];
    let mut top = TopLevel::new(Box::new(Scripted { steps: steps.into() }));
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let summary = top.eval_source_split("test.nesl", src, &mut out, &mut err).expect("writing to a Vec");
    assert_eq!(summary.failed, 4);
    let (out, err) = (String::from_utf8_lossy(&out), String::from_utf8_lossy(&err));
    assert_eq!(out, "abc\nit = 3 : int\nhalf\n");
    assert!(err.starts_with("error"), "{err}");
    assert!(err.ends_with(
        "\n\nRUNTIME ERROR: Divide by zero.\n\nRUNTIME ERROR: index 7 out of range for a segment of length 2\n\n"
    ), "{err}");
    assert!(!err.contains("it = "), "{err}");
}

#[test]
fn results_that_do_not_fit_their_type_are_errors() {
    let steps = vec![
        ("", Ok(ExecResult::Finished(vec![int(1), int(2)]))),
        ("", Ok(ExecResult::Finished(vec![HostValue::Float(vec![f64::NAN]).into()]))),
    ];
    let (text, summary) = scripted("1;\n2.0 / 0.0;\n", steps);
    assert_eq!(summary.failed, 2, "{text}");
    assert_eq!(text.matches("RUNTIME ERROR").count(), 2, "{text}");
    assert!(text.ends_with("\n\n"), "{text:?}");
}

#[test]
fn transcript_of_definitions_and_values() {
    let src = "\
function sq(x) = x * x;
sq(7);
x = [1, 2, 3];
{sq(a) : a in x};
(a, b) = (1, 2.5);
a;
datatype point(int, int);
p = point(3, 4);
\"abc\";
`a;
(1, 2, 3);
((1, 2), 3);
[[1, 2], [] int, [3]];
[(1, f), (2, t)];
";
    let (text, failed) = run(src);
    assert_eq!(failed, 0, "{text}");
    let want = "\
sq = fn : a -> a :: (a in number)
it = 49 : int
x = [1, 2, 3] : [int]
it = [1, 4, 9] : [int]
(a, b) = (1, 2.5) : int, float
it = 1 : int
point = fn : (int, int) -> point
p = point(3, 4) : point
it = \"abc\" : [char]
it = `a : char
it = (1, 2, 3) : int, int, int
it = ((1, 2), 3) : (int, int), int
it = [[1, 2], [], [3]] : [[int]]
it = [(1, F), (2, T)] : [(int, bool)]
";
    assert_eq!(text, want);
}

#[test]
fn errors_are_paragraphs_and_evaluation_goes_on() {
    let src = "1 + ;\n2;\n1 + 2.0;\n3;\nundefined_name;\n[1, 2, 3][5];\n4;\n";
    let (text, failed) = run(src);
    assert_eq!(failed, 4, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("error"), "{text}");
    for want in ["it = 2 : int", "it = 3 : int", "it = 4 : int"] {
        assert!(lines.contains(&want), "missing {want:?} in\n{text}");
    }
    assert!(text.contains("runtime error: index 5 is out of bounds for a sequence of length 3"), "{text}");
    // Every error paragraph ends with a blank line before the next result.
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("it = ") && i > 0 {
            let prev = lines[i - 1];
            assert!(prev.is_empty() || prev.starts_with("it = "), "line {i} follows {prev:?}\n{text}");
        }
    }
}

#[test]
fn globals_survive_and_failed_bindings_do_not_bind() {
    let src = "y = 10;\ny = [1, 2][7];\ny + 1;\nit * 2;\n";
    let (text, failed) = run(src);
    assert_eq!(failed, 1, "{text}");
    assert!(text.contains("it = 11 : int"), "{text}");
    assert!(text.contains("it = 22 : int"), "{text}");
}

#[test]
fn commands() {
    let src = "set print_length 3;\n[1, 2, 3, 4, 5];\nset print_length 0;\n[1];\nset arg_check off;\nset nonsense 1;\nexit;\n99;\n";
    let (text, failed) = run(src);
    assert_eq!(failed, 1, "{text}");
    assert!(text.contains("it = [1, 2, 3,...] : [int]"), "{text}");
    assert!(text.contains("it = [...] : [int]"), "{text}");
    assert!(!text.contains("99"), "{text}");
}

#[test]
fn load_is_relative_to_the_file() {
    let dir = std::env::temp_dir().join(format!("nesl-toplevel-load-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    std::fs::write(dir.join("lib.nesl"), "function twice(x) = 2 * x;\n").expect("write lib");
    let main = dir.join("main.nesl");
    std::fs::write(&main, "load \"lib\";\ntwice(21);\nload \"missing.nesl\";\n").expect("write main");
    let mut top = TopLevel::new(Box::new(CpuExecutor::new()));
    let mut out = Vec::new();
    let summary = top.eval_file(&main, &mut out).expect("writing to a Vec");
    let text = String::from_utf8_lossy(&out);
    assert_eq!(summary.failed, 1, "{text}");
    assert!(text.starts_with("twice = fn : int -> int\nit = 42 : int\nerror"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plain_render_names_the_place() {
    let src = "x = 1;\n  y z;\n";
    let d = nesl_front::Diagnostic::new(nesl_front::DiagKind::Syntax, nesl_front::Span::new(11, 12), "unexpected `z`")
        .with_note(None, "a note");
    assert_eq!(
        plain_render("f.nesl", src, &[d]),
        "error: f.nesl:2:5: syntax error: unexpected `z`\n  note: a note\n\n"
    );
}

/// The slots of global `name` that the executor keeps in its vector library.
fn resident_slots(top: &TopLevel, name: &str) -> usize {
    top.globals()[name].slots.iter().filter(|c| matches!(c, vcode::Const::Resident(_))).count()
}

#[test]
fn large_globals_stay_in_the_vector_library_across_forms_and_executors() {
    let mut top = TopLevel::new(crate::Config::new(crate::Backend::Cpu, 2).executor().expect("the CPU library"));
    let mut out = Vec::new();
    let src = "n = 5;\nxs = {i * i : i in index(1000)};\nys = {x + n : x in xs};\nsum(ys);\nnest = {index(i) : i in index(40)};\n";
    let summary = top.eval_source("test.nesl", src, &mut out).expect("writing to a Vec");
    let text = String::from_utf8_lossy(&out).into_owned();
    assert_eq!(summary.failed, 0, "{text}");
    assert!(text.contains("it = 332838500 : int"), "{text}");
    // A scalar comes back to the host (the optimiser folds it into later forms); a
    // sequence of 1000 elements stays: its segment descriptor (one segment) is small, its
    // data is not.
    assert_eq!(resident_slots(&top, "n"), 0);
    assert_eq!(resident_slots(&top, "xs"), 1);
    assert_eq!(resident_slots(&top, "ys"), 1);
    // 40 segments and 780 elements: both kept.
    assert_eq!(resident_slots(&top, "nest"), 2);
    // Another optimisation level: another library; the values move with the globals.
    top.set_executor(crate::Config::new(crate::Backend::Cpu, 0).executor().expect("the CPU library")).expect("moved");
    assert_eq!(resident_slots(&top, "xs"), 1);
    let mut out = Vec::new();
    top.eval_source("test.nesl", "sum(ys) - sum(xs);\n{sum(v) : v in nest}[39];\nxs[999];\n", &mut out).expect("writing to a Vec");
    let text = String::from_utf8_lossy(&out).into_owned();
    assert!(text.contains("it = 5000 : int"), "{text}");
    assert!(text.contains("it = 741 : int"), "{text}");
    assert!(text.contains("it = 998001 : int"), "{text}");
}

/// The transcript of `src` on the CPU executor with the values of dead variables
/// dropped, checked to equal the transcript without dropping; with the number of failed
/// forms (of the run without) and the names still bound afterwards.
fn run_dropping(src: &str) -> (String, usize, Vec<String>) {
    let (want, failed) = run(src);
    let mut top = TopLevel::new(Box::new(CpuExecutor::new())).dropping_dead_globals();
    let mut out = Vec::new();
    top.eval_source("test.nesl", src, &mut out).expect("writing to a Vec");
    let got = String::from_utf8_lossy(&out).into_owned();
    assert_eq!(got, want);
    (got, failed, top.globals().keys().cloned().collect())
}

#[test]
fn a_variable_no_later_form_names_is_dropped_and_the_transcript_is_the_same() {
    let src = "rs = {rand(r) : r in dist(10, 8)};\nxs = take(rs, 3);\nys = {x * 2 : x in xs};\nsum(ys) == 2 * sum(xs);\nys;\n";
    let (got, failed, left) = run_dropping(src);
    assert_eq!(failed, 0, "{got}");
    // Every variable of the file is dead after its last form; the environment's stay.
    for name in ["rs", "xs", "ys", "it"] {
        assert!(!left.contains(&name.to_string()), "{name} is still bound: {left:?}");
    }
    assert!(left.contains(&"user".to_string()), "{left:?}");
}

#[test]
fn a_variable_a_function_names_is_kept() {
    let src = "k = 5;\nfunction g(x) = x + k;\ng(1);\ng(2);\n";
    let (got, _, left) = run_dropping(src);
    assert!(got.contains("it = 7 : int"), "{got}");
    assert!(left.contains(&"k".to_string()), "{left:?}");
    assert!(!left.contains(&"it".to_string()), "{left:?}");
}

#[test]
fn a_dropped_variable_was_needed_by_no_later_form() {
    // `a` is last named by the third form: the fourth still sees `b` and the rebound `a`.
    let src = "a = [1, 2, 3];\nb = a;\nc = #a;\na = [4];\nb ++ a;\nc;\n";
    let (got, failed, _) = run_dropping(src);
    assert_eq!(failed, 0, "{got}");
    assert!(got.contains("it = [1, 2, 3, 4] : [int]"), "{got}");
}
