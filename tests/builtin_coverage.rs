//! Coverage of the standard library by the regression corpus (issue 4: "the regression
//! corpus covers every built-in function at every type it accepts, nested and flat").
//!
//! Every program of `regression/nesl/**` is parsed and checked form by form with the
//! real front end; the calls and references that resolve to a built-in are collected
//! with the types they were checked at (from the forms that check). Then, for every row
//! of the checker's table of built-ins (`nesl_front::check::builtins::BUILTINS`):
//! - its name is used somewhere;
//! - each type-class variable of its type is used at every member of the class
//!   (`number`: int and float; `ordinal`: int, float and char; `logical`: bool and int);
//! - a built-in whose type has an `any` variable inside a sequence (`[a]`) is used with
//!   that variable at a scalar type and at a structured one (a sequence or a tuple):
//!   flat and nested data;
//! - a built-in that may run in parallel is used inside an apply-to-each or a function
//!   body (where it runs lifted, once per instance) and at the top level;
//! - a built-in that takes a sequence is given an empty one, and one that takes a
//!   sequence of sequences (or of any type) one with an empty element. Emptiness is
//!   known statically, from literals (`[] t`, `""`, `[a:a]`) and the variables bound to
//!   them, so this check is an approximation: it counts what the programs say, not what
//!   every run computes.
//!
//! A built-in missing one of these is a failure unless it is in one of the commented
//! exclusion lists below.

use nesl_front::ast::{Expr, ExprKind, PatternKind, Res, TopLevel};
use nesl_front::check::builtins::{builtin_scheme, is_serial_only_builtin, BUILTINS};
use nesl_front::check::Session;
use nesl_front::parser::parse_items;
use nesl_front::ty::{Type, TypeClass};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Built-ins whose *name* need not appear in the corpus. Even the nondeterministic ones
/// (`rand`, `time`-like effects, `shell_command`, `spawn`) appear once, in programs whose
/// transcripts do not depend on their results; `prompt` does not: it waits for a line
/// on the terminal (standard input), which a regression run does not give.
const NOT_USED: &[&str] = &["prompt"];

/// Built-ins exempt from the *flat and nested* (`any` at a scalar and a structured type)
/// and *class instance* checks, with the reason. Empty: every built-in is covered.
const NO_TYPE_COVERAGE: &[(&str, &str)] = &[];

/// Built-ins exempt from the *parallel and serial* check, with the reason. Empty: even the
/// constants are used in both places.
const NO_CONTEXT_COVERAGE: &[(&str, &str)] = &[];

/// Built-ins exempt from the *empty sequence* and *empty element* checks, with the reason.
const NO_EMPTY_COVERAGE: &[(&str, &str)] = &[
    ("max_index", "unspecified on an empty sequence (a sentinel in the reference), as max_val"),
    ("print_debug", "the sequence is a label; what it prints is not NESL's value syntax"),
    ("open_in_file", "the sequence is a file name"),
    ("open_out_file", "the sequence is a file name"),
    ("open_append_file", "the sequence is a file name"),
    ("append_string_to_file", "the sequences are a text and a file name (io/ covers empty texts)"),
    ("read_string_from_file", "the sequence is a file name"),
    ("read_int_seq_from_file", "the sequence is a file name"),
    ("read_float_seq_from_file", "the sequence is a file name"),
];

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
    /// The [`Shape`]s of its arguments, or-ed.
    shapes: Shape,
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

/// What is statically known of a value's emptiness, as bits: [`EMPTY`] (it may be an
/// empty sequence), [`EMPTY_INNER`] (an element may be empty), [`EMPTY_INNER2`] (an
/// element's element may be empty).
type Shape = u8;
const EMPTY: Shape = 1;
const EMPTY_INNER: Shape = 2;
const EMPTY_INNER2: Shape = 4;

/// Names in scope with their [`Shape`], innermost last.
type ShapeEnv = Vec<(String, Shape)>;

/// The [`Shape`] of an expression, from the literals it is made of: `[] t`, `""`, an empty
/// range with literal bounds, sequence literals of those, and variables bound to them
/// (by `let`, a top-level binding, or an apply-to-each over such a literal).
fn shape(e: &Expr, env: &ShapeEnv) -> Shape {
    match &e.kind {
        ExprKind::EmptySeq(_) => EMPTY,
        ExprKind::Str(b) if b.is_empty() => EMPTY,
        ExprKind::Range { start, end, .. } => match (&start.kind, &end.kind) {
            (ExprKind::Int(a), ExprKind::Int(b)) if a >= b => EMPTY,
            _ => 0,
        },
        ExprKind::Seq(es) => es.iter().fold(0, |acc, x| {
            let s = shape(x, env);
            acc | if s & EMPTY != 0 { EMPTY_INNER } else { 0 } | if s & EMPTY_INNER != 0 { EMPTY_INNER2 } else { 0 }
        }),
        ExprKind::Var(id) => env.iter().rev().find(|(n, _)| *n == id.name).map_or(0, |(_, s)| *s),
        ExprKind::Pair(a, b) => shape(a, env) | shape(b, env),
        ExprKind::If(_, a, b) => shape(a, env) | shape(b, env),
        _ => 0,
    }
}

