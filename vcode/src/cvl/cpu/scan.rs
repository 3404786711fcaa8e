//! Segmented scans and reductions, blocked so that their results never depend on the
//! number of threads: a segment of at most [`BLOCK`] elements is folded left to right;
//! a longer one is folded per [`BLOCK`]-element block (eight lanes at a time), the block
//! results combined in order, and scanned in two passes (block totals, then each block
//! from its offset). Segments are spread over the threads in chunks.

use super::data::{unsupported, Data, Elem, Num};
use super::par::{chunks, split_mut, Par, BLOCK};
use super::pool::build;
use super::seg::Seg;
use crate::cvl::{ReduceOp, FLOAT_MAX_IDENTITY, INT_MAX_IDENTITY};
use crate::trap::Trap;
use std::mem::MaybeUninit;

/// Fold of a block in eight interleaved lanes (combined in lane order, then the tail):
/// vectorisable, and fixed for a given block. Without `lanes` (float MAX/MIN, where a
/// NaN starting a lane would hide that lane), left to right.
fn fold_lanes<T: Copy>(v: &[T], lanes: bool, f: &(impl Fn(T, T) -> T + ?Sized)) -> Option<T> {
    const L: usize = 8;
    if !lanes || v.len() < 2 * L {
        return v.iter().copied().reduce(f);
    }
    let mut acc = [v[0]; L];
    acc.copy_from_slice(&v[..L]);
    let body = v.len() / L * L;
    for c in v[L..body].chunks_exact(L) {
        for j in 0..L {
            acc[j] = f(acc[j], c[j]);
        }
    }
    let mut r = acc[0];
    for &x in &acc[1..] {
        r = f(r, x);
    }
    for &x in &v[body..] {
        r = f(r, x);
    }
    Some(r)
}

/// The fold of one segment (`None` when empty).
fn fold_seg<T: Elem>(par: &Par, v: &[T], lanes: bool, f: &(impl Fn(T, T) -> T + Sync)) -> Option<T> {
    if v.len() <= BLOCK {
        return v.iter().copied().reduce(f);
    }
    par.map_blocks(v.len(), |lo, hi| fold_lanes(&v[lo..hi], lanes, f)).into_iter().flatten().reduce(f)
}

/// Exclusive scan of `v` into `out`, starting from `init` (`None`: the segment's start,
/// which gets the identity). The identity is only ever an output, never an operand, so
/// elements beyond its range (ints below the 32-bit `min_int` that is the reference's
/// MAX identity) still combine correctly.
fn scan_piece<T: Copy>(v: &[T], out: &mut [MaybeUninit<T>], init: Option<T>, id: T, f: &impl Fn(T, T) -> T) {
    let (Some((&first, rest)), Some((o0, outs))) = (v.split_first(), out.split_first_mut()) else { return };
    let mut acc = match init {
        None => {
            o0.write(id);
            first
        }
        Some(x) => {
            o0.write(x);
            f(x, first)
        }
    };
    for (o, &x) in outs.iter_mut().zip(rest) {
        o.write(acc);
        acc = f(acc, x);
    }
}

fn scan_seg<T: Elem>(par: &Par, v: &[T], out: &mut [MaybeUninit<T>], id: T, lanes: bool, f: &(impl Fn(T, T) -> T + Sync)) {
    if v.len() <= BLOCK {
        return scan_piece(v, out, None, id, f);
    }
    let totals = par.map_blocks(v.len(), |lo, hi| fold_lanes(&v[lo..hi], lanes, f));
    let mut offs = Vec::with_capacity(totals.len());
    let mut acc: Option<T> = None;
    for t in totals {
        offs.push(acc);
        acc = match (acc, t) {
            (Some(a), Some(t)) => Some(f(a, t)),
            (a, t) => a.or(t),
        };
    }
    par.blocks_mut(out, |lo, blk| scan_piece(&v[lo..lo + blk.len()], blk, offs[lo / BLOCK], id, f));
}

