//! The memory limit of a run: a process-wide ceiling on heap memory, checked where the
//! vector libraries allocate vectors, so that a runaway program (`dist(0, 10000000000)`)
//! stops with an out-of-memory trap (and the top level goes on with the next form) instead
//! of meeting the operating system's out-of-memory killer.
//!
//! Live heap bytes are counted by [`Counting`], a global allocator wrapper that a program
//! installs (the `nesl` binary does). Without it only the size of each request is checked
//! against the limit.

use crate::trap::{Trap, TrapKind};
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Bytes of heap memory live now (kept by [`Counting`]; 0 when it is not installed).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// The limit in bytes (`usize::MAX`: none).
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Bytes of device memory in use (the CUDA library's live buffers on a GPU), counted
/// toward the limit beside the host's live bytes.
static DEVICE: AtomicUsize = AtomicUsize::new(0);

/// A global allocator that counts live bytes for the memory limit:
/// `#[global_allocator] static A: Counting<System> = Counting(System);`.
pub struct Counting<A>(pub A);

// SAFETY: every method forwards to the inner allocator unchanged; the counter is only
// bookkeeping.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.0.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { self.0.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.0.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

/// Heap bytes live now, as [`Counting`] sees them (0 without it).
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// How the program's allocator gives freed memory back to the operating system
/// ([`set_release`]).
static RELEASE: OnceLock<fn()> = OnceLock::new();

/// Installs the function that gives the allocator's freed memory back to the operating
/// system (the `nesl` binary: mimalloc's forced collection and [`crate::region::Region::release`]).
/// Its allocator keeps freed
/// memory mapped while a form runs, so that vectors freed and allocated again do not
/// page-fault; the top level calls [`release_free_memory`] between forms. The first
/// call wins.
pub fn set_release(release: fn()) {
    let _ = RELEASE.set(release);
}

/// Gives freed memory back to the operating system, where the program installed a way
/// to ([`set_release`]); called by the top level after each form, so an idle REPL holds
/// only what its values need.
pub fn release_free_memory() {
    if let Some(release) = RELEASE.get() {
        release();
    }
}

/// Sets the limit (`None`: no limit).
pub fn set_max_memory(bytes: Option<usize>) {
    LIMIT.store(bytes.unwrap_or(usize::MAX), Ordering::Relaxed);
}

/// The limit in bytes, if there is one.
pub fn max_memory() -> Option<usize> {
    match LIMIT.load(Ordering::Relaxed) {
        usize::MAX => None,
        n => Some(n),
    }
}

/// The default limit: three quarters of physical memory (`MemTotal` of `/proc/meminfo`),
/// or none where that cannot be read.
pub fn default_max_memory() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024) / 4 * 3)
}

/// Parses a size: a number of bytes with an optional unit `K`, `M`, `G`, `T` (powers of
/// 1024; `KB`, `KiB`, `MB`, ... are read the same), e.g. `512M`, `2G`, `1.5G`, `100000`.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num.parse().map_err(|_| format!("`{s}` is not a size (e.g. 512M, 2G, 100000)"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("`{s}`: unknown unit (use K, M, G or T, e.g. 512M)")),
    };
    let bytes = x * (1u64 << shift) as f64;
    if bytes.is_nan() || bytes < 1.0 || bytes >= usize::MAX as f64 {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(bytes as usize)
}

/// Writes a byte count for people (`1.5 GiB`).
pub fn show_size(bytes: usize) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut x = bytes as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{bytes} bytes") } else { format!("{x:.1} {}", UNITS[u]) }
}

/// Checks that `bytes` more may be allocated for `n` elements: an out-of-memory trap
/// when the live memory (host and device) plus the request would pass the limit.
pub(crate) fn check(n: usize, bytes: usize) -> Result<(), Trap> {
    check_room(bytes, || format!("{n} elements"))
}

/// The out-of-memory trap for `bytes` more of `what`, if they do not fit under the limit.
fn check_room(bytes: usize, what: impl FnOnce() -> String) -> Result<(), Trap> {
    let limit = LIMIT.load(Ordering::Relaxed);
    if limit == usize::MAX {
        return Ok(());
    }
    let live = live_bytes().saturating_add(device_bytes());
    if bytes > limit.saturating_sub(live) {
        return Err(Trap::new(TrapKind::OutOfMemory(format!(
            "cannot allocate {} ({}): the memory limit is {} and {} are in use \
             (--max-memory or NESL_MAX_MEMORY sets the limit)",
            what(),
            show_size(bytes),
            show_size(limit),
            show_size(live)
        ))));
    }
    Ok(())
}

/// Bytes of device memory in use ([`reserve_device`]).
pub fn device_bytes() -> usize {
    DEVICE.load(Ordering::Relaxed)
}

/// Takes `bytes` of device memory for a buffer, under the limit: the out-of-memory trap
/// when they do not fit. `host_backed`: the buffer is host memory (the CUDA library's
/// emulation), already counted by the allocator, so it is only checked, not added.
pub fn reserve_device(bytes: usize, host_backed: bool) -> Result<(), Trap> {
    check_room(bytes, || "a device buffer".to_string())?;
    if !host_backed {
        DEVICE.fetch_add(bytes, Ordering::Relaxed);
    }
    Ok(())
}

/// Gives back what [`reserve_device`] took for a buffer (with the same arguments).
pub fn release_device(bytes: usize, host_backed: bool) {
    if !host_backed {
        let _ = DEVICE.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |d| Some(d.saturating_sub(bytes)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_buffers_are_counted_unless_host_backed() {
        let before = device_bytes();
        reserve_device(4096, false).unwrap();
        reserve_device(1 << 20, true).unwrap();
        assert_eq!(device_bytes(), before + 4096, "host-backed buffers are the allocator's to count");
        release_device(1 << 20, true);
        release_device(4096, false);
        assert_eq!(device_bytes(), before);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("100000"), Ok(100000));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("0").is_err());
        assert_eq!(show_size(3 << 29), "1.5 GiB");
    }
}
