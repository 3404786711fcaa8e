//! Permutes, gathers and the segment-wise vector/scalar operations (`DIST`, `INDEX`,
//! `EXTRACT`, `REPLACE`). Every index is checked once per segment (a vectorisable pass),
//! then the loops run unchecked. Work is spread over the threads by chunks of segments;
//! scatters keep "last writer wins" by never splitting a segment, unless a bitmap over
//! the destination shows no two writers share a place (then a long segment's blocks
//! scatter in parallel); gathers and the segment fills split long segments into blocks.
//! An `INDEX` not written out ([`Progressions`]) is read as runs: the permutes by it
//! copy them. The flattened appends, `if` merges and splits permute one segment by an
//! `INDEX` whose own segments are the instances, every run of consecutive places
//! ([`unit`]): those are checked and copied in one pass per chunk ([`scatter_unit`],
//! [`gather_unit`]), with no plan first.

use super::data::Elem;
use super::par::{chunks, split_mut, Chunk, Par, BLOCK, THREADS_FROM};
use super::mem::build;
use super::seg::Seg;
use crate::trap::Trap;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// Checks that every (flagged) index of one segment is in `0..len`; the first bad one is
/// the trap.
#[inline]
fn check_seg(ix: &[i64], f: Option<&[bool]>, len: usize) -> Result<(), Trap> {
    let out = |k: i64| (k as u64) >= len as u64;
    let bad = match f {
        None => ix.iter().fold(false, |b, &k| b | out(k)),
        Some(f) => ix.iter().zip(f).fold(false, |b, (&k, &g)| b | (g & out(k))),
    };
    if !bad {
        return Ok(());
    }
    let first = ix.iter().enumerate().find(|&(j, &k)| f.is_none_or(|f| f[j]) && out(k)).map_or(0, |(_, &k)| k);
    Err(Trap::index(first, len))
}

/// Scatter of one checked segment.
#[inline]
fn scatter_seg<T: Copy>(to: &mut [T], src: &[T], ix: &[i64], f: Option<&[bool]>) {
    match f {
        None => {
            for (&x, &k) in src.iter().zip(ix) {
                // SAFETY: `check_seg(ix, None, to.len())` passed.
                unsafe { *to.get_unchecked_mut(k as usize) = x };
            }
        }
        Some(f) => {
            for ((&x, &k), &g) in src.iter().zip(ix).zip(f) {
                if g {
                    // SAFETY: `check_seg(ix, Some(f), to.len())` passed: flagged indices are in range.
                    unsafe { *to.get_unchecked_mut(k as usize) = x };
                }
            }
        }
    }
}

/// Whether `ix` ascends strictly.
#[inline]
fn ascends(ix: &[i64]) -> bool {
    ix.iter().zip(ix.iter().skip(1)).fold(true, |up, (a, b)| up & (a < b))
}

/// The indices (and flags) of a scatter; `checked` only when [`check_scatter`] made it, so
/// that a scatter after that check does not check every index a second time.
#[derive(Clone, Copy)]
pub(super) struct Targets<'a> {
    i: &'a [i64],
    f: Option<&'a [bool]>,
    /// Unflagged, and strictly ascending within every segment (found by
    /// [`check_scatter`]): no two indices hit one place.
    ascending: bool,
    checked: bool,
    /// Unflagged, and no two indices of a segment alike (known, not checked).
    distinct: bool,
}

impl<'a> Targets<'a> {
    /// Indices (and flags) still to be checked by the scatter.
    pub(super) fn new(i: &'a [i64], f: Option<&'a [bool]>) -> Self {
        Targets { i, f, checked: false, ascending: false, distinct: false }
    }
    /// Indices known to permute the positions of every segment (a result of `RANK`,
    /// over segments of the destination's lengths): nothing to check.
    pub(super) fn permutation(i: &'a [i64]) -> Self {
        Targets { i, f: None, checked: true, ascending: false, distinct: true }
    }
}

/// Scatters the (flagged) elements of each source segment of `v` into the matching
/// destination segment of `out` (`PERMUTE`, `DPERMUTE`, `FPERMUTE`, `DFPERMUTE`). The
/// first bad index in element order is the trap (then `out` is partly written).
pub(super) fn scatter<T: Elem>(par: &Par, out: &mut [T], v: &[T], t: Targets, ss: &Seg, sd: &Seg) -> Result<(), Trap> {
    let one_long_segment = t.f.is_none() && par.threads() > 1 && ss.total() >= THREADS_FROM && {
        let longest = ss.lens().iter().copied().max().unwrap_or(0) as usize;
        longest > BLOCK && longest * par.threads() > ss.total()
    };
    if one_long_segment {
        // A segment longer than a thread's share: its blocks scatter in parallel when no
        // two indices hit one place (then the order of writes cannot matter). Measured on
        // a permutation of 4M elements at 2 threads: 10-15% faster in one segment (the
        // random writes are bound by memory); over two such segments, already one per
        // thread, the check alone made it 86 -> 113 ms, hence the condition. Indices that
        // ascend (found by the range check: the merge of an `if`'s two branches in
        // quicksort, every level) need no bitmap.
        let t = if t.checked { t } else { check_scatter(par, t.i, None, ss, sd)? };
        let cs = chunks(par, ss, true);
        if t.ascending || t.distinct || distinct_targets(par, t.i, ss, sd, &cs) {
            let to = Shared(out.as_mut_ptr());
            par.each(ss.total() + ss.m(), cs, |c| {
                for (k, lo, hi) in c.pieces(ss) {
                    let base = sd.start(k);
                    for (&x, &i) in v[lo..hi].iter().zip(&t.i[lo..hi]) {
                        // SAFETY: `check_scatter` put every index in its destination
                        // segment (or they permute its positions), so `base + i <
                        // out.len()`; the indices ascend, permute, or `distinct_targets`
                        // found no two sources with one target, so no other thread
                        // writes it.
                        unsafe { to.put(base + i as usize, x) };
                    }
                }
            });
            if crate::interrupt::abandoned() {
                // Blocks were skipped: not written.
                return Err(Trap::new(crate::trap::TrapKind::Interrupted));
            }
            return Ok(());
        }
        return scatter(&Par::default(), out, v, t, ss, sd);
    }
    let m = ss.m();
    let dstart = |k: usize| if k < m { sd.start(k) } else { sd.total() };
    let cs = chunks(par, ss, false);
    let parts = split_mut(out, cs.iter().map(|c| dstart(c.s1) - dstart(c.s0)));
    let res = par.map(ss.total() + m, cs.into_iter().zip(parts).collect(), |(c, part)| {
        let base = dstart(c.s0);
        for k in c.s0..c.s1 {
            let (st, len, dst, dlen) = (ss.start(k), ss.len(k), sd.start(k) - base, sd.len(k));
            let (ix, fl) = (&t.i[st..st + len], t.f.map(|f| &f[st..st + len]));
            if !t.checked {
                check_seg(ix, fl, dlen)?;
            }
            scatter_seg(&mut part[dst..dst + dlen], &v[st..st + len], ix, fl);
        }
        Ok(())
    });
    res.into_iter().collect()
}

/// `DPERMUTE` of `v` by checked, strictly ascending indices `t` into a `DIST` of `vals`
/// over `sd` not written yet: each chunk of the destination is filled with its segments'
/// values (as [`dist`] writes it) and then takes the elements whose indices fall in it,
/// while it is in cache, on the thread that filled it (chunks in parallel). Writing the
/// `DIST` out first and then scattering over it read the whole destination twice, and on
/// two threads the scatter (one thread for a source under [`THREADS_FROM`] elements: the
/// one-element segments of the `then` part of quicksort's merge, every level) found half
/// of it in the other core's cache. `None` unless the indices are checked, ascending and
/// unflagged and the descriptors have one value of `vals` per segment alike.
pub(super) fn scatter_ascending_into_dist<T: Elem>(par: &Par, vals: &[T], v: &[T], t: Targets, ss: &Seg, sd: &Seg) -> Result<Option<Vec<T>>, Trap> {
    if !(t.checked && t.ascending && t.f.is_none()) || ss.m() != sd.m() || vals.len() != sd.m() || t.i.len() != ss.total() || v.len() != ss.total() {
        return Ok(None);
    }
    build(sd.total(), |out| {
        let cs = chunks(par, sd, true);
        let parts = split_mut(out, cs.iter().map(|c| c.e1 - c.e0));
        par.each(sd.total() + sd.m() + ss.total(), cs.into_iter().zip(parts).collect(), |(c, part)| {
            dist_chunk(part, &c, vals, sd);
            for (k, lo, hi) in c.pieces(sd) {
                let (base, st) = (sd.start(k), ss.start(k));
                let ix = &t.i[st..st + ss.len(k)];
                // The elements of segment `k` whose places lie in this piece (all of them
                // for a whole segment): the indices ascend.
                let (a, b) = if lo == base && hi == base + sd.len(k) {
                    (0, ix.len())
                } else {
                    (ix.partition_point(|&i| (i as usize) < lo - base), ix.partition_point(|&i| (i as usize) < hi - base))
                };
                for (&i, &x) in ix[a..b].iter().zip(&v[st + a..st + b]) {
                    // SAFETY: `check_scatter` put `i` in `0..sd.len(k)`, and `a..b` are
                    // the elements whose `i` is in `lo - base..hi - base`: `base + i` is in
                    // `lo..hi`, within this chunk's part `c.e0..c.e1`.
                    unsafe { part.get_unchecked_mut(base + i as usize - c.e0).write(x) };
                }
            }
        });
        Ok(())
    })
    .map(Some)
}

