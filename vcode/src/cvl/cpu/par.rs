//! Parallel execution: fixed blocks, run on the library's thread pool when there is one
//! and the work is large enough.
//!
//! Work is always divided the same way, into blocks of [`BLOCK`] elements (or into
//! [`Chunk`]s of whole segments, long segments cut at [`BLOCK`]-element boundaries),
//! whatever the number of threads; threads only decide who computes which block. Every
//! result, float sums included, is therefore bit-identical on one thread and on many.
//! Work under [`GRAIN`] elements runs on the calling thread and never pays for threads.

use super::seg::Seg;
use rayon::prelude::*;
use std::sync::Arc;

/// Elements per block: the unit of parallel work and of blocked reductions and scans.
pub(crate) const BLOCK: usize = 1 << 15;
/// Less work than this (elements plus segments) runs on the calling thread.
pub(crate) const GRAIN: usize = 1 << 16;

/// The execution context of a library: its thread pool, if it has more than one thread.
#[derive(Debug, Clone, Default)]
pub(crate) struct Par {
    pool: Option<Arc<rayon::ThreadPool>>,
}

impl Par {
    /// A context for `threads` threads.
    pub(crate) fn new(threads: usize) -> Par {
        Par { pool: if threads > 1 { super::threads::pool(threads) } else { None } }
    }
    /// Number of threads.
    pub(crate) fn threads(&self) -> usize {
        self.pool.as_ref().map_or(1, |p| p.current_num_threads())
    }
    /// The pool when `work` is worth running on it.
    fn pool_for(&self, work: usize) -> Option<&rayon::ThreadPool> {
        self.pool.as_deref().filter(|_| work >= GRAIN)
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
            Some(pool) => pool.install(|| {
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
            Some(pool) => pool.install(|| (0..blocks).into_par_iter().map(one).collect()),
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
            Some(pool) if items.len() > 1 => pool.install(|| items.into_par_iter().for_each(f)),
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
            Some(pool) if items.len() > 1 => pool.install(|| items.into_par_iter().map_init(init, f).collect()),
            _ => {
                let mut s = init();
                items.into_iter().map(|i| f(&mut s, i)).collect()
            }
        }
    }

    /// `f(item)` for every item, results in order (see [`Par::each`]).
    pub(crate) fn map<I: Send, R: Send>(&self, work: usize, items: Vec<I>, f: impl Fn(I) -> R + Sync + Send) -> Vec<R> {
        match self.pool_for(work) {
            Some(pool) if items.len() > 1 => pool.install(|| items.into_par_iter().map(f).collect()),
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

/// [`cut`] of the descriptor of lengths `lens` over `n` elements (made once per
/// descriptor: [`Seg::cut`]).
pub(crate) fn cut_lens(lens: &[i64], n: usize, split_long: bool) -> Vec<Chunk> {
    let m = lens.len();
    let mut out = Vec::with_capacity((n + m) / BLOCK + 2);
    // The chunk being grown starts at segment `s0`, element `e0`; `st` is the start of
    // segment `k` (a running sum: no lookup per segment).
    let (mut s0, mut e0, mut st, mut cost) = (0, 0, 0, 0);
    for (k, &l) in lens.iter().enumerate() {
        let len = l as usize;
        if len > BLOCK {
            if s0 < k {
                out.push(Chunk { s0, s1: k, e0, e1: st });
            }
            if split_long {
                let mut lo = 0;
                while lo < len {
                    let hi = (lo + BLOCK).min(len);
                    out.push(Chunk { s0: k, s1: k + 1, e0: st + lo, e1: st + hi });
                    lo = hi;
                }
            } else {
                out.push(Chunk { s0: k, s1: k + 1, e0: st, e1: st + len });
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
    if s0 < m {
        out.push(Chunk { s0, s1: m, e0, e1: n });
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
