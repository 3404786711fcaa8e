//! Apply-to-each over a sequence literal, kept in block order.
//!
//! `let r = {f(v) : v in [a, b]} in ... r[0] ... r[1]` (quicksort's recursion: `[lesser,
//! greater]`, then `result[0] ++ equal ++ result[1]`) runs the body once over the `k·m`
//! instances of the `k` literal elements in each of the context's `m` instances. In the
//! plain layout those instances are interleaved (instance `i`'s `k` elements side by
//! side): building the literal scatters every element of `a` and `b` to its place among
//! the others, and `r[0]`, `r[1]` gather them back out, segment by segment. In *block
//! order* the `m` instances of `a` come first, then the `m` of `b`: the literal is `a`
//! and `b` appended (whole vectors copied), and `r[j]` is block `j` of the result, one
//! contiguous range of each of its vectors.
//!
//! The body's instances do not depend on one another, so their order is free, except
//! where it shows: random numbers (each instance draws the next one) and effects (output
//! order). A body that may reach either keeps the plain layout. The variable is kept in
//! block order only when the `let` body reads it through `r[j]` (a literal `j` below
//! `k`) and `#r`; any other read would materialise the plain layout each time, which
//! the plain path does once.

use vcode::{Opcode as O, Ty};
use super::builder::{FunBuilder, Slot};
use super::gen::{Compiler, Ctx, Env, Val, R};
use super::helpers::Part;
use super::layout::{Lay, SlotKind};
use crate::ast::{Binder, Expr, ExprKind, Pattern, PatternKind, Res};
use crate::ty::Type;

/// A sequence over the `m` instances of its context, each of `k` elements, stored in
/// block order: `inner` holds `k·m` instances of the element layout, element `j` of
/// instance `i` at instance `j·m + i`.
#[derive(Debug)]
pub(crate) struct Blocked {
    pub inner: Val,
    pub k: usize,
    /// The context's instance count (INT scalar).
    pub m: Slot,
}

/// Longest sequence literal kept in block order.
const MAX_BLOCKS: usize = 8;

/// The binder and the literal's elements of `{body : p in [e1, ..., ek]}` (one binder,
/// no filter, `2 <= k <= MAX_BLOCKS`), if `x` is one.
fn literal_apply(x: &Expr) -> Option<(&Binder, &[Expr], &Expr)> {
    let ExprKind::ApplyToEach { body: Some(body), binders, filter: None } = &x.kind else { return None };
    let [b] = binders.as_slice() else { return None };
    let ExprKind::Seq(es) = &b.seq.kind else { return None };
    (2..=MAX_BLOCKS).contains(&es.len()).then_some((b, es.as_slice(), &**body))
}

/// True when every read of the local `name` in `e` is `name[j]` for a literal `j < k`
/// or `#name`, and `e` binds no other variable of that name (whose reads could not be
/// told apart).
fn only_indexed(e: &Expr, name: &str, k: usize) -> bool {
    fn binds(p: &Pattern, name: &str) -> bool {
        match &p.kind {
            PatternKind::Var(id) => id.name == name,
            PatternKind::Pair(a, b) => binds(a, name) || binds(b, name),
            PatternKind::Con(_, inner) => binds(inner, name),
        }
    }
    let is_it = |x: &Expr| matches!(&x.kind, ExprKind::Var(id) if id.res == Res::Local && id.name == name);
    let mut ok = true;
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match &x.kind {
            ExprKind::Var(id) if id.res == Res::Local && id.name == name => ok = false,
            ExprKind::Call { func, arg } if func.res == Res::Builtin && func.name == "length" && is_it(arg) => continue,
            ExprKind::Call { func, arg } if func.res == Res::Builtin && func.name == "elt" => {
                if let ExprKind::Pair(a, i) = &arg.kind {
                    if is_it(a) && matches!(i.kind, ExprKind::Int(j) if (0..k as i64).contains(&j)) {
                        continue;
                    }
                }
            }
            ExprKind::Let(bs, _) if bs.iter().any(|(p, _)| binds(p, name)) => ok = false,
            ExprKind::ApplyToEach { binders, .. } if binders.iter().any(|b| binds(&b.pat, name)) => ok = false,
            _ => {}
        }
        if !ok {
            return false;
        }
        x.for_each_child(&mut |c| stack.push(c));
    }
    ok
}

