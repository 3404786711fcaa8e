//! The checker on small source programs (features the conformance corpus does not
//! cover), and the contract with the flattener checked on every form of the corpus:
//! every type slot filled, every name resolved, function bodies mentioning only their
//! scheme's variables, and everything else ground.

use nesl_front::ast::{Expr, ExprKind, Ident, Pattern, PatternKind, Res, TopLevel};
use nesl_front::check::{definition_line, format_type, walk_expr, walk_pattern, ItemInfo, Session};
use nesl_front::parser::parse_items;
use nesl_front::ty::Type;
use std::path::{Path, PathBuf};

/// The definition lines of a program (or `it : type` for expressions); panics on errors.
fn lines(src: &str) -> Vec<String> {
    let mut session = Session::new();
    let mut out = Vec::new();
    for item in parse_items(src) {
        let mut form = item.unwrap_or_else(|d| panic!("syntax error {d:?} in\n{src}"));
        match session.check_item(&mut form) {
            Ok(ItemInfo::Expr { ty }) => out.push(format!("it : {}", format_type(&ty))),
            Ok(info) => {
                if let Some(l) = definition_line(&info) {
                    out.push(l);
                }
            }
            Err(d) => panic!("unexpected errors {d:?} in\n{src}"),
        }
    }
    out
}

/// The messages of the errors of the last form of a program (earlier ones must check).
fn last_errors(src: &str) -> Vec<String> {
    let mut session = Session::new();
    let items = parse_items(src);
    let n = items.len();
    for (i, item) in items.into_iter().enumerate() {
        let mut form = item.unwrap_or_else(|d| panic!("syntax error {d:?}"));
        let r = session.check_item(&mut form);
        if i + 1 < n {
            r.unwrap_or_else(|d| panic!("form {} failed: {d:?}", i + 1));
        } else {
            return match r {
                Ok(info) => panic!("expected errors, got {info:?}"),
                Err(d) => d.into_iter().map(|d| d.message).collect(),
            };
        }
    }
    panic!("empty program")
}

#[test]
fn higher_order_functions() {
    assert_eq!(
        lines("function apply2(g, x) = g(g(x));\nfunction inc(x) = x + 1;\napply2(inc, 3);\nmap(inc, [1, 2]);\nscan(max, 0, [3, 1, 4]);"),
        vec![
            "apply2 = fn : (a -> a, a) -> a :: (a in any)",
            "inc = fn : int -> int",
            "it : int",
            "it : [int]",
            "it : [int], int",
        ]
    );
}

#[test]
fn declarations_and_mutual_recursion() {
    let src = "function odd_p(n) : int -> bool;\n\
               function even_p(n) = if n == 0 then t else odd_p(n - 1);\n\
               function odd_p(n) = if n == 0 then f else even_p(n - 1);\n\
               even_p(10);";
    assert_eq!(
        lines(src),
        vec![
            "odd_p = fn : int -> bool",
            "even_p = fn : int -> bool",
            "odd_p = fn : int -> bool",
            "it : bool"
        ]
    );
}

#[test]
fn a_definition_must_fit_its_earlier_declaration() {
    let e = last_errors("function k(n) : int -> bool;\nfunction k(n) = n + 1;");
    assert!(e[0].contains("declared result type is `bool`"), "{e:?}");
    let e = last_errors("function k(x) : (a, a) -> a :: (a in ordinal);\nfunction k(x, y) = x + y;");
    assert!(e[0].contains("more general"), "{e:?}");
    assert_eq!(
        lines("function k(x) : a -> [a];\nfunction k(x) = [x];\nk(1.5);"),
        vec!["k = fn : a -> [a] :: (a in any)", "k = fn : a -> [a] :: (a in any)", "it : [float]"]
    );
}

#[test]
fn redefinition_replaces() {
    let src = "function h(x) = x + 1;\nfunction h(x) = x * 2.0;\nh(1.5);";
    assert_eq!(
        lines(src),
        vec![
            "h = fn : int -> int",
            "h = fn : float -> float",
            "it : float"
        ]
    );
}

#[test]
fn strings_streams_time_and_operators() {
    let src = "@[1, 2] ++ \"x\";\n#\"abc\";\nstdout;\ntime(sum([1, 2]));\n\
               [1, 2, 3] -> [0, 2];\n[1, 2] <- [(0, 5)];\n\"ab\" || 5;\n2 ^ 3;\nwrite_string(\"hi\", stdout);";
    assert_eq!(
        lines(src),
        vec![
            "it : [char]",
            "it : int",
            "it : stream",
            "it : int, float",
            "it : [int]",
            "it : [int]",
            "it : [char]",
            "it : int",
            "it : bool, [char]",
        ]
    );
}

