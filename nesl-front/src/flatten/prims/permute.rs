//! Reordering primitives: gathers, scatters, permutations, rotation, reversal and joins.

use vcode::{Opcode as O, Ty};
use super::super::builder::{FunBuilder, Slot};
use super::super::gen::{Compiler, Ctx, Val, R};
use super::super::layout::Lay;
use super::unsupported;
use crate::ast::Span;
use crate::ty::Type;

impl Compiler<'_> {
    /// The reordering primitives.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn permute_prim(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, arg: Val, _aty: &Type, rty: &Type, span: Span) -> R<Val> {
        let rlay = self.lay(rty, span)?;
        let (a, b) = arg.split();
        match name {
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
                    self.check_all(fb, ok, ctx, "Bad arguments to function PERMUTE.", 2, &[lv, li]);
                    let ld = fb.op1(O::Dist.t(Ty::Int), &[lv, si]);
                    let z = self.int_like(fb, 0, di.one());
                    let ok1 = fb.op1(O::Ge.t(Ty::Int), &[di.one(), z]);
                    let ok2 = fb.op1(O::Lt.t(Ty::Int), &[di.one(), ld]);
                    let ok = fb.op1(O::And.t(Ty::Bool), &[ok1, ok2]);
                    let n = fb.op1(O::Length.t(Ty::Bool), &[ok]);
                    let s1 = fb.op1(O::MakeSegdes, &[n]);
                    self.check_all_data(fb, ok, s1, "Bad arguments to function PERMUTE.", 1, &[di.one(), ld]);
                }
                // Base vectors scatter straight to their places; sequences are gathered
                // by the inverse permutation (the source of each place).
                let d = match self.permute_flat(fb, &dv, di.one(), sv) {
                    Some(d) => d,
                    None => {
                        let n = fb.op1(O::Length.t(Ty::Int), &[di.one()]);
                        let s1 = fb.op1(O::MakeSegdes, &[n]);
                        let src = self.iota(fb, s1);
                        let p = fb.op1(O::Permute.t(Ty::Int), &[src, di.one(), sv]);
                        self.gather(fb, &dv, p)
                    }
                };
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
                let cat = self.append(fb, &d1, &d2);
                let d = match self.permute_flat(fb, &cat, dest, sn) {
                    Some(d) => d,
                    None => {
                        let src = self.iota(fb, sn);
                        let p = fb.op1(O::Permute.t(Ty::Int), &[src, dest, sn]);
                        self.gather(fb, &cat, p)
                    }
                };
                Ok(Val::new(Val::mk_seq(rseg, d).s, rlay))
            }

            _ => Err(unsupported(span, name)),
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

}
