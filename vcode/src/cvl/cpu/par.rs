//! Parallel execution: fixed blocks, run on the library's thread pool when there is one
//! and the work is large enough.
//!
//! Work is always divided the same way, into blocks of [`BLOCK`] elements (or into
//! [`Chunk`]s of whole segments, long segments cut at [`BLOCK`]-element boundaries),
//! whatever the number of threads; threads only decide who computes which block. Every
//! result, float sums included, is therefore bit-identical on one thread and on many.
//! Work under [`THREADS_FROM`] elements runs on the calling thread and never pays for
//! threads.

use super::seg::Seg;
use super::threads::Pool;
use rayon::prelude::*;
use std::sync::Arc;

/// Elements per block: the unit of parallel work and of blocked reductions and scans.
pub(crate) const BLOCK: usize = 1 << 15;
/// Less work than this (elements plus segments) is one chunk ([`chunks`]).
pub(crate) const GRAIN: usize = 1 << 16;
/// Less work than this (elements plus segments) runs on the calling thread. Waking the
/// other threads for an operation of under a tenth of a millisecond cost more than it
/// saved: at `1 << 16` two threads against one (alternating runs, medians of 21-25) made
/// the sparse matrix-vector product of 10,000 rows (85K elements) 1.26-1.53x slower;
/// from `1 << 17` 0.97x, and no size of the benchmarks' sweep more than 5% slower than
/// on one thread (this VM's noise).
pub(crate) const THREADS_FROM: usize = 1 << 17;

/// The execution context of a library: its thread pool, if it has more than one thread.
#[derive(Debug, Clone, Default)]
pub(crate) struct Par {
    pool: Option<Arc<Pool>>,
}

impl Par {
    /// A context for `threads` threads.
    pub(crate) fn new(threads: usize) -> Par {
        Par { pool: if threads > 1 { super::threads::pool(threads) } else { None } }
    }
    /// Number of threads.
    pub(crate) fn threads(&self) -> usize {
        self.pool.as_ref().map_or(1, |p| p.threads())
    }
    /// The pool when `work` is worth running on it.
    fn pool_for(&self, work: usize) -> Option<&Arc<Pool>> {
        self.pool.as_ref().filter(|_| work >= THREADS_FROM)
    }

    /// Calls `f(lo, block)` for the consecutive [`BLOCK`]-element blocks of `out`
    /// (`lo` = the block's offset in `out`). Blocks are skipped once an interrupt is
    /// requested ([`crate::interrupt::skip_work`]).
    pub(crate) fn blocks_mut<T: Send>(&self, out: &mut [T], f: impl Fn(usize, &mut [T]) + Sync + Send) {
        let f = |lo: usize, blk: &mut [T]| {
            if !crate::interrupt::skip_work() {
                f(lo, blk)
            }
        };
        match self.pool_for(out.len()) {
            Some(pool) => pool.run(|| {
                out.par_chunks_mut(BLOCK).enumerate().for_each(|(b, blk)| f(b * BLOCK, blk))
            }),
            None => out.chunks_mut(BLOCK).enumerate().for_each(|(b, blk)| f(b * BLOCK, blk)),
        }
    }

    /// `f(lo, hi)` for the consecutive [`BLOCK`]-element blocks of `0..n`, results in order.
    pub(crate) fn map_blocks<R: Send>(&self, n: usize, f: impl Fn(usize, usize) -> R + Sync + Send) -> Vec<R> {
        let blocks = n.div_ceil(BLOCK);
        let one = |b: usize| f(b * BLOCK, ((b + 1) * BLOCK).min(n));
        match self.pool_for(n) {
            Some(pool) => pool.run(|| (0..blocks).into_par_iter().map(one).collect()),
            None => (0..blocks).map(one).collect(),
        }
    }

    /// `f(item)` for every item; `work` (elements plus segments in all) decides whether
    /// threads are worth it. Items are skipped once an interrupt is requested
    /// ([`crate::interrupt::skip_work`]).
    pub(crate) fn each<I: Send>(&self, work: usize, items: Vec<I>, f: impl Fn(I) + Sync + Send) {
        let f = |item: I| {
            if !crate::interrupt::skip_work() {
                f(item)
            }
        };
        match self.pool_for(work) {
            Some(pool) if items.len() > 1 => pool.run(|| items.into_par_iter().for_each(f)),
            _ => items.into_iter().for_each(f),
        }
    }

