//! Large blocks from one reserved range of address space: the allocator under the vector
//! library's big vectors.
//!
//! A vector program frees and allocates vectors of many sizes at every operation
//! (quicksort: a few megabytes each, a different size at every level). A general-purpose
//! allocator places blocks of different sizes apart (mimalloc gives large blocks pages of
//! their own, in chunks kept per size class), so memory the program freed sits idle while
//! the next vector takes fresh pages, which the kernel faults in and zeroes: quicksort of
//! 1M elements touched 135 MiB for a live peak of 45 MiB, and on a loaded virtual machine
//! zeroing fresh pages took up to 40% of its time.
//!
//! [`Region`] wraps the program's allocator and serves every block of [`LARGE`] bytes or
//! more from one range reserved up front (`MAP_NORESERVE`: address space only), first fit
//! over the free blocks (the lowest that fits, among the first `FIRST_FIT_SCAN`), which
//! coalesce with their neighbours when freed; a block nothing fits comes from the top of
//! the used part. A freed vector's pages so serve the next vector of any size, and the
//! memory a run touches stays close to its live peak. Freed pages stay mapped while a
//! form runs (no page fault when they are used again); [`Region::release`], called by the
//! top level between forms, gives them back to the operating system, all but [`KEPT`]
//! bytes. Smaller blocks, over-aligned ones, blocks that do not fit what is left of the
//! range, and every block where the range cannot be reserved (or on a system other than
//! Linux), go to the wrapped allocator.

use std::alloc::{GlobalAlloc, Layout};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock};

/// Blocks of this many bytes or more come from the range (mimalloc keeps blocks from 16 KiB
/// up in pages per size class, which fragment across the many sizes of a vector program).
pub const LARGE: usize = 16 << 10;

/// Freed bytes that [`Region::release`] keeps mapped for the next form: the pages of a
/// small program's vectors, so that its next form does not page-fault them in again (a dot
/// product of 10,000 elements took 47 us against 18 us).
pub const KEPT: usize = 64 << 20;

/// Free blocks, lowest first, that the first fit looks at; past them it takes the best
/// fit (the smallest free block that fits, the lowest of those), so that a range cut
/// into many free blocks does not cost a walk over all of them. Taking the lowest block
/// that fits keeps the blocks in use low in the range: quicksort of 1M elements touched
/// 46 MiB of it where the best fit touched 52 MiB (Barnes-Hut of 75K bodies: 396 against
/// 386 MiB, quickhull the same).
const FIRST_FIT_SCAN: usize = 64;

/// Blocks are whole pages: sizes round up to this, and alignments up to it are met.
const PAGE: usize = 4096;

/// Blocks start this many bytes into their first page, times a colour that cycles through
/// [`COLOURS`], so that the vectors an operation reads and writes together do not all sit
/// at the same offset within a page: element-wise loops over page-aligned operands slowed
/// by about 2.5% (their loads and stores alias in the L1 cache). Blocks aligned to more
/// than this start at their page.
const COLOUR_STEP: usize = 256;

/// Distinct colours ([`COLOUR_STEP`]).
const COLOURS: usize = PAGE / COLOUR_STEP;

/// The range starts on a huge-page boundary, and is marked for transparent huge pages, so
/// that big vectors fault in 2 MiB at a time.
const HUGE_PAGE: usize = 2 << 20;

/// Address space to reserve, tried in order until one succeeds (the kernel may refuse a
/// large reservation: a strict overcommit policy, or a limit on virtual memory).
const RESERVATIONS: &[usize] = &[1 << 40, 1 << 37, 1 << 34, 1 << 31];

/// A global allocator wrapper that serves blocks of [`LARGE`] bytes or more from one
/// reserved range (see the module documentation) and everything else from `A`:
/// `#[global_allocator] static A: Region<System> = Region::new(System);`.
pub struct Region<A> {
    inner: A,
    /// Sizes to try when reserving the range.
    reservations: &'static [usize],
    /// The range, reserved at the first large allocation; `None` when it could not be.
    range: OnceLock<Option<Range>>,
}

