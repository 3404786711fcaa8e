//! A small transcript driver for the shared conformance corpus (ignored by default:
//! `cargo test -p nesl-front --test flatten_corpus -- --ignored` writes one transcript
//! per program under `$FLATTEN_CORPUS_OUT` (default `/tmp/flatten_corpus`), to be compared
//! with `compare.py`). The real top level is the `nesl` driver's session; this test only exists to
//! measure the flattener.

use nesl_front::ast::TopLevel;
use nesl_front::check::{definition_line, format_type, ItemInfo, Session};
use nesl_front::flatten::{compile_expr, CompileOptions, GlobalValue, Globals};
use nesl_front::value::format_value;
use vcode::HostValue as TlHost;
use nesl_front::ty::Type;
use std::fmt::Write as _;
use std::path::Path;

fn to_tl(v: &vcode::HostValue) -> TlHost {
    match v {
        vcode::HostValue::Int(a) => TlHost::Int(a.clone()),
        vcode::HostValue::Float(a) => TlHost::Float(a.clone()),
        vcode::HostValue::Bool(a) => TlHost::Bool(a.clone()),
        vcode::HostValue::Segdes(a) => TlHost::Segdes(a.clone()),
    }
}

fn split_pattern(p: &nesl_front::ast::Pattern, ty: &Type, slots: &[vcode::HostValue], session: &Session, out: &mut Vec<(String, GlobalValue)>) {
    use nesl_front::ast::PatternKind;
    match &p.kind {
        PatternKind::Var(id) => out.push((id.name.clone(), GlobalValue { ty: ty.clone(), slots: slots.iter().cloned().map(vcode::Const::from).collect() })),
        PatternKind::Pair(a, b) => {
            if let Type::Pair(ta, tb) = ty {
                let n = nesl_front::flatten::flat_slots_in(session, ta).len();
                split_pattern(a, ta, &slots[..n.min(slots.len())], session, out);
                split_pattern(b, tb, &slots[n.min(slots.len())..], session, out);
            }
        }
        PatternKind::Con(_, inner) => {
            if let Type::Data(name, args) = ty {
                if let Some(d) = session.datatypes.get(name) {
                    let mut s = std::collections::HashMap::new();
                    for (v, a) in d.params.iter().zip(args) {
                        s.insert(v.id, a.clone());
                    }
                    let f = nesl_front::check::unify::substitute(&d.fields, &s);
                    split_pattern(inner, &f, slots, session, out);
                }
            }
        }
    }
}

fn transcript(src: &str) -> String {
    let mut t = String::new();
    let mut session = Session::new();
    let mut globals = Globals::new();
    for res in nesl_front::parser::parse_items(src) {
        let mut item = match res {
            Ok(i) => i,
            Err(d) => {
                let _ = write!(t, "\nError at top level.\n{:?}\n\n", d.first().map(|x| &x.message));
                continue;
            }
        };
        let info = match session.check_item(&mut item) {
            Ok(i) => i,
            Err(d) => {
                let _ = write!(t, "\nError at top level.\n{:?}\n\n", d.first().map(|x| &x.message));
                continue;
            }
        };
        if let Some(l) = definition_line(&info) {
            let _ = writeln!(t, "{l}");
            continue;
        }
        let (expr, pat, lhs) = match &item {
            TopLevel::Expr(e) => (e, None, "it".to_string()),
            TopLevel::Binding { pat, expr, span } => {
                let s = &src[span.start as usize..pat.span.end as usize];
                (expr, Some(pat), s.trim().to_string())
            }
            _ => continue,
        };
        let ty = match &info {
            ItemInfo::Expr { ty } => ty.clone(),
            _ => expr.ty.clone().unwrap_or(Type::Int),
        };
        let code = match compile_expr(&session, expr, &globals, &CompileOptions::default()) {
            Ok(c) => c,
            Err(d) => {
                let _ = write!(t, "\nError at top level (compile).\n{:?}\n\n", d.first().map(|x| &x.message));
                continue;
            }
        };
        let prog = match vcode::parse(&code.to_string()) {
            Ok(p) => p,
            Err(e) => {
                let _ = write!(t, "\nError: bad vcode {e:?}\n\n");
                continue;
            }
        };
        if let Err(e) = vcode::verify(&prog) {
            let _ = write!(t, "\nError: verify {e:?}\n\n");
            continue;
        }
        let mut w = Vec::new();
        let r = vcode::run(&prog, &mut vcode::CpuCvl::new(), &mut w, &vcode::RunOptions::default());
        t.push_str(&String::from_utf8_lossy(&w));
        match r {
            Ok(rep) => match rep.outcome {
                vcode::RunOutcome::Finished(stack) => {
                    let tl: Vec<TlHost> = stack.iter().map(to_tl).collect();
                    let data = |n: &str, a: &[Type]| -> Option<Type> {
                        let d = session.datatypes.get(n)?;
                        let mut s = std::collections::HashMap::new();
                        for (v, x) in d.params.iter().zip(a) {
                            s.insert(v.id, x.clone());
                        }
                        Some(nesl_front::check::unify::substitute(&d.fields, &s))
                    };
                    match format_value(&ty, &tl, &data, Some(100)) {
                        Ok(v) => {
                            let _ = writeln!(t, "{lhs} = {v} : {}", format_type(&ty));
                            match pat {
                                Some(p) => {
                                    let mut out = Vec::new();
                                    split_pattern(p, &ty, &stack, &session, &mut out);
                                    for (n, g) in out {
                                        globals.insert(n, g);
                                    }
                                }
                                None => {
                                    globals.insert("it".into(), GlobalValue { ty: ty.clone(), slots: stack.iter().cloned().map(vcode::Const::from).collect() });
                                }
                            }
                        }
                        Err(e) => {
                            let _ = write!(t, "\nError: print {e}\n\n");
                        }
                    }
                }
                vcode::RunOutcome::Exited(_) => t.push_str("\n\n"),
            },
            Err(e) => {
                let _ = write!(t, "\nError: trap {e:?}\n\n");
            }
        }
    }
    t
}

#[test]
#[ignore]
fn corpus_transcripts() {
    let root_s = std::env::var("FLATTEN_CORPUS_ROOT").unwrap_or_else(|_| "/work/shared/conformance/nesl".into());
    let root = Path::new(&root_s);
    let out = std::env::var("FLATTEN_CORPUS_OUT").unwrap_or_else(|_| "/tmp/flatten_corpus".into());
    let filter = std::env::var("FLATTEN_CORPUS_FILTER").unwrap_or_default();
    let Ok(dirs) = std::fs::read_dir(root) else { return };
    for d in dirs.flatten() {
        let Ok(files) = std::fs::read_dir(d.path()) else { continue };
        for f in files.flatten() {
            let p = f.path();
            if p.extension().and_then(|e| e.to_str()) != Some("nesl") || !p.to_string_lossy().contains(&filter) {
                continue;
            }
            let src = std::fs::read_to_string(&p).unwrap_or_default();
            let t = std::panic::catch_unwind(|| transcript(&src)).unwrap_or_else(|_| "\nError: panic\n\n".into());
            let cat = d.file_name().to_string_lossy().into_owned();
            let dir = Path::new(&out).join(cat);
            let _ = std::fs::create_dir_all(&dir);
            let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let _ = std::fs::write(dir.join(format!("{name}.out")), t);
        }
    }
}
