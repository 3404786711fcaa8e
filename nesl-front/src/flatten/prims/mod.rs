//! The standard library's primitives, generated as lifted VCODE, one module per family
//! of the registry ([`crate::check::builtins::Family`]): [`scalar`], [`sequence`],
//! [`scan`], [`permute`], [`strings`] and [`io`] (terminal output and the effects).
//!
//! Every primitive receives its argument in the lifted layout of the current context
//! and leaves its result in the same layout. Scalar primitives are single element-wise
//! instructions; sequence primitives use the segmented instructions (scans, reductions,
//! `PACK`, `RANK_*`) directly, and everything that moves elements of any type is an index
//! computation followed by a type-directed gather ([`Compiler::gather`]). Functions
//! that the NESL prelude defines in NESL ([`super::prelude`]) are compiled like user
//! functions instead.

mod io;
mod permute;
mod scalar;
mod scan;
mod sequence;
mod strings;

use vcode::{Const, Opcode as O, Ty};
use crate::check::builtins::{lookup, Family, Impl};
use super::builder::{FunBuilder, Slot};
use super::gen::{err, Compiler, Ctx, Env, Origin, Val, R};
use super::helpers::Part;
use super::layout::{Lay, SlotKind};
use crate::ast::{Expr, ExprKind, Span};
use crate::ty::Type;

/// The shape of a sequence result built from a source sequence: its descriptor, the
/// position of each result element in its sequence, and the start and length of the
/// source sequence of the same instance (distributed over the result elements).
struct Shape {
    rseg: Slot,
    j: Slot,
    start: Slot,
    len: Slot,
}

