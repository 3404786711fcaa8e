//! `nesl debug` driven by scripts on standard input: a hand-written recursive VCODE
//! program compared with an exact transcript, and the recursive NESL quicksort checked
//! for what a session must show (its instruction numbers come from the compiler, so the
//! script finds them in `nesl compile`'s output).

mod common;

use common::{assert_in_order, check_transcript, run_nesl};

#[test]
fn vcode_session_matches_its_transcript() {
    let input = std::fs::read_to_string(common::sessions().join("debug-nested.in")).unwrap();
    let (status, out, err) = run_nesl(&["debug", "nested.vcode"], &input);
    assert_eq!(status, 0, "stderr: {err}");
    check_transcript("debug-nested.expected", &out);
}

/// The function of the compiled quicksort that calls itself (the lifted instance of
/// `qsort`: the top level calls the serial one, which calls the lifted one on the parts)
/// and the index of that recursive `CALL`.
fn qsort_call() -> (String, usize) {
    let (status, vcode, err) = run_nesl(&["compile", "qsort.nesl"], "");
    assert_eq!(status, 0, "{err}");
    let program = vcode::parse(&vcode).expect("the compiled quicksort parses");
    let self_call = |f: &vcode::Function| {
        f.body.iter().position(|i| i.op.info().name == "CALL" && matches!(&i.imm, vcode::Imm::Label(l) if *l == f.name))
    };
    let f = program
        .functions
        .iter()
        .find(|f| f.name.starts_with("QSORT_") && self_call(f).is_some())
        .expect("a recursive QSORT function");
    (f.name.clone(), self_call(f).unwrap_or(0))
}

#[test]
fn quicksort_session_breaks_steps_and_finishes() {
    let (qs, rec) = qsort_call();
    let script = format!(
        "break qsort\ncontinue\nbt\ndelete\nbreak {qs}:{rec}\ncontinue\nstep\nbt\nstack\nfinish\n\
         delete\nnext\nfinish\ncontinue\nquit\n"
    );
    let (status, out, err) = run_nesl(&["debug", "qsort.nesl"], &script);
    assert_eq!(status, 0, "stderr: {err}");
    let after = rec + 1;
    assert_in_order(
        &out,
        &[
            "at MAIN1_1 0:",
            "[the top-level forms of qsort.nesl]",
            // `break qsort` names the NESL function: every instance gets a breakpoint.
            "(ndb) break qsort\nbreakpoint 1 at QSORT_",
            "[qsort at qsort.nesl:2:1]",
            "(ndb) continue\nbreakpoint 1, QSORT_",
            "(ndb) bt\n#0 QSORT_",
            "\n#1 MAIN1_1 ",
            ": CALL QSORT_",
            "(ndb) delete\ndeleted ",
            // (`break qsort` set one breakpoint per instance: serial and lifted)
            "(ndb) continue\nbreakpoint ",
            &format!(", {qs} {rec}: CALL QSORT_"),
            // `step` enters the recursive call.
            "(ndb) step\nat QSORT_",
            " 0: ",
            "(ndb) bt\n#0 QSORT_",
            &format!("\n#1 {qs} {rec}: CALL QSORT_"),
            // (then the serial instance's call of the lifted one)
            " MAIN1_1 ",
            // The recursive call's argument is the nested sequence of the two parts.
            "(ndb) stack\n",
            "as nested: [[",
            // The inner call recurses too: `finish` stops at the breakpoint there.
            "(ndb) finish\nbreakpoint ",
            &format!(", {qs} {rec}: CALL QSORT_"),
            "(ndb) delete\ndeleted 1 breakpoint\n",
            // `next` runs the whole recursive call: the next instruction, same function.
            &format!("(ndb) next\nat {qs} {after}: "),
            // `finish` returns to the instruction after the outer recursive call.
            "(ndb) finish\nreturned from QSORT_",
            &format!("at {qs} {after}: "),
            "(ndb) continue\nthe program finished after ",
            "( 1 2 3 5 7 8 9 )\n(ndb) quit\n",
        ],
    );
}

/// The same session on the CUDA vector library (on a GPU, or emulated on the CPU where
/// `NESL_CUDA_EMULATE=1` can start it) gives the same transcript after its first line.
#[test]
fn vcode_session_is_the_same_on_the_cuda_backend() {
    let input = std::fs::read_to_string(common::sessions().join("debug-nested.in")).unwrap();
    let args = ["debug", "--backend", "cuda", "nested.vcode"];
    let (mut status, mut out, mut err) = run_nesl(&args, &input);
    if status != 0 {
        (status, out, err) = common::run_nesl_env(&args, &input, &[("NESL_CUDA_EMULATE", "1")]);
    }
    if status != 0 && err.contains("the CUDA backend cannot start") {
        eprintln!("skipped: no GPU and no CUDA emulation here: {err}");
        return;
    }
    assert_eq!(status, 0, "stderr: {err}");
    let expected = std::fs::read_to_string(common::sessions().join("debug-nested.expected")).unwrap();
    assert!(out.starts_with("2 functions, 23 instructions, on the cuda backend."), "{out}");
    let tail = |s: &str| s.split_once('\n').map(|(_, t)| t.to_string()).unwrap_or_default();
    assert_eq!(tail(&out), tail(&expected));
}

#[test]
fn a_runtime_error_stops_the_program_and_names_the_instruction() {
    let (status, out, _) = run_nesl(&["debug", "trap.vcode"], "continue\nbt\nstep\nstack\n");
    assert_eq!(status, 0);
    assert_in_order(
        &out,
        &[
            "(ndb) continue\nRUNTIME ERROR: division by zero (VCODE function DIV, line 8, at `/ INT`)",
            "(ndb) bt\n#0 DIV 0: / INT\n#1 MAIN 2: CALL DIV\n",
            "(ndb) step\nthe program is not running (stopped by a runtime error)",
            "(ndb) stack\n2 slots (depth 0 is the top):\n  [0] INT    length 1: ( 0 )\n  [1] INT    length 1: ( 1 )\n",
        ],
    );
}

#[test]
fn a_file_that_cannot_be_loaded_is_reported_with_its_place() {
    let (status, out, err) = run_nesl(&["debug", "missing.vcode"], "");
    assert_eq!((status, out.as_str()), (1, ""));
    assert!(err.contains("error: missing.vcode: cannot read the file"), "{err}");
    let (status, out, err) = run_nesl(&["debug", "bad.nesl"], "");
    assert_eq!((status, out.as_str()), (1, ""));
    assert!(err.contains("bad.nesl:2:"), "{err}");
}

/// The debugger shows the NESL source line of the instruction it stops at (from the
/// instruction's origin): the top-level form at the start, the `if` inside `qsort` a few
/// steps into the function.
#[test]
fn stepping_shows_the_nesl_source_line() {
    let (status, out, err) = run_nesl(&["debug", "qsort.nesl"], "break qsort\ncontinue\nstep\nstep\nquit\n");
    assert_eq!(status, 0, "stderr: {err}");
    assert_in_order(
        &out,
        &[
            "at MAIN1_1 0: ",
            "\n    qsort.nesl:10:7 | qsort([5, 3, 8, 1, 9, 2, 7]);\n",
            "(ndb) continue\nbreakpoint 1, QSORT_",
            "(ndb) step\nat QSORT_",
            "(ndb) step\nat QSORT_",
            "\n    qsort.nesl:3:6 |   if #s < 2 then s\n(ndb) quit",
        ],
    );
}
