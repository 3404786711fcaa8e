//! Unit tests of the checker on hand-built ASTs (independent of the parser).

use super::*;
use crate::ast::*;
use crate::diag::DiagKind;
use crate::ty::TypeClass;

fn sp() -> Span {
    Span::default()
}

fn e(kind: ExprKind) -> Expr {
    Expr::new(kind, sp())
}

fn int(n: i64) -> Expr {
    e(ExprKind::Int(n))
}

fn flt(x: f64) -> Expr {
    e(ExprKind::Float(x))
}

fn var(n: &str) -> Expr {
    e(ExprKind::Var(Ident::new(n, sp())))
}

fn tuple(mut xs: Vec<Expr>) -> Expr {
    let last = xs.pop().expect("a tuple needs a component");
    xs.into_iter()
        .rev()
        .fold(last, |acc, x| e(ExprKind::Pair(Box::new(x), Box::new(acc))))
}

fn call(f: &str, args: Vec<Expr>) -> Expr {
    e(ExprKind::Call {
        func: Ident::new(f, sp()),
        arg: Box::new(tuple(args)),
    })
}

fn bin(op: &str, a: Expr, b: Expr) -> Expr {
    call(op, vec![a, b])
}

fn ifx(c: Expr, a: Expr, b: Expr) -> Expr {
    e(ExprKind::If(Box::new(c), Box::new(a), Box::new(b)))
}

fn seq(xs: Vec<Expr>) -> Expr {
    e(ExprKind::Seq(xs))
}

fn each(body: Option<Expr>, binders: Vec<(Pattern, Expr)>, filter: Option<Expr>) -> Expr {
    e(ExprKind::ApplyToEach {
        body: body.map(Box::new),
        binders: binders
            .into_iter()
            .map(|(pat, seq)| Binder { pat, seq })
            .collect(),
        filter: filter.map(Box::new),
    })
}

fn p(kind: PatternKind) -> Pattern {
    Pattern {
        kind,
        span: sp(),
        ty: None,
    }
}

fn pv(n: &str) -> Pattern {
    p(PatternKind::Var(Ident::new(n, sp())))
}

fn ptuple(mut xs: Vec<Pattern>) -> Pattern {
    let last = xs.pop().expect("a tuple needs a component");
    xs.into_iter().rev().fold(last, |acc, x| {
        p(PatternKind::Pair(Box::new(x), Box::new(acc)))
    })
}

fn pcon(c: &str, xs: Vec<Pattern>) -> Pattern {
    p(PatternKind::Con(Ident::new(c, sp()), Box::new(ptuple(xs))))
}

fn tn(n: &str) -> TypeExpr {
    TypeExpr {
        kind: TypeExprKind::Name(Ident::new(n, sp())),
        span: sp(),
    }
}

fn tfun(a: TypeExpr, r: TypeExpr) -> TypeExpr {
    TypeExpr {
        kind: TypeExprKind::Fun(Box::new(a), Box::new(r)),
        span: sp(),
    }
}

fn fun(name: &str, params: Vec<Pattern>, body: Expr) -> TopLevel {
    TopLevel::Function(FunDef {
        name: Ident::new(name, sp()),
        params: ptuple(params),
        sig: None,
        doc: None,
        body: Some(body),
        span: sp(),
    })
}

fn fun_sig(
    name: &str,
    params: Vec<Pattern>,
    ty: TypeExpr,
    ctx: &[(&str, &str)],
    body: Expr,
) -> TopLevel {
    let context = ctx
        .iter()
        .map(|(v, c)| (Ident::new(*v, sp()), Ident::new(*c, sp())))
        .collect();
    TopLevel::Function(FunDef {
        name: Ident::new(name, sp()),
        params: ptuple(params),
        sig: Some(TypeSpec {
            ty,
            context,
            span: sp(),
        }),
        doc: None,
        body: Some(body),
        span: sp(),
    })
}

