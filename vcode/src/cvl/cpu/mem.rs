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
pub(crate) fn alloc<T: Copy>(n: usize) -> Result<Vec<T>, Trap> {
    crate::memory::check(n, n.saturating_mul(std::mem::size_of::<T>()))?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Trap::new(TrapKind::OutOfMemory(format!("cannot allocate {n} elements"))))?;
    Ok(v)
}

/// A vector of `n` elements written by `fill`, which is given the uninitialised storage
/// and must write every element of it when it returns `Ok` (all callers write element by
/// element over the whole slice). No zero-fill first. On `Err` nothing is kept.
pub(crate) fn build<T: Copy>(n: usize, fill: impl FnOnce(&mut [MaybeUninit<T>]) -> Result<(), Trap>) -> Result<Vec<T>, Trap> {
    finish(alloc::<T>(n)?, n, fill)
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

/// Writes `src` into uninitialised `dst` (same length; [`copy_run`]).
#[inline]
pub(crate) fn write_all<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    let n = dst.len().min(src.len());
    // SAFETY: both hold at least `n` elements, and a `&mut` cannot overlap a `&`.
    unsafe { copy_run(dst.as_mut_ptr() as *mut T, src.as_ptr(), n) }
}

/// Copies `src` over `dst` (same length; [`copy_run`]).
#[inline]
pub(crate) fn copy_over<T: Copy>(dst: &mut [T], src: &[T]) {
    let n = dst.len().min(src.len());
    // SAFETY: as in `write_all`.
    unsafe { copy_run(dst.as_mut_ptr(), src.as_ptr(), n) }
}

/// Copies `n` elements from `s` to `d`: up to 15 as at most four moves of a fixed size
/// (8, 4, 2, 1 elements), which compile to plain loads and stores, longer runs with
/// `memcpy`. The permutes of many short segments (quicksort's deep levels copy runs of
/// one to a few elements each) would otherwise pay a `memcpy` call's set-up per run.
///
/// # Safety
/// `s` is valid for `n` reads and `d` for `n` writes, and the two do not overlap.
#[inline(always)]
pub(crate) unsafe fn copy_run<T: Copy>(d: *mut T, s: *const T, n: usize) {
    use std::ptr::copy_nonoverlapping as copy;
    if n >= 16 {
        // SAFETY: the caller's contract.
        unsafe { copy(s, d, n) };
        return;
    }
    let mut i = 0;
    // SAFETY: each move stays within the first `n` elements (`i` plus the bits of `n`
    // still to copy is at most `n`).
    unsafe {
        if n & 8 != 0 {
            copy(s, d, 8);
            i = 8;
        }
        if n & 4 != 0 {
            copy(s.add(i), d.add(i), 4);
            i += 4;
        }
        if n & 2 != 0 {
            copy(s.add(i), d.add(i), 2);
            i += 2;
        }
        if n & 1 != 0 {
            copy(s.add(i), d.add(i), 1);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs of every length from 0 to 40 (the fixed-size moves, their combinations, and
    /// `memcpy`) copy exactly their elements and nothing past them.
    #[test]
    fn runs_of_every_length_copy_exactly_their_elements() {
        let src: Vec<i64> = (0..48).map(|x| x * 3 + 1).collect();
        for n in 0..=40 {
            for at in [0, 1, 3] {
                let mut dst = vec![-1i64; 48];
                copy_over(&mut dst[at..at + n], &src[at..at + n]);
                for (i, &d) in dst.iter().enumerate() {
                    let want = if (at..at + n).contains(&i) { src[i] } else { -1 };
                    assert_eq!(d, want, "length {n} at {at}, element {i}");
                }
                let mut un = vec![MaybeUninit::new(-1i64); 48];
                write_all(&mut un[at..at + n], &src[at..at + n]);
                // SAFETY: every element was initialised above.
                let un: Vec<i64> = un.iter().map(|e| unsafe { e.assume_init() }).collect();
                assert_eq!(un, dst, "write_all, length {n} at {at}");
            }
        }
    }
}
