//! `RANK_UP` / `RANK_DOWN`: the stable rank of every element within its segment, by a
//! comparison sort for short segments, by counting for longer ones whose keys take few
//! values ([`counting_rank`]), and by a least-significant-digit radix sort for the
//! others; segments are spread over the threads, and a segment of at least [`PAR_MIN`]
//! elements is itself ranked over all threads (counting per piece, or a parallel radix
//! sort over fixed blocks).

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

/// What the radix sorts sort: a key and the position it came from.
trait Item: Copy + Send + Sync {
    /// The sort key.
    fn k(self) -> u64;
    /// The position.
    fn pos(self) -> usize;
}

/// A key of any width beside its position (16 bytes).
impl Item for (u64, u32) {
    #[inline]
    fn k(self) -> u64 {
        self.0
    }
    #[inline]
    fn pos(self) -> usize {
        self.1 as usize
    }
}

/// A key that fits in 32 bits above its 32-bit position, in one word (8 bytes: half the
/// memory traffic of a pair in every radix pass). Keys whose differing bits span at most
/// 32 bits are shifted into it ([`span`]), which keeps their order.
#[derive(Clone, Copy)]
struct Packed(u64);

impl Item for Packed {
    #[inline]
    fn k(self) -> u64 {
        self.0 >> 32
    }
    #[inline]
    fn pos(self) -> usize {
        self.0 as u32 as usize
    }
}

/// For keys whose differing bits are `differ`: the shift that brings them to bit 0, when
/// they span at most 32 bits (so that, shifted and masked, they fit a [`Packed`] and keep
/// their order: bits outside the span are the same in every key).
fn span(differ: u64) -> Option<u32> {
    if differ == 0 {
        return Some(0);
    }
    let lo = differ.trailing_zeros();
    (64 - differ.leading_zeros() - lo <= 32).then_some(lo)
}

/// The differing bits of [`Packed`] keys ([`Item::k`]) made from keys whose differing
/// bits are `differ`, shifted by `lo` ([`span`]).
fn packed_bits(differ: u64, lo: u32) -> u64 {
    (differ >> lo) & u64::from(u32::MAX)
}

/// The bits in which the keys `x.key() ^ flip` do not all agree (their OR without their
/// AND): a digit of none is a radix pass with nothing to do, skipped without counting.
fn key_bits<T: RankKey>(v: &[T], flip: u64) -> u64 {
    let (or, and) = v.iter().fold((0u64, u64::MAX), |(o, n), &x| {
        let k = x.key() ^ flip;
        (o | k, n & k)
    });
    or & !and
}

/// The digits of a least-significant-digit radix sort of `n` keys whose differing bits
/// are `differ`: `(shift, width)` from the lowest differing bit up to the highest, in as
/// few passes as digits of at most [`MAX_DIGIT`] bits allow (of [`SMALL_DIGIT`] bits for
/// fewer than [`WIDE_MIN`] keys, whose passes a 2048-entry count table would dominate),
/// the bits spread evenly over the passes. A digit in which no key differs is left out.
fn digits(n: usize, differ: u64) -> Vec<(u32, u32)> {
    if differ == 0 {
        return Vec::new();
    }
    let (lo, hi) = (differ.trailing_zeros(), 64 - differ.leading_zeros());
    let max = if n >= WIDE_MIN { MAX_DIGIT } else { SMALL_DIGIT };
    let passes = (hi - lo).div_ceil(max);
    let width = (hi - lo).div_ceil(passes);
    (0..passes)
        .map(|p| (lo + p * width, width.min(hi - lo - p * width)))
        .filter(|&(shift, width)| (differ >> shift) & ((1u64 << width) - 1) != 0)
        .collect()
}

/// Widest radix digit, in bits (a 2048-entry count table stays in the L1 cache).
const MAX_DIGIT: u32 = 11;
/// Digit width for fewer than [`WIDE_MIN`] keys.
const SMALL_DIGIT: u32 = 8;
/// Keys from which digits are up to [`MAX_DIGIT`] bits wide.
const WIDE_MIN: usize = 1 << 16;

