//! Structure tests: what each level does to the code, counted on the output program and
//! on the interpreter's operation statistics.

mod common;

use common::{calls, elements, load, opt, run_text};
use fcode_opt::{optimize, optimize_report, OptError, OptOptions, PASSES};
use std::path::Path;
use vcode::{Imm, Opcode, Program};

fn fixture(name: &str) -> Program {
    load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vcode").join(name))
}

fn count_op(p: &Program, op: Opcode) -> usize {
    p.functions.iter().flat_map(|f| &f.body).filter(|i| i.op == op).count()
}

fn assert_one_fused_muladd(name: &str) {
    let p = fixture(name);
    let q = opt(&p, 2);
    assert_eq!(q.superops.len(), 1, "{name}: one superoperator\n{q}");
    assert_eq!(q.superops[0].to_string(), "(INT INT INT) (+ INT (* INT $0 $1) $2)", "{name}");
    assert_eq!(count_op(&q, Opcode::Fused), 1, "{name}: one FUSED instruction\n{q}");
    assert_eq!(count_op(&q, Opcode::Mul) + count_op(&q, Opcode::Add), 0, "{name}: no loose * or +\n{q}");
    assert_eq!(run_text(&p).0, run_text(&q).0);
}

#[test]
fn muladd_cmu_style_is_one_superoperator() {
    assert_one_fused_muladd("muladd_cmu.vcode");
    // The stack churn of Figure 5 is gone: no shuffles remain at all.
    let q = opt(&fixture("muladd_cmu.vcode"), 2);
    assert_eq!(count_op(&q, Opcode::Cpop) + count_op(&q, Opcode::Copy) + count_op(&q, Opcode::Pop), 0, "{q}");
    assert_eq!(q.functions.len(), 1, "the helpers are inlined away\n{q}");
}

#[test]
fn muladd_from_the_nesl_compiler_is_one_superoperator() {
    assert_one_fused_muladd("muladd_nesl.vcode");
}

#[test]
fn black_scholes_chain_drops_operations_fivefold() {
    let p = fixture("bs_chain.vcode");
    let (out0, s0) = run_text(&p);
    let (out1, s1) = run_text(&opt(&p, 1));
    let (out2, s2) = run_text(&opt(&p, 2));
    assert_eq!(out0, out1);
    assert_eq!(out0, out2);
    let (c0, c2) = (calls(&s0), calls(&s2));
    let (e0, e2) = (elements(&s0), elements(&s2));
    assert!(c0 >= 5 * c2, "CVL calls {c0} at level 0, {c2} at level 2: {s2:?}");
    assert!(e0 >= 5 * e2, "elements touched {e0} at level 0, {e2} at level 2: {s2:?}");
    assert!(calls(&s1) <= c0, "level 1 never adds operations");
}

#[test]
fn black_scholes_from_the_nesl_compiler_fuses() {
    // The compiled program also checks its arguments (sqrt, ln, division): those checks
    // are reductions that stay, so the drop is smaller than for the bare chain.
    let p = fixture("bs_nesl.vcode");
    let (out0, s0) = run_text(&p);
    let q = opt(&p, 2);
    let (out2, s2) = run_text(&q);
    assert_eq!(out0, out2);
    let (e0, e2) = (elements(&s0), elements(&s2));
    assert!(e0 >= 3 * e2, "elements touched {e0} at level 0, {e2} at level 2");
    assert!(calls(&s0) >= 2 * calls(&s2));
    assert!(q.superops.iter().any(|op| op.body.size() >= 20), "the CND polynomial is one superoperator");
}

