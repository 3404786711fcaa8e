//! `PACK`: the kept elements of every segment and the new lengths. Flags are counted per
//! chunk (whole segments, long ones cut into blocks) in parallel, then every chunk packs
//! its kept elements, branch-free, straight into its place in the result.

use super::data::Elem;
use super::par::{chunks, split_mut, Chunk, Par};
use super::mem::{build, build_plain};
use super::seg::Seg;
use crate::trap::Trap;
use std::mem::MaybeUninit;

/// Kept elements per segment, and the chunks with each chunk's kept count.
pub(super) struct Counts {
    pub lens: Vec<i64>,
    chunks: Vec<(Chunk, usize)>,
    pub kept: usize,
}

/// Counts the true flags of every segment of `s`. Every chunk writes its segments'
/// counts straight into its part of the lengths; of a segment cut into pieces, the first
/// piece writes its count and the others' counts are added afterwards.
pub(super) fn count(par: &Par, f: &[bool], s: &Seg) -> Result<Counts, Trap> {
    let cs = chunks(par, s, true);
    let kept_in = |b: &[bool]| b.iter().map(|&b| b as usize).sum::<usize>();
    // A later piece: a chunk covering part of one segment, not its start.
    let later: Vec<bool> = cs.iter().map(|c| c.s1 > c.s0 && c.e0 > s.start(c.s0)).collect();
    let mut totals = Vec::new();
    let mut lens = build_plain::<i64>(s.m(), |out| {
        let parts = split_mut(out, cs.iter().zip(&later).map(|(c, &l)| if l { 0 } else { c.s1 - c.s0 }));
        let items: Vec<_> = cs.iter().zip(parts).collect();
        totals = par.map(s.total() + s.m(), items, |(c, part)| {
            let Some(lens) = c.whole(s) else {
                let n = kept_in(&f[c.e0..c.e1]);
                if let Some(o) = part.first_mut() {
                    o.write(n as i64);
                }
                return n;
            };
            let (mut e, mut total) = (c.e0, 0);
            for (o, &l) in part.iter_mut().zip(lens) {
                let n = kept_at(f, e, l as usize);
                o.write(n as i64);
                e += l as usize;
                total += n;
            }
            total
        });
        Ok(())
    })?;
    for ((c, _), &n) in cs.iter().zip(&later).zip(&totals).filter(|((_, &l), _)| l) {
        lens[c.s0] += n as i64;
    }
    let kept = totals.iter().sum();
    Ok(Counts { lens, chunks: cs.into_iter().zip(totals).collect(), kept })
}

/// The number of true flags in `f[e..e + l]`. A segment of at most 8 flags is counted
/// from one 8-byte load, masked to its length, whose bytes (each 0 or 1) a multiply sums:
/// no loop whose trip count varies from one segment to the next, whose exit mispredicts
/// when segments are short and of mixed lengths.
#[inline(always)]
fn kept_at(f: &[bool], e: usize, l: usize) -> usize {
    if l <= 8 && e + 8 <= f.len() {
        // SAFETY: `e + 8 <= f.len()`; a `bool` is one byte, 0 or 1.
        let w = u64::from_le(unsafe { std::ptr::read_unaligned(f.as_ptr().add(e) as *const u64) });
        let mask = ((1u128 << (8 * l)) - 1) as u64;
        return ((w & mask).wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize;
    }
    f[e..e + l].iter().map(|&b| b as usize).sum()
}

/// Packs `v[lo..hi]` by `f[lo..hi]` into `out`, which has room for exactly the kept ones:
/// every element is stored at the next free slot, which advances only past kept ones
/// (flags are unpredictable; a branch per element mispredicts often). The loop stops at
/// the last kept element, so every store lands inside `out`.
fn pack_piece<T: Copy>(v: &[T], f: &[bool], out: &mut [MaybeUninit<T>]) {
    let Some(end) = f.iter().rposition(|&b| b) else { return };
    // `out` was sized by `count` from these same flags.
    debug_assert_eq!(f[..=end].iter().filter(|&&b| b).count(), out.len());
    let mut j = 0usize;
    for (&x, &b) in v[..=end].iter().zip(&f[..=end]) {
        // SAFETY: `j` counts the kept elements before this one; at or before the last
        // kept element that is below the number of kept elements, which is `out.len()`
        // (the caller sized `out` by counting these flags).
        unsafe { out.get_unchecked_mut(j).write(x) };
        j += b as usize;
    }
}

/// The kept elements of `v`.
pub(super) fn pack<T: Elem>(par: &Par, v: &[T], f: &[bool], s: &Seg, c: &Counts) -> Result<Vec<T>, Trap> {
    build(c.kept, |out| {
        let parts = split_mut(out, c.chunks.iter().map(|&(_, n)| n));
        par.each(s.total() + s.m(), c.chunks.iter().zip(parts).collect(), |(&(ch, _), part)| {
            pack_piece(&v[ch.e0..ch.e1], &f[ch.e0..ch.e1], part)
        });
        Ok(())
    })
}