impl Compiler<'_> {
    /// A constant integer with one element per element of `like` (an INT vector).
    fn int_like(&self, fb: &mut FunBuilder, k: i64, like: Slot) -> Slot {
        let n = fb.op1(O::Length.t(Ty::Int), &[like]);
        let s = fb.op1(O::MakeSegdes, &[n]);
        let c = self.cint(fb, k);
        fb.op1(O::Dist.t(Ty::Int), &[c, s])
    }

    fn shape(&mut self, fb: &mut FunBuilder, ctx: Ctx, seg: Slot, newlens: Slot) -> Shape {
        let rseg = fb.op1(O::MakeSegdes, &[newlens]);
        let j = self.local_index(fb, ctx, rseg);
        let lens = fb.op1(O::Lengths, &[seg]);
        let starts = fb.op1(O::AddScan.t(Ty::Int), &[lens, ctx.seg]);
        let start = fb.op1(O::Dist.t(Ty::Int), &[starts, rseg]);
        let len = fb.op1(O::Dist.t(Ty::Int), &[lens, rseg]);
        Shape { rseg, j, start, len }
    }

    fn regather(&mut self, fb: &mut FunBuilder, sh: &Shape, data: &Val, local: Slot) -> Val {
        let idx = fb.op1(O::Add.t(Ty::Int), &[sh.start, local]);
        let d = self.gather(fb, data, idx);
        Val::mk_seq(sh.rseg, d)
    }

    /// Per-instance concatenation of two lifted sequences.
    fn seq_append(&mut self, fb: &mut FunBuilder, ctx: Ctx, a: &Val, b: &Val) -> Val {
        self.seq_concat(fb, ctx, &[a.clone(), b.clone()])
    }

    /// Per-instance concatenation of lifted sequences (at least one): each element is placed
    /// once, at the offset of its instance's result plus the lengths of the sequences
    /// before its own plus its position.
    pub(crate) fn seq_concat(&mut self, fb: &mut FunBuilder, ctx: Ctx, vs: &[Val]) -> Val {
        let lens: Vec<Slot> = vs.iter().map(|v| fb.op1(O::Lengths, &[v.seq().0])).collect();
        let mut l = lens[0];
        for &x in &lens[1..] {
            l = fb.op1(O::Add.t(Ty::Int), &[l, x]);
        }
        let rseg = fb.op1(O::MakeSegdes, &[l]);
        let mut off = fb.op1(O::AddScan.t(Ty::Int), &[l, ctx.seg]);
        let one = self.int_in(fb, ctx, 1);
        let mut parts = Vec::with_capacity(vs.len());
        let mut tot = None;
        for (i, (v, &len)) in vs.iter().zip(&lens).enumerate() {
            let (seg, data) = v.seq();
            let dest = fb.op1(O::Index, &[off, one, seg]);
            if i + 1 < vs.len() {
                off = fb.op1(O::Add.t(Ty::Int), &[off, len]);
            }
            let n = fb.op1(O::AddReduce.t(Ty::Int), &[len, ctx.seg]);
            tot = Some(match tot {
                None => n,
                Some(t) => fb.op1(O::Add.t(Ty::Int), &[t, n]),
            });
            parts.push(Part { v: data, dest, n });
        }
        let el = parts[0].v.lay.clone();
        let d = self.scatter_into(fb, &el, &parts, tot.unwrap_or(one));
        Val::mk_seq(rseg, d)
    }

    /// `a ++ b ++ ...`: a chain of the builtin `++` concatenated in one placement instead
    /// of one append per `++`. `None` unless `arg` (the argument of a `++` call) holds
    /// another `++`.
    pub(crate) fn concat_chain(&mut self, fb: &mut FunBuilder, env: &mut Env, ctx: Ctx, arg: &Expr, rty: &Type, span: Span) -> R<Option<Val>> {
        fn operands<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
            if let ExprKind::Call { func, arg } = &e.kind {
                if func.res == crate::ast::Res::Builtin && func.name == "++" {
                    if let ExprKind::Pair(a, b) = &arg.kind {
                        operands(a, out);
                        operands(b, out);
                        return;
                    }
                }
            }
            out.push(e);
        }
        let mut es = Vec::new();
        match &arg.kind {
            ExprKind::Pair(a, b) => {
                operands(a, &mut es);
                operands(b, &mut es);
            }
            _ => return Ok(None),
        }
        if es.len() < 3 {
            return Ok(None);
        }
        let rlay = self.lay(rty, span)?;
        let mut vs = Vec::with_capacity(es.len());
        for e in es {
            vs.push(self.expr(fb, env, ctx, e)?);
        }
        let r = self.seq_concat(fb, ctx, &vs);
        let r = Val::new(r.s, rlay);
        Ok(Some(r))
    }

    /// An INT scalar replicated to the length of the INT vector `like`.
    fn dist_scalar(&self, fb: &mut FunBuilder, x: Slot, like: Slot) -> Slot {
        let n = fb.op1(O::Length.t(Ty::Int), &[like]);
        let s = fb.op1(O::MakeSegdes, &[n]);
        fb.op1(O::Dist.t(Ty::Int), &[x, s])
    }

    /// A one-element sequence per instance.
    fn singleton(&mut self, fb: &mut FunBuilder, ctx: Ctx, x: &Val) -> Val {
        let one = self.int_in(fb, ctx, 1);
        let seg = fb.op1(O::MakeSegdes, &[one]);
        Val::mk_seq(seg, x.clone())
    }

    /// A sequence of `vals.len()` elements per instance, element `k` from `vals[k]`:
    /// instance `i` of `vals[k]` is placed at `i * n + k` directly.
    pub(crate) fn make_seq(&mut self, fb: &mut FunBuilder, ctx: Ctx, vals: &[Val], el: &Lay) -> Val {
        let n = vals.len() as i64;
        let nn = self.int_in(fb, ctx, n);
        let seg = fb.op1(O::MakeSegdes, &[nn]);
        let data = match vals {
            [] => self.empty(fb, el),
            [v] => v.clone(),
            _ => {
                let nc = if ctx.unit { self.cint(fb, 1) } else { self.count(fb, ctx.seg) };
                let sc = fb.op1(O::MakeSegdes, &[nc]);
                let nk = self.cint(fb, n);
                let tot = fb.op1(O::Mul.t(Ty::Int), &[nc, nk]);
                let parts: Vec<Part> = vals
                    .iter()
                    .enumerate()
                    .map(|(k, v)| {
                        let c = self.cint(fb, k as i64);
                        let dest = fb.op1(O::Index, &[c, nk, sc]);
                        Part { v: v.clone(), dest, n: nc }
                    })
                    .collect();
                self.scatter_into(fb, el, &parts, tot)
            }
        };
        Val::mk_seq(seg, data)
    }

    /// Keeps the elements of a lifted sequence whose flag (BOOL, one per element) holds.
    /// Elements of at most two base vectors are packed directly; others are gathered by
    /// their packed positions. The PACK within the sequence's segments gives the result's
    /// descriptor.
    fn seq_pack(&mut self, fb: &mut FunBuilder, v: &Val, flags: Slot) -> Val {
        let (seg, data) = v.seq();
        if let Some((d, rseg)) = self.pack_direct(fb, &data, flags, seg, 2) {
            let rseg = match rseg {
                Some(r) => r,
                None => {
                    let fi = fb.op1(O::BToI, &[flags]);
                    let newlens = fb.op1(O::AddReduce.t(Ty::Int), &[fi, seg]);
                    fb.op1(O::MakeSegdes, &[newlens])
                }
            };
            return Val::mk_seq(rseg, d);
        }
        let n = fb.op1(O::Length.t(Ty::Bool), &[flags]);
        let all = fb.op1(O::MakeSegdes, &[n]);
        let io = self.iota(fb, all);
        let p = fb.op(O::Pack.t(Ty::Int), &[io, flags, seg]);
        let d = self.gather(fb, &data, p[0]);
        Val::mk_seq(p[1], d)
    }

    /// The bounds check `0 <= i < len` of indices `i` into sequences of lengths `len` (one
    /// per instance of `ctx`): `i` has one index per instance (`iseg` None) or one segment
    /// of indices per instance (descriptor `iseg`). Segments of indices are checked by
    /// their extremes (segmented MIN and MAX), without replicating the bound.
    fn check_index(&mut self, fb: &mut FunBuilder, ctx: Ctx, i: Slot, len: Slot, iseg: Option<Slot>, msg: &str) {
        if !self.arg_check {
            return;
        }
        // A failure reports an offending index and its sequence's length.
        let (ok, index) = match iseg {
            None => {
                // Element-wise, so that the optimiser fuses the comparisons.
                let z = self.int_in(fb, ctx, 0);
                let ok1 = fb.op1(O::Ge.t(Ty::Int), &[i, z]);
                let ok2 = fb.op1(O::Lt.t(Ty::Int), &[i, len]);
                (fb.op1(O::And.t(Ty::Bool), &[ok1, ok2]), i)
            }
            Some(s) => {
                // An empty segment reduces to the identities (MIN: large, MAX: negative).
                let mn = fb.op1(O::MinReduce.t(Ty::Int), &[i, s]);
                let mx = fb.op1(O::MaxReduce.t(Ty::Int), &[i, s]);
                let zk = self.int_in(fb, ctx, 0);
                let b1 = fb.op1(O::Lt.t(Ty::Int), &[mn, zk]);
                let b2 = fb.op1(O::Ge.t(Ty::Int), &[mx, len]);
                let b = fb.op1(O::Or.t(Ty::Bool), &[b1, b2]);
                let worst = fb.op1(O::Select.t(Ty::Int), &[b1, mn, mx]);
                (fb.op1(O::Not.t(Ty::Bool), &[b]), worst)
            }
        };
        self.check_all(fb, ok, ctx, msg, 1, &[index, len]);
    }

    /// `v[i]` per instance, with the bounds check.
    fn elt(&mut self, fb: &mut FunBuilder, ctx: Ctx, v: &Val, i: Slot, msg: &str) -> Val {
        let (seg, data) = v.seq();
        let lens = fb.op1(O::Lengths, &[seg]);
        self.check_index(fb, ctx, i, lens, None, msg);
        // Base elements: one EXTRACT reads the element of every segment in place.
        if let (Lay::Base(k), None) = (&data.lay, &data.lazy) {
            return Val::base(fb.op1(O::Extract.t(k.ty()), &[data.one(), i, seg]), *k);
        }
        let starts = fb.op1(O::AddScan.t(Ty::Int), &[lens, ctx.seg]);
        let idx = fb.op1(O::Add.t(Ty::Int), &[starts, i]);
        self.gather(fb, &data, idx)
    }

    /// Elements `s .. s+n-1` of each instance's sequence (no checks).
    fn subseq_raw(&mut self, fb: &mut FunBuilder, ctx: Ctx, v: &Val, s: Slot, n: Slot) -> Val {
        let (seg, data) = v.seq();
        let sh = self.shape(fb, ctx, seg, n);
        let sd = fb.op1(O::Dist.t(Ty::Int), &[s, sh.rseg]);
        let local = fb.op1(O::Add.t(Ty::Int), &[sd, sh.j]);
        self.regather(fb, &sh, &data, local)
    }

    /// Structural equality of two lifted values (BOOL per instance of `ctx`).
    fn eql(&mut self, fb: &mut FunBuilder, ctx: Ctx, a: &Val, b: &Val) -> Slot {
        match &a.lay {
            Lay::Unit | Lay::Fun(_) => self.const_in(fb, ctx, Const::bool(true)),
            Lay::Base(SlotKind::Bool) => {
                let x = fb.op1(O::Xor.t(Ty::Bool), &[a.one(), b.one()]);
                fb.op1(O::Not.t(Ty::Bool), &[x])
            }
            Lay::Base(k) => fb.op1(O::Eq.t(k.ty()), &[a.one(), b.one()]),
            Lay::Pair(..) => {
                let (a1, a2) = a.split();
                let (b1, b2) = b.split();
                let x = self.eql(fb, ctx, &a1, &b1);
                let y = self.eql(fb, ctx, &a2, &b2);
                fb.op1(O::And.t(Ty::Bool), &[x, y])
            }
            Lay::Seq(_) => {
                // Compare elements only where the lengths agree: the instances with
                // equal lengths are packed, compared element-wise and scattered back.
                let (sa, _) = a.seq();
                let (sb, _) = b.seq();
                let la = fb.op1(O::Lengths, &[sa]);
                let lb = fb.op1(O::Lengths, &[sb]);
                let same = fb.op1(O::Eq.t(Ty::Int), &[la, lb]);
                let io = self.iota(fb, ctx.seg);
                let p = fb.op(O::Pack.t(Ty::Int), &[io, same, ctx.seg]);
                let (idx, pseg) = (p[0], p[1]);
                let pa = self.gather(fb, a, idx);
                let pb = self.gather(fb, b, idx);
                let (psa, da) = pa.seq();
                let (_, db) = pb.seq();
                let pl = fb.op1(O::Lengths, &[psa]);
                let tot = fb.op1(O::AddReduce.t(Ty::Int), &[pl, pseg]);
                let ectx = Ctx { seg: fb.op1(O::MakeSegdes, &[tot]), unit: false };
                let e = self.eql(fb, ectx, &da, &db);
                let per = fb.op1(O::AndReduce.t(Ty::Bool), &[e, psa]);
                // Scatter back into a vector of F.
                let f = fb.konst(Const::bool(false));
                let dflt = fb.op1(O::Dist.t(Ty::Bool), &[f, ctx.seg]);
                fb.op1(O::DPermute.t(Ty::Bool), &[per, idx, dflt, pseg, ctx.seg])
            }
        }
    }

    /// `elt`, `length` and `->` on a lazily replicated sequence variable: read the
    /// original sequence in place. `None` when the call is not of that form.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn lazy_builtin(
        &mut self,
        fb: &mut FunBuilder,
        env: &mut Env,
        ctx: Ctx,
        name: &str,
        arg: &Expr,
        rty: &Type,
        span: Span,
    ) -> R<Option<Val>> {
        let (seqe, other) = match (name, &arg.kind) {
            ("length", _) => (arg, None),
            ("elt" | "->" | "read", ExprKind::Pair(a, i)) => (&**a, Some(&**i)),
            _ => return Ok(None),
        };
        let Some(l) = self.lazy_var(env, seqe) else { return Ok(None) };
        if !matches!(l.orig.lay, Lay::Seq(_)) {
            return Ok(None);
        }
        let rlay = self.lay(rty, span)?;
        let (seg, data) = l.orig.seq();
        let lens = fb.op1(O::Lengths, &[seg]);
        if l.single {
            return self.single_builtin(fb, env, ctx, name, other, lens, &data, rlay).map(Some);
        }
        let ln = self.gather(fb, &Val::base(lens, SlotKind::Int), l.idx).one();
        let Some(ie) = other else {
            return Ok(Some(Val::new(vec![ln], rlay)));
        };
        let n = fb.op1(O::Length.t(Ty::Int), &[lens]);
        let sn = fb.op1(O::MakeSegdes, &[n]);
        let starts = fb.op1(O::AddScan.t(Ty::Int), &[lens, sn]);
        let st = self.gather(fb, &Val::base(starts, SlotKind::Int), l.idx).one();
        let iv = self.expr(fb, env, ctx, ie)?;
        if name == "elt" {
            let i = iv.one();
            self.check_index(fb, ctx, i, ln, None, "Sequence reference (a[i]) out of bounds.");
            let idx = fb.op1(O::Add.t(Ty::Int), &[st, i]);
            let d = self.gather(fb, &data, idx);
            return Ok(Some(Val::new(d.s, rlay)));
        }
        let (si, di) = iv.seq();
        self.check_index(fb, ctx, di.one(), ln, Some(si), "Index out of bounds for function ->.");
        let sd = fb.op1(O::Dist.t(Ty::Int), &[st, si]);
        let idx = fb.op1(O::Add.t(Ty::Int), &[sd, di.one()]);
        let d = self.gather(fb, &data, idx);
        Ok(Some(Val::new(Val::mk_seq(si, d).s, rlay)))
    }

    /// [`lazy_builtin`](Self::lazy_builtin) on a sequence replicated from a unit context:
    /// every instance reads the one sequence (lengths `lens`, one element; elements
    /// `data`), which starts at 0, so indices need no offset. The indices of all
    /// instances are checked at once by their extremes against the one length, without
    /// replicating it.
    #[allow(clippy::too_many_arguments)]
    fn single_builtin(
        &mut self,
        fb: &mut FunBuilder,
        env: &mut Env,
        ctx: Ctx,
        name: &str,
        index: Option<&Expr>,
        lens: Slot,
        data: &Val,
        rlay: Lay,
    ) -> R<Val> {
        let Some(ie) = index else {
            return Ok(Val::new(vec![fb.op1(O::Dist.t(Ty::Int), &[lens, ctx.seg])], rlay));
        };
        let iv = self.expr(fb, env, ctx, ie)?;
        let unit = self.unit_ctx(fb);
        if name == "elt" {
            let i = iv.one();
            self.check_index(fb, unit, i, lens, Some(ctx.seg), "Sequence reference (a[i]) out of bounds.");
            let d = self.gather(fb, data, i);
            return Ok(Val::new(d.s, rlay));
        }
        let (si, di) = iv.seq();
        let n = fb.op1(O::Length.t(Ty::Int), &[di.one()]);
        let all = fb.op1(O::MakeSegdes, &[n]);
        self.check_index(fb, unit, di.one(), lens, Some(all), "Index out of bounds for function ->.");
        let d = self.gather(fb, data, di.one());
        Ok(Val::new(Val::mk_seq(si, d).s, rlay))
    }

    /// Compiles a call of a builtin function on its (lifted) argument, by the
    /// implementation its row of the registry names.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn builtin(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, arg: Val, aty: &Type, rty: &Type, span: Span) -> R<Val> {
        let Some(row) = lookup(name) else {
            return Err(unsupported(span, name));
        };
        match row.imp {
            Impl::Prelude => self.call_fn(fb, Origin::Prelude, name, aty, &arg, ctx, rty, span),
            Impl::Effect => self.effect(fb, ctx, name, &arg, rty, span),
            Impl::Prim(Family::Scalar) => self.scalar_prim(fb, ctx, name, arg, aty, rty, span),
            Impl::Prim(Family::Sequence) => self.sequence_prim(fb, ctx, name, arg, aty, rty, span),
            Impl::Prim(Family::Scan) => self.scan_prim(fb, ctx, name, arg, aty, rty, span),
            Impl::Prim(Family::Permute) => self.permute_prim(fb, ctx, name, arg, aty, rty, span),
            Impl::Prim(Family::Strings) => self.string_prim(fb, ctx, name, arg, aty, rty, span),
            Impl::Prim(Family::Io) => self.io_prim(fb, ctx, name, arg, rty, span),
        }
    }

    /// Total number of elements described by a descriptor with one segment per instance.
    fn total_len(&self, fb: &mut FunBuilder, seg: Slot, ctx: Ctx) -> Slot {
        let l = fb.op1(O::Lengths, &[seg]);
        fb.op1(O::AddReduce.t(Ty::Int), &[l, ctx.seg])
    }

    /// Concatenation of two INT vectors.
    fn append_slots(&mut self, fb: &mut FunBuilder, a: Slot, b: Slot) -> Slot {
        let r = self.append(fb, &Val::base(a, SlotKind::Int), &Val::base(b, SlotKind::Int));
        r.one()
    }

}