fn data(name: &str, fields: Vec<TypeExpr>, ctx: &[(&str, &str)]) -> TopLevel {
    let context = ctx
        .iter()
        .map(|(v, c)| (Ident::new(*v, sp()), Ident::new(*c, sp())))
        .collect();
    TopLevel::Datatype(DataDef {
        name: Ident::new(name, sp()),
        fields,
        context,
        span: sp(),
    })
}

fn line(s: &mut Session, mut item: TopLevel) -> String {
    match s.check_item(&mut item) {
        Ok(info) => definition_line(&info).unwrap_or_else(|| format!("{info:?}")),
        Err(d) => panic!("unexpected errors: {d:?}"),
    }
}

fn errors(s: &mut Session, mut item: TopLevel) -> Vec<Diagnostic> {
    match s.check_item(&mut item) {
        Ok(info) => panic!("expected an error, got {info:?}"),
        Err(d) => d,
    }
}

fn expr_type(s: &mut Session, x: Expr) -> String {
    let mut item = TopLevel::Expr(x);
    match s.check_item(&mut item) {
        Ok(ItemInfo::Expr { ty }) => format_type(&ty),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn overloaded_arithmetic_generalises() {
    let mut s = Session::new();
    let l = line(
        &mut s,
        fun("sq", vec![pv("x")], bin("*", var("x"), var("x"))),
    );
    assert_eq!(l, "sq = fn : a -> a :: (a in number)");
    assert_eq!(expr_type(&mut s, call("sq", vec![flt(1.5)])), "float");
    assert_eq!(
        expr_type(
            &mut s,
            tuple(vec![call("sq", vec![int(2)]), call("sq", vec![flt(1.5)])])
        ),
        "int, float"
    );
}

#[test]
fn recursion_is_monomorphic_and_literals_fix_types() {
    let mut s = Session::new();
    let body = ifx(
        bin("<=", var("n"), int(1)),
        int(1),
        bin(
            "*",
            var("n"),
            call("fact", vec![bin("-", var("n"), int(1))]),
        ),
    );
    assert_eq!(
        line(&mut s, fun("fact", vec![pv("n")], body)),
        "fact = fn : int -> int"
    );
}

#[test]
fn tuples_and_variable_order() {
    let mut s = Session::new();
    let l = line(
        &mut s,
        fun(
            "swap",
            vec![pv("a"), pv("b")],
            tuple(vec![var("b"), var("a")]),
        ),
    );
    assert_eq!(l, "swap = fn : (a, b) -> (b, a) :: (a in any; b in any)");
    let body = tuple(vec![
        bin("+", var("a"), var("c")),
        bin("+", var("b"), var("d")),
    ]);
    let l = line(
        &mut s,
        fun(
            "addp",
            vec![
                ptuple(vec![pv("a"), pv("b")]),
                ptuple(vec![pv("c"), pv("d")]),
            ],
            body,
        ),
    );
    assert_eq!(
        l,
        "addp = fn : ((a, b), a, b) -> (a, b) :: (a in number; b in number)"
    );
    let l = line(
        &mut s,
        fun(
            "rot3",
            vec![pv("a"), ptuple(vec![pv("b"), pv("c")])],
            tuple(vec![var("b"), var("c"), var("a")]),
        ),
    );
    assert_eq!(
        l,
        "rot3 = fn : (a, b, c) -> (b, c, a) :: (a in any; b in any; c in any)"
    );
}

#[test]
fn ordinal_and_sequences() {
    let mut s = Session::new();
    // function count_less(x, s) = count({y < x : y in s});
    let body = call(
        "count",
        vec![each(
            Some(bin("<", var("y"), var("x"))),
            vec![(pv("y"), var("s"))],
            None,
        )],
    );
    assert_eq!(
        line(&mut s, fun("count_less", vec![pv("x"), pv("s")], body)),
        "count_less = fn : (a, [a]) -> int :: (a in ordinal)"
    );
    // function evens(s) = {x in s | evenp(x)};
    let body = each(
        None,
        vec![(pv("x"), var("s"))],
        Some(call("evenp", vec![var("x")])),
    );
    assert_eq!(
        line(&mut s, fun("evens", vec![pv("s")], body)),
        "evens = fn : [int] -> [int]"
    );
}

#[test]
fn datatypes_constructors_and_patterns() {
    let mut s = Session::new();
    assert_eq!(
        line(
            &mut s,
            data("tagged", vec![tn("int"), tn("a")], &[("a", "any")])
        ),
        "tagged = fn : (int, a) -> tagged(a) :: (a in any)"
    );
    assert_eq!(
        line(
            &mut s,
            fun(
                "tag_of",
                vec![pcon("tagged", vec![pv("k"), pv("v")])],
                var("k")
            )
        ),
        "tag_of = fn : tagged(a) -> int :: (a in any)"
    );
    assert_eq!(
        expr_type(
            &mut s,
            call("tagged", vec![int(1), e(ExprKind::Char(b'x'))])
        ),
        "tagged(char)"
    );
    assert_eq!(
        line(&mut s, data("point", vec![tn("int"), tn("int")], &[])),
        "point = fn : (int, int) -> point"
    );
    let d = errors(&mut s, data("rec", vec![tn("int"), tn("rec")], &[]));
    assert!(d[0].message.contains("recursive"), "{d:?}");
    let d = errors(
        &mut s,
        fun("bad", vec![pcon("nothing", vec![pv("x")])], var("x")),
    );
    assert_eq!(d[0].kind, DiagKind::Name);
}

#[test]
fn declared_signatures() {
    let mut s = Session::new();
    let l = line(
        &mut s,
        fun_sig(
            "ident",
            vec![pv("x")],
            tfun(tn("a"), tn("a")),
            &[("a", "number")],
            var("x"),
        ),
    );
    assert_eq!(l, "ident = fn : a -> a :: (a in number)");
    let l = line(
        &mut s,
        fun_sig(
            "inc",
            vec![pv("x")],
            tfun(tn("int"), tn("int")),
            &[],
            bin("+", var("x"), int(1)),
        ),
    );
    assert_eq!(l, "inc = fn : int -> int");
    // Too general: a -> a :: (a in any) for x + 1.
    let d = errors(
        &mut s,
        fun_sig(
            "g",
            vec![pv("x")],
            tfun(tn("a"), tn("a")),
            &[],
            bin("+", var("x"), var("x")),
        ),
    );
    assert!(d[0].message.contains("more general"), "{d:?}");
    // Wrong: float -> float for x + 1.
    let d = errors(
        &mut s,
        fun_sig(
            "h",
            vec![pv("x")],
            tfun(tn("float"), tn("float")),
            &[],
            bin("+", var("x"), int(1)),
        ),
    );
    assert_eq!(d[0].kind, DiagKind::Type);
}

#[test]
fn type_errors_are_reported() {
    let mut s = Session::new();
    line(&mut s, fun("h", vec![pv("x")], bin("+", var("x"), int(1))));
    let d = errors(&mut s, TopLevel::Expr(bin("+", int(1), flt(2.0))));
    assert!(d[0].message.contains("function `+`"), "{d:?}");
    assert!(
        d[0].notes
            .iter()
            .any(|(_, n)| n == "argument types: int, float"),
        "{d:?}"
    );
    assert!(
        d[0].notes
            .iter()
            .any(|(_, n)| n == "function type: (a, a) -> a :: (a in number)"),
        "{d:?}"
    );
    let d = errors(&mut s, TopLevel::Expr(ifx(int(3), int(1), int(2))));
    assert!(d[0].message.contains("condition"), "{d:?}");
    let d = errors(
        &mut s,
        TopLevel::Expr(bin("+", var("undefined_name"), int(1))),
    );
    assert_eq!(
        (d[0].kind, d[0].message.as_str()),
        (DiagKind::Name, "`undefined_name` is undefined")
    );
    let d = errors(
        &mut s,
        TopLevel::Expr(each(Some(var("x")), vec![(pv("x"), int(5))], None)),
    );
    assert!(d[0].message.contains("must be a sequence"), "{d:?}");
    let d = errors(&mut s, TopLevel::Expr(call("h", vec![int(1), int(2)])));
    assert!(
        d[0].message.contains("takes 1 argument, but 2 were given"),
        "{d:?}"
    );
    // A class violation: "a" + 1.
    let d = errors(
        &mut s,
        TopLevel::Expr(bin("+", e(ExprKind::Str(b"a".to_vec())), int(1))),
    );
    assert!(
        d[0].notes
            .iter()
            .any(|(_, n)| n.contains("not in type class number")),
        "{d:?}"
    );
    // Several independent errors in one form are all reported.
    let d = errors(
        &mut s,
        TopLevel::Expr(tuple(vec![var("nope1"), call("nope2", vec![int(1)])])),
    );
    assert_eq!(d.len(), 2, "{d:?}");
    // Bad patterns.
    let d = errors(&mut s, fun("dup", vec![pv("x"), pv("x")], var("x")));
    assert!(d[0].message.contains("bound twice"), "{d:?}");
    let d = errors(
        &mut s,
        TopLevel::Binding {
            pat: ptuple(vec![pv("a"), pv("b")]),
            expr: int(1),
            span: sp(),
        },
    );
    assert!(d[0].message.contains("does not match"), "{d:?}");
    // Built-ins cannot be redefined.
    let d = errors(&mut s, fun("sum", vec![pv("x")], var("x")));
    assert_eq!(d[0].kind, DiagKind::Name);
}

#[test]
fn globals_and_defaulting() {
    let mut s = Session::new();
    let mut b = TopLevel::Binding {
        pat: pv("xs"),
        expr: seq(vec![int(3), int(1)]),
        span: sp(),
    };
    let info = s.check_item(&mut b).unwrap();
    assert_eq!(
        info,
        ItemInfo::Binding {
            names: vec![("xs".into(), Type::seq(Type::Int))]
        }
    );
    assert_eq!(expr_type(&mut s, call("sum", vec![var("xs")])), "int");
    assert_eq!(s.globals.get("it"), Some(&Type::Int));
    // A leftover class variable at top level defaults to int: `[] a` has no constraint.
    let empty = e(ExprKind::EmptySeq(tn("a")));
    assert_eq!(expr_type(&mut s, call("length", vec![empty])), "int");
}

/// Every type slot is filled, and a function body mentions only the scheme's variables.
#[test]
fn contract_with_the_flattener() {
    let mut s = Session::new();
    // function f(s) = let n = #s in {(x, n) : x in s | #[] b == 0};
    let inner = bin(
        "==",
        call("length", vec![e(ExprKind::EmptySeq(tn("b")))]),
        int(0),
    );
    let body = e(ExprKind::Let(
        vec![(pv("n"), call("length", vec![var("s")]))],
        Box::new(each(
            Some(tuple(vec![var("x"), var("n")])),
            vec![(pv("x"), var("s"))],
            Some(inner),
        )),
    ));
    let mut item = fun("pairs", vec![pv("s")], body);
    let info = s.check_item(&mut item).unwrap();
    let ItemInfo::Function { scheme, .. } = info else {
        panic!()
    };
    assert_eq!(format_scheme(&scheme), "[a] -> [(a, int)] :: (a in any)");
    let TopLevel::Function(f) = &mut item else {
        panic!()
    };
    let mut all = Vec::new();
    infer::walk_pattern(&mut f.params, &mut |t| all.push(t.clone()));
    infer::walk_expr(f.body.as_mut().unwrap(), &mut |t| all.push(t.clone()));
    for t in all {
        let t = t.expect("every slot typed");
        for v in unify::free_vars(&t) {
            assert!(scheme.vars.contains(&v), "{v:?} not in {:?}", scheme.vars);
        }
    }
    assert_eq!(scheme.vars[0].class, TypeClass::Any);
    assert!(s.functions.contains_key("pairs"));
}
