//! Every pass keeps the origin of each instruction: a trap names the same place of the
//! VCODE text at every level, and inlined instructions record the calls they came from.

mod common;

use common::{check_origins, opt};
use vcode::{CpuCvl, Origin, Program, RunOptions};

/// MAIN calls AA twice, AA calls BB, BB divides and complements. The second call divides
/// by zero.
const SRC: &str = "\
FUNC MAIN
CONST INT (9 9)
CONST INT (3 3)
CALL AA
CONST INT (7 7)
CONST INT (0 0)
CALL AA
RET
FUNC AA
CALL BB
RET
FUNC BB
/ INT
NOT INT
RET
";
const DIV_LINE: u32 = 13;
const NOT_LINE: u32 = 14;

fn parse(src: &str) -> Program {
    vcode::parse(src).unwrap()
}

/// The lines of an origin's inline chain, innermost call first.
fn chain(p: &Program, o: Origin) -> Vec<u32> {
    let mut out = Vec::new();
    let mut k = o.inlined_at;
    while k != 0 {
        let s = p.inline_sites[k as usize - 1];
        out.push(s.pos.line);
        k = s.inlined_at;
    }
    out
}

fn trap_line(p: &Program) -> (u32, String, Vec<u32>) {
    let t = vcode::run(p, &mut CpuCvl::new(), &mut Vec::new(), &RunOptions::default()).unwrap_err();
    let s = t.site.unwrap();
    (s.origin.pos.line, s.function, chain(p, s.origin))
}

#[test]
fn two_level_inlining_records_the_whole_call_chain() {
    let p = parse(SRC);
    let q = fcode_opt::inline::inline(&p).unwrap();
    check_origins("inline", &q);
    assert_eq!(q.functions.len(), 1, "everything is inlined into MAIN:\n{q}");
    let main = &q.functions[0];
    let divs: Vec<Origin> =
        main.body.iter().zip(&main.origins).filter(|(i, _)| i.op == vcode::Opcode::Div).map(|(_, o)| *o).collect();
    assert_eq!(divs.len(), 2);
    for d in &divs {
        assert_eq!(d.pos.line, DIV_LINE);
    }
    // BB's division, inlined into AA at line 10, then AA into MAIN at lines 4 and 7.
    assert_eq!(chain(&q, divs[0]), vec![10, 4]);
    assert_eq!(chain(&q, divs[1]), vec![10, 7]);
    // MAIN's own instructions are not inlined.
    assert_eq!(main.origins[0], Origin::vcode(vcode::Pos { line: 2, col: 1 }));
}

#[test]
fn a_callee_that_stays_keeps_its_own_chains() {
    // AA is too big to inline everywhere (even as a leaf, once BB is in it) and has two
    // callers: BB goes into AA, AA stays.
    let mut big = String::from("FUNC AA\nCALL BB\n");
    for _ in 0..BIG_LENGTHS {
        // Seven lines, one computational instruction (LENGTH) each time.
        big.push_str("COPY 1 0\nPOP 1 0\nCONST INT 1\nPOP 1 0\nCOPY 1 0\nLENGTH INT\nPOP 1 0\n");
    }
    big.push_str("RET\n");
    let src = format!(
        "FUNC MAIN\nCONST INT (9 9)\nCONST INT (3 3)\nCALL AA\nCONST INT (7 7)\nCONST INT (0 0)\nCALL AA\nRET\n{big}FUNC BB\n/ INT\nRET\n"
    );
    let p = parse(&src);
    let q = fcode_opt::inline::inline(&p).unwrap();
    check_origins("inline", &q);
    let aa = q.functions.iter().find(|f| f.name == "AA").expect("AA stays");
    let div = aa.body.iter().position(|i| i.op == vcode::Opcode::Div).unwrap();
    assert_eq!(chain(&q, aa.origins[div]), vec![10]);
    // At run time: the trap is in AA, the runtime stack says which call.
    let t = vcode::run(&q, &mut CpuCvl::new(), &mut Vec::new(), &RunOptions::default()).unwrap_err();
    let s = t.site.unwrap();
    assert_eq!((s.function.as_str(), s.origin.pos.line), ("AA", DIV_LINE_BIG));
    assert_eq!(s.stack.iter().map(|f| f.call.pos.line).collect::<Vec<_>>(), vec![7]);
}
const BIG_LENGTHS: usize = fcode_opt::inline::LEAF_INLINE_LIMIT + 6;
const DIV_LINE_BIG: u32 = 9 + 2 + BIG_LENGTHS as u32 * 7 + 2;

