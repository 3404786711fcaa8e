//! Coverage of the standard library by the regression corpus (issue 4: "the regression
//! corpus covers every built-in function at every type it accepts, nested and flat").
//!
//! Every program of `regression/nesl/**` is parsed and checked form by form with the
//! real front end; the calls and references that resolve to a built-in are collected
//! with the types they were checked at (from the forms that check). Then, for every row
//! of the checker's table of built-ins (`nesl_front::check::builtins::TABLE`):
//! - its name is used somewhere;
//! - each type-class variable of its type is used at every member of the class
//!   (`number`: int and float; `ordinal`: int, float and char; `logical`: bool and int);
//! - a built-in whose type has an `any` variable inside a sequence (`[a]`) is used with
//!   that variable at a scalar type and at a structured one (a sequence or a tuple):
//!   flat and nested data;
//! - a built-in that may run in parallel is used inside an apply-to-each or a function
//!   body (where it runs lifted, once per instance) and at the top level.
//! A built-in missing one of these is a failure unless it is in one of the commented
//! exclusion lists below.

use nesl_front::ast::{Expr, ExprKind, Res, TopLevel};
use nesl_front::check::builtins::{builtin_scheme, is_serial_only_builtin, TABLE};
use nesl_front::check::Session;
use nesl_front::parser::parse_items;
use nesl_front::ty::{Type, TypeClass};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Built-ins whose *name* need not appear in the corpus. Empty: even the
/// nondeterministic ones (`rand`, `time`-like effects, `shell_command`, `spawn`) appear
/// once, in programs whose transcripts do not depend on their results.
const NOT_USED: &[&str] = &[];

/// Built-ins exempt from the *flat and nested* (`any` at a scalar and a structured type)
/// and *class instance* checks, with the reason. Empty: every built-in is covered.
const NO_TYPE_COVERAGE: &[(&str, &str)] = &[];

/// Built-ins exempt from the *parallel and serial* check, with the reason. Empty: even the
/// constants are used in both places.
const NO_CONTEXT_COVERAGE: &[(&str, &str)] = &[];

/// The `.nesl` files under `dir`, recursively, sorted.
fn nesl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            nesl_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "nesl") {
            out.push(p);
        }
    }
}

/// What the corpus does with one built-in.
#[derive(Default)]
struct Uses {
    /// Programs that use it.
    files: BTreeSet<String>,
    /// Ground types bound to each variable of its scheme (by variable id).
    bindings: HashMap<u32, BTreeSet<String>>,
    /// Used where it runs once per instance (apply-to-each or function body).
    parallel: bool,
    /// Used at the top level (outside apply-to-each and functions).
    serial: bool,
}

/// Matches a scheme type against a checked type, recording ground bindings of the
/// scheme's variables (a binding that still holds a type variable is not recorded).
fn bind(pat: &Type, ty: &Type, out: &mut Vec<(u32, Type)>) {
    match (pat, ty) {
        (Type::Var(v), t) => out.push((v.id, t.clone())),
        (Type::Seq(a), Type::Seq(b)) => bind(a, b, out),
        (Type::Pair(a1, b1), Type::Pair(a2, b2)) | (Type::Fun(a1, b1), Type::Fun(a2, b2)) => {
            bind(a1, a2, out);
            bind(b1, b2, out);
        }
        (Type::Data(_, a1), Type::Data(_, a2)) => {
            for (x, y) in a1.iter().zip(a2) {
                bind(x, y, out);
            }
        }
        _ => {}
    }
}

fn ground(t: &Type) -> bool {
    match t {
        Type::Var(_) => false,
        Type::Seq(a) => ground(a),
        Type::Pair(a, b) | Type::Fun(a, b) => ground(a) && ground(b),
        Type::Data(_, args) => args.iter().all(ground),
        _ => true,
    }
}

fn type_key(t: &Type) -> String {
    match t {
        Type::Int => "int".into(),
        Type::Bool => "bool".into(),
        Type::Float => "float".into(),
        Type::Char => "char".into(),
        Type::Seq(_) => "seq".into(),
        Type::Pair(..) => "tuple".into(),
        Type::Fun(..) => "function".into(),
        Type::Data(n, _) => format!("data {n}"),
        Type::Var(_) => "var".into(),
    }
}

fn record(uses: &mut BTreeMap<String, Uses>, file: &str, name: &str, ty: Option<&Type>, parallel: bool) {
    let Some(scheme) = builtin_scheme(name) else { return };
    let u = uses.entry(name.to_string()).or_default();
    u.files.insert(file.to_string());
    if parallel {
        u.parallel = true;
    } else {
        u.serial = true;
    }
    if let Some(ty) = ty {
        let mut b = Vec::new();
        bind(&scheme.ty, ty, &mut b);
        for (id, t) in b {
            if ground(&t) {
                u.bindings.entry(id).or_default().insert(type_key(&t));
            }
        }
    }
}

