//! End-to-end flattening tests: sequences, apply-to-each, parallel conditionals,
//! recursion in parallel, datatypes, run-time errors.

mod flatten_util;
use flatten_util::{stacks, vcode_of};

fn one(src: &str) -> String {
    let v = stacks(src);
    v.last().cloned().unwrap_or_default()
}

#[test]
fn sequence_primitives() {
    assert_eq!(one("[3, 1, 2];"), "[ 3 ] ( 3 1 2 )");
    assert_eq!(one("sum([1, 2, 3, 4]);"), "( 10 )");
    assert_eq!(one("plus_scan([1, 2, 3]);"), "[ 3 ] ( 0 1 3 )");
    assert_eq!(one("[1, 2] ++ [3];"), "[ 3 ] ( 1 2 3 )");
    assert_eq!(one("reverse([1, 2, 3]);"), "[ 3 ] ( 3 2 1 )");
    assert_eq!(one("[10, 20, 30] -> [2, 0];"), "[ 2 ] ( 30 10 )");
    assert_eq!(one("[0, 0, 0] <- [(1, 5), (2, 7)];"), "[ 3 ] ( 0 5 7 )");
    assert_eq!(one("permute([10, 20, 30], [2, 0, 1]);"), "[ 3 ] ( 20 30 10 )");
    assert_eq!(one("take([1, 2, 3, 4], -2);"), "[ 2 ] ( 3 4 )");
    assert_eq!(one("drop([1, 2, 3, 4], 1);"), "[ 3 ] ( 2 3 4 )");
    assert_eq!(one("rotate([1, 2, 3, 4, 5], 2);"), "[ 5 ] ( 4 5 1 2 3 )");
    assert_eq!(one("sort([3, 1, 2]);"), "[ 3 ] ( 1 2 3 )");
    assert_eq!(one("flatten([[1], [] int, [2, 3]]);"), "[ 3 ] ( 1 2 3 )");
    assert_eq!(one("partition([1, 2, 3], [2, 1]);"), "[ 2 ] [ 2 1 ] ( 1 2 3 )");
    assert_eq!(one("interleave([1, 3], [2]);"), "[ 3 ] ( 1 2 3 )");
    assert_eq!(one("max_index([3, 9, 2, 9]);"), "( 1 )");
    assert_eq!(one("transpose([[1, 2], [3, 4], [5, 6]]);"), "[ 2 ] [ 3 3 ] ( 1 3 5 2 4 6 )");
    assert_eq!(one("eql([[1], [2]], [[1], [2]]), eql([1, 2], [1]);"), "( T ) ( F )");
    assert_eq!(one("median([5, 1, 4, 2, 3]);"), "( 3 )");
    assert_eq!(one("split([1, 2, 3, 4], [t, f, t, f]);"), "[ 2 ] [ 2 2 ] ( 2 4 1 3 )");
}

/// How many instructions of `code` have exactly the opcode `op` (its first word).
fn count_op(code: &str, op: &str) -> usize {
    code.lines().filter(|l| l.split_whitespace().next() == Some(op)).count()
}

#[test]
fn permute_scatters_base_vectors_and_gathers_sequences() {
    assert_eq!(one("{trunc(x) : x in permute([1.5, 2.5, 3.5], [2, 0, 1])};"), "[ 3 ] ( 2 3 1 )");
    assert_eq!(one("{(i, trunc(x)) : (i, x) in permute([(1, 10.5), (2, 20.5), (3, 30.5)], [2, 0, 1])};"), "[ 3 ] ( 2 3 1 ) ( 20 30 10 )");
    assert_eq!(one("permute([[1], [2, 3], [] int], [1, 2, 0]);"), "[ 3 ] [ 0 1 2 ] ( 1 2 3 )");
    assert_eq!(one("{{trunc(x) : x in permute(a, b)} : a in [[1.0, 2.0], [3.0], [] float]; b in [[1, 0], [0], [] int]};"), "[ 3 ] [ 2 1 0 ] ( 2 1 3 )");
    assert_eq!(one("join([1, 2], [0, 3], [7, 8], [1, 2]);"), "[ 4 ] ( 1 7 8 2 )");
    assert_eq!(one("join([[1], [2, 3]], [2, 0], [[4]], [1]);"), "[ 3 ] [ 2 1 1 ] ( 2 3 4 1 )");
    // Base vectors move by one scatter each: no inverse permutation, no gather.
    let flat = vcode_of("permute([(1, 1.5), (2, 2.5)], [1, 0]);");
    assert_eq!((count_op(&flat, "PERMUTE"), count_op(&flat, "BPERMUTE")), (2, 0), "{flat}");
    assert!(flat.lines().any(|l| l.starts_with("PERMUTE FLOAT")), "{flat}");
    // A sequence's elements move as blocks: gathered by the inverse permutation.
    let nested = vcode_of("permute([[1], [2, 3]], [1, 0]);");
    assert_eq!(count_op(&nested, "PERMUTE"), 1, "{nested}");
    assert!(count_op(&nested, "BPERMUTE") > 0, "{nested}");
}

