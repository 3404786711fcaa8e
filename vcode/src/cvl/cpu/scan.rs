//! Segmented scans and reductions, blocked so that their results never depend on the
//! number of threads: a segment of at most [`BLOCK`] elements is folded left to right;
//! a longer one is folded per [`BLOCK`]-element block (eight lanes at a time), the block
//! results combined in order, and scanned in two passes (block totals, then each block
//! from its offset). Segments are spread over the threads in chunks.

use super::data::{unsupported, Data, Elem};
use super::par::{chunks, split_mut, Par, BLOCK};
use super::mem::build;
use super::seg::Seg;
use crate::cvl::ReduceOp;
use crate::trap::Trap;
use std::mem::MaybeUninit;

/// Fold of a block of a long segment (`first`: the segment's first block) in eight
/// interleaved lanes (combined in lane order, then the tail): vectorisable, and fixed for
/// a given block. Without `lanes`, float MAX/MIN ([`fold_extreme`]).
pub(super) fn fold_lanes<T: Copy + PartialEq>(v: &[T], first: bool, lanes: bool, f: &(impl Fn(T, T) -> T + ?Sized)) -> Option<T> {
    const L: usize = 8;
    if !lanes {
        return fold_extreme(v, first, f);
    }
    if v.len() < 2 * L {
        return v.iter().copied().reduce(f);
    }
    let mut acc = [v[0]; L];
    acc.copy_from_slice(&v[..L]);
    Some(lane_fold(acc, &v[L..], f))
}