/// Records the built-ins an expression uses; `parallel` when it runs once per instance.
fn walk(e: &Expr, file: &str, parallel: bool, uses: &mut BTreeMap<String, Uses>) {
    match &e.kind {
        ExprKind::Var(id) if id.res == Res::Builtin => record(uses, file, &id.name, e.ty.as_ref(), parallel),
        ExprKind::Call { func, arg } => {
            if func.res == Res::Builtin {
                let fty = match (&arg.ty, &e.ty) {
                    (Some(a), Some(r)) => Some(Type::fun(a.clone(), r.clone())),
                    _ => None,
                };
                record(uses, file, &func.name, fty.as_ref(), parallel);
            }
            walk(arg, file, parallel, uses);
        }
        ExprKind::Pair(a, b) => {
            walk(a, file, parallel, uses);
            walk(b, file, parallel, uses);
        }
        ExprKind::If(c, a, b) => {
            for x in [c, a, b] {
                walk(x, file, parallel, uses);
            }
        }
        ExprKind::Let(binds, body) => {
            for (_, x) in binds {
                walk(x, file, parallel, uses);
            }
            walk(body, file, parallel, uses);
        }
        ExprKind::ApplyToEach { body, binders, filter } => {
            for b in binders {
                walk(&b.seq, file, parallel, uses);
            }
            for x in filter.iter().chain(body.iter()) {
                walk(x, file, true, uses);
            }
        }
        ExprKind::Seq(es) => {
            for x in es {
                walk(x, file, parallel, uses);
            }
        }
        ExprKind::Range { start, end, stride } => {
            walk(start, file, parallel, uses);
            walk(end, file, parallel, uses);
            if let Some(s) = stride {
                walk(s, file, parallel, uses);
            }
        }
        ExprKind::Time(x) => walk(x, file, parallel, uses),
        _ => {}
    }
}

/// The ground types a class variable must be used at.
fn members(class: TypeClass) -> &'static [&'static str] {
    match class {
        TypeClass::Any => &[],
        TypeClass::Number => &["int", "float"],
        TypeClass::Ordinal => &["int", "float", "char"],
        TypeClass::Logical => &["bool", "int"],
    }
}

/// The ids of the `any` variables that occur inside a sequence type in `t`.
fn seq_any_vars(t: &Type, in_seq: bool, out: &mut BTreeSet<u32>) {
    match t {
        Type::Var(v) if in_seq && v.class == TypeClass::Any => {
            out.insert(v.id);
        }
        Type::Seq(a) => seq_any_vars(a, true, out),
        Type::Pair(a, b) | Type::Fun(a, b) => {
            seq_any_vars(a, in_seq, out);
            seq_any_vars(b, in_seq, out);
        }
        Type::Data(_, args) => {
            for a in args {
                seq_any_vars(a, in_seq, out);
            }
        }
        _ => {}
    }
}

fn corpus_uses() -> (usize, BTreeMap<String, Uses>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    nesl_files(&root.join("regression/nesl"), &mut files);
    let mut uses = BTreeMap::new();
    for path in &files {
        let src = std::fs::read_to_string(path).unwrap_or_default();
        let file = path.strip_prefix(root).unwrap_or(path).display().to_string();
        let mut session = Session::new();
        for item in parse_items(&src) {
            let Ok(mut form) = item else { continue };
            if session.check_item(&mut form).is_err() {
                continue;
            }
            match &form {
                TopLevel::Function(def) => {
                    if let Some(b) = &def.body {
                        walk(b, &file, true, &mut uses);
                    }
                }
                TopLevel::Expr(e) | TopLevel::Binding { expr: e, .. } => walk(e, &file, false, &mut uses),
                _ => {}
            }
        }
    }
    (files.len(), uses)
}

#[test]
fn every_builtin_is_covered_by_the_regression_corpus() {
    let (programs, uses) = corpus_uses();
    let mut missing = Vec::new();
    let exempt_types = |n: &str| NO_TYPE_COVERAGE.iter().any(|(x, _)| *x == n);
    let exempt_context = |n: &str| NO_CONTEXT_COVERAGE.iter().any(|(x, _)| *x == n);
    for (name, _, _) in TABLE {
        let Some(u) = uses.get(*name) else {
            if !NOT_USED.contains(name) {
                missing.push(format!("{name}: used by no program"));
            }
            continue;
        };
        let scheme = builtin_scheme(name).expect("a table row has a scheme");
        if !exempt_types(name) {
            for v in &scheme.vars {
                let seen = u.bindings.get(&v.id).cloned().unwrap_or_default();
                for m in members(v.class) {
                    if !seen.contains(*m) {
                        missing.push(format!("{name}: never used at {m} ({} variable)", v.class.name()));
                    }
                }
            }
            let mut any_in_seq = BTreeSet::new();
            seq_any_vars(&scheme.ty, false, &mut any_in_seq);
            for id in any_in_seq {
                let seen = u.bindings.get(&id).cloned().unwrap_or_default();
                let flat = seen.iter().any(|t| ["int", "bool", "float", "char"].contains(&t.as_str()));
                let nested = seen.iter().any(|t| t == "seq" || t == "tuple");
                if !flat {
                    missing.push(format!("{name}: never used on a sequence of scalars"));
                }
                if !nested {
                    missing.push(format!("{name}: never used on a sequence of sequences or tuples"));
                }
            }
        }
        if !exempt_context(name) {
            if !u.serial {
                missing.push(format!("{name}: never used at the top level"));
            }
            if !u.parallel && !is_serial_only_builtin(name) {
                missing.push(format!("{name}: never used in parallel (apply-to-each or function body)"));
            }
        }
    }
    println!("{programs} programs use {} of the {} built-ins", uses.len(), TABLE.len());
    assert!(missing.is_empty(), "{} gaps in the coverage of the built-ins:\n{}", missing.len(), missing.join("\n"));
}
