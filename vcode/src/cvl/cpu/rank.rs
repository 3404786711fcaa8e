//! `RANK_UP` / `RANK_DOWN`: the stable rank of every element within its segment, by a
//! comparison sort for short segments and a least-significant-digit radix sort for long
//! ones; segments are spread over the threads, and a segment of at least [`PAR_MIN`]
//! elements is itself sorted by a parallel radix sort over fixed blocks.

use super::data::Elem;
use super::par::{chunks, split_mut, Par, BLOCK};
use super::mem::build;
use super::seg::Seg;
use crate::trap::Trap;

/// Keys that rank: an order-preserving map to `u64`. Floats go by their IEEE bit
/// patterns as the reference's radix sort orders them (`-0.0` before `+0.0`, NaNs at the
/// ends), which is also a total order, so no key makes the sort misbehave.
pub(super) trait RankKey: Elem {
    fn key(self) -> u64;
}
impl RankKey for i64 {
    fn key(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
}
impl RankKey for f64 {
    fn key(self) -> u64 {
        let b = self.to_bits();
        if b >> 63 == 1 {
            !b
        } else {
            b | (1 << 63)
        }
    }
}

/// Segments shorter than this are ranked by a comparison sort, longer ones by radix sort.
pub(super) const RADIX_MIN: usize = 1024;

/// Sorts `(key, position)` pairs by key, stably: a least-significant-digit radix sort,
/// one pass per byte, skipping the bytes in which all keys agree.
fn radix_sort(mut a: Vec<(u64, u32)>) -> Vec<(u64, u32)> {
    let mut b = a.clone();
    let differ = differing_bits(&a);
    for shift in (0..64).step_by(8) {
        if (differ >> shift) & 0xff == 0 {
            continue;
        }
        let mut count = [0usize; 256];
        for &(k, _) in &a {
            count[((k >> shift) & 0xff) as usize] += 1;
        }
        if count.contains(&a.len()) {
            continue;
        }
        let mut at = 0;
        for c in count.iter_mut() {
            let n = *c;
            *c = at;
            at += n;
        }
        for &(k, p) in &a {
            let d = ((k >> shift) & 0xff) as usize;
            b[count[d]] = (k, p);
            count[d] += 1;
        }
        std::mem::swap(&mut a, &mut b);
    }
    a
}

/// The bits in which the keys do not all agree (their OR without their AND): a byte of
/// none is a radix pass with nothing to do, skipped without counting its digits.
fn differing_bits(a: &[(u64, u32)]) -> u64 {
    let (or, and) = a.iter().fold((0u64, u64::MAX), |(o, n), &(k, _)| (o | k, n & k));
    or & !and
}

/// Segments at least this long are ranked by [`par_radix_sort`] (one at a time, each over
/// all threads); shorter ones are spread over the threads whole.
pub(super) const PAR_MIN: usize = 4 * BLOCK;

/// A pointer that blocks of a parallel pass write through at disjoint positions.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: only used to write disjoint positions from different threads (see the callers).
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The pointer to position `i` (a method, so that closures capture the whole
    /// `Shared`, which is `Sync`, not its raw pointer).
    ///
    /// # Safety
    /// `i` must be within the allocation the pointer came from.
    unsafe fn at(self, i: usize) -> *mut T {
        // SAFETY: the caller keeps `i` in bounds.
        unsafe { self.0.add(i) }
    }
}

/// [`radix_sort`] with each pass over fixed [`BLOCK`]-element blocks: every block counts
/// its digits, the counts are laid out digit by digit and block by block (so each block
/// knows where each of its keys goes, keeping equal keys in order), then every block
/// scatters its keys. Blocks never depend on the thread count, and a stable sort has one
/// answer anyway: the result is the serial sort's.
fn par_radix_sort(par: &Par, mut a: Vec<(u64, u32)>) -> Vec<(u64, u32)> {
    let n = a.len();
    let blocks = n.div_ceil(BLOCK);
    let mut b: Vec<(u64, u32)> = Vec::with_capacity(n);
    let differ = par.map_blocks(n, |lo, hi| differing_bits(&a[lo..hi])).into_iter().fold(0, |x, y| x | y);
    // A byte in which every block agrees within itself may still differ between blocks:
    // also compare each block's first key with the first block's.
    let first = a.first().map_or(0, |p| p.0);
    let differ = differ | a.iter().step_by(BLOCK).fold(0, |x, p| x | (p.0 ^ first));
    for shift in (0..64).step_by(8) {
        if (differ >> shift) & 0xff == 0 {
            continue;
        }
        let digit = |k: u64| ((k >> shift) & 0xff) as usize;
        let counts: Vec<[usize; 256]> = par.map_blocks(n, |lo, hi| {
            let mut c = [0usize; 256];
            for &(k, _) in &a[lo..hi] {
                c[digit(k)] += 1;
            }
            c
        });
        let mut totals = [0usize; 256];
        for c in &counts {
            for (t, x) in totals.iter_mut().zip(c) {
                *t += x;
            }
        }
        if totals.contains(&n) {
            continue;
        }
        // offsets[blk][d]: where block `blk`'s first key with digit `d` goes.
        let mut offsets = vec![[0usize; 256]; blocks];
        let mut at = 0;
        for d in 0..256 {
            for (blk, c) in counts.iter().enumerate() {
                offsets[blk][d] = at;
                at += c[d];
            }
        }
        let dst = Shared(b.as_mut_ptr());
        let src = &a;
        let offsets = &offsets;
        par.map_blocks(n, |lo, hi| {
            let mut next = offsets[lo / BLOCK];
            for &(k, p) in &src[lo..hi] {
                let d = digit(k);
                // SAFETY: the offsets give every key of every block its own position in
                // `0..n` (they are the prefix sums of the counts), and `b` has capacity `n`.
                unsafe { dst.at(next[d]).write((k, p)) };
                next[d] += 1;
            }
        });
        // SAFETY: `map_blocks` runs every block, so the scatter above wrote every position
        // of `0..n` exactly once.
        unsafe { b.set_len(n) };
        std::mem::swap(&mut a, &mut b);
    }
    a
}

fn rank_seg<T: RankKey>(v: &[T], dst: &mut [std::mem::MaybeUninit<i64>], flip: u64) {
    if v.len() > u32::MAX as usize {
        // Positions past u32: a plain stable sort of (key, position).
        let mut pairs: Vec<(u64, usize)> = v.iter().enumerate().map(|(p, &x)| (x.key() ^ flip, p)).collect();
        pairs.sort_by_key(|&(k, _)| k);
        for (r, &(_, p)) in pairs.iter().enumerate() {
            dst[p].write(r as i64);
        }
        return;
    }
    let mut pairs: Vec<(u64, u32)> = v.iter().enumerate().map(|(p, &x)| (x.key() ^ flip, p as u32)).collect();
    if v.len() < RADIX_MIN {
        pairs.sort_by_key(|&(k, _)| k);
    } else {
        pairs = radix_sort(pairs);
    }
    for (r, &(_, p)) in pairs.iter().enumerate() {
        dst[p as usize].write(r as i64);
    }
}

/// Ranks of `v` within the segments of `s`.
pub(super) fn rank<T: RankKey>(par: &Par, v: &[T], s: &Seg, up: bool) -> Result<Vec<i64>, Trap> {
    // Descending order is ascending order of the complemented keys; equal keys keep
    // their positions' order either way (stable).
    let flip = if up { 0 } else { u64::MAX };
    let long = |k: usize| s.len(k) >= PAR_MIN && s.len(k) <= u32::MAX as usize;
    build(v.len(), |out| {
        let cs = chunks(par, s, false);
        let parts = split_mut(out, cs.iter().map(|c| c.e1 - c.e0));
        par.each(v.len() + s.m(), cs.into_iter().zip(parts).collect(), |(c, part)| {
            for k in c.s0..c.s1 {
                let (st, len) = (s.start(k) - c.e0, s.len(k));
                if long(k) {
                    continue;
                }
                rank_seg(&v[st + c.e0..st + c.e0 + len], &mut part[st..st + len], flip);
            }
        });
        // The long segments, one at a time over every thread.
        for k in (0..s.m()).filter(|&k| long(k)) {
            let (st, len) = (s.start(k), s.len(k));
            par_rank_seg(par, &v[st..st + len], &mut out[st..st + len], flip);
        }
        Ok(())
    })
}

/// [`rank_seg`] of a long segment, every pass over fixed blocks on all threads.
fn par_rank_seg<T: RankKey>(par: &Par, v: &[T], dst: &mut [std::mem::MaybeUninit<i64>], flip: u64) {
    let n = v.len();
    let mut pairs: Vec<(u64, u32)> = Vec::with_capacity(n);
    let keys = Shared(pairs.as_mut_ptr());
    par.map_blocks(n, |lo, hi| {
        for (j, &x) in v[lo..hi].iter().enumerate() {
            // SAFETY: block `lo..hi` writes positions `lo..hi` only; capacity is `n`.
            unsafe { keys.at(lo + j).write((x.key() ^ flip, (lo + j) as u32)) };
        }
    });
    // SAFETY: `map_blocks` runs every block, so every position of `0..n` was written.
    unsafe { pairs.set_len(n) };
    let sorted = par_radix_sort(par, pairs);
    let ranks = Shared(dst.as_mut_ptr());
    let sorted = &sorted;
    par.map_blocks(n, |lo, hi| {
        for (r, &(_, p)) in sorted[lo..hi].iter().enumerate().map(|(j, x)| (lo + j, x)) {
            // SAFETY: the positions `p` are a permutation of `0..n` (`dst.len() == n`), so
            // blocks write disjoint elements.
            unsafe { (*ranks.at(p as usize)).write(r as i64) };
        }
    });
}
