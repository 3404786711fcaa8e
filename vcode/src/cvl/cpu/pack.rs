//! `PACK`: the kept elements of every segment and the new lengths. Flags are counted per
//! chunk (whole segments, long ones cut into blocks) in parallel, then every chunk packs
//! its kept elements, branch-free, straight into its place in the result.

use super::data::Elem;
use super::par::{chunks, split_mut, Chunk, Par};
use super::mem::build;
use super::seg::Seg;
use crate::trap::Trap;
use std::mem::MaybeUninit;

/// Kept elements per segment, and the chunks with each chunk's kept count.
pub(super) struct Counts {
    pub lens: Vec<i64>,
    chunks: Vec<(Chunk, usize)>,
    pub kept: usize,
}

/// Counts the true flags of every segment of `s`.
pub(super) fn count(par: &Par, f: &[bool], s: &Seg) -> Result<Counts, Trap> {
    let cs = chunks(par, s, true);
    let per = par.map(s.total() + s.m(), cs.clone(), |c| match c.whole(s) {
        Some(lens) => {
            let mut rest = &f[c.e0..c.e1];
            lens.iter()
                .map(|&l| {
                    let (seg, tail) = rest.split_at(l as usize);
                    rest = tail;
                    seg.iter().map(|&b| b as usize).sum::<usize>()
                })
                .collect::<Vec<usize>>()
        }
        None => c.pieces(s).map(|(_, lo, hi)| f[lo..hi].iter().map(|&b| b as usize).sum::<usize>()).collect::<Vec<usize>>(),
    });
    let mut lens: Vec<i64> = Vec::new();
    lens.try_reserve_exact(s.m()).map_err(|_| Trap::new(crate::trap::TrapKind::OutOfMemory("segment lengths".into())))?;
    let mut out = Vec::with_capacity(cs.len());
    let mut kept = 0usize;
    let mut last_seg = usize::MAX;
    for (c, counts) in cs.into_iter().zip(per) {
        let total: usize = counts.iter().sum();
        for (k, n) in (c.s0..c.s1).zip(counts) {
            if k == last_seg {
                // A later piece of a segment cut into blocks.
                if let Some(l) = lens.last_mut() {
                    *l += n as i64;
                }
            } else {
                lens.push(n as i64);
            }
            last_seg = k;
        }
        out.push((c, total));
        kept += total;
    }
    Ok(Counts { lens, chunks: out, kept })
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