    /// `f(&mut state, item)` for every item, results in order, where each thread's
    /// `state` comes from `init` and is reused for the items it runs (scratch memory that
    /// then stays mapped); see [`Par::each`].
    pub(crate) fn map_init<I: Send, S, R: Send>(
        &self,
        work: usize,
        items: Vec<I>,
        init: impl Fn() -> S + Sync + Send,
        f: impl Fn(&mut S, I) -> R + Sync + Send,
    ) -> Vec<R> {
        match self.pool_for(work) {
            Some(pool) if items.len() > 1 => pool.run(|| items.into_par_iter().map_init(init, f).collect()),
            _ => {
                let mut s = init();
                items.into_iter().map(|i| f(&mut s, i)).collect()
            }
        }
    }

    /// `f(item)` for every item, results in order (see [`Par::each`]).
    pub(crate) fn map<I: Send, R: Send>(&self, work: usize, items: Vec<I>, f: impl Fn(I) -> R + Sync + Send) -> Vec<R> {
        match self.pool_for(work) {
            Some(pool) if items.len() > 1 => pool.run(|| items.into_par_iter().map(f).collect()),
            _ => items.into_iter().map(f).collect(),
        }
    }
}

/// A run of segments `s0..s1` and the elements `e0..e1` of them it covers. A segment
/// longer than [`BLOCK`] is cut into pieces (consecutive chunks with the same single
/// segment, cut at multiples of [`BLOCK`] from the segment's start); otherwise chunks hold
/// whole segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub s0: usize,
    pub s1: usize,
    pub e0: usize,
    pub e1: usize,
}

impl Chunk {
    /// The lengths of this chunk's segments when it holds them whole (every chunk but
    /// the pieces of a segment cut into blocks): kernels then walk the segments and their
    /// elements with running offsets, without a lookup per segment.
    pub(crate) fn whole<'a>(&self, s: &'a Seg) -> Option<&'a [i64]> {
        let c = *self;
        let whole = c.s1 > c.s0 + 1 || (c.s1 == c.s0 + 1 && s.start(c.s0) == c.e0 && s.start(c.s0) + s.len(c.s0) == c.e1);
        whole.then(|| &s.lens()[c.s0..c.s1])
    }
    /// `(segment, start, end)` of the elements of each segment of this chunk: the whole
    /// segment, or the piece of it this chunk covers.
    pub(crate) fn pieces<'a>(&self, s: &'a Seg) -> impl Iterator<Item = (usize, usize, usize)> + 'a {
        let c = *self;
        (c.s0..c.s1).map(move |k| {
            let (st, len) = (s.start(k), s.len(k));
            (k, st.max(c.e0), (st + len).min(c.e1))
        })
    }
}

/// Cuts `s` into chunks of about [`BLOCK`] units of work (one per element and one per
/// segment). With `split_long`, a segment over [`BLOCK`] elements is cut into pieces;
/// otherwise it is one chunk. One chunk covering everything when the work is under
/// [`GRAIN`] (the split never changes a result). On one thread too, large work is cut:
/// [`Par::each`] polls for an interrupt between chunks.
pub(crate) fn chunks(_par: &Par, s: &Seg, split_long: bool) -> Vec<Chunk> {
    let (m, n) = (s.m(), s.total());
    if n + m < GRAIN {
        return vec![Chunk { s0: 0, s1: m, e0: 0, e1: n }];
    }
    cut(s, split_long)
}

/// The chunks of [`chunks`] whatever the threads: a segment over [`BLOCK`] elements cut
/// into its blocks (with `split_long`), shorter ones grouped into chunks of about
/// [`BLOCK`] units of work. Chunks that bound the memory a pass needs, or whose results
/// must not depend on the thread count, come from here.
pub(crate) fn cut(s: &Seg, split_long: bool) -> Vec<Chunk> {
    s.cut(split_long).to_vec()
}

