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

/// Segmented reduction: one value per segment, the identity for an empty one. A chunk's
/// runs of segments of at most [`SHORT`] elements are folded together ([`fold_segments`]),
/// a longer segment by itself ([`fold_seg`]: float MAX and MIN in lanes, a segment over
/// [`BLOCK`] elements in blocks).
pub(super) fn reduce_t<T: Elem>(par: &Par, v: &[T], s: &Seg, id: T, lanes: bool, f: impl Fn(T, T) -> T + Sync + Send) -> Result<Vec<T>, Trap> {
    build(s.m(), |out| {
        let cs = chunks(par, s, false);
        let parts = split_mut(out, cs.iter().map(|c| c.s1 - c.s0));
        par.each(v.len() + s.m(), cs.into_iter().zip(parts).collect(), |(c, part)| {
            let mut k = c.s0;
            while k < c.s1 {
                let (st, len) = (s.start(k), s.len(k));
                if len > SHORT {
                    part[k - c.s0].write(fold_seg(par, &v[st..st + len], lanes, &f).unwrap_or(id));
                    k += 1;
                    continue;
                }
                // The run of segments of at most `SHORT` elements from `k`.
                let end = (k..c.s1).find(|&j| s.len(j) > SHORT).unwrap_or(c.s1);
                let upto = s.start(end - 1) + s.len(end - 1);
                fold_segments(&v[st..upto], &s.lens()[k..end], id, &f, &mut part[k - c.s0..end - c.s0]);
                k = end;
            }
        });
        Ok(())
    })
}

/// Segments of at most this many elements are folded eight at a time ([`fold_segments`]).
const SHORT: usize = 16;

/// The folds by `f` of consecutive segments of lengths `lens` (each at most [`BLOCK`]
/// elements) that tile `vals`, into `out` (one per segment, `id` for an empty one): each
/// segment folded left to right, as [`fold_seg`] folds a segment of at most [`BLOCK`]
/// elements. Panics if the lengths do not add up to `vals.len()` or `out` is not one per
/// segment (callers pass a chunk's whole segments).
///
/// Short segments, each folded by itself, make the fold a chain of a few dependent steps
/// and a mispredicted loop exit per segment. Where the processor has AVX-512, eight
/// segments of at most [`SHORT`] elements are folded side by side instead, one per lane:
/// step `j` takes every lane's element `j` (a gather) and keeps the result only in lanes
/// whose segment is longer than `j`, up to the longest of the eight (0.58-0.71x the time
/// of one at a time on segments of 0-8 and 0-16 elements). Every segment is still folded
/// left to right, so the results are the same bits either way.
pub(super) fn fold_segments<T: Elem>(vals: &[T], lens: &[i64], id: T, f: &impl Fn(T, T) -> T, out: &mut [MaybeUninit<T>]) {
    assert_eq!(lens.len(), out.len(), "fold_segments: one result per segment");
    #[cfg(target_arch = "x86_64")]
    if super::elementwise::wide512() {
        // SAFETY: `wide512` checked that the processor has AVX-512F.
        return unsafe { fold_segments_avx512(vals, lens, id, f, out) };
    }
    fold_one_by_one(vals, lens, id, f, out);
}

/// [`fold_segments`] one segment at a time.
#[inline(always)]
fn fold_one_by_one<T: Copy>(vals: &[T], lens: &[i64], id: T, f: &impl Fn(T, T) -> T, out: &mut [MaybeUninit<T>]) {
    let mut rest = vals;
    for (o, &l) in out.iter_mut().zip(lens) {
        let (seg, tail) = rest.split_at(l as usize);
        o.write(match seg.split_first() {
            Some((&a, more)) => more.iter().fold(a, |x, &y| f(x, y)),
            None => id,
        });
        rest = tail;
    }
    assert!(rest.is_empty(), "fold_segments: the lengths do not tile the values");
}

