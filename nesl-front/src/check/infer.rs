//! The inference engine: one [`Infer`] run per top-level form.
//!
//! It walks the form once, resolving each name and generating unification constraints as
//! it goes (types of sub-expressions are stored unsubstituted in the AST), reports every
//! error it meets (a failed sub-expression gets a fresh type so checking goes on), then
//! defaults the variables that may not stay polymorphic to `int` and writes the fully
//! substituted types back into the AST.

use super::builtins::{builtin_scheme_ref, class_from_name, is_builtin, is_redefinable_builtin};
use super::print::{format_scheme, TypePrinter};
use super::unify::{free_vars, substitute, FreeVarsSeen, Unifier, UnifyError, ZonkMemo};
use super::{ItemInfo, Session};
use crate::ast::{
    Binder, DataDef, Expr, ExprKind, FunDef, Ident, Pattern, PatternKind, Res, Span, TopLevel,
    TypeExpr, TypeExprKind, TypeSpec,
};
use crate::diag::{DiagKind, Diagnostic};
use crate::ty::{Scheme, TyVar, Type, TypeClass};
use std::sync::Arc;

/// What one run found besides the form's types.
pub(super) struct Outcome {
    /// The form's description, or its errors.
    pub result: Result<ItemInfo, Vec<Diagnostic>>,
    /// The first type-variable id the run did not use.
    pub next_var: u32,
    /// Whether the form calls a serial-only function (directly or through a user
    /// function that does).
    pub calls_serial: bool,
}

/// Checks one form against the session.
pub(super) fn check(sess: &Session, item: &mut TopLevel) -> Outcome {
    let mut inf = Infer::new(sess);
    let r = match item {
        TopLevel::Function(f) => inf.function(f),
        TopLevel::Datatype(d) => inf.datatype(d),
        TopLevel::Binding { pat, expr, .. } => inf.binding(pat, expr),
        TopLevel::Expr(e) => inf.top_expr(e),
        TopLevel::Command(_) => Ok(ItemInfo::Command),
    };
    Outcome {
        result: r,
        next_var: inf.u.next_id(),
        calls_serial: inf.calls_serial,
    }
}

/// The type of a called function, for error messages (formatted only when needed).
enum Shown<'a> {
    /// A polymorphic function's scheme.
    Scheme(&'a Scheme),
    /// A monomorphic type of this run (the function being defined, a parameter).
    Mono(Type),
}

/// The deepest nesting of expressions the checker accepts. It, the flattener and the
/// AST's destructor recurse on the expression tree: this keeps them within a thread stack
/// of [`crate::STACK_SIZE`] (the `nesl` binary runs on one), with a margin, while a
/// chain of 100,000 operators (`1 + 1 + ... + 1`, two levels per operator) still checks.
const MAX_DEPTH: usize = 250_000;

/// The deepest nesting of tuples (in expressions and patterns) the checker accepts, so
/// also the most components of a tuple. Types share their parts, so checking a tuple is
/// linear in its width; past this width the rest of the pipeline (the flattener's slot
/// lists) grows too slow to be worth running.
const MAX_TUPLE_NESTING: usize = 50_000;

/// The deepest nesting of sequence literals the checker accepts: each level is a segment
/// descriptor of the value, and the optimiser's work grows with the square of their number.
const MAX_SEQ_NESTING: usize = 2_000;

/// What a nesting limit counts.
#[derive(Clone, Copy)]
enum Structure {
    Tuple,
    Seq,
}

/// A pattern variable being bound: name, type, where.
type Bind = (String, Type, Span);

/// The variables one pattern binds, in order, with an index by name (a pattern of
/// 20,000 variables must not compare each with all before it).
#[derive(Default)]
struct Binds {
    list: Vec<Bind>,
    first: std::collections::HashMap<String, Span>,
}

impl Binds {
    /// Where `name` was bound first in this pattern, if it was.
    fn find(&self, name: &str) -> Option<Span> {
        self.first.get(name).copied()
    }

    fn push(&mut self, b: Bind) {
        self.first.entry(b.0.clone()).or_insert(b.2);
        self.list.push(b);
    }
}

/// Names of type variables seen in one written type, with their types.
type TyVarNames = Vec<(String, Type)>;

struct Infer<'s> {
    sess: &'s Session,
    u: Unifier,
    /// Variables in scope, innermost last.
    locals: Vec<(String, Type)>,
    /// The function being defined and its (monomorphic) type, for recursive calls.
    current: Option<(String, Type)>,
    errors: Vec<Diagnostic>,
    /// How many apply-to-each bodies or filters enclose the current expression.
    parallel: usize,
    /// Whether a serial-only function was called.
    calls_serial: bool,
    /// How many expressions enclose the current one.
    depth: usize,
    /// An interrupt stopped the check (reported once).
    interrupted: bool,
    /// Whether the depth limit was hit (reported once).
    too_deep: bool,
    /// How many tuples enclose the current expression or pattern.
    structure_nesting: usize,
    /// How many sequence literals enclose the current expression.
    seq_nesting: usize,
}

impl<'s> Infer<'s> {
    fn new(sess: &'s Session) -> Self {
        Infer {
            sess,
            u: Unifier::new(sess.next_var),
            locals: Vec::new(),
            current: None,
            errors: Vec::new(),
            parallel: 0,
            calls_serial: false,
            depth: 0,
            too_deep: false,
            interrupted: false,
            structure_nesting: 0,
            seq_nesting: 0,
        }
    }

    // ----- helpers -------------------------------------------------------------------

    /// Enters one level of nesting; false (and an error, reported once) when the form
    /// is nested too deeply to check.
    fn enter(&mut self, span: Span) -> bool {
        // An interrupt (Ctrl-C) stops the check: a relaxed atomic load per expression.
        if vcode::interrupt::requested() {
            if !self.interrupted {
                self.interrupted = true;
                self.errors.push(Diagnostic::new(DiagKind::Runtime, span, "interrupted"));
            }
            return false;
        }
        if self.depth >= MAX_DEPTH {
            if !self.too_deep {
                self.too_deep = true;
                self.errors.push(too_deep(span));
            }
            return false;
        }
        self.depth += 1;
        true
    }