#[test]
fn typed_empty_sequences_and_nesting() {
    let src = "datatype pt(float, float);\n[] pt;\n[[] int, [1]];\n[] (int, [bool]);\n{#s : s in [[] char, \"a\"]};";
    assert_eq!(
        lines(src),
        vec![
            "pt = fn : (float, float) -> pt",
            "it : [pt]",
            "it : [[int]]",
            "it : [(int, [bool])]",
            "it : [int]"
        ]
    );
}

#[test]
fn datatype_bindings_and_globals() {
    let src = "datatype pair2(a, b) :: (a in number; b in any);\n\
               pair2(x, y) = pair2(1.5, \"s\");\nx + 1.0;\ny ++ \"t\";";
    assert_eq!(
        lines(src),
        vec![
            "pair2 = fn : (a, b) -> pair2(a, b) :: (a in number; b in any)",
            "it : float",
            "it : [char]"
        ]
    );
    let e = last_errors("datatype num(a) :: (a in number);\nnum(`c);");
    assert!(e[0].contains("function `num`"), "{e:?}");
}

#[test]
fn signatures_with_contexts() {
    assert_eq!(
        lines("function g(x, y) : (a, a) -> a :: (a in number) = x + y;"),
        vec!["g = fn : (a, a) -> a :: (a in number)"]
    );
    // Declaring a narrower class than needed is fine; a wider one is not.
    assert_eq!(
        lines("function m(x, y) : (a, a) -> a :: (a in number) = max(x, y);"),
        vec!["m = fn : (a, a) -> a :: (a in number)"]
    );
    let e = last_errors("function m(x, y) : (a, a) -> a :: (a in ordinal) = x + y;");
    assert!(e[0].contains("more general"), "{e:?}");
    let e = last_errors("function k(x) : int = x;");
    assert!(e[0].contains("must be a function type"), "{e:?}");
    let e = last_errors("function k(x) : a -> a :: (a in numbers) = x;");
    assert!(e[0].contains("unknown type class"), "{e:?}");
}

#[test]
fn shadowing_and_scopes() {
    // A let binding shadows a global; an apply-to-each variable is not visible outside.
    assert_eq!(lines("x = 1;\nlet x = 2.5 in x;"), vec!["it : float"]);
    let e = last_errors("{y : y in [1]} ++ [y];");
    assert_eq!(e, vec!["`y` is undefined"]);
    // A local named like a built-in shadows it as a value but not as a function.
    assert_eq!(
        lines("function f1(sum) = sum + 1;\nf1(2);"),
        vec!["f1 = fn : int -> int", "it : int"]
    );
}

// ----- the contract with the flattener, on the whole corpus ---------------------------

fn corpus() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut c = Vec::new();
    if let Ok(p) = std::env::var("NESL_CONFORMANCE") {
        c.push(PathBuf::from(p));
    }
    c.push(manifest.join("../../shared/conformance/nesl"));
    c.into_iter().find(|p| p.is_dir())
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "nesl") {
            out.push(p);
        }
    }
}

fn idents_of_pattern<'a>(p: &'a Pattern, out: &mut Vec<&'a Ident>) {
    match &p.kind {
        PatternKind::Var(id) => out.push(id),
        PatternKind::Pair(a, b) => {
            idents_of_pattern(a, out);
            idents_of_pattern(b, out);
        }
        PatternKind::Con(id, s) => {
            out.push(id);
            idents_of_pattern(s, out);
        }
    }
}

fn idents_of_expr<'a>(e: &'a Expr, out: &mut Vec<&'a Ident>) {
    match &e.kind {
        ExprKind::Var(id) => out.push(id),
        ExprKind::Call { func, arg } => {
            out.push(func);
            idents_of_expr(arg, out);
        }
        ExprKind::Pair(a, b) => {
            idents_of_expr(a, out);
            idents_of_expr(b, out);
        }
        ExprKind::If(c, a, b) => {
            idents_of_expr(c, out);
            idents_of_expr(a, out);
            idents_of_expr(b, out);
        }
        ExprKind::Let(bs, body) => {
            for (p, x) in bs {
                idents_of_pattern(p, out);
                idents_of_expr(x, out);
            }
            idents_of_expr(body, out);
        }
        ExprKind::ApplyToEach {
            body,
            binders,
            filter,
        } => {
            for b in binders {
                idents_of_pattern(&b.pat, out);
                idents_of_expr(&b.seq, out);
            }
            if let Some(x) = filter {
                idents_of_expr(x, out);
            }
            if let Some(x) = body {
                idents_of_expr(x, out);
            }
        }
        ExprKind::Seq(xs) => xs.iter().for_each(|x| idents_of_expr(x, out)),
        ExprKind::Range { start, end, stride } => {
            idents_of_expr(start, out);
            idents_of_expr(end, out);
            if let Some(s) = stride {
                idents_of_expr(s, out);
            }
        }
        ExprKind::Time(x) => idents_of_expr(x, out),
        _ => {}
    }
}

