//! `nesl vcode FILE --opt N` names the `.vcode` line of the instruction that trapped, at
//! every optimisation level (the optimiser keeps each instruction's origin).

mod common;
use common::Scratch;
use std::path::Path;
use std::process::Command;

fn scratch(name: &str, src: &str) -> Scratch {
    Scratch::file("trap-lines", name, src)
}

/// Runs `nesl vcode FILE --opt LEVEL --backend cpu`; returns (status code, stderr).
fn run(file: &Path, level: u8) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .args(["vcode", file.to_str().expect("utf-8"), "--opt", &level.to_string(), "--backend", "cpu"])
        .output()
        .expect("run nesl");
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn check(name: &str, src: &str, line: u32, what: &str) {
    let f = scratch(name, src);
    for level in 0..=2 {
        let (code, err) = run(&f, level);
        assert_eq!(code, Some(1), "--opt {level}: {err}");
        let want = format!("error: {}:{line}:", f.display());
        assert!(err.contains(&want), "--opt {level}: expected `{want}...` in:\n{err}");
        assert!(err.contains(what), "--opt {level}: expected `{what}` in:\n{err}");
    }
}

/// Division by zero in a function called through another (both inlined at levels 1 and 2,
/// and fused with the NOT at level 2).
const DIV: &str = "\
FUNC MAIN
CONST INT (9 9)
CONST INT (3 3)
CALL OUTER
CONST INT (7 7)
CONST INT (0 0)
CALL OUTER
RET
FUNC OUTER
CALL DIVIDE
RET
FUNC DIVIDE
/ INT
NOT INT
RET
";

#[test]
fn division_by_zero_in_a_called_function_names_its_line_at_every_level() {
    check("div.vcode", DIV, 13, "division by zero");
}

/// An index out of range (EXTRACT of element 5 of a 3-element vector) in a called function.
const INDEX: &str = "\
FUNC MAIN
CONST INT (10 20 30)
CONST INT 5
CALL PICK
RET
FUNC PICK
CONST INT 3
MAKE_SEGDES
EXTRACT INT
RET
";

#[test]
fn an_index_out_of_range_in_a_called_function_names_its_line_at_every_level() {
    check("index.vcode", INDEX, 9, "out of range");
}