#[test]
fn nested_apply_to_each() {
    assert_eq!(one("{x * x : x in [1, 2, 3] | x /= 2};"), "[ 2 ] ( 1 9 )");
    assert_eq!(one("{{i * j : j in [0:i]} : i in [1:4]};"), "[ 3 ] [ 1 2 3 ] ( 0 0 2 0 3 6 )");
    assert_eq!(one("{sum(r) : r in [[1, 2], [] int, [3]]};"), "[ 3 ] ( 3 0 3 )");
    assert_eq!(one("{a + b : a in [1, 2]; b in [10, 20]};"), "[ 2 ] ( 11 22 )");
    assert_eq!(one("{r ++ [0] : r in [[1], [] int]};"), "[ 2 ] [ 2 1 ] ( 1 0 0 )");
    assert_eq!(one("let s = [5, 6, 7] in {s[i] : i in [2, 0]};"), "[ 2 ] ( 7 5 )");
}

#[test]
fn conditionals_in_parallel() {
    assert_eq!(one("{if x > 1 then x * 10 else -x : x in [1, 2, 0, 3]};"), "[ 4 ] ( -1 20 0 30 )");
    assert_eq!(one("{if x > 0 then [x, x] else [] int : x in [1, 0, 2]};"), "[ 3 ] [ 2 0 2 ] ( 1 1 2 2 )");
    assert_eq!(one("{if x == 0 then 0 else 12 / x : x in [1, 0, 4]};"), "[ 3 ] ( 12 0 3 )");
}

#[test]
fn recursion_in_parallel() {
    let src = "function fib(n) = if n < 2 then n else fib(n - 1) + fib(n - 2);\n{fib(n) : n in [0, 5, 10, 1]};";
    assert_eq!(one(src), "[ 4 ] ( 0 5 55 1 )");
    let qs = "function qs(a) = if #a < 2 then a else let p = a[#a / 2]; \
              lt = {e in a | e < p}; eq = {e in a | e == p}; gt = {e in a | e > p}; \
              r = {qs(v) : v in [lt, gt]} in r[0] ++ eq ++ r[1];\n\
              qs([5, 3, 8, 1, 9, 2, 5]);";
    assert_eq!(one(qs), "[ 7 ] ( 1 2 3 5 5 8 9 )");
}

#[test]
fn datatypes_and_pairs() {
    let src = "datatype point(int, int);\nfunction px(point(x, y)) = x + y;\n{px(p) : p in [point(1, 2), point(3, 4)]};";
    assert_eq!(one(src), "[ 2 ] ( 3 7 )");
    assert_eq!(one("{(y, x) : (x, y) in [(1, 2.5)]};"), "[ 1 ] ( 2.50000000000000e+00 ) ( 1 )");
}

#[test]
fn runtime_errors_exit() {
    assert_eq!(one("[1, 2, 3][5];"), "EXIT:CHECK: index 5 is out of bounds for a sequence of length 3");
    assert_eq!(one("{a + b : a in [1, 2]; b in [1]};"), "EXIT:CHECK: length mismatch: a sequence of length 2 with one of length 1");
    assert_eq!(one("7 / 0;"), "EXIT:CHECK: division by zero");
    assert_eq!(one("{10 / x : x in [1, 0]};"), "EXIT:CHECK: division by zero");
}

/// `let r = {f(v) : v in [a, b]}` read only as `r[0]`, `r[1]` runs `f` over the
/// literal's elements in block order: the elements are appended (`APPEND_`) and `r[j]`
/// is a contiguous range of the result, not a gather per instance (`GATHER_`). A read
/// of `r` itself keeps the plain layout; so does a body that draws random numbers or
/// prints (its instances' order would show).
#[test]
fn apply_to_each_over_a_literal_read_by_index_runs_in_block_order() {
    let calls = |code: &str, f: &str| code.lines().filter(|l| l.starts_with(&format!("CALL {f}"))).count();
    let src = |body: &str, reads: &str| {
        format!(
            "function g(v) = {body};
             function h(a) = let r = {{g(v) : v in [a, reverse(a)]}} in {reads};
             {{h(a) : a in [[1, 2], [3]]}};"
        )
    };
    let blocked = vcode_of(&src("{x + 1 : x in v}", "r[0] ++ r[1]"));
    assert_eq!((calls(&blocked, "APPEND_"), calls(&blocked, "GATHER_")), (1, 0), "{blocked}");
    assert_eq!(one(&src("{x + 1 : x in v}", "r[1] ++ r[0] ++ [#r]")), "[ 2 ] [ 5 3 ] ( 3 2 2 3 2 4 4 2 )");
    for (body, reads) in [
        ("{x + 1 : x in v}", "r[0] ++ r[1] ++ flatten(r)"),
        ("{x + rand(9) : x in v}", "r[0] ++ r[1]"),
        ("{x + 1 : x in v | print_string(\"x\")}", "r[0] ++ r[1]"),
    ] {
        let plain = vcode_of(&src(body, reads));
        assert_eq!(calls(&plain, "APPEND_"), 0, "{body} / {reads}:\n{plain}");
    }
}