/// Sorts items by key, stably: a least-significant-digit radix sort, one pass per digit
/// of [`digits`] (`differ`: the bits in which the items' keys do not all agree,
/// [`Item::k`]).
fn radix_sort<I: Item>(mut a: Vec<I>, differ: u64) -> Vec<I> {
    let mut b = a.clone();
    let mut count = Vec::new();
    for (shift, width) in digits(a.len(), differ) {
        let mask = (1u64 << width) - 1;
        count.clear();
        count.resize(1 << width, 0usize);
        for x in &a {
            count[((x.k() >> shift) & mask) as usize] += 1;
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
        for &x in &a {
            let d = ((x.k() >> shift) & mask) as usize;
            b[count[d]] = x;
            count[d] += 1;
        }
        std::mem::swap(&mut a, &mut b);
    }
    a
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
fn par_radix_sort<I: Item>(par: &Par, mut a: Vec<I>, differ: u64) -> Vec<I> {
    let n = a.len();
    let blocks = n.div_ceil(BLOCK);
    let mut b: Vec<I> = Vec::with_capacity(n);
    for (shift, width) in digits(n, differ) {
        let (mask, radix) = ((1u64 << width) - 1, 1usize << width);
        let digit = |k: u64| ((k >> shift) & mask) as usize;
        // counts[blk * radix + d]: how many keys of block `blk` have digit `d`.
        let counts: Vec<Vec<usize>> = par.map_blocks(n, |lo, hi| {
            let mut c = vec![0usize; radix];
            for x in &a[lo..hi] {
                c[digit(x.k())] += 1;
            }
            c
        });
        let mut totals = vec![0usize; radix];
        for c in &counts {
            for (t, x) in totals.iter_mut().zip(c) {
                *t += x;
            }
        }
        if totals.contains(&n) {
            continue;
        }
        // offsets[blk][d]: where block `blk`'s first key with digit `d` goes.
        let mut offsets = vec![vec![0usize; radix]; blocks];
        let mut at = 0;
        for d in 0..radix {
            for (blk, c) in counts.iter().enumerate() {
                offsets[blk][d] = at;
                at += c[d];
            }
        }
        let dst = Shared(b.as_mut_ptr());
        let src = &a;
        let offsets = &offsets;
        par.map_blocks(n, |lo, hi| {
            let mut next = offsets[lo / BLOCK].clone();
            for &x in &src[lo..hi] {
                let d = digit(x.k());
                // SAFETY: the offsets give every key of every block its own position in
                // `0..n` (they are the prefix sums of the counts), and `b` has capacity `n`.
                unsafe { dst.at(next[d]).write(x) };
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

/// Keys whose differing bits span at most this many bits are ranked by counting (when
/// there are at least [`COUNTING_RATIO`] keys per bucket).
const COUNTING_BITS: u32 = 20;
/// Fewest keys per bucket for ranking by counting.
const COUNTING_RATIO: usize = 8;

/// `(lo, bits)`: the differing bits `differ` of `n` keys start at bit `lo` and span
/// `bits` bits, few enough to rank the keys by counting ([`counting_rank`]).
fn counting_span(n: usize, differ: u64) -> Option<(u32, u32)> {
    let (lo, bits) = match differ {
        0 => (0, 0),
        d => (d.trailing_zeros(), 64 - d.leading_zeros() - d.trailing_zeros()),
    };
    (bits <= COUNTING_BITS && (1usize << bits).saturating_mul(COUNTING_RATIO) <= n).then_some((lo, bits))
}

/// Ranks keys of few distinct buckets by counting: consecutive pieces of `v` count
/// their keys per bucket, the counts are laid out bucket by bucket and piece by piece,
/// and every element's rank is then the next free place of its bucket, written in
/// order of position. Two reads of the keys and one sequential write, no sort. A
/// stable rank is unique, so how `v` is cut into pieces (one per thread) never shows.
fn counting_rank<T: RankKey>(par: &Par, v: &[T], dst: &mut [std::mem::MaybeUninit<i64>], flip: u64, (lo, bits): (u32, u32)) {
    let (n, mask) = (v.len(), (1u64 << bits) - 1);
    let bucket = move |x: T| (((x.key() ^ flip) >> lo) & mask) as usize;
    let pieces = if n >= 2 * BLOCK { par.threads() } else { 1 };
    let len = n.div_ceil(pieces).max(1);
    let ranges: Vec<(usize, usize)> = (0..n).step_by(len).map(|a| (a, (a + len).min(n))).collect();
    let mut next: Vec<Vec<usize>> = par.map(n, ranges.clone(), |(a, b)| {
        let mut c = vec![0usize; 1 << bits];
        for &x in &v[a..b] {
            c[bucket(x)] += 1;
        }
        c
    });
    let mut at = 0;
    for d in 0..1usize << bits {
        for c in next.iter_mut() {
            let k = c[d];
            c[d] = at;
            at += k;
        }
    }
    let parts = split_mut(dst, ranges.iter().map(|&(a, b)| b - a));
    par.each(n, ranges.into_iter().zip(next).zip(parts).collect(), |(((a, b), mut next), part)| {
        for (o, &x) in part.iter_mut().zip(&v[a..b]) {
            let d = bucket(x);
            o.write(next[d] as i64);
            next[d] += 1;
        }
    });
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
    if v.len() < RADIX_MIN {
        let mut pairs: Vec<(u64, u32)> = v.iter().enumerate().map(|(p, &x)| (x.key() ^ flip, p as u32)).collect();
        pairs.sort_by_key(|&(k, _)| k);
        write_ranks(&pairs, dst);
        return;
    }
    let differ = key_bits(v, flip);
    if let Some(span) = counting_span(v.len(), differ) {
        return counting_rank(&Par::default(), v, dst, flip, span);
    }
    match span(differ) {
        Some(lo) => {
            let packed = v.iter().enumerate().map(|(p, &x)| Packed((((x.key() ^ flip) >> lo) << 32) | p as u64)).collect();
            write_ranks(&radix_sort(packed, packed_bits(differ, lo)), dst);
        }
        None => {
            let pairs = v.iter().enumerate().map(|(p, &x)| (x.key() ^ flip, p as u32)).collect();
            write_ranks(&radix_sort(pairs, differ), dst);
        }
    }
}

/// `dst[position] = rank` for items in sorted order.
fn write_ranks<I: Item>(sorted: &[I], dst: &mut [std::mem::MaybeUninit<i64>]) {
    for (r, x) in sorted.iter().enumerate() {
        dst[x.pos()].write(r as i64);
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
    let differ = par.map_blocks(v.len(), |lo, hi| key_bits(&v[lo..hi], flip)).into_iter().fold(0, |x, y| x | y);
    // A bit in which every block agrees within itself may still differ between blocks:
    // also compare each block's first key with the first block's.
    let first = v.first().map_or(0, |x| x.key() ^ flip);
    let differ = differ | v.iter().step_by(BLOCK).fold(0, |d, x| d | ((x.key() ^ flip) ^ first));
    if let Some(span) = counting_span(v.len(), differ) {
        return counting_rank(par, v, dst, flip, span);
    }
    match span(differ) {
        Some(lo) => par_rank_items(par, v, dst, packed_bits(differ, lo), |x: T, p| Packed((((x.key() ^ flip) >> lo) << 32) | p as u64)),
        None => par_rank_items(par, v, dst, differ, |x: T, p| (x.key() ^ flip, p as u32)),
    }
}

/// The items of `v` (from each element and its position), sorted by [`par_radix_sort`]
/// (`differ`: the differing bits of their keys), and their ranks written to `dst`, every
/// pass over fixed blocks on all threads.
fn par_rank_items<T: RankKey, I: Item>(
    par: &Par,
    v: &[T],
    dst: &mut [std::mem::MaybeUninit<i64>],
    differ: u64,
    item: impl Fn(T, usize) -> I + Sync,
) {
    let n = v.len();
    let mut items: Vec<I> = Vec::with_capacity(n);
    let keys = Shared(items.as_mut_ptr());
    par.map_blocks(n, |lo, hi| {
        for (j, &x) in v[lo..hi].iter().enumerate() {
            // SAFETY: block `lo..hi` writes positions `lo..hi` only; capacity is `n`.
            unsafe { keys.at(lo + j).write(item(x, lo + j)) };
        }
    });
    // SAFETY: `map_blocks` runs every block, so every position of `0..n` was written.
    unsafe { items.set_len(n) };
    let sorted = par_radix_sort(par, items, differ);
    let ranks = Shared(dst.as_mut_ptr());
    let sorted = &sorted;
    par.map_blocks(n, |lo, hi| {
        for (r, x) in sorted[lo..hi].iter().enumerate().map(|(j, x)| (lo + j, x)) {
            // SAFETY: the positions are a permutation of `0..n` (`dst.len() == n`), so
            // blocks write disjoint elements.
            unsafe { (*ranks.at(x.pos())).write(r as i64) };
        }
    });
}
