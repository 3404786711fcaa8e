//! Let-bound functions (`let format = (s, v) => s ++ "=" ++ v in format("a", "b")`), as
//! CMU NESL accepts them, by inlining at parse time.
//!
//! A let binding `name = (params) => body` defines a function for the rest of the `let`
//! (the later bindings and the body). Each call `name(arg)` there becomes
//! `let params = arg in body`. The variables the function's body uses from outside are
//! bound, at the definition's place, to names no source can write (`name%x`), so a later
//! binding of the same name does not change what the function sees. What is not done: a
//! let-bound function used other than by a call (passed as an argument: an error), or
//! calling itself (its name is undefined in its own body); a later binding of the
//! function's own name ends its scope.

use crate::ast::{Expr, ExprKind, Ident, Pattern, PatternKind, Span};
use crate::diag::{DiagKind, Diagnostic};
use std::cell::Cell;

/// One binding of a `let` as written: a value, or a function.
pub(crate) enum LetItem {
    /// `pattern = expression`.
    Value(Pattern, Expr),
    /// `name = (params) => body`.
    Function(Ident, Pattern, Expr),
}

/// The bindings of a `let` whose functions have been inlined into the bindings after
/// them and into `body`; an error where a let-bound function is used other than by a
/// call.
pub(crate) fn desugar(items: Vec<LetItem>, mut body: Expr) -> Result<(Vec<(Pattern, Expr)>, Expr), Diagnostic> {
    let mut out: Vec<(Pattern, Expr)> = Vec::new();
    let mut rest: Vec<LetItem> = items.into_iter().rev().collect();
    while let Some(item) = rest.pop() {
        match item {
            LetItem::Value(p, e) => out.push((p, e)),
            LetItem::Function(name, params, fbody) => {
                // The outside variables of the function, bound here under fresh names.
                let mut bound = Vec::new();
                pattern_vars(&params, &mut bound);
                let mut free = Vec::new();
                free_vars(&fbody, &mut bound, &mut free);
                let mut fbody = fbody;
                for v in &free {
                    let fresh = format!("{}%{}", name.name, v.name);
                    rename_var(&mut fbody, &v.name, &fresh, &mut Vec::new());
                    let pat = Pattern { kind: PatternKind::Var(Ident::new(fresh, v.span)), span: v.span, ty: None };
                    out.push((pat, Expr::new(ExprKind::Var(Ident::new(v.name.clone(), v.span)), v.span)));
                }
                let f = Inline { name: &name.name, params: &params, body: &fbody, misuse: Cell::new(None) };
                // The later bindings, up to one that binds the name again, and the body.
                let mut shadowed = false;
                for later in rest.iter_mut().rev() {
                    if shadowed {
                        break;
                    }
                    match later {
                        LetItem::Value(p, e) => {
                            f.apply(e);
                            let mut names = Vec::new();
                            pattern_vars(p, &mut names);
                            shadowed = names.iter().any(|n| n == &name.name);
                        }
                        LetItem::Function(n, _, b) => {
                            f.apply(b);
                            shadowed = n.name == name.name;
                        }
                    }
                }
                if !shadowed {
                    f.apply(&mut body);
                }
                if let Some(span) = f.misuse.get() {
                    return Err(Diagnostic::new(
                        DiagKind::Syntax,
                        span,
                        format!("`{}` is a function bound by `let`: it can only be called here, not used as a value", name.name),
                    ));
                }
            }
        }
    }
    Ok((out, body))
}

/// A let-bound function being inlined.
struct Inline<'a> {
    name: &'a str,
    params: &'a Pattern,
    body: &'a Expr,
    /// Where the function's name was used as a value, if it was.
    misuse: Cell<Option<Span>>,
}

impl Inline<'_> {
    /// Replaces every call of the function in `e`.
    fn apply(&self, e: &mut Expr) {
        if let ExprKind::Call { func, arg } = &mut e.kind {
            self.apply(arg);
            if func.name == self.name {
                let arg = std::mem::replace(&mut **arg, Expr::new(ExprKind::Bool(false), e.span));
                let mut body = self.body.clone();
                set_span(&mut body, e.span);
                e.kind = ExprKind::Let(vec![(self.params.clone(), arg)], Box::new(body));
            }
            return;
        }
        if let ExprKind::Var(id) = &e.kind {
            if id.name == self.name && self.misuse.get().is_none() {
                self.misuse.set(Some(id.span));
            }
        }
        for_each_child_mut(e, &mut |c| self.apply(c));
    }
}