/// `PERMUTE` by indices known to permute the positions of every segment of `s`
/// ([`Targets::permutation`]: a live result of `RANK` over segments of these lengths):
/// every place is written exactly once, so the result is written straight into fresh
/// memory, chunks in parallel (no zero-fill first, no check, no order to keep).
pub(super) fn permute_by_permutation<T: Elem>(par: &Par, v: &[T], t: Targets, s: &Seg) -> Result<Vec<T>, Trap> {
    if !(t.distinct && t.checked && t.f.is_none()) || t.i.len() != s.total() || v.len() != s.total() {
        return Err(Trap::ty("PERMUTE by indices not known to permute their segments"));
    }
    build(s.total(), |out| {
        let to = Shared(out.as_mut_ptr() as *mut T);
        par.each(s.total() + s.m(), chunks(par, s, true), |c| {
            for (k, lo, hi) in c.pieces(s) {
                let base = s.start(k);
                for (&x, &i) in v[lo..hi].iter().zip(&t.i[lo..hi]) {
                    // SAFETY: the indices of segment `k` are a permutation of
                    // `0..s.len(k)` (`Targets::permutation`'s contract), so `base + i` is
                    // in `out` and no other element, in this chunk or another, writes it.
                    unsafe { to.put(base + i as usize, x) };
                }
            }
        });
        // Every place written: `build` marks them initialised (or the blocks skipped by an
        // interrupt make it an interrupt trap).
        Ok(())
    })
}

/// `out`'s elements, written from several threads at places no two of them share.
struct Shared<T>(*mut T);
// SAFETY: only used where every thread writes places no other thread touches.
unsafe impl<T: Send> Sync for Shared<T> {}
unsafe impl<T: Send> Send for Shared<T> {}

impl<T> Shared<T> {
    /// Writes element `p`.
    ///
    /// # Safety
    /// `p` is in bounds of the slice this points into, and no other thread reads or
    /// writes element `p` meanwhile.
    unsafe fn put(&self, p: usize, x: T) {
        // SAFETY: the caller's contract.
        unsafe { self.0.add(p).write(x) }
    }
}

/// True when no two indices of a scatter (checked: in their destination segments) hit one
/// place: a bitmap over the destination, set in parallel over the chunks `cs` of `ss`.
fn distinct_targets(par: &Par, i: &[i64], ss: &Seg, sd: &Seg, cs: &[Chunk]) -> bool {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    let bits: Vec<AtomicU64> = (0..sd.total().div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
    let clash = AtomicBool::new(false);
    par.each(ss.total() + ss.m(), cs.to_vec(), |c| {
        for (k, lo, hi) in c.pieces(ss) {
            if clash.load(Relaxed) {
                return;
            }
            let base = sd.start(k);
            for &ix in &i[lo..hi] {
                let p = base + ix as usize;
                let bit = 1u64 << (p % 64);
                if bits[p / 64].fetch_or(bit, Relaxed) & bit != 0 {
                    clash.store(true, Relaxed);
                    return;
                }
            }
        }
    });
    !clash.load(Relaxed) && !crate::interrupt::abandoned()
}

/// Checks the (flagged) indices of a scatter without writing (for the in-place forms,
/// which must leave their operand unchanged on a trap); the checked targets, and whether
/// unflagged ones ascend strictly in every segment (in the same pass).
pub(super) fn check_scatter<'a>(par: &Par, i: &'a [i64], f: Option<&'a [bool]>, ss: &Seg, sd: &Seg) -> Result<Targets<'a>, Trap> {
    let cs = chunks(par, ss, true);
    let res = par.map(ss.total() + ss.m(), cs.clone(), |c| {
        let mut up = f.is_none();
        for (k, lo, hi) in c.pieces(ss) {
            check_seg(&i[lo..hi], f.map(|f| &f[lo..hi]), sd.len(k))?;
            up = up && ascends(&i[lo..hi]);
        }
        Ok(up)
    });
    let ups = res.into_iter().collect::<Result<Vec<bool>, Trap>>()?;
    // Where a segment goes on from one chunk into the next, it ascends across the cut.
    let across = |c: &Chunk| c.s0 >= ss.m() || c.e0 <= ss.start(c.s0) || c.e0 >= i.len() || i[c.e0 - 1] < i[c.e0];
    let ascending = ups.iter().all(|&u| u) && cs.iter().skip(1).all(across);
    Ok(Targets { i, f, checked: true, ascending, distinct: ascending })
}

/// Gather: destination position `e` of segment `k` gets `v[start_ss(k) + i[e]]` (flagged
/// positions only with `f`; the others get zero/false) (`BPERMUTE`, `BFPERMUTE`).
pub(super) fn gather<T: Elem>(par: &Par, v: &[T], i: &[i64], f: Option<&[bool]>, ss: &Seg, sd: &Seg) -> Result<Vec<T>, Trap> {
    build(sd.total(), |out| {
        let cs = chunks(par, sd, true);
        let parts = split_mut(out, cs.iter().map(|c| c.e1 - c.e0));
        let res = par.map(sd.total() + sd.m(), cs.into_iter().zip(parts).collect(), |(c, part)| {
            for (k, lo, hi) in c.pieces(sd) {
                let src = &v[ss.start(k)..ss.start(k) + ss.len(k)];
                let (ix, fl, o) = (&i[lo..hi], f.map(|f| &f[lo..hi]), &mut part[lo - c.e0..hi - c.e0]);
                check_seg(ix, fl, src.len())?;
                match fl {
                    None => {
                        for (o, &k) in o.iter_mut().zip(ix) {
                            // SAFETY: `check_seg` passed: `k < src.len()`.
                            o.write(unsafe { *src.get_unchecked(k as usize) });
                        }
                    }
                    Some(fl) => {
                        for ((o, &k), &g) in o.iter_mut().zip(ix).zip(fl) {
                            // SAFETY: `check_seg` passed: flagged `k < src.len()`.
                            o.write(if g { unsafe { *src.get_unchecked(k as usize) } } else { T::default() });
                        }
                    }
                }
            }
            Ok(())
        });
        res.into_iter().collect()
    })
}

/// Checks that every index of `i` is in `0..len`, in parallel blocks; the trap names the
/// first bad one (in position order), as [`gather`]'s would.
pub(super) fn check_indices(par: &Par, i: &[i64], len: usize) -> Result<(), Trap> {
    par.map_blocks(i.len(), |lo, hi| check_seg(&i[lo..hi], None, len)).into_iter().collect()
}

/// A `BPERMUTE` of `src` (one segment) by written-out indices, kept undone
/// ([`check_indices`] passed on `ix` against `src`); its readers gather it a range at a
/// time ([`Picked::range`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Picked<'a, T> {
    src: &'a [T],
    ix: &'a [i64],
}

impl<'a, T: Copy> Picked<'a, T> {
    /// The gather of `src` by `ix`, whose indices the caller checked against `src`.
    pub(super) fn of(src: &'a [T], ix: &'a [i64]) -> Self {
        Picked { src, ix }
    }
    /// Writes elements `lo..hi` over `out` (cleared first).
    #[inline]
    pub(super) fn range(&self, lo: usize, hi: usize, out: &mut Vec<T>) {
        out.clear();
        out.extend(self.ix[lo..hi].iter().map(|&k| self.src[k as usize]));
    }
}

/// Segments of at most this many elements are written by [`short_segment`].
const SHORT: usize = 8;

/// Writes a segment of `l <= SHORT` elements at `out[pos..]`, element `t` being `at(t)`,
/// as [`SHORT`] stores whatever `l` is (no loop whose trip count varies from one segment
/// to the next, whose exit mispredicts when segments are short and of mixed lengths):
/// the stores past the segment land on the next segments' places, which are written
/// after it. False, writing nothing, when the segment is longer or fewer than [`SHORT`]
/// places are left; the caller then writes it element by element.
#[inline(always)]
fn short_segment<T: Copy>(out: &mut [MaybeUninit<T>], pos: usize, l: usize, at: impl Fn(usize) -> T) -> bool {
    if l > SHORT || pos + SHORT > out.len() {
        return false;
    }
    for (t, o) in out[pos..pos + SHORT].iter_mut().enumerate() {
        o.write(at(t));
    }
    true
}

/// `DIST`: segment `k` is `x[k]` repeated.
pub(super) fn dist<T: Elem>(par: &Par, x: &[T], s: &Seg) -> Result<Vec<T>, Trap> {
    build(s.total(), |out| {
        let cs = chunks(par, s, true);
        let parts = split_mut(out, cs.iter().map(|c| c.e1 - c.e0));
        par.each(s.total() + s.m(), cs.into_iter().zip(parts).collect(), |(c, part)| dist_chunk(part, &c, x, s));
        Ok(())
    })
}

/// Writes chunk `c`'s part of the `DIST` of `x` over `s` (all of `part`).
fn dist_chunk<T: Elem>(part: &mut [MaybeUninit<T>], c: &Chunk, x: &[T], s: &Seg) {
    if let Some(lens) = c.whole(s) {
        let mut pos = 0;
        for (&l, &y) in lens.iter().zip(&x[c.s0..c.s1]) {
            let l = l as usize;
            if !short_segment(part, pos, l, |_| y) {
                for o in &mut part[pos..pos + l] {
                    o.write(y);
                }
            }
            pos += l;
        }
        return;
    }
    for (k, lo, hi) in c.pieces(s) {
        let y = x[k];
        for o in &mut part[lo - c.e0..hi - c.e0] {
            o.write(y);
        }
    }
}