#[test]
fn quicksorts_three_filters_are_one_pack_of_three_flags() {
    // `{e in a | e < p}`, `== p` and `> p` filter one sequence by one pivot: one FUSED
    // whose pack root computes all three flags and packs.
    let p = fixture("quicksort_nesl.vcode");
    let q = opt(&p, 2);
    let three = q.superops.iter().filter(|op| op.pack.as_ref().is_some_and(|k| k.flags.len() == 3)).collect::<Vec<_>>();
    assert_eq!(three.len(), 1, "one pack of three flags\n{q}");
    assert_eq!(three[0].to_string(), "(INT INT SEGDES) (PACK INT $0 $2 (< INT $0 $1) (= INT $0 $1) (> INT $0 $1))");
    let (out0, s0) = run_text(&p);
    let (out2, s2) = run_text(&q);
    assert_eq!(out0, out2);
    assert!(elements(&s2) < elements(&s0), "fewer elements touched: {} against {}", elements(&s2), elements(&s0));
    // The FCODE text reads back as the same program.
    let back = vcode::parse(&q.to_string()).expect("reads back");
    assert_eq!(back.superops, q.superops);
}

#[test]
fn level_zero_is_the_identity() {
    let p = fixture("bs_chain.vcode");
    let q = optimize(&p, 0, &OptOptions::default()).expect("level 0");
    assert!(q.same_code(&p));
}

#[test]
fn level_one_has_no_superoperators_and_fewer_shuffles() {
    let p = fixture("muladd_cmu.vcode");
    let q = opt(&p, 1);
    assert!(q.superops.is_empty());
    assert_eq!(count_op(&q, Opcode::Fused), 0);
    let shuffles = |p: &Program| count_op(p, Opcode::Cpop) + count_op(p, Opcode::Copy) + count_op(p, Opcode::Pop);
    assert!(shuffles(&q) < shuffles(&p), "{q}");
    assert_eq!(count_op(&q, Opcode::Call), 0, "ZIP-OVER helpers and MULADD are inlined");
}

#[test]
fn recursive_functions_are_not_inlined() {
    let p = fixture("fact.vcode");
    let q = opt(&p, 2);
    assert!(q.functions.iter().any(|f| f.name == "FACT"));
    let fact = q.functions.iter().find(|f| f.name == "FACT").expect("FACT");
    assert!(fact.body.iter().any(|i| i.imm == Imm::Label("FACT".into())));
    // Mutual recursion too.
    let q = opt(&fixture("effects.vcode"), 2);
    assert!(q.functions.iter().any(|f| f.name == "EVEN") && q.functions.iter().any(|f| f.name == "ODD"));
}

#[test]
fn identical_trees_share_one_superoperator() {
    let src = "FUNC MAIN\nCONST INT (1 2 3)\nCONST INT (4 5 6)\n* INT\nCONST INT (1 1 1)\n- INT\n\
               CONST INT (7 8 9)\nCONST INT (2 2 2)\n* INT\nCONST INT (1 1 1)\n- INT\n\
               CONST INT (3 3 3)\nCONST INT (5 5 5)\n+ INT\nCONST INT (1 1 1)\n* INT\nRET\n";
    let p = vcode::parse(src).expect("parses");
    let q = opt(&p, 2);
    assert_eq!(run_text(&p).0, run_text(&q).0);
    // a*b - c appears twice with different operands, (a + b) * c once.
    assert_eq!(count_op(&q, Opcode::Fused), 3, "{q}");
    assert_eq!(q.superops.len(), 2, "{q}");
}

#[test]
fn nothing_moves_across_timers() {
    let p = fixture("timer.vcode");
    let q = opt(&p, 2);
    assert_eq!(run_text(&p).0, run_text(&q).0);
    // x*x is computed before START_TIMER and (.. + x) / SQRT between the timers: the
    // multiplication must stay before the timer starts.
    let main = &q.functions[0];
    let start = main.body.iter().position(|i| i.op == Opcode::StartTimer).expect("START_TIMER");
    let stop = main.body.iter().position(|i| i.op == Opcode::StopTimer).expect("STOP_TIMER");
    assert!(main.body[..start].iter().any(|i| i.op == Opcode::Mul), "{q}");
    let inside = &main.body[start..stop];
    assert!(inside.iter().any(|i| matches!(i.op, Opcode::Sqrt | Opcode::Fused)), "{q}");
}