#[test]
fn contract_holds_on_the_corpus() {
    let Some(dir) = corpus() else { return };
    let mut fs = Vec::new();
    files(&dir, &mut fs);
    let mut forms = 0;
    for f in fs {
        let src = std::fs::read_to_string(&f).expect("readable");
        let mut session = Session::new();
        for item in parse_items(&src) {
            let Ok(mut form) = item else { continue };
            let Ok(info) = session.check_item(&mut form) else {
                continue;
            };
            forms += 1;
            let allowed = match &info {
                ItemInfo::Function { scheme, .. } => scheme.vars.clone(),
                _ => Vec::new(),
            };
            let mut slots: Vec<Option<Type>> = Vec::new();
            let mut ids = Vec::new();
            match &mut form {
                TopLevel::Function(d) => {
                    walk_pattern(&mut d.params, &mut |t| slots.push(t.clone()));
                    if let Some(b) = &mut d.body {
                        walk_expr(b, &mut |t| slots.push(t.clone()));
                    }
                    idents_of_pattern(&d.params, &mut ids);
                    if let Some(b) = &d.body {
                        idents_of_expr(b, &mut ids);
                    }
                }
                TopLevel::Binding { pat, expr, .. } => {
                    walk_pattern(pat, &mut |t| slots.push(t.clone()));
                    walk_expr(expr, &mut |t| slots.push(t.clone()));
                    idents_of_pattern(pat, &mut ids);
                    idents_of_expr(expr, &mut ids);
                }
                TopLevel::Expr(e) => {
                    walk_expr(e, &mut |t| slots.push(t.clone()));
                    idents_of_expr(e, &mut ids);
                }
                _ => {}
            }
            for t in slots {
                let t = t.unwrap_or_else(|| panic!("{}: an untyped node", f.display()));
                let mut vars = Vec::new();
                collect_vars(&t, &mut vars);
                for v in vars {
                    assert!(
                        allowed.contains(&v),
                        "{}: {v:?} in {t:?} is not among {allowed:?}",
                        f.display()
                    );
                }
            }
            for id in ids {
                assert_ne!(
                    id.res,
                    Res::Unresolved,
                    "{}: `{}` unresolved",
                    f.display(),
                    id.name
                );
            }
        }
    }
    assert!(forms > 500, "only {forms} forms checked");
}

fn collect_vars(t: &Type, out: &mut Vec<nesl_front::ty::TyVar>) {
    match t {
        Type::Var(v) => out.push(*v),
        Type::Seq(e) => collect_vars(e, out),
        Type::Pair(a, b) | Type::Fun(a, b) => {
            collect_vars(a, out);
            collect_vars(b, out);
        }
        Type::Data(_, args) => args.iter().for_each(|a| collect_vars(a, out)),
        _ => {}
    }
}

#[test]
fn serial_only_functions_cannot_run_in_parallel() {
    let e = last_errors("{rand_seed(i) : i in [1, 2]};");
    assert!(
        e[0].contains("cannot call `rand_seed` in parallel"),
        "{e:?}"
    );
    let e = last_errors(
        "function slurp(n) = #read_string_from_file(\"/nonexistent\") + n;\n{slurp(i) : i in [1]};",
    );
    assert!(e[0].contains("cannot call `slurp` in parallel"), "{e:?}");
    let e = last_errors("{x in [1, 2] | rand_seed(x)};");
    assert!(e[0].contains("in parallel"), "{e:?}");
    // Serially they are fine, and so are the terminal output functions in parallel; the
    // sequence of a binder is evaluated outside the apply-to-each.
    assert_eq!(
        lines("rand_seed(3);\n{print_string(\"x\") : i in [1, 2]};\n{i : i in read_int_seq_from_file(\"/f\")};"),
        vec!["it : bool", "it : [bool]", "it : [int]"]
    );
    // Redefining a function without the serial call makes it parallel again.
    assert_eq!(
        lines("function g(n) = rand_seed(n);\nfunction g(n) = n > 0;\n{g(i) : i in [1]};"),
        vec![
            "g = fn : int -> bool",
            "g = fn : int -> bool",
            "it : [bool]"
        ]
    );
}