/// `INDEX`: segment `k` is `b[k] + j*st[k]` for `j < len(k)`.
pub(super) fn index(par: &Par, b: &[i64], st: &[i64], s: &Seg) -> Result<Vec<i64>, Trap> {
    build(s.total(), |out| {
        let cs = chunks(par, s, true);
        let parts = split_mut(out, cs.iter().map(|c| c.e1 - c.e0));
        par.each(s.total() + s.m(), cs.into_iter().zip(parts).collect(), |(c, part)| {
            if let Some(lens) = c.whole(s) {
                let mut pos = 0;
                for ((&l, &b0), &k0) in lens.iter().zip(&b[c.s0..c.s1]).zip(&st[c.s0..c.s1]) {
                    let l = l as usize;
                    if !short_segment(part, pos, l, |t| b0.wrapping_add((t as i64).wrapping_mul(k0))) {
                        let mut x = b0;
                        for o in &mut part[pos..pos + l] {
                            o.write(x);
                            x = x.wrapping_add(k0);
                        }
                    }
                    pos += l;
                }
                return;
            }
            for (k, lo, hi) in c.pieces(s) {
                let (b0, k0, j0) = (b[k], st[k], (lo - s.start(k)) as i64);
                // An induction variable (not a zip with a range), which the compiler
                // vectorises: `b0 + j * k0` for `j = j0, j0 + 1, ...`, wrapping.
                let mut x = b0.wrapping_add(j0.wrapping_mul(k0));
                for o in &mut part[lo - c.e0..hi - c.e0] {
                    o.write(x);
                    x = x.wrapping_add(k0);
                }
            }
        });
        Ok(())
    })
}

/// The work of one `EXTRACT` read against [`THREADS_FROM`]: a read at a place of its own segment
/// (a cache miss where segments are long) costs several elements of a stream. Counted as
/// one, quicksort's pivot reads (30-60K segments at its deep levels) never ran on two
/// threads (per instruction over depths 17-32 of q1m: 4.3 ms on one thread, 4.0 on two).
const EXTRACT_WEIGHT: usize = 8;

/// `EXTRACT`: `r[k] = v[start(k) + i[k]]`.
pub(super) fn extract<T: Elem>(par: &Par, v: &[T], i: &[i64], s: &Seg) -> Result<Vec<T>, Trap> {
    build(s.m(), |out| {
        let cs = chunks(par, s, false);
        let parts = split_mut(out, cs.iter().map(|c| c.s1 - c.s0));
        let (starts, lens) = (s.starts(), s.lens());
        let res = par.map(s.m() * EXTRACT_WEIGHT, cs.into_iter().zip(parts).collect(), |(c, part)| {
            // Every index checked against its segment's length in one vectorisable pass
            // (the first bad one is the trap), then the reads unchecked.
            let (ix, ls, sts) = (&i[c.s0..c.s1], &lens[c.s0..c.s1], &starts[c.s0..c.s1]);
            let bad = ix.iter().zip(ls).fold(false, |b, (&k, &l)| b | ((k as u64) >= l as u64));
            if bad {
                for (&k, &l) in ix.iter().zip(ls) {
                    check_seg(std::slice::from_ref(&k), None, l as usize)?;
                }
            }
            for ((o, &st), &k) in part.iter_mut().zip(sts).zip(ix) {
                // SAFETY: `0 <= k < len` of this segment (checked above), and the segment
                // lies within `v` (the caller checked `v` against the descriptor).
                o.write(unsafe { *v.get_unchecked(st + k as usize) });
            }
            Ok(())
        });
        res.into_iter().collect()
    })
}

/// Checks the indices of a `REPLACE`.
pub(super) fn check_replace(i: &[i64], s: &Seg) -> Result<(), Trap> {
    s.ranges().zip(i).try_for_each(|((_, len), k)| check_seg(std::slice::from_ref(k), None, len))
}

/// `REPLACE` into `out` (indices checked by [`check_replace`]).
pub(super) fn replace<T: Elem>(out: &mut [T], i: &[i64], x: &[T], s: &Seg) {
    for ((st, _), (&k, &y)) in s.ranges().zip(i.iter().zip(x)) {
        out[st + k as usize] = y;
    }
}

/// An `INDEX` not written out: segment `k` of `seg` is `start[k] + j * stride[k]`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Progressions<'a> {
    pub start: &'a [i64],
    pub stride: &'a [i64],
    pub seg: &'a Seg,
}

/// A run of positions `lo..hi` inside one segment of an outer descriptor and one
/// progression: index `first + (pos - lo) * stride` at `pos`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Run {
    lo: usize,
    hi: usize,
    first: i64,
    stride: i64,
}

impl Run {
    /// The run's indices, in position order (wrapping, as `INDEX` computes them).
    pub(super) fn indices(self) -> impl Iterator<Item = i64> {
        (0..(self.hi - self.lo) as i64).map(move |t| self.first.wrapping_add(t.wrapping_mul(self.stride)))
    }
    /// True when every index of the run is in `0..len` (the progression is monotone, so
    /// its ends decide; computed wide, so no index wraps).
    fn within(&self, len: usize) -> bool {
        let first = self.first as i128;
        let last = first + (self.hi - self.lo - 1) as i128 * self.stride as i128;
        first.min(last) >= 0 && first.max(last) < len as i128
    }
}

impl Progressions<'_> {
    /// Whether the progressions lie over the segments of `s` (one run per segment).
    pub(super) fn over(&self, s: &Seg) -> bool {
        std::ptr::eq(self.seg, s) || Arc::ptr_eq(self.seg.lens_buf(), s.lens_buf()) || self.seg.lens() == s.lens()
    }
    /// Calls `f(k, run)` with the runs of the pieces of chunk `c` of `s` (`k` the segment
    /// of `s` holding the run). `same` is [`over`](Self::over)`(s)`: then each piece is
    /// one run, made straight from its segment (no search: a permute of many short
    /// segments pays little per run).
    #[inline]
    pub(super) fn chunk_runs(&self, c: &Chunk, s: &Seg, same: bool, mut f: impl FnMut(usize, Run)) {
        if same {
            let (starts, lens) = (s.starts(), s.lens());
            for k in c.s0..c.s1 {
                let (a, l) = (starts[k], lens[k] as usize);
                let (lo, hi) = (a.max(c.e0), (a + l).min(c.e1));
                if lo < hi {
                    let stride = self.stride[k];
                    let first = self.start[k].wrapping_add(((lo - a) as i64).wrapping_mul(stride));
                    f(k, Run { lo, hi, first, stride });
                }
            }
        } else {
            let mut j = None;
            for (k, lo, hi) in c.pieces(s).filter(|&(_, lo, hi)| lo < hi) {
                self.runs(&mut j, lo, hi, |_, r| f(k, r));
            }
        }
    }
    /// Calls `f(k, run)` with the runs of `lo..hi` (positions ascending, `lo < hi <=
    /// total`): one per progression `k` it meets. `j` is the progression holding `lo`
    /// (from a search the first time, then carried over by the caller between increasing
    /// calls).
    pub(super) fn runs(&self, j: &mut Option<usize>, lo: usize, hi: usize, mut f: impl FnMut(usize, Run)) {
        let (starts, lens) = (self.seg.starts(), self.seg.lens());
        let mut k = match *j {
            Some(k) if starts[k] <= lo => k,
            _ => self.seg.segment_at(lo),
        };
        let mut pos = lo;
        while pos < hi {
            let mut e = starts[k] + lens[k] as usize;
            while e <= pos {
                k += 1;
                e = starts[k] + lens[k] as usize;
            }
            let end = e.min(hi);
            let stride = self.stride[k];
            let first = self.start[k].wrapping_add(((pos - starts[k]) as i64).wrapping_mul(stride));
            f(k, Run { lo: pos, hi: end, first, stride });
            pos = end;
        }
        *j = Some(k);
    }
}

/// A `BPERMUTE` by an `INDEX` not written out, kept undone: position `p` of segment `k`
/// of the index's descriptor is element `start[k] + (p - its start) * stride[k]` of
/// segment `k` of `ss` in `src`. Made only when every index is in range
/// ([`Gathered::new`]); its readers take it a range at a time ([`Gathered::range`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Gathered<'a, T> {
    pub src: &'a [T],
    pub ix: Progressions<'a>,
    pub ss: &'a Seg,
}

impl<'a, T: Copy> Gathered<'a, T> {
    /// The gather of `src` (over `ss`) into `sd` by `ix`, when `ix` lies over `sd` (a
    /// progression per destination segment) and every index is in its source segment;
    /// `None` otherwise.
    pub(super) fn new(src: &'a [T], ix: Progressions<'a>, ss: &'a Seg, sd: &Seg) -> Option<Self> {
        let m = ix.seg.m();
        if ss.m() != m || src.len() != ss.total() || !ix.over(sd) {
            return None;
        }
        let (lens, starts) = (ix.seg.lens(), ix.seg.starts());
        let ok = (0..m).all(|k| {
            let l = lens[k] as usize;
            l == 0 || Run { lo: starts[k], hi: starts[k] + l, first: ix.start[k], stride: ix.stride[k] }.within(ss.len(k))
        });
        ok.then_some(Gathered { src, ix, ss })
    }
    /// Appends elements `lo..hi` (`lo < hi <=` the length) to `out`; `j` as for
    /// [`Progressions::runs`].
    #[inline]
    pub(super) fn range(&self, j: &mut Option<usize>, lo: usize, hi: usize, out: &mut Vec<T>) {
        self.ix.runs(j, lo, hi, |k, r| {
            let base = self.ss.start(k) as i64;
            if r.stride == 1 {
                let a = (base + r.first) as usize;
                let run = &self.src[a..a + (r.hi - r.lo)];
                out.reserve(run.len());
                let len = out.len();
                super::mem::write_all(&mut out.spare_capacity_mut()[..run.len()], run);
                // SAFETY: the `run.len()` elements past `len` were just written.
                unsafe { out.set_len(len + run.len()) };
            } else {
                out.extend(r.indices().map(|x| self.src[(base + x) as usize]));
            }
        });
    }
    /// `EXTRACT` from it by `i` over `s`: the indices checked against `s` (the trap names
    /// the first bad one), then taken through the progressions; `None` when `s` is not
    /// the index's descriptor (the caller then writes the gather out).
    pub(super) fn extract(&self, par: &Par, i: &[i64], s: &Seg) -> Option<Result<Vec<T>, Trap>>
    where
        T: Elem,
    {
        if !self.ix.over(s) || i.len() != s.m() {
            return None;
        }
        if let Err(t) = check_replace(i, s) {
            return Some(Err(t));
        }
        // Segment `k`'s element `i[k]` is element `start[k] + i[k] * stride[k]` of source
        // segment `k` (in range: `Gathered::new` checked every progression).
        let at: Vec<i64> = i.iter().enumerate().map(|(k, &x)| self.ix.start[k].wrapping_add(x.wrapping_mul(self.ix.stride[k]))).collect();
        Some(extract(par, self.src, &at, self.ss))
    }
}

