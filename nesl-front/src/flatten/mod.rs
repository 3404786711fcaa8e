//! Flattening: typed AST to VCODE text (the CMU dialect of `spec/vcode.md`).
//!
//! [`compile_expr`] turns one checked top-level expression into a VCODE program whose
//! entry function (the first in the text) leaves the expression's value on the stack in
//! the flat layout of vcode.md section 3 ([`flat_slots`] gives that layout).
//!
//! How (spec Part 2): every function instance is generated in its lifted ("extended")
//! form only, taking its arguments one level up plus a context segment descriptor; the
//! top level runs in a context of one instance ([`gen`]). Sequence primitives are index
//! computations followed by a type-directed gather ([`helpers`], [`prims`]); library
//! functions that are natural in NESL are written in NESL ([`prelude`]) and compiled
//! like user functions.

mod builder;
mod effects;
mod gen;
mod helpers;
mod layout;
pub mod prelude;
mod prims;
mod strings;

pub use layout::SlotKind;

use crate::ast::{Expr, FunDef};
use crate::check::Session;
use crate::diag::Diagnostic;
use crate::ty::Type;
use builder::{FunBuilder, Slot};
use gen::{Compiler, Env, ProgInfo};
use layout::{lay_of, DataTypes};

/// Options of the code generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Compile NESL's run-time argument checks (index bounds, length mismatches, ...).
    pub arg_check: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions { arg_check: true }
    }
}

/// A top-level binding's value: its type and its slots in the flat layout.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalValue {
    /// The (ground) type.
    pub ty: Type,
    /// The slots, bottom first (as [`flat_slots`] of `ty` lists them).
    pub slots: Vec<vcode::HostValue>,
}

/// The values of the global variables bound so far, by name.
pub type Globals = indexmap::IndexMap<String, GlobalValue>;

/// What the code generator reads from a checking session (and the prelude).
struct Info<'a> {
    session: &'a Session,
    prelude: Option<&'a Session>,
}

fn fields_in(session: &Session, name: &str, args: &[Type]) -> Option<Type> {
    let d = session.datatypes.get(name)?;
    let mut s = std::collections::HashMap::new();
    for (v, a) in d.params.iter().zip(args) {
        s.insert(v.id, a.clone());
    }
    Some(layout::subst(&d.fields, &s))
}

impl DataTypes for Info<'_> {
    fn fields(&self, name: &str, args: &[Type]) -> Option<Type> {
        fields_in(self.session, name, args).or_else(|| self.prelude.and_then(|p| fields_in(p, name, args)))
    }
}

impl ProgInfo for Info<'_> {
    fn function(&self, name: &str) -> Option<&FunDef> {
        self.session.functions.get(name).map(|f| &f.def)
    }
    fn prelude(&self, name: &str) -> Option<&FunDef> {
        self.prelude?.functions.get(name).map(|f| &f.def)
    }
}

/// The flat layout of a type: the kinds of its VCODE slots, bottom first (vcode.md
/// section 3). Datatypes other than `stream` are laid out as `int` here; use
/// [`flat_slots_in`] to resolve them through a session.
pub fn flat_slots(ty: &Type) -> Vec<SlotKind> {
    struct NoData;
    impl DataTypes for NoData {
        fn fields(&self, _: &str, _: &[Type]) -> Option<Type> {
            Some(Type::Int)
        }
    }
    let mut out = Vec::new();
    if let Ok(l) = lay_of(ty, &NoData) {
        l.slots(&mut out);
    }
    out
}

/// The flat layout of a type whose datatypes are defined in `session`.
pub fn flat_slots_in(session: &Session, ty: &Type) -> Vec<SlotKind> {
    let info = Info { session, prelude: None };
    let mut out = Vec::new();
    if let Ok(l) = lay_of(ty, &info) {
        l.slots(&mut out);
    }
    out
}

/// Emits the constant of one host value (a global's slot) and returns its slot.
fn host_const(fb: &mut FunBuilder, hv: &vcode::HostValue) -> Slot {
    fn list<T: ToString>(v: &[T]) -> String {
        v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ")
    }
    match hv {
        vcode::HostValue::Int(v) => fb.konst(&format!("INT ({})", list(v))),
        vcode::HostValue::Bool(v) => {
            let t: Vec<&str> = v.iter().map(|b| if *b { "T" } else { "F" }).collect();
            fb.konst(&format!("BOOL ({})", t.join(" ")))
        }
        vcode::HostValue::Float(v) => {
            let t: Vec<String> = v.iter().map(|f| gen::float_text(*f)).collect();
            fb.konst(&format!("FLOAT ({})", t.join(" ")))
        }
        vcode::HostValue::Segdes(v) => {
            let l = fb.konst(&format!("INT ({})", list(v)));
            fb.op1("MAKE_SEGDES", &[l])
        }
    }
}

/// VCODE text (CMU dialect) of a program whose entry function (first in the file)
/// evaluates `expr` and leaves its value on the stack in the flat layout of vcode.md
/// section 3 (context of one instance: scalars are length-1 vectors, a sequence has a
/// 1-segment segment descriptor). `expr` must have been checked by `session`.
pub fn compile_expr(session: &Session, expr: &Expr, globals: &Globals, opts: &CompileOptions) -> Result<String, Vec<Diagnostic>> {
    compile_exprs(session, std::slice::from_ref(expr), globals, opts)
}

