//! Flattening: typed AST to a VCODE program (`vcode::Program`, the CMU dialect of
//! `spec/vcode.md`), built instruction by instruction through a typed builder
//! ([`builder`]) whose stack effects come from the instruction table; text is written
//! only when a user asks for it (`nesl compile`), by printing the program.
//!
//! [`compile_expr`] turns one checked top-level expression into a VCODE program whose
//! entry function (the first of the program) leaves the expression's value on the stack in
//! the flat layout of vcode.md section 3 ([`flat_slots`] gives that layout).
//!
//! How (spec Part 2): a function instance is generated in its lifted ("extended") form,
//! taking its arguments one level up plus a context segment descriptor, for calls inside
//! an apply-to-each, and in its serial form, taking plain arguments and no descriptor, for
//! calls in a context of one instance (the top level, serial code): scalar arithmetic,
//! `if` and calls there are scalar VCODE, as CMU's compiler writes them ([`gen`]). The
//! builder writes stack code by liveness ([`stack`]): a value dies at its last use and a
//! call in tail position runs in constant stack. Sequence primitives are index
//! computations followed by a type-directed gather ([`helpers`], [`prims`]); library
//! functions that are natural in NESL are written in NESL ([`prelude`]) and compiled
//! like user functions.

mod blocked;
mod builder;
mod gen;
mod helpers;
mod layout;
pub mod prelude;
mod prims;
mod stack;

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
    /// The slots, bottom first (as [`flat_slots`] of `ty` lists them), as list
    /// constants (shared: compiling a use of a large global does not copy it).
    pub slots: Vec<vcode::Const>,
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
    fn source_of(&self, origin: gen::Origin, name: &str) -> Option<std::sync::Arc<crate::diag::Source>> {
        let s = match origin {
            gen::Origin::User => self.session,
            gen::Origin::Prelude => self.prelude?,
        };
        match s.functions.get(name).and_then(|f| f.source) {
            Some(i) => s.sources.get(i).cloned(),
            // Whole-file compilation: the functions come from the current source.
            None if origin == gen::Origin::User => s.source().cloned(),
            None => None,
        }
    }
    fn current_source(&self) -> Option<std::sync::Arc<crate::diag::Source>> {
        self.session.source().cloned()
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

/// Emits a global's slot (a list constant) and returns its slot. A segment descriptor
/// is built from its lengths by `MAKE_SEGDES`, as CMU's VCODE does.
fn host_const(fb: &mut FunBuilder, c: &vcode::Const) -> Slot {
    match c {
        vcode::Const::Segdes(v, _) => {
            let l = fb.konst(vcode::Const::Int(v.clone(), true));
            fb.op1(vcode::Opcode::MakeSegdes, &[l])
        }
        c => fb.konst(c.clone()),
    }
}

/// The VCODE program (CMU dialect) whose entry function (the first)
/// evaluates `expr` and leaves its value on the stack in the flat layout of vcode.md
/// section 3 (context of one instance: scalars are length-1 vectors, a sequence has a
/// 1-segment segment descriptor). `expr` must have been checked by `session`.
pub fn compile_expr(session: &Session, expr: &Expr, globals: &Globals, opts: &CompileOptions) -> Result<vcode::Program, Vec<Diagnostic>> {
    compile_exprs(session, std::slice::from_ref(expr), globals, opts)
}

/// The VCODE program of a whole file: the entry function evaluates the given forms in order
/// (in the session that checked them) and leaves the values of the expression forms
/// (`exp;`) on the stack, one after the other; the values of global bindings
/// (`pattern = exp;`) and of `it` are kept for the later forms and the functions that use
/// them (each evaluated once, where it stands) and dropped at the end.
/// Function and datatype definitions and commands produce no code of their own.
pub fn compile_program(session: &Session, items: &[crate::ast::TopLevel], opts: &CompileOptions) -> Result<vcode::Program, Vec<Diagnostic>> {
    use crate::ast::TopLevel;
    let prelude = match prelude::prelude() {
        Ok(p) => Some(p),
        Err(d) => return Err(d.clone()),
    };
    let info = Info { session, prelude };
    let globals = Globals::new();
    let items = keep_old_callers(items);
    let mut c = Compiler::new(&info, &globals, opts.arg_check);
    let (mut fb, _) = FunBuilder::new(0);
    let mut results = Vec::new();
    for item in &items {
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
    Ok(c.into_program(fb.finish("MAIN1_1", &results)))
}

/// The items of a whole program with spec 6.1's redefinition rule made explicit, as
/// the top level applies it ([`Session`]'s `keep_old_callers`): where a function is
/// defined again with another type, its earlier definition is added as `name'N` (its
/// recursive calls pointed at itself) and the functions defined before that call it are
/// defined again calling `name'N`, so the forms after keep their results.
fn keep_old_callers(items: &[crate::ast::TopLevel]) -> Vec<crate::ast::TopLevel> {
    use crate::ast::{FunDef, TopLevel};
    use crate::check::{calls_function, rename_calls};
    fn type_of(d: &FunDef) -> Option<String> {
        let p = d.params.ty.clone()?;
        let r = d.body.as_ref()?.ty.clone()?;
        Some(crate::check::format_type(&Type::fun(p, r)))
    }
    let mut out: Vec<TopLevel> = Vec::with_capacity(items.len());
    // The current definition of each function: its index in `out`.
    let mut live: indexmap::IndexMap<String, usize> = indexmap::IndexMap::new();
    for item in items {
        if let TopLevel::Function(def) = item {
            let name = def.name.name.clone();
            let old = live.get(&name).and_then(|&i| match &out[i] {
                TopLevel::Function(d) => Some(d.clone()),
                _ => None,
            });
            if let Some(old) = old.filter(|o| type_of(o) != type_of(def)) {
                let callers: Vec<usize> = live
                    .iter()
                    .filter(|(n, _)| **n != name)
                    .filter_map(|(_, &i)| match &out[i] {
                        TopLevel::Function(d) if d.body.as_ref().is_some_and(|b| calls_function(b, &name)) => Some(i),
                        _ => None,
                    })
                    .collect();
                if !callers.is_empty() {
                    let kept_name = (1..)
                        .map(|i| format!("{name}'{i}"))
                        .find(|h| !live.contains_key(h))
                        .unwrap_or_else(|| format!("{name}'"));
                    let mut kept = old;
                    kept.name.name = kept_name.clone();
                    if let Some(b) = kept.body.as_mut() {
                        rename_calls(b, &name, &kept_name);
                    }
                    live.insert(kept_name.clone(), out.len());
                    out.push(TopLevel::Function(kept));
                    for i in callers {
                        let TopLevel::Function(d) = &out[i] else { continue };
                        let mut d = d.clone();
                        if let Some(b) = d.body.as_mut() {
                            rename_calls(b, &name, &kept_name);
                        }
                        live.insert(d.name.name.clone(), out.len());
                        out.push(TopLevel::Function(d));
                    }
                }
            }
            live.insert(name, out.len());
        }
        out.push(item.clone());
    }
    out
}

/// Like [`compile_expr`] for several expressions: the entry function leaves their
/// values on the stack one after the other, in order.
pub fn compile_exprs(session: &Session, exprs: &[Expr], globals: &Globals, opts: &CompileOptions) -> Result<vcode::Program, Vec<Diagnostic>> {
    let prelude = match prelude::prelude() {
        Ok(p) => Some(p),
        Err(d) => return Err(d.clone()),
    };
    let info = Info { session, prelude };
    let mut c = Compiler::new(&info, globals, opts.arg_check);
    let (mut fb, _) = FunBuilder::new(0);
    let mut results = Vec::new();
    for e in exprs {
        let ctx = c.unit_ctx(&mut fb);
        let mut env = Env::new();
        let v = c.expr(&mut fb, &mut env, ctx, e).map_err(|d| vec![d])?;
        results.extend(v.s);
    }
    c.drain().map_err(|d| vec![d])?;
    Ok(c.into_program(fb.finish("MAIN1_1", &results)))
}