/// `BPERMUTE` by an `INDEX` not written out: each run of the destination reads a
/// progression of its source segment (a copy where the stride is 1), in one pass that
/// checks each run before copying it. `None` when an index is out of range (the caller
/// then gathers by the written-out indices, which names the first bad one).
pub(super) fn gather_runs<T: Elem>(par: &Par, v: &[T], ix: Progressions, ss: &Seg, sd: &Seg) -> Result<Option<Vec<T>>, Trap> {
    if unit(ix, sd, ss) {
        return gather_unit(par, v, ix);
    }
    let same = ix.over(sd);
    gather_checked(par, sd, ix.seg.m(), |c, part| {
        let mut ok = true;
        ix.chunk_runs(c, sd, same, |k, r| {
            let src = &v[ss.start(k)..ss.start(k) + ss.len(k)];
            ok = ok && r.within(src.len());
            if !ok {
                return;
            }
            let o = &mut part[r.lo - c.e0..r.hi - c.e0];
            if r.stride == 1 {
                super::mem::write_all(o, &src[r.first as usize..r.first as usize + o.len()]);
            } else {
                let mut x = r.first;
                for o in o {
                    // SAFETY: `r.within(src.len())` held for this run just above.
                    o.write(unsafe { *src.get_unchecked(x as usize) });
                    x = x.wrapping_add(r.stride);
                }
            }
        });
        ok
    })
}

/// A gather into fresh memory over the chunks of `sd` (the destination; `m` more units
/// of work, the index's segments), each written by `fill`, which checks every run as it
/// copies it and returns false at a bad one (its chunk then stops, and the result, not
/// fully written, is dropped): `None` when any chunk did.
fn gather_checked<T: Elem>(par: &Par, sd: &Seg, m: usize, fill: impl Fn(&Chunk, &mut [MaybeUninit<T>]) -> bool + Sync + Send) -> Result<Option<Vec<T>>, Trap> {
    let cs = chunks(par, sd, true);
    let mut out_of_range = false;
    let res = build(sd.total(), |out| {
        let parts = split_mut(out, cs.iter().map(|c| c.e1 - c.e0));
        let ok = par.map(sd.total() + m, cs.iter().zip(parts).collect(), |(c, part)| fill(c, part));
        out_of_range = ok.contains(&false);
        if out_of_range {
            return Err(Trap::ty("an index of a run is out of range"));
        }
        Ok(())
    });
    match res {
        Err(_) if out_of_range => Ok(None),
        r => r.map(Some),
    }
}

/// [`gather_runs`] by unit progressions over the one destination segment ([`unit`]) from
/// the one source segment `v`: every run a copy of consecutive elements, checked as it is
/// copied, chunks of the progressions' segments in parallel. `None` when an index is out
/// of range.
fn gather_unit<T: Elem>(par: &Par, v: &[T], ix: Progressions) -> Result<Option<Vec<T>>, Trap> {
    gather_checked(par, ix.seg, ix.seg.m(), |c, part| {
        let o = part.as_mut_ptr() as *mut T;
        each_unit_run(c, ix.seg, ix.start, |lo, len, a| {
            if a < 0 || a as u64 + len as u64 > v.len() as u64 {
                return None;
            }
            // SAFETY: the chunk's runs tile it, so `lo - c.e0 + len` is at most its
            // length; the source run `a..a + len` was just checked to lie in `v`.
            unsafe { super::mem::copy_run(o.add(lo - c.e0), v.as_ptr().add(a as usize), len) };
            Some(())
        })
        .is_some()
    })
}

/// Calls `f(lo, len, a)` for the runs of chunk `c` of unit progressions over `s` (first
/// targets `start`), in order: positions `lo..lo + len` of `s` (within the chunk) and the
/// first target `a` of that piece of its progression. Stops at the first `None`.
#[inline(always)]
fn each_unit_run(c: &Chunk, s: &Seg, start: &[i64], mut f: impl FnMut(usize, usize, i64) -> Option<()>) -> Option<()> {
    if let Some(lens) = c.whole(s) {
        let mut lo = c.e0;
        for (&l, &a) in lens.iter().zip(&start[c.s0..c.s1]) {
            let l = l as usize;
            if l > 0 {
                f(lo, l, a)?;
                lo += l;
            }
        }
    } else {
        for k in c.s0..c.s1 {
            let st = s.start(k);
            let (lo, hi) = (st.max(c.e0), (st + s.len(k)).min(c.e1));
            if lo < hi {
                f(lo, hi - lo, start[k].wrapping_add((lo - st) as i64))?;
            }
        }
    }
    Some(())
}

/// Where a gather by `ix` (from `ss` into `sd`) reads one contiguous run of the source in
/// order: `ix`'s progressions lie over `sd`'s segments, and every non-empty destination
/// segment is a run of stride 1 (or of one element) inside its source segment, starting
/// where the previous one ended. Returns the run's first position over the whole source
/// (`None` otherwise, also when an index is out of range: the caller's gather then names
/// it).
pub(super) fn contiguous(ix: Progressions, ss: &Seg, sd: &Seg) -> Option<usize> {
    if ix.seg != sd || ss.m() != sd.m() {
        return None;
    }
    let (mut first, mut end) = (None, 0usize);
    for k in 0..sd.m() {
        let l = ix.seg.len(k);
        if l == 0 {
            continue;
        }
        let st = usize::try_from(ix.start[k]).ok()?;
        if (ix.stride[k] != 1 && l > 1) || st.checked_add(l)? > ss.len(k) {
            return None;
        }
        let a = ss.start(k) + st;
        if first.is_some() && a != end {
            return None;
        }
        first.get_or_insert(a);
        end = a + l;
    }
    first
}

/// How a scatter by an `INDEX` not written out runs, from one pass over its runs that
/// checks every one lands in its destination segment.
pub(super) struct Plan {
    chunks: Vec<Chunk>,
    /// When the runs ascend (each one's targets all above the previous one's, in
    /// positions of the whole destination): where each chunk's targets end. No two runs
    /// then write one place, so the chunks run in parallel, each into its own part.
    ends: Option<Vec<usize>>,
    /// Every run covers a range without holes (stride 1, or one element).
    solid: bool,
    /// The `INDEX` lies over the source's segments ([`Progressions::over`]).
    same: bool,
}

/// What one chunk's runs are: all in range, their targets' first and end (over the whole
/// destination), ascending, without holes.
struct Span {
    ok: bool,
    first: Option<usize>,
    end: usize,
    ascending: bool,
    solid: bool,
}

impl Run {
    /// The targets' range, `lo..hi`, within a segment the run is [`within`](Run::within).
    fn targets(&self) -> (usize, usize) {
        let last = self.first + (self.hi - self.lo - 1) as i64 * self.stride;
        (self.first.min(last) as usize, self.first.max(last) as usize + 1)
    }
}

/// Checks every run of a scatter by `ix` (from `ss` into `sd`) and plans it; `None` when
/// an index is out of range (the caller then scatters by the written-out indices, which
/// names the first bad one).
pub(super) fn plan(par: &Par, ix: Progressions, ss: &Seg, sd: &Seg) -> Option<Plan> {
    let cs = chunks(par, ss, true);
    let same = ix.over(ss);
    let spans = par.map(ss.total() + ix.seg.m(), cs.clone(), |c| {
        let mut sp = Span { ok: true, first: None, end: 0, ascending: true, solid: true };
        ix.chunk_runs(&c, ss, same, |k, r| {
            if !r.within(sd.len(k)) {
                sp.ok = false;
                return;
            }
            let (a, b) = r.targets();
            let (a, b) = (sd.start(k) + a, sd.start(k) + b);
            sp.ascending &= sp.first.is_none() || a >= sp.end;
            sp.solid &= r.stride == 1 || r.hi - r.lo == 1;
            sp.first = sp.first.or(Some(a));
            sp.end = b;
        });
        sp
    });
    if spans.iter().any(|sp| !sp.ok) {
        return None;
    }
    let solid = spans.iter().all(|sp| sp.solid);
    let mut end = 0;
    let mut ends = Vec::with_capacity(spans.len());
    for sp in &spans {
        match sp.first {
            Some(a) if sp.ascending && a >= end => end = sp.end,
            Some(_) => return Some(Plan { chunks: chunks(par, ss, false), ends: None, solid, same }),
            None => {}
        }
        ends.push(end);
    }
    Some(Plan { chunks: cs, ends: Some(ends), solid, same })
}

