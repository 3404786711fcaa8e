//! The flattening code generator: typed NESL expressions to lifted VCODE.
//!
//! Every expression is compiled in a *context* of `N` parallel instances, given by a
//! context segment descriptor (one segment of length `N`). A value of type `T` is then
//! held in the flat layout of `T` "one level up": a scalar is a vector of `N` elements, a
//! sequence a segment descriptor with `N` segments plus its elements, and so on
//! (spec Part 2, sections 9-12). Top-level code runs in a context of one instance, where
//! this is exactly the plain layout of vcode.md section 3.
//!
//! Every user function instance (function, concrete argument type, serial or lifted)
//! becomes one VCODE function. The lifted one takes its arguments in the lifted layout and
//! the context on top; the serial one, for calls in a context of one instance (where
//! `Ctx::unit` holds and the lifted layout is the plain one), takes just the arguments and
//! runs its body in a unit context of its own. An
//! apply-to-each runs its body in a context of all elements of all instances; a
//! conditional packs the variables each branch uses and runs a branch only when some
//! instance takes it.

use vcode::{Const, Opcode as O, Ty};
use super::blocked::Blocked;
use super::builder::{FunBuilder, Slot};
use super::helpers::Part;
use super::layout::{lay_of, match_type, subst, DataTypes, FunRef, Lay, SlotKind};
use super::{GlobalValue, Globals};
use crate::ast::{Expr, ExprKind, FunDef, Pattern, PatternKind, Res, Span};
use crate::diag::{DiagKind, Diagnostic};
use crate::ty::Type;
use crate::diag::Source;
use std::collections::HashMap;
use std::sync::Arc;

/// Result of code generation steps.
pub(crate) type R<T> = Result<T, Diagnostic>;

/// What the generator needs to know about the program beyond the expression.
pub(crate) trait ProgInfo: DataTypes {
    /// The typed definition of a user function.
    fn function(&self, name: &str) -> Option<&FunDef>;
    /// The typed definition of a prelude function implementing builtin `name`.
    fn prelude(&self, name: &str) -> Option<&FunDef>;
    /// The source text a function comes from (`None` when unknown).
    fn source_of(&self, origin: Origin, name: &str) -> Option<Arc<Source>>;
    /// The source text of the forms being compiled (`None` when unknown).
    fn current_source(&self) -> Option<Arc<Source>>;
}

/// A compiled value: its slots and its layout.
///
/// A variable replicated into an apply-to-each may instead be *lazy*: `s` is empty and
/// the value is `orig` (over the outer instances) gathered by `idx` (one outer instance
/// number per inner instance). Indexing and length then read `orig` directly instead of
/// copying a whole sequence per instance; any other use materialises the gather.
#[derive(Clone, Debug)]
pub(crate) struct Val {
    pub s: Vec<Slot>,
    pub lay: Lay,
    pub lazy: Option<std::rc::Rc<Lazy>>,
    /// A sequence kept in block order ([`Blocked`]): `s` is empty. Only a variable holds
    /// one; [`Compiler::force`] gives its plain form.
    pub blocked: Option<std::rc::Rc<Blocked>>,
}

/// A lazily replicated value: `orig` gathered by `idx`.
#[derive(Clone, Debug)]
pub(crate) struct Lazy {
    /// The value over the outer instances.
    pub orig: Val,
    /// One outer instance number per inner instance.
    pub idx: Slot,
    /// `orig` has a single instance (it comes from a unit context), so every number in
    /// `idx` is 0: reads of it need no gather of per-instance lengths and starts.
    pub single: bool,
}

impl Val {
    pub(crate) fn new(s: Vec<Slot>, lay: Lay) -> Self {
        Val { s, lay, lazy: None, blocked: None }
    }

    pub(crate) fn base(s: Slot, k: SlotKind) -> Self {
        Val { s: vec![s], lay: Lay::Base(k), lazy: None, blocked: None }
    }

    /// A lazy value: `orig` gathered by `idx` (`single`: see [`Lazy::single`]).
    pub(crate) fn lazy(orig: Val, idx: Slot, single: bool) -> Self {
        let lay = orig.lay.clone();
        Val { s: Vec::new(), lay, lazy: Some(std::rc::Rc::new(Lazy { orig, idx, single })), blocked: None }
    }

    /// The single slot of a base value.
    pub(crate) fn one(&self) -> Slot {
        self.s.first().copied().unwrap_or(0)
    }

    /// The base kind (INT for non-base layouts, which callers never pass).
    pub(crate) fn kind(&self) -> SlotKind {
        match self.lay {
            Lay::Base(k) => k,
            _ => SlotKind::Int,
        }
    }

    /// The two components of a pair value.
    pub(crate) fn split(&self) -> (Val, Val) {
        match &self.lay {
            Lay::Pair(a, b) => {
                let n = a.size();
                (Val::new(self.s[..n].to_vec(), (**a).clone()), Val::new(self.s[n..].to_vec(), (**b).clone()))
            }
            _ => (self.clone(), Val::new(Vec::new(), Lay::Unit)),
        }
    }

    /// The segment descriptor and the elements of a sequence value.
    pub(crate) fn seq(&self) -> (Slot, Val) {
        match &self.lay {
            Lay::Seq(e) => (self.s[0], Val::new(self.s[1..].to_vec(), (**e).clone())),
            _ => (self.one(), Val::new(Vec::new(), Lay::Unit)),
        }
    }

    /// A sequence value from a segment descriptor and elements.
    pub(crate) fn mk_seq(seg: Slot, data: Val) -> Val {
        let mut s = vec![seg];
        s.extend_from_slice(&data.s);
        Val::new(s, Lay::Seq(Arc::new(data.lay)))
    }

    /// A pair value.
    pub(crate) fn pair(a: Val, b: Val) -> Val {
        let mut s = a.s;
        s.extend_from_slice(&b.s);
        Val::new(s, Lay::Pair(Arc::new(a.lay), Arc::new(b.lay)))
    }
}

/// The context of a computation: a segment descriptor with one segment whose length is
/// the number of instances, and whether that number is statically 1.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ctx {
    pub seg: Slot,
    pub unit: bool,
}

/// Variables in scope, innermost last.
pub(crate) type Env = Vec<(String, Val)>;

/// Where a function instance comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Origin {
    User,
    Prelude,
}

/// Builtins whose calls [`Compiler::reaches`] looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Reach {
    /// `rand`.
    Random,
    /// `rand` and the builtins with effects (I/O, `error`, files), whose instances must
    /// run in instance order.
    Ordered,
}

impl Reach {
    fn names(self, name: &str) -> bool {
        use crate::check::builtins::{lookup, Family, Impl};
        name == "rand"
            || (self == Reach::Ordered
                && lookup(name).is_some_and(|b| matches!(b.imp, Impl::Effect | Impl::Prim(Family::Io))))
    }
}

/// Code generation state of one compilation (one VCODE program).
pub(crate) struct Compiler<'a> {
    pub info: &'a dyn ProgInfo,
    pub globals: &'a Globals,
    pub arg_check: bool,
    /// Finished functions other than the entry, in order of completion.
    pub funcs: Vec<vcode::Function>,
    /// The NESL scopes (file, function) instructions come from, for `vcode::Origin`.
    scopes: Vec<vcode::Scope>,
    scope_ids: HashMap<(Arc<str>, Option<String>), u32>,
    /// The source text of the code being compiled now and its scope number.
    src: Option<Arc<Source>>,
    scope: u32,
    /// Generated helper functions by key.
    pub helpers: HashMap<String, String>,
    /// Function instances by (origin, name, argument type, argument layout). The layout
    /// names the callees of function arguments ([`Lay::Fun`]), for which an instance is
    /// specialised.
    /// The last element of the key lists the versions of the top-level variables the
    /// instance receives as hidden arguments (see [`Compiler::main_globals`]).
    instances: HashMap<InstanceKey, String>,
    pending: Vec<(InstanceKey, String)>,
    counter: usize,
    /// Type-variable substitution of the function instance being compiled.
    pub subst: HashMap<u32, Type>,
    /// Where the function being compiled comes from (its calls resolve there).
    pub origin: Origin,
    /// Globals bound by earlier forms of the same program (whole-file compilation),
    /// as values on the entry function's stack (unit context). Every binding is a new
    /// *version* (its index here), so a rebound name keeps its earlier versions for the
    /// code compiled before the rebinding. A function instance that (transitively) reads
    /// top-level variables receives the versions current at its call as hidden
    /// arguments, unlifted (one value for all instances), between its own arguments and
    /// its context: a binding is evaluated once, where it stands, and never again.
    pub main_globals: Vec<(String, Val)>,
    /// While a function instance is compiled: the top-level variables it receives as
    /// hidden arguments, as `(version, name, value)`; `None` in the entry function.
    fun_globals: Option<Vec<(usize, String, Val)>>,
    /// The top-level variables each user function reads, directly or through the user
    /// functions it names (memoised).
    global_uses: HashMap<String, Vec<String>>,
    /// Whether each function (by origin, name and epoch) calls builtins of a kind
    /// ([`Reach`]), directly or through the functions it calls (memoised; see
    /// [`Compiler::reaches`]).
    reach_fns: HashMap<(Origin, String, usize, Reach), bool>,
    /// [`LocalsMemo`] of the lifted expression being compiled.
    locals_memo: LocalsMemo,
    /// The hidden global arguments (versions) of each instance, by VCODE name.
    instance_globals: HashMap<String, Vec<usize>>,
    /// Whole-program compilation: every user function definition of the program in
    /// order (empty otherwise: functions are then the session's). A function defined
    /// again replaces the earlier definition for the forms after it, including in the
    /// functions those forms call (as the NESL top level does): each redefinition starts
    /// an *epoch*, and a function instance belongs to the epoch of the form it serves.
    pub user_defs: Vec<(String, &'a FunDef)>,
    /// How many of `user_defs` each epoch sees.
    pub epoch_limits: Vec<usize>,
    /// The epoch of the code being generated.
    pub epoch: usize,
}

