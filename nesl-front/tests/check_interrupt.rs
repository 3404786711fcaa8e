//! An interrupt (Ctrl-C, `vcode::interrupt::request`) stops type checking with an
//! `interrupted` error, and checking works again once it is cleared (issue 16). A test
//! binary of its own: the interrupt flag is global to the process.

use nesl_front::check::Session;

#[test]
fn an_interrupt_stops_type_checking() {
    let src = "function inc(x) = x + 1;";
    let mut s = Session::new();
    let (mut items, diags) = nesl_front::parser::parse_program(src);
    assert!(diags.is_empty(), "{diags:?}");
    vcode::interrupt::request();
    let r = s.check_item(&mut items[0]);
    vcode::interrupt::clear();
    let errs = r.expect_err("an interrupted check fails");
    assert!(errs.iter().any(|d| d.message == "interrupted"), "{errs:?}");
    assert!(
        s.scheme_of("inc").is_none(),
        "an interrupted definition is not kept"
    );
    let (mut items, _) = nesl_front::parser::parse_program(src);
    s.check_item(&mut items[0])
        .expect("checks once the interrupt is cleared");
    assert!(s.scheme_of("inc").is_some());
}