/// Writes run `r` of the source `v` into `out`, where target `t` of the run (a position
/// in its destination segment) is `out[t + off]`.
#[inline]
fn put_run<T: Copy>(out: &mut [T], off: i64, v: &[T], r: Run) {
    let src = &v[r.lo..r.hi];
    if r.stride == 1 {
        let at = (r.first + off) as usize;
        super::mem::copy_over(&mut out[at..at + src.len()], src);
    } else {
        let mut x = r.first + off;
        for &y in src {
            out[x as usize] = y;
            x += r.stride;
        }
    }
}

/// `DPERMUTE` by an `INDEX` not written out, [`plan`]ned: each run of a source segment
/// goes to a progression of its destination segment (a copy where the stride is 1). Runs
/// that ascend are written in parallel; others in element order within a segment (the
/// last writer wins, as in [`scatter`]).
pub(super) fn scatter_runs<T: Elem>(par: &Par, out: &mut [T], v: &[T], ix: Progressions, ss: &Seg, sd: &Seg, plan: &Plan) {
    let work = ss.total() + ix.seg.m();
    if let Some(ends) = &plan.ends {
        let starts = std::iter::once(0).chain(ends.iter().copied());
        let parts = split_mut(out, starts.zip(ends).map(|(a, &b)| b - a));
        let starts = std::iter::once(0).chain(ends.iter().copied());
        let same = plan.same;
        par.each(work, plan.chunks.iter().zip(parts).zip(starts).collect(), |((c, part), base)| {
            ix.chunk_runs(c, ss, same, |k, r| put_run(part, sd.start(k) as i64 - base as i64, v, r));
        });
        return;
    }
    let m = ss.m();
    let dstart = |k: usize| if k < m { sd.start(k) } else { sd.total() };
    let parts = split_mut(out, plan.chunks.iter().map(|c| dstart(c.s1) - dstart(c.s0)));
    let same = plan.same;
    par.each(work, plan.chunks.iter().zip(parts).collect(), |(c, part)| {
        let base = dstart(c.s0);
        ix.chunk_runs(c, ss, same, |k, r| put_run(&mut part[sd.start(k) - base..sd.start(k) - base + sd.len(k)], 0, v, r));
    });
}

/// A vector of `n` places being written by scatters: `buf` (length 0, capacity `n`) holds
/// every place outside `gaps` (ascending, disjoint, non-empty ranges), which no scatter
/// has written yet. The scatters of an append into a `DIST` (quicksort's `[lesser,
/// greater]`, `++`, an `if`'s merge) each fill a part; the last leaves no gap, and no
/// place is written twice. [`Holey::fill`] writes the gaps with the `DIST`'s values.
#[derive(Debug)]
pub(super) struct Holey<T> {
    buf: Vec<T>,
    n: usize,
    pub gaps: Vec<(usize, usize)>,
}

impl<T: Copy> Holey<T> {
    /// The vector, the gaps written with `vals` over `ds` (a `DIST` of `n` elements), in
    /// parallel blocks, its memory taken out of `self`; an interrupt trap if blocks were
    /// skipped, `self` then left as it was (the gaps it wrote are written again by the
    /// next fill).
    pub(super) fn fill(&mut self, par: &Par, vals: &[T], ds: &Seg) -> Result<Vec<T>, Trap>
    where
        T: Send + Sync,
    {
        let (gaps, n) = (&self.gaps, self.n);
        par.blocks_mut(&mut self.buf.spare_capacity_mut()[..n], |lo, blk| {
            let hi = lo + blk.len();
            let mut k = None;
            for &(a, b) in &gaps[gaps.partition_point(|&(_, b)| b <= lo)..] {
                if a >= hi {
                    break;
                }
                let (a, b) = (a.max(lo), b.min(hi));
                let mut pos = a;
                let mut kk = *k.get_or_insert_with(|| ds.segment_at(a));
                while pos < b {
                    while ds.start(kk) + ds.len(kk) <= pos {
                        kk += 1;
                    }
                    let e = (ds.start(kk) + ds.len(kk)).min(b);
                    for o in &mut blk[pos - lo..e - lo] {
                        o.write(vals[kk]);
                    }
                    pos = e;
                }
                k = Some(kk);
            }
        });
        if crate::interrupt::abandoned() {
            // Blocks may have been skipped: not written.
            return Err(Trap::new(crate::trap::TrapKind::Interrupted));
        }
        let mut buf = std::mem::take(&mut self.buf);
        // SAFETY: every place outside the gaps was written by the scatters that made this
        // (`scatter_holey`, `scatter_into_holes`), and every gap just above (no block was
        // skipped); the capacity is at least `n`.
        unsafe { buf.set_len(n) };
        Ok(buf)
    }
}

/// Writes the runs of a planned scatter (ascending and without holes: `plan.ends`,
/// `plan.solid`) into `out`, chunks in parallel; returns the places of `gaps` (all of
/// `out` when `None`) that no run covers, as ascending disjoint non-empty ranges. Each
/// chunk owns the places from the previous chunk's `ends` to its own (the last one to the
/// end) and finds the uncovered ones of its part as it writes, so no list of the runs'
/// targets is made.
#[allow(clippy::too_many_arguments)]
fn scatter_uninit<T: Elem>(
    par: &Par,
    out: &mut [MaybeUninit<T>],
    v: &[T],
    ix: Progressions,
    ss: &Seg,
    sd: &Seg,
    plan: &Plan,
    ends: &[usize],
    gaps: Option<&[(usize, usize)]>,
) -> Vec<(usize, usize)> {
    let last = ends.len().saturating_sub(1);
    let n = out.len();
    let whole = [(0, n)];
    let gaps = gaps.unwrap_or(&whole);
    let starts = std::iter::once(0).chain(ends.iter().copied());
    let spans: Vec<(usize, usize)> = starts.zip(ends).enumerate().map(|(c, (a, &b))| (a, if c == last { n } else { b })).collect();
    let parts = split_mut(out, spans.iter().map(|&(a, b)| b - a));
    let same = plan.same;
    let pieces = par.map(ss.total() + ix.seg.m(), plan.chunks.iter().zip(parts).zip(spans).collect(), |((ch, part), (base, top))| {
        let mut left = Uncovered::new(gaps, base);
        ix.chunk_runs(ch, ss, same, |k, r| {
            let (a, b) = r.targets();
            let (a, b) = (sd.start(k) + a, sd.start(k) + b);
            super::mem::write_all(&mut part[a - base..b - base], &v[r.lo..r.hi]);
            left.wrote(a, b);
        });
        left.until(top)
    });
    joined(pieces)
}

/// The uncovered places the chunks of a scatter found, each chunk's ascending and after
/// the previous chunk's, as one list (a range ending where the next chunk's first begins
/// joined to it).
fn joined(pieces: Vec<Vec<(usize, usize)>>) -> Vec<(usize, usize)> {
    let mut left: Vec<(usize, usize)> = Vec::with_capacity(pieces.iter().map(Vec::len).sum());
    for (a, b) in pieces.into_iter().flatten() {
        match left.last_mut() {
            Some(l) if l.1 == a => l.1 = b,
            _ => left.push((a, b)),
        }
    }
    left
}

/// The places of some gaps (ascending, disjoint ranges) that writes made in ascending
/// order leave uncovered, found as the writes come ([`Uncovered::wrote`]): one walk over
/// the gaps and the written ranges together, no list of the ranges kept.
struct Uncovered<'g> {
    gaps: &'g [(usize, usize)],
    /// The first gap that may reach past `pos`.
    g: usize,
    /// Everything below this is accounted for.
    pos: usize,
    left: Vec<(usize, usize)>,
}

impl<'g> Uncovered<'g> {
    /// Nothing written yet from place `from` on.
    fn new(gaps: &'g [(usize, usize)], from: usize) -> Self {
        Uncovered { gaps, g: gaps.partition_point(|&(_, b)| b <= from), pos: from, left: Vec::new() }
    }
    /// Places `a..b` were written (`a` at or past the end of every earlier write).
    #[inline]
    fn wrote(&mut self, a: usize, b: usize) {
        if a > self.pos {
            self.gaps_in(a);
        }
        self.pos = self.pos.max(b);
    }
    /// The uncovered places of the gaps below `top` (at or past every write), ascending,
    /// adjacent ones joined.
    fn until(mut self, top: usize) -> Vec<(usize, usize)> {
        if top > self.pos {
            self.gaps_in(top);
        }
        self.left
    }
    /// Takes the parts of the gaps inside `pos..hi` as uncovered.
    fn gaps_in(&mut self, hi: usize) {
        let (gaps, lo) = (self.gaps, self.pos);
        while self.g < gaps.len() && gaps[self.g].1 <= lo {
            self.g += 1;
        }
        while self.g < gaps.len() && gaps[self.g].0 < hi {
            let (a, b) = (gaps[self.g].0.max(lo), gaps[self.g].1.min(hi));
            match self.left.last_mut() {
                Some(l) if l.1 == a => l.1 = b,
                _ => self.left.push((a, b)),
            }
            if gaps[self.g].1 > hi {
                break;
            }
            self.g += 1;
        }
    }
}