/// The error of a built-in that its family does not implement (the registry's unit test
/// keeps rows and implementations in step, so only a broken build reaches it).
fn unsupported(span: Span, name: &str) -> crate::diag::Diagnostic {
    err(span, format!("the builtin function {name} is not supported yet"))
}

#[cfg(test)]
mod tests {
    use super::super::gen::ProgInfo;
    use super::super::{Globals, Info};
    use super::*;
    use crate::check::builtins::{builtin_scheme, BUILTINS};
    use crate::check::Session;
    use crate::ty::TypeClass;

    /// `t` with each type variable replaced by a ground type of its class.
    fn ground(t: &Type) -> Type {
        match t {
            Type::Var(v) if v.class == TypeClass::Logical => Type::Bool,
            Type::Var(_) => Type::Int,
            Type::Seq(e) => Type::seq(ground(e)),
            Type::Pair(a, b) => Type::pair(ground(a), ground(b)),
            Type::Fun(a, b) => Type::fun(ground(a), ground(b)),
            Type::Data(n, args) => Type::Data(n.clone(), args.iter().map(ground).collect()),
            other => other.clone(),
        }
    }

    /// Every row of the registry has an implementation of its kind: a prelude row a
    /// prelude definition, a primitive or an effect code from its family (generated here
    /// at a ground instance of its type).
    #[test]
    fn every_row_has_an_implementation() {
        let session = Session::new();
        let prelude = crate::flatten::prelude::prelude().expect("the prelude checks");
        let info = Info { session: &session, prelude: Some(prelude) };
        let globals = Globals::new();
        let span = Span::default();
        let mut failures = Vec::new();
        for row in BUILTINS {
            if row.imp == Impl::Prelude {
                if info.prelude(row.name).is_none() {
                    failures.push(format!("{}: no prelude definition", row.name));
                }
                continue;
            }
            if info.prelude(row.name).is_some() {
                failures.push(format!("{}: a prelude definition, but the row says {:?}", row.name, row.imp));
            }
            let scheme = builtin_scheme(row.name).expect("every row parses");
            let mut c = Compiler::new(&info, &globals, true);
            let r = match ground(&scheme.ty) {
                Type::Fun(a, r) => {
                    let alay = c.lay(&a, span).expect("a layout");
                    let (mut fb, slots) = FunBuilder::new(alay.size() + 1);
                    let ctx = Ctx { seg: slots[alay.size()], unit: false };
                    let arg = Val::new(slots[..alay.size()].to_vec(), alay);
                    c.builtin(&mut fb, ctx, row.name, arg, &a, &r, span)
                }
                t => {
                    let (mut fb, slots) = FunBuilder::new(1);
                    let ctx = Ctx { seg: slots[0], unit: false };
                    c.builtin_const(&mut fb, ctx, row.name, &t, span)
                }
            };
            if let Err(e) = r {
                failures.push(format!("{}: {}", row.name, e.message));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    /// The names a family function matches at the top level of its `match name`.
    fn arm_names(src: &str, func: &str) -> Vec<String> {
        let start = src.find(&format!("fn {func}(")).unwrap_or_else(|| panic!("no fn {func}"));
        let end = src[start..].find("\n    }\n").map_or(src.len(), |e| start + e);
        let mut out = Vec::new();
        for line in src[start..end].lines() {
            let Some(rest) = line.strip_prefix("            ") else { continue };
            let rest = rest.strip_prefix("| ").unwrap_or(rest);
            if !rest.starts_with('"') {
                continue;
            }
            let pat = rest.split("=>").next().unwrap_or("");
            out.extend(pat.split('"').skip(1).step_by(2).map(str::to_string));
        }
        out
    }

    /// Every name a family implements has a row naming that family, so no code is
    /// unreachable from the registry.
    #[test]
    fn every_implementation_has_a_row() {
        let sources: &[(&str, &str, Impl)] = &[
            (include_str!("scalar.rs"), "scalar_prim", Impl::Prim(Family::Scalar)),
            (include_str!("scalar.rs"), "builtin_const", Impl::Prim(Family::Scalar)),
            (include_str!("sequence.rs"), "sequence_prim", Impl::Prim(Family::Sequence)),
            (include_str!("scan.rs"), "scan_prim", Impl::Prim(Family::Scan)),
            (include_str!("permute.rs"), "permute_prim", Impl::Prim(Family::Permute)),
            (include_str!("strings.rs"), "string_prim", Impl::Prim(Family::Strings)),
            (include_str!("io.rs"), "io_prim", Impl::Prim(Family::Io)),
            (include_str!("io.rs"), "effect", Impl::Effect),
        ];
        let mut failures = Vec::new();
        let mut total = 0;
        for (src, func, imp) in sources {
            let names = arm_names(src, func);
            assert!(!names.is_empty(), "{func}: no arms found");
            total += names.len();
            for n in names {
                match lookup(&n) {
                    None => failures.push(format!("{func} implements {n}, which has no row")),
                    Some(r) if r.imp != *imp => {
                        failures.push(format!("{func} implements {n}, whose row says {:?}", r.imp))
                    }
                    _ => {}
                }
            }
        }
        // `builtin_const` also implements the graphics library's constants, by their
        // table of values.
        for (n, _) in crate::check::builtins::WINDOW_CONSTANTS {
            total += 1;
            match lookup(n) {
                Some(r) if r.imp == Impl::Prim(Family::Scalar) => {}
                _ => failures.push(format!("the window constant {n} has no scalar row")),
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        let rows = BUILTINS.iter().filter(|r| r.imp != Impl::Prelude).count();
        assert_eq!(total, rows, "arms and non-prelude rows differ in number");
    }
}
