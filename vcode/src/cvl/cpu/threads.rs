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
            // Whole runs execute on a worker ([`Runner`]): as much stack as the main
            // thread has (reserved, not committed).
            .stack_size(WORKER_STACK)
            .build()
            .ok()?,
    );
    pools.insert(n, p.clone());
    Some(p)
}

/// Stack of a pool thread: the main thread's usual 8 MiB.
const WORKER_STACK: usize = 8 << 20;

/// Where a library's program runs ([`crate::Cvl::runner`]): on the calling thread, or on
/// a worker of the CPU library's thread pool. A run on a worker starts every parallel
/// operation from inside the pool: the other workers steal its blocks, and no operation
/// hands its work to the pool and puts the interpreter's thread to sleep until woken
/// (measured: quicksort 1M issues 8,400 operations of 0.1-1 ms; on 2 threads, each
/// hand-off and wake-up cost about as much as the second thread saved).
#[derive(Clone, Default)]
pub struct Runner(Option<Arc<rayon::ThreadPool>>);

/// A value moved to the pool's worker and back while the thread that owns it waits.
struct Handed<T>(T);
// SAFETY: a `Handed` crosses to a worker inside `Runner::run` and its result back: the
// calling thread is blocked in `install` the whole time, so no two threads ever touch
// the value at once, `install`'s latch orders the worker's accesses after the caller's
// and before the caller resumes, and neither thread keeps any part of it.
unsafe impl<T> Send for Handed<T> {}

impl Runner {
    /// A runner for `pool` (none: the calling thread).
    pub(crate) fn new(pool: Option<Arc<rayon::ThreadPool>>) -> Runner {
        Runner(pool)
    }
    /// Runs `f` on a worker of the pool (on the calling thread when there is none, or
    /// when the caller is already a worker of it), the caller waiting; a panic in `f`
    /// comes back as a panic here.
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.0 {
            None => f(),
            Some(pool) => {
                let f = Handed(f);
                pool.install(move || {
                    let f = f;
                    Handed((f.0)())
                })
                .0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_on_several_threads_executes_on_a_pool_worker_and_returns_its_value() {
        let runner = Runner::new(pool(2));
        let (name, v) = runner.run(|| (std::thread::current().name().map(str::to_string), vec![1, 2, 3]));
        assert!(name.as_deref().is_some_and(|n| n.starts_with("nesl-cvl-")), "ran on {name:?}");
        assert_eq!(v, vec![1, 2, 3]);
        // Nested: a worker runs it in place.
        let inner = runner.run(|| Runner::new(pool(2)).run(|| std::thread::current().name().map(str::to_string)));
        assert!(inner.is_some_and(|n| n.starts_with("nesl-cvl-")));
        // One thread: the caller's.
        let here = std::thread::current().name().map(str::to_string);
        assert_eq!(Runner::default().run(|| std::thread::current().name().map(str::to_string)), here);
    }

    #[test]
    fn a_panic_on_the_worker_comes_back_to_the_caller() {
        let runner = Runner::new(pool(2));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runner.run(|| panic!("boom"))));
        assert!(r.is_err());
        // The pool still runs.
        assert_eq!(runner.run(|| 7), 7);
    }
}
