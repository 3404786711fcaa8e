//! Sequence primitives: construction, access, subsequences, nesting, ranks and search.
//! Each is an index computation followed by a type-directed gather.

use vcode::{Opcode as O, Ty};
use super::super::builder::{FunBuilder, Slot};
use super::super::gen::{Compiler, Ctx, Val, R};
use super::super::layout::{Lay, SlotKind};
use super::unsupported;
use crate::ast::Span;
use crate::ty::Type;

impl Compiler<'_> {
    /// The sequence primitives.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn sequence_prim(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, arg: Val, _aty: &Type, rty: &Type, span: Span) -> R<Val> {
        let rlay = self.lay(rty, span)?;
        let (a, b) = arg.split();
        let base = |s: Slot| -> R<Val> { Ok(Val::new(vec![s], rlay.clone())) };
        match name {
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
                    self.check_all(fb, ok, ctx, "In [s:e:l], e must be >= to s, and l must be positive.", 6, &[s, e.one(), d.one()]);
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
                    self.check_all(fb, ok, ctx, "Sequence reference (a[i]) out of bounds.", 1, &[i.one(), lens]);
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
                        self.check_all(fb, ok, ctx, "Length mismatch in function ZIP.", 2, &[l0, l]);
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
                    self.check_all(fb, ok, ctx, &msg, 5, &[n, lens]);
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
                    self.check_all(fb, ok, ctx, "Bounds error for function SUBSEQ.", 4, &[s.one(), e.one(), lens]);
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
                    self.check_all(fb, ok, ctx, "Length mismatch for function INTERLEAVE.", 2, &[la, lb]);
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
                    self.check_all(fb, ok, ctx, "Length mismatch in function PARTITION.", 2, &[lv, tot]);
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
                    self.check_all(fb, ok, ctx, "Lengths of subsequences are not equal in function TRANSPOSE.", 2, &[mx, mn]);
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
            _ => Err(unsupported(span, name)),
        }
    }
}