impl Compiler<'_> {
    /// The value of `let p = x` in block order, when `p` is a variable, `x` an
    /// apply-to-each over a sequence literal whose body's instance order does not show,
    /// and `rest` (the bindings after it and the `let` body) reads the variable only as
    /// [`only_indexed`] allows; `None` otherwise (compile `x` as usual).
    pub(crate) fn let_blocked(&mut self, fb: &mut FunBuilder, env: &mut Env, ctx: Ctx, p: &Pattern, x: &Expr, rest: &[&Expr]) -> R<Option<Val>> {
        let PatternKind::Var(id) = &p.kind else { return Ok(None) };
        let Some((binder, es, body)) = literal_apply(x) else { return Ok(None) };
        if !rest.iter().all(|e| only_indexed(e, &id.name, es.len())) || self.order_matters(self.origin, x) {
            return Ok(None);
        }
        if !ctx.unit && !super::gen::uses_locals(x) {
            // Evaluated once and replicated (`Compiler::expr`): no instances to order.
            return Ok(None);
        }
        let saved = fb.set_origin(self.origin_at(x.span));
        let r = self.apply_blocked(fb, env, ctx, binder, es, body, &self.ty(x)?, x);
        fb.set_origin(saved);
        r.map(Some)
    }

    /// `{body : p in [e1, ..., ek]}` over the `k·m` instances in block order.
    #[allow(clippy::too_many_arguments)]
    fn apply_blocked(&mut self, fb: &mut FunBuilder, env: &mut Env, ctx: Ctx, binder: &Binder, es: &[Expr], body: &Expr, ty: &Type, x: &Expr) -> R<Val> {
        let lay = self.lay(ty, x.span)?;
        let k = es.len();
        let mut elems = Val::new(Vec::new(), Lay::Unit);
        for (i, e) in es.iter().enumerate() {
            let v = self.expr(fb, env, ctx, e)?;
            elems = if i == 0 { v } else { self.append(fb, &elems, &v) };
        }
        let m = self.count(fb, ctx.seg);
        let kc = self.cint(fb, k as i64);
        let total = fb.op1(O::Mul.t(Ty::Int), &[m, kc]);
        let ictx = Ctx { seg: self.segdes(fb, total), unit: false };
        // The free variables, replicated into every block: the instance numbers
        // `0..m` once per block.
        let mut bound = Vec::new();
        super::gen::pat_vars(&binder.pat, &mut bound);
        let mut used = Vec::new();
        super::gen::free_locals(body, &bound, &mut used);
        let mut inner_env: Env = Vec::new();
        let mut idx = None;
        for name in &used {
            let Some(v) = env.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.clone()) else { continue };
            // A block-ordered variable in its plain layout (a lazy one stays lazy).
            let v = if v.blocked.is_some() { self.force(fb, &v) } else { v };
            let r = match (&v.lazy, &v.lay) {
                (_, Lay::Unit | Lay::Fun(_)) => v.clone(),
                (Some(l), _) => {
                    let i = self.block_index(fb, &mut idx, m, kc);
                    let li = self.gather(fb, &Val::base(l.idx, SlotKind::Int), i).one();
                    Val::lazy(l.orig.clone(), li, l.single)
                }
                (None, Lay::Base(_)) => {
                    let i = self.block_index(fb, &mut idx, m, kc);
                    self.gather(fb, &v, i)
                }
                (None, _) => {
                    let i = self.block_index(fb, &mut idx, m, kc);
                    self.pick(fb, &v, i, ctx.unit)
                }
            };
            inner_env.push((name.clone(), r));
        }
        self.bind(&binder.pat, elems, &mut inner_env)?;
        let inner = self.expr(fb, &mut inner_env, ictx, body)?;
        Ok(Val { s: Vec::new(), lay, lazy: None, blocked: Some(std::rc::Rc::new(Blocked { inner, k, m })) })
    }

    /// `0, 1, ..., m-1` repeated `k` times (made once, in `memo`).
    fn block_index(&self, fb: &mut FunBuilder, memo: &mut Option<Slot>, m: Slot, k: Slot) -> Slot {
        if let Some(i) = *memo {
            return i;
        }
        // The positions within `k` segments of `m` elements.
        let blocks = Ctx { seg: self.segdes(fb, k), unit: false };
        let lens = fb.op1(O::Dist.t(Ty::Int), &[m, blocks.seg]);
        let seg = fb.op1(O::MakeSegdes, &[lens]);
        let i = self.local_index(fb, blocks, seg);
        *memo = Some(i);
        i
    }

    /// The plain layout of a block-ordered sequence: instance `j·m + i` of its elements
    /// moves to element `j` of instance `i` (position `i·k + j`).
    pub(crate) fn unblock(&mut self, fb: &mut FunBuilder, v: &Val, b: &Blocked) -> Val {
        let Lay::Seq(el) = &v.lay else { unreachable!("a blocked value is a sequence") };
        let kc = self.cint(fb, b.k as i64);
        let sm = self.segdes(fb, b.m);
        let lens = fb.op1(O::Dist.t(Ty::Int), &[kc, sm]);
        let seg = fb.op1(O::MakeSegdes, &[lens]);
        // Block j's instances go to j, j + k, j + 2k, ...
        let sk = self.segdes(fb, kc);
        let starts = self.iota(fb, sk);
        let strides = fb.op1(O::Dist.t(Ty::Int), &[kc, sk]);
        let blens = fb.op1(O::Dist.t(Ty::Int), &[b.m, sk]);
        let bseg = fb.op1(O::MakeSegdes, &[blens]);
        let dest = fb.op1(O::Index, &[starts, strides, bseg]);
        let total = fb.op1(O::Mul.t(Ty::Int), &[b.m, kc]);
        let data = self.scatter_into(fb, el, &[Part { v: b.inner.clone(), dest, n: total }], total);
        Val::new(Val::mk_seq(seg, data).s, v.lay.clone())
    }

    /// `r[j]` and `#r` of a block-ordered variable `r` (see [`only_indexed`]): block `j`
    /// of its elements, and `k`. `None` when the call is not of that form.
    pub(crate) fn blocked_builtin(&mut self, fb: &mut FunBuilder, env: &Env, ctx: Ctx, name: &str, arg: &Expr) -> Option<Val> {
        let blocked_var = |e: &Expr| match &e.kind {
            ExprKind::Var(id) if id.res == Res::Local => {
                env.iter().rev().find(|(n, _)| *n == id.name).and_then(|(_, v)| v.blocked.clone())
            }
            _ => None,
        };
        match (name, &arg.kind) {
            ("length", _) => {
                let b = blocked_var(arg)?;
                Some(Val::base(self.int_in(fb, ctx, b.k as i64), SlotKind::Int))
            }
            ("elt", ExprKind::Pair(a, i)) => {
                let b = blocked_var(a)?;
                let ExprKind::Int(j) = i.kind else { return None };
                if !(0..b.k as i64).contains(&j) {
                    return None;
                }
                let jc = self.cint(fb, j);
                let first = fb.op1(O::Mul.t(Ty::Int), &[jc, b.m]);
                Some(self.slice(fb, &b.inner, first, b.m))
            }
            _ => None,
        }
    }

    /// Instances `first .. first + count` (INT scalars) of a lifted value: one contiguous
    /// range of each of its vectors, copied whole.
    fn slice(&mut self, fb: &mut FunBuilder, v: &Val, first: Slot, count: Slot) -> Val {
        match &v.lay {
            Lay::Unit | Lay::Fun(_) => v.clone(),
            Lay::Base(_) => {
                let sc = self.segdes(fb, count);
                let one = self.cint(fb, 1);
                let idx = fb.op1(O::Index, &[first, one, sc]);
                self.gather(fb, v, idx)
            }
            Lay::Pair(..) => {
                let (a, b) = v.split();
                let x = self.slice(fb, &a, first, count);
                let y = self.slice(fb, &b, first, count);
                Val::pair(x, y)
            }
            Lay::Seq(_) => {
                let (seg, data) = v.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let nl = self.slice(fb, &Val::base(lens, SlotKind::Int), first, count).one();
                let nseg = fb.op1(O::MakeSegdes, &[nl]);
                // The elements before the range: the lengths of the instances below `first`.
                let n = fb.op1(O::Length.t(Ty::Int), &[lens]);
                let sn = self.segdes(fb, n);
                let io = self.iota(fb, sn);
                let fs = fb.op1(O::Dist.t(Ty::Int), &[first, sn]);
                let below = fb.op1(O::Lt.t(Ty::Int), &[io, fs]);
                let z = self.cint(fb, 0);
                let zs = fb.op1(O::Dist.t(Ty::Int), &[z, sn]);
                let bl = fb.op1(O::Select.t(Ty::Int), &[below, lens, zs]);
                let dfirst = fb.op1(O::AddReduce.t(Ty::Int), &[bl, sn]);
                let sc = self.segdes(fb, count);
                let dcount = fb.op1(O::AddReduce.t(Ty::Int), &[nl, sc]);
                let d = self.slice(fb, &data, dfirst, dcount);
                Val::mk_seq(nseg, d)
            }
        }
    }
}
