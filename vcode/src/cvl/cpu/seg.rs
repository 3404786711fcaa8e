//! Segment descriptors: the lengths (shared with the `INT` vector they were made from,
//! so `MAKE_SEGDES` and `LENGTHS` copy nothing), the start offsets, computed in the same
//! pass that checks the lengths, and the element count.

use super::data::Data;
use super::par::{Chunk, Par, BLOCK};
use super::mem::build;
use crate::trap::{Trap, TrapKind};
use std::sync::{Arc, OnceLock};

/// Largest element count a descriptor may describe.
const MAX_TOTAL: usize = isize::MAX as usize / 16;

/// A segment descriptor.
#[derive(Debug)]
pub struct Seg {
    lens: Arc<Data>,
    starts: Vec<usize>,
    total: usize,
    /// Its cuts into chunks ([`super::par::cut`]), without and with long segments split,
    /// made on first use: one descriptor serves many operations (quicksort's serves its
    /// pivots' `DIST`, the filters' compares and packs), which would each walk its lengths.
    cuts: [OnceLock<Vec<Chunk>>; 2],
}

impl PartialEq for Seg {
    fn eq(&self, o: &Seg) -> bool {
        self.lens() == o.lens()
    }
}

fn too_long() -> Trap {
    Trap::new(TrapKind::OutOfMemory(format!("segment lengths sum past {MAX_TOTAL}")))
}

/// Checks `lens` and writes their exclusive prefix sums (from `base`) into `starts`;
/// returns the sum. One branch-free pass (the sum kept in 128 bits, so that it cannot
/// wrap, and the lengths' bits or-ed together to see a negative one), checked at the end;
/// only a bad descriptor walks its lengths again, with a check per length, for the trap
/// of the first bad one.
fn starts_of(lens: &[i64], base: usize, starts: &mut [std::mem::MaybeUninit<usize>]) -> Result<usize, Trap> {
    let (mut total, mut bits) = (base as u128, 0i64);
    for (o, &l) in starts.iter_mut().zip(lens) {
        o.write(total as usize);
        total += l as u64 as u128;
        bits |= l;
    }
    if bits >= 0 && total <= MAX_TOTAL as u128 {
        // No length is negative, so the starts grow up to `total`: none wrapped.
        return Ok(total as usize);
    }
    let mut total = base;
    for &l in lens {
        if l < 0 {
            return Err(Trap::new(TrapKind::NegativeLength(l)));
        }
        total = total.checked_add(l as usize).filter(|t| *t <= MAX_TOTAL).ok_or_else(too_long)?;
    }
    Err(too_long())
}