    fn error(&mut self, kind: DiagKind, span: Span, msg: impl Into<String>) {
        self.errors.push(Diagnostic::new(kind, span, msg));
    }

    fn fresh(&mut self) -> Type {
        self.u.fresh(TypeClass::Any)
    }

    /// A type in NESL syntax, with its context, as it stands now.
    fn show(&self, t: &Type) -> String {
        TypePrinter::new().with_context(&self.u.zonk(t))
    }

    /// Why a unification failed, in words.
    fn why(&self, e: &UnifyError) -> String {
        match e {
            UnifyError::Mismatch(a, b) => {
                let mut p = TypePrinter::new();
                let (a, b) = (p.inner(a), p.inner(b));
                format!("expected `{a}`, found `{b}`")
            }
            UnifyError::Class(c, t) => {
                format!(
                    "`{}` is not in type class {}",
                    TypePrinter::new().inner(t),
                    c.name()
                )
            }
            UnifyError::Occurs(..) => "a type would have to contain itself".to_string(),
        }
    }

    fn take_errors(&mut self) -> Result<(), Vec<Diagnostic>> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(std::mem::take(&mut self.errors))
        }
    }

    fn local(&self, name: &str) -> Option<Type> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
    }

    /// Defaults every variable not in `keep` to `int`, then writes the substituted types
    /// back. `visit` calls its argument on every type slot of the form.
    fn finish<F: FnMut(&mut dyn FnMut(&mut Option<Type>))>(
        &mut self,
        mut visit: F,
        keep: &[TyVar],
    ) {
        // Types of nodes share parts (a tuple's type shares its components' types): the
        // walks below visit each shared part once, so this is linear in the form's size.
        let mut left: Vec<TyVar> = Vec::new();
        {
            let u = &self.u;
            let mut seen = FreeVarsSeen::default();
            for k in keep {
                seen.insert_var(k.id);
            }
            visit(&mut |t: &mut Option<Type>| {
                if let Some(t) = t {
                    u.free_vars_shared(t, &mut seen, &mut left);
                }
            });
        }
        for v in left {
            // `int` belongs to every class, so this cannot fail.
            let _ = self.u.unify(&Type::Var(v), &Type::Int);
        }
        let u = &self.u;
        let mut memo = ZonkMemo::default();
        visit(&mut |t: &mut Option<Type>| {
            if let Some(x) = t {
                *x = u.zonk_shared(x, &mut memo);
            }
        });
    }

    // ----- top-level forms -----------------------------------------------------------

    fn function(&mut self, f: &mut FunDef) -> Result<ItemInfo, Vec<Diagnostic>> {
        let name = f.name.name.clone();
        f.name.res = Res::Function;
        if !self.sess.prelude_mode && is_builtin(&name) {
            if !is_redefinable_builtin(&name) {
                self.error(
                    DiagKind::Name,
                    f.name.span,
                    format!("`{name}` is a built-in function and cannot be redefined"),
                );
                return self.take_errors().map(|_| ItemInfo::Command);
            }
            // Otherwise the definition shadows the built-in (Session::check_item notes it).
        }
        if self.sess.datatypes.contains_key(&name) {
            self.error(
                DiagKind::Name,
                f.name.span,
                format!("`{name}` is already defined as a datatype"),
            );
            return self.take_errors().map(|_| ItemInfo::Command);
        }
        if is_reserved(&name) {
            self.error(
                DiagKind::Name,
                f.name.span,
                format!("`{name}` is a special symbol and cannot be defined"),
            );
            return self.take_errors().map(|_| ItemInfo::Command);
        }
        let param_ty = self.fresh();
        let ret_ty = self.fresh();
        let self_ty = Type::fun(param_ty.clone(), ret_ty.clone());
        let mut declared: Option<(Type, Vec<TyVar>, Span)> = None;
        if let Some(sig) = &f.sig {
            match self.typespec(sig) {
                Ok((t, vars)) => {
                    if !matches!(t, Type::Fun(..)) {
                        let shown = self.show(&t);
                        self.error(
                            DiagKind::Type,
                            sig.span,
                            format!(
                                "the declared type of a function must be a function type (`argument -> result`), not `{shown}`"
                            ),
                        );
                    } else {
                        // Both sides are fresh here, so this cannot fail.
                        let _ = self.u.unify(&self_ty, &t);
                        declared = Some((t, vars, sig.span));
                    }
                }
                Err(d) => self.errors.push(d),
            }
        } else if let Some(decl) = self
            .sess
            .functions
            .get(&name)
            .filter(|d| d.def.body.is_none())
        {
            // The definition of a function declared earlier (`function f(x) : t;`, for
            // mutual recursion) must have the declared type: callers were checked
            // against it.
            let vars: Vec<TyVar> = decl
                .scheme
                .vars
                .iter()
                .map(|v| match self.u.fresh(v.class) {
                    Type::Var(w) => w,
                    _ => *v,
                })
                .collect();
            let map = decl
                .scheme
                .vars
                .iter()
                .map(|v| v.id)
                .zip(vars.iter().map(|w| Type::Var(*w)))
                .collect();
            let t = substitute(&decl.scheme.ty, &map);
            let _ = self.u.unify(&self_ty, &t);
            declared = Some((t, vars, f.name.span));
        }
        let mut binds = Binds::default();
        self.pattern(&mut f.params, &param_ty, &mut binds, Res::Local);
        match &mut f.body {
            None => {
                if f.sig.is_none() {
                    self.error(
                        DiagKind::Type,
                        f.span,
                        format!("function `{name}` has neither a body nor a declared type"),
                    );
                }
            }
            Some(body) => {
                let mark = self.locals.len();
                self.locals
                    .extend(binds.list.into_iter().map(|(n, t, _)| (n, t)));
                self.current = Some((name.clone(), self_ty.clone()));
                let bt = self.expr(body);
                if let Err(e) = self.u.unify(&ret_ty, &bt) {
                    let (b, r) = (self.show(&bt), self.show(&ret_ty));
                    let why = self.why(&e);
                    self.errors.push(
                        Diagnostic::new(
                            DiagKind::Type,
                            body.span,
                            format!("the body of `{name}` has type `{b}`, but the declared result type is `{r}`"),
                        )
                        .with_note(None, why),
                    );
                }
                self.current = None;
                self.locals.truncate(mark);
            }
        }
        if let Some((t, vars, span)) = &declared {
            self.check_rigid(&name, t, vars, *span);
        }
        self.take_errors()?;
        let fty = self.u.zonk(&self_ty);
        let keep = free_vars(&fty);
        self.finish(
            |g| {
                walk_pattern(&mut f.params, g);
                if let Some(b) = &mut f.body {
                    walk_expr(b, g);
                }
            },
            &keep,
        );
        let fty = self.u.zonk(&self_ty);
        Ok(ItemInfo::Function {
            name,
            scheme: Scheme {
                vars: free_vars(&fty),
                ty: fty,
            },
        })
    }

    /// A declared type must not be more general than the definition: its variables must
    /// stay distinct variables of the declared classes.
    fn check_rigid(&mut self, name: &str, declared: &Type, vars: &[TyVar], span: Span) {
        let mut seen: Vec<u32> = Vec::new();
        let mut ok = true;
        for v in vars {
            match self.u.zonk(&Type::Var(*v)) {
                Type::Var(w) if w.class == v.class && !seen.contains(&w.id) => seen.push(w.id),
                _ => ok = false,
            }
        }
        if !ok {
            let decl = format_scheme(&Scheme {
                vars: vars.to_vec(),
                ty: declared.clone(),
            });
            let inferred = self.show(declared);
            self.errors.push(
                Diagnostic::new(
                    DiagKind::Type,
                    span,
                    format!("the declared type of `{name}` is more general than its definition"),
                )
                .with_note(None, format!("declared type: {decl}"))
                .with_note(None, format!("inferred type: {inferred}")),
            );
        }
    }

    fn datatype(&mut self, d: &mut DataDef) -> Result<ItemInfo, Vec<Diagnostic>> {
        let name = d.name.name.clone();
        d.name.res = Res::Constructor;
        if !self.sess.prelude_mode && is_builtin(&name) {
            self.error(
                DiagKind::Name,
                d.name.span,
                format!("`{name}` is a built-in function and cannot be redefined"),
            );
        } else if self.sess.functions.contains_key(&name) {
            self.error(
                DiagKind::Name,
                d.name.span,
                format!("`{name}` is already defined as a function"),
            );
        } else if name == "xps_window" && self.sess.datatypes.contains_key(&name) {
            // The display's window handle: the graphics library is compiled with it.
            self.error(
                DiagKind::Name,
                d.name.span,
                "`xps_window` is the graphics library's window handle (a window number and its size) and cannot be redefined",
            );
        } else if is_base_type(&name) || is_reserved(&name) || name == "stream" {
            self.error(
                DiagKind::Name,
                d.name.span,
                format!("`{name}` cannot be used as a datatype name"),
            );
        }
        if d.fields.is_empty() {
            self.error(
                DiagKind::Type,
                d.span,
                format!("datatype `{name}` needs at least one field"),
            );
        }
        let ctx = self.context(&d.context);
        let mut names: TyVarNames = Vec::new();
        let mut fields = Vec::new();
        for fe in &d.fields {
            match self.type_expr(fe, &mut names, &ctx, Some(&name)) {
                Ok(t) => fields.push(t),
                Err(e) => self.errors.push(e),
            }
        }
        self.check_context_used(&d.context, &names);
        self.take_errors()?;
        let mut it = fields.into_iter().rev();
        let Some(last) = it.next() else {
            return Err(vec![Diagnostic::new(
                DiagKind::Type,
                d.span,
                "datatype without fields",
            )]);
        };
        let fields = it.fold(last, |acc, t| Type::pair(t, acc));
        let params = free_vars(&fields);
        let result = Type::Data(name.clone(), params.iter().map(|v| Type::Var(*v)).collect());
        let scheme = Scheme {
            vars: params,
            ty: Type::fun(fields, result),
        };
        if name == "hashtable" {
            // The library's functions (make_table, ...) are compiled with this layout: a
            // program may repeat the definition (CMU's hash-table.nesl does), not change it.
            if let Some(old) = self.sess.datatypes.get(&name) {
                if format_scheme(&old.scheme) != format_scheme(&scheme) {
                    return Err(vec![Diagnostic::new(
                        DiagKind::Name,
                        d.name.span,
                        format!(
                            "`hashtable` is the library's hash-table datatype (make_table, insert_table, ...), {}; it cannot be redefined with another layout",
                            format_scheme(&old.scheme)
                        ),
                    )]);
                }
            }
        }
        Ok(ItemInfo::Datatype { name, scheme })
    }

    fn binding(&mut self, pat: &mut Pattern, expr: &mut Expr) -> Result<ItemInfo, Vec<Diagnostic>> {
        let t = self.expr(expr);
        let mut binds = Binds::default();
        self.pattern(pat, &t, &mut binds, Res::Global);
        self.take_errors()?;
        self.finish(
            |g| {
                walk_pattern(pat, g);
                walk_expr(expr, g);
            },
            &[],
        );
        let names = binds
            .list
            .into_iter()
            .map(|(n, t, _)| (n, self.u.zonk(&t)))
            .collect();
        Ok(ItemInfo::Binding { names })
    }

    fn top_expr(&mut self, e: &mut Expr) -> Result<ItemInfo, Vec<Diagnostic>> {
        let t = self.expr(e);
        self.take_errors()?;
        self.finish(|g| walk_expr(e, g), &[]);
        Ok(ItemInfo::Expr {
            ty: self.u.zonk(&t),
        })
    }

    // ----- written types -------------------------------------------------------------

    /// The classes of a context `(a in number; b in any)`.
    fn context(&mut self, ctx: &[(Ident, Ident)]) -> Vec<(String, TypeClass)> {
        let mut out: Vec<(String, TypeClass)> = Vec::new();
        for (v, c) in ctx {
            match class_from_name(&c.name) {
                Some(class) => {
                    if out.iter().any(|(n, _)| *n == v.name) {
                        self.error(DiagKind::Type, v.span, format!("type variable `{}` appears twice in the context", v.name));
                    } else {
                        out.push((v.name.clone(), class));
                    }
                }
                None => self.error(
                    DiagKind::Type,
                    c.span,
                    format!("unknown type class `{}` (the classes are any, number, ordinal and logical)", c.name),
                ),
            }
        }
        out
    }

    fn check_context_used(&mut self, ctx: &[(Ident, Ident)], names: &TyVarNames) {
        for (v, _) in ctx {
            if !names.iter().any(|(n, _)| *n == v.name) {
                self.error(
                    DiagKind::Type,
                    v.span,
                    format!(
                        "type variable `{}` of the context is not used in the type",
                        v.name
                    ),
                );
            }
        }
    }

    /// A declared function type: the type, with fresh variables of the declared classes.
    fn typespec(&mut self, sig: &TypeSpec) -> Result<(Type, Vec<TyVar>), Diagnostic> {
        let ctx = self.context(&sig.context);
        let mut names: TyVarNames = Vec::new();
        let t = self.type_expr(&sig.ty, &mut names, &ctx, None)?;
        self.check_context_used(&sig.context, &names);
        let vars = names
            .iter()
            .filter_map(|(_, t)| match t {
                Type::Var(v) => Some(*v),
                _ => None,
            })
            .collect();
        Ok((t, vars))
    }

    /// Converts a written type. Names that are neither base types nor datatypes are type
    /// variables (collected in `names`, of the class `ctx` gives, `any` otherwise).
    /// `defining` is the datatype being defined (it may not refer to itself).
    fn type_expr(
        &mut self,
        te: &TypeExpr,
        names: &mut TyVarNames,
        ctx: &[(String, TypeClass)],
        defining: Option<&str>,
    ) -> Result<Type, Diagnostic> {
        if self.depth >= MAX_DEPTH {
            return Err(too_deep(te.span));
        }
        self.depth += 1;
        let r = self.type_expr_kind(te, names, ctx, defining);
        self.depth -= 1;
        r
    }

    #[inline(never)]
    fn type_expr_kind(
        &mut self,
        te: &TypeExpr,
        names: &mut TyVarNames,
        ctx: &[(String, TypeClass)],
        defining: Option<&str>,
    ) -> Result<Type, Diagnostic> {
        match &te.kind {
            TypeExprKind::Name(id) => {
                let n = id.name.as_str();
                match n {
                    "int" => return Ok(Type::Int),
                    "bool" => return Ok(Type::Bool),
                    "float" => return Ok(Type::Float),
                    "char" => return Ok(Type::Char),
                    _ => {}
                }
                if defining == Some(n) {
                    return Err(recursive_datatype(id));
                }
                if let Some(d) = self.sess.datatypes.get(n) {
                    if !d.params.is_empty() {
                        return Err(Diagnostic::new(
                            DiagKind::Type,
                            te.span,
                            format!("datatype `{n}` takes {} type argument(s)", d.params.len()),
                        ));
                    }
                    return Ok(Type::Data(n.to_string(), Vec::new()));
                }
                if let Some((_, t)) = names.iter().find(|(m, _)| m == n) {
                    return Ok(t.clone());
                }
                let class = ctx
                    .iter()
                    .find(|(m, _)| m == n)
                    .map_or(TypeClass::Any, |(_, c)| *c);
                let t = self.u.fresh(class);
                names.push((n.to_string(), t.clone()));
                Ok(t)
            }
            TypeExprKind::Seq(e) => Ok(Type::seq(self.type_expr(e, names, ctx, defining)?)),
            TypeExprKind::Pair(a, b) => {
                let a = self.type_expr(a, names, ctx, defining)?;
                Ok(Type::pair(a, self.type_expr(b, names, ctx, defining)?))
            }
            TypeExprKind::Fun(a, b) => {
                let a = self.type_expr(a, names, ctx, defining)?;
                Ok(Type::fun(a, self.type_expr(b, names, ctx, defining)?))
            }
            TypeExprKind::Data(id, args) => {
                let n = id.name.as_str();
                if defining == Some(n) {
                    return Err(recursive_datatype(id));
                }
                let Some(d) = self.sess.datatypes.get(n) else {
                    return Err(Diagnostic::new(
                        DiagKind::Name,
                        id.span,
                        format!("`{n}` is not a datatype"),
                    ));
                };
                if d.params.len() != args.len() {
                    return Err(Diagnostic::new(
                        DiagKind::Type,
                        te.span,
                        format!(
                            "datatype `{n}` takes {} type argument(s), but {} were given",
                            d.params.len(),
                            args.len()
                        ),
                    ));
                }
                let mut out = Vec::new();
                for a in args {
                    out.push(self.type_expr(a, names, ctx, defining)?);
                }
                Ok(Type::Data(n.to_string(), out))
            }
        }
    }

    // ----- patterns ------------------------------------------------------------------

    /// Matches a pattern against the type of the value it binds, collecting its
    /// variables in `binds`; `res` is what its variables become (`Local` or `Global`).
    fn pattern(&mut self, p: &mut Pattern, expected: &Type, binds: &mut Binds, res: Res) {
        let pair = matches!(p.kind, PatternKind::Pair(..));
        if pair && !self.enter_structure(p.span, Structure::Tuple) {
            return;
        }
        p.ty = Some(expected.clone());
        if self.enter(p.span) {
            self.pattern_kind(p, expected, binds, res);
            self.depth -= 1;
        }
        if pair {
            self.leave_structure(Structure::Tuple);
        }
    }

    #[inline(never)]
    fn pattern_kind(&mut self, p: &mut Pattern, expected: &Type, binds: &mut Binds, res: Res) {
        let span = p.span;
        match &mut p.kind {
            PatternKind::Var(id) => {
                id.res = res;
                if is_reserved(&id.name) {
                    self.error(
                        DiagKind::Name,
                        id.span,
                        format!(
                            "`{}` is a special symbol and cannot be used as a variable",
                            id.name
                        ),
                    );
                } else if let Some(first) = binds.find(&id.name) {
                    self.errors.push(
                        Diagnostic::new(
                            DiagKind::Name,
                            id.span,
                            format!("variable `{}` is bound twice in one pattern", id.name),
                        )
                        .with_note(Some(first), "first bound here"),
                    );
                }
                binds.push((id.name.clone(), expected.clone(), id.span));
            }
            PatternKind::Pair(a, b) => {
                let (ta, tb) = match self.u.shallow(expected) {
                    Type::Pair(x, y) => (Arc::unwrap_or_clone(x), Arc::unwrap_or_clone(y)),
                    _ => {
                        let (x, y) = (self.fresh(), self.fresh());
                        if self
                            .u
                            .unify(expected, &Type::pair(x.clone(), y.clone()))
                            .is_err()
                        {
                            let pat = format!("({})", show_pattern_pair(a, b));
                            let t = self.show(expected);
                            self.error(
                                DiagKind::Type,
                                span,
                                format!("the pattern `{pat}` does not match a value of type `{t}`"),
                            );
                        }
                        (x, y)
                    }
                };
                self.pattern(a, &ta, binds, res.clone());
                self.pattern(b, &tb, binds, res);
            }
            PatternKind::Con(id, sub) => {
                let sess = self.sess;
                match sess.datatypes.get(&id.name) {
                    Some(d) => {
                        id.res = Res::Constructor;
                        match self.u.instantiate(&d.scheme) {
                            Type::Fun(fields, dt) => {
                                if self.u.unify(expected, &dt).is_err() {
                                    let (dts, t) = (self.show(&dt), self.show(expected));
                                    self.error(
                                        DiagKind::Type,
                                        span,
                                        format!(
                                            "the pattern `{}(...)` matches values of type `{dts}`, not `{t}`",
                                            id.name
                                        ),
                                    );
                                }
                                self.pattern(sub, &fields, binds, res);
                            }
                            _ => {
                                let t = self.fresh();
                                self.pattern(sub, &t, binds, res);
                            }
                        }
                    }
                    None => {
                        let msg = if self.sess.functions.contains_key(&id.name)
                            || is_builtin(&id.name)
                        {
                            format!("`{}` is a function, not a datatype constructor: it cannot appear in a pattern", id.name)
                        } else {
                            format!("`{}` is not a datatype constructor", id.name)
                        };
                        self.error(DiagKind::Name, id.span, msg);
                        let t = self.fresh();
                        self.pattern(sub, &t, binds, res);
                    }
                }
            }
        }
    }

    // ----- expressions ---------------------------------------------------------------

    /// Infers the type of an expression and records it in the node. Each construct
    /// has its own method, so that the frames of this recursion stay small.
    fn expr(&mut self, e: &mut Expr) -> Type {
        if !self.enter(e.span) {
            let t = self.fresh();
            e.ty = Some(t.clone());
            return t;
        }
        let span = e.span;
        let t = match &mut e.kind {
            ExprKind::Int(_) => Type::Int,
            ExprKind::Float(_) => Type::Float,
            ExprKind::Bool(_) => Type::Bool,
            ExprKind::Char(_) => Type::Char,
            ExprKind::Str(_) => Type::seq(Type::Char),
            ExprKind::Var(id) => self.var(id),
            ExprKind::Call { func, arg } => {
                // A call's type is not its argument's: an operator chain `1 + 1 + ...`
                // nests pairs only as arguments, and its types stay small.
                let outer = std::mem::take(&mut self.structure_nesting);
                let outer_seq = std::mem::take(&mut self.seq_nesting);
                let t = self.call(span, func, arg);
                self.structure_nesting = outer;
                self.seq_nesting = outer_seq;
                t
            }
            ExprKind::Pair(a, b) => {
                if self.enter_structure(span, Structure::Tuple) {
                    let ta = self.expr(a);
                    let tb = self.expr(b);
                    self.leave_structure(Structure::Tuple);
                    Type::pair(ta, tb)
                } else {
                    self.fresh()
                }
            }
            ExprKind::If(c, a, b) => self.if_expr(span, c, a, b),
            ExprKind::Let(bindings, body) => self.let_expr(bindings, body),
            ExprKind::ApplyToEach {
                body,
                binders,
                filter,
            } => self.apply_to_each(body, binders, filter),
            ExprKind::Seq(elems) => self.seq_literal(span, elems),
            ExprKind::EmptySeq(te) => self.empty_seq(te),
            ExprKind::Range { start, end, stride } => self.range(start, end, stride),
            ExprKind::Time(x) => {
                let t = self.expr(x);
                Type::pair(t, Type::Float)
            }
        };
        self.depth -= 1;
        e.ty = Some(t.clone());
        t
    }

    #[inline(never)]
    fn if_expr(&mut self, span: Span, c: &mut Expr, a: &mut Expr, b: &mut Expr) -> Type {
        let tc = self.expr(c);
        if self.u.unify(&tc, &Type::Bool).is_err() {
            let shown = self.show(&tc);
            self.error(
                DiagKind::Type,
                c.span,
                format!(
                    "the condition of an `if` must be of type bool; its inferred type is `{shown}`"
                ),
            );
        }
        let ta = self.expr(a);
        let tb = self.expr(b);
        if self.u.unify(&ta, &tb).is_err() {
            let mut p = TypePrinter::new();
            let sa = p.top(&self.u.zonk(&ta));
            let sb = p.top(&self.u.zonk(&tb));
            self.errors.push(
                Diagnostic::new(
                    DiagKind::Type,
                    span,
                    "the two branches of an `if` must have the same type",
                )
                .with_note(Some(a.span), format!("then branch: {sa}"))
                .with_note(Some(b.span), format!("else branch: {sb}")),
            );
        }
        ta
    }

    #[inline(never)]
    fn let_expr(&mut self, bindings: &mut [(Pattern, Expr)], body: &mut Expr) -> Type {
        let mark = self.locals.len();
        for (p, x) in bindings.iter_mut() {
            let t = self.expr(x);
            let mut binds = Binds::default();
            self.pattern(p, &t, &mut binds, Res::Local);
            self.locals
                .extend(binds.list.into_iter().map(|(n, t, _)| (n, t)));
        }
        let t = self.expr(body);
        self.locals.truncate(mark);
        t
    }

    #[inline(never)]
    fn apply_to_each(
        &mut self,
        body: &mut Option<Box<Expr>>,
        binders: &mut [Binder],
        filter: &mut Option<Box<Expr>>,
    ) -> Type {
        // The sequences are evaluated outside the apply-to-each: none of the binders'
        // variables is visible in them.
        let mut elems = Vec::new();
        for b in binders.iter_mut() {
            let st = self.expr(&mut b.seq);
            let el = self.fresh();
            if self.u.unify(&st, &Type::seq(el.clone())).is_err() {
                let shown = self.show(&st);
                let pat = show_pattern(&b.pat);
                self.error(
                    DiagKind::Type,
                    b.pat.span.to(b.seq.span),
                    format!(
                        "in the apply-to-each binding `{pat} in ...`, the right-hand side must be a sequence; its inferred type is `{shown}`"
                    ),
                );
            }
            elems.push(el);
        }
        let mark = self.locals.len();
        let mut binds = Binds::default();
        for (b, el) in binders.iter_mut().zip(&elems) {
            self.pattern(&mut b.pat, el, &mut binds, Res::Local);
        }
        self.locals
            .extend(binds.list.into_iter().map(|(n, t, _)| (n, t)));
        self.parallel += 1;
        if let Some(fl) = filter {
            let ft = self.expr(fl);
            if self.u.unify(&ft, &Type::Bool).is_err() {
                let shown = self.show(&ft);
                self.error(
                    DiagKind::Type,
                    fl.span,
                    format!("the filter of an apply-to-each must be of type bool; its inferred type is `{shown}`"),
                );
            }
        }
        // Without a body the result is the elements bound by the first binder.
        let rt = match body {
            Some(b) => self.expr(b),
            None => match elems.first() {
                Some(t) => t.clone(),
                None => self.fresh(),
            },
        };
        self.parallel -= 1;
        self.locals.truncate(mark);
        Type::seq(rt)
    }

    #[inline(never)]
    fn seq_literal(&mut self, span: Span, elems: &mut [Expr]) -> Type {
        if !self.enter_structure(span, Structure::Seq) {
            return self.fresh();
        }
        let t = self.seq_elements(elems);
        self.leave_structure(Structure::Seq);
        t
    }

    /// Enters a tuple or a sequence literal; false (and an error, reported once) when
    /// they are nested too deeply (see [`MAX_TUPLE_NESTING`] and [`MAX_SEQ_NESTING`]).
    fn enter_structure(&mut self, span: Span, what: Structure) -> bool {
        let (depth, max, msg) = match what {
            Structure::Tuple => (
                &mut self.structure_nesting,
                MAX_TUPLE_NESTING,
                "tuples are nested too deeply here (more than {MAX} levels; a tuple of \
                 more than {MAX} components is that deep)",
            ),
            Structure::Seq => (
                &mut self.seq_nesting,
                MAX_SEQ_NESTING,
                "sequence literals are nested too deeply here (more than {MAX} levels)",
            ),
        };
        if *depth >= max {
            if !self.too_deep {
                self.too_deep = true;
                let msg = msg.replace("{MAX}", &group_thousands(max));
                self.error(DiagKind::Compile, span, msg);
            }
            return false;
        }
        *depth += 1;
        true
    }

    fn leave_structure(&mut self, what: Structure) {
        match what {
            Structure::Tuple => self.structure_nesting -= 1,
            Structure::Seq => self.seq_nesting -= 1,
        }
    }

    fn seq_elements(&mut self, elems: &mut [Expr]) -> Type {
        let mut first: Option<Type> = None;
        for (i, x) in elems.iter_mut().enumerate() {
            let tx = self.expr(x);
            match &first {
                None => first = Some(tx),
                Some(t0) => {
                    if self.u.unify(t0, &tx).is_err() {
                        let mut p = TypePrinter::new();
                        let s0 = p.top(&self.u.zonk(t0));
                        let sx = p.top(&self.u.zonk(&tx));
                        self.error(
                            DiagKind::Type,
                            x.span,
                            format!(
                                "the elements of a sequence must all have the same type: the first is `{s0}`, element {} is `{sx}`",
                                i + 1
                            ),
                        );
                    }
                }
            }
        }
        Type::seq(first.unwrap_or_else(|| self.fresh()))
    }

    #[inline(never)]
    fn empty_seq(&mut self, te: &TypeExpr) -> Type {
        let mut names = Vec::new();
        match self.type_expr(te, &mut names, &[], None) {
            Ok(t) => Type::seq(t),
            Err(d) => {
                self.errors.push(d);
                Type::seq(self.fresh())
            }
        }
    }

    #[inline(never)]
    fn range(&mut self, start: &mut Expr, end: &mut Expr, stride: &mut Option<Box<Expr>>) -> Type {
        let mut parts: Vec<&mut Expr> = vec![start, end];
        if let Some(s) = stride {
            parts.push(s);
        }
        for x in parts {
            let t = self.expr(x);
            if self.u.unify(&t, &Type::Int).is_err() {
                let shown = self.show(&t);
                self.error(
                    DiagKind::Type,
                    x.span,
                    format!("the bounds and stride of a range must be of type int; this one is `{shown}`"),
                );
            }
        }
        Type::seq(Type::Int)
    }

    /// Refuses a serial-only function used as a value: whoever receives it may apply it
    /// inside an apply-to-each, where it cannot run.
    fn serial_function_value(&mut self, id: &Ident) {
        if self.sess.is_serial_only(&id.name) {
            self.error(
                DiagKind::Type,
                id.span,
                format!("`{}` is serial only and cannot be passed as a function argument (it may not run inside an apply-to-each)", id.name),
            );
        }
    }

    /// A name used as a value.
    fn var(&mut self, id: &mut Ident) -> Type {
        if let Some(t) = self.local(&id.name) {
            id.res = Res::Local;
            return t;
        }
        if let Some((n, t)) = &self.current {
            if *n == id.name {
                id.res = Res::Function;
                return t.clone();
            }
        }
        let sess = self.sess;
        if let Some(t) = sess.globals.get(&id.name) {
            id.res = Res::Global;
            return t.clone();
        }
        if let Some(f) = sess.functions.get(&id.name) {
            id.res = Res::Function;
            self.serial_function_value(id);
            return self.u.instantiate(&f.scheme);
        }
        if let Some(d) = sess.datatypes.get(&id.name) {
            id.res = Res::Constructor;
            return self.u.instantiate(&d.scheme);
        }
        if let Some(s) = builtin_scheme_ref(&id.name) {
            id.res = Res::Builtin;
            self.serial_function_value(id);
            return self.u.instantiate(s);
        }
        self.error(
            DiagKind::Name,
            id.span,
            format!("`{}` is undefined", id.name),
        );
        self.fresh()
    }

    /// A call `func(arg)`.
    fn call(&mut self, span: Span, func: &mut Ident, arg: &mut Expr) -> Type {
        let at = self.expr(arg);
        self.apply(span, func, arg, at)
    }

    /// The result type of calling `func` on an argument of type `at` (kept apart from
    /// [`Self::call`] so that the recursion's frames stay small).
    #[inline(never)]
    fn apply(&mut self, span: Span, func: &mut Ident, arg: &Expr, at: Type) -> Type {
        let name = func.name.clone();
        let sess = self.sess;
        // A local variable holding a function (a function passed as an argument).
        if let Some(lt) = self.local(&name) {
            if matches!(self.u.shallow(&lt), Type::Fun(..) | Type::Var(_)) {
                func.res = Res::Local;
                let r = self.fresh();
                if let Err(e) = self.u.unify(&lt, &Type::fun(at.clone(), r.clone())) {
                    self.call_error(span, &name, &at, &Shown::Mono(lt), None, &e, arg);
                }
                return r;
            }
        }
        let (fty, shown) = if let Some((_, t)) = self.current.clone().filter(|(n, _)| *n == name) {
            func.res = Res::Function;
            (t.clone(), Shown::Mono(t))
        } else if let Some(f) = sess.functions.get(&name) {
            func.res = Res::Function;
            (self.u.instantiate(&f.scheme), Shown::Scheme(&f.scheme))
        } else if let Some(d) = sess.datatypes.get(&name) {
            func.res = Res::Constructor;
            (self.u.instantiate(&d.scheme), Shown::Scheme(&d.scheme))
        } else if let Some(s) = builtin_scheme_ref(&name) {
            func.res = Res::Builtin;
            if !matches!(s.ty, Type::Fun(..)) {
                self.error(
                    DiagKind::Type,
                    func.span,
                    format!("`{name}` is a constant, not a function"),
                );
                return self.fresh();
            }
            (self.u.instantiate(s), Shown::Scheme(s))
        } else if let Some(t) = sess.globals.get(&name) {
            func.res = Res::Global;
            let shown = self.show(t);
            self.error(
                DiagKind::Type,
                func.span,
                format!("`{name}` is a variable of type `{shown}`, not a function"),
            );
            return self.fresh();
        } else if let Some(t) = self.local(&name) {
            func.res = Res::Local;
            let shown = self.show(&t);
            self.error(
                DiagKind::Type,
                func.span,
                format!("`{name}` is a variable of type `{shown}`, not a function"),
            );
            return self.fresh();
        } else {
            self.error(
                DiagKind::Name,
                func.span,
                format!("function `{name}` is undefined"),
            );
            return self.fresh();
        };
        let recursive = self.current.as_ref().is_some_and(|(n, _)| *n == name);
        if matches!(func.res, Res::Function | Res::Builtin)
            && !recursive
            && self.sess.is_serial_only(&name)
        {
            self.calls_serial = true;
            if self.parallel > 0 {
                self.error(
                    DiagKind::Type,
                    span,
                    format!("cannot call `{name}` in parallel: it is serial only and may not be used inside an apply-to-each"),
                );
            }
        }
        let Type::Fun(p, r) = self.u.shallow(&fty) else {
            return self.fresh();
        };
        let params = spine(&self.u.zonk(&p));
        if let Err(e) = self.u.unify(&p, &at) {
            self.call_error(span, &name, &at, &shown, Some(params), &e, arg);
        }
        Arc::unwrap_or_clone(r)
    }

    /// Reports a call whose argument does not fit the function's type; `params` is the
    /// number of parameters, when known.
    #[allow(clippy::too_many_arguments)]
    fn call_error(
        &mut self,
        span: Span,
        name: &str,
        at: &Type,
        fun: &Shown<'_>,
        params: Option<usize>,
        e: &UnifyError,
        arg: &Expr,
    ) {
        let fun_shown = match fun {
            Shown::Scheme(s) => format_scheme(s),
            Shown::Mono(t) => self.show(t),
        };
        let given = arg_count(arg);
        let args = TypePrinter::new().with_context(&self.u.zonk(at));
        if let Some(n) = params {
            if given != n {
                let plural = if n == 1 { "" } else { "s" };
                let were = if given == 1 { "was" } else { "were" };
                self.errors.push(
                    Diagnostic::new(
                        DiagKind::Type,
                        span,
                        format!("function `{name}` takes {n} argument{plural}, but {given} {were} given"),
                    )
                    .with_note(None, format!("function type: {fun_shown}")),
                );
                return;
            }
        }
        let why = self.why(e);
        self.errors.push(
            Diagnostic::new(
                DiagKind::Type,
                span,
                format!("for function `{name}`, the inferred argument types don't match the function's type"),
            )
            .with_note(None, format!("argument types: {args}"))
            .with_note(None, format!("function type: {fun_shown}"))
            .with_note(None, why),
        );
    }
}

