//! Whole-file compilation (`nesl compile`): globals flow between forms and every
//! expression's value is left on the stack in order.

use nesl_front::check::Session;
use nesl_front::flatten::{compile_program, flat_slots, CompileOptions, SlotKind};
use nesl_front::ty::Type;

#[test]
fn program_leaves_each_expression() {
    let src = "x = [1, 2, 3];\nfunction g(a) = a * 2;\n{g(v) : v in x};\nsum(x);";
    let (mut items, diags) = nesl_front::parser::parse_program(src);
    assert!(diags.is_empty(), "{diags:?}");
    let mut s = Session::new();
    for it in items.iter_mut() {
        s.check_item(it).expect("checks");
    }
    let code = compile_program(&s, &items, &CompileOptions::default()).expect("compiles");
    let p = vcode::parse(&code.to_string()).expect("parses");
    vcode::verify(&p).expect("verifies");
    let mut w = Vec::new();
    let r = vcode::run(&p, &mut vcode::CpuCvl::new(), &mut w, &vcode::RunOptions::default()).expect("runs");
    let vcode::RunOutcome::Finished(stack) = r.outcome else { panic!("exited") };
    assert_eq!(vcode::format_vinterp(&stack), "[ 3 ]\n( 2 4 6 )\n( 6 )\n");
}

#[test]
fn layouts() {
    let t = Type::pair(Type::seq(Type::seq(Type::Int)), Type::Float);
    assert_eq!(flat_slots(&t), vec![SlotKind::Segdes, SlotKind::Segdes, SlotKind::Int, SlotKind::Float]);
    assert_eq!(flat_slots(&Type::Char), vec![SlotKind::Int]);
}

/// A function body that reads a top-level variable of the same program receives it as a
/// hidden argument (it once read the wrong slot and silently computed `g(1) = 2`, then
/// was refused).
#[test]
fn function_reading_a_program_global_gets_its_value() {
    let src = "n = 10;\nfunction g(x) = x + n;\ng(1);\n{g(i) : i in [1, 2]};";
    let (mut items, diags) = nesl_front::parser::parse_program(src);
    assert!(diags.is_empty(), "{diags:?}");
    let mut s = Session::new();
    for it in items.iter_mut() {
        s.check_item(it).expect("checks");
    }
    let code = compile_program(&s, &items, &CompileOptions::default()).expect("compiles");
    let p = vcode::parse(&code.to_string()).expect("parses");
    vcode::verify(&p).expect("verifies");
    let mut w = Vec::new();
    let r = vcode::run(&p, &mut vcode::CpuCvl::new(), &mut w, &vcode::RunOptions::default()).expect("runs");
    let vcode::RunOutcome::Finished(stack) = r.outcome else { panic!("exited") };
    assert_eq!(vcode::format_vinterp(&stack), "( 11 )\n[ 2 ]\n( 11 12 )\n");
}
