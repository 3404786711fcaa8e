//! How many threads the CPU vector library uses, and the thread pools it runs on.
//!
//! The count comes from [`set_threads`] (the CLI's `--threads N`), else from the
//! `NESL_THREADS` environment variable, else all cores. A library with one thread never
//! touches a pool. Pools are built once per thread count and shared by every library of
//! that count, so making a `CpuCvl` is cheap.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// 0 = not set by [`set_threads`].
static OVERRIDE: AtomicUsize = AtomicUsize::new(0);

/// Sets the thread count of every CPU library made from now on (`CpuCvl::new`); `n` is
/// at least 1 (0 is taken as 1).
pub fn set_threads(n: usize) {
    OVERRIDE.store(n.max(1), Ordering::SeqCst);
}

/// Parses a `NESL_THREADS` value: a positive integer.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{s}` is not a thread count (a positive integer)")),
    }
}

/// The thread count a new library gets: [`set_threads`], else a valid `NESL_THREADS`,
/// else the number of cores.
pub fn default_threads() -> usize {
    match OVERRIDE.load(Ordering::SeqCst) {
        0 => std::env::var("NESL_THREADS")
            .ok()
            .and_then(|s| parse_threads(&s).ok())
            .unwrap_or_else(cores),
        n => n,
    }
}

/// The number of cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// The shared pool of `n` threads (`n >= 2`); `None` if the pool cannot be built (the
/// library then runs on the calling thread).
pub(crate) fn pool(n: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut pools = pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&n) {
        return Some(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("nesl-cvl-{i}"))
            .build()
            .ok()?,
    );
    pools.insert(n, p.clone());
    Some(p)
}
