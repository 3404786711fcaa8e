//! Shared driver of the flattening tests: source → parse → check → compile → verify →
//! run, one result per top-level expression.

#![allow(dead_code)]

use nesl_front::ast::TopLevel;
use nesl_front::check::Session;
use nesl_front::flatten::{compile_expr, CompileOptions, GlobalValue, Globals};

/// What one top-level expression did.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// The final stack, formatted as vinterp prints it.
    Stack(String),
    /// The program stopped with `EXIT`; what it wrote.
    Exit(String),
}

/// Runs every form of `src`; panics on compile, verify or interpreter errors.
pub fn run_all(src: &str) -> Vec<Outcome> {
    run_opts(src, CompileOptions::default())
}

/// [`run_all`] with options.
pub fn run_opts(src: &str, opts: CompileOptions) -> Vec<Outcome> {
    let (items, diags) = nesl_front::parser::parse_program(src);
    assert!(diags.is_empty(), "parse errors: {diags:?}");
    let mut session = Session::new();
    let mut globals = Globals::new();
    let mut out = Vec::new();
    for mut item in items {
        if let Err(d) = session.check_item(&mut item) {
            panic!("check error: {d:?}");
        }
        let (expr, pat) = match &item {
            TopLevel::Expr(e) => (e, None),
            TopLevel::Binding { pat, expr, .. } => (expr, Some(pat)),
            _ => continue,
        };
        let code = match compile_expr(&session, expr, &globals, &opts) {
            Ok(c) => c,
            Err(d) => panic!("compile error: {d:?}"),
        };
        let prog = vcode::parse(&code.to_string()).unwrap_or_else(|e| panic!("parse of VCODE failed: {e:?}\n{code}"));
        assert!(prog.same_code(&code), "the printed VCODE reads back differently:\n{code}");
        if let Err(e) = vcode::verify(&prog) {
            panic!("verify failed: {e:?}\n{code}");
        }
        let mut w = Vec::new();
        let r = match vcode::run(&prog, &mut vcode::CpuCvl::new(), &mut w, &vcode::RunOptions::default()) {
            Ok(r) => r,
            // A failed NESL check: its data, in place of CMU's message (held back).
            Err(vcode::Trap { kind: vcode::TrapKind::Check(c), .. }) => {
                out.push(Outcome::Exit(format!("CHECK: {c}")));
                continue;
            }
            Err(t) => panic!("trap {t:?}\n{code}"),
        };
        match r.outcome {
            vcode::RunOutcome::Finished(stack) => {
                if let Some(p) = pat {
                    if let nesl_front::ast::PatternKind::Var(id) = &p.kind {
                        let ty = expr.ty.clone().expect("typed");
                        globals.insert(id.name.clone(), GlobalValue { ty, slots: stack.iter().cloned().map(vcode::Const::from).collect() });
                    }
                }
                out.push(Outcome::Stack(vcode::format_vinterp(&stack)));
            }
            vcode::RunOutcome::Exited(_) => out.push(Outcome::Exit(String::from_utf8_lossy(&w).into_owned())),
        }
    }
    out
}

/// The stack of each expression, one string per expression (exits as `EXIT:<text>`).
pub fn stacks(src: &str) -> Vec<String> {
    run_all(src)
        .into_iter()
        .map(|o| match o {
            Outcome::Stack(s) => s.trim_end().replace('\n', " "),
            Outcome::Exit(t) => format!("EXIT:{}", t.trim()),
        })
        .collect()
}

/// The VCODE of the last top-level expression of `src` (earlier forms only define).
pub fn vcode_of(src: &str) -> String {
    let (items, diags) = nesl_front::parser::parse_program(src);
    assert!(diags.is_empty(), "parse errors: {diags:?}");
    let mut session = Session::new();
    let mut last = None;
    for mut item in items {
        if let Err(d) = session.check_item(&mut item) {
            panic!("check error: {d:?}");
        }
        if let TopLevel::Expr(e) = &item {
            let code = compile_expr(&session, e, &Globals::new(), &CompileOptions::default()).unwrap_or_else(|d| panic!("compile error: {d:?}"));
            last = Some(code.to_string());
        }
    }
    last.expect("an expression")
}