/// [`fold_segments`] compiled with AVX-512: groups of eight segments of at most
/// [`SHORT`] elements in lanes, other groups and the last few segments one by one.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn fold_segments_avx512<T: Elem>(vals: &[T], lens: &[i64], id: T, f: &impl Fn(T, T) -> T, out: &mut [MaybeUninit<T>]) {
    const G: usize = 8;
    let whole = lens.len() / G * G;
    let mut at = 0usize;
    for (ls, os) in lens[..whole].chunks_exact(G).zip(out.chunks_exact_mut(G)) {
        let n: [usize; G] = std::array::from_fn(|k| ls[k] as usize);
        let longest = n.iter().copied().max().unwrap_or(0);
        let total: usize = n.iter().sum();
        let group = &vals[at..at + total];
        if longest == 0 || longest > SHORT {
            fold_one_by_one(group, ls, id, f, os);
        } else {
            // Absolute positions in `vals`, padding steps clamped to its last element
            // (their results are dropped). (Indexing the group's own slice instead kept
            // the compiler from vectorising the lanes.)
            let mut start = [at; G];
            for k in 1..G {
                start[k] = start[k - 1] + n[k - 1];
            }
            let last = vals.len() - 1;
            let mut acc: [T; G] = std::array::from_fn(|k| if n[k] > 0 { vals[start[k]] } else { id });
            for j in 1..longest {
                for k in 0..G {
                    // SAFETY: the index is clamped to `last`, below `vals.len()`.
                    let y = unsafe { *vals.get_unchecked((start[k] + j).min(last)) };
                    let z = f(acc[k], y);
                    acc[k] = if j < n[k] { z } else { acc[k] };
                }
            }
            for (o, a) in os.iter_mut().zip(acc) {
                o.write(a);
            }
        }
        at += total;
    }
    fold_one_by_one(&vals[at..], &lens[whole..], id, f, &mut out[whole..]);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each segment's fold, one at a time from its first element (the identity for an
    /// empty segment): what [`fold_segments`] must give bit for bit.
    fn reference<T: Copy>(vals: &[T], lens: &[i64], id: T, f: impl Fn(T, T) -> T) -> Vec<T> {
        let mut at = 0;
        lens.iter()
            .map(|&l| {
                let seg = &vals[at..at + l as usize];
                at += l as usize;
                seg.iter().copied().reduce(&f).unwrap_or(id)
            })
            .collect()
    }

    /// Both builds of `fold_segments` (one segment at a time, and eight segments in lanes
    /// where the processor has AVX-512) against [`reference`], compared as `bits`.
    fn check<T: Elem, B: PartialEq + std::fmt::Debug>(vals: &[T], lens: &[i64], id: T, f: impl Fn(T, T) -> T + Copy, bits: impl Fn(T) -> B, what: &str) {
        let want: Vec<B> = reference(vals, lens, id, f).into_iter().map(&bits).collect();
        type Build<T, F> = fn(&[T], &[i64], T, &F, &mut [MaybeUninit<T>]);
        let mut builds: Vec<(&str, Build<T, _>)> = vec![("one by one", |v, l, id, f, o| fold_one_by_one(v, l, id, f, o))];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the processor has AVX-512F.
            builds.push(("lanes", |v, l, id, f, o| unsafe { fold_segments_avx512(v, l, id, f, o) }));
        }
        for (name, build) in builds {
            let mut out = vec![MaybeUninit::new(id); lens.len()];
            build(vals, lens, id, &f, &mut out);
            // SAFETY: every element was written above.
            let got: Vec<B> = out.iter().map(|o| bits(unsafe { o.assume_init() })).collect();
            assert_eq!(got, want, "{what}, {name}, lengths {lens:?}");
        }
    }

    /// Segment layouts: short segments only (every group in lanes), groups whose longest
    /// is exactly `SHORT` and one past it, long segments among short ones, empty groups,
    /// a number of segments that is not a multiple of eight, none at all.
    fn layouts(next: &mut impl FnMut() -> u64) -> Vec<Vec<i64>> {
        let mut ls = vec![
            vec![],
            vec![0; 19],
            vec![1; 8],
            vec![SHORT as i64; 16],
            vec![0, 0, 0, SHORT as i64 + 1, 1, 2, 3, 4, 5],
            vec![3, SHORT as i64, 0, 7, 1, 1, 2, SHORT as i64 + 1, 0, 0, 5],
        ];
        for (count, top) in [(101, 17), (64, 9), (40, 3), (33, 60), (200, 18)] {
            ls.push((0..count).map(|_| (next() % top) as i64).collect());
        }
        ls
    }

    #[test]
    fn folds_of_segments_in_lanes_are_the_folds_one_at_a_time() {
        let mut next = super::super::test_rng(5);
        let specials = [0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e308, -1e308, 5e-324];
        for lens in layouts(&mut next) {
            let n = lens.iter().sum::<i64>() as usize;
            let ints: Vec<i64> = (0..n).map(|_| next() as i64 - (1 << 31) + if next() % 9 == 0 { i64::MAX / 3 } else { 0 }).collect();
            let floats: Vec<f64> = (0..n)
                .map(|_| if next() % 7 == 0 { specials[(next() % specials.len() as u64) as usize] } else { (next() as f64 / (1u64 << 31) as f64 - 0.5) * 1e3 })
                .collect();
            let bools: Vec<bool> = (0..n).map(|_| next() % 3 == 0).collect();
            check(&ints, &lens, 0, i64::wrapping_add, |x| x, "int +");
            check(&ints, &lens, 1, i64::wrapping_mul, |x| x, "int *");
            check(&ints, &lens, i64::MIN, <i64 as super::super::data::Num>::max, |x| x, "int max");
            check(&ints, &lens, -1, |a, b| a & b, |x| x, "int and");
            check(&floats, &lens, 0.0, |a, b| a + b, f64::to_bits, "float +");
            check(&floats, &lens, 1.0, |a, b| a * b, f64::to_bits, "float *");
            check(&floats, &lens, f64::NEG_INFINITY, <f64 as super::super::data::Num>::max, f64::to_bits, "float max");
            check(&floats, &lens, f64::INFINITY, <f64 as super::super::data::Num>::min, f64::to_bits, "float min");
            check(&bools, &lens, false, |a, b| a ^ b, |x| x, "bool xor");
        }
    }

    /// Lengths that do not add up to the values are refused, not read past.
    #[test]
    #[should_panic(expected = "tile")]
    fn lengths_that_do_not_tile_the_values_are_refused() {
        let vals = [1i64; 10];
        let mut out = vec![MaybeUninit::new(0i64); 9];
        fold_segments(&vals, &[1; 9], 0, &i64::wrapping_add, &mut out);
    }
}