#[test]
fn dumps_and_timings() {
    let p = fixture("muladd_cmu.vcode");
    for pass in PASSES {
        let opts = OptOptions { verify: true, dump_after: Some(pass.to_string()), timings: true };
        let (_, rep) = optimize_report(&p, 2, &opts).expect("optimises");
        let (name, text) = rep.dump.expect("a dump");
        assert_eq!(name, *pass);
        assert!(!text.is_empty());
        assert_eq!(rep.timings.iter().map(|t| t.0).collect::<Vec<_>>(), PASSES.to_vec());
    }
    let (_, rep) = optimize_report(&p, 2, &OptOptions { dump_after: Some("let".into()), ..Default::default() })
        .expect("optimises");
    let text = rep.dump.expect("dump").1;
    assert!(text.contains("function MAIN1_1 ()") && text.contains("* INT"), "{text}");
    let err = optimize(&p, 2, &OptOptions { dump_after: Some("nope".into()), ..Default::default() });
    assert!(matches!(err, Err(OptError::UnknownPass(_))));
    assert!(matches!(optimize(&p, 3, &OptOptions::default()), Err(OptError::BadLevel(3))));
}

#[test]
fn malformed_input_is_an_error_with_a_place() {
    let p = vcode::parse("FUNC MAIN\nCONST BOOL T\nIF\nCONST INT 1\nELSE\nENDIF\nRET\n").expect("parses");
    let e = optimize(&p, 2, &OptOptions::default()).expect_err("unbalanced branches");
    let msg = e.to_string();
    // The verifier (whose analysis the optimiser uses) reports it at the ENDIF.
    assert!(msg.contains("MAIN") && msg.contains("6:1") && msg.contains("different stack depths"), "{msg}");
    let call = vcode::Instr { op: Opcode::Call, ty: None, imm: Imm::Label("NOWHERE".into()) };
    let p = Program {
        functions: vec![vcode::Function::new("MAIN", vec![call, vcode::Instr::plain(Opcode::Ret)])],
        superops: Vec::new(),
        scopes: Vec::new(),
        inline_sites: Vec::new(),
        fused_parts: Vec::new(),
    };
    let e = optimize(&p, 1, &OptOptions::default()).expect_err("unknown callee");
    assert!(e.to_string().contains("NOWHERE"), "{e}");
    let p = vcode::parse("FUNC MAIN\n+ INT\nRET\n").expect("parses");
    let e = optimize(&p, 1, &OptOptions { verify: true, ..Default::default() }).expect_err("underflow");
    assert!(matches!(e, OptError::Verify { .. }), "{e}");
}

#[test]
fn checks_made_trivial_by_constants_are_folded() {
    // `AND_REDUCE BOOL` of a broadcast `T` (and `OR_REDUCE BOOL` of `F`) over a
    // one-segment descriptor, reduced over that descriptor or over the flattened one
    // (`MAKE_SEGDES (+_REDUCE INT (LENGTHS s, _))`), as the front end's checks are.
    let src = "FUNC MAIN\nCONST INT 4\nMAKE_SEGDES\nCONST BOOL T\nCOPY 1 1\nDIST BOOL\nCOPY 1 1\n\
               AND_REDUCE BOOL\nCONST BOOL F\nCOPY 1 2\nDIST BOOL\nCONST INT 1\nMAKE_SEGDES\nCOPY 1 3\n\
               LENGTHS\nCPOP 1 1\n+_REDUCE INT\nMAKE_SEGDES\nOR_REDUCE BOOL\nRET\n";
    let p = vcode::parse(src).expect("parses");
    let q = opt(&p, 2);
    assert_eq!(run_text(&p).0, run_text(&q).0);
    assert_eq!(run_text(&q).0, "[ 4 ]\n( T )\n( F )\n");
    for op in [Opcode::Dist, Opcode::AndReduce, Opcode::OrReduce] {
        assert_eq!(count_op(&q, op), 0, "{op:?} is gone\n{q}");
    }
    assert_eq!(run_text(&opt(&p, 1)).0, run_text(&p).0);
    // Not folded: a broadcast of the other value; one over another segment descriptor
    // (whose element count may differ: the reduction must still check it); one over
    // several segments (the `DIST` of a scalar traps).
    for src in [
        "FUNC MAIN\nCONST INT 4\nMAKE_SEGDES\nCONST BOOL F\nCOPY 1 1\nDIST BOOL\nCOPY 1 1\nAND_REDUCE BOOL\nRET\n",
        "FUNC MAIN\nCONST INT (2 3)\nMAKE_SEGDES\nCONST INT 5\nMAKE_SEGDES\nCONST BOOL T\nCOPY 1 1\nDIST BOOL\n\
         COPY 1 2\nAND_REDUCE BOOL\nRET\n",
        "FUNC MAIN\nCONST INT (2 4)\nMAKE_SEGDES\nCONST INT 5\nMAKE_SEGDES\nCONST BOOL T\nCOPY 1 1\nDIST BOOL\n\
         COPY 1 2\nAND_REDUCE BOOL\nRET\n",
        "FUNC MAIN\nCONST INT (2 0 3)\nMAKE_SEGDES\nCONST BOOL T\nCOPY 1 1\nDIST BOOL\nCOPY 1 1\nAND_REDUCE BOOL\nRET\n",
    ] {
        let p = vcode::parse(src).expect("parses");
        let q = opt(&p, 2);
        assert_eq!(run_text(&p).0, run_text(&q).0, "{q}");
        assert_eq!(count_op(&q, Opcode::AndReduce), 1, "{q}");
    }
}

