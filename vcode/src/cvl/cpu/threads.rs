//! How many threads the CPU vector library uses, and the thread pools it runs on.
//!
//! The count comes from [`set_threads`] (the CLI's `--threads N`), else from the
//! `NESL_THREADS` environment variable, else all cores. A library with one thread never
//! touches a pool. Pools are built once and kept, so making a `CpuCvl` is cheap: the
//! first pool a thread asks for has that thread as a member (worker 0); the
//! others are shared by every library of their thread count.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::cell::{Cell, RefCell};
use std::thread::ThreadId;
use std::time::{Duration, Instant};
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
pub(crate) fn pool(n: usize) -> Option<Arc<Pool>> {
    own_pool(n).or_else(|| shared_pool(n))
}

/// A pool of worker threads that stay awake between operations ([`Pool::run`]).
///
/// A rayon worker with nothing to do goes to sleep within some 20 us, and waking it takes
/// about 50 us on the 2-core virtual machine of the benchmarks, so an operation of 100 us
/// that followed 20 us or more of serial work ran no faster on two threads than on one
/// (measured with a two-block join: 96-162 us a step against an ideal of 70-100).
/// Quicksort's deep levels are such a sequence (a hundred thousand short segments:
/// operations of 50-500 us between the interpreter's serial steps), and they ran slower
/// on two threads than on one. So after parallel work the other workers are each given a
/// job that keeps them looking for work ([`rayon::yield_now`], which runs any block
/// posted meanwhile, and the processor yielded to any other thread that wants it) until
/// none has come for [`SPIN_IDLE`]: the next operation's blocks are taken at once, and a
/// library left idle costs no processor time after that. At most one worker per core
/// but one is kept awake in the whole process ([`awake_most`]), whatever the number of
/// pools: a test harness running many libraries at once does not fill the machine
/// with workers that only look for work.
pub(crate) struct Pool {
    workers: rayon::ThreadPool,
    /// Workers of this pool now running a [`Pool::keep_awake`] job.
    awake: AtomicUsize,
    /// The thread that is worker 0 of this pool and issues its operations ([`own_pool`]),
    /// which must never spin itself; `None` for a shared pool.
    owner: Option<ThreadId>,
}

/// How long a worker kept awake looks for work after its last block before it returns
/// to rayon (and sleeps): longer than the serial steps between two operations of a
/// vector program, short enough that an idle library costs nothing noticeable.
const SPIN_IDLE: Duration = Duration::from_millis(1);

/// Workers kept awake now, in all pools.
static AWAKE: AtomicUsize = AtomicUsize::new(0);

/// The most workers kept awake at once in the process: one per core but one (the threads
/// that issue operations need the rest).
fn awake_most() -> usize {
    static MOST: OnceLock<usize> = OnceLock::new();
    *MOST.get_or_init(|| cores().saturating_sub(1).max(1))
}

thread_local! {
    /// Set while this thread runs a [`Pool::keep_awake`] job (a job stolen while looking
    /// for work could be another one: it returns at once).
    static SPINNING: Cell<bool> = const { Cell::new(false) };
}

impl Pool {
    fn new(workers: rayon::ThreadPool, owner: Option<ThreadId>) -> Pool {
        Pool { workers, awake: AtomicUsize::new(0), owner }
    }
    /// Number of threads.
    pub(crate) fn threads(&self) -> usize {
        self.workers.current_num_threads()
    }
    /// Runs `f` (which starts parallel work) in the pool, then keeps the workers awake for
    /// the next operation.
    pub(crate) fn run<R: Send>(self: &Arc<Self>, f: impl FnOnce() -> R + Send) -> R {
        let r = self.workers.install(f);
        self.keep_awake();
        r
    }
    /// Gives every worker that is not awake (but the owner) a job that looks for work
    /// until none has come for [`SPIN_IDLE`], while the process has fewer than
    /// [`awake_most`] such workers.
    fn keep_awake(self: &Arc<Self>) {
        let want = self.threads() - usize::from(self.owner.is_some());
        while self.awake.load(Ordering::Acquire) < want {
            if AWAKE.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < awake_most()).then_some(n + 1)).is_err() {
                return;
            }
            if self.awake.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < want).then_some(n + 1)).is_err() {
                AWAKE.fetch_sub(1, Ordering::AcqRel);
                return;
            }
            let pool = Arc::clone(self);
            self.workers.spawn(move || {
                pool.look_for_work();
            });
        }
    }
    /// The job of a worker kept awake: runs the blocks it finds, and between them yields
    /// the processor (to any other thread that is ready to run; at once back when none is).
    /// On the owner, or inside another such job, it returns at once (false).
    fn look_for_work(&self) -> bool {
        let nested = SPINNING.with(|s| s.replace(true));
        let looks = !nested && self.owner != Some(std::thread::current().id());
        if looks {
            let mut last = Instant::now();
            loop {
                match rayon::yield_now() {
                    Some(rayon::Yield::Executed) => last = Instant::now(),
                    _ if last.elapsed() >= SPIN_IDLE => break,
                    _ => std::thread::yield_now(),
                }
            }
        }
        SPINNING.with(|s| s.set(nested));
        self.awake.fetch_sub(1, Ordering::AcqRel);
        AWAKE.fetch_sub(1, Ordering::AcqRel);
        looks
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("threads", &self.threads()).field("owner", &self.owner).finish()
    }
}