fn too_deep(span: Span) -> Diagnostic {
    Diagnostic::new(
        DiagKind::Compile,
        span,
        format!("this form is nested too deeply to be checked (more than {MAX_DEPTH} levels)"),
    )
}

fn recursive_datatype(id: &Ident) -> Diagnostic {
    Diagnostic::new(
        DiagKind::Type,
        id.span,
        format!(
            "datatype `{}` refers to itself: recursive datatypes are not allowed",
            id.name
        ),
    )
}

/// `t`, `f` and `time` cannot be bound or defined.
fn is_reserved(name: &str) -> bool {
    matches!(name, "t" | "f" | "time")
}

fn is_base_type(name: &str) -> bool {
    matches!(name, "int" | "bool" | "float" | "char")
}

/// The number of components of a tuple type.
fn spine(t: &Type) -> usize {
    match t {
        Type::Pair(_, b) => 1 + spine(b),
        _ => 1,
    }
}

/// The number of components of an argument tuple as written.
fn arg_count(e: &Expr) -> usize {
    match &e.kind {
        ExprKind::Pair(_, b) => 1 + arg_count(b),
        _ => 1,
    }
}

/// A pattern as NESL source, for messages: a tuple in parentheses.
pub(crate) fn show_pattern(p: &Pattern) -> String {
    match &p.kind {
        PatternKind::Pair(a, b) => format!("({})", show_pattern_pair(a, b)),
        _ => show_pattern_inner(p),
    }
}