#[test]
fn a_check_comparing_an_integer_with_itself_is_folded() {
    // The length check of a zip whose two sides are one vector after CSE:
    // `IF (LENGTHS s != LENGTHS s)` never fails; with the check gone, the element-wise
    // code on both sides of it is one superoperator.
    let src = |cmp: &str, ty: &str| {
        format!(
            "FUNC MAIN\nCONST FLOAT (1.0 2.0 3.0)\nCOPY 1 0\nLENGTH FLOAT\nMAKE_SEGDES\nCOPY 1 0\nCONST FLOAT 1.0\n\
             CPOP 1 1\nDIST FLOAT\nCPOP 1 2\n+ FLOAT\nCPOP 1 1\nLENGTHS\nCOPY 1 0\n{cmp} {ty}\nIF\n\
             CONST CHAR \"failed\"\nWRITE CHAR\nPOP 2 0\nCONST INT 1\nEXIT\nENDIF\nCOPY 1 0\n* FLOAT\nRET\n"
        )
    };
    let p = vcode::parse(&src("!=", "INT")).expect("parses");
    let q = opt(&p, 2);
    assert_eq!(run_text(&p).0, run_text(&q).0);
    assert_eq!(run_text(&q).0, "( 4.00000000000000e+00 9.00000000000000e+00 1.60000000000000e+01 )\n");
    assert_eq!(count_op(&q, Opcode::If) + count_op(&q, Opcode::Exit), 0, "the check is gone\n{q}");
    assert_eq!(count_op(&q, Opcode::Fused), 1, "one superoperator\n{q}");
    // `=` of a value with itself is true: the branch is taken, and fails.
    let p = vcode::parse(&src("=", "INT")).expect("parses");
    let q = opt(&p, 2);
    assert_eq!(run_text(&p).0, run_text(&q).0);
    assert!(run_text(&q).0.contains("failed"), "{}", run_text(&q).0);
}

#[test]
fn checks_fold_through_parameters_when_every_call_passes_one_segment() {
    // CHECK is too big to inline, even as a leaf (padding of pure work that dead-code
    // removes later).
    let pad = "CONST INT 1\nCONST INT 2\n+ INT\nPOP 1 0\n".repeat(fcode_opt::inline::LEAF_INLINE_LIMIT + 6);
    let check = format!("FUNC CHECK\n{pad}CONST BOOL T\nCOPY 1 1\nDIST BOOL\nCPOP 1 1\nAND_REDUCE BOOL\nRET\n");
    let program = |second: &str| {
        format!("FUNC MAIN\nCONST INT 4\nMAKE_SEGDES\nCALL CHECK\nCONST INT {second}\nMAKE_SEGDES\nCALL CHECK\nRET\n{check}")
    };
    let p = vcode::parse(&program("7")).expect("parses");
    let q = opt(&p, 2);
    assert!(q.functions.iter().any(|f| f.name == "CHECK"), "not inlined\n{q}");
    assert_eq!(run_text(&q).0, "( T )\n( T )\n");
    assert_eq!(count_op(&q, Opcode::AndReduce) + count_op(&q, Opcode::Dist), 0, "{q}");
    // One call passes two segments: the DIST of a scalar traps there, nothing folds.
    let p = vcode::parse(&program("(2 3)")).expect("parses");
    let q = opt(&p, 2);
    assert_eq!(run_text(&p).0, run_text(&q).0);
    assert!(run_text(&q).0.contains("trap:"), "{}", run_text(&q).0);
    assert_eq!(count_op(&q, Opcode::AndReduce), 1, "{q}");
}

