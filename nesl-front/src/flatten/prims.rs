//! The standard library's primitives, generated as lifted VCODE.
//!
//! Every primitive receives its argument in the lifted layout of the current context
//! and leaves its result in the same layout. Scalar primitives are single element-wise
//! instructions; sequence primitives use the segmented instructions (scans, reductions,
//! `PACK`, `RANK_*`) directly, and everything that moves elements of any type is an index
//! computation followed by a type-directed gather ([`Compiler::gather`]). Functions
//! that the NESL prelude defines in NESL ([`super::prelude`]) are compiled like user
//! functions instead.

use vcode::{Const, Opcode as O, Ty};
use super::builder::{FunBuilder, Slot};
use super::gen::{err, num, Compiler, Ctx, Env, Origin, Val, R};
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
        self.check_all_data(fb, ok, ctx.seg, msg, 1, &[index, len]);
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
        if !matches!(l.0.lay, Lay::Seq(_)) {
            return Ok(None);
        }
        let rlay = self.lay(rty, span)?;
        let (seg, data) = l.0.seq();
        let lens = fb.op1(O::Lengths, &[seg]);
        let ln = self.gather(fb, &Val::base(lens, SlotKind::Int), l.1).one();
        let Some(ie) = other else {
            return Ok(Some(Val::new(vec![ln], rlay)));
        };
        let n = fb.op1(O::Length.t(Ty::Int), &[lens]);
        let sn = fb.op1(O::MakeSegdes, &[n]);
        let starts = fb.op1(O::AddScan.t(Ty::Int), &[lens, sn]);
        let st = self.gather(fb, &Val::base(starts, SlotKind::Int), l.1).one();
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

    /// A builtin constant (`pi`, `max_int`, ...) or a builtin function used as a value.
    pub(crate) fn builtin_const(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, ty: &Type, span: Span) -> R<Val> {
        let (k, c) = match name {
            "pi" => (SlotKind::Float, Const::float(std::f64::consts::PI)),
            "max_int" => (SlotKind::Int, Const::int(2147483647)),
            "min_int" => (SlotKind::Int, Const::int(-2147483648)),
            "space" => (SlotKind::Int, Const::int(32)),
            "newline" => (SlotKind::Int, Const::int(10)),
            "tab" => (SlotKind::Int, Const::int(9)),
            "nullstr" => (SlotKind::Int, Const::int(-1)),
            "stdin" => (SlotKind::Int, Const::int(0)),
            "stdout" | "stderr" => (SlotKind::Int, Const::int(2)),
            _ => {
                if matches!(ty, Type::Fun(..)) {
                    return Ok(Val::new(Vec::new(), Lay::Unit));
                }
                return Err(err(span, format!("the builtin {name} is not supported yet")));
            }
        };
        Ok(Val::base(self.const_in(fb, ctx, c), k))
    }

    /// Compiles a call of a builtin function on its (lifted) argument.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn builtin(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, arg: Val, aty: &Type, rty: &Type, span: Span) -> R<Val> {
        if self.info.prelude(name).is_some() {
            return self.call_fn(fb, Origin::Prelude, name, aty, &arg, ctx, rty, span);
        }
        if let Some(r) = self.string_builtin(fb, ctx, name, &arg, aty, rty, span)? {
            return Ok(r);
        }
        if let Some(r) = self.effect_builtin(fb, ctx, name, &arg, rty, span)? {
            return Ok(r);
        }
        let rlay = self.lay(rty, span)?;
        let (a, b) = arg.split();
        // The base kind of the (first) argument, for overloaded scalar operations.
        let k1 = match &arg.lay {
            Lay::Pair(x, _) => match **x {
                Lay::Base(k) => k,
                _ => SlotKind::Int,
            },
            Lay::Base(k) => *k,
            _ => SlotKind::Int,
        };
        let kw = k1.ty();
        let base = |s: Slot| Ok(Val::new(vec![s], rlay.clone()));
        macro_rules! bin {
            ($op:expr) => {{
                let s = fb.op1($op, &[a.one(), b.one()]);
                base(s)
            }};
        }
        macro_rules! un {
            ($op:expr) => {{
                let s = fb.op1($op, &[arg.one()]);
                base(s)
            }};
        }
        match name {
            // ----- arithmetic, comparison, logic -----
            "+" => bin!(O::Add.t(kw)),
            "-" => bin!(O::Sub.t(kw)),
            "*" => bin!(O::Mul.t(kw)),
            "/" => {
                if self.arg_check {
                    let z = self.const_in(fb, ctx, num(k1, 0));
                    let ok = fb.op1(O::Ne.t(kw), &[b.one(), z]);
                    self.check_all_data(fb, ok, ctx.seg, "Divide by zero.", 3, &[]);
                }
                bin!(O::Div.t(kw))
            }
            "==" => bin!(O::Eq.t(kw)),
            "/=" => bin!(O::Ne.t(kw)),
            "<" | ">" | "<=" | ">=" => bin!(compare_op(name).t(kw)),
            "and" | "or" | "xor" => bin!(match name {
                "and" => O::And,
                "or" => O::Or,
                _ => O::Xor,
            }
            .t(kw)),
            "nand" | "nor" => {
                let op = if name == "nand" { O::And } else { O::Or };
                let x = fb.op1(op.t(kw), &[a.one(), b.one()]);
                base(fb.op1(O::Not.t(kw), &[x]))
            }
            "not" => un!(O::Not.t(kw)),
            "negate" => {
                let z = self.const_in(fb, ctx, num(k1, 0));
                base(fb.op1(O::Sub.t(kw), &[z, arg.one()]))
            }
            "abs" => {
                let z = self.const_in(fb, ctx, num(k1, 0));
                let neg = fb.op1(O::Sub.t(kw), &[z, arg.one()]);
                let lt = fb.op1(O::Lt.t(kw), &[arg.one(), z]);
                base(fb.op1(O::Select.t(kw), &[lt, neg, arg.one()]))
            }
            "diff" => {
                let d = fb.op1(O::Sub.t(kw), &[a.one(), b.one()]);
                let z = self.const_in(fb, ctx, num(k1, 0));
                let neg = fb.op1(O::Sub.t(kw), &[z, d]);
                let lt = fb.op1(O::Lt.t(kw), &[d, z]);
                base(fb.op1(O::Select.t(kw), &[lt, neg, d]))
            }
            "max" | "min" => {
                let c = fb.op1(if name == "max" { O::Ge } else { O::Le }.t(kw), &[a.one(), b.one()]);
                base(fb.op1(O::Select.t(kw), &[c, a.one(), b.one()]))
            }
            "rem" | "mod" => {
                if self.arg_check {
                    let z = self.int_in(fb, ctx, 0);
                    let ok = fb.op1(O::Ne.t(Ty::Int), &[b.one(), z]);
                    let msg = format!("Divide by zero in function {}.", name.to_uppercase());
                    self.check_all_data(fb, ok, ctx.seg, &msg, 3, &[]);
                }
                let r = fb.op1(O::Mod, &[a.one(), b.one()]);
                if name == "rem" {
                    return base(r);
                }
                // mod: the sign of the divisor.
                let z = self.int_in(fb, ctx, 0);
                let nz = fb.op1(O::Ne.t(Ty::Int), &[r, z]);
                let rn = fb.op1(O::Lt.t(Ty::Int), &[r, z]);
                let bn = fb.op1(O::Lt.t(Ty::Int), &[b.one(), z]);
                let diff = fb.op1(O::Xor.t(Ty::Bool), &[rn, bn]);
                let fix = fb.op1(O::And.t(Ty::Bool), &[nz, diff]);
                let rb = fb.op1(O::Add.t(Ty::Int), &[r, b.one()]);
                base(fb.op1(O::Select.t(Ty::Int), &[fix, rb, r]))
            }
            "lshift" => bin!(O::Lshift),
            "rshift" => bin!(O::Rshift),
            "plusp" | "minusp" | "zerop" => {
                let z = self.const_in(fb, ctx, num(k1, 0));
                let op = match name {
                    "plusp" => O::Gt,
                    "minusp" => O::Lt,
                    _ => O::Eq,
                };
                base(fb.op1(op.t(kw), &[arg.one(), z]))
            }
            "oddp" | "evenp" => {
                let one = self.int_in(fb, ctx, 1);
                let x = fb.op1(O::And.t(Ty::Int), &[arg.one(), one]);
                base(fb.op1(if name == "oddp" { O::Eq } else { O::Ne }.t(Ty::Int), &[x, one]))
            }
            "btoi" => un!(O::BToI),
            "float" => un!(O::IToF),
            "code_char" | "char_code" => Ok(Val::new(arg.s.clone(), rlay)),
            "floor" | "ceil" | "trunc" | "round" => un!(unary_op(name)),
            "sqrt" | "ln" => {
                if self.arg_check {
                    let z = self.const_in(fb, ctx, Const::float(0.0));
                    let ok = fb.op1(O::Ge.t(Ty::Float), &[arg.one(), z]);
                    let msg = if name == "sqrt" { "Sqrt of negative number." } else { "Ln of negative number." };
                    self.check_all(fb, ok, ctx.seg, msg);
                }
                un!(if name == "sqrt" { O::Sqrt } else { O::Log })
            }
            "exp" | "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh" | "cosh" | "tanh" => {
                un!(unary_op(name))
            }
            "log" => {
                let x = fb.op1(O::Log, &[a.one()]);
                let y = fb.op1(O::Log, &[b.one()]);
                base(fb.op1(O::Div.t(Ty::Float), &[x, y]))
            }
            "expt" => {
                let x = fb.op1(O::Log, &[a.one()]);
                let y = fb.op1(O::Mul.t(Ty::Float), &[x, b.one()]);
                base(fb.op1(O::Exp, &[y]))
            }
            "reciprocal" => {
                let one = self.const_in(fb, ctx, Const::float(1.0));
                base(fb.op1(O::Div.t(Ty::Float), &[one, arg.one()]))
            }
            "isqrt" => {
                let f = fb.op1(O::IToF, &[arg.one()]);
                let s = fb.op1(O::Sqrt, &[f]);
                base(fb.op1(O::Floor, &[s]))
            }
            "^" => {
                if self.arg_check {
                    let z = self.int_in(fb, ctx, 0);
                    let ok = fb.op1(O::Ge.t(Ty::Int), &[b.one(), z]);
                    self.check_all(fb, ok, ctx.seg, "The power must be nonnegative for ^ .");
                }
                let one = self.const_in(fb, ctx, num(k1, 1));
                let f = self.pow_fn(k1);
                let s = fb.call(&f, &[one, a.one(), b.one(), ctx.seg], 1)[0];
                base(s)
            }
            "gcd" => {
                let f = self.gcd_fn();
                let z = self.int_in(fb, ctx, 0);
                let abs = |fb: &mut FunBuilder, x: Slot| {
                    let n = fb.op1(O::Sub.t(Ty::Int), &[z, x]);
                    let lt = fb.op1(O::Lt.t(Ty::Int), &[x, z]);
                    fb.op1(O::Select.t(Ty::Int), &[lt, n, x])
                };
                let x = abs(fb, a.one());
                let y = abs(fb, b.one());
                base(fb.call(&f, &[x, y, ctx.seg], 1)[0])
            }
            "rand" => {
                if self.arg_check {
                    let z = self.const_in(fb, ctx, num(k1, 0));
                    let ok = fb.op1(O::Gt.t(kw), &[arg.one(), z]);
                    self.check_all(fb, ok, ctx.seg, "Rand only works with positive numbers.");
                }
                if k1 == SlotKind::Float {
                    let big = self.int_in(fb, ctx, 1 << 30);
                    let r = fb.op1(O::Rand, &[big]);
                    let rf = fb.op1(O::IToF, &[r]);
                    let x = fb.op1(O::Mul.t(Ty::Float), &[arg.one(), rf]);
                    let d = self.const_in(fb, ctx, Const::float((1u64 << 30) as f64));
                    base(fb.op1(O::Div.t(Ty::Float), &[x, d]))
                } else {
                    un!(O::Rand)
                }
            }
            "select" => {
                let (x, y) = b.split();
                self.select_val(fb, ctx, a.one(), &x, &y)
            }
            "identity" => {
                let z = self.zeros(fb, &arg.lay, ctx.seg);
                Ok(z)
            }
            // ----- number conversions of CMU's library, by the argument's type -----
            "one" | "zero" => {
                let k = if name == "one" { 1 } else { 0 };
                base(self.const_in(fb, ctx, num(k1, k)))
            }
            "float_num" => match k1 {
                SlotKind::Float => base(arg.one()),
                _ => un!(O::IToF),
            },
            "int_to_any" | "float_to_any" => {
                // The second argument only says the result type.
                let to = match &rlay {
                    Lay::Base(k) => *k,
                    _ => SlotKind::Int,
                };
                match (name, to) {
                    ("int_to_any", SlotKind::Float) => base(fb.op1(O::IToF, &[a.one()])),
                    ("float_to_any", SlotKind::Int) => base(fb.op1(O::Round, &[a.one()])),
                    _ => base(a.one()),
                }
            }
            "eql" => base(self.eql(fb, ctx, &a, &b)),
            "lowercase" | "uppercase" => {
                let (lo, hi, d) = if name == "lowercase" { (65, 90, 32) } else { (97, 122, -32) };
                let l = self.int_in(fb, ctx, lo);
                let h = self.int_in(fb, ctx, hi);
                let dd = self.int_in(fb, ctx, d);
                let c1 = fb.op1(O::Ge.t(Ty::Int), &[arg.one(), l]);
                let c2 = fb.op1(O::Le.t(Ty::Int), &[arg.one(), h]);
                let c = fb.op1(O::And.t(Ty::Bool), &[c1, c2]);
                let m = fb.op1(O::Add.t(Ty::Int), &[arg.one(), dd]);
                base(fb.op1(O::Select.t(Ty::Int), &[c, m, arg.one()]))
            }
            "digitp" => {
                let l = self.int_in(fb, ctx, 48);
                let h = self.int_in(fb, ctx, 57);
                let c1 = fb.op1(O::Ge.t(Ty::Int), &[arg.one(), l]);
                let c2 = fb.op1(O::Le.t(Ty::Int), &[arg.one(), h]);
                base(fb.op1(O::And.t(Ty::Bool), &[c1, c2]))
            }

            // ----- basic sequence functions -----
            "length" => {
                let (seg, _) = arg.seq();
                base(fb.op1(O::Lengths, &[seg]))
            }
            "elt" => {
                let r = self.elt(fb, ctx, &a, b.one(), "Sequence reference (a[i]) out of bounds.");
                Ok(Val::new(r.s, rlay))
            }
            "dist" => {
                let seg = fb.op1(O::MakeSegdes, &[b.one()]);
                let d = match &a.lay {
                    Lay::Base(k) => Val::base(fb.op1(O::Dist.t(k.ty()), &[a.one(), seg]), *k),
                    _ => {
                        let si = self.seg_index(fb, ctx, seg);
                        self.gather(fb, &a, si)
                    }
                };
                Ok(Val::new(Val::mk_seq(seg, d).s, rlay))
            }
            "index" => {
                let seg = fb.op1(O::MakeSegdes, &[arg.one()]);
                let d = self.local_index(fb, ctx, seg);
                Ok(Val::new(vec![seg, d], rlay))
            }
            "iseq" => {
                let (d, e) = b.split();
                let s = a.one();
                if self.arg_check {
                    let one = self.int_in(fb, ctx, 1);
                    let ok1 = fb.op1(O::Ge.t(Ty::Int), &[d.one(), one]);
                    let ok2 = fb.op1(O::Le.t(Ty::Int), &[s, e.one()]);
                    let ok = fb.op1(O::And.t(Ty::Bool), &[ok1, ok2]);
                    self.check_all(fb, ok, ctx.seg, "In [s:e:l], e must be >= to s, and l must be positive.");
                }
                let x = fb.op1(O::Sub.t(Ty::Int), &[e.one(), s]);
                let y = fb.op1(O::Add.t(Ty::Int), &[x, d.one()]);
                let one = self.int_in(fb, ctx, 1);
                let z = fb.op1(O::Sub.t(Ty::Int), &[y, one]);
                let len = fb.op1(O::Div.t(Ty::Int), &[z, d.one()]);
                let seg = fb.op1(O::MakeSegdes, &[len]);
                let data = fb.op1(O::Index, &[s, d.one(), seg]);
                Ok(Val::new(vec![seg, data], rlay))
            }
            "rep" => {
                let (v, i) = b.split();
                let (seg, data) = a.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                if self.arg_check {
                    let z = self.int_in(fb, ctx, 0);
                    let ok1 = fb.op1(O::Ge.t(Ty::Int), &[i.one(), z]);
                    let ok2 = fb.op1(O::Lt.t(Ty::Int), &[i.one(), lens]);
                    let ok = fb.op1(O::And.t(Ty::Bool), &[ok1, ok2]);
                    self.check_all_data(fb, ok, ctx.seg, "Sequence reference (a[i]) out of bounds.", 1, &[i.one(), lens]);
                }
                let sh = self.shape(fb, ctx, seg, lens);
                let id = fb.op1(O::Dist.t(Ty::Int), &[i.one(), sh.rseg]);
                let hit = fb.op1(O::Eq.t(Ty::Int), &[sh.j, id]);
                let own = fb.op1(O::Add.t(Ty::Int), &[sh.start, sh.j]);
                let m = fb.op1(O::Length.t(Ty::Int), &[own]);
                let si = self.seg_index(fb, ctx, sh.rseg);
                let md = self.dist_scalar(fb, m, si);
                let from_v = fb.op1(O::Add.t(Ty::Int), &[md, si]);
                let g = fb.op1(O::Select.t(Ty::Int), &[hit, from_v, own]);
                let _ = m;
                let cat = self.append(fb, &data, &v);
                let d = self.gather(fb, &cat, g);
                Ok(Val::new(Val::mk_seq(sh.rseg, d).s, rlay))
            }
            "zip" | "zip3" => {
                let parts: Vec<Val> = if name == "zip" {
                    vec![a.clone(), b.clone()]
                } else {
                    let (b1, b2) = b.split();
                    vec![a.clone(), b1, b2]
                };
                let (seg0, _) = parts[0].seq();
                if self.arg_check {
                    let l0 = fb.op1(O::Lengths, &[seg0]);
                    for p in &parts[1..] {
                        let (sg, _) = p.seq();
                        let l = fb.op1(O::Lengths, &[sg]);
                        let ok = fb.op1(O::Eq.t(Ty::Int), &[l0, l]);
                        self.check_all_data(fb, ok, ctx.seg, "Length mismatch in function ZIP.", 2, &[l0, l]);
                    }
                }
                let mut s = vec![seg0];
                for p in &parts {
                    s.extend_from_slice(&p.s[1..]);
                }
                Ok(Val::new(s, rlay))
            }
            "unzip" => {
                let (seg, data) = arg.seq();
                let (x, y) = data.split();
                let r = Val::pair(Val::mk_seq(seg, x), Val::mk_seq(seg, y));
                Ok(Val::new(r.s, rlay))
            }
            "cons" => {
                let s1 = self.singleton(fb, ctx, &a);
                let r = self.seq_append(fb, ctx, &s1, &b);
                Ok(Val::new(r.s, rlay))
            }
            "snoc" => {
                let s1 = self.singleton(fb, ctx, &b);
                let r = self.seq_append(fb, ctx, &a, &s1);
                Ok(Val::new(r.s, rlay))
            }
            "vpair" => {
                let r = self.make_seq(fb, ctx, &[a.clone(), b.clone()], &a.lay);
                Ok(Val::new(r.s, rlay))
            }
            "vsep" => {
                let z = self.int_in(fb, ctx, 0);
                let x = self.elt(fb, ctx, &arg, z, "Sequence reference (a[i]) out of bounds.");
                let o = self.int_in(fb, ctx, 1);
                let y = self.elt(fb, ctx, &arg, o, "Sequence reference (a[i]) out of bounds.");
                Ok(Val::new(Val::pair(x, y).s, rlay))
            }
            "++" => {
                let r = self.seq_append(fb, ctx, &a, &b);
                Ok(Val::new(r.s, rlay))
            }

            // ----- scans and reductions -----
            "plus_scan" | "mult_scan" | "max_scan" | "min_scan" | "or_scan" | "and_scan" | "xor_scan"
            | "enumerate" => {
                let (seg, data) = arg.seq();
                let (op, k, d) = match name {
                    "enumerate" => (O::AddScan, SlotKind::Int, fb.op1(O::BToI, &[data.one()])),
                    _ => {
                        let p = name.trim_end_matches("_scan");
                        let op = match p {
                            "plus" => O::AddScan,
                            "mult" => O::MulScan,
                            "max" => O::MaxScan,
                            "min" => O::MinScan,
                            "or" => O::OrScan,
                            "and" => O::AndScan,
                            _ => O::XorScan,
                        };
                        (op, data.kind(), data.one())
                    }
                };
                let r = fb.op1(op.t(k.ty()), &[d, seg]);
                Ok(Val::new(vec![seg, r], rlay))
            }
            "sum" | "product" | "max_val" | "min_val" | "any" | "all" | "parity" | "count" => {
                let (seg, data) = arg.seq();
                let (op, k, d) = match name {
                    "count" => (O::AddReduce, SlotKind::Int, fb.op1(O::BToI, &[data.one()])),
                    _ => {
                        let op = match name {
                            "sum" => O::AddReduce,
                            "product" => O::MulReduce,
                            "max_val" => O::MaxReduce,
                            "min_val" => O::MinReduce,
                            "any" => O::OrReduce,
                            "all" => O::AndReduce,
                            _ => O::XorReduce,
                        };
                        (op, data.kind(), data.one())
                    }
                };
                base(fb.op1(op.t(k.ty()), &[d, seg]))
            }
            "max_index" | "min_index" => {
                let (seg, data) = arg.seq();
                let k = data.kind();
                let op = if name == "max_index" { O::MaxReduce } else { O::MinReduce };
                let m = fb.op1(op.t(k.ty()), &[data.one(), seg]);
                let md = fb.op1(O::Dist.t(k.ty()), &[m, seg]);
                let eq = fb.op1(O::Eq.t(k.ty()), &[data.one(), md]);
                // The first position holding the extreme: the positions that hold it, packed
                // per segment, reduced by MIN (an empty segment gives MIN's identity).
                let j = self.local_index(fb, ctx, seg);
                let p = fb.op(O::Pack.t(Ty::Int), &[j, eq, seg]);
                base(fb.op1(O::MinReduce.t(Ty::Int), &[p[0], p[1]]))
            }

            // ----- reordering -----
            "->" | "read" => {
                let (sa, da) = a.seq();
                let (si, di) = b.seq();
                let la = fb.op1(O::Lengths, &[sa]);
                let sta = fb.op1(O::AddScan.t(Ty::Int), &[la, ctx.seg]);
                let sd = fb.op1(O::Dist.t(Ty::Int), &[sta, si]);
                self.check_index(fb, ctx, di.one(), la, Some(si), "Index out of bounds for function ->.");
                let idx = fb.op1(O::Add.t(Ty::Int), &[sd, di.one()]);
                let d = self.gather(fb, &da, idx);
                Ok(Val::new(Val::mk_seq(si, d).s, rlay))
            }
            "<-" | "write" => {
                let (siv, iv) = b.seq();
                let (ix, vals) = iv.split();
                self.scatter(fb, ctx, &a, siv, ix.one(), &vals, None, "Index out of bounds for function <-.", &rlay)
            }
            "put" => {
                let (i, d) = b.split();
                let (sv, vals) = a.seq();
                let (_, ix) = i.seq();
                self.scatter(fb, ctx, &d, sv, ix.one(), &vals, None, "Index out of bounds for function <-.", &rlay)
            }
            "cond_put" => {
                let (i, rest) = b.split();
                let (fl, d) = rest.split();
                let (sv, vals) = a.seq();
                let (_, ix) = i.seq();
                let (_, f) = fl.seq();
                self.scatter(fb, ctx, &d, sv, ix.one(), &vals, Some(f.one()), "Index out of bounds for function <-.", &rlay)
            }
            "permute" => {
                let (sv, dv) = a.seq();
                let (si, di) = b.seq();
                let lv = fb.op1(O::Lengths, &[sv]);
                if self.arg_check {
                    let li = fb.op1(O::Lengths, &[si]);
                    let ok = fb.op1(O::Eq.t(Ty::Int), &[lv, li]);
                    self.check_all(fb, ok, ctx.seg, "Bad arguments to function PERMUTE.");
                    let ld = fb.op1(O::Dist.t(Ty::Int), &[lv, si]);
                    let z = self.int_like(fb, 0, di.one());
                    let ok1 = fb.op1(O::Ge.t(Ty::Int), &[di.one(), z]);
                    let ok2 = fb.op1(O::Lt.t(Ty::Int), &[di.one(), ld]);
                    let ok = fb.op1(O::And.t(Ty::Bool), &[ok1, ok2]);
                    let n = fb.op1(O::Length.t(Ty::Bool), &[ok]);
                    let s1 = fb.op1(O::MakeSegdes, &[n]);
                    self.check_all(fb, ok, s1, "Bad arguments to function PERMUTE.");
                }
                let n = fb.op1(O::Length.t(Ty::Int), &[di.one()]);
                let s1 = fb.op1(O::MakeSegdes, &[n]);
                let src = self.iota(fb, s1);
                let p = fb.op1(O::Permute.t(Ty::Int), &[src, di.one(), sv]);
                let d = self.gather(fb, &dv, p);
                Ok(Val::new(Val::mk_seq(sv, d).s, rlay))
            }
            "rotate" => {
                let (seg, data) = a.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let sh = self.shape(fb, ctx, seg, lens);
                let kd = fb.op1(O::Dist.t(Ty::Int), &[b.one(), sh.rseg]);
                let x = fb.op1(O::Sub.t(Ty::Int), &[sh.j, kd]);
                let y = fb.op1(O::Mod, &[x, sh.len]);
                let z = fb.op1(O::Add.t(Ty::Int), &[y, sh.len]);
                let local = fb.op1(O::Mod, &[z, sh.len]);
                let r = self.regather(fb, &sh, &data, local);
                Ok(Val::new(r.s, rlay))
            }
            "reverse" => {
                let (seg, data) = arg.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let sh = self.shape(fb, ctx, seg, lens);
                let one = self.int_like(fb, 1, sh.j);
                let x = fb.op1(O::Sub.t(Ty::Int), &[sh.len, one]);
                let local = fb.op1(O::Sub.t(Ty::Int), &[x, sh.j]);
                let r = self.regather(fb, &sh, &data, local);
                Ok(Val::new(r.s, rlay))
            }
            "join" => {
                let (p1, rest) = b.split();
                let (v2, p2) = rest.split();
                let (s1, d1) = a.seq();
                let (s2, d2) = v2.seq();
                let (_, i1) = p1.seq();
                let (_, i2) = p2.seq();
                let l1 = fb.op1(O::Lengths, &[s1]);
                let l2 = fb.op1(O::Lengths, &[s2]);
                let l = fb.op1(O::Add.t(Ty::Int), &[l1, l2]);
                let rseg = fb.op1(O::MakeSegdes, &[l]);
                let st = fb.op1(O::AddScan.t(Ty::Int), &[l, ctx.seg]);
                let st1 = fb.op1(O::Dist.t(Ty::Int), &[st, s1]);
                let st2 = fb.op1(O::Dist.t(Ty::Int), &[st, s2]);
                let g1 = fb.op1(O::Add.t(Ty::Int), &[st1, i1.one()]);
                let g2 = fb.op1(O::Add.t(Ty::Int), &[st2, i2.one()]);
                let dest = self.append_slots(fb, g1, g2);
                let n = fb.op1(O::Length.t(Ty::Int), &[dest]);
                let sn = fb.op1(O::MakeSegdes, &[n]);
                let src = self.iota(fb, sn);
                let p = fb.op1(O::Permute.t(Ty::Int), &[src, dest, sn]);
                let cat = self.append(fb, &d1, &d2);
                let d = self.gather(fb, &cat, p);
                Ok(Val::new(Val::mk_seq(rseg, d).s, rlay))
            }

            // ----- simple sequence manipulation -----
            "pack" => {
                let (seg, data) = arg.seq();
                let (v, f) = data.split();
                let r = self.seq_pack(fb, &Val::mk_seq(seg, v), f.one());
                Ok(Val::new(r.s, rlay))
            }
            "take" | "drop" => {
                let (seg, _) = a.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let n = b.one();
                let z = self.int_in(fb, ctx, 0);
                if self.arg_check {
                    let neg = fb.op1(O::Sub.t(Ty::Int), &[z, n]);
                    let ok1 = fb.op1(O::Le.t(Ty::Int), &[n, lens]);
                    let ok2 = fb.op1(O::Le.t(Ty::Int), &[neg, lens]);
                    let ok = fb.op1(O::And.t(Ty::Bool), &[ok1, ok2]);
                    let msg = format!("Bounds error for function {}.", name.to_uppercase());
                    self.check_all(fb, ok, ctx.seg, &msg);
                }
                let pos = fb.op1(O::Ge.t(Ty::Int), &[n, z]);
                let neg = fb.op1(O::Sub.t(Ty::Int), &[z, n]);
                let absn = fb.op1(O::Select.t(Ty::Int), &[pos, n, neg]);
                let rest = fb.op1(O::Sub.t(Ty::Int), &[lens, absn]);
                // take n>=0: (0, n); take n<0: (len-|n|, |n|); drop n>=0: (n, len-n); drop n<0: (0, len-|n|)
                let (s, cnt) = if name == "take" {
                    (fb.op1(O::Select.t(Ty::Int), &[pos, z, rest]), absn)
                } else {
                    (fb.op1(O::Select.t(Ty::Int), &[pos, absn, z]), rest)
                };
                let r = self.subseq_raw(fb, ctx, &a, s, cnt);
                Ok(Val::new(r.s, rlay))
            }
            "subseq" => {
                let (s, e) = b.split();
                if self.arg_check {
                    let (seg, _) = a.seq();
                    let lens = fb.op1(O::Lengths, &[seg]);
                    let z = self.int_in(fb, ctx, 0);
                    let ok1 = fb.op1(O::Ge.t(Ty::Int), &[s.one(), z]);
                    let ok2 = fb.op1(O::Le.t(Ty::Int), &[s.one(), e.one()]);
                    let ok3 = fb.op1(O::Le.t(Ty::Int), &[e.one(), lens]);
                    let x = fb.op1(O::And.t(Ty::Bool), &[ok1, ok2]);
                    let ok = fb.op1(O::And.t(Ty::Bool), &[x, ok3]);
                    self.check_all(fb, ok, ctx.seg, "Bounds error for function SUBSEQ.");
                }
                let cnt = fb.op1(O::Sub.t(Ty::Int), &[e.one(), s.one()]);
                let r = self.subseq_raw(fb, ctx, &a, s.one(), cnt);
                Ok(Val::new(r.s, rlay))
            }
            "odd_elts" | "even_elts" => {
                let (seg, data) = arg.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let two = self.int_in(fb, ctx, 2);
                let one = self.int_in(fb, ctx, 1);
                let nl = if name == "even_elts" {
                    let x = fb.op1(O::Add.t(Ty::Int), &[lens, one]);
                    fb.op1(O::Div.t(Ty::Int), &[x, two])
                } else {
                    fb.op1(O::Div.t(Ty::Int), &[lens, two])
                };
                let sh = self.shape(fb, ctx, seg, nl);
                let two_e = self.int_like(fb, 2, sh.j);
                let x = fb.op1(O::Mul.t(Ty::Int), &[sh.j, two_e]);
                let local = if name == "odd_elts" {
                    let one_e = self.int_like(fb, 1, sh.j);
                    fb.op1(O::Add.t(Ty::Int), &[x, one_e])
                } else {
                    x
                };
                let r = self.regather(fb, &sh, &data, local);
                Ok(Val::new(r.s, rlay))
            }
            "interleave" => {
                let (sa, da) = a.seq();
                let (sb, db) = b.seq();
                let la = fb.op1(O::Lengths, &[sa]);
                let lb = fb.op1(O::Lengths, &[sb]);
                if self.arg_check {
                    let d = fb.op1(O::Sub.t(Ty::Int), &[la, lb]);
                    let one = self.int_in(fb, ctx, 1);
                    let mone = self.int_in(fb, ctx, -1);
                    let ok1 = fb.op1(O::Le.t(Ty::Int), &[d, one]);
                    let ok2 = fb.op1(O::Ge.t(Ty::Int), &[d, mone]);
                    let ok = fb.op1(O::And.t(Ty::Bool), &[ok1, ok2]);
                    self.check_all(fb, ok, ctx.seg, "Length mismatch for function INTERLEAVE.");
                }
                let l = fb.op1(O::Add.t(Ty::Int), &[la, lb]);
                let rseg = fb.op1(O::MakeSegdes, &[l]);
                let j = self.local_index(fb, ctx, rseg);
                let sta = fb.op1(O::AddScan.t(Ty::Int), &[la, ctx.seg]);
                let stb = fb.op1(O::AddScan.t(Ty::Int), &[lb, ctx.seg]);
                let ma = fb.op1(O::AddReduce.t(Ty::Int), &[la, ctx.seg]);
                let sta_d = fb.op1(O::Dist.t(Ty::Int), &[sta, rseg]);
                let stb_d = fb.op1(O::Dist.t(Ty::Int), &[stb, rseg]);
                let la_d = fb.op1(O::Dist.t(Ty::Int), &[la, rseg]);
                let lb_d = fb.op1(O::Dist.t(Ty::Int), &[lb, rseg]);
                let ma_d = self.dist_scalar(fb, ma, j);
                let two = self.int_like(fb, 2, j);
                let half = fb.op1(O::Div.t(Ty::Int), &[j, two]);
                let odd = fb.op1(O::Mod, &[j, two]);
                let one = self.int_like(fb, 1, j);
                let is_odd = fb.op1(O::Eq.t(Ty::Int), &[odd, one]);
                let agt = fb.op1(O::Gt.t(Ty::Int), &[la_d, lb_d]);
                let m = fb.op1(O::Select.t(Ty::Int), &[agt, lb_d, la_d]);
                let m2 = fb.op1(O::Mul.t(Ty::Int), &[m, two]);
                let in_pairs = fb.op1(O::Lt.t(Ty::Int), &[j, m2]);
                let tail = fb.op1(O::Sub.t(Ty::Int), &[j, m]);
                // (from b?, local index)
                let from_b_pairs = is_odd;
                let nagt = fb.op1(O::Not.t(Ty::Bool), &[agt]);
                let from_b = fb.op1(O::Select.t(Ty::Bool), &[in_pairs, from_b_pairs, nagt]);
                let local = fb.op1(O::Select.t(Ty::Int), &[in_pairs, half, tail]);
                let ia = fb.op1(O::Add.t(Ty::Int), &[sta_d, local]);
                let ib0 = fb.op1(O::Add.t(Ty::Int), &[stb_d, local]);
                let ib = fb.op1(O::Add.t(Ty::Int), &[ib0, ma_d]);
                let g = fb.op1(O::Select.t(Ty::Int), &[from_b, ib, ia]);
                let cat = self.append(fb, &da, &db);
                let d = self.gather(fb, &cat, g);
                Ok(Val::new(Val::mk_seq(rseg, d).s, rlay))
            }
            "pack_index" => {
                let (seg, f) = arg.seq();
                let j = self.local_index(fb, ctx, seg);
                let p = fb.op(O::Pack.t(Ty::Int), &[j, f.one(), seg]);
                Ok(Val::new(vec![p[1], p[0]], rlay))
            }
            "length_from_flags" => {
                // Runs start at each true flag (and at position 0).
                let (seg, f) = arg.seq();
                let j = self.local_index(fb, ctx, seg);
                let z = self.int_like(fb, 0, j);
                let first = fb.op1(O::Eq.t(Ty::Int), &[j, z]);
                let starts = fb.op1(O::Or.t(Ty::Bool), &[f.one(), first]);
                let p = fb.op(O::Pack.t(Ty::Int), &[j, starts, seg]);
                let (pos, pseg) = (p[0], p[1]);
                // length of run k = next start (or len) - start
                let lens = fb.op1(O::Lengths, &[seg]);
                let lend = fb.op1(O::Dist.t(Ty::Int), &[lens, pseg]);
                let pl = fb.op1(O::Lengths, &[pseg]);
                let nxt = {
                    // next start within the segment: shift left by one, filling with len
                    let pst = fb.op1(O::AddScan.t(Ty::Int), &[pl, ctx.seg]);
                    let pstd = fb.op1(O::Dist.t(Ty::Int), &[pst, pseg]);
                    let k = self.local_index(fb, ctx, pseg);
                    let one = self.int_like(fb, 1, k);
                    let k1 = fb.op1(O::Add.t(Ty::Int), &[k, one]);
                    let pld = fb.op1(O::Dist.t(Ty::Int), &[pl, pseg]);
                    let last = fb.op1(O::Ge.t(Ty::Int), &[k1, pld]);
                    let gi0 = fb.op1(O::Add.t(Ty::Int), &[pstd, k1]);
                    let gi = fb.op1(O::Select.t(Ty::Int), &[last, pstd, gi0]);
                    let g = self.gather(fb, &Val::base(pos, SlotKind::Int), gi);
                    fb.op1(O::Select.t(Ty::Int), &[last, lend, g.one()])
                };
                let r = fb.op1(O::Sub.t(Ty::Int), &[nxt, pos]);
                Ok(Val::new(vec![pseg, r], rlay))
            }
            "unpack" => {
                let (sv, dv) = a.seq();
                let (sf, f) = b.seq();
                let fi = fb.op1(O::BToI, &[f.one()]);
                let rank = fb.op1(O::AddScan.t(Ty::Int), &[fi, sf]);
                let lv = fb.op1(O::Lengths, &[sv]);
                let stv = fb.op1(O::AddScan.t(Ty::Int), &[lv, ctx.seg]);
                let std = fb.op1(O::Dist.t(Ty::Int), &[stv, sf]);
                let src = fb.op1(O::Add.t(Ty::Int), &[std, rank]);
                let m = fb.op1(O::Length.t(Ty::Int), &[src]);
                let _ = m;
                let mv = self.total_len(fb, sv, ctx);
                let mvd = self.dist_scalar(fb, mv, src);
                let g = fb.op1(O::Select.t(Ty::Int), &[f.one(), src, mvd]);
                let one = self.cint(fb, 1);
                let s1 = fb.op1(O::MakeSegdes, &[one]);
                let z = self.zeros(fb, &dv.lay, s1);
                let cat = self.append(fb, &dv, &z);
                let d = self.gather(fb, &cat, g);
                Ok(Val::new(Val::mk_seq(sf, d).s, rlay))
            }
            "flag_merge" => {
                let (v1, v2) = b.split();
                let (sf, f) = a.seq();
                let (s1, d1) = v1.seq();
                let (s2, d2) = v2.seq();
                let fi = fb.op1(O::BToI, &[f.one()]);
                let rt = fb.op1(O::AddScan.t(Ty::Int), &[fi, sf]);
                let j = self.local_index(fb, ctx, sf);
                let rf = fb.op1(O::Sub.t(Ty::Int), &[j, rt]);
                let l1 = fb.op1(O::Lengths, &[s1]);
                let l2 = fb.op1(O::Lengths, &[s2]);
                let st1 = fb.op1(O::AddScan.t(Ty::Int), &[l1, ctx.seg]);
                let st2 = fb.op1(O::AddScan.t(Ty::Int), &[l2, ctx.seg]);
                let st1d = fb.op1(O::Dist.t(Ty::Int), &[st1, sf]);
                let st2d = fb.op1(O::Dist.t(Ty::Int), &[st2, sf]);
                let m1 = self.total_len(fb, s1, ctx);
                let m1d = self.dist_scalar(fb, m1, j);
                let i1 = fb.op1(O::Add.t(Ty::Int), &[st1d, rf]);
                let i20 = fb.op1(O::Add.t(Ty::Int), &[st2d, rt]);
                let i2 = fb.op1(O::Add.t(Ty::Int), &[i20, m1d]);
                let g = fb.op1(O::Select.t(Ty::Int), &[f.one(), i2, i1]);
                let cat = self.append(fb, &d1, &d2);
                let d = self.gather(fb, &cat, g);
                Ok(Val::new(Val::mk_seq(sf, d).s, rlay))
            }
            "next" | "previous" => {
                let (seg, data) = a.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let sh = self.shape(fb, ctx, seg, lens);
                let one = self.int_like(fb, 1, sh.j);
                let (src, out) = if name == "next" {
                    let s = fb.op1(O::Add.t(Ty::Int), &[sh.j, one]);
                    let o = fb.op1(O::Ge.t(Ty::Int), &[s, sh.len]);
                    (s, o)
                } else {
                    let s = fb.op1(O::Sub.t(Ty::Int), &[sh.j, one]);
                    let z = self.int_like(fb, 0, sh.j);
                    let o = fb.op1(O::Lt.t(Ty::Int), &[s, z]);
                    (s, o)
                };
                let own = fb.op1(O::Add.t(Ty::Int), &[sh.start, src]);
                let m = self.total_len(fb, seg, ctx);
                let si = self.seg_index(fb, ctx, sh.rseg);
                let md = self.dist_scalar(fb, m, si);
                let fill = fb.op1(O::Add.t(Ty::Int), &[md, si]);
                let g = fb.op1(O::Select.t(Ty::Int), &[out, fill, own]);
                let cat = self.append(fb, &data, &b);
                let d = self.gather(fb, &cat, g);
                Ok(Val::new(Val::mk_seq(sh.rseg, d).s, rlay))
            }
            "group_by" => {
                let (seg, data) = a.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let n = b.one();
                let one = self.int_in(fb, ctx, 1);
                let x = fb.op1(O::Add.t(Ty::Int), &[lens, n]);
                let y = fb.op1(O::Sub.t(Ty::Int), &[x, one]);
                let groups = fb.op1(O::Div.t(Ty::Int), &[y, n]);
                let gseg = fb.op1(O::MakeSegdes, &[groups]);
                let q = self.local_index(fb, ctx, gseg);
                let nd = fb.op1(O::Dist.t(Ty::Int), &[n, gseg]);
                let ld = fb.op1(O::Dist.t(Ty::Int), &[lens, gseg]);
                let qn = fb.op1(O::Mul.t(Ty::Int), &[q, nd]);
                let left = fb.op1(O::Sub.t(Ty::Int), &[ld, qn]);
                let lt = fb.op1(O::Lt.t(Ty::Int), &[left, nd]);
                let inner = fb.op1(O::Select.t(Ty::Int), &[lt, left, nd]);
                let iseg = fb.op1(O::MakeSegdes, &[inner]);
                Ok(Val::new(Val::mk_seq(gseg, Val::mk_seq(iseg, data)).s, rlay))
            }

            // ----- nesting -----
            "flatten" => {
                let (so, inner) = arg.seq();
                let (si, data) = inner.seq();
                let li = fb.op1(O::Lengths, &[si]);
                let l = fb.op1(O::AddReduce.t(Ty::Int), &[li, so]);
                let seg = fb.op1(O::MakeSegdes, &[l]);
                Ok(Val::new(Val::mk_seq(seg, data).s, rlay))
            }
            "partition" => {
                let (sv, data) = a.seq();
                let (sc, c) = b.seq();
                if self.arg_check {
                    let tot = fb.op1(O::AddReduce.t(Ty::Int), &[c.one(), sc]);
                    let lv = fb.op1(O::Lengths, &[sv]);
                    let ok = fb.op1(O::Eq.t(Ty::Int), &[tot, lv]);
                    self.check_all(fb, ok, ctx.seg, "Length mismatch in function PARTITION.");
                }
                let iseg = fb.op1(O::MakeSegdes, &[c.one()]);
                Ok(Val::new(Val::mk_seq(sc, Val::mk_seq(iseg, data)).s, rlay))
            }
            "split" => {
                let (_, f) = b.seq();
                let nf = fb.op1(O::Not.t(Ty::Bool), &[f.one()]);
                let x = self.seq_pack(fb, &a, nf);
                let y = self.seq_pack(fb, &a, f.one());
                let r = self.make_seq(fb, ctx, &[x, y], &a.lay);
                Ok(Val::new(r.s, rlay))
            }
            "bottop" => {
                let (seg, _) = arg.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let one = self.int_in(fb, ctx, 1);
                let two = self.int_in(fb, ctx, 2);
                let x = fb.op1(O::Add.t(Ty::Int), &[lens, one]);
                let h = fb.op1(O::Div.t(Ty::Int), &[x, two]);
                let rest = fb.op1(O::Sub.t(Ty::Int), &[lens, h]);
                let z = self.int_in(fb, ctx, 0);
                let top = self.subseq_raw(fb, ctx, &arg, z, h);
                let bot = self.subseq_raw(fb, ctx, &arg, h, rest);
                let r = self.make_seq(fb, ctx, &[top, bot], &arg.lay);
                Ok(Val::new(r.s, rlay))
            }
            "head_rest" | "rest_tail" => {
                let (seg, _) = arg.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let one = self.int_in(fb, ctx, 1);
                let rest = fb.op1(O::Sub.t(Ty::Int), &[lens, one]);
                let msg = "Sequence reference (a[i]) out of bounds.";
                let r = if name == "head_rest" {
                    let z = self.int_in(fb, ctx, 0);
                    let h = self.elt(fb, ctx, &arg, z, msg);
                    let t = self.subseq_raw(fb, ctx, &arg, one, rest);
                    Val::pair(h, t)
                } else {
                    let t = self.elt(fb, ctx, &arg, rest, msg);
                    let z = self.int_in(fb, ctx, 0);
                    let h = self.subseq_raw(fb, ctx, &arg, z, rest);
                    Val::pair(h, t)
                };
                Ok(Val::new(r.s, rlay))
            }
            "transpose" => {
                let (so, inner) = arg.seq();
                let (si, data) = inner.seq();
                let r = fb.op1(O::Lengths, &[so]);
                let li = fb.op1(O::Lengths, &[si]);
                let mx = fb.op1(O::MaxReduce.t(Ty::Int), &[li, so]);
                let mn = fb.op1(O::MinReduce.t(Ty::Int), &[li, so]);
                let z = self.int_in(fb, ctx, 0);
                let empty = fb.op1(O::Eq.t(Ty::Int), &[r, z]);
                if self.arg_check {
                    let eq = fb.op1(O::Eq.t(Ty::Int), &[mx, mn]);
                    let ok = fb.op1(O::Or.t(Ty::Bool), &[eq, empty]);
                    self.check_all(fb, ok, ctx.seg, "Lengths of subsequences are not equal in function TRANSPOSE.");
                }
                let c = fb.op1(O::Select.t(Ty::Int), &[empty, z, mx]);
                let oseg = fb.op1(O::MakeSegdes, &[c]);
                let rd = fb.op1(O::Dist.t(Ty::Int), &[r, oseg]);
                let iseg = fb.op1(O::MakeSegdes, &[rd]);
                // element (jcol, irow) of the result comes from start + irow*c + jcol
                let tot = fb.op1(O::Mul.t(Ty::Int), &[r, c]);
                let eseg = fb.op1(O::MakeSegdes, &[tot]);
                let q = self.local_index(fb, ctx, eseg);
                let rq = fb.op1(O::Dist.t(Ty::Int), &[r, eseg]);
                let cq = fb.op1(O::Dist.t(Ty::Int), &[c, eseg]);
                let jcol = fb.op1(O::Div.t(Ty::Int), &[q, rq]);
                let irow = fb.op1(O::Mod, &[q, rq]);
                let st = fb.op1(O::AddScan.t(Ty::Int), &[tot, ctx.seg]);
                let stq = fb.op1(O::Dist.t(Ty::Int), &[st, eseg]);
                let x = fb.op1(O::Mul.t(Ty::Int), &[irow, cq]);
                let y = fb.op1(O::Add.t(Ty::Int), &[x, jcol]);
                let g = fb.op1(O::Add.t(Ty::Int), &[stq, y]);
                let d = self.gather(fb, &data, g);
                Ok(Val::new(Val::mk_seq(oseg, Val::mk_seq(iseg, d)).s, rlay))
            }

            // ----- other sequence functions -----
            "rank" | "rank_down" | "char_rank" => {
                let (seg, data) = arg.seq();
                let op = if name == "rank_down" { O::RankDown } else { O::RankUp };
                let r = fb.op1(op.t(data.kind().ty()), &[data.one(), seg]);
                Ok(Val::new(vec![seg, r], rlay))
            }
            "sort" => {
                let (seg, data) = arg.seq();
                let r = fb.op1(O::RankUp.t(data.kind().ty()), &[data.one(), seg]);
                let n = fb.op1(O::Length.t(Ty::Int), &[r]);
                let s1 = fb.op1(O::MakeSegdes, &[n]);
                let src = self.iota(fb, s1);
                let p = fb.op1(O::Permute.t(Ty::Int), &[src, r, seg]);
                let d = self.gather(fb, &data, p);
                Ok(Val::new(Val::mk_seq(seg, d).s, rlay))
            }
            "find" => {
                let (seg, data) = b.seq();
                let si = self.seg_index(fb, ctx, seg);
                let e = self.gather(fb, &a, si);
                let n = fb.op1(O::Length.t(Ty::Int), &[si]);
                let ectx = Ctx { seg: fb.op1(O::MakeSegdes, &[n]), unit: false };
                let eq = self.eql(fb, ectx, &e, &data);
                let j = self.local_index(fb, ctx, seg);
                // "Not found" marks: the number of elements of all segments, above every
                // local index and no larger than the data (no 64-bit constant: CMU's
                // VCODE interpreter keeps the low 32 bits of a constant).
                let total = fb.op1(O::Length.t(Ty::Int), &[j]);
                let tseg = fb.op1(O::MakeSegdes, &[total]);
                let big = fb.op1(O::Dist.t(Ty::Int), &[total, tseg]);
                let c = fb.op1(O::Select.t(Ty::Int), &[eq, j, big]);
                let m = fb.op1(O::MinReduce.t(Ty::Int), &[c, seg]);
                // Not found: no index below the segment's length (an empty segment
                // reduces to the MIN identity, the largest int).
                let lens = fb.op1(O::Lengths, &[seg]);
                let none = fb.op1(O::Ge.t(Ty::Int), &[m, lens]);
                let mone = self.int_in(fb, ctx, -1);
                base(fb.op1(O::Select.t(Ty::Int), &[none, mone, m]))
            }
            "print_string" | "print_line" | "print_char" => {
                let data = match name {
                    "print_char" => arg.one(),
                    _ => arg.seq().1.one(),
                };
                fb.copy_write(data);
                if name == "print_line" {
                    fb.write_text("\n");
                }
                base(self.const_in(fb, ctx, Const::bool(true)))
            }
            _ => Err(err(span, format!("the builtin function {name} is not supported yet"))),
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

    /// `select(flag, a, b)` on lifted values of any layout.
    fn select_val(&mut self, fb: &mut FunBuilder, ctx: Ctx, f: Slot, a: &Val, b: &Val) -> R<Val> {
        match &a.lay {
            Lay::Unit | Lay::Fun(_) => Ok(a.clone()),
            Lay::Base(k) => Ok(Val::base(fb.op1(O::Select.t(k.ty()), &[f, a.one(), b.one()]), *k)),
            Lay::Pair(..) => {
                let (a1, a2) = a.split();
                let (b1, b2) = b.split();
                let x = self.select_val(fb, ctx, f, &a1, &b1)?;
                let y = self.select_val(fb, ctx, f, &a2, &b2)?;
                Ok(Val::pair(x, y))
            }
            Lay::Seq(_) => {
                let io = self.iota(fb, ctx.seg);
                let n = self.count(fb, ctx.seg);
                let nd = fb.op1(O::Dist.t(Ty::Int), &[n, ctx.seg]);
                let ib = fb.op1(O::Add.t(Ty::Int), &[io, nd]);
                let g = fb.op1(O::Select.t(Ty::Int), &[f, io, ib]);
                let cat = self.append(fb, a, b);
                Ok(self.gather(fb, &cat, g))
            }
        }
    }

    /// Scatter of `vals` (one per element of descriptor `sv`, positions `ix` relative to
    /// each instance's sequence in `d`) into a copy of `d`; the last writer wins. With
    /// `flags`, only flagged values are written.
    #[allow(clippy::too_many_arguments)]
    fn scatter(
        &mut self,
        fb: &mut FunBuilder,
        ctx: Ctx,
        d: &Val,
        sv: Slot,
        ix: Slot,
        vals: &Val,
        flags: Option<Slot>,
        msg: &str,
        rlay: &Lay,
    ) -> R<Val> {
        let (sd, dd) = d.seq();
        let ld = fb.op1(O::Lengths, &[sd]);
        if self.arg_check {
            let ldv = fb.op1(O::Dist.t(Ty::Int), &[ld, sv]);
            let z = self.int_like(fb, 0, ix);
            let ok1 = fb.op1(O::Ge.t(Ty::Int), &[ix, z]);
            let ok2 = fb.op1(O::Lt.t(Ty::Int), &[ix, ldv]);
            let ok = fb.op1(O::And.t(Ty::Bool), &[ok1, ok2]);
            let ok = match flags {
                Some(f) => {
                    let nf = fb.op1(O::Not.t(Ty::Bool), &[f]);
                    fb.op1(O::Or.t(Ty::Bool), &[ok, nf])
                }
                None => ok,
            };
            let n = fb.op1(O::Length.t(Ty::Bool), &[ok]);
            let s1 = fb.op1(O::MakeSegdes, &[n]);
            self.check_all_data(fb, ok, s1, msg, 1, &[ix, ldv]);
        }
        // Source ids (global positions of the values), scattered into a vector of -1.
        let nv = fb.op1(O::Length.t(Ty::Int), &[ix]);
        let snv = fb.op1(O::MakeSegdes, &[nv]);
        let src = self.iota(fb, snv);
        let mone = self.cint(fb, -1);
        let tot = self.total_len(fb, sd, ctx);
        let st = fb.op1(O::MakeSegdes, &[tot]);
        let dflt = fb.op1(O::Dist.t(Ty::Int), &[mone, st]);
        let (src, ix2, sv2) = match flags {
            Some(f) => {
                let p1 = fb.op(O::Pack.t(Ty::Int), &[src, f, sv]);
                let p2 = fb.op(O::Pack.t(Ty::Int), &[ix, f, sv]);
                (p1[0], p2[0], p2[1])
            }
            None => (src, ix, sv),
        };
        let w = fb.op1(O::DPermute.t(Ty::Int), &[src, ix2, dflt, sv2, sd]);
        let z = self.int_like(fb, 0, w);
        let hit = fb.op1(O::Ge.t(Ty::Int), &[w, z]);
        let own = self.iota(fb, st);
        let totd = fb.op1(O::Dist.t(Ty::Int), &[tot, st]);
        let from_v = fb.op1(O::Add.t(Ty::Int), &[w, totd]);
        let g = fb.op1(O::Select.t(Ty::Int), &[hit, from_v, own]);
        let cat = self.append(fb, &dd, vals);
        let r = self.gather(fb, &cat, g);
        Ok(Val::new(Val::mk_seq(sd, r).s, rlay.clone()))
    }

    /// `POW_<k>(r, a, p, ctx)`: `r * a^p` element-wise by repeated squaring, looping
    /// (by recursion) while any exponent is positive.
    fn pow_fn(&mut self, k: SlotKind) -> String {
        let key = format!("POW_{}", k.keyword());
        if self.helpers.contains_key(&key) {
            return key;
        }
        self.helpers.insert(key.clone(), key.clone());
        let kw = k.ty();
        let (mut fb, a) = FunBuilder::new(4);
        let (r, x, p, ctx) = (a[0], a[1], a[2], a[3]);
        let c = Ctx { seg: ctx, unit: false };
        let z = self.int_in(&mut fb, c, 0);
        let pos = fb.op1(O::Gt.t(Ty::Int), &[p, z]);
        let any = fb.op1(O::OrReduce.t(Ty::Bool), &[pos, ctx]);
        let mut m = fb.begin_if(any);
        let one = self.int_in(&mut fb, c, 1);
        let two = self.int_in(&mut fb, c, 2);
        let lo = fb.op1(O::And.t(Ty::Int), &[p, one]);
        let odd = fb.op1(O::Eq.t(Ty::Int), &[lo, one]);
        let rx = fb.op1(O::Mul.t(kw), &[r, x]);
        let r2 = fb.op1(O::Select.t(kw), &[odd, rx, r]);
        let x2 = fb.op1(O::Mul.t(kw), &[x, x]);
        let p2 = fb.op1(O::Div.t(Ty::Int), &[p, two]);
        let res = fb.call(&key, &[r2, x2, p2, ctx], 1)[0];
        fb.else_(&mut m, &[res]);
        let out = fb.end_if(m, &[r]);
        self.funcs.push(fb.finish(&key, &out));
        key
    }

    /// `GCD(a, b, ctx)`: Euclid's algorithm element-wise on non-negative integers.
    fn gcd_fn(&mut self) -> String {
        let key = "GCD_I".to_string();
        if self.helpers.contains_key(&key) {
            return key;
        }
        self.helpers.insert(key.clone(), key.clone());
        let (mut fb, a) = FunBuilder::new(3);
        let (x, y, ctx) = (a[0], a[1], a[2]);
        let c = Ctx { seg: ctx, unit: false };
        let z = self.int_in(&mut fb, c, 0);
        let nz = fb.op1(O::Ne.t(Ty::Int), &[y, z]);
        let any = fb.op1(O::OrReduce.t(Ty::Bool), &[nz, ctx]);
        let mut m = fb.begin_if(any);
        let one = self.int_in(&mut fb, c, 1);
        let ys = fb.op1(O::Select.t(Ty::Int), &[nz, y, one]);
        let r = fb.op1(O::Mod, &[x, ys]);
        let x2 = fb.op1(O::Select.t(Ty::Int), &[nz, y, x]);
        let y2 = fb.op1(O::Select.t(Ty::Int), &[nz, r, y]);
        let res = fb.call(&key, &[x2, y2, ctx], 1)[0];
        fb.else_(&mut m, &[res]);
        let out = fb.end_if(m, &[x]);
        self.funcs.push(fb.finish(&key, &out));
        key
    }
}

/// The comparison instruction of a NESL comparison operator (`<`, `>`, `<=`, `>=`).
fn compare_op(name: &str) -> O {
    match name {
        "<" => O::Lt,
        ">" => O::Gt,
        "<=" => O::Le,
        _ => O::Ge,
    }
}

/// The unary float instruction of a NESL function of the same name (`floor`, `sin`, ...).
fn unary_op(name: &str) -> O {
    match name {
        "floor" => O::Floor,
        "ceil" => O::Ceil,
        "trunc" => O::Trunc,
        "round" => O::Round,
        "exp" => O::Exp,
        "sin" => O::Sin,
        "cos" => O::Cos,
        "tan" => O::Tan,
        "asin" => O::Asin,
        "acos" => O::Acos,
        "atan" => O::Atan,
        "sinh" => O::Sinh,
        "cosh" => O::Cosh,
        _ => O::Tanh,
    }
}
