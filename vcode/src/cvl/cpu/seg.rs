//! Segment descriptors: the lengths (shared with the `INT` vector they were made from,
//! so `MAKE_SEGDES` and `LENGTHS` copy nothing), checked and summed when the descriptor is
//! made, and the start offsets, written on first use.
//!
//! Many descriptors never need their starts: quicksort's `if` keeps the descriptors of
//! its `then` instances and of its pivots across the recursive call and reads only their
//! lengths afterwards, and descriptors of little work are walked with running offsets
//! (one chunk, [`super::par::Chunk::whole`]). Of the 8.0M segments quicksort of 1M
//! elements described, 4.7M never had their starts read.

use super::data::Data;
use super::par::{Chunk, Par, BLOCK};
use crate::trap::{Trap, TrapKind};
use std::mem::MaybeUninit;
use std::sync::{Arc, OnceLock};

/// Largest element count a descriptor may describe.
const MAX_TOTAL: usize = isize::MAX as usize / 16;

/// A segment descriptor.
#[derive(Debug)]
pub struct Seg {
    lens: Arc<Data>,
    /// The start of every segment (the exclusive prefix sums of the lengths), written on
    /// first use ([`Seg::starts`]).
    starts: OnceLock<Vec<usize>>,
    /// Number of segments.
    m: usize,
    total: usize,
    /// The library's threads, for writing the starts of a long descriptor.
    par: Par,
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

/// Lengths under this, fewer than [`FAST_SEGMENTS`] of them, sum in 64 bits without
/// wrapping.
const FAST_LEN: i64 = 1 << 40;
/// See [`FAST_LEN`].
const FAST_SEGMENTS: usize = 1 << 23;

/// The sum of `lens`, checked: a trap for the first negative length, or for the first
/// that takes the sum past [`MAX_TOTAL`]. One branch-free pass the compiler vectorises
/// (a wrapping sum, and the lengths' bits or-ed together to see a negative or a huge
/// one); only lengths it cannot vouch for are walked again, with a check each.
fn total_of(lens: &[i64]) -> Result<usize, Trap> {
    let (mut sum, mut bits) = (0u64, 0i64);
    for &l in lens {
        sum = sum.wrapping_add(l as u64);
        bits |= l;
    }
    if (0..FAST_LEN).contains(&bits) && lens.len() < FAST_SEGMENTS {
        // Every length is under 2^40 and there are fewer than 2^23 of them: no wrap.
        return usize::try_from(sum).ok().filter(|t| *t <= MAX_TOTAL).ok_or_else(too_long);
    }
    lens.iter().try_fold(0usize, |acc, &l| {
        if l < 0 {
            return Err(Trap::new(TrapKind::NegativeLength(l)));
        }
        acc.checked_add(l as usize).filter(|t| *t <= MAX_TOTAL).ok_or_else(too_long)
    })
}

/// Writes the exclusive prefix sums of `lens`, from `base`, into `out` (lengths already
/// checked: nothing wraps).
fn starts_from(lens: &[i64], base: usize, out: &mut [MaybeUninit<usize>]) {
    let mut at = base;
    for (o, &l) in out.iter_mut().zip(lens) {
        o.write(at);
        at += l as usize;
    }
}

impl Seg {
    /// A descriptor over the lengths held by `lens` (an `INT` buffer); traps on a negative
    /// length or an impossible total.
    pub(crate) fn new(par: &Par, lens: Arc<Data>) -> Result<Seg, Trap> {
        let Data::Int(l) = &*lens else {
            return Err(Trap::ty(format!("segment lengths must be INT, not {}", lens.vtype().name())));
        };
        let m = l.len();
        let total = if m < 4 * BLOCK || par.threads() == 1 {
            total_of(l)?
        } else {
            // Checked block sums, added in order: the first bad block's trap is the first
            // bad length's.
            let mut acc = 0usize;
            for s in par.map_blocks(m, |lo, hi| total_of(&l[lo..hi])) {
                acc = acc.checked_add(s?).filter(|t| *t <= MAX_TOTAL).ok_or_else(too_long)?;
            }
            acc
        };
        Ok(Seg { lens, starts: OnceLock::new(), m, total, par: par.clone(), cuts: Default::default() })
    }
    /// [`super::par::cut`] of this descriptor, made once.
    pub(crate) fn cut(&self, split_long: bool) -> &[Chunk] {
        self.cuts[split_long as usize].get_or_init(|| super::par::cut_starts(self.starts(), self.lens(), self.total, split_long))
    }
    /// Number of segments.
    pub(crate) fn m(&self) -> usize {
        self.m
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
    /// The start of every segment, written now if this is the first use: on the library's
    /// threads when the descriptor is long (block sums, then each block's starts from its
    /// offset), never cut short by an interrupt (kernels index with them unchecked). Their
    /// memory, no more than the lengths', is not checked against the memory limit (a
    /// descriptor's `cut` is not either). A first use from several threads at once writes
    /// them once (the others wait); kernels that run chunks on several threads have cut
    /// the descriptor, and so written its starts, on the calling thread first.
    pub(crate) fn starts(&self) -> &[usize] {
        self.starts.get_or_init(|| {
            let (l, m) = (self.lens(), self.m);
            let mut out = Vec::with_capacity(m);
            let spare = &mut out.spare_capacity_mut()[..m];
            if m < 4 * BLOCK || self.par.threads() == 1 {
                starts_from(l, 0, spare);
            } else {
                let sums = self.par.map_blocks(m, |lo, hi| l[lo..hi].iter().map(|&x| x as usize).sum::<usize>());
                let offs: Vec<usize> = sums.iter().scan(0, |acc, &s| Some(std::mem::replace(acc, *acc + s))).collect();
                let blocks: Vec<(usize, &mut [MaybeUninit<usize>])> = spare.chunks_mut(BLOCK).enumerate().collect();
                self.par.map(m, blocks, |(b, blk)| starts_from(&l[b * BLOCK..b * BLOCK + blk.len()], offs[b], blk));
            }
            // SAFETY: `starts_from` wrote all `m` elements (every block of them; `map`
            // skips none), and the capacity is `m`.
            unsafe { out.set_len(m) };
            out
        })
    }
    /// Start of segment `k`.
    #[inline]
    pub(crate) fn start(&self, k: usize) -> usize {
        self.starts()[k]
    }
    /// The segment holding element `pos` (`pos < total`): the last one starting at or
    /// before it, which is not empty.
    pub(crate) fn segment_at(&self, pos: usize) -> usize {
        self.starts().partition_point(|&st| st <= pos).saturating_sub(1)
    }
    /// Length of segment `k`.
    #[inline]
    pub(crate) fn len(&self, k: usize) -> usize {
        self.lens()[k] as usize
    }
    /// `(start, len)` of every segment.
    pub(crate) fn ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.starts().iter().copied().zip(self.lens().iter().map(|&l| l as usize))
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
            // Lengths past the one-pass check's reach are summed with a check each.
            let huge = 1i64 << 41;
            assert_eq!(seg(vec![huge, 3, huge], threads).unwrap().total(), 2 * (huge as usize) + 3);
            assert_eq!(kind(vec![huge, -1]), Err(TrapKind::NegativeLength(-1)));
        }
    }

    /// A descriptor writes its starts only when they are first asked for, and then the
    /// same ones on one thread and on two (whose long descriptors write them by blocks);
    /// its count, total and lengths need none.
    #[test]
    fn starts_are_written_on_first_use_alike_on_every_thread_count() {
        for m in [3, 4 * BLOCK + 77] {
            let lens: Vec<i64> = (0..m).map(|k| (k * 7 % 5) as i64).collect();
            let expect: Vec<usize> = lens.iter().scan(0usize, |at, &l| Some(std::mem::replace(at, *at + l as usize))).collect();
            for threads in [1, 2] {
                let s = seg(lens.clone(), threads).unwrap();
                assert_eq!((s.m(), s.total(), s.lens()), (m, expect[m - 1] + lens[m - 1] as usize, &lens[..]));
                assert!(s.starts.get().is_none(), "{m} segments on {threads} threads: starts written before use");
                assert_eq!(s.start(m - 1), expect[m - 1]);
                assert_eq!(s.starts(), &expect[..]);
                // Segment 0 is empty: element 0 is segment 1's, element 2 segment 2's.
                assert_eq!((s.segment_at(0), s.segment_at(2)), (1, 2));
            }
        }
    }
}