fn show_pattern_inner(p: &Pattern) -> String {
    match &p.kind {
        PatternKind::Var(id) => id.name.clone(),
        PatternKind::Pair(a, b) => show_pattern_pair(a, b),
        PatternKind::Con(id, sub) => format!("{}({})", id.name, show_pattern_spine(sub)),
    }
}

fn show_pattern_pair(a: &Pattern, b: &Pattern) -> String {
    let a = match &a.kind {
        PatternKind::Pair(..) => show_pattern(a),
        _ => show_pattern_inner(a),
    };
    format!("{a}, {}", show_pattern_spine(b))
}

fn show_pattern_spine(p: &Pattern) -> String {
    match &p.kind {
        PatternKind::Pair(a, b) => show_pattern_pair(a, b),
        _ => show_pattern_inner(p),
    }
}

/// Calls `f` on every type slot of a pattern.
pub fn walk_pattern(p: &mut Pattern, f: &mut dyn FnMut(&mut Option<Type>)) {
    f(&mut p.ty);
    match &mut p.kind {
        PatternKind::Var(_) => {}
        PatternKind::Pair(a, b) => {
            walk_pattern(a, f);
            walk_pattern(b, f);
        }
        PatternKind::Con(_, s) => walk_pattern(s, f),
    }
}