/// The reserved range and its bookkeeping.
struct Range {
    /// First address (a multiple of [`HUGE_PAGE`]).
    base: usize,
    /// Bytes reserved.
    len: usize,
    blocks: Mutex<Blocks>,
}

/// Which parts of the range are free, as offsets from its base. Every block in use lies
/// below `top`; the free blocks are the rest of `[0, top)`, none adjacent to another or
/// ending at `top` (freeing merges them).
#[derive(Default)]
struct Blocks {
    /// Free blocks: offset to length.
    by_offset: BTreeMap<usize, usize>,
    /// The same blocks as `(length, offset)`, for the best fit past [`FIRST_FIT_SCAN`]
    /// blocks.
    by_len: BTreeSet<(usize, usize)>,
    /// End of the used part of the range.
    top: usize,
    /// Nothing at or above this offset has been written since the range was reserved or
    /// last released: it reads as zero.
    touched: usize,
    /// The colour of the next block ([`COLOUR_STEP`]).
    colour: usize,
}

impl Blocks {
    fn insert(&mut self, offset: usize, len: usize) {
        self.by_offset.insert(offset, len);
        self.by_len.insert((len, offset));
    }

    fn remove(&mut self, offset: usize, len: usize) {
        self.by_offset.remove(&offset);
        self.by_len.remove(&(len, offset));
    }

    /// The next colour: the offset of a block within its first page (see [`COLOUR_STEP`]).
    fn next_colour(&mut self) -> usize {
        self.colour = (self.colour + 1) % COLOURS;
        self.colour * COLOUR_STEP
    }

    /// The offset of a block of `len` bytes (a multiple of [`PAGE`]), from the lowest free
    /// block that fits among the first [`FIRST_FIT_SCAN`], else the best-fitting one, else
    /// from the top when `limit` leaves room; and the end of the part of it that may hold
    /// old data (`offset` when it all reads as zero).
    fn take(&mut self, len: usize, limit: usize) -> Option<(usize, usize)> {
        let first = self.by_offset.iter().take(FIRST_FIT_SCAN).find(|&(_, &free)| free >= len).map(|(&offset, &free)| (free, offset));
        let fit = first.or_else(|| self.by_len.range((len, 0)..).next().copied());
        let offset = if let Some((free, offset)) = fit {
            self.remove(offset, free);
            if free > len {
                self.insert(offset + len, free - len);
            }
            offset
        } else if limit - self.top >= len {
            self.top += len;
            self.top - len
        } else {
            return None;
        };
        let dirty = (offset + len).min(self.touched).max(offset);
        self.touched = self.touched.max(offset + len);
        Some((offset, dirty))
    }

    /// Grows the block of `len` bytes at `offset` to `new_len` bytes in place, from the free
    /// block after it or from the top (within `limit`); false when neither has room.
    fn grow(&mut self, offset: usize, len: usize, new_len: usize, limit: usize) -> bool {
        let (end, more) = (offset + len, new_len - len);
        if end == self.top {
            if limit - self.top < more {
                return false;
            }
            self.top += more;
        } else {
            match self.by_offset.get(&end) {
                Some(&free) if free >= more => {
                    self.remove(end, free);
                    if free > more {
                        self.insert(end + more, free - more);
                    }
                }
                _ => return false,
            }
        }
        self.touched = self.touched.max(offset + new_len);
        true
    }

    /// Frees the block of `len` bytes at `offset`, merging it with free neighbours, or
    /// into the top.
    fn give(&mut self, mut offset: usize, mut len: usize) {
        if let Some((&before, &before_len)) = self.by_offset.range(..offset).next_back() {
            if before + before_len == offset {
                self.remove(before, before_len);
                offset = before;
                len += before_len;
            }
        }
        if let Some(&after_len) = self.by_offset.get(&(offset + len)) {
            self.remove(offset + len, after_len);
            len += after_len;
        }
        if offset + len == self.top {
            self.top = offset;
        } else {
            self.insert(offset, len);
        }
    }
}

