//! End-to-end flattening tests: scalar code.

mod flatten_util;
use flatten_util::stacks;

#[test]
fn arithmetic() {
    assert_eq!(stacks("1 + 2 * 3;"), vec!["( 7 )"]);
    assert_eq!(stacks("(7 / 2, rem(-7, 2), mod(-5, 3));"), vec!["( 3 ) ( -1 ) ( 1 )"]);
    assert_eq!(stacks("if 3 > 2 then 1.5 else 2.5;"), vec!["( 1.50000000000000e+00 )"]);
}

#[test]
fn recursion() {
    let src = "function fact(n) = if n <= 1 then 1 else n * fact(n - 1);\nfact(5);";
    assert_eq!(stacks(src), vec!["( 120 )"]);
}
