//! Where `nesl run` writes (issue 16): results and program output on stdout, every
//! error paragraph on stderr; a closed stdout ends the run quietly; a huge source line
//! gives a short error message.

mod common;
use common::Scratch;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

fn scratch(name: &str, text: &str) -> Scratch {
    Scratch::file("streams", name, text)
}

fn nesl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nesl"));
    c.env("NESL_THREADS", "2");
    c
}

/// Results (each on its own line, program output on a fresh line) on stdout; a syntax
/// error, a type error, a failed check and a trap on stderr; status 1.
#[test]
fn results_on_stdout_errors_on_stderr() {
    let file = scratch(
        "mixed.nesl",
        "print_string(\"abc\");\n1 + 1;\nx = [1, 2, 3];\nx[5];\nprint_string(\"hello\");\n1 + true;\n{a / 0 : a in x};\nfunction ( ;\n3;\n",
    );
    let out = nesl().args(["run", "--backend", "cpu", file.as_str()]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout,
        "abc\nit = T : bool\nit = 2 : int\nx = [1, 2, 3] : [int]\nhello\nit = T : bool\nit = 3 : int\n"
    );
    let paragraphs: Vec<&str> = stderr.split("\n\n").filter(|p| !p.trim().is_empty()).collect();
    assert_eq!(paragraphs.len(), 4, "{stderr}");
    assert!(paragraphs.iter().all(|p| regression::compare::is_error_start(p)), "{stderr}");
    assert!(paragraphs[0].contains("out of bounds") && paragraphs[2].contains("division by zero"), "{stderr}");
}

/// `nesl run f.nesl | head -1`: the reader goes away after the first line; the run ends
/// quietly (no `Broken pipe` message), with status 0, without running to its end.
#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    let mut text = String::from("function spin(n) = if n < 0 then n else spin(n + 1);\n");
    for i in 0..2000 {
        text.push_str(&format!("{i} + 1;\nprint_string(\"line {i}\");\n"));
    }
    text.push_str("spin(0);\n");
    let file = scratch("pipe.nesl", &text);
    let mut child = nesl().args(["run", "--backend", "cpu", file.as_str()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    // The reader is dropped here: the pipe is closed.
    assert_eq!(first, "spin = fn : int -> int\n");
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(err, "", "stderr after the pipe closed");
    assert_eq!(status.code(), Some(0));
}

/// A 132 KB one-line program with an error in the middle: the message shows a window of
/// the line, not the line.
#[test]
fn a_huge_line_gives_a_short_message() {
    // Many forms on one line (as generated code may write them), one of them wrong.
    let mut line = String::new();
    while line.len() < 66_000 {
        line.push_str("a = 1; ");
    }
    line.push_str("b = 1 + true; ");
    while line.len() < 132_000 {
        line.push_str("a = 1; ");
    }
    let file = scratch("long.nesl", &format!("{line}\n"));
    let out = nesl().args(["run", "--backend", "cpu", file.as_str()]).stdout(Stdio::null()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.starts_with("error"), "{}", &stderr[..stderr.len().min(500)]);
    assert!(stderr.len() < 2000, "{} bytes of error output", stderr.len());
    assert!(stderr.contains("true"), "{stderr}");
}

/// A VCODE file that defines a function twice (`regression/vcode/control.vcode`): the
/// later definition wins, as the spec says, and a warning on stderr names both places;
/// stdout is the program's output alone.
#[test]
fn a_function_defined_twice_is_a_warning_naming_both_places() {
    let root = env!("CARGO_MANIFEST_DIR");
    let file = format!("{root}/regression/vcode/control.vcode");
    let out = nesl().args(["vcode", "--backend", "cpu", file.as_str()]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let expected = std::fs::read_to_string(format!("{root}/regression/vcode/control.expected")).unwrap();
    assert_eq!(stdout, expected);
    assert_eq!(
        stderr,
        format!("warning: {file}:34:1: function `TWICE` is defined again; this definition replaces the one at {file}:30:1\n")
    );
}