#[test]
fn the_trap_names_the_same_line_at_every_level() {
    let p = parse(SRC);
    assert_eq!(trap_line(&p), (DIV_LINE, "BB".to_string(), vec![]));
    let q1 = opt(&p, 1);
    check_origins("level 1", &q1);
    assert_eq!(trap_line(&q1), (DIV_LINE, "MAIN".to_string(), vec![10, 7]));
    let q2 = opt(&p, 2);
    check_origins("level 2", &q2);
    assert!(!q2.superops.is_empty(), "the division and NOT are fused:\n{q2}");
    assert_eq!(trap_line(&q2), (DIV_LINE, "MAIN".to_string(), vec![10, 7]));
}

#[test]
fn a_fused_operation_takes_the_origin_of_its_division() {
    let q2 = opt(&parse(SRC), 2);
    let main = &q2.functions[0];
    for (ins, o) in main.body.iter().zip(&main.origins) {
        if ins.op == vcode::Opcode::Fused {
            assert_eq!(o.pos.line, DIV_LINE, "`{ins}`");
        }
    }
    // At level 1 the operations stay separate, each with its own line.
    let q1 = opt(&parse(SRC), 1);
    let main = &q1.functions[0];
    let lines: Vec<(String, u32)> = main
        .body
        .iter()
        .zip(&main.origins)
        .filter(|(i, _)| matches!(i.op, vcode::Opcode::Div | vcode::Opcode::Not))
        .map(|(i, o)| (i.to_string(), o.pos.line))
        .collect();
    assert_eq!(
        lines,
        vec![
            ("/ INT".to_string(), DIV_LINE),
            ("NOT INT".to_string(), NOT_LINE),
            ("/ INT".to_string(), DIV_LINE),
            ("NOT INT".to_string(), NOT_LINE)
        ]
    );
}

#[test]
fn every_instruction_keeps_a_line_and_ret_gets_the_function_end() {
    for level in [1, 2] {
        let q = opt(&parse(SRC), level);
        check_origins("SRC", &q);
        let main = &q.functions[0];
        assert_eq!(main.origins.last().unwrap().pos.line, 8, "RET of MAIN");
        assert_eq!(main.pos.line, 1);
    }
}

/// MAIN calls RATIO, which divides twice and adds: at level 2 the three operations are one
/// superoperator. Only the second division (line 10) divides by zero.
const TWO_DIVS: &str = "\
FUNC MAIN
CONST INT (1 2 3)
CONST INT (1 1 1)
CALL RATIO
RET
FUNC RATIO
/ INT
CONST INT (4 5 6)
CONST INT (1 0 1)
/ INT
+ INT
RET
";

#[test]
fn a_fused_instruction_keeps_the_origin_of_each_operation_it_fused() {
    let p = parse(TWO_DIVS);
    let q = opt(&p, 2);
    check_origins("two divisions", &q);
    let main = &q.functions[0];
    let fused: Vec<Origin> =
        main.body.iter().zip(&main.origins).filter(|(i, _)| i.op == vcode::Opcode::Fused).map(|(_, o)| *o).collect();
    assert_eq!(fused.len(), 1, "one superoperator:\n{q}");
    let o = fused[0];
    // Both divisions and the addition, in evaluation order, each inlined at the CALL.
    let parts = q.parts_of(o);
    assert_eq!(parts.iter().map(|p| p.pos.line).collect::<Vec<_>>(), vec![7, 10, 11]);
    for part in parts {
        assert_eq!(chain(&q, *part), vec![4]);
    }
    // The instruction itself names its first division.
    assert_eq!(o.pos.line, 7);
    // The listing shows them.
    let text = q.with_origins(Some("two.vcode")).to_string();
    assert!(text.contains("FUSED 0 { two.vcode:7:1, inlined at two.vcode:4:1; fuses / at 7:1, / at 10:1, + at 11:1 }"), "{text}");
    assert!(vcode::parse(&text).expect("the listing reads back").same_code(&q));
}

#[test]
fn a_trap_in_a_fused_instruction_names_the_operation_that_failed() {
    let p = parse(TWO_DIVS);
    assert_eq!(trap_line(&p), (10, "RATIO".to_string(), vec![]));
    assert_eq!(trap_line(&opt(&p, 1)), (10, "MAIN".to_string(), vec![4]));
    let q = opt(&p, 2);
    assert_eq!(q.superops.len(), 1, "{q}");
    assert_eq!(trap_line(&q), (10, "MAIN".to_string(), vec![4]), "not the first division, line 7:\n{q}");
    // The same program with the first division failing: its own line.
    let first = TWO_DIVS.replace("CONST INT (1 1 1)", "CONST INT (1 1 0)").replace("CONST INT (1 0 1)", "CONST INT (1 1 1)");
    assert_eq!(trap_line(&opt(&parse(&first), 2)), (7, "MAIN".to_string(), vec![4]));
}