/// `n` rounded up to whole pages.
fn pages(n: usize) -> usize {
    n.div_ceil(PAGE) * PAGE
}

/// The pages of a block of `size` bytes that starts `colour` bytes into its first page.
fn block_len(colour: usize, size: usize) -> usize {
    pages(colour + size)
}

impl Range {
    /// Reserves the first of `sizes` the kernel grants.
    #[cfg(target_os = "linux")]
    fn reserve(sizes: &[usize]) -> Option<Range> {
        sizes.iter().find_map(|&len| {
            // SAFETY: a fresh anonymous mapping; no memory of this process is touched.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len + HUGE_PAGE,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return None;
            }
            let base = (p as usize).div_ceil(HUGE_PAGE) * HUGE_PAGE;
            // SAFETY: advice on the mapping just made; failure (no transparent huge pages)
            // only leaves it on small pages.
            unsafe { libc::madvise(base as *mut libc::c_void, len, libc::MADV_HUGEPAGE) };
            Some(Range { base, len, blocks: Mutex::new(Blocks::default()) })
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn reserve(_: &[usize]) -> Option<Range> {
        None
    }

    fn blocks(&self) -> std::sync::MutexGuard<'_, Blocks> {
        // The bookkeeping is consistent between calls: a panic cannot leave it half done
        // (allocation failure inside the maps aborts).
        self.blocks.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn owns(&self, p: *mut u8) -> bool {
        (self.base..self.base + self.len).contains(&(p as usize))
    }

    /// A block of `layout` (at most [`PAGE`]-aligned), zeroed when `zeroed`; null when the
    /// range is full.
    fn alloc(&self, layout: Layout, zeroed: bool) -> *mut u8 {
        let size = layout.size();
        let (offset, dirty, colour) = {
            let mut b = self.blocks();
            let colour = if layout.align() <= COLOUR_STEP { b.next_colour() } else { 0 };
            let Some((offset, dirty)) = b.take(block_len(colour, size), self.len) else {
                return std::ptr::null_mut();
            };
            (offset, dirty, colour)
        };
        let start = offset + colour;
        if zeroed && dirty > start {
            // SAFETY: the pages `[offset, offset + block_len(colour, size))` are ours now, and
            // `[start, min(dirty, start + size))` lies within them.
            unsafe { std::ptr::write_bytes((self.base + start) as *mut u8, 0, (dirty - start).min(size)) };
        }
        (self.base + start) as *mut u8
    }

    /// The offset of the first page of the block at `p`, and its colour.
    fn block_of(&self, p: *mut u8) -> (usize, usize) {
        let at = p as usize - self.base;
        (at - at % PAGE, at % PAGE)
    }

    fn free(&self, p: *mut u8, size: usize) {
        let (offset, colour) = self.block_of(p);
        self.blocks().give(offset, block_len(colour, size));
    }

    /// Gives the pages of the free blocks and of the part above the top back to the
    /// operating system (they read as zero when next used), but for the first `keep` bytes
    /// of them (a multiple of [`PAGE`]), lowest first.
    #[cfg(target_os = "linux")]
    fn release(&self, mut keep: usize) {
        let mut b = self.blocks();
        let discard = |offset: usize, len: usize| {
            if len > 0 {
                // SAFETY: pages of the range that no block in use covers.
                unsafe { libc::madvise((self.base + offset) as *mut libc::c_void, len, libc::MADV_DONTNEED) };
            }
        };
        for (&offset, &len) in &b.by_offset {
            let kept = len.min(keep);
            keep -= kept;
            discard(offset + kept, len - kept);
        }
        let kept = (b.touched.saturating_sub(b.top)).min(keep);
        discard(b.top + kept, b.touched.saturating_sub(b.top + kept));
        b.touched = b.top + kept;
    }

    #[cfg(not(target_os = "linux"))]
    fn release(&self, _: usize) {}
}

impl<A> Region<A> {
    /// Wraps `inner`.
    pub const fn new(inner: A) -> Self {
        Self::with_reservations(inner, RESERVATIONS)
    }

    /// Wraps `inner`, reserving the first of `sizes` (bytes) the kernel grants.
    pub const fn with_reservations(inner: A, sizes: &'static [usize]) -> Self {
        Region { inner, reservations: sizes, range: OnceLock::new() }
    }

    /// The range, reserved now if this is the first large block.
    fn range(&self) -> Option<&Range> {
        self.range.get_or_init(|| Range::reserve(self.reservations)).as_ref()
    }

    /// The range, where a block of `layout` belongs there.
    fn range_for(&self, layout: Layout) -> Option<&Range> {
        if layout.size() >= LARGE && layout.align() <= PAGE {
            self.range()
        } else {
            None
        }
    }

    /// The range, where it holds `p`.
    fn owner(&self, p: *mut u8) -> Option<&Range> {
        self.range.get()?.as_ref().filter(|r| r.owns(p))
    }

    /// Gives the freed pages of the range back to the operating system but for
    /// [`KEPT`] bytes of them (see the module documentation). The wrapped allocator's own
    /// freed memory is its business.
    pub fn release(&self) {
        self.release_keeping(KEPT);
    }

    /// [`Region::release`], keeping `keep` bytes (rounded down to whole pages).
    pub fn release_keeping(&self, keep: usize) {
        if let Some(Some(r)) = self.range.get() {
            r.release(keep / PAGE * PAGE);
        }
    }
}

// SAFETY: blocks of the range are disjoint page runs inside one mapping that lives as
// long as the process, handed out once until freed (the bookkeeping is behind a mutex and
// allocates only small blocks, which go to `inner`, so it never re-enters itself);
// everything else is forwarded to `inner` and freed by it (`owner` tells them apart).
unsafe impl<A: GlobalAlloc> GlobalAlloc for Region<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.range_for(layout).map(|r| r.alloc(layout, false)) {
            Some(p) if !p.is_null() => p,
            _ => unsafe { self.inner.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match self.range_for(layout).map(|r| r.alloc(layout, true)) {
            Some(p) if !p.is_null() => p,
            _ => unsafe { self.inner.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        match self.owner(p) {
            Some(r) => r.free(p, layout.size()),
            None => unsafe { self.inner.dealloc(p, layout) },
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size`, rounded to `layout.align()`, fits.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let here = self.owner(p);
        let goes_here = self.range_for(new_layout).is_some();
        match here {
            None if !goes_here => return unsafe { self.inner.realloc(p, layout, new_size) },
            Some(r) if goes_here => {
                // Shrinks in place, freeing the tail; grows in place where the pages after
                // it are free.
                let (offset, colour) = r.block_of(p);
                let (old, new) = (block_len(colour, layout.size()), block_len(colour, new_size));
                let mut b = r.blocks();
                if new <= old {
                    if new < old {
                        b.give(offset + new, old - new);
                    }
                    return p;
                }
                if b.grow(offset, old, new, r.len) {
                    return p;
                }
            }
            _ => {}
        }
        // Moves between the range and the wrapped allocator, or to a bigger block.
        let q = unsafe { self.alloc(new_layout) };
        if !q.is_null() {
            // SAFETY: both blocks are live and distinct; the copy is within both.
            unsafe {
                std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                self.dealloc(p, layout);
            }
        }
        q
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::alloc::System;

    const SMALL_RANGE: &[usize] = &[64 << 20];

    fn layout(size: usize) -> Layout {
        Layout::from_size_align(size, 8).unwrap()
    }

    /// A size whose block is `n` MiB whatever its colour.
    fn mib(n: usize) -> usize {
        (n << 20) - PAGE
    }

    /// The first page of the block at `p`.
    fn page(p: *mut u8) -> usize {
        p as usize / PAGE * PAGE
    }

    /// `(top, free bytes, free blocks)` of `r`'s range.
    fn usage(r: &Region<System>) -> (usize, usize, usize) {
        let b = r.range().expect("the range is reserved").blocks();
        (b.top, b.by_offset.values().sum(), b.by_offset.len())
    }

    #[test]
    fn freed_neighbours_merge_and_serve_a_block_of_another_size() {
        let r = Region::with_reservations(System, SMALL_RANGE);
        unsafe {
            let a = r.alloc(layout(mib(1)));
            let b = r.alloc(layout(mib(2)));
            let c = r.alloc(layout(mib(1)));
            assert!(r.owner(a).is_some() && r.owner(b).is_some() && r.owner(c).is_some());
            assert_eq!(usage(&r), (4 << 20, 0, 0));
            r.dealloc(a, layout(mib(1)));
            r.dealloc(b, layout(mib(2)));
            assert_eq!(usage(&r), (4 << 20, 3 << 20, 1), "a and b merge");
            let d = r.alloc(layout(mib(2) + PAGE));
            assert_eq!(page(d), page(a), "the merged block serves a bigger one");
            assert_eq!(usage(&r), (4 << 20, (1 << 20) - PAGE, 1));
            r.dealloc(c, layout(mib(1)));
            r.dealloc(d, layout(mib(2) + PAGE));
            assert_eq!(usage(&r), (0, 0, 0), "all freed: the top comes back to the start");
        }
    }

    #[test]
    fn the_lowest_free_block_that_fits_is_taken_and_past_the_scan_the_best_fit() {
        let r = Region::with_reservations(System, SMALL_RANGE);
        unsafe {
            let sizes = [mib(3), mib(1), mib(2), mib(1), mib(1)];
            let ps: Vec<_> = sizes.iter().map(|&s| r.alloc(layout(s))).collect();
            r.dealloc(ps[0], layout(sizes[0]));
            r.dealloc(ps[2], layout(sizes[2]));
            assert_eq!(page(r.alloc(layout(3 << 19))), page(ps[0]), "1.5 MiB goes to the lowest hole, of 3 MiB");
            assert_eq!(page(r.alloc(layout(mib(2)))), page(ps[2]), "2 MiB to the 2 MiB one: 1.5 MiB are left below");
        }
        // More free blocks than the scan looks at: a block none of the first ones fits
        // goes to the smallest that fits past them, not to the top.
        let r = Region::with_reservations(System, SMALL_RANGE);
        unsafe {
            let small = 4 * PAGE;
            let n = FIRST_FIT_SCAN + 4;
            let mut ps: Vec<*mut u8> = (0..2 * n).map(|_| r.alloc(layout(small))).collect();
            let big = [r.alloc(layout(mib(2))), r.alloc(layout(small)), r.alloc(layout(mib(1))), r.alloc(layout(small))];
            for p in ps.iter().step_by(2) {
                r.dealloc(*p, layout(small));
            }
            r.dealloc(big[0], layout(mib(2)));
            r.dealloc(big[2], layout(mib(1)));
            assert_eq!(page(r.alloc(layout(3 << 18))), page(big[2]), "768 KiB to the 1 MiB hole past the scan");
            assert_eq!(page(r.alloc(layout(small))), page(ps[0]), "a small block to the lowest hole");
            ps.clear();
        }
    }

    #[test]
    fn consecutive_blocks_start_at_different_offsets_in_their_pages() {
        let r = Region::with_reservations(System, SMALL_RANGE);
        unsafe {
            let ps: Vec<_> = (0..COLOURS).map(|_| r.alloc(layout(LARGE))).collect();
            let mut offsets: Vec<_> = ps.iter().map(|&p| p as usize % PAGE).collect();
            offsets.sort();
            offsets.dedup();
            assert_eq!(offsets.len(), COLOURS);
            assert!(offsets.iter().all(|o| o % COLOUR_STEP == 0));
            let aligned = Layout::from_size_align(LARGE, PAGE).unwrap();
            let q = r.alloc(aligned);
            assert!(r.owner(q).is_some() && (q as usize).is_multiple_of(PAGE), "a page-aligned block starts at its page");
            r.dealloc(q, aligned);
            for p in ps {
                r.dealloc(p, layout(LARGE));
            }
            assert_eq!(usage(&r), (0, 0, 0));
        }
    }

    #[test]
    fn small_and_over_aligned_blocks_go_to_the_wrapped_allocator() {
        let r = Region::with_reservations(System, SMALL_RANGE);
        unsafe {
            let small = layout(LARGE - 1);
            let aligned = Layout::from_size_align(LARGE, 2 * PAGE).unwrap();
            let (p, q) = (r.alloc(small), r.alloc(aligned));
            assert!(!p.is_null() && !q.is_null());
            assert!(r.owner(p).is_none() && r.owner(q).is_none());
            assert_eq!(q as usize % (2 * PAGE), 0);
            r.dealloc(p, small);
            r.dealloc(q, aligned);
        }
    }

    #[test]
    fn a_block_past_the_end_of_the_range_comes_from_the_wrapped_allocator() {
        let r = Region::with_reservations(System, SMALL_RANGE);
        unsafe {
            let a = r.alloc(layout(40 << 20));
            let b = r.alloc(layout(40 << 20));
            assert!(r.owner(a).is_some() && r.owner(b).is_none());
            b.write_bytes(7, 40 << 20);
            r.dealloc(b, layout(40 << 20));
            r.dealloc(a, layout(40 << 20));
            assert_eq!(usage(&r), (0, 0, 0));
        }
    }

    #[test]
    fn zeroed_blocks_read_zero_when_reused_and_after_a_release() {
        let r = Region::with_reservations(System, SMALL_RANGE);
        let n = 3 << 20;
        unsafe {
            let keep = r.alloc(layout(LARGE));
            let a = r.alloc(layout(n));
            a.write_bytes(0xAB, n);
            r.dealloc(a, layout(n));
            let z = r.alloc_zeroed(layout(n - 5));
            assert_eq!(page(z), page(a), "the same pages, used again");
            assert!(std::slice::from_raw_parts(z, n - 5).iter().all(|&x| x == 0));
            z.write_bytes(0xCD, n - 5);
            r.dealloc(z, layout(n - 5));
            r.release_keeping(0);
            let z = r.alloc_zeroed(layout(n));
            assert!(std::slice::from_raw_parts(z, n).iter().all(|&x| x == 0));
            r.dealloc(z, layout(n));
            r.dealloc(keep, layout(LARGE));
        }
    }

    #[test]
    fn a_release_keeps_the_lowest_freed_pages_it_may_and_clears_the_rest() {
        let r = Region::with_reservations(System, SMALL_RANGE);
        unsafe {
            let ps: Vec<_> = (0..4).map(|_| r.alloc(layout(mib(1)))).collect();
            for &p in &ps {
                p.write_bytes(0xAA, mib(1));
            }
            for k in [0, 2, 3] {
                r.dealloc(ps[k], layout(mib(1)));
            }
            assert_eq!(usage(&r), (2 << 20, 1 << 20, 1), "the first block is free; the last two went back to the top");
            r.release_keeping(3 << 19);
            // Freed memory of this test's own mapping, read to see what the kernel kept.
            let bytes = |k: usize, from: usize, to: usize| std::slice::from_raw_parts((page(ps[k]) + from) as *const u8, to - from);
            let half = 1 << 19;
            assert!(bytes(0, ps[0] as usize % PAGE, mib(1)).iter().all(|&x| x == 0xAA), "the free block is kept");
            assert!(bytes(2, ps[2] as usize % PAGE, half).iter().all(|&x| x == 0xAA), "and half a block above the top");
            assert!(bytes(2, half, 1 << 20).iter().all(|&x| x == 0), "the rest above the top is cleared");
            assert!(bytes(3, 0, 1 << 20).iter().all(|&x| x == 0));
            assert_eq!(r.range().unwrap().blocks().touched, 5 << 19, "above what is kept, the range reads as zero");
            assert!(bytes(1, ps[1] as usize % PAGE, mib(1)).iter().all(|&x| x == 0xAA), "the block in use is untouched");
            r.dealloc(ps[1], layout(mib(1)));
        }
    }

    #[test]
    fn realloc_keeps_the_contents_across_the_range_and_the_wrapped_allocator() {
        let r = Region::with_reservations(System, SMALL_RANGE);
        unsafe {
            let small = layout(1000);
            let p = r.alloc(small);
            for i in 0..1000 {
                *p.add(i) = i as u8;
            }
            let q = r.realloc(p, small, 1 << 20);
            assert!(r.owner(q).is_some(), "grown into the range");
            let s = r.realloc(q, layout(1 << 20), LARGE + 1);
            assert_eq!(s, q, "shrunk in place");
            assert_eq!(usage(&r), (block_len(s as usize % PAGE, LARGE + 1), 0, 0), "its tail goes back to the top");
            let t = r.realloc(s, layout(LARGE + 1), 500);
            assert!(r.owner(t).is_none(), "shrunk out of the range");
            assert!((0..500).all(|i| *t.add(i) == i as u8));
            r.dealloc(t, layout(500));
            assert_eq!(usage(&r), (0, 0, 0));
        }
    }

    #[test]
    fn realloc_grows_in_place_into_free_pages_and_moves_when_it_must() {
        let r = Region::with_reservations(System, SMALL_RANGE);
        unsafe {
            let a = r.alloc(layout(mib(1)));
            a.write_bytes(1, mib(1));
            let a2 = r.realloc(a, layout(mib(1)), mib(2));
            assert_eq!(a2, a, "grown at the top");
            assert_eq!(usage(&r), (2 << 20, 0, 0));
            let b = r.alloc(layout(mib(1)));
            let c = r.alloc(layout(mib(1)));
            r.dealloc(b, layout(mib(1)));
            let a3 = r.realloc(a2, layout(mib(2)), mib(2) + PAGE);
            assert_eq!(a3, a, "grown into the free block after it");
            assert_eq!(usage(&r), (4 << 20, (1 << 20) - PAGE, 1));
            let a4 = r.realloc(a3, layout(mib(2) + PAGE), mib(4));
            assert_ne!(page(a4), page(a), "no room after it: moved");
            assert!(std::slice::from_raw_parts(a4, mib(1)).iter().all(|&x| x == 1), "with its contents");
            r.dealloc(a4, layout(mib(4)));
            r.dealloc(c, layout(mib(1)));
            assert_eq!(usage(&r), (0, 0, 0));
        }
    }

    /// Random allocations, reallocations and frees: blocks never overlap (each keeps the
    /// byte it was filled with), and freeing them all leaves the range empty.
    #[test]
    fn random_blocks_never_overlap_and_all_merge_back() {
        let r = Region::with_reservations(System, &[256 << 20]);
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
        unsafe {
            for i in 0..2000 {
                if live.len() < 40 && (live.is_empty() || next(3) > 0) {
                    let size = LARGE + next(4 << 20) as usize;
                    let l = Layout::from_size_align(size, 8 << next(10)).unwrap();
                    let p = r.alloc(l);
                    assert!(r.owner(p).is_some() && (p as usize).is_multiple_of(l.align()));
                    let tag = (i % 251) as u8;
                    p.write_bytes(tag, size);
                    live.push((p, l, tag));
                } else if next(4) == 0 {
                    // Grown or shrunk, in place or moved: the common prefix keeps its tag.
                    let k = next(live.len() as u64) as usize;
                    let (p, l, tag) = live[k];
                    let size = LARGE + next(4 << 20) as usize;
                    let q = r.realloc(p, l, size);
                    let l2 = Layout::from_size_align(size, l.align()).unwrap();
                    assert!(r.owner(q).is_some() && (q as usize).is_multiple_of(l.align()));
                    assert!(std::slice::from_raw_parts(q, l.size().min(size)).iter().all(|&x| x == tag));
                    q.write_bytes(tag, size);
                    live[k] = (q, l2, tag);
                } else {
                    let (p, l, tag) = live.swap_remove(next(live.len() as u64) as usize);
                    let s = std::slice::from_raw_parts(p, l.size());
                    assert!(s.iter().all(|&x| x == tag), "a block was overwritten");
                    r.dealloc(p, l);
                }
            }
            for (p, l, _) in live {
                r.dealloc(p, l);
            }
        }
        assert_eq!(usage(&r), (0, 0, 0));
    }
}