impl Seg {
    /// A descriptor over the lengths held by `lens` (an `INT` buffer); traps on a negative
    /// length or an impossible total.
    pub(crate) fn new(par: &Par, lens: Arc<Data>) -> Result<Seg, Trap> {
        let Data::Int(l) = &*lens else {
            return Err(Trap::ty(format!("segment lengths must be INT, not {}", lens.vtype().name())));
        };
        let m = l.len();
        let mut total = 0;
        let starts = build::<usize>(m, |out| {
            if m < 4 * BLOCK || par.threads() == 1 {
                total = starts_of(l, 0, out)?;
                return Ok(());
            }
            // Two passes: checked block sums, then each block's starts from its offset.
            let sums = par.map_blocks(m, |lo, hi| {
                l[lo..hi].iter().try_fold(0usize, |acc, &x| {
                    if x < 0 {
                        Err(Trap::new(TrapKind::NegativeLength(x)))
                    } else {
                        acc.checked_add(x as usize).filter(|t| *t <= MAX_TOTAL).ok_or_else(too_long)
                    }
                })
            });
            let mut offs = Vec::with_capacity(sums.len());
            let mut acc = 0usize;
            for s in sums {
                offs.push(acc);
                acc = acc.checked_add(s?).filter(|t| *t <= MAX_TOTAL).ok_or_else(too_long)?;
            }
            total = acc;
            par.blocks_mut(out, |lo, blk| {
                let _ = starts_of(&l[lo..lo + blk.len()], offs[lo / BLOCK], blk);
            });
            Ok(())
        })?;
        Ok(Seg { lens, starts, total, cuts: Default::default() })
    }
    /// [`super::par::cut`] of this descriptor, made once.
    pub(crate) fn cut(&self, split_long: bool) -> &[Chunk] {
        self.cuts[split_long as usize].get_or_init(|| super::par::cut_starts(&self.starts, self.lens(), self.total, split_long))
    }
    /// Number of segments.
    pub(crate) fn m(&self) -> usize {
        self.starts.len()
    }
    /// Number of elements.
    pub(crate) fn total(&self) -> usize {
        self.total
    }
    /// The lengths.
    pub(crate) fn lens(&self) -> &[i64] {
        match &*self.lens {
            Data::Int(l) => l,
            _ => &[],
        }
    }
    /// The buffer of the lengths (shared with `LENGTHS`).
    pub(crate) fn lens_buf(&self) -> &Arc<Data> {
        &self.lens
    }
    /// The start of every segment.
    pub(crate) fn starts(&self) -> &[usize] {
        &self.starts
    }
    /// Start of segment `k`.
    #[inline]
    pub(crate) fn start(&self, k: usize) -> usize {
        self.starts[k]
    }
    /// The segment holding element `pos` (`pos < total`): the last one starting at or
    /// before it, which is not empty.
    pub(crate) fn segment_at(&self, pos: usize) -> usize {
        self.starts.partition_point(|&st| st <= pos).saturating_sub(1)
    }
    /// Length of segment `k`.
    #[inline]
    pub(crate) fn len(&self, k: usize) -> usize {
        self.lens()[k] as usize
    }
    /// `(start, len)` of every segment.
    pub(crate) fn ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.starts.iter().copied().zip(self.lens().iter().map(|&l| l as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(lens: Vec<i64>, threads: usize) -> Result<Seg, Trap> {
        Seg::new(&Par::new(threads), Arc::new(Data::Int(lens)))
    }

    /// The starts are the exclusive prefix sums, on one thread and on two (whose blocked
    /// pass starts at `4 * BLOCK` segments); the first bad length is the trap: a negative
    /// one, or one that takes the total past the limit, whichever comes first.
    #[test]
    fn starts_are_prefix_sums_and_the_first_bad_length_traps() {
        for threads in [1, 2] {
            for m in [0, 1, 5, 4 * BLOCK + 3] {
                let lens: Vec<i64> = (0..m).map(|k| (k % 7) as i64).collect();
                let s = seg(lens.clone(), threads).unwrap();
                let mut at = 0usize;
                for (k, &l) in lens.iter().enumerate() {
                    assert_eq!(s.start(k), at);
                    at += l as usize;
                }
                assert_eq!(s.total(), at);
            }
            let big = MAX_TOTAL as i64;
            let kind = |lens: Vec<i64>| seg(lens, threads).map(|_| ()).map_err(|t| t.kind);
            assert_eq!(kind(vec![1, 2, -3, -4]), Err(TrapKind::NegativeLength(-3)));
            assert!(matches!(kind(vec![big, 1, -1]), Err(TrapKind::OutOfMemory(_))));
            assert_eq!(kind(vec![1, -1, big, big]), Err(TrapKind::NegativeLength(-1)));
            assert!(matches!(kind(vec![i64::MAX, i64::MAX, i64::MAX]), Err(TrapKind::OutOfMemory(_))));
            assert_eq!(kind(vec![big - 1, 1]), Ok(()));
            let mut many = vec![1i64; 4 * BLOCK + 10];
            many[4 * BLOCK + 5] = -2;
            assert_eq!(kind(many), Err(TrapKind::NegativeLength(-2)));
        }
    }
}
