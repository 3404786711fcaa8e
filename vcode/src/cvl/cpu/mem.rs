//! Memory of the CPU library: the allocation helpers every kernel uses.
//!
//! Results are written into uninitialised capacity ([`build`]), never zero-filled first
//! when every element is written anyway. Keeping freed memory mapped for the next
//! operation (instead of unmapping each dead vector and page-faulting fresh memory for
//! the next result), and reusing it for vectors of any size, is the allocator's job: the
//! `nesl` binary serves large blocks from [`crate::region`] and the rest from mimalloc.
//! (A pool of buffers per size in front of the allocator made programs no faster and
//! held up to a gigabyte of idle buffers.)

use super::data::Elem;
use super::par::Par;
use crate::trap::{Trap, TrapKind};
use std::mem::MaybeUninit;

/// An empty buffer with room for `n` elements; failure to allocate is an out-of-memory
/// trap.
pub(crate) fn alloc<T: Elem>(n: usize) -> Result<Vec<T>, Trap> {
    crate::memory::check(n, n.saturating_mul(std::mem::size_of::<T>()))?;
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

/// [`build`] for any plain element type.
pub(crate) fn build_plain<T: Copy>(n: usize, fill: impl FnOnce(&mut [MaybeUninit<T>]) -> Result<(), Trap>) -> Result<Vec<T>, Trap> {
    crate::memory::check(n, n.saturating_mul(std::mem::size_of::<T>()))?;
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
