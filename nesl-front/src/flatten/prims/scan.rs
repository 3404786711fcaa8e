//! Scans and reductions: the segmented scan and reduce instructions.

use vcode::{Opcode as O, Ty};
use super::super::builder::{FunBuilder, Slot};
use super::super::gen::{Compiler, Ctx, Val, R};
use super::super::layout::SlotKind;
use super::unsupported;
use crate::ast::Span;
use crate::ty::Type;

impl Compiler<'_> {
    /// The scans and reductions.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn scan_prim(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, arg: Val, _aty: &Type, rty: &Type, span: Span) -> R<Val> {
        let rlay = self.lay(rty, span)?;
        let base = |s: Slot| -> R<Val> { Ok(Val::new(vec![s], rlay.clone())) };
        match name {
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

            _ => Err(unsupported(span, name)),
        }
    }
}
