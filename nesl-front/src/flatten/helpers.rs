//! Type-directed building blocks, generated per layout: gather (`v[idx]` for an index
//! vector, any element type, nested too), append, empty values and zero values.
//!
//! Gather and append of non-base layouts become VCODE helper functions (`GATHER_<lay>`,
//! `APPEND_<lay>`), generated once per layout; base layouts are inlined. Most sequence
//! primitives are index computations followed by one gather.

use vcode::{Const, Opcode as O, Ty};
use super::builder::{FunBuilder, Slot};
use super::gen::{Compiler, Val};
use super::layout::{Lay, SlotKind};

/// The zero of a base kind as a VCODE constant operand.
pub(crate) fn zero(k: SlotKind) -> Const {
    match k {
        SlotKind::Float => Const::float(0.0),
        SlotKind::Bool => Const::bool(false),
        _ => Const::int(0),
    }
}

/// One part of [`Compiler::scatter_into`]: a lifted value over `n` (INT scalar)
/// instances and the destination instance of each (INT vector of length `n`).
pub(crate) struct Part {
    pub v: Val,
    pub dest: Slot,
    pub n: Slot,
}

impl Compiler<'_> {
    /// `v[idx]`: the instances of `v` (a lifted value over `M` instances) selected by the
    /// INT vector `idx` (values in `0..M`), as a lifted value over `#idx` instances.
    pub(crate) fn gather(&mut self, fb: &mut FunBuilder, v: &Val, idx: Slot) -> Val {
        match &v.lay {
            Lay::Unit | Lay::Fun(_) => v.clone(),
            Lay::Base(k) => {
                let kw = k.ty();
                let m = fb.op1(O::Length.t(kw), &[v.one()]);
                let sm = fb.op1(O::MakeSegdes, &[m]);
                let kk = fb.op1(O::Length.t(Ty::Int), &[idx]);
                let sk = fb.op1(O::MakeSegdes, &[kk]);
                Val::base(fb.op1(O::BPermute.t(kw), &[v.one(), idx, sm, sk]), *k)
            }
            lay => {
                let name = self.gather_fn(lay);
                let mut args = v.s.clone();
                args.push(idx);
                let s = fb.call(&name, &args, lay.size());
                Val::new(s, lay.clone())
            }
        }
    }

    /// The instances of `v` (a lifted value over the elements of descriptor `seg`) moved
    /// to positions `ix` within their segments (`ix` holds a permutation of each segment's
    /// positions): one `PERMUTE` per base vector. `None` where `v` holds a sequence, whose
    /// elements move as blocks (gather them by the inverse permutation instead).
    pub(crate) fn permute_flat(&mut self, fb: &mut FunBuilder, v: &Val, ix: Slot, seg: Slot) -> Option<Val> {
        if v.lay.holds_seq() {
            return None;
        }
        Some(match &v.lay {
            Lay::Base(k) => Val::base(fb.op1(O::Permute.t(k.ty()), &[v.one(), ix, seg]), *k),
            Lay::Pair(..) => {
                let (a, b) = v.split();
                let x = self.permute_flat(fb, &a, ix, seg)?;
                let y = self.permute_flat(fb, &b, ix, seg)?;
                Val::pair(x, y)
            }
            Lay::Seq(_) | Lay::Unit | Lay::Fun(_) => v.clone(),
        })
    }

    fn gather_fn(&mut self, lay: &Lay) -> String {
        let key = format!("GATHER_{}", lay.mangle());
        if let Some(n) = self.helpers.get(&key) {
            return n.clone();
        }
        self.helpers.insert(key.clone(), key.clone());
        let n = lay.size();
        let (mut fb, args) = FunBuilder::new(n + 1);
        let v = Val::new(args[..n].to_vec(), lay.clone());
        let idx = args[n];
        let r = self.gather_body(&mut fb, &v, idx);
        self.funcs.push(fb.finish(&key, &r.s));
        key
    }

    fn gather_body(&mut self, fb: &mut FunBuilder, v: &Val, idx: Slot) -> Val {
        match &v.lay {
            Lay::Pair(..) => {
                let (a, b) = v.split();
                let x = self.gather(fb, &a, idx);
                let y = self.gather(fb, &b, idx);
                Val::pair(x, y)
            }
            Lay::Seq(_) => {
                let (seg, data) = v.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let m = fb.op1(O::Length.t(Ty::Int), &[lens]);
                let sm = fb.op1(O::MakeSegdes, &[m]);
                let kk = fb.op1(O::Length.t(Ty::Int), &[idx]);
                let sk = fb.op1(O::MakeSegdes, &[kk]);
                let starts = fb.op1(O::AddScan.t(Ty::Int), &[lens, sm]);
                let nl = fb.op1(O::BPermute.t(Ty::Int), &[lens, idx, sm, sk]);
                let ns = fb.op1(O::BPermute.t(Ty::Int), &[starts, idx, sm, sk]);
                let nseg = fb.op1(O::MakeSegdes, &[nl]);
                let one = self.cint(fb, 1);
                let ones = fb.op1(O::Dist.t(Ty::Int), &[one, sk]);
                let eidx = fb.op1(O::Index, &[ns, ones, nseg]);
                let d = self.gather(fb, &data, eidx);
                Val::mk_seq(nseg, d)
            }
            _ => self.gather(fb, v, idx),
        }
    }

    /// Concatenation of the instances of two lifted values of one layout.
    pub(crate) fn append(&mut self, fb: &mut FunBuilder, a: &Val, b: &Val) -> Val {
        match &a.lay {
            Lay::Unit | Lay::Fun(_) => a.clone(),
            Lay::Base(k) => {
                let k = *k;
                let s = self.append_base(fb, a.one(), b.one(), k);
                Val::base(s, k)
            }
            lay => {
                let name = self.append_fn(lay);
                let mut args = a.s.clone();
                args.extend_from_slice(&b.s);
                let s = fb.call(&name, &args, lay.size());
                Val::new(s, lay.clone())
            }
        }
    }

    fn append_base(&mut self, fb: &mut FunBuilder, a: Slot, b: Slot, k: SlotKind) -> Slot {
        let kw = k.ty();
        let m1 = fb.op1(O::Length.t(kw), &[a]);
        let m2 = fb.op1(O::Length.t(kw), &[b]);
        let n = fb.op1(O::Add.t(Ty::Int), &[m1, m2]);
        let sn = fb.op1(O::MakeSegdes, &[n]);
        let s1 = fb.op1(O::MakeSegdes, &[m1]);
        let s2 = fb.op1(O::MakeSegdes, &[m2]);
        let z = fb.konst(zero(k));
        let d = fb.op1(O::Dist.t(kw), &[z, sn]);
        let i1 = self.iota(fb, s1);
        let r = fb.op1(O::DPermute.t(kw), &[a, i1, d, s1, sn]);
        let one = self.cint(fb, 1);
        let i2 = fb.op1(O::Index, &[m1, one, s2]);
        fb.op1(O::DPermute.t(kw), &[b, i2, r, s2, sn])
    }

    fn append_fn(&mut self, lay: &Lay) -> String {
        let key = format!("APPEND_{}", lay.mangle());
        if let Some(n) = self.helpers.get(&key) {
            return n.clone();
        }
        self.helpers.insert(key.clone(), key.clone());
        let n = lay.size();
        let (mut fb, args) = FunBuilder::new(2 * n);
        let a = Val::new(args[..n].to_vec(), lay.clone());
        let b = Val::new(args[n..].to_vec(), lay.clone());
        let r = match lay {
            Lay::Pair(..) => {
                let (a1, a2) = a.split();
                let (b1, b2) = b.split();
                let x = self.append(&mut fb, &a1, &b1);
                let y = self.append(&mut fb, &a2, &b2);
                Val::pair(x, y)
            }
            Lay::Seq(_) => {
                let (sa, da) = a.seq();
                let (sb, db) = b.seq();
                let la = fb.op1(O::Lengths, &[sa]);
                let lb = fb.op1(O::Lengths, &[sb]);
                let l = self.append_base(&mut fb, la, lb, SlotKind::Int);
                let seg = fb.op1(O::MakeSegdes, &[l]);
                let d = self.append(&mut fb, &da, &db);
                Val::mk_seq(seg, d)
            }
            _ => self.append(&mut fb, &a, &b),
        };
        self.funcs.push(fb.finish(&key, &r.s));
        key
    }

    /// A lifted value over `total` (INT scalar) instances assembled from `parts`: instance
    /// `j` of part `p` becomes instance `p.dest[j]`. The destinations of all parts
    /// together must be `0 .. total`, each exactly once.
    ///
    /// Every element moves once, straight to its place (one `DPERMUTE` per part and base
    /// vector, into one fresh vector): no concatenation of the parts first and no gather
    /// after. Nested sequences place their lengths first, then their elements at the
    /// offsets the placed lengths give.
    pub(crate) fn scatter_into(&mut self, fb: &mut FunBuilder, lay: &Lay, parts: &[Part], total: Slot) -> Val {
        match lay {
            Lay::Unit | Lay::Fun(_) => Val::new(Vec::new(), lay.clone()),
            Lay::Base(k) => {
                let kw = k.ty();
                let ts = fb.op1(O::MakeSegdes, &[total]);
                let z = fb.konst(zero(*k));
                let mut r = fb.op1(O::Dist.t(kw), &[z, ts]);
                for p in parts {
                    let sp = fb.op1(O::MakeSegdes, &[p.n]);
                    r = fb.op1(O::DPermute.t(kw), &[p.v.one(), p.dest, r, sp, ts]);
                }
                Val::base(r, *k)
            }
            Lay::Pair(a, b) => {
                let (pa, pb): (Vec<Part>, Vec<Part>) = parts
                    .iter()
                    .map(|p| {
                        let (x, y) = p.v.split();
                        (Part { v: x, dest: p.dest, n: p.n }, Part { v: y, dest: p.dest, n: p.n })
                    })
                    .unzip();
                let x = self.scatter_into(fb, a, &pa, total);
                let y = self.scatter_into(fb, b, &pb, total);
                Val::pair(x, y)
            }
            Lay::Seq(e) => {
                let lens: Vec<Part> = parts
                    .iter()
                    .map(|p| {
                        let (s, _) = p.v.seq();
                        let l = fb.op1(O::Lengths, &[s]);
                        Part { v: Val::base(l, SlotKind::Int), dest: p.dest, n: p.n }
                    })
                    .collect();
                let rl = self.scatter_into(fb, &Lay::Base(SlotKind::Int), &lens, total).one();
                let rseg = fb.op1(O::MakeSegdes, &[rl]);
                let ts = fb.op1(O::MakeSegdes, &[total]);
                let off = fb.op1(O::AddScan.t(Ty::Int), &[rl, ts]);
                let itotal = fb.op1(O::AddReduce.t(Ty::Int), &[rl, ts]);
                let mut inner = Vec::new();
                for (p, l) in parts.iter().zip(&lens) {
                    let (s, d) = p.v.seq();
                    let sp = fb.op1(O::MakeSegdes, &[p.n]);
                    let st = fb.op1(O::BPermute.t(Ty::Int), &[off, p.dest, ts, sp]);
                    let one = self.cint(fb, 1);
                    let ones = fb.op1(O::Dist.t(Ty::Int), &[one, sp]);
                    let dest = fb.op1(O::Index, &[st, ones, s]);
                    let n = fb.op1(O::AddReduce.t(Ty::Int), &[l.v.one(), sp]);
                    inner.push(Part { v: d, dest, n });
                }
                let d = self.scatter_into(fb, e, &inner, itotal);
                Val::mk_seq(rseg, d)
            }
        }
    }

    /// `v` (one instance per flag) packed by `flags` within the segments of `seg`, one
    /// `PACK` per slot, when `v` is made of at most `max` base vectors (and is not lazy);
    /// the packed value and the packed descriptor (`None` for a value without slots).
    pub(crate) fn pack_direct(&mut self, fb: &mut FunBuilder, v: &Val, flags: Slot, seg: Slot, max: usize) -> Option<(Val, Option<Slot>)> {
        fn bases(l: &Lay) -> Option<usize> {
            match l {
                Lay::Base(_) => Some(1),
                Lay::Unit | Lay::Fun(_) => Some(0),
                Lay::Pair(a, b) => Some(bases(a)? + bases(b)?),
                Lay::Seq(_) => None,
            }
        }
        if v.lazy.is_some() || bases(&v.lay)? > max {
            return None;
        }
        let mut kinds = Vec::new();
        v.lay.slots(&mut kinds);
        let mut out = Vec::new();
        let mut rseg = None;
        for (&s, k) in v.s.iter().zip(kinds) {
            let p = fb.op(O::Pack.t(k.ty()), &[s, flags, seg]);
            out.push(p[0]);
            rseg = Some(p[1]);
        }
        Some((Val::new(out, v.lay.clone()), rseg))
    }

    /// A lifted value over zero instances.
    pub(crate) fn empty(&mut self, fb: &mut FunBuilder, lay: &Lay) -> Val {
        match lay {
            Lay::Unit | Lay::Fun(_) => Val::new(Vec::new(), lay.clone()),
            Lay::Base(k) => Val::base(fb.konst(Const::empty(k.ty())), *k),
            Lay::Pair(a, b) => {
                let x = self.empty(fb, a);
                let y = self.empty(fb, b);
                Val::pair(x, y)
            }
            Lay::Seq(e) => {
                let l = fb.konst(Const::empty(Ty::Int));
                let seg = fb.op1(O::MakeSegdes, &[l]);
                let d = self.empty(fb, e);
                Val::mk_seq(seg, d)
            }
        }
    }

    /// The "zero" of a layout (NESL `identity`): 0, 0.0, `f`, empty sequences, over
    /// the instances of descriptor `seg` (one segment).
    pub(crate) fn zeros(&mut self, fb: &mut FunBuilder, lay: &Lay, seg: Slot) -> Val {
        match lay {
            Lay::Unit | Lay::Fun(_) => Val::new(Vec::new(), lay.clone()),
            Lay::Base(k) => {
                let z = fb.konst(zero(*k));
                Val::base(fb.op1(O::Dist.t(k.ty()), &[z, seg]), *k)
            }
            Lay::Pair(a, b) => {
                let x = self.zeros(fb, a, seg);
                let y = self.zeros(fb, b, seg);
                Val::pair(x, y)
            }
            Lay::Seq(e) => {
                let z = self.cint(fb, 0);
                let l = fb.op1(O::Dist.t(Ty::Int), &[z, seg]);
                let s = fb.op1(O::MakeSegdes, &[l]);
                let d = self.empty(fb, e);
                Val::mk_seq(s, d)
            }
        }
    }
}