/// Folds `v` into the eight lanes `acc` (element `j` of every group of eight into lane
/// `j`), then the lanes in order, then the elements past the last whole group.
#[inline(always)]
fn lane_fold<T: Copy>(mut acc: [T; 8], v: &[T], f: &(impl Fn(T, T) -> T + ?Sized)) -> T {
    let body = v.len() / 8 * 8;
    for c in v[..body].chunks_exact(8) {
        for j in 0..8 {
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
    r
}

/// Float MAX/MIN of `v`, a block of a segment (`first`: the segment's first), exactly as
/// one fold from the segment's start gives it. Their operator `f` keeps its left operand
/// unless the right one is strictly beyond it, so that fold holds a NaN first element
/// (every comparison with it fails) and otherwise passes over NaNs, ending on the first
/// element equal to the extreme of the others. A later block therefore passes over its
/// leading NaNs (`None` when it has nothing else): the blocks combined in order give the
/// same, wherever a NaN falls. The extreme is found in eight lanes (vectorisable: the
/// serial fold waits on each comparison), then the first element equal to it is the
/// result (of equal values only `0.0` and `-0.0` differ, and the fold keeps the first).
fn fold_extreme<T: Copy + PartialEq>(v: &[T], first: bool, f: &(impl Fn(T, T) -> T + ?Sized)) -> Option<T> {
    const L: usize = 8;
    // `x != x` only for a NaN.
    #[allow(clippy::eq_op)]
    let is_nan = |x: T| x != x;
    if first && v.first().is_some_and(|&x| is_nan(x)) {
        return Some(v[0]);
    }
    let v = &v[v.iter().take_while(|&&x| is_nan(x)).count()..];
    if v.len() < 4 * L {
        return v.iter().copied().reduce(f);
    }
    // Every lane starts from the first element (not a NaN), one of the candidates.
    let m = lane_fold([v[0]; L], v, f);
    v.iter().copied().find(|&x| x == m)
}

/// The fold of one segment (`None` when empty).
fn fold_seg<T: Elem>(par: &Par, v: &[T], lanes: bool, f: &(impl Fn(T, T) -> T + Sync)) -> Option<T> {
    if v.len() <= BLOCK {
        return if lanes { v.iter().copied().reduce(f) } else { fold_extreme(v, true, f) };
    }
    par.map_blocks(v.len(), |lo, hi| fold_lanes(&v[lo..hi], lo == 0, lanes, f)).into_iter().flatten().reduce(f)
}

/// The least and the greatest element of `v` (`None` when it is empty), in one pass:
/// [`BLOCK`]-element blocks in parallel, each in eight lanes of both (vectorisable).
pub(super) fn min_max(par: &Par, v: &[i64]) -> Option<(i64, i64)> {
    fn block(v: &[i64]) -> Option<(i64, i64)> {
        let first = *v.first()?;
        let (mut lo, mut hi) = ([first; 8], [first; 8]);
        let body = v.len() / 8 * 8;
        for c in v[..body].chunks_exact(8) {
            for j in 0..8 {
                lo[j] = lo[j].min(c[j]);
                hi[j] = hi[j].max(c[j]);
            }
        }
        let tail = &v[body..];
        Some((lo.iter().chain(tail).copied().fold(first, i64::min), hi.iter().chain(tail).copied().fold(first, i64::max)))
    }
    par.map_blocks(v.len(), |lo, hi| block(&v[lo..hi])).into_iter().flatten().reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
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

/// [`scan_piece`] in place: `v` holds the values and receives their exclusive scan.
pub(super) fn scan_in_place<T: Copy>(v: &mut [T], init: Option<T>, id: T, f: &impl Fn(T, T) -> T) {
    let Some((first, rest)) = v.split_first_mut() else { return };
    let mut acc = match init {
        None => std::mem::replace(first, id),
        Some(x) => f(x, std::mem::replace(first, x)),
    };
    for o in rest {
        let x = std::mem::replace(o, acc);
        acc = f(acc, x);
    }
}

/// Combines the block totals of one segment in order: each block's starting value (the
/// total of the blocks before it, `None` for the first) and the segment's total.
pub(super) fn block_offsets<T: Copy>(totals: impl IntoIterator<Item = Option<T>>, f: &impl Fn(T, T) -> T) -> (Vec<Option<T>>, Option<T>) {
    let mut offs = Vec::new();
    let mut acc: Option<T> = None;
    for t in totals {
        offs.push(acc);
        acc = match (acc, t) {
            (Some(a), Some(t)) => Some(f(a, t)),
            (a, t) => a.or(t),
        };
    }
    (offs, acc)
}

fn scan_seg<T: Elem>(par: &Par, v: &[T], out: &mut [MaybeUninit<T>], id: T, lanes: bool, f: &(impl Fn(T, T) -> T + Sync)) {
    if v.len() <= BLOCK {
        return scan_piece(v, out, None, id, f);
    }
    let (offs, _) = block_offsets(par.map_blocks(v.len(), |lo, hi| fold_lanes(&v[lo..hi], lo == 0, lanes, f)), f);
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

/// Evaluates `$body` with `$id`, `$lanes` and `$f` bound to the identity, the lane flag
/// (see [`fold_lanes`]) and the operator of the monoid of `$op` on element type `$vt`,
/// wrapping the resulting `Vec` of that type as [`Data`].
macro_rules! monoid {
    ($op:expr, $vt:expr, |$id:ident, $lanes:ident, $f:ident| $body:expr) => {{
        macro_rules! arm {
            ($wrap:ident, $i:expr, $l:expr, $g:expr) => {{
                let ($id, $lanes, $f) = ($i, $l, $g);
                $crate::cvl::cpu::data::Data::$wrap($body)
            }};
        }
        match ($op, $vt) {
            ($crate::cvl::ReduceOp::Add, $crate::cvl::VType::Int) => arm!(Int, 0i64, true, i64::wrapping_add),
            ($crate::cvl::ReduceOp::Mul, $crate::cvl::VType::Int) => arm!(Int, 1i64, true, i64::wrapping_mul),
            ($crate::cvl::ReduceOp::Max, $crate::cvl::VType::Int) => arm!(Int, $crate::cvl::INT_MAX_IDENTITY, true, <i64 as $crate::cvl::cpu::data::Num>::max),
            ($crate::cvl::ReduceOp::Min, $crate::cvl::VType::Int) => arm!(Int, -$crate::cvl::INT_MAX_IDENTITY - 1, true, <i64 as $crate::cvl::cpu::data::Num>::min),
            ($crate::cvl::ReduceOp::And, $crate::cvl::VType::Int) => arm!(Int, -1i64, true, |a: i64, b: i64| a & b),
            ($crate::cvl::ReduceOp::Or, $crate::cvl::VType::Int) => arm!(Int, 0i64, true, |a: i64, b: i64| a | b),
            ($crate::cvl::ReduceOp::Xor, $crate::cvl::VType::Int) => arm!(Int, 0i64, true, |a: i64, b: i64| a ^ b),
            ($crate::cvl::ReduceOp::Add, $crate::cvl::VType::Float) => arm!(Float, 0.0f64, true, |a: f64, b: f64| a + b),
            ($crate::cvl::ReduceOp::Mul, $crate::cvl::VType::Float) => arm!(Float, 1.0f64, true, |a: f64, b: f64| a * b),
            ($crate::cvl::ReduceOp::Max, $crate::cvl::VType::Float) => arm!(Float, $crate::cvl::FLOAT_MAX_IDENTITY, false, <f64 as $crate::cvl::cpu::data::Num>::max),
            ($crate::cvl::ReduceOp::Min, $crate::cvl::VType::Float) => arm!(Float, -$crate::cvl::FLOAT_MAX_IDENTITY, false, <f64 as $crate::cvl::cpu::data::Num>::min),
            ($crate::cvl::ReduceOp::And, $crate::cvl::VType::Bool) => arm!(Bool, true, true, |a: bool, b: bool| a & b),
            ($crate::cvl::ReduceOp::Or, $crate::cvl::VType::Bool) => arm!(Bool, false, true, |a: bool, b: bool| a | b),
            ($crate::cvl::ReduceOp::Xor, $crate::cvl::VType::Bool) => arm!(Bool, false, true, |a: bool, b: bool| a ^ b),
            (op, vt) => return Err($crate::cvl::cpu::data::unsupported(&format!("{op:?} scan/reduce"), vt)),
        }
    }};
}
pub(super) use monoid;

fn typed<T: Elem>(d: &Data) -> Result<&[T], Trap> {
    T::view(d).ok_or_else(|| unsupported("scan/reduce", d.vtype()))
}

/// `SCAN` of `v` over `s`.
pub(super) fn scan(par: &Par, op: ReduceOp, v: &Data, s: &Seg) -> Result<Data, Trap> {
    Ok(monoid!(op, v.vtype(), |id, lanes, f| scan_t(par, typed(v)?, s, id, lanes, f)?))
}

/// `REDUCE` of `v` over `s`.
pub(super) fn reduce(par: &Par, op: ReduceOp, v: &Data, s: &Seg) -> Result<Data, Trap> {
    Ok(monoid!(op, v.vtype(), |id, lanes, f| reduce_t(par, typed(v)?, s, id, lanes, f)?))
}
