//! Traps and `EXIT` name their instruction's origin and the run-time call stack.

use vcode::{parse, run, CpuCvl, RunOptions, RunOutcome, Trap};

const DIV: &str = "FUNC MAIN\nCONST INT 1\nCALL OUTER\nRET\nFUNC OUTER\nCALL DIV0\nRET\nFUNC DIV0\nCONST INT 0\n/ INT\nRET\n";

fn trap_of(src: &str) -> Trap {
    let p = parse(src).unwrap();
    run(&p, &mut CpuCvl::new(), &mut Vec::new(), &RunOptions::default()).unwrap_err()
}

#[test]
fn a_trap_carries_its_origin_and_the_call_stack_innermost_first() {
    let t = trap_of(DIV);
    let s = t.site.expect("site");
    assert_eq!((s.line, s.col), (10, 1));
    assert_eq!(s.origin.pos.line, 10);
    assert_eq!(s.origin.scope, 0);
    assert_eq!(s.function, "DIV0");
    let frames: Vec<(&str, u32)> = s.stack.iter().map(|f| (f.function.as_str(), f.call.pos.line)).collect();
    assert_eq!(frames, vec![("OUTER", 6), ("MAIN", 3)]);
}

#[test]
fn exit_reports_its_site_and_stack() {
    let src = "FUNC MAIN\nCALL G1\nRET\nFUNC G1\nCONST INT 3\nEXIT\nRET\n";
    let p = parse(src).unwrap();
    let r = run(&p, &mut CpuCvl::new(), &mut Vec::new(), &RunOptions::default()).unwrap();
    // Spec 6.3: EXIT exits with status 0 whatever is on the stack.
    assert_eq!(r.outcome, RunOutcome::Exited(0));
    let s = r.exit_site.expect("exit site");
    assert_eq!((s.function.as_str(), s.line, s.instr.as_str()), ("G1", 6, "EXIT"));
    assert_eq!(s.stack.len(), 1);
    assert_eq!((s.stack[0].function.as_str(), s.stack[0].call.pos.line), ("MAIN", 2));
}

#[test]
fn a_normal_return_has_no_exit_site() {
    let p = parse("FUNC MAIN\nCONST INT 1\nRET\n").unwrap();
    let r = run(&p, &mut CpuCvl::new(), &mut Vec::new(), &RunOptions::default()).unwrap();
    assert!(r.exit_site.is_none());
}

#[test]
fn the_stepper_reports_the_stack_too() {
    let p = parse(DIV).unwrap();
    let mut cvl = CpuCvl::new();
    let mut st = vcode::Stepper::new(&p, &mut cvl, &RunOptions::default()).unwrap();
    let t = loop {
        match st.step(&mut Vec::new()) {
            Ok(_) => {}
            Err(t) => break t,
        }
    };
    let s = t.site.unwrap();
    assert_eq!(s.line, 10);
    assert_eq!(s.stack.len(), 2);
}

/// A failed NESL check: CMU's message written, then `EXIT` on a check record. The
/// message is held back and the record's data reported as a trap at the `EXIT`.
#[test]
fn exit_on_a_check_record_is_a_trap_with_its_data_and_no_message() {
    let src = "FUNC MAIN\nCONST INT (1313166156 1 5 2)\nCONST CHAR \"\nRUNTIME ERROR: Sequence reference (a[i]) out of bounds.\n\"\nWRITE CHAR\nPOP 2 0\nEXIT\nRET\n";
    let p = parse(src).unwrap();
    let mut out = Vec::new();
    let t = run(&p, &mut CpuCvl::new(), &mut out, &RunOptions::default()).unwrap_err();
    assert_eq!(t.kind, vcode::TrapKind::Check(vcode::CheckFailure::Index { index: 5, len: 2 }));
    assert_eq!(t.kind.to_string(), "index 5 is out of bounds for a sequence of length 2");
    assert_eq!(t.site.expect("site").instr, "EXIT");
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
}

/// A write that only `EXIT` follows, without a check record (hand-written VCODE, or a
/// record that is not one): its text is written as usual, and so it is when a trap
/// comes between the write and the `EXIT`.
#[test]
fn a_write_before_a_plain_exit_or_a_trap_is_still_written() {
    for (status, exited) in [("CONST INT 1", true), ("CONST INT (1313166156 1 5)", true), ("CONST INT 0\nCONST INT 0\n/ INT", false)] {
        let src = format!("FUNC MAIN\nCONST CHAR \"bye\"\nWRITE CHAR\nPOP 2 0\n{status}\nEXIT\nRET\n");
        let p = parse(&src).unwrap();
        let mut out = Vec::new();
        let r = run(&p, &mut CpuCvl::new(), &mut out, &RunOptions::default());
        assert_eq!(r.is_ok(), exited, "{status}");
        assert_eq!(String::from_utf8_lossy(&out), "bye", "{status}");
    }
}