/// What identifies a function instance: origin, name, argument type and layout, the
/// versions of its hidden top-level variables, its epoch, and whether it is the serial
/// version (called in a context of one instance: arguments in the plain layout, no
/// context descriptor) or the lifted one.
type InstanceKey = (Origin, String, Type, Lay, Vec<usize>, usize, bool);

/// A compile-time error at `span`.
pub(crate) fn err(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(DiagKind::Compile, span, msg)
}

/// A float as a VCODE constant holds it: finite values as they are, NaN as 0, the
/// infinities as +-1e308 (CMU's VCODE text has no spelling for them).
pub(crate) fn vcode_float(f: f64) -> f64 {
    if f.is_finite() {
        f
    } else if f.is_nan() {
        0.0
    } else if f > 0.0 {
        1.0e308
    } else {
        -1.0e308
    }
}

/// A scalar constant of a numeric slot kind (`Float` gives `x` as a float, anything
/// else an `INT`).
pub(crate) fn num(k: SlotKind, x: i64) -> Const {
    match k {
        SlotKind::Float => Const::float(x as f64),
        _ => Const::int(x),
    }
}

/// Collects the local variables an expression uses that `bound` does not bind.
pub(crate) fn free_locals(e: &Expr, bound: &[String], out: &mut Vec<String>) {
    for n in free_locals_all(e, &mut HashMap::new()) {
        if !bound.contains(&n) && !out.contains(&n) {
            out.push(n);
        }
    }
}

/// Collects the top-level variables (`vars`) and the functions (`funs`) an expression
/// refers to by name.
fn global_refs(e: &Expr, vars: &mut Vec<String>, funs: &mut Vec<String>) {
    let mut name = |id: &crate::ast::Ident| match id.res {
        Res::Global => vars.push(id.name.clone()),
        Res::Function => funs.push(id.name.clone()),
        _ => {}
    };
    match &e.kind {
        ExprKind::Var(id) | ExprKind::Call { func: id, .. } => name(id),
        _ => {}
    }
    e.for_each_child(&mut |x| global_refs(x, vars, funs));
}

/// The user functions a layout names (callees of function arguments).
fn lay_user_funs(lay: &Lay, out: &mut Vec<String>) {
    match lay {
        Lay::Fun(FunRef::Def(Origin::User, f)) => out.push(f.clone()),
        Lay::Seq(e) => lay_user_funs(e, out),
        Lay::Pair(a, b) => {
            lay_user_funs(a, out);
            lay_user_funs(b, out);
        }
        _ => {}
    }
}

/// The error for a use of a top-level variable rebound, since the use was checked, to a
/// value of another type.
fn rebound(span: Span, name: &str, ty: &Type) -> Diagnostic {
    err(
        span,
        format!(
            "the top-level variable `{name}` has been bound again to a value of another type since this use \
             was checked (as {}); define the function again",
            crate::check::format_type(ty)
        ),
    )
}

/// The variables a pattern binds.
pub(crate) fn pat_vars(p: &Pattern, out: &mut Vec<String>) {
    match &p.kind {
        PatternKind::Var(id) => out.push(id.name.clone()),
        PatternKind::Pair(a, b) => {
            pat_vars(a, out);
            pat_vars(b, out);
        }
        PatternKind::Con(_, a) => pat_vars(a, out),
    }
}

/// Whether values to be packed by one set of flags are packed slot by slot (`PACK` each):
/// when they are at most two base vectors in all (no sequences, nothing lazy). Otherwise the
/// kept positions are packed once and every value is gathered by them.
fn pack_directly(vals: &[&Val]) -> bool {
    let mut n = 0;
    for v in vals {
        if v.lazy.is_some() {
            return false;
        }
        let mut kinds = Vec::new();
        v.lay.slots(&mut kinds);
        if kinds.contains(&SlotKind::Segdes) {
            return false;
        }
        n += kinds.len();
    }
    n <= 2
}

pub(crate) fn uses_locals(e: &Expr) -> bool {
    let mut out = Vec::new();
    free_locals(e, &[], &mut out);
    !out.is_empty()
}

/// Whether each expression of a tree has free local variables, by address: filled for a
/// whole tree in one bottom-up pass ([`free_locals_all`]) and consulted while that tree
/// (which keeps every address in it alive) is being compiled. Asking [`uses_locals`] at
/// every node of a lifted chain of n operators walked O(n^2) nodes.
#[derive(Default)]
pub(crate) struct LocalsMemo {
    /// The tree the entries are about (its compilation is under way), if any.
    owner: Option<*const Expr>,
    uses: HashMap<*const Expr, bool>,
}

/// The free local variables of `e` (as [`free_locals`] finds them, without repeats),
/// recording for `e` and every expression inside it whether it has any.
fn free_locals_all(e: &Expr, memo: &mut HashMap<*const Expr, bool>) -> Vec<String> {
    fn add(out: &mut Vec<String>, more: Vec<String>, bound: &[String]) {
        for n in more {
            if !bound.contains(&n) && !out.contains(&n) {
                out.push(n);
            }
        }
    }
    let mut out: Vec<String> = Vec::new();
    match &e.kind {
        ExprKind::Var(id) => {
            if id.res == Res::Local {
                out.push(id.name.clone());
            }
        }
        ExprKind::Call { func, arg } => {
            if func.res == Res::Local {
                out.push(func.name.clone());
            }
            add(&mut out, free_locals_all(arg, memo), &[]);
        }
        ExprKind::Pair(a, b) => {
            add(&mut out, free_locals_all(a, memo), &[]);
            add(&mut out, free_locals_all(b, memo), &[]);
        }
        ExprKind::If(c, a, b) => {
            for x in [c, a, b] {
                add(&mut out, free_locals_all(x, memo), &[]);
            }
        }
        ExprKind::Let(binds, body) => {
            let mut bound = Vec::new();
            for (p, x) in binds {
                add(&mut out, free_locals_all(x, memo), &bound);
                pat_vars(p, &mut bound);
            }
            add(&mut out, free_locals_all(body, memo), &bound);
        }
        ExprKind::ApplyToEach { body, binders, filter } => {
            for b in binders {
                add(&mut out, free_locals_all(&b.seq, memo), &[]);
            }
            let mut bound = Vec::new();
            for b in binders {
                pat_vars(&b.pat, &mut bound);
            }
            for x in [filter, body].into_iter().flatten() {
                add(&mut out, free_locals_all(x, memo), &bound);
            }
        }
        ExprKind::Seq(es) => {
            for x in es {
                add(&mut out, free_locals_all(x, memo), &[]);
            }
        }
        ExprKind::Range { start, end, stride } => {
            add(&mut out, free_locals_all(start, memo), &[]);
            add(&mut out, free_locals_all(end, memo), &[]);
            if let Some(x) = stride {
                add(&mut out, free_locals_all(x, memo), &[]);
            }
        }
        ExprKind::Time(x) => add(&mut out, free_locals_all(x, memo), &[]),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Char(_)
        | ExprKind::Str(_)
        | ExprKind::EmptySeq(_) => {}
    }
    memo.insert(e as *const Expr, !out.is_empty());
    out
}

/// The lanes ([`vcode::Lane`]) of a value of layout `lay` over a call's instances, in
/// slot order.
fn lanes(lay: &Lay, out: &mut Vec<vcode::Lane>) {
    match lay {
        Lay::Base(_) => out.push(vcode::Lane::Vector),
        Lay::Seq(e) => {
            let mut inner = Vec::new();
            lanes(e, &mut inner);
            out.push(vcode::Lane::Seq(inner));
        }
        Lay::Pair(a, b) => {
            lanes(a, out);
            lanes(b, out);
        }
        Lay::Unit | Lay::Fun(_) => {}
    }
}

/// The VCODE label for a NESL name: upper case, characters VCODE labels allow.
fn label(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() || "-+*/%<>=!._".contains(c) { c.to_ascii_uppercase() } else { '_' })
        .collect()
}