/// Exclusive segmented scan.
pub(super) fn scan_t<T: Elem>(par: &Par, v: &[T], s: &Seg, id: T, lanes: bool, f: impl Fn(T, T) -> T + Sync + Send) -> Result<Vec<T>, Trap> {
    build(v.len(), |out| {
        let cs = chunks(par, s, false);
        let parts = split_mut(out, cs.iter().map(|c| c.e1 - c.e0));
        par.each(v.len() + s.m(), cs.into_iter().zip(parts).collect(), |(c, part)| {
            for k in c.s0..c.s1 {
                let (st, len) = (s.start(k), s.len(k));
                scan_seg(par, &v[st..st + len], &mut part[st - c.e0..st - c.e0 + len], id, lanes, &f);
            }
        });
        Ok(())
    })
}

/// Segmented reduction: one value per segment, the identity for an empty one.
pub(super) fn reduce_t<T: Elem>(par: &Par, v: &[T], s: &Seg, id: T, lanes: bool, f: impl Fn(T, T) -> T + Sync + Send) -> Result<Vec<T>, Trap> {
    build(s.m(), |out| {
        let cs = chunks(par, s, false);
        let parts = split_mut(out, cs.iter().map(|c| c.s1 - c.s0));
        par.each(v.len() + s.m(), cs.into_iter().zip(parts).collect(), |(c, part)| {
            for (o, k) in part.iter_mut().zip(c.s0..c.s1) {
                let (st, len) = (s.start(k), s.len(k));
                o.write(fold_seg(par, &v[st..st + len], lanes, &f).unwrap_or(id));
            }
        });
        Ok(())
    })
}

/// Runs `$f(par, slice, seg, identity, operator)` for the monoid of `$op` on `$d`'s type.
macro_rules! monoid {
    ($par:expr, $op:expr, $d:expr, $s:expr, $f:ident) => {
        match ($op, $d) {
            (ReduceOp::Add, Data::Int(v)) => Data::Int($f($par, v, $s, 0, true, i64::wrapping_add)?),
            (ReduceOp::Mul, Data::Int(v)) => Data::Int($f($par, v, $s, 1, true, i64::wrapping_mul)?),
            (ReduceOp::Max, Data::Int(v)) => Data::Int($f($par, v, $s, INT_MAX_IDENTITY, true, <i64 as Num>::max)?),
            (ReduceOp::Min, Data::Int(v)) => Data::Int($f($par, v, $s, -INT_MAX_IDENTITY - 1, true, <i64 as Num>::min)?),
            (ReduceOp::And, Data::Int(v)) => Data::Int($f($par, v, $s, -1, true, |a, b| a & b)?),
            (ReduceOp::Or, Data::Int(v)) => Data::Int($f($par, v, $s, 0, true, |a, b| a | b)?),
            (ReduceOp::Xor, Data::Int(v)) => Data::Int($f($par, v, $s, 0, true, |a, b| a ^ b)?),
            (ReduceOp::Add, Data::Float(v)) => Data::Float($f($par, v, $s, 0.0, true, |a, b| a + b)?),
            (ReduceOp::Mul, Data::Float(v)) => Data::Float($f($par, v, $s, 1.0, true, |a, b| a * b)?),
            (ReduceOp::Max, Data::Float(v)) => Data::Float($f($par, v, $s, FLOAT_MAX_IDENTITY, false, <f64 as Num>::max)?),
            (ReduceOp::Min, Data::Float(v)) => Data::Float($f($par, v, $s, -FLOAT_MAX_IDENTITY, false, <f64 as Num>::min)?),
            (ReduceOp::And, Data::Bool(v)) => Data::Bool($f($par, v, $s, true, true, |a, b| a & b)?),
            (ReduceOp::Or, Data::Bool(v)) => Data::Bool($f($par, v, $s, false, true, |a, b| a | b)?),
            (ReduceOp::Xor, Data::Bool(v)) => Data::Bool($f($par, v, $s, false, true, |a, b| a ^ b)?),
            (op, d) => return Err(unsupported(&format!("{op:?} scan/reduce"), d.vtype())),
        }
    };
}

/// `SCAN` of `v` over `s`.
pub(super) fn scan(par: &Par, op: ReduceOp, v: &Data, s: &Seg) -> Result<Data, Trap> {
    Ok(monoid!(par, op, v, s, scan_t))
}

/// `REDUCE` of `v` over `s`.
pub(super) fn reduce(par: &Par, op: ReduceOp, v: &Data, s: &Seg) -> Result<Data, Trap> {
    Ok(monoid!(par, op, v, s, reduce_t))
}