/// `DPERMUTE` by an `INDEX` not written out into a `DIST` not written out, when the runs
/// ascend without holes: every chunk writes its runs in parallel into fresh memory, and
/// the places between them are left as gaps (the `DIST` is never written out whole
/// first, and places a later scatter writes are not written twice). `None` for another
/// plan.
fn scatter_holey<T: Elem>(par: &Par, v: &[T], ix: Progressions, ss: &Seg, sd: &Seg, plan: &Plan) -> Result<Option<Holey<T>>, Trap> {
    let Some(ends) = plan.ends.as_ref().filter(|_| plan.solid && !plan.chunks.is_empty()) else { return Ok(None) };
    let n = sd.total();
    let mut buf = super::mem::alloc::<T>(n)?;
    let gaps = scatter_uninit(par, &mut buf.spare_capacity_mut()[..n], v, ix, ss, sd, plan, ends, None);
    if crate::interrupt::abandoned() {
        // Chunks may have been skipped: not written.
        return Err(Trap::new(crate::trap::TrapKind::Interrupted));
    }
    Ok(Some(Holey { buf, n, gaps }))
}

/// Whether a permute by `ix` lying over `over` (a scatter's source, a gather's
/// destination) with `other` at the far end takes the unit path ([`scatter_unit`],
/// [`gather_unit`]): both one segment (an `INDEX` whose own segments are the instances,
/// as the flattened appends, merges and splits make them), and every progression of
/// stride 1 or of at most one element, so that each is a run of consecutive places.
pub(super) fn unit(ix: Progressions, over: &Seg, other: &Seg) -> bool {
    let m = ix.seg.m();
    over.m() == 1
        && other.m() == 1
        && ix.seg.total() == over.total()
        && ix.start.len() == m
        && ix.stride.len() == m
        && ix.stride.iter().zip(ix.seg.lens()).all(|(&k, &l)| k == 1 || l <= 1)
}

/// A scatter by unit progressions ([`unit`]) of `v` into `out` (the destination's `n`
/// places), in one pass over the runs that checks and writes them: chunks of the
/// progressions' segments, each writing its runs in order into its own span of the
/// destination (from its first target to the next chunk's), every run checked to lie
/// above the previous one and inside the span before it is written. Returns the places
/// of `gaps` (all of `out` when `None`) that no run covers, ascending; `None` when a run
/// fails a check or the chunks' first targets do not ascend (the caller then takes the
/// planned path, which writes every run again: what this wrote is written over or left
/// in the gaps).
pub(super) fn scatter_unit<T: Elem>(par: &Par, out: &mut [MaybeUninit<T>], v: &[T], ix: Progressions, gaps: Option<&[(usize, usize)]>) -> Option<Vec<(usize, usize)>> {
    let n = out.len();
    let s = ix.seg;
    if v.len() != s.total() || ix.start.len() != s.m() {
        return None;
    }
    let cs = chunks(par, s, true);
    // The first target of each chunk's first run, as a signed place.
    let first = |c: &Chunk| {
        let mut at = None;
        each_unit_run(c, s, ix.start, |_, _, a| {
            at = Some(a);
            None
        });
        at
    };
    // Span bounds: chunk `c` writes places `bounds[c]..bounds[c + 1]`.
    let mut bounds = vec![n; cs.len() + 1];
    for (c, ch) in cs.iter().enumerate().rev() {
        bounds[c] = match first(ch) {
            Some(a) if c > 0 => usize::try_from(a).ok().filter(|&a| a <= n)?,
            _ if c > 0 => bounds[c + 1],
            _ => 0,
        };
    }
    if bounds.windows(2).any(|w| w[0] > w[1]) {
        return None;
    }
    let parts = split_mut(out, bounds.windows(2).map(|w| w[1] - w[0]));
    let items: Vec<_> = cs.iter().zip(parts).zip(bounds.windows(2)).collect();
    let pieces = par.map(s.total() + s.m(), items, |((c, part), w)| {
        let (base, top) = (w[0], w[1]);
        match gaps {
            None => {
                let mut left = Vec::new();
                let pos = unit_runs(c, s, ix.start, v, part, base, top, |pos, a, _| {
                    if a > pos {
                        left.push((pos, a));
                    }
                })?;
                if pos < top {
                    left.push((pos, top));
                }
                Some(left)
            }
            Some(g) => {
                let mut left = Uncovered::new(g, base);
                unit_runs(c, s, ix.start, v, part, base, top, |_, a, b| left.wrote(a, b))?;
                Some(left.until(top))
            }
        }
    });
    let pieces: Option<Vec<_>> = pieces.into_iter().collect();
    Some(joined(pieces?))
}

/// The runs of chunk `c` of the unit progressions over `s` (first targets `start`), of
/// `v` into `part` (places `base..top` of the destination), in order: each checked to lie
/// at or above the previous one's end and below `top`, then copied, then `note(pos, a,
/// b)` told (`pos` the previous end, `a..b` its places). The end of the last run; `None`
/// at the first run that fails the check.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn unit_runs<T: Copy>(
    c: &Chunk,
    s: &Seg,
    start: &[i64],
    v: &[T],
    part: &mut [MaybeUninit<T>],
    base: usize,
    top: usize,
    mut note: impl FnMut(usize, usize, usize),
) -> Option<usize> {
    let mut pos = base;
    let out = part.as_mut_ptr() as *mut T;
    each_unit_run(c, s, start, |lo, len, a| {
        if a < pos as i64 || a as u64 + len as u64 > top as u64 {
            return None;
        }
        let a = a as usize;
        // SAFETY: `base <= pos <= a` and `a + len <= top`: places `a - base..a - base + len`
        // lie in `part` (`top - base` places); source `lo..lo + len` lies in `v` (the
        // progressions' segments cover it: `scatter_unit` checked `v`'s length).
        unsafe { super::mem::copy_run(out.add(a - base), v.as_ptr().add(lo), len) };
        note(pos, a, a + len);
        pos = a + len;
        Some(())
    })?;
    Some(pos)
}

/// [`scatter_unit`] over the written elements of `out`; false when it does not apply
/// (what it wrote is then written again by the planned path, with the runs it did not
/// reach).
pub(super) fn scatter_unit_over<T: Elem>(par: &Par, out: &mut [T], v: &[T], ix: Progressions) -> bool {
    // SAFETY: the same memory as initialised elements; `scatter_unit` only writes
    // elements into it.
    let out = unsafe { &mut *(out as *mut [T] as *mut [MaybeUninit<T>]) };
    scatter_unit(par, out, v, ix, Some(&[])).is_some() && !crate::interrupt::abandoned()
}

/// A `DPERMUTE` into a `DIST` not written out, as `how` says, when its runs can be
/// written alone into fresh memory, the places between them left as gaps: planned runs
/// that ascend without holes ([`scatter_holey`]) or unit runs ([`scatter_unit_holey`]).
/// `None` otherwise (written-out indices: [`scatter_ascending_into_dist`]).
pub(super) fn holey<T: Elem>(how: HoleWrite, v: &[T], ss: &Seg, sd: &Seg) -> Result<Option<Holey<T>>, Trap> {
    match how {
        HoleWrite::Runs(par, ix, plan) => scatter_holey(par, v, ix, ss, sd, plan),
        HoleWrite::Unit(par, ix) => scatter_unit_holey(par, v, ix, sd.total()),
        HoleWrite::Written(..) => Ok(None),
    }
}

/// [`scatter_unit`] into fresh memory, the places between the runs left as gaps (a
/// `DPERMUTE` into a `DIST` not written out); `None` as for [`scatter_unit`].
fn scatter_unit_holey<T: Elem>(par: &Par, v: &[T], ix: Progressions, n: usize) -> Result<Option<Holey<T>>, Trap> {
    let mut buf = super::mem::alloc::<T>(n)?;
    let gaps = scatter_unit(par, &mut buf.spare_capacity_mut()[..n], v, ix, None);
    if crate::interrupt::abandoned() {
        // Chunks may have been skipped: not written.
        return Err(Trap::new(crate::trap::TrapKind::Interrupted));
    }
    Ok(gaps.map(|gaps| Holey { buf, n, gaps }))
}

/// A `DPERMUTE` into a vector with gaps ([`write_into_holes`]): by the runs of an `INDEX`
/// not written out, planned, or by checked written-out indices.
#[derive(Clone, Copy)]
pub(super) enum HoleWrite<'a> {
    Runs(&'a Par, Progressions<'a>, &'a Plan),
    /// By unit progressions ([`unit`]), unplanned ([`scatter_unit`]).
    Unit(&'a Par, Progressions<'a>),
    Written(&'a Par, Targets<'a>),
}

/// `DPERMUTE` of `v` (over `ss`) into `h` (over `sd`) as `how` says, when it can write
/// into the gaps' memory ([`scatter_into_holes`], [`scatter_written_into_holes`]); false,
/// writing nothing, otherwise.
pub(super) fn write_into_holes<T: Elem>(h: &mut Holey<T>, v: &[T], how: HoleWrite, ss: &Seg, sd: &Seg) -> Result<bool, Trap> {
    match how {
        HoleWrite::Runs(par, ix, plan) => scatter_into_holes(par, h, v, ix, ss, sd, plan),
        HoleWrite::Unit(par, ix) => {
            if sd.total() != h.n {
                return Ok(false);
            }
            let gaps = scatter_unit(par, &mut h.buf.spare_capacity_mut()[..h.n], v, ix, Some(&h.gaps));
            if crate::interrupt::abandoned() {
                return Err(Trap::new(crate::trap::TrapKind::Interrupted));
            }
            match gaps {
                Some(g) => {
                    h.gaps = g;
                    Ok(true)
                }
                None => Ok(false),
            }
        }
        HoleWrite::Written(par, t) => scatter_written_into_holes(par, h, v, t, ss, sd),
    }
}