/// Records the built-ins an expression uses; `parallel` when it runs once per instance.
fn walk(e: &Expr, file: &str, parallel: bool, env: &mut ShapeEnv, uses: &mut BTreeMap<String, Uses>) {
    match &e.kind {
        ExprKind::Var(id) if id.res == Res::Builtin => record(uses, file, &id.name, e.ty.as_ref(), parallel),
        ExprKind::Call { func, arg } => {
            if func.res == Res::Builtin {
                let fty = match (&arg.ty, &e.ty) {
                    (Some(a), Some(r)) => Some(Type::fun(a.clone(), r.clone())),
                    _ => None,
                };
                record(uses, file, &func.name, fty.as_ref(), parallel);
                if let Some(u) = uses.get_mut(&func.name) {
                    u.shapes |= shape(arg, env);
                }
            }
            walk(arg, file, parallel, env, uses);
        }
        ExprKind::Pair(a, b) => {
            walk(a, file, parallel, env, uses);
            walk(b, file, parallel, env, uses);
        }
        ExprKind::If(c, a, b) => {
            for x in [c, a, b] {
                walk(x, file, parallel, env, uses);
            }
        }
        ExprKind::Let(binds, body) => {
            let n = env.len();
            for (p, x) in binds {
                walk(x, file, parallel, env, uses);
                if let PatternKind::Var(id) = &p.kind {
                    let s = shape(x, env);
                    env.push((id.name.clone(), s));
                }
            }
            walk(body, file, parallel, env, uses);
            env.truncate(n);
        }
        ExprKind::ApplyToEach { body, binders, filter } => {
            let n = env.len();
            for b in binders {
                walk(&b.seq, file, parallel, env, uses);
            }
            for b in binders {
                if let PatternKind::Var(id) = &b.pat.kind {
                    let s = shape(&b.seq, env) >> 1;
                    env.push((id.name.clone(), s));
                }
            }
            for x in filter.iter().chain(body.iter()) {
                walk(x, file, true, env, uses);
            }
            env.truncate(n);
        }
        ExprKind::Seq(es) => {
            for x in es {
                walk(x, file, parallel, env, uses);
            }
        }
        ExprKind::Range { start, end, stride } => {
            walk(start, file, parallel, env, uses);
            walk(end, file, parallel, env, uses);
            if let Some(s) = stride {
                walk(s, file, parallel, env, uses);
            }
        }
        ExprKind::Time(x) => walk(x, file, parallel, env, uses),
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

/// Whether the argument type of a function type `t` has a sequence, and a sequence whose
/// elements may be sequences (`[[a]]`, or `[a]` with `a` in class `any`).
fn seq_params(t: &Type) -> (bool, bool) {
    fn go(t: &Type, out: &mut (bool, bool)) {
        match t {
            Type::Seq(e) => {
                out.0 = true;
                if matches!(**e, Type::Seq(_)) || matches!(**e, Type::Var(v) if v.class == TypeClass::Any) {
                    out.1 = true;
                }
                go(e, out);
            }
            Type::Pair(a, b) => {
                go(a, out);
                go(b, out);
            }
            _ => {}
        }
    }
    let mut out = (false, false);
    if let Type::Fun(a, _) = t {
        go(a, &mut out);
    }
    out
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
        let mut globals = ShapeEnv::new();
        for item in parse_items(&src) {
            let Ok(mut form) = item else { continue };
            if session.check_item(&mut form).is_err() {
                continue;
            }
            match &form {
                TopLevel::Function(def) => {
                    if let Some(b) = &def.body {
                        walk(b, &file, true, &mut globals.clone(), &mut uses);
                    }
                }
                TopLevel::Expr(e) => walk(e, &file, false, &mut globals, &mut uses),
                TopLevel::Binding { pat, expr, .. } => {
                    walk(expr, &file, false, &mut globals, &mut uses);
                    if let PatternKind::Var(id) = &pat.kind {
                        let s = shape(expr, &globals);
                        globals.push((id.name.clone(), s));
                    }
                }
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
    let exempt_empty = |n: &str| NO_EMPTY_COVERAGE.iter().any(|(x, _)| *x == n);
    for name in BUILTINS.iter().map(|b| &b.name) {
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
        if !exempt_empty(name) {
            let (takes_seq, takes_nested) = seq_params(&scheme.ty);
            if takes_seq && u.shapes & EMPTY == 0 {
                missing.push(format!("{name}: never given an empty sequence"));
            }
            if takes_nested && u.shapes & EMPTY_INNER == 0 {
                missing.push(format!("{name}: never given a sequence with an empty element"));
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
    println!("{programs} programs use {} of the {} built-ins", uses.len(), BUILTINS.len());
    assert!(missing.is_empty(), "{} gaps in the coverage of the built-ins:\n{}", missing.len(), missing.join("\n"));
}
