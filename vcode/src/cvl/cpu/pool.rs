//! Memory of the CPU library: a buffer pool that keeps large buffers mapped across
//! operations, and the allocation helpers every kernel uses.
//!
//! When the last handle of a vector of at least [`POOLED_MIN`] elements drops, its buffer
//! goes to a small per-thread pool ([`POOL_SLOTS`] buffers, [`POOL_BYTES`] at most), and
//! the next result of about that size is written into it. A chain of operations over 10M
//! elements then touches the same few buffers instead of mapping (and page-faulting)
//! fresh memory for every result. Results are written into uninitialised capacity
//! ([`build`]), never zero-filled first when every element is written anyway.

use super::data::{Data, Elem};
use super::par::Par;
use crate::trap::{Trap, TrapKind};
use std::mem::MaybeUninit;

/// Buffers of at least this many elements go back to the pool when their vector dies.
pub(crate) const POOLED_MIN: usize = 1 << 14;
/// Most buffers the pool keeps (the oldest goes first).
pub(crate) const POOL_SLOTS: usize = 8;
/// Most bytes the pool keeps, so that idle buffers never hold more than this much memory.
pub(crate) const POOL_BYTES: usize = 1 << 30;

thread_local! {
    static POOL: std::cell::RefCell<Vec<Data>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Gives a dead vector's buffer to the pool (or frees it).
pub(crate) fn recycle(d: Data) {
    if d.capacity() >= POOLED_MIN && d.bytes() <= POOL_BYTES {
        // A thread that is exiting has no pool any more; the buffer is then just freed.
        let _ = POOL.try_with(|p| {
            let mut p = p.borrow_mut();
            let mut held: usize = p.iter().map(Data::bytes).sum::<usize>() + d.bytes();
            while !p.is_empty() && (p.len() >= POOL_SLOTS || held > POOL_BYTES) {
                held -= p.remove(0).bytes();
            }
            p.push(d);
        });
    }
}

/// An empty buffer of `T` with room for `n` elements (and at most `4n`) from the pool.
pub(crate) fn pooled<T: Elem>(n: usize) -> Option<Vec<T>> {
    if n < POOLED_MIN {
        return None;
    }
    POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        let best = p
            .iter()
            .enumerate()
            .filter(|(_, d)| d.vtype() == T::VT && (n..=n.saturating_mul(4)).contains(&d.capacity()))
            .min_by_key(|(_, d)| d.capacity())
            .map(|(i, _)| i)?;
        let mut v = T::unwrap(p.swap_remove(best))?;
        v.clear();
        Some(v)
    })
    .ok()
    .flatten()
}

/// An empty buffer with room for `n` elements: pooled, else freshly allocated; failure to
/// allocate is an out-of-memory trap.
pub(crate) fn alloc<T: Elem>(n: usize) -> Result<Vec<T>, Trap> {
    if let Some(v) = pooled(n) {
        return Ok(v);
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Trap::new(TrapKind::OutOfMemory(format!("cannot allocate {n} elements"))))?;
    Ok(v)
}

/// A vector of `n` elements written by `fill`, which is given the uninitialised storage
/// and must write every element of it when it returns `Ok` (all callers write element by
/// element over the whole slice). No zero-fill first. On `Err` nothing is kept.
pub(crate) fn build<T: Elem>(n: usize, fill: impl FnOnce(&mut [MaybeUninit<T>]) -> Result<(), Trap>) -> Result<Vec<T>, Trap> {
    finish(alloc::<T>(n)?, n, fill)
}

/// [`build`] for any plain element type (not pooled).
pub(crate) fn build_plain<T: Copy>(n: usize, fill: impl FnOnce(&mut [MaybeUninit<T>]) -> Result<(), Trap>) -> Result<Vec<T>, Trap> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Trap::new(TrapKind::OutOfMemory(format!("cannot allocate {n} elements"))))?;
    finish(v, n, fill)
}

fn finish<T: Copy>(mut v: Vec<T>, n: usize, fill: impl FnOnce(&mut [MaybeUninit<T>]) -> Result<(), Trap>) -> Result<Vec<T>, Trap> {
    v.clear();
    fill(&mut v.spare_capacity_mut()[..n])?;
    if crate::interrupt::abandoned() {
        // `fill` may have skipped blocks (`Par::blocks_mut`, `Par::each`): not written.
        return Err(Trap::new(TrapKind::Interrupted));
    }
    // SAFETY: `fill` returned `Ok` and no block was skipped, so it initialised all `n`
    // elements (its contract, kept by every caller in this module tree), and the
    // capacity is at least `n`.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// Writes `src` into uninitialised `dst` (same length).
#[inline]
pub(crate) fn write_all<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    for (o, &x) in dst.iter_mut().zip(src) {
        o.write(x);
    }
}

/// `n` copies of `x`, written in parallel.
pub(super) fn filled<T: Elem>(par: &Par, x: T, n: usize) -> Result<Vec<T>, Trap> {
    build(n, |out| {
        par.blocks_mut(out, |_, b| {
            for o in b {
                o.write(x);
            }
        });
        Ok(())
    })
}

/// A copy of `v`, written in parallel.
pub(super) fn copied<T: Elem>(par: &Par, v: &[T]) -> Result<Vec<T>, Trap> {
    build(v.len(), |out| {
        par.blocks_mut(out, |lo, b| write_all(b, &v[lo..lo + b.len()]));
        Ok(())
    })
}

/// The storage of a vector handle: dropping the last handle gives the buffer back to
/// the pool.
#[derive(Debug)]
pub(crate) struct Buf(pub(crate) Data);

impl std::ops::Deref for Buf {
    type Target = Data;
    fn deref(&self) -> &Data {
        &self.0
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        recycle(std::mem::replace(&mut self.0, Data::none()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_stays_bounded() {
        for _ in 0..3 * POOL_SLOTS {
            recycle(Data::Float(Vec::with_capacity(POOLED_MIN)));
        }
        recycle(Data::Bool(Vec::with_capacity(POOLED_MIN - 1)));
        let (len, held) = POOL.with(|p| (p.borrow().len(), p.borrow().iter().map(Data::bytes).sum::<usize>()));
        assert_eq!(len, POOL_SLOTS);
        assert!(held <= POOL_BYTES);
        assert!(pooled::<f64>(POOLED_MIN).is_some());
        assert!(pooled::<i64>(POOLED_MIN).is_none(), "no INT buffer was given back");
        assert!(pooled::<f64>(POOLED_MIN * 5).is_none(), "too small for this size");
    }
}
