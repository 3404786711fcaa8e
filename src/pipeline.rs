//! The compiler pipeline, stage by stage: source text -> checked forms ([`check`]) ->
//! `vcode::Program` ([`flatten`]; [`compile`] does both) -> optimised program
//! ([`optimise`]). VCODE and FCODE files enter at [`read_vcode`]. Every stage returns the
//! driver's [`Error`]; nothing here prints.

use crate::{Error, Result};
use nesl_front::ast::TopLevel;
use nesl_front::check::{ItemInfo, Session};
use nesl_front::flatten::{compile_program, CompileOptions};
use nesl_front::parser::parse_items;
use nesl_front::Diagnostic;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A source text and the name messages give it.
#[derive(Clone, Debug)]
pub struct Source {
    /// The name in messages (the path as given).
    pub name: String,
    /// The text (invalid UTF-8 replaced).
    pub text: Arc<str>,
}

/// Reads the file at `path` (bytes that are not UTF-8 are replaced).
pub fn read_source(path: &Path) -> Result<Source> {
    let bytes = std::fs::read(path).map_err(|e| Error::read(path, e))?;
    Ok(Source { name: path.display().to_string(), text: String::from_utf8_lossy(&bytes).into() })
}

/// A file's forms, checked in order in one session.
pub struct Checked {
    /// The session that checked them (what they define).
    pub session: Session,
    /// The forms, with their types filled in.
    pub items: Vec<TopLevel>,
}

/// Checks every form of `src` in order, each against what the earlier ones defined,
/// calling `each` with the outcome of each form (its description, or the diagnostics of
/// a form that does not parse or check); a failed form defines nothing and checking goes
/// on. Returns the session and the forms that checked.
pub fn check_each(name: &str, src: &str, mut each: impl FnMut(Result<&ItemInfo, &[Diagnostic]>)) -> Checked {
    let mut session = Session::new();
    session.set_source(name, src);
    let mut items = Vec::new();
    for item in parse_items(src) {
        match item.and_then(|mut form| session.check_item(&mut form).map(|info| (form, info))) {
            Ok((form, info)) => {
                each(Ok(&info));
                items.push(form);
            }
            Err(diags) => each(Err(&diags)),
        }
    }
    Checked { session, items }
}

/// Checks every form of `src` (named `name`): [`Error::Compile`] with the diagnostics of
/// every form that failed, in order.
pub fn check(name: &str, src: &str) -> Result<Checked> {
    let mut diags = Vec::new();
    let checked = check_each(name, src, |r| {
        if let Err(d) = r {
            diags.extend_from_slice(d);
        }
    });
    if diags.is_empty() {
        Ok(checked)
    } else {
        Err(Error::Compile { file: name.to_string(), text: src.into(), diags })
    }
}

/// The VCODE program of checked forms: its entry function evaluates them in order and
/// leaves the values of the expression forms on the stack
/// ([`nesl_front::flatten::compile_program`]).
pub fn flatten(checked: &Checked, opts: &CompileOptions) -> Result<vcode::Program> {
    compile_program(&checked.session, &checked.items, opts).map_err(|diags| {
        let src = checked.session.source();
        Error::Compile {
            file: src.map(|s| s.name.to_string()).unwrap_or_default(),
            text: src.map(|s| Arc::from(&*s.text)).unwrap_or_else(|| "".into()),
            diags,
        }
    })
}

/// Checks and flattens the whole file `src` (named `name`): what `nesl compile` writes.
pub fn compile(name: &str, src: &str, opts: &CompileOptions) -> Result<vcode::Program> {
    flatten(&check(name, src)?, opts)
}

/// `program` optimised at `level` (0: as it is; 1: inlined, let form, re-stacked; 2: also
/// fused into superoperators).
pub fn optimise(program: &vcode::Program, level: u8) -> Result<vcode::Program> {
    optimise_with(program, level, &fcode_opt::OptOptions::default()).map(|(p, _)| p)
}

/// [`optimise`] with the optimiser's options (verification after every pass, a dump,
/// timings), returning its report too.
pub fn optimise_with(
    program: &vcode::Program,
    level: u8,
    opts: &fcode_opt::OptOptions,
) -> Result<(vcode::Program, fcode_opt::OptReport)> {
    if level > 2 {
        return Err(Error::OptLevel(level));
    }
    fcode_opt::optimize_report(program, level, opts).map_err(|error| Error::Optimise { level, error })
}

/// Reads and parses the VCODE or FCODE file at `path`; when `verify`, also checks it
/// with the VCODE verifier. [`Error::Vcode`] names each problem's line.
pub fn read_vcode(path: &Path, verify: bool) -> Result<vcode::Program> {
    let src = read_source(path)?;
    let vcode_error = |errors: Vec<String>| Error::Vcode { file: src.name.clone(), errors };
    if path.extension().is_some_and(|e| e == "nesl") {
        // One clear error instead of a VCODE parse error for every line of NESL.
        return Err(vcode_error(vec![
            "1:1: this is NESL source, not VCODE: `nesl run` runs it, `nesl compile` writes its VCODE".into(),
        ]));
    }
    let program = vcode::parse(&src.text).map_err(|errs| vcode_error(errs.iter().map(|e| e.to_string()).collect()))?;
    if verify {
        vcode::verify(&program).map_err(|errs| vcode_error(errs.iter().map(|e| e.to_string()).collect()))?;
    }
    Ok(program)
}

/// Compiles the whole file `src` (named `name`) as `nesl compile` does and optimises the
/// result at `level`, timing each stage: parse, check, flatten, optimise (what
/// `nesl frontbench` prints). `Err` says why the file does not compile.
pub fn timed_compile(name: &str, src: &str, level: u8) -> Result<[Duration; 4]> {
    let t0 = Instant::now();
    let parsed = parse_items(src);
    let t1 = Instant::now();
    let mut session = Session::new();
    session.set_source(name, src);
    let mut items = Vec::new();
    let mut diags = Vec::new();
    for item in parsed {
        match item.and_then(|mut form| session.check_item(&mut form).map(|_| form)) {
            Ok(form) => items.push(form),
            Err(d) => diags.extend(d),
        }
    }
    if !diags.is_empty() {
        return Err(Error::Compile { file: name.to_string(), text: src.into(), diags });
    }
    // Bound to a name: the session and the forms are dropped after the timings.
    let checked = Checked { session, items };
    let t2 = Instant::now();
    let program = flatten(&checked, &CompileOptions::default())?;
    let t3 = Instant::now();
    optimise(&program, level)?;
    let t4 = Instant::now();
    Ok([t1 - t0, t2 - t1, t3 - t2, t4 - t3])
}