#[test]
fn segment_bookkeeping_on_constants_folds() {
    // A length check of two vectors of constant length, as the front end writes it for
    // an apply-to-each, then a check reduced over them: the length check disappears, and
    // at level 2 the NOT before the IF joins the superoperator of the check.
    let src = "FUNC MAIN\nCONST INT 1\nMAKE_SEGDES\nCONST INT 3\nMAKE_SEGDES\nCONST INT 3\nMAKE_SEGDES\n\
               LENGTHS\nCOPY 1 1\nLENGTHS\n= INT\nCOPY 1 2\nAND_REDUCE BOOL\nNOT BOOL\nIF\nCONST INT 1\nEXIT\nENDIF\n\
               CONST FLOAT (1.0 -2.0 3.0)\nCONST FLOAT 0.0\nCOPY 1 2\nDIST FLOAT\n> FLOAT\nCOPY 1 1\nAND_REDUCE BOOL\n\
               NOT BOOL\nIF\nCONST INT 2\nEXIT\nENDIF\nRET\n";
    let p = vcode::parse(src).expect("parses");
    let base = run_text(&p).0;
    // EXIT's status is 0 whatever the stack holds (spec 6.3); the run stops at the
    // second check, so nothing is printed.
    assert_eq!(base, "exit 0\n");
    let q1 = opt(&p, 1);
    let q2 = opt(&p, 2);
    assert_eq!(run_text(&q1).0, base);
    assert_eq!(run_text(&q2).0, base);
    for q in [&q1, &q2] {
        assert_eq!(count_op(q, Opcode::Lengths), 0, "{q}");
        assert_eq!(count_op(q, Opcode::If), 1, "one check is left\n{q}");
    }
    assert_eq!(count_op(&q1, Opcode::Not), 1, "{q1}");
    assert_eq!(count_op(&q2, Opcode::Not), 0, "the NOT is in the superoperator\n{q2}");
    // ...and the OR_REDUCE of the check folds the superoperator's values as they are made.
    assert_eq!(count_op(&q2, Opcode::OrReduce), 0, "{q2}");
    assert_eq!(q2.superops.len(), 1, "{q2}");
    let fold = q2.superops[0].fold.expect("the superoperator folds");
    assert_eq!((fold.kind, fold.op), (vcode::FoldKind::Reduce, vcode::cvl::ReduceOp::Or), "{q2}");
}