thread_local! {
    /// The pool this thread is worker 0 of, and its number of threads.
    static OWN: RefCell<Option<(usize, Arc<Pool>)>> = const { RefCell::new(None) };
}

/// The pool of `n` threads this thread belongs to (built on the first call: this thread
/// and `n - 1` workers); `None` when this thread already belongs to a pool of another
/// size or to any other pool (a worker thread), or the pool cannot be built.
fn own_pool(n: usize) -> Option<Arc<Pool>> {
    OWN.try_with(|own| {
        let mut own = own.try_borrow_mut().ok()?;
        if let Some((m, p)) = &*own {
            return (*m == n).then(|| p.clone());
        }
        if rayon::current_thread_index().is_some() {
            return None;
        }
        let workers = builder(n).use_current_thread().build().ok()?;
        let p = Arc::new(Pool::new(workers, Some(std::thread::current().id())));
        *own = Some((n, p.clone()));
        Some(p)
    })
    .ok()
    .flatten()
}

/// The pool of `n` threads shared by every thread without its own ([`own_pool`]).
fn shared_pool(n: usize) -> Option<Arc<Pool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<Pool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut pools = pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&n) {
        return Some(p.clone());
    }
    let p = Arc::new(Pool::new(builder(n).build().ok()?, None));
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
            assert_eq!(own.threads(), 2);
            assert!(Arc::ptr_eq(&own, &pool(2).unwrap()));
            let names: Vec<Option<String>> = own.run(|| {
                (0..64).into_par_iter().map(|_| {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    std::thread::current().name().map(str::to_string)
                })
                .collect()
            });
            assert!(names.iter().any(|n| n.as_deref() == Some("nesl-cvl-1")), "{names:?}");
            let three = pool(3).unwrap();
            assert!(!Arc::ptr_eq(&three, &own));
            assert_eq!(three.run(|| (0..1000i64).into_par_iter().sum::<i64>()), 499_500);
            let from_worker = three.workers.install(|| pool(2).unwrap());
            assert!(!Arc::ptr_eq(&from_worker, &own));
        })
        .join()
        .unwrap();
    }

    /// After parallel work the other worker looks for work, runs the blocks of the next
    /// operations (results as on one thread), and goes back to rayon once nothing has come
    /// for [`SPIN_IDLE`]; the owner never looks for work itself, and the process never has
    /// more such workers than [`awake_most`].
    #[test]
    fn workers_kept_awake_run_the_next_operations_then_stop() {
        std::thread::spawn(|| {
            let p = pool(2).unwrap();
            let sum = |n: i64| p.run(|| (0..n).into_par_iter().map(|x| x * x).sum::<i64>());
            for n in [1_000i64, 50_000, 200_000] {
                assert_eq!(sum(n), (0..n).map(|x| x * x).sum::<i64>());
                assert!(AWAKE.load(Ordering::Acquire) <= awake_most());
                assert!(p.awake.load(Ordering::Acquire) <= 1, "only worker 1 of 2 is kept awake");
            }
            // The owner given the job (as when it steals it back) returns at once.
            p.awake.fetch_add(1, Ordering::AcqRel);
            AWAKE.fetch_add(1, Ordering::AcqRel);
            assert!(!p.look_for_work(), "the owner does not look for work");
            let t = Instant::now();
            while p.awake.load(Ordering::Acquire) > 0 {
                assert!(t.elapsed() < Duration::from_secs(10), "a worker kept awake never stopped");
                std::thread::sleep(Duration::from_millis(1));
            }
        })
        .join()
        .unwrap();
    }
}