/// `DPERMUTE` by written-out indices into `h` (its gaps not written yet), checked by
/// [`check_scatter`] and ascending (quicksort's `equal` in the middle of its `++`): the
/// places written leave the gaps. Chunks of whole segments write in parallel, each into
/// the part of the destination its segments own, finding the gaps it leaves there as it
/// writes. False, writing nothing, for indices that do not ascend.
fn scatter_written_into_holes<T: Elem>(par: &Par, h: &mut Holey<T>, v: &[T], t: Targets, ss: &Seg, sd: &Seg) -> Result<bool, Trap> {
    let m = ss.m();
    if !t.checked || !t.ascending || t.f.is_some() || sd.total() != h.n || v.len() != t.i.len() || sd.m() != m {
        return Ok(false);
    }
    let dstart = |k: usize| if k < m { sd.start(k) } else { sd.total() };
    // Chunks of whole segments, in order: their parts of the destination tile it.
    let cs = chunks(par, ss, false);
    let spans: Vec<(usize, usize)> = cs.iter().map(|c| (dstart(c.s0), dstart(c.s1))).collect();
    let out = &mut h.buf.spare_capacity_mut()[..h.n];
    let parts = split_mut(out, spans.iter().map(|&(a, b)| b - a));
    let gaps = &h.gaps;
    let pieces = par.map(ss.total() + m, cs.iter().zip(parts).zip(spans).collect(), |((c, part), (base, top))| {
        let mut left = Uncovered::new(gaps, base);
        for k in c.s0..c.s1 {
            let (st, len, at) = (ss.start(k), ss.len(k), sd.start(k) - base);
            for (&x, &i) in v[st..st + len].iter().zip(&t.i[st..st + len]) {
                // `check_scatter` put every index in its destination segment, ascending.
                let p = at + i as usize;
                part[p].write(x);
                left.wrote(base + p, base + p + 1);
            }
        }
        left.until(top)
    });
    if crate::interrupt::abandoned() {
        // Chunks may have been skipped: their places are not written, but they left the
        // gaps; the vector is dropped with the trap.
        return Err(Trap::new(crate::trap::TrapKind::Interrupted));
    }
    h.gaps = joined(pieces);
    Ok(true)
}

