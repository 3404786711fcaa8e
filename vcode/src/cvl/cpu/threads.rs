//! How many threads the CPU vector library uses, and the thread pools it runs on.
//!
//! The count comes from [`set_threads`] (the CLI's `--threads N`), else from the
//! `NESL_THREADS` environment variable, else all cores. A library with one thread never
//! touches a pool. Pools are built once and kept, so making a `CpuCvl` is cheap: the
//! first pool a thread asks for has that thread as a member (worker 0); the
//! others are shared by every library of their thread count.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::cell::RefCell;
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

/// The pool of `n` threads (`n >= 2`) for a library made on this thread; `None` if no
/// pool can be built (the library then runs on the calling thread).
///
/// The first library of several threads made on a thread gets a pool that this thread
/// itself belongs to, as worker 0 ([`own_pool`]): its operations then start their
/// parallel work from inside the pool, the other workers steal blocks, and a block no
/// one has taken yet is run by the calling thread itself, which never hands its work to
/// the pool and sleeps until woken. (Measured: quicksort 1M issues 8,400 operations of
/// 0.1-1 ms; with the hand-off on 2 threads it ran no faster than on 1.) Libraries of
/// other thread counts on that thread, and libraries made on threads of a pool, get a
/// pool shared by all threads ([`shared_pool`]), which works the same but hands off.
pub(crate) fn pool(n: usize) -> Option<Arc<rayon::ThreadPool>> {
    own_pool(n).or_else(|| shared_pool(n))
}

thread_local! {
    /// The pool this thread is worker 0 of, and its number of threads.
    static OWN: RefCell<Option<(usize, Arc<rayon::ThreadPool>)>> = const { RefCell::new(None) };
}

/// The pool of `n` threads this thread belongs to (built on the first call: this thread
/// and `n - 1` workers); `None` when this thread already belongs to a pool of another
/// size or to any other pool (a worker thread), or the pool cannot be built.
fn own_pool(n: usize) -> Option<Arc<rayon::ThreadPool>> {
    OWN.try_with(|own| {
        let mut own = own.try_borrow_mut().ok()?;
        if let Some((m, p)) = &*own {
            return (*m == n).then(|| p.clone());
        }
        if rayon::current_thread_index().is_some() {
            return None;
        }
        let p = Arc::new(builder(n).use_current_thread().build().ok()?);
        *own = Some((n, p.clone()));
        Some(p)
    })
    .ok()
    .flatten()
}

/// The pool of `n` threads shared by every thread without its own ([`own_pool`]).
fn shared_pool(n: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut pools = pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&n) {
        return Some(p.clone());
    }
    let p = Arc::new(builder(n).build().ok()?);
    pools.insert(n, p.clone());
    Some(p)
}

fn builder(n: usize) -> rayon::ThreadPoolBuilder {
    rayon::ThreadPoolBuilder::new().num_threads(n).thread_name(|i| format!("nesl-cvl-{i}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// A thread's first pool has that thread as worker 0 and runs parallel work on the
    /// others too; a second size on the same thread, and any size on a worker, get a
    /// shared pool; both compute the same.
    #[test]
    fn a_thread_belongs_to_its_first_pool_and_shares_the_others() {
        std::thread::spawn(|| {
            let own = pool(2).unwrap();
            assert_eq!(rayon::current_thread_index(), Some(0));
            assert_eq!(own.current_num_threads(), 2);
            assert!(Arc::ptr_eq(&own, &pool(2).unwrap()));
            let names: Vec<Option<String>> = own.install(|| {
                (0..64).into_par_iter().map(|_| {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    std::thread::current().name().map(str::to_string)
                })
                .collect()
            });
            assert!(names.iter().any(|n| n.as_deref() == Some("nesl-cvl-1")), "{names:?}");
            let three = pool(3).unwrap();
            assert!(!Arc::ptr_eq(&three, &own));
            assert_eq!(three.install(|| (0..1000i64).into_par_iter().sum::<i64>()), 499_500);
            let from_worker = three.install(|| pool(2).unwrap());
            assert!(!Arc::ptr_eq(&from_worker, &own));
        })
        .join()
        .unwrap();
    }
}