#[test]
fn reductions_and_scans_fold_their_element_wise_operand() {
    // sum({x * y : ...}) and a +_SCAN of a SELECT: each becomes one folding superoperator
    // (no vector of products or of selected values); a tree also read elsewhere is kept.
    let src = "FUNC MAIN\nCONST FLOAT (1.5 2.0 -3.0 4.0)\nCONST FLOAT (2.0 0.5 1.0 -1.0)\nCONST INT 4\nMAKE_SEGDES\n\
               COPY 2 1\n* FLOAT\nCOPY 1 1\n+_REDUCE FLOAT\nWRITE FLOAT\nPOP 2 0\n\
               CONST BOOL (T F T T)\nCONST INT 5\nCOPY 1 2\nDIST INT\nCONST INT 1\nCOPY 1 3\nDIST INT\nSELECT INT\n\
               COPY 1 1\n+_SCAN INT\nWRITE INT\nPOP 2 0\n\
               COPY 2 1\n- FLOAT\nCOPY 1 0\nCOPY 1 2\nMAX_REDUCE FLOAT\nWRITE FLOAT\nPOP 2 0\nWRITE FLOAT\nPOP 2 0\n\
               POP 3 0\nRET\n";
    let p = vcode::parse(src).expect("parses");
    let base = run_text(&p).0;
    let q = opt(&p, 2);
    assert_eq!(run_text(&q).0, base, "{q}");
    assert_eq!(count_op(&q, Opcode::AddReduce) + count_op(&q, Opcode::AddScan), 0, "{q}");
    let folds: Vec<String> = q.superops.iter().filter(|o| o.fold.is_some()).map(|o| o.to_string()).collect();
    assert!(folds.contains(&"(FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT $0 $1) $2)".to_string()), "{q}");
    assert!(folds.iter().any(|f| f.contains("(+_SCAN INT (SELECT INT")), "{q}");
    // The difference is written too, so its MAX_REDUCE stays a reduction of a vector.
    assert_eq!(count_op(&q, Opcode::MaxReduce), 1, "{q}");
}

#[test]
fn a_value_read_only_by_one_tree_moves_into_it() {
    // t = (a * b + a) * a - b (four operations: more than the reducer copies into each
    // reader) is read three times, all by u = t - t * t: one superoperator over a and b
    // computes u (t is never stored); the vector library evaluates t once.
    let src = "FUNC MAIN\nCONST FLOAT (1.5 2.0 -3.0)\nCONST FLOAT (2.0 0.5 1.0)\n\
               COPY 2 0\n* FLOAT\nCOPY 1 2\n+ FLOAT\nCOPY 1 2\n* FLOAT\nCOPY 1 1\n- FLOAT\n\
               COPY 1 0\nCOPY 1 0\n* FLOAT\n- FLOAT\nWRITE FLOAT\nPOP 2 0\nPOP 2 0\nRET\n";
    let p = vcode::parse(src).expect("parses");
    let base = run_text(&p).0;
    let q = opt(&p, 2);
    assert_eq!(run_text(&q).0, base, "{q}");
    assert_eq!(count_op(&q, Opcode::Fused), 1, "{q}");
    assert_eq!(count_op(&q, Opcode::Mul) + count_op(&q, Opcode::Add) + count_op(&q, Opcode::Sub), 0, "{q}");
    let op = q.superops.iter().map(|o| o.to_string()).find(|o| o.starts_with("(FLOAT FLOAT)")).expect("the superoperator");
    assert_eq!(op.matches("(- FLOAT (* FLOAT (+ FLOAT (* FLOAT $0 $1) $0) $0) $1)").count(), 3, "{op}");
}

#[test]
fn a_small_value_read_by_several_trees_is_computed_in_each() {
    // t = a * a + b * b - a (four operations over two vectors) is read by u = t * a and by
    // w = t - b: each computes t itself (t never stored), as Barnes-Hut's r2 is read by
    // both components of a force, and as they share t they are one superoperator with
    // two results (one pass over a and b). When something else reads t too (here a
    // WRITE), t is stored once and the readers read it.
    let head = "FUNC MAIN\nCONST FLOAT (1.5 2.0 -3.0)\nCONST FLOAT (2.0 0.5 1.0)\n\
                COPY 1 1\nCOPY 1 2\n* FLOAT\nCOPY 1 1\nCOPY 1 2\n* FLOAT\n+ FLOAT\nCOPY 1 2\n- FLOAT\n";
    let tail = "COPY 1 0\nCOPY 1 3\n* FLOAT\nWRITE FLOAT\nPOP 2 0\n\
                COPY 1 1\n- FLOAT\nWRITE FLOAT\nPOP 2 0\nPOP 2 0\nRET\n";
    let t = "(- FLOAT (+ FLOAT (* FLOAT $0 $0) (* FLOAT $1 $1)) $0)";
    for (extra, stored) in [("", false), ("COPY 1 0\nWRITE FLOAT\nPOP 2 0\n", true)] {
        let p = vcode::parse(&format!("{head}{extra}{tail}")).expect("parses");
        let base = run_text(&p).0;
        let q = opt(&p, 2);
        assert_eq!(run_text(&q).0, base, "{q}");
        let ops: Vec<String> = q.superops.iter().map(|o| o.to_string()).collect();
        assert_eq!(ops.iter().any(|o| o == &format!("(FLOAT FLOAT) {t}")), stored, "t stored: {stored}\n{q}");
        assert_eq!(count_op(&q, Opcode::Fused), 1, "{q}");
        if !stored {
            assert!(ops.iter().any(|o| o == &format!("(FLOAT FLOAT) (* FLOAT {t} $0) (- FLOAT {t} $1)")), "{q}");
        }
    }
}