impl<'a> Compiler<'a> {
    pub(crate) fn new(info: &'a dyn ProgInfo, globals: &'a Globals, arg_check: bool) -> Self {
        let mut c = Compiler {
            info,
            globals,
            arg_check,
            funcs: Vec::new(),
            scopes: Vec::new(),
            scope_ids: HashMap::new(),
            src: None,
            scope: 0,
            helpers: HashMap::new(),
            instances: HashMap::new(),
            pending: Vec::new(),
            counter: 0,
            subst: HashMap::new(),
            origin: Origin::User,
            main_globals: Vec::new(),
            fun_globals: None,
            global_uses: HashMap::new(),
            reach_fns: HashMap::new(),
            locals_memo: LocalsMemo::default(),
            instance_globals: HashMap::new(),
            user_defs: Vec::new(),
            epoch_limits: vec![0],
            epoch: 0,
        };
        c.src = info.current_source();
        c.scope = c.scope_id(None);
        c
    }

    /// A fresh number for naming functions.
    pub(crate) fn fresh(&mut self) -> usize {
        self.counter += 1;
        self.counter
    }

    /// The ground type of an expression in the current instance.
    pub(crate) fn ty(&self, e: &Expr) -> R<Type> {
        match &e.ty {
            Some(t) => Ok(subst(t, &self.subst)),
            None => Err(err(e.span, "internal error: expression without a type")),
        }
    }

    /// The layout of a ground type.
    pub(crate) fn lay(&self, t: &Type, span: Span) -> R<Lay> {
        lay_of(t, self.info).map_err(|m| err(span, m))
    }

    /// The scope number of `function` in the current source (0 when the source is
    /// unknown).
    fn scope_id(&mut self, function: Option<&str>) -> u32 {
        let Some(src) = &self.src else { return 0 };
        let key = (src.name.clone(), function.map(str::to_string));
        if let Some(&k) = self.scope_ids.get(&key) {
            return k;
        }
        self.scopes.push(vcode::Scope { file: src.name.clone(), function: key.1.clone() });
        let k = self.scopes.len() as u32;
        self.scope_ids.insert(key, k);
        k
    }

    /// The origin of code compiled for a NESL expression at `span` of the current source.
    pub(crate) fn origin_at(&self, span: Span) -> vcode::Origin {
        match &self.src {
            Some(src) if (span.start as usize) <= src.text.len() => {
                let (line, col) = src.line_col(span.start as usize);
                vcode::Origin { pos: vcode::Pos { line: line as u32, col: col as u32 }, scope: self.scope, inlined_at: 0, parts: 0 }
            }
            _ => vcode::Origin::default(),
        }
    }

    /// The whole program: `main` (the entry) first, then the finished functions.
    pub(crate) fn into_program(self, main: vcode::Function) -> vcode::Program {
        let mut functions = Vec::with_capacity(self.funcs.len() + 1);
        functions.push(main);
        functions.extend(self.funcs);
        vcode::Program { functions, superops: Vec::new(), scopes: self.scopes, inline_sites: Vec::new(), fused_parts: Vec::new() }
    }

    // ----- small emitters -----

    pub(crate) fn cint(&self, fb: &mut FunBuilder, k: i64) -> Slot {
        fb.konst(Const::int(k))
    }

    /// Number of instances of a context (INT scalar).
    pub(crate) fn count(&self, fb: &mut FunBuilder, seg: Slot) -> Slot {
        fb.op1(O::Lengths, &[seg])
    }

    /// A context segment descriptor for `n` (INT scalar) instances.
    pub(crate) fn segdes(&self, fb: &mut FunBuilder, n: Slot) -> Slot {
        fb.op1(O::MakeSegdes, &[n])
    }

    /// A unit context (one instance).
    pub(crate) fn unit_ctx(&self, fb: &mut FunBuilder) -> Ctx {
        let one = self.cint(fb, 1);
        Ctx { seg: self.segdes(fb, one), unit: true }
    }

    /// A scalar constant replicated over the context.
    pub(crate) fn const_in(&self, fb: &mut FunBuilder, ctx: Ctx, c: Const) -> Slot {
        let ty = c.ty();
        let c = fb.konst(c);
        if ctx.unit {
            c
        } else {
            fb.op1(O::Dist.t(ty), &[c, ctx.seg])
        }
    }

    pub(crate) fn int_in(&self, fb: &mut FunBuilder, ctx: Ctx, k: i64) -> Slot {
        self.const_in(fb, ctx, Const::int(k))
    }

    /// `0, 1, ..., n-1` over a one-segment descriptor.
    pub(crate) fn iota(&self, fb: &mut FunBuilder, seg: Slot) -> Slot {
        let z = self.cint(fb, 0);
        let o = self.cint(fb, 1);
        fb.op1(O::Index, &[z, o, seg])
    }

    /// Position of every element within its segment, for a descriptor `seg` with one
    /// segment per instance of `ctx`.
    pub(crate) fn local_index(&self, fb: &mut FunBuilder, ctx: Ctx, seg: Slot) -> Slot {
        let z = self.int_in(fb, ctx, 0);
        let o = self.int_in(fb, ctx, 1);
        fb.op1(O::Index, &[z, o, seg])
    }

    /// Per-element instance number: for a descriptor `seg` with one segment per
    /// instance of `ctx`, the segment each element lies in.
    pub(crate) fn seg_index(&self, fb: &mut FunBuilder, ctx: Ctx, seg: Slot) -> Slot {
        let io = self.iota(fb, ctx.seg);
        fb.op1(O::Dist.t(Ty::Int), &[io, seg])
    }

    /// Checks that every element of the BOOL vector `ok` (over descriptor `seg`, which
    /// has a single segment) holds; a failure carries data: `data` holds, per element of
    /// `ok`, the INT values that a failure of kind `code` reports
    /// ([`vcode::CheckFailure::data_len`] of them). The failure branch writes CMU's
    /// message `msg` and ends with `EXIT` on the check record of the first failing
    /// element, `[CHECK_MARK, code, data...]`: CMU's interpreter prints the message and
    /// stops (it ignores what `EXIT` is given); ours reports the data instead.
    pub(crate) fn check_all_data(&mut self, fb: &mut FunBuilder, ok: Slot, seg: Slot, msg: &str, code: i64, data: &[Slot]) {
        if !self.arg_check {
            return;
        }
        let all = fb.op1(O::AndReduce.t(Ty::Bool), &[ok, seg]);
        let bad = fb.op1(O::Not.t(Ty::Bool), &[all]);
        self.fail_if(fb, bad, ok, Some(seg), msg, code, data);
    }

    /// [`check_all_data`](Self::check_all_data) over the instances of `ctx`. In a unit
    /// context (serial code) `ok` is one flag, which is its own `AND` (no reduction over
    /// the context's descriptor, which the failure branch makes for itself).
    pub(crate) fn check_all(&mut self, fb: &mut FunBuilder, ok: Slot, ctx: Ctx, msg: &str, code: i64, data: &[Slot]) {
        if !self.arg_check {
            return;
        }
        if !ctx.unit {
            return self.check_all_data(fb, ok, ctx.seg, msg, code, data);
        }
        let bad = fb.op1(O::Not.t(Ty::Bool), &[ok]);
        self.fail_if(fb, bad, ok, None, msg, code, data);
    }

    /// When the flag `bad` is set: the check record of the first instance where `ok`
    /// (over `seg`, or a one-instance descriptor made in the branch) is false, CMU's
    /// message `msg`, and `EXIT`.
    #[allow(clippy::too_many_arguments)]
    fn fail_if(&mut self, fb: &mut FunBuilder, bad: Slot, ok: Slot, seg: Option<Slot>, msg: &str, code: i64, data: &[Slot]) {
        debug_assert_eq!(vcode::CheckFailure::data_len(code), Some(data.len()));
        let m = fb.begin_if(bad);
        let seg = match seg {
            Some(s) => s,
            None => self.unit_ctx(fb).seg,
        };
        let mut head = vec![vcode::trap::CHECK_MARK, code];
        head.resize(2 + data.len(), 0);
        let mut rec = fb.konst(Const::ints(head));
        if !data.is_empty() {
            // One shared function fills the record in (the optimiser does not inline a
            // call on the way to `EXIT`): each check costs a call, not its body.
            let f = self.check_record_fn(data.len());
            let mut args = vec![rec, ok, seg];
            args.extend_from_slice(data);
            rec = fb.call(&f, &args, 1)[0];
        }
        fb.write_text(&format!("\nRUNTIME ERROR: {msg}\n"));
        fb.exit_with(rec);
        fb.end_exit_if(m);
    }