/// Calls `f` on every type slot of an expression (its own, its sub-expressions' and
/// its patterns').
pub fn walk_expr(e: &mut Expr, f: &mut dyn FnMut(&mut Option<Type>)) {
    f(&mut e.ty);
    match &mut e.kind {
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Char(_)
        | ExprKind::Str(_)
        | ExprKind::Var(_)
        | ExprKind::EmptySeq(_) => {}
        ExprKind::Call { arg, .. } => walk_expr(arg, f),
        ExprKind::Pair(a, b) => {
            walk_expr(a, f);
            walk_expr(b, f);
        }
        ExprKind::If(c, a, b) => {
            walk_expr(c, f);
            walk_expr(a, f);
            walk_expr(b, f);
        }
        ExprKind::Let(bs, body) => {
            for (p, x) in bs {
                walk_pattern(p, f);
                walk_expr(x, f);
            }
            walk_expr(body, f);
        }
        ExprKind::ApplyToEach {
            body,
            binders,
            filter,
        } => {
            for b in binders {
                walk_pattern(&mut b.pat, f);
                walk_expr(&mut b.seq, f);
            }
            if let Some(x) = filter {
                walk_expr(x, f);
            }
            if let Some(x) = body {
                walk_expr(x, f);
            }
        }
        ExprKind::Seq(xs) => {
            for x in xs {
                walk_expr(x, f);
            }
        }
        ExprKind::Range { start, end, stride } => {
            walk_expr(start, f);
            walk_expr(end, f);
            if let Some(s) = stride {
                walk_expr(s, f);
            }
        }
        ExprKind::Time(x) => walk_expr(x, f),
    }
}

/// `50000` as `50,000`.
fn group_thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