#[test]
fn repeated_pure_statements_are_computed_once_but_not_across_a_timer() {
    // Three DISTs of the same scalar (element 1, not a constant) over the same descriptor (as quicksort's three
    // filters write the pivot) become one; a fourth inside a timed region stays, so the
    // timed region still does its own work.
    let src = "FUNC MAIN\nCONST INT (5 1 9 5)\nCONST INT 4\nMAKE_SEGDES\nCOPY 1 1\nCONST INT 1\nCOPY 1 2\nEXTRACT INT\n\
               COPY 1 0\nCOPY 1 2\nDIST INT\nCOPY 1 3\n< INT\nWRITE BOOL\nPOP 2 0\n\
               COPY 1 0\nCOPY 1 2\nDIST INT\nCOPY 1 3\n= INT\nWRITE BOOL\nPOP 2 0\n\
               COPY 1 0\nCOPY 1 2\nDIST INT\nCOPY 1 3\n> INT\nWRITE BOOL\nPOP 2 0\n\
               START_TIMER\nCOPY 1 0\nCOPY 1 2\nDIST INT\nCOPY 1 3\n> INT\nWRITE BOOL\nPOP 2 0\nSTOP_TIMER\nPOP 1 0\n\
               POP 3 0\nRET\n";
    let p = vcode::parse(src).expect("parses");
    assert_eq!(count_op(&p, Opcode::Dist), 4);
    let base = run_text(&p).0;
    for level in [1, 2] {
        let q = opt(&p, level);
        assert_eq!(run_text(&q).0, base, "{q}");
        assert_eq!(count_op(&q, Opcode::Dist), 2, "level {level}: {q}");
    }
}

#[test]
fn a_check_guards_the_computation_that_follows_it() {
    // `{sqrt(x) * 2.0 + 1.0 : x in xs}` as the NESL compiler writes it: the check that no
    // `x` is negative, then the element-wise computation.
    for (name, fails) in [("guard.vcode", false), ("guard_fails.vcode", true)] {
        let p = fixture(name);
        let q = opt(&p, 2);
        assert_eq!(q.superops.len(), 1, "{name}: one superoperator\n{q}");
        let op = &q.superops[0];
        assert_eq!(
            op.to_string(),
            "(FLOAT SEGDES) (+ FLOAT (* FLOAT (SQRT FLOAT $0) (CONST FLOAT 2.0)) (CONST FLOAT 1.0)) \
             (OR_REDUCE BOOL (NOT BOOL (>= FLOAT $0 (CONST FLOAT 0.0))) $1)",
            "{name}: the check is the computation's guard"
        );
        assert_eq!(count_op(&q, Opcode::Fused), 1, "{name}: one pass over `xs`\n{q}");
        let (out0, s0) = run_text(&p);
        let (out2, s2) = run_text(&q);
        assert_eq!(out0, out2, "{name}: the same output (and error) at levels 0 and 2");
        assert_eq!(out2.contains("square root of a negative number"), fails, "{name}: {out2}");
        if !fails {
            // The guarded superoperator reads `xs` (3) and writes the result (3).
            assert!(elements(&s2) < elements(&s0), "{s2:?}");
            assert_eq!(vcode::parse(&q.to_string()).ok().map(|r| r.superops), Some(q.superops.clone()), "the FCODE text reads back");
        }
    }
}