/// [`cut`] of the descriptor of segment starts `starts` and lengths `lens` over `n`
/// elements (made once per descriptor: [`Seg::cut`]). A chunk from segment `s0` takes
/// segments until their work (one unit per element and one per segment) reaches
/// [`BLOCK`]: it ends after the first segment `k - 1` with `starts[k] + k >= starts[s0] +
/// s0 + BLOCK`, found by a binary search over the starts, so a descriptor of a hundred
/// thousand short segments is cut in a few dozen searches rather than a walk over its
/// lengths (quicksort's deep levels cut one per operation, on the calling thread). Only
/// that last segment can be longer than [`BLOCK`] (every earlier one ends below the
/// mark); such a segment is a chunk of its own, or with `split_long` its blocks are.
pub(crate) fn cut_starts(starts: &[usize], lens: &[i64], n: usize, split_long: bool) -> Vec<Chunk> {
    let m = starts.len();
    debug_assert_eq!(lens.len(), m);
    let mut out = Vec::with_capacity((n + m) / BLOCK + 2);
    let mut s0 = 0;
    while s0 < m {
        let mark = starts[s0] + s0 + BLOCK;
        // The first segment after `s0` at or past the mark (the work before segment `k`
        // is `starts[k] + k`, increasing in `k`); `m` when none is.
        let (mut k, mut hi) = (s0 + 1, m);
        while k < hi {
            let mid = k + (hi - k) / 2;
            if starts[mid] + mid < mark {
                k = mid + 1;
            } else {
                hi = mid;
            }
        }
        let last = k - 1;
        let len = lens[last] as usize;
        if len > BLOCK {
            if s0 < last {
                out.push(Chunk { s0, s1: last, e0: starts[s0], e1: starts[last] });
            }
            let st = starts[last];
            if split_long {
                let mut lo = 0;
                while lo < len {
                    let hi = (lo + BLOCK).min(len);
                    out.push(Chunk { s0: last, s1: k, e0: st + lo, e1: st + hi });
                    lo = hi;
                }
            } else {
                out.push(Chunk { s0: last, s1: k, e0: st, e1: st + len });
            }
        } else {
            out.push(Chunk { s0, s1: k, e0: starts[s0], e1: if k == m { n } else { starts[k] } });
        }
        s0 = k;
    }
    out
}

/// Cuts `out` into consecutive mutable pieces of the given lengths (which sum to at most
/// its length).
pub(crate) fn split_mut<T>(mut out: &mut [T], lens: impl IntoIterator<Item = usize>) -> Vec<&mut [T]> {
    let mut v = Vec::new();
    for l in lens {
        let (a, b) = std::mem::take(&mut out).split_at_mut(l);
        v.push(a);
        out = b;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunks a walk over the lengths makes: grow a chunk segment by segment until its
    /// work reaches a block; a segment over a block alone (or in its blocks).
    fn walked(lens: &[i64], split_long: bool) -> Vec<Chunk> {
        let (mut out, mut s0, mut e0, mut st, mut cost) = (Vec::new(), 0, 0, 0, 0);
        for (k, &l) in lens.iter().enumerate() {
            let len = l as usize;
            if len > BLOCK {
                if s0 < k {
                    out.push(Chunk { s0, s1: k, e0, e1: st });
                }
                let step = if split_long { BLOCK } else { len };
                let mut lo = 0;
                while lo < len {
                    let hi = (lo + step).min(len);
                    out.push(Chunk { s0: k, s1: k + 1, e0: st + lo, e1: st + hi });
                    lo = hi;
                }
                st += len;
                (s0, e0, cost) = (k + 1, st, 0);
                continue;
            }
            st += len;
            cost += len + 1;
            if cost >= BLOCK {
                out.push(Chunk { s0, s1: k + 1, e0, e1: st });
                (s0, e0, cost) = (k + 1, st, 0);
            }
        }
        if s0 < lens.len() {
            out.push(Chunk { s0, s1: lens.len(), e0, e1: st });
        }
        out
    }

    /// Cutting by searches over the starts gives the chunks of the walk: short segments
    /// (a hundred thousand of one to twenty elements), empty ones, segments just under,
    /// at and over a block, and a chunk's work landing exactly on a block.
    #[test]
    fn cutting_by_search_matches_the_walk_over_the_lengths() {
        let b = BLOCK as i64;
        let mut rng = super::super::test_rng(5);
        let mut next = || rng() as i64;
        let layouts: Vec<Vec<i64>> = vec![
            vec![],
            vec![0],
            vec![0; 200_000],
            vec![b - 1, 0],
            vec![b - 1, 1, 1],
            vec![b, b + 1, 3, 2 * b + 5, 0, 0, b - 2],
            vec![3, 3 * b + 1],
            (0..100_000).map(|_| next() % 21).collect(),
            (0..3000).map(|k| if k % 97 == 0 { b + next() % b } else { next() % 300 }).collect(),
        ];
        for lens in layouts {
            let mut starts = Vec::with_capacity(lens.len());
            let mut n = 0usize;
            for &l in &lens {
                starts.push(n);
                n += l as usize;
            }
            for split_long in [false, true] {
                assert_eq!(cut_starts(&starts, &lens, n, split_long), walked(&lens, split_long), "{} segments, split_long {split_long}", lens.len());
            }
        }
    }
}