    /// The function `CHECK_RECORD_<n I>` (`rec ok seg d1 .. dn -> rec`): the check record
    /// `rec` with its `n` data replaced by those of the first element where the BOOL
    /// vector `ok` (over the one-segment descriptor `seg`) is false. (Its name ends in a
    /// letter, so no NESL function's label, which ends in digits, is the same.)
    fn check_record_fn(&mut self, n: usize) -> String {
        let key = format!("CHECK_RECORD_{}", "I".repeat(n));
        if self.helpers.contains_key(&key) {
            return key;
        }
        self.helpers.insert(key.clone(), key.clone());
        let (mut fb, args) = FunBuilder::new(3 + n);
        let (mut rec, ok, seg) = (args[0], args[1], args[2]);
        let nok = fb.op1(O::Not.t(Ty::Bool), &[ok]);
        let io = self.iota(&mut fb, seg);
        let p = fb.op(O::Pack.t(Ty::Int), &[io, nok, seg]);
        let z = self.cint(&mut fb, 0);
        let first = fb.op1(O::Extract.t(Ty::Int), &[p[0], z, p[1]]);
        let len = self.cint(&mut fb, 2 + n as i64);
        let rs = fb.op1(O::MakeSegdes, &[len]);
        for (k, &d) in args[3..].iter().enumerate() {
            let v = fb.op1(O::Extract.t(Ty::Int), &[d, first, seg]);
            let at = self.cint(&mut fb, 2 + k as i64);
            rec = fb.op1(O::Replace.t(Ty::Int), &[rec, at, v, rs]);
        }
        self.funcs.push(fb.finish(&key, &[rec]));
        key
    }

    // ----- function instances -----