/// `DPERMUTE` by an `INDEX` not written out into `h` (its gaps not written yet), when the
/// runs ascend without holes: the runs are written and the places they cover leave the
/// gaps. False, writing nothing, for another plan.
fn scatter_into_holes<T: Elem>(par: &Par, h: &mut Holey<T>, v: &[T], ix: Progressions, ss: &Seg, sd: &Seg, plan: &Plan) -> Result<bool, Trap> {
    let Some(ends) = plan.ends.as_ref().filter(|_| plan.solid && !plan.chunks.is_empty() && sd.total() == h.n) else { return Ok(false) };
    let gaps = scatter_uninit(par, &mut h.buf.spare_capacity_mut()[..h.n], v, ix, ss, sd, plan, ends, Some(&h.gaps));
    if crate::interrupt::abandoned() {
        // Chunks may have been skipped: their places are not written, but they left the
        // gaps; the vector is dropped with the trap.
        return Err(Trap::new(crate::trap::TrapKind::Interrupted));
    }
    h.gaps = gaps;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::data::Data;
    use super::*;
    use std::sync::Arc;

    /// The unit path ([`unit`]): scatters by runs of consecutive places from one source
    /// segment into one destination segment, whose `INDEX` carries the instances' segments
    /// (the flattened appends and merges), and the gather back by the same runs, give what
    /// the written-out indices give: into a `DIST` (gaps between the runs, filled with its
    /// value), into a vector with gaps (two halves of the instances, one after the other),
    /// and over a written vector; layouts of many short instances, of instances longer
    /// than a block (their pieces write their own places), of empty ones, on one thread
    /// and two. Runs that do not ascend, or that leave the destination, are refused (the
    /// planned path takes them); a gather out of range too.
    #[test]
    fn unit_runs_scatter_and_gather_as_written_indices_do() {
        use super::super::par::BLOCK;
        let mut next = super::super::test_rng(41);
        for case in 0..24 {
            let lens: Vec<i64> = match case % 4 {
                0 => vec![],
                1 => (0..20_000).map(|_| (next() % 5) as i64).collect(),
                2 => vec![3, 2 * BLOCK as i64 + 5, 0, 7, BLOCK as i64],
                _ => (0..3_000).map(|k| if k % 700 == 3 { 70_000 } else { (next() % 20) as i64 }).collect(),
            };
            let (m, n) = (lens.len(), lens.iter().sum::<i64>() as usize);
            // Instance `k`'s run starts up to two places after the previous one's end.
            let mut start = Vec::with_capacity(m);
            let mut at = 0usize;
            for &l in &lens {
                at += (next() % 3) as usize;
                start.push(at as i64);
                at += l as usize;
            }
            let nd = at + (next() % 3) as usize;
            let stride = vec![1i64; m];
            let v: Vec<i64> = (0..n).map(|_| next() as i64 % 1_000_000).collect();
            let fill = [-1i64];
            // The even instances' elements, and the odd ones' (as two scatters would get them).
            let half = |odd: usize| -> (Vec<i64>, Vec<i64>) {
                let mut e = 0;
                let (mut ls, mut xs) = (Vec::new(), Vec::new());
                for (k, &l) in lens.iter().enumerate() {
                    let l = l as usize;
                    ls.push(if k % 2 == odd { l as i64 } else { 0 });
                    if k % 2 == odd {
                        xs.extend_from_slice(&v[e..e + l]);
                    }
                    e += l;
                }
                (ls, xs)
            };
            for threads in [1, 2] {
                let par = Par::new(threads);
                let seg = |l: Vec<i64>| Seg::new(&par, Arc::new(Data::Int(l))).unwrap();
                let (s, src, dst) = (seg(lens.clone()), seg(vec![n as i64]), seg(vec![nd as i64]));
                let ix = Progressions { start: &start, stride: &stride, seg: &s };
                assert!(unit(ix, &src, &dst));
                let written = index(&par, &start, &stride, &s).unwrap();
                let mut expect = dist(&par, &fill, &dst).unwrap();
                scatter(&par, &mut expect, &v, Targets::new(&written, None), &src, &dst).unwrap();
                let what = format!("case {case}, {threads} threads");
                // Into a `DIST`.
                let mut h = holey(HoleWrite::Unit(&par, ix), &v, &src, &dst).unwrap().expect("unit runs");
                assert_eq!(h.fill(&par, &fill, &dst).unwrap(), expect, "{what}: into a DIST");
                // Into a vector with gaps, half the instances at a time.
                let ((l0, x0), (l1, x1)) = (half(0), half(1));
                let (s0, s1) = (seg(l0), seg(l1));
                let (src0, src1) = (seg(vec![x0.len() as i64]), seg(vec![x1.len() as i64]));
                let (ix0, ix1) = (Progressions { start: &start, stride: &stride, seg: &s0 }, Progressions { start: &start, stride: &stride, seg: &s1 });
                let mut h = holey(HoleWrite::Unit(&par, ix0), &x0, &src0, &dst).unwrap().expect("first half");
                assert!(write_into_holes(&mut h, &x1, HoleWrite::Unit(&par, ix1), &src1, &dst).unwrap(), "{what}: second half");
                assert_eq!(h.fill(&par, &fill, &dst).unwrap(), expect, "{what}: into the gaps");
                // Over a written vector.
                let mut over = vec![-1i64; nd];
                assert!(scatter_unit_over(&par, &mut over, &v, ix), "{what}");
                assert_eq!(over, expect, "{what}: over a vector");
                // The gather back by the same runs.
                assert!(unit(ix, &src, &dst), "{what}: over the gather's destination");
                assert_eq!(gather_runs(&par, &expect, ix, &dst, &src).unwrap(), Some(v.clone()), "{what}: gather");
                if m < 2 || n < 2 {
                    continue;
                }
                // Refused: runs out of order, past the end, before the start.
                let k = (0..m).rev().find(|&k| lens[k] > 0 && k > 0).unwrap_or(0);
                for (bad, why) in [(0i64, "out of order"), (nd as i64, "past the end"), (-1, "before the start")] {
                    if k == 0 && why == "out of order" {
                        continue;
                    }
                    let mut worse = start.clone();
                    worse[k] = bad;
                    let wx = Progressions { start: &worse, stride: &stride, seg: &s };
                    assert!(holey(HoleWrite::Unit(&par, wx), &v, &src, &dst).unwrap().is_none(), "{what}: {why}");
                    assert!(!scatter_unit_over(&par, &mut over, &v, wx), "{what}: {why}, over");
                    if why != "out of order" {
                        assert_eq!(gather_runs(&par, &expect, wx, &dst, &src).unwrap(), None, "{what}: gather {why}");
                    }
                }
            }
        }
    }

    /// Whether `check_scatter` finds `i` ascending, as one segment into `len` places and
    /// as two halves into two segments of `len` places each.
    fn ascending(i: &[i64], len: usize) -> (bool, bool) {
        let par = Par::new(2);
        let seg = |lens: Vec<i64>| Seg::new(&par, Arc::new(Data::Int(lens))).unwrap();
        let n = i.len() as i64;
        let one = check_scatter(&par, i, None, &seg(vec![n]), &seg(vec![len as i64])).unwrap().ascending;
        let two = check_scatter(&par, i, None, &seg(vec![n / 2, n - n / 2]), &seg(vec![len as i64; 2]));
        (one, two.map(|t| t.ascending).unwrap_or(false))
    }

    /// The places of the gaps that ascending writes leave, found as the writes come, are
    /// those a map of every place gives, whether the walk starts at 0 or part way (as a
    /// chunk's does), with and without gaps to start from.
    #[test]
    fn uncovered_places_are_the_gaps_less_the_writes() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m) as usize
        };
        // Ascending disjoint ranges in `from..n`: each after a space of under `space`
        // places (none: adjacent) and under `len` places long, plus one.
        let ranges = |next: &mut dyn FnMut(u64) -> usize, from: usize, n: usize, space: u64, len: u64| {
            let mut out = Vec::new();
            let mut at = from;
            while at < n {
                at += next(space);
                let l = 1 + next(len);
                if at + l > n {
                    break;
                }
                out.push((at, at + l));
                at += l;
            }
            out
        };
        for case in 0..2000 {
            let n = 1 + next(60);
            // Gaps: random disjoint ranges (some adjacent), or all of `0..n`.
            let gaps = if case % 5 == 0 { vec![(0, n)] } else { ranges(&mut next, 0, n, 4, 6) };
            let from = if case % 3 == 0 { next(n as u64) } else { 0 };
            let writes = ranges(&mut next, from, n, 5, 4);
            let mut u = Uncovered::new(&gaps, from);
            for &(a, b) in &writes {
                u.wrote(a, b);
            }
            let got = u.until(n);
            let mut open = vec![false; n];
            for &(a, b) in &gaps {
                open[a.max(from)..b.max(from)].iter_mut().for_each(|o| *o = true);
            }
            for &(a, b) in &writes {
                open[a..b].iter_mut().for_each(|o| *o = false);
            }
            let mut want: Vec<(usize, usize)> = Vec::new();
            for (p, _) in open.iter().enumerate().filter(|(_, &o)| o) {
                match want.last_mut() {
                    Some(r) if r.1 == p => r.1 = p + 1,
                    _ => want.push((p, p + 1)),
                }
            }
            assert_eq!(got, want, "gaps {gaps:?} from {from}, writes {writes:?}");
        }
    }

    /// A `DIST` written together with a scatter of ascending indices into it gives, on
    /// one thread and on two, what writing the `DIST` and then scattering gives: layouts
    /// of many short segments, of segments longer than a block (their pieces each take
    /// their own elements), and empty ones; indices that are not ascending, and a
    /// `DIST` of other segments, are refused.
    #[test]
    fn ascending_indices_into_a_dist_write_both_as_one_pass() {
        let mut next = super::super::test_rng(29);
        for case in 0..36 {
            let lens: Vec<i64> = match case % 6 {
                0 => vec![],
                1 => vec![0, 0],
                2 => vec![200_000],
                3 => (0..30_000).map(|_| [0, 1, 2, 5, 16][next() as usize % 5]).collect(),
                4 => (0..40).map(|_| (next() % 90_000) as i64).collect(),
                _ => (0..2_000).map(|k| if k % 500 == 7 { 70_000 } else { (next() % 30) as i64 }).collect(),
            };
            let m = lens.len();
            let (mut src_lens, mut ix, mut vals) = (Vec::new(), Vec::new(), Vec::new());
            for &l in &lens {
                let every = 1 + next() % 6;
                let mut c = 0;
                for j in 0..l {
                    if next() % every == 0 {
                        ix.push(j);
                        vals.push(next() as i64 % 1000);
                        c += 1;
                    }
                }
                src_lens.push(c);
            }
            let fill: Vec<i64> = (0..m as i64).map(|k| 10_000 + k).collect();
            for threads in [1, 2] {
                let par = Par::new(threads);
                let seg = |l: Vec<i64>| Seg::new(&par, Arc::new(Data::Int(l))).unwrap();
                let (ss, sd) = (seg(src_lens.clone()), seg(lens.clone()));
                let mut expect = dist(&par, &fill, &sd).unwrap();
                scatter(&par, &mut expect, &vals, Targets::new(&ix, None), &ss, &sd).unwrap();
                let t = check_scatter(&par, &ix, None, &ss, &sd).unwrap();
                assert!(t.ascending);
                let got = scatter_ascending_into_dist(&par, &fill, &vals, t, &ss, &sd).unwrap();
                assert!(got.as_ref() == Some(&expect), "case {case}, {threads} threads");
                assert!(scatter_ascending_into_dist(&par, &fill, &vals, Targets::new(&ix, None), &ss, &sd).unwrap().is_none(), "unchecked");
                if m > 1 {
                    assert!(scatter_ascending_into_dist(&par, &fill[1..], &vals, t, &ss, &sd).unwrap().is_none(), "other segments");
                }
            }
        }
        // Indices that do not ascend are not taken.
        let par = Par::new(2);
        let one = Seg::new(&par, Arc::new(Data::Int(vec![3]))).unwrap();
        let t = check_scatter(&par, &[2, 0, 1], None, &one, &one).unwrap();
        assert!(scatter_ascending_into_dist(&par, &[9], &[1i64, 2, 3], t, &one, &one).unwrap().is_none());
    }

    /// Written-out ascending indices into a vector with gaps, in parallel chunks of
    /// segments, leave exactly the gaps a map of every place gives and write their
    /// elements (over earlier parts' places too: the last writer wins); filled, the gaps
    /// hold the `DIST`'s values. Many short, empty and one-element segments, sizes on
    /// both sides of the parallel grain, one and two threads.
    #[test]
    fn written_indices_into_gaps_leave_the_gaps_a_map_gives() {
        let mut next = super::super::test_rng(23);
        for case in 0..40 {
            let m = [0, 1, 7, 300, 20_000, 90_000][case % 6];
            let lens: Vec<i64> = (0..m).map(|_| [0, 1, 2, 5, 16, 40][next() as usize % 6]).collect();
            let n: usize = lens.iter().map(|&l| l as usize).sum();
            // Gaps: random disjoint ranges, a third of them long; the rest holds old parts.
            let mut gaps = Vec::new();
            let mut at = 0;
            while at < n {
                at += next() as usize % 4;
                let l = 1 + next() as usize % if next() % 3 == 0 { 50 } else { 3 };
                if at + l > n {
                    break;
                }
                gaps.push((at, at + l));
                at += l;
            }
            let mut open = vec![false; n];
            for &(a, b) in &gaps {
                open[a..b].iter_mut().for_each(|o| *o = true);
            }
            // Each segment's written places: an ascending random subset, mostly in gaps.
            let (mut src_lens, mut ix, mut vals) = (Vec::new(), Vec::new(), Vec::new());
            let mut want: Vec<Option<i64>> = open.iter().map(|&o| if o { None } else { Some(-1) }).collect();
            let mut st = 0;
            for &l in &lens {
                let mut c = 0;
                for j in 0..l as usize {
                    let p = st + j;
                    if next() % if open[p] { 2 } else { 9 } == 0 {
                        let x = next() as i64 % 1000;
                        ix.push(j as i64);
                        vals.push(x);
                        want[p] = Some(x);
                        c += 1;
                    }
                }
                src_lens.push(c);
                st += l as usize;
            }
            let fill: Vec<i64> = (0..m as i64).map(|k| 10_000 + k).collect();
            for threads in [1, 2] {
                let par = Par::new(threads);
                let seg = |l: Vec<i64>| Seg::new(&par, Arc::new(Data::Int(l))).unwrap();
                let (ss, sd) = (seg(src_lens.clone()), seg(lens.clone()));
                let mut buf = Vec::<i64>::with_capacity(n);
                for (p, o) in buf.spare_capacity_mut()[..n].iter_mut().enumerate() {
                    if !open[p] {
                        o.write(-1);
                    }
                }
                let mut h = Holey { buf, n, gaps: gaps.clone() };
                let t = check_scatter(&par, &ix, None, &ss, &sd).unwrap();
                assert!(t.ascending);
                assert!(scatter_written_into_holes(&par, &mut h, &vals, t, &ss, &sd).unwrap(), "case {case}");
                let mut left: Vec<(usize, usize)> = Vec::new();
                for p in (0..n).filter(|&p| want[p].is_none()) {
                    match left.last_mut() {
                        Some(r) if r.1 == p => r.1 = p + 1,
                        _ => left.push((p, p + 1)),
                    }
                }
                assert_eq!(h.gaps, left, "case {case}, {threads} threads: the gaps left");
                let got = h.fill(&par, &fill, &sd).unwrap();
                let at_seg: Vec<usize> = lens.iter().enumerate().flat_map(|(k, &l)| std::iter::repeat_n(k, l as usize)).collect();
                let expect: Vec<i64> = (0..n).map(|p| want[p].unwrap_or(fill[at_seg[p]])).collect();
                assert!(got == expect, "case {case}, {threads} threads: the elements");
            }
        }
    }

    #[test]
    fn ascending_indices_are_found_within_and_across_chunks() {
        let n = 5 * BLOCK + 17;
        let merge: Vec<i64> = (0..n as i64).map(|j| 2 * j + (j % 3 == 0) as i64).collect();
        assert_eq!(ascending(&merge, 2 * n + 1), (true, true), "a merge's targets, in one segment or two");
        let halves: Vec<i64> = (0..n).map(|j| (j % (n / 2)) as i64).collect();
        assert_eq!(ascending(&halves[..n / 2 * 2], n), (false, true), "each half ascends in its own segment");

        let mut tie = merge.clone();
        tie[BLOCK] = tie[BLOCK - 1];
        assert!(!ascending(&tie, 2 * n + 1).0, "a repeat across the cut between two chunks");
        let mut inside = merge.clone();
        inside[BLOCK + 9] = inside[BLOCK + 8];
        assert!(!ascending(&inside, 2 * n + 1).0, "a repeat inside a chunk");
        let par = Par::new(2);
        let seg = |len: usize| Seg::new(&par, Arc::new(Data::Int(vec![len as i64]))).unwrap();
        let flags = vec![true; n];
        let flagged = check_scatter(&par, &merge, Some(&flags), &seg(n), &seg(2 * n + 1)).unwrap();
        assert!(!flagged.ascending, "flagged scatters are never taken as ascending");
    }
}