/// Gives an inlined body the span of the call (errors inside it point at the call).
fn set_span(e: &mut Expr, span: Span) {
    e.span = span;
    for_each_child_mut(e, &mut |c| set_span(c, span));
}

/// Calls `f` on each direct sub-expression of `e`.
pub(crate) fn for_each_child_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    match &mut e.kind {
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Char(_)
        | ExprKind::Str(_)
        | ExprKind::Var(_)
        | ExprKind::EmptySeq(_) => {}
        ExprKind::Call { arg, .. } => f(arg),
        ExprKind::Pair(a, b) => {
            f(a);
            f(b);
        }
        ExprKind::If(c, a, b) => {
            f(c);
            f(a);
            f(b);
        }
        ExprKind::Let(binds, body) => {
            for (_, x) in binds {
                f(x);
            }
            f(body);
        }
        ExprKind::ApplyToEach { body, binders, filter } => {
            for b in binders {
                f(&mut b.seq);
            }
            if let Some(b) = body {
                f(b);
            }
            if let Some(x) = filter {
                f(x);
            }
        }
        ExprKind::Seq(es) => es.iter_mut().for_each(f),
        ExprKind::Range { start, end, stride } => {
            f(start);
            f(end);
            if let Some(s) = stride {
                f(s);
            }
        }
        ExprKind::Time(x) => f(x),
    }
}

/// The variables a pattern binds.
fn pattern_vars(p: &Pattern, out: &mut Vec<String>) {
    match &p.kind {
        PatternKind::Var(n) => out.push(n.name.clone()),
        PatternKind::Pair(a, b) => {
            pattern_vars(a, out);
            pattern_vars(b, out);
        }
        PatternKind::Con(_, s) => pattern_vars(s, out),
    }
}

/// The variables `e` uses that `bound` does not bind, in order of first use.
fn free_vars(e: &Expr, bound: &mut Vec<String>, out: &mut Vec<Ident>) {
    match &e.kind {
        ExprKind::Var(id) => {
            if !bound.contains(&id.name) && !out.iter().any(|o| o.name == id.name) {
                out.push(id.clone());
            }
        }
        ExprKind::Let(binds, body) => {
            let n = bound.len();
            for (p, x) in binds {
                free_vars(x, bound, out);
                pattern_vars(p, bound);
            }
            free_vars(body, bound, out);
            bound.truncate(n);
        }
        ExprKind::ApplyToEach { body, binders, filter } => {
            for b in binders {
                free_vars(&b.seq, bound, out);
            }
            let n = bound.len();
            for b in binders {
                pattern_vars(&b.pat, bound);
            }
            if let Some(b) = body {
                free_vars(b, bound, out);
            }
            if let Some(x) = filter {
                free_vars(x, bound, out);
            }
            bound.truncate(n);
        }
        _ => {
            let mut e = e.clone();
            for_each_child_mut(&mut e, &mut |c| free_vars(c, bound, out));
        }
    }
}

/// Renames the free uses of variable `from` in `e` to `to`.
fn rename_var(e: &mut Expr, from: &str, to: &str, bound: &mut Vec<String>) {
    match &mut e.kind {
        ExprKind::Var(id) => {
            if id.name == from && !bound.iter().any(|b| b == from) {
                id.name = to.to_string();
            }
        }
        ExprKind::Let(binds, body) => {
            let n = bound.len();
            for (p, x) in binds.iter_mut() {
                rename_var(x, from, to, bound);
                pattern_vars(p, bound);
            }
            rename_var(body, from, to, bound);
            bound.truncate(n);
        }
        ExprKind::ApplyToEach { body, binders, filter } => {
            for b in binders.iter_mut() {
                rename_var(&mut b.seq, from, to, bound);
            }
            let n = bound.len();
            for b in binders.iter() {
                pattern_vars(&b.pat, bound);
            }
            if let Some(b) = body {
                rename_var(b, from, to, bound);
            }
            if let Some(x) = filter {
                rename_var(x, from, to, bound);
            }
            bound.truncate(n);
        }
        _ => for_each_child_mut(e, &mut |c| rename_var(c, from, to, bound)),
    }
}