    /// Calls function `name` of `origin` on `arg` (of type `aty`) in `ctx`: its serial
    /// instance in a context of one instance, its lifted one otherwise.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn call_fn(&mut self, fb: &mut FunBuilder, origin: Origin, name: &str, aty: &Type, arg: &Val, ctx: Ctx, rty: &Type, span: Span) -> R<Val> {
        let f = self.instance_at(origin, name, aty, &arg.lay, ctx.unit);
        self.call(fb, &f, arg, ctx, rty, span)
    }

    /// The VCODE name of the instance of a function at a ground argument type whose layout
    /// `lay` may name the callees of function arguments (the instance is specialised for
    /// them), serial or lifted, queueing it for compilation if it is new.
    fn instance_at(&mut self, origin: Origin, name: &str, arg: &Type, lay: &Lay, serial: bool) -> String {
        let versions = self.hidden_globals(origin, name, lay);
        // Prelude instances that call no user function are the same in every epoch.
        let mut user = Vec::new();
        lay_user_funs(lay, &mut user);
        let epoch = if origin == Origin::User || !user.is_empty() { self.epoch } else { 0 };
        let key = (origin, name.to_string(), arg.clone(), lay.clone(), versions.clone(), epoch, serial);
        if let Some(v) = self.instances.get(&key) {
            return v.clone();
        }
        let v = format!("{}_{}", label(name), self.fresh());
        self.instances.insert(key.clone(), v.clone());
        if !versions.is_empty() {
            self.instance_globals.insert(v.clone(), versions);
        }
        self.pending.push((key, v.clone()));
        v
    }

    /// Checks that the definition of user function `name` that a call reaches takes
    /// `aty` and returns `rty`, the types the call was checked with: a function defined
    /// again with another type after its caller was checked is an error, not a wrong
    /// answer.
    fn check_callee(&self, name: &str, aty: &Type, rty: &Type, span: Span) -> R<()> {
        let Some(def) = self.user_function(name) else { return Ok(()) };
        let (Some(pty), Some(bty)) = (&def.params.ty, def.body.as_ref().and_then(|b| b.ty.as_ref())) else {
            return Ok(());
        };
        let mut s = HashMap::new();
        if match_type(pty, aty, &mut s) && match_type(bty, rty, &mut s) {
            return Ok(());
        }
        Err(err(
            span,
            format!(
                "the function `{name}` has been defined again with another type ({} -> {}) since this call was checked \
                 (as {} -> {}); define the calling function again",
                crate::check::format_type(&subst(pty, &s)),
                crate::check::format_type(&subst(bty, &s)),
                crate::check::format_type(aty),
                crate::check::format_type(rty),
            ),
        ))
    }

    /// The definition of user function `name` that the code being generated calls.
    pub(crate) fn user_function(&self, name: &str) -> Option<&'a FunDef> {
        let info: &'a dyn ProgInfo = self.info;
        if self.user_defs.is_empty() {
            return info.function(name);
        }
        let visible = self.epoch_limits.get(self.epoch).copied().unwrap_or(self.user_defs.len());
        self.user_defs[..visible.min(self.user_defs.len())].iter().rev().find(|(n, _)| n == name).map(|(_, d)| *d)
    }

    /// True when evaluating `e` (code of `origin`) may call `rand`, directly or through
    /// the functions it calls: such an expression is evaluated per instance, never
    /// hoisted out of an apply-to-each.
    fn draws_random(&mut self, origin: Origin, e: &Expr) -> bool {
        self.reaches(origin, e, Reach::Random)
    }

    /// True when the instances of `e` (code of `origin`) must run in their own order:
    /// it may draw random numbers (each instance draws the next number) or have an
    /// effect (I/O, `error`, files: instance order is output order), directly or
    /// through the functions it calls.
    pub(crate) fn order_matters(&mut self, origin: Origin, e: &Expr) -> bool {
        self.reaches(origin, e, Reach::Ordered)
    }

    /// True when evaluating `e` (code of `origin`) may call a builtin `what` names,
    /// directly or through the functions it calls.
    fn reaches(&mut self, origin: Origin, e: &Expr, what: Reach) -> bool {
        let mut calls: Vec<(Origin, String)> = Vec::new();
        let mut direct = false;
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            match &x.kind {
                ExprKind::Call { func, .. } | ExprKind::Var(func) if func.res == Res::Builtin && what.names(&func.name) => {
                    direct = true;
                }
                ExprKind::Call { func, .. } | ExprKind::Var(func) => match func.res {
                    Res::Builtin => calls.push((Origin::Prelude, func.name.clone())),
                    Res::Function => calls.push((origin, func.name.clone())),
                    _ => {}
                },
                _ => {}
            }
            x.for_each_child(&mut |c| stack.push(c));
        }
        direct || calls.into_iter().any(|(o, name)| self.function_reaches(o, &name, what))
    }

    /// [`Compiler::reaches`] of the body of function `name` (memoised; a recursive
    /// function counts as not reaching while its own body is being looked at).
    fn function_reaches(&mut self, origin: Origin, name: &str, what: Reach) -> bool {
        let key = (origin, name.to_string(), self.epoch, what);
        if let Some(&r) = self.reach_fns.get(&key) {
            return r;
        }
        self.reach_fns.insert(key.clone(), false);
        let def = match origin {
            Origin::User => self.user_function(name),
            Origin::Prelude => self.info.prelude(name),
        };
        let r = match def.and_then(|d| d.body.as_ref()) {
            Some(body) => self.reaches(origin, body, what),
            None => false,
        };
        self.reach_fns.insert(key, r);
        r
    }

    /// The top-level variables (program globals) that user function `name` reads,
    /// directly or through the user functions its body names, sorted.
    fn user_global_uses(&mut self, name: &str) -> Vec<String> {
        let memo = format!("{name}/{}", self.epoch);
        if let Some(v) = self.global_uses.get(&memo) {
            return v.clone();
        }
        let mut seen = vec![name.to_string()];
        let mut todo = vec![name.to_string()];
        let mut vars = Vec::new();
        while let Some(f) = todo.pop() {
            let Some(body) = self.user_function(&f).and_then(|d| d.body.as_ref()) else { continue };
            let mut funs = Vec::new();
            global_refs(body, &mut vars, &mut funs);
            for g in funs {
                if !seen.contains(&g) {
                    seen.push(g.clone());
                    todo.push(g);
                }
            }
        }
        vars.sort();
        vars.dedup();
        self.global_uses.insert(memo, vars.clone());
        vars
    }

    /// The version of top-level variable `name` current where code is being generated.
    fn global_version(&self, name: &str) -> Option<usize> {
        match &self.fun_globals {
            Some(fg) => fg.iter().rev().find(|(_, n, _)| n == name).map(|(v, _, _)| *v),
            None => self.main_globals.iter().rposition(|(n, _)| n == name),
        }
    }

    /// The versions of the top-level variables an instance of `name` with argument
    /// layout `lay` reads (through its body, the user functions passed to it, and the
    /// function values those variables hold), as current at this point; empty outside
    /// whole-program compilation.
    fn hidden_globals(&mut self, origin: Origin, name: &str, lay: &Lay) -> Vec<usize> {
        if self.main_globals.is_empty() {
            return Vec::new();
        }
        let mut funs = Vec::new();
        if origin == Origin::User {
            funs.push(name.to_string());
        }
        lay_user_funs(lay, &mut funs);
        let mut done: Vec<String> = Vec::new();
        let mut versions: Vec<usize> = Vec::new();
        while let Some(f) = funs.pop() {
            if done.contains(&f) {
                continue;
            }
            done.push(f.clone());
            for g in self.user_global_uses(&f) {
                let Some(v) = self.global_version(&g) else { continue };
                if !versions.contains(&v) {
                    versions.push(v);
                    lay_user_funs(&self.main_globals[v].1.lay, &mut funs);
                }
            }
        }
        versions.sort_unstable();
        versions
    }

    /// Compiles every queued function instance.
    pub(crate) fn drain(&mut self) -> R<()> {
        while let Some(((origin, name, arg, lay, versions, epoch, serial), vname)) = self.pending.pop() {
            let info = self.info;
            let saved_epoch = std::mem::replace(&mut self.epoch, epoch);
            let def = match origin {
                Origin::User => self.user_function(&name),
                Origin::Prelude => info.prelude(&name),
            };
            let def = match def {
                Some(d) => d,
                None => return Err(err(Span::default(), format!("function {name} is not defined"))),
            };
            let saved = std::mem::replace(&mut self.origin, origin);
            let saved_src = std::mem::replace(&mut self.src, info.source_of(origin, &name));
            let saved_scope = self.scope;
            self.scope = self.scope_id(Some(&name));
            let r = self.compile_fun(def, &arg, &lay, &versions, &vname, serial);
            self.origin = saved;
            self.src = saved_src;
            self.scope = saved_scope;
            self.epoch = saved_epoch;
            r?;
        }
        Ok(())
    }

    fn compile_fun(&mut self, def: &FunDef, arg: &Type, lay: &Lay, versions: &[usize], vname: &str, serial: bool) -> R<()> {
        let body = match &def.body {
            Some(b) => b,
            None => return Err(err(def.span, format!("function {} has no body", def.name.name))),
        };
        let pty = match &def.params.ty {
            Some(t) => t.clone(),
            None => return Err(err(def.span, "internal error: untyped parameters")),
        };
        let mut s = HashMap::new();
        if !match_type(&pty, arg, &mut s) {
            return Err(err(def.span, format!("internal error: bad instance of {}", def.name.name)));
        }
        let saved = std::mem::replace(&mut self.subst, s);
        let lay = lay.clone();
        let n = lay.size();
        let mut params = Vec::new();
        lanes(&lay, &mut params);
        // Arguments: the parameters (lifted), the hidden top-level variables (unlifted),
        // the context (lifted version only; the serial one runs in a unit context).
        let mut hidden = Vec::new();
        let mut k = n;
        for &v in versions {
            let (g, val) = &self.main_globals[v];
            let sz = val.lay.size();
            hidden.push((v, g.clone(), val.lay.clone(), k));
            k += sz;
        }
        let (mut fb, args) = FunBuilder::new(if serial { k } else { k + 1 });
        let ctx = if serial { self.unit_ctx(&mut fb) } else { Ctx { seg: args[k], unit: false } };
        let fun_globals =
            hidden.into_iter().map(|(v, g, l, at)| (v, g, Val::new(args[at..at + l.size()].to_vec(), l))).collect();
        let saved_globals = self.fun_globals.replace(fun_globals);
        let mut env = Env::new();
        let r = self
            .bind(&def.params, Val::new(args[..n].to_vec(), lay), &mut env)
            .and_then(|_| self.expr(&mut fb, &mut env, ctx, body));
        self.subst = saved;
        self.fun_globals = saved_globals;
        let r = r?;
        let mut func = fb.finish(vname, &r.s);
        // A lifted function whose instances are independent says how its slots lie over
        // them (the interpreter may then run a call's instances in parts, on several
        // threads): its parameters, the top-level variables it reads (whole), the context.
        let plain = r.lazy.is_none() && r.blocked.is_none() && r.s.len() == r.lay.size();
        if !serial && plain && !self.order_matters(self.origin, body) {
            params.extend(std::iter::repeat_n(vcode::Lane::Whole, k - n));
            params.push(vcode::Lane::Context);
            let mut results = Vec::new();
            lanes(&r.lay, &mut results);
            func.instances = Some(vcode::Instances { params, results });
        }
        self.funcs.push(func);
        Ok(())
    }

    /// Binds a pattern to a value.
    pub(crate) fn bind(&self, p: &Pattern, v: Val, env: &mut Env) -> R<()> {
        match &p.kind {
            PatternKind::Var(id) => env.push((id.name.clone(), v)),
            PatternKind::Pair(a, b) => {
                let (x, y) = v.split();
                self.bind(a, x, env)?;
                self.bind(b, y, env)?;
            }
            PatternKind::Con(_, inner) => self.bind(inner, v, env)?,
        }
        Ok(())
    }

    /// The slots of a value, materialising a lazy one and giving a block-ordered one
    /// its plain layout.
    pub(crate) fn force(&mut self, fb: &mut FunBuilder, v: &Val) -> Val {
        if let Some(b) = &v.blocked {
            let b = b.clone();
            return self.unblock(fb, v, &b);
        }
        match &v.lazy {
            Some(l) => {
                let (orig, idx) = (l.orig.clone(), l.idx);
                self.gather(fb, &orig, idx)
            }
            None => v.clone(),
        }
    }

    /// The instances `idx` of a value, keeping sequence-like values lazy. `single`: `v`
    /// has one instance (it lives in a unit context).
    pub(crate) fn pick(&mut self, fb: &mut FunBuilder, v: &Val, idx: Slot, single: bool) -> Val {
        match (&v.lazy, &v.lay) {
            (Some(l), _) => {
                let i = self.gather(fb, &Val::base(l.idx, SlotKind::Int), idx).one();
                Val::lazy(l.orig.clone(), i, l.single)
            }
            (None, Lay::Base(_) | Lay::Unit | Lay::Fun(_)) => self.gather(fb, v, idx),
            (None, _) => Val::lazy(v.clone(), idx, single),
        }
    }

    /// The lazy value of a local variable expression, if it is one.
    pub(crate) fn lazy_var(&self, env: &Env, e: &Expr) -> Option<std::rc::Rc<Lazy>> {
        match &e.kind {
            ExprKind::Var(id) if id.res == Res::Local => {
                env.iter().rev().find(|(n, _)| *n == id.name).and_then(|(_, v)| v.lazy.clone())
            }
            _ => None,
        }
    }

    // ----- expressions -----

    /// Compiles `e` in context `ctx`, leaving its lifted value on the stack.
    /// Compiles an expression; the code it makes has the expression's origin.
    pub(crate) fn expr(&mut self, fb: &mut FunBuilder, env: &mut Env, ctx: Ctx, e: &Expr) -> R<Val> {
        let saved = fb.set_origin(self.origin_at(e.span));
        let r = self.expr_here(fb, env, ctx, e);
        fb.set_origin(saved);
        if self.locals_memo.owner == Some(e as *const Expr) {
            // The tree the memo is about is compiled: its addresses may be reused now.
            self.locals_memo = LocalsMemo::default();
        }
        r
    }

    /// [`uses_locals`], answered from the memo while the tree that contains `e` is being
    /// compiled; a tree met with no memo under way fills it in.
    fn uses_locals_memo(&mut self, e: &Expr) -> bool {
        let key = e as *const Expr;
        if let Some(&u) = self.locals_memo.uses.get(&key) {
            return u;
        }
        if self.locals_memo.owner.is_some() {
            // Not inside the memo's tree (e.g. a body compiled in place): no entry for
            // it, since its addresses may not outlive the memo.
            return uses_locals(e);
        }
        self.locals_memo.owner = Some(key);
        free_locals_all(e, &mut self.locals_memo.uses);
        self.locals_memo.uses.get(&key).copied().unwrap_or(true)
    }

    fn expr_here(&mut self, fb: &mut FunBuilder, env: &mut Env, ctx: Ctx, e: &Expr) -> R<Val> {
        let hoist = matches!(
            e.kind,
            ExprKind::Call { .. }
                | ExprKind::Seq(_)
                | ExprKind::Str(_)
                | ExprKind::Range { .. }
                | ExprKind::ApplyToEach { .. }
                | ExprKind::Let(..)
                | ExprKind::If(..)
                | ExprKind::Time(_)
        ) || matches!(&e.kind, ExprKind::Var(id) if id.res == Res::Global);
        if !ctx.unit && hoist && !self.uses_locals_memo(e) && !self.draws_random(self.origin, e) {
            // No instance-dependent input: evaluate once, then replicate (as CMU NESL).
            // Not when it draws random numbers: `{rand(100) : i in s}` draws one number
            // per instance.
            let u = self.unit_ctx(fb);
            let v = self.expr(fb, env, u, e)?;
            let r = self.replicate(fb, &v, ctx)?;
            return Ok(r);
        }
        let ty = self.ty(e)?;
        match &e.kind {
            ExprKind::Int(k) => Ok(Val::base(self.int_in(fb, ctx, *k), SlotKind::Int)),
            ExprKind::Char(c) => Ok(Val::base(self.int_in(fb, ctx, *c as i64), SlotKind::Int)),
            ExprKind::Float(f) => {
                Ok(Val::base(self.const_in(fb, ctx, Const::float(vcode_float(*f))), SlotKind::Float))
            }
            ExprKind::Bool(b) => {
                Ok(Val::base(self.const_in(fb, ctx, Const::bool(*b)), SlotKind::Bool))
            }
            ExprKind::Str(bytes) => {
                let v = self.string_const(fb, bytes);
                self.replicate(fb, &v, ctx)
            }
            ExprKind::Var(id) => self.var(fb, env, ctx, id, &ty, e.span),
            ExprKind::Pair(a, b) => {
                let x = self.expr(fb, env, ctx, a)?;
                let y = self.expr(fb, env, ctx, b)?;
                Ok(Val::pair(x, y))
            }
            ExprKind::Let(binds, body) => {
                let n = env.len();
                for (i, (p, x)) in binds.iter().enumerate() {
                    let rest: Vec<&Expr> = binds[i + 1..].iter().map(|(_, e)| e).chain([&**body]).collect();
                    let v = match self.let_blocked(fb, env, ctx, p, x, &rest)? {
                        Some(v) => v,
                        None => self.expr(fb, env, ctx, x)?,
                    };
                    self.bind(p, v, env)?;
                }
                let r = self.expr(fb, env, ctx, body);
                env.truncate(n);
                let r = r?;
                Ok(r)
            }
            ExprKind::If(c, a, b) => self.if_expr(fb, env, ctx, c, a, b, &ty, e.span),
            ExprKind::ApplyToEach { body, binders, filter } => {
                self.apply_to_each(fb, env, ctx, body.as_deref(), binders, filter.as_deref(), &ty, e.span)
            }
            ExprKind::Seq(es) => self.seq_lit(fb, env, ctx, es, &ty, e.span),
            ExprKind::EmptySeq(_) => {
                let lay = self.lay(&ty, e.span)?;
                let z = self.int_in(fb, ctx, 0);
                let seg = fb.op1(O::MakeSegdes, &[z]);
                let el = match &lay {
                    Lay::Seq(el) => (**el).clone(),
                    _ => Lay::Unit,
                };
                let data = self.empty(fb, &el);
                Ok(Val::mk_seq(seg, data))
            }
            ExprKind::Range { start, end, stride } => {
                let s = self.expr(fb, env, ctx, start)?.one();
                let en = self.expr(fb, env, ctx, end)?.one();
                let d = match stride {
                    Some(d) => self.expr(fb, env, ctx, d)?.one(),
                    None => self.int_in(fb, ctx, 1),
                };
                if self.arg_check {
                    let one = self.int_in(fb, ctx, 1);
                    let ok1 = fb.op1(O::Ge.t(Ty::Int), &[d, one]);
                    let ok2 = fb.op1(O::Le.t(Ty::Int), &[s, en]);
                    let ok = fb.op1(O::And.t(Ty::Bool), &[ok1, ok2]);
                    self.check_all(fb, ok, ctx, "In [s:e:l], e must be >= to s, and l must be positive.", 6, &[s, en, d]);
                }
                let len = self.range_len(fb, s, en, d);
                let seg = fb.op1(O::MakeSegdes, &[len]);
                let data = fb.op1(O::Index, &[s, d, seg]);
                Ok(Val::mk_seq(seg, Val::base(data, SlotKind::Int)))
            }
            ExprKind::Time(x) => {
                fb.emit(O::StartTimer);
                let v = self.expr(fb, env, ctx, x)?;
                let t = fb.op1(O::StopTimer, &[]);
                let t = if ctx.unit { t } else { fb.op1(O::Dist.t(Ty::Float), &[t, ctx.seg]) };
                Ok(Val::pair(v, Val::base(t, SlotKind::Float)))
            }
            ExprKind::Call { func, arg } => {
                let aty = self.ty(arg)?;
                match func.res {
                    Res::Constructor => {
                        let v = self.expr(fb, env, ctx, arg)?;
                        let lay = self.lay(&ty, e.span)?;
                        Ok(Val::new(v.s, lay))
                    }
                    Res::Function => {
                        let v = self.expr(fb, env, ctx, arg)?;
                        let origin = self.origin;
                        let known = match origin {
                            Origin::User => self.user_function(&func.name).is_some(),
                            Origin::Prelude => self.info.prelude(&func.name).is_some(),
                        };
                        if !known {
                            return Err(err(func.span, format!("function {} is not defined", func.name)));
                        }
                        if origin == Origin::User {
                            self.check_callee(&func.name, &aty, &ty, func.span)?;
                        }
                        self.call_fn(fb, origin, &func.name, &aty, &v, ctx, &ty, e.span)
                    }
                    Res::Builtin => {
                        if let Some(r) = self.blocked_builtin(fb, env, ctx, &func.name, arg) {
                            return Ok(r);
                        }
                        if let Some(r) = self.lazy_builtin(fb, env, ctx, &func.name, arg, &ty, e.span)? {
                            return Ok(r);
                        }
                        if func.name == "++" {
                            if let Some(r) = self.concat_chain(fb, env, ctx, arg, &ty, e.span)? {
                                return Ok(r);
                            }
                        }
                        let v = self.expr(fb, env, ctx, arg)?;
                        self.builtin(fb, ctx, &func.name, v, &aty, &ty, e.span)
                    }
                    Res::Local => {
                        let callee = match env.iter().rev().find(|(n, _)| *n == func.name) {
                            Some((_, Val { lay: Lay::Fun(f), .. })) => f.clone(),
                            _ => {
                                return Err(err(
                                    func.span,
                                    format!("the function {} passed here is not known at compile time", func.name),
                                ))
                            }
                        };
                        let v = self.expr(fb, env, ctx, arg)?;
                        self.call_ref(fb, ctx, &callee, v, &aty, &ty, e.span)
                    }
                    _ => Err(err(func.span, format!("{} cannot be called", func.name))),
                }
            }
        }
    }

    /// Calls a function value whose callee is known, on a lifted argument of type `aty`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn call_ref(&mut self, fb: &mut FunBuilder, ctx: Ctx, f: &FunRef, arg: Val, aty: &Type, rty: &Type, span: Span) -> R<Val> {
        match f {
            FunRef::Def(origin, name) => {
                let known = match origin {
                    Origin::User => self.user_function(name).is_some(),
                    Origin::Prelude => self.info.prelude(name).is_some(),
                };
                if !known {
                    return Err(err(span, format!("function {name} is not defined")));
                }
                if *origin == Origin::User {
                    self.check_callee(name, aty, rty, span)?;
                }
                self.call_fn(fb, *origin, name, aty, &arg, ctx, rty, span)
            }
            FunRef::Builtin(name) => self.builtin(fb, ctx, name, arg, aty, rty, span),
            FunRef::Con(_) => {
                let lay = self.lay(rty, span)?;
                Ok(Val::new(arg.s, lay))
            }
        }
    }

    /// `len = (e - s - 1 + d) / d` of a range.
    fn range_len(&self, fb: &mut FunBuilder, s: Slot, e: Slot, d: Slot) -> Slot {
        let a = fb.op1(O::Sub.t(Ty::Int), &[e, s]);
        let b = fb.op1(O::Add.t(Ty::Int), &[a, d]);
        let n = fb.op1(O::Length.t(Ty::Int), &[b]);
        let nseg = fb.op1(O::MakeSegdes, &[n]);
        let one = self.cint(fb, 1);
        let ones = fb.op1(O::Dist.t(Ty::Int), &[one, nseg]);
        let c = fb.op1(O::Sub.t(Ty::Int), &[b, ones]);
        fb.op1(O::Div.t(Ty::Int), &[c, d])
    }

    /// Calls a VCODE function instance on an argument in `ctx` (its serial instance in a
    /// unit context, which takes no context descriptor).
    fn call(&mut self, fb: &mut FunBuilder, name: &str, arg: &Val, ctx: Ctx, res: &Type, span: Span) -> R<Val> {
        let lay = self.lay(res, span)?;
        let mut args = arg.s.clone();
        if let Some(versions) = self.instance_globals.get(name) {
            for &v in versions {
                let val = match &self.fun_globals {
                    Some(fg) => fg.iter().find(|(w, _, _)| *w == v).map(|(_, _, x)| x),
                    None => self.main_globals.get(v).map(|(_, x)| x),
                };
                match val {
                    Some(x) => args.extend_from_slice(&x.s),
                    None => return Err(err(span, format!("internal error: {name} needs a top-level variable out of reach"))),
                }
            }
        }
        if !ctx.unit {
            args.push(ctx.seg);
        }
        let s = fb.call(name, &args, lay.size());
        Ok(Val::new(s, lay))
    }

    /// A string constant in a unit context.
    pub(crate) fn string_const(&self, fb: &mut FunBuilder, bytes: &[u8]) -> Val {
        let n = self.cint(fb, bytes.len() as i64);
        let seg = fb.op1(O::MakeSegdes, &[n]);
        let plain = !bytes.is_empty()
            && bytes.len() <= 100
            && bytes.iter().all(|&b| (b.is_ascii_graphic() || b == b' ') && b != b'"' && b != b'\\');
        let data = if plain {
            fb.konst(Const::Char(String::from_utf8_lossy(bytes).into_owned()))
        } else {
            fb.konst(Const::ints(bytes.iter().map(|&b| b as i64).collect::<Vec<_>>()))
        };
        Val::mk_seq(seg, Val::base(data, SlotKind::Int))
    }

    fn var(&mut self, fb: &mut FunBuilder, env: &mut Env, ctx: Ctx, id: &crate::ast::Ident, ty: &Type, span: Span) -> R<Val> {
        match id.res {
            Res::Local => match env.iter().rev().find(|(n, _)| *n == id.name) {
                Some((_, v)) => {
                    let v = v.clone();
                    Ok(self.force(fb, &v))
                }
                None => Err(err(span, format!("internal error: unbound variable {}", id.name))),
            },
            Res::Global if self.main_globals.iter().any(|(n, _)| *n == id.name) => {
                let v = match &self.fun_globals {
                    None => self.main_globals.iter().rev().find(|(n, _)| *n == id.name).map(|(_, v)| v.clone()),
                    Some(fg) => fg.iter().rev().find(|(_, n, _)| *n == id.name).map(|(_, _, v)| v.clone()),
                };
                let v = match v {
                    Some(v) => v,
                    None => {
                        return Err(err(
                            span,
                            format!("internal error: the top-level variable `{}` does not reach this function", id.name),
                        ))
                    }
                };
                let (mut want, mut have) = (Vec::new(), Vec::new());
                self.lay(ty, span)?.slots(&mut want);
                v.lay.slots(&mut have);
                if want != have {
                    return Err(rebound(span, &id.name, ty));
                }
                self.replicate(fb, &v, ctx)
            }
            Res::Global => match self.globals.get(&id.name) {
                Some(g) => {
                    if !matches!(ty, Type::Fun(..)) && g.ty != *ty {
                        return Err(rebound(span, &id.name, ty));
                    }
                    let v = self.global_const(fb, g, span)?;
                    self.replicate(fb, &v, ctx)
                }
                None => Err(err(span, format!("{} is undefined.", id.name))),
            },
            Res::Function => Ok(Val::new(Vec::new(), Lay::Fun(FunRef::Def(self.origin, id.name.clone())))),
            Res::Constructor => Ok(Val::new(Vec::new(), Lay::Fun(FunRef::Con(id.name.clone())))),
            Res::Builtin if matches!(ty, Type::Fun(..)) => {
                Ok(Val::new(Vec::new(), Lay::Fun(FunRef::Builtin(id.name.clone()))))
            }
            Res::Builtin => self.builtin_const(fb, ctx, &id.name, ty, span),
            Res::Unresolved => Err(err(span, format!("internal error: unresolved name {}", id.name))),
        }
    }

    /// Emits the constants of a global value (unit context).
    fn global_const(&mut self, fb: &mut FunBuilder, g: &GlobalValue, span: Span) -> R<Val> {
        let lay = self.lay(&g.ty, span)?;
        let mut kinds = Vec::new();
        lay.slots(&mut kinds);
        if kinds.len() != g.slots.len() {
            return Err(err(span, "internal error: global value does not match its type"));
        }
        let s = g.slots.iter().map(|c| super::host_const(fb, c)).collect();
        Ok(Val::new(s, lay))
    }

    /// Replicates a unit-context value over `ctx`.
    pub(crate) fn replicate(&mut self, fb: &mut FunBuilder, v: &Val, ctx: Ctx) -> R<Val> {
        if ctx.unit {
            return Ok(v.clone());
        }
        match &v.lay {
            Lay::Base(k) => Ok(Val::base(fb.op1(O::Dist.t(k.ty()), &[v.one(), ctx.seg]), *k)),
            Lay::Unit | Lay::Fun(_) => Ok(v.clone()),
            Lay::Pair(..) => {
                let (a, b) = v.split();
                let x = self.replicate(fb, &a, ctx)?;
                let y = self.replicate(fb, &b, ctx)?;
                Ok(Val::pair(x, y))
            }
            Lay::Seq(_) => {
                let zeros = self.int_in(fb, ctx, 0);
                Ok(self.gather(fb, v, zeros))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn if_expr(&mut self, fb: &mut FunBuilder, env: &mut Env, ctx: Ctx, c: &Expr, a: &Expr, b: &Expr, ty: &Type, span: Span) -> R<Val> {
        let lay = self.lay(ty, span)?;
        let flags = self.expr(fb, env, ctx, c)?.one();
        if ctx.unit {
            let mut m = fb.begin_if(flags);
            let x = self.expr(fb, env, ctx, a)?;
            fb.else_(&mut m, &x.s);
            let y = self.expr(fb, env, ctx, b)?;
            let s = fb.end_if(m, &y.s);
            return Ok(Val::new(s, lay));
        }
        let fi = fb.op1(O::BToI, &[flags]);
        let cnt_t = fb.op1(O::AddReduce.t(Ty::Int), &[fi, ctx.seg]);
        let n = self.count(fb, ctx.seg);
        let cnt_f = fb.op1(O::Sub.t(Ty::Int), &[n, cnt_t]);
        let zero = self.cint(fb, 0);
        let nflags = fb.op1(O::Not.t(Ty::Bool), &[flags]);
        let rt = self.branch(fb, env, ctx, a, flags, cnt_t, cnt_f, zero, &lay)?;
        let rf = self.branch(fb, env, ctx, b, nflags, cnt_f, cnt_t, zero, &lay)?;
        // Combine: all one way, or merge by the flags.
        let f_none = fb.op1(O::Eq.t(Ty::Int), &[cnt_f, zero]);
        let mut m1 = fb.begin_if(f_none);
        fb.else_(&mut m1, &rt);
        let t_none = fb.op1(O::Eq.t(Ty::Int), &[cnt_t, zero]);
        let mut m2 = fb.begin_if(t_none);
        fb.else_(&mut m2, &rf);
        // Each branch's results go straight back to the instances that took it.
        let io = self.iota(fb, ctx.seg);
        let gt = fb.op(O::Pack.t(Ty::Int), &[io, flags, ctx.seg])[0];
        let gf = fb.op(O::Pack.t(Ty::Int), &[io, nflags, ctx.seg])[0];
        let parts = [
            Part { v: Val::new(rt.clone(), lay.clone()), dest: gt, n: cnt_t },
            Part { v: Val::new(rf.clone(), lay.clone()), dest: gf, n: cnt_f },
        ];
        let merged = self.scatter_into(fb, &lay, &parts, n);
        let inner = fb.end_if(m2, &merged.s);
        let s = fb.end_if(m1, &inner);
        Ok(Val::new(s, lay))
    }

    /// One branch of a parallel conditional: runs `e` on the instances whose flag is set
    /// (when there are any), with the variables it uses packed to those instances.
    #[allow(clippy::too_many_arguments)]
    fn branch(
        &mut self,
        fb: &mut FunBuilder,
        env: &mut Env,
        ctx: Ctx,
        e: &Expr,
        flags: Slot,
        cnt: Slot,
        cnt_other: Slot,
        zero: Slot,
        lay: &Lay,
    ) -> R<Vec<Slot>> {
        let mut used = Vec::new();
        free_locals(e, &[], &mut used);
        let live: Vec<(String, Val)> = used
            .iter()
            .filter_map(|n| env.iter().rev().find(|(m, _)| m == n).cloned())
            .collect();
        // A block-ordered variable is packed in its plain layout.
        let live: Vec<(String, Val)> = live.into_iter().map(|(n, v)| (n, if v.blocked.is_some() { self.force(fb, &v) } else { v })).collect();
        let any = fb.op1(O::Gt.t(Ty::Int), &[cnt, zero]);
        let mut m = fb.begin_if(any);
        // Pack the live variables unless every instance takes this branch.
        let all = fb.op1(O::Eq.t(Ty::Int), &[cnt_other, zero]);
        let mut pm = fb.begin_if(all);
        let mut cur: Vec<Slot> = live
            .iter()
            .flat_map(|(_, v)| match &v.lazy {
                Some(l) => vec![l.idx],
                None => v.s.clone(),
            })
            .collect();
        cur.push(ctx.seg);
        fb.else_(&mut pm, &cur);
        // A few base variables are packed directly; otherwise the instance numbers are
        // packed once and every variable is gathered by them.
        let vals: Vec<&Val> = live.iter().map(|(_, v)| v).collect();
        let mut out = Vec::new();
        if pack_directly(&vals) {
            for v in vals {
                if let Some((pv, _)) = self.pack_direct(fb, v, flags, ctx.seg, usize::MAX) {
                    out.extend(pv.s);
                }
            }
        } else {
            let io = self.iota(fb, ctx.seg);
            let idx = fb.op(O::Pack.t(Ty::Int), &[io, flags, ctx.seg])[0];
            for v in vals {
                match &v.lazy {
                    Some(l) => out.push(self.gather(fb, &Val::base(l.idx, SlotKind::Int), idx).one()),
                    None => out.extend(self.gather(fb, v, idx).s),
                }
            }
        }
        out.push(fb.op1(O::MakeSegdes, &[cnt]));
        let newslots = fb.end_if(pm, &out);
        let n0 = env.len();
        let mut k = 0;
        for (name, v) in &live {
            match &v.lazy {
                Some(l) => {
                    env.push((name.clone(), Val::lazy(l.orig.clone(), newslots[k], l.single)));
                    k += 1;
                }
                None => {
                    let sz = v.s.len();
                    env.push((name.clone(), Val::new(newslots[k..k + sz].to_vec(), v.lay.clone())));
                    k += sz;
                }
            }
        }
        let bctx = Ctx { seg: newslots[k], unit: false };
        let r = self.expr(fb, env, bctx, e);
        env.truncate(n0);
        let r = r?;
        fb.else_(&mut m, &r.s);
        let em = self.empty(fb, lay);
        Ok(fb.end_if(m, &em.s))
    }

    #[allow(clippy::too_many_arguments)]
    fn apply_to_each(
        &mut self,
        fb: &mut FunBuilder,
        env: &mut Env,
        ctx: Ctx,
        body: Option<&Expr>,
        binders: &[crate::ast::Binder],
        filter: Option<&Expr>,
        ty: &Type,
        span: Span,
    ) -> R<Val> {
        let mut seqs = Vec::new();
        for b in binders {
            seqs.push(self.expr(fb, env, ctx, &b.seq)?);
        }
        let (seg0, _) = seqs[0].seq();
        if seqs.len() > 1 && self.arg_check {
            let l0 = fb.op1(O::Lengths, &[seg0]);
            for v in &seqs[1..] {
                let (sg, _) = v.seq();
                let l = fb.op1(O::Lengths, &[sg]);
                let ok = fb.op1(O::Eq.t(Ty::Int), &[l0, l]);
                self.check_all(fb, ok, ctx, "Length mismatch in an apply-to-each.", 2, &[l0, l]);
            }
        }
        let lens = fb.op1(O::Lengths, &[seg0]);
        let total = fb.op1(O::AddReduce.t(Ty::Int), &[lens, ctx.seg]);
        let inner = fb.op1(O::MakeSegdes, &[total]);
        let mut ictx = Ctx { seg: inner, unit: false };
        // Free variables of the filter and body, replicated over the elements.
        let mut bound = Vec::new();
        for b in binders {
            pat_vars(&b.pat, &mut bound);
        }
        let mut used = Vec::new();
        if let Some(f) = filter {
            free_locals(f, &bound, &mut used);
        }
        if let Some(b) = body {
            free_locals(b, &bound, &mut used);
        }
        let mut inner_env: Env = Vec::new();
        let mut segidx = None;
        for name in &used {
            let v = match env.iter().rev().find(|(m, _)| m == name) {
                Some((_, v)) if v.blocked.is_some() => {
                    let v = v.clone();
                    self.force(fb, &v)
                }
                Some((_, v)) => v.clone(),
                None => continue,
            };
            let r = match (&v.lazy, &v.lay) {
                // Already lazy: every element reads the original instance its own instance
                // reads, a replication (DIST) of the instance numbers, not a gather.
                (Some(l), _) => Val::lazy(l.orig.clone(), fb.op1(O::Dist.t(Ty::Int), &[l.idx, seg0]), l.single),
                (None, Lay::Base(k)) => Val::base(fb.op1(O::Dist.t(k.ty()), &[v.one(), seg0]), *k),
                (None, Lay::Unit | Lay::Fun(_)) => v.clone(),
                _ => {
                    let si = match segidx {
                        Some(s) => s,
                        None => {
                            let s = self.seg_index(fb, ctx, seg0);
                            segidx = Some(s);
                            s
                        }
                    };
                    self.pick(fb, &v, si, ctx.unit)
                }
            };
            inner_env.push((name.clone(), r));
        }
        let n_free = inner_env.len();
        for (b, v) in binders.iter().zip(&seqs) {
            let (_, data) = v.seq();
            self.bind(&b.pat, data, &mut inner_env)?;
        }
        // The element values themselves (for the bodyless form).
        let mut elems = seqs[0].seq().1;
        let mut seg = seg0;
        if let Some(f) = filter {
            let flags = self.expr(fb, &mut inner_env, ictx, f)?.one();
            // Pack every variable the body uses (the elements for the bodyless form).
            let mut body_used = Vec::new();
            if let Some(b) = body {
                free_locals(b, &[], &mut body_used);
            }
            let kept: Vec<(String, Val)> = inner_env
                .iter()
                .enumerate()
                .filter(|(i, (name, _))| {
                    !inner_env[i + 1..].iter().any(|(m, _)| m == name) && body_used.contains(name)
                })
                .map(|(_, nv)| nv.clone())
                .collect();
            let mut vals: Vec<&Val> = kept.iter().map(|(_, v)| v).collect();
            if body.is_none() {
                vals.push(&elems);
            }
            // Packed per instance (over `seg0`), so the PACK also yields the result's
            // descriptor. A few base vectors are packed directly; otherwise the kept
            // positions are computed once and every value is gathered by them.
            let mut newseg = None;
            let mut packed: Vec<Val> = Vec::new();
            if pack_directly(&vals) {
                for v in &vals {
                    if let Some((pv, ps)) = self.pack_direct(fb, v, flags, seg0, usize::MAX) {
                        newseg = ps.or(newseg);
                        packed.push(pv);
                    }
                }
            } else {
                let io = self.iota(fb, inner);
                let p = fb.op(O::Pack.t(Ty::Int), &[io, flags, seg0]);
                newseg = Some(p[1]);
                for (i, v) in vals.iter().enumerate() {
                    // The elements of the bodyless form are the result: materialised.
                    let g = if i == kept.len() { self.gather(fb, v, p[0]) } else { self.pick(fb, v, p[0], false) };
                    packed.push(g);
                }
            }
            seg = match newseg {
                Some(sg) => sg,
                None => {
                    let fi = fb.op1(O::BToI, &[flags]);
                    let newlens = fb.op1(O::AddReduce.t(Ty::Int), &[fi, seg0]);
                    fb.op1(O::MakeSegdes, &[newlens])
                }
            };
            if body.is_none() {
                elems = packed.pop().unwrap_or(elems);
            }
            inner_env = kept.into_iter().zip(packed).map(|((name, _), v)| (name, v)).collect();
            let seg2 = if ctx.unit {
                seg
            } else {
                let l = fb.op1(O::Lengths, &[seg]);
                let t = fb.op1(O::AddReduce.t(Ty::Int), &[l, ctx.seg]);
                fb.op1(O::MakeSegdes, &[t])
            };
            ictx = Ctx { seg: seg2, unit: false };
        }
        let _ = n_free;
        let r = match body {
            Some(b) => self.expr(fb, &mut inner_env, ictx, b)?,
            None => elems,
        };
        let lay = self.lay(ty, span)?;
        let out = Val::mk_seq(seg, r);
        let out = Val::new(out.s, lay);
        Ok(out)
    }

    fn seq_lit(&mut self, fb: &mut FunBuilder, env: &mut Env, ctx: Ctx, es: &[Expr], ty: &Type, span: Span) -> R<Val> {
        let lay = self.lay(ty, span)?;
        let el = match &lay {
            Lay::Seq(e) => (**e).clone(),
            _ => return Err(err(span, "internal error: sequence literal of non-sequence type")),
        };
        let n = es.len() as i64;
        // All literal scalars: one constant vector.
        if ctx.unit {
            if let Lay::Base(k) = el {
                let lits: Option<Const> = match k {
                    SlotKind::Float => es
                        .iter()
                        .map(|x| match &x.kind {
                            ExprKind::Float(f) => Some(vcode_float(*f)),
                            _ => None,
                        })
                        .collect::<Option<Vec<f64>>>()
                        .map(Const::floats),
                    SlotKind::Bool => es
                        .iter()
                        .map(|x| match &x.kind {
                            ExprKind::Bool(b) => Some(*b),
                            _ => None,
                        })
                        .collect::<Option<Vec<bool>>>()
                        .map(Const::bools),
                    _ => es
                        .iter()
                        .map(|x| match &x.kind {
                            ExprKind::Int(v) => Some(*v),
                            ExprKind::Char(c) => Some(*c as i64),
                            _ => None,
                        })
                        .collect::<Option<Vec<i64>>>()
                        .map(Const::ints),
                };
                if let Some(l) = lits {
                    let nn = self.cint(fb, n);
                    let seg = fb.op1(O::MakeSegdes, &[nn]);
                    let d = fb.konst(l);
                    return Ok(Val::new(vec![seg, d], lay));
                }
            }
        }
        let mut vals = Vec::with_capacity(es.len());
        for x in es {
            vals.push(self.expr(fb, env, ctx, x)?);
        }
        let out = self.make_seq(fb, ctx, &vals, &el);
        let out = Val::new(out.s, lay);
        Ok(out)
    }
}