/// VCODE text of a whole program: the entry function evaluates the given forms in order
/// (in the session that checked them) and leaves the values of the expression forms
/// (`exp;`) on the stack, one after the other; the values of global bindings
/// (`pattern = exp;`) and of `it` are kept for the later forms and the functions that use
/// them (each evaluated once, where it stands) and dropped at the end.
/// Function and datatype definitions and commands produce no code of their own.
pub fn compile_program(session: &Session, items: &[crate::ast::TopLevel], opts: &CompileOptions) -> Result<String, Vec<Diagnostic>> {
    use crate::ast::TopLevel;
    let prelude = match prelude::prelude() {
        Ok(p) => Some(p),
        Err(d) => return Err(d.clone()),
    };
    let info = Info { session, prelude };
    let globals = Globals::new();
    let mut c = Compiler::new(&info, &globals, opts.arg_check);
    let (mut fb, _) = FunBuilder::new(0);
    let mut results = Vec::new();
    for item in items {
        let (e, pat) = match item {
            TopLevel::Expr(e) => (e, None),
            TopLevel::Binding { pat, expr, .. } => (expr, Some(pat)),
            TopLevel::Function(def) => {
                // A redefinition starts a new epoch (see `Compiler::user_defs`).
                let name = &def.name.name;
                if c.user_defs.iter().any(|(n, _)| n == name) {
                    c.epoch += 1;
                    c.epoch_limits.push(0);
                }
                c.user_defs.push((name.clone(), def));
                c.epoch_limits[c.epoch] = c.user_defs.len();
                continue;
            }
            _ => continue,
        };
        let ctx = c.unit_ctx(&mut fb);
        let mut env = Env::new();
        let v = c.expr(&mut fb, &mut env, ctx, e).map_err(|d| vec![d])?;
        match pat {
            None => {
                results.extend(v.s.iter().copied());
                // `it` names the value of the last expression form, as at the top level.
                c.main_globals.push(("it".to_string(), v));
            }
            Some(p) => {
                let mut env = Env::new();
                c.bind(p, v, &mut env).map_err(|d| vec![d])?;
                c.main_globals.extend(env);
            }
        }
    }
    // Functions are compiled now, each into its own VCODE function; those that read
    // top-level variables receive them as hidden arguments (see `Compiler::main_globals`).
    c.drain().map_err(|d| vec![d])?;
    let mut text = fb.finish("MAIN1_1", &results);
    for f in &c.funcs {
        text.push('\n');
        text.push_str(f);
    }
    Ok(text)
}

/// A compiled program whose large constants travel beside its text.
#[derive(Clone, Debug, PartialEq)]
pub struct Compiled {
    /// VCODE text (CMU dialect); each external constant is a placeholder
    /// `CONST <type> ()` on its own line.
    pub text: String,
    /// `(1-based line of the placeholder, value)`, for `vcode::Program::fill_consts`.
    pub consts: Vec<(u32, vcode::HostValue)>,
}

/// Slots of global values longer than this are passed as external constants by
/// [`compile_expr_external`] (shorter ones are written into the text, readable).
pub const EXTERNAL_CONST_OVER: usize = 16;

/// [`compile_expr`], except that global values with more than [`EXTERNAL_CONST_OVER`]
/// elements in a slot are not printed into the text (a 10M-element global would make
/// hundreds of megabytes of VCODE) but returned beside it.
pub fn compile_expr_external(session: &Session, expr: &Expr, globals: &Globals, opts: &CompileOptions) -> Result<Compiled, Vec<Diagnostic>> {
    compile_exprs_inner(session, std::slice::from_ref(expr), globals, opts, Some(EXTERNAL_CONST_OVER))
}

/// Like [`compile_expr`] for several expressions: the entry function leaves their
/// values on the stack one after the other, in order.
pub fn compile_exprs(session: &Session, exprs: &[Expr], globals: &Globals, opts: &CompileOptions) -> Result<String, Vec<Diagnostic>> {
    let c = compile_exprs_inner(session, exprs, globals, opts, None)?;
    debug_assert!(c.consts.is_empty());
    Ok(c.text)
}

fn compile_exprs_inner(
    session: &Session,
    exprs: &[Expr],
    globals: &Globals,
    opts: &CompileOptions,
    external_over: Option<usize>,
) -> Result<Compiled, Vec<Diagnostic>> {
    let prelude = match prelude::prelude() {
        Ok(p) => Some(p),
        Err(d) => return Err(d.clone()),
    };
    let info = Info { session, prelude };
    let mut c = Compiler::new(&info, globals, opts.arg_check);
    c.external_over = external_over;
    let (mut fb, _) = FunBuilder::new(0);
    let mut results = Vec::new();
    for e in exprs {
        let mark = fb.height();
        let ctx = c.unit_ctx(&mut fb);
        let mut env = Env::new();
        let v = c.expr(&mut fb, &mut env, ctx, e).map_err(|d| vec![d])?;
        fb.collapse(mark, &v.s);
        results.extend(v.s);
    }
    c.drain().map_err(|d| vec![d])?;
    let (mut text, main_external) = fb.finish_external("MAIN1_1", &results);
    let mut consts = Vec::new();
    let mut values: Vec<Option<vcode::HostValue>> = c.external_values.into_iter().map(Some).collect();
    let mut take = |line: usize, id: usize| (line as u32, values[id].take().expect("each external constant is used once"));
    for (line, id) in main_external {
        consts.push(take(line + 1, id));
    }
    // 1-based line of each function's `FUNC`, counted as the text is assembled.
    let mut lines = text.bytes().filter(|&b| b == b'\n').count();
    let mut starts = Vec::with_capacity(c.funcs.len());
    for f in &c.funcs {
        text.push('\n');
        lines += 1;
        starts.push(lines + 1);
        text.push_str(f);
        lines += f.bytes().filter(|&b| b == b'\n').count();
    }
    for &(fi, line, id) in &c.external_sites {
        consts.push(take(starts[fi] + line, id));
    }
    Ok(Compiled { text, consts })
}
