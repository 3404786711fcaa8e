// The measurement behind `vcode::cvl::cpu::threads::Pool` (session 28): how long a step of
// `gap` us of serial work followed by a two-block `rayon::join` of `work` us takes on a
// pool of two threads whose caller is worker 0, with and without a job that keeps the
// other worker looking for work between steps (`KA=1`). A standalone crate:
// `[dependencies] rayon = "1"`, this file as `src/main.rs`, `cargo run --release`.
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Instant, Duration};
fn spin(us: u64) { let t = Instant::now(); while t.elapsed() < Duration::from_micros(us) { std::hint::spin_loop(); } }
static AWAKE: AtomicBool = AtomicBool::new(false);
fn keep_awake(pool: &rayon::ThreadPool, idle: Duration) {
    if AWAKE.swap(true, Ordering::AcqRel) { return; }
    pool.spawn(move || {
        if rayon::current_thread_index() == Some(0) { AWAKE.store(false, Ordering::Release); return; }
        let mut last = Instant::now();
        loop {
            match rayon::yield_now() {
                Some(rayon::Yield::Executed) => last = Instant::now(),
                _ => { if last.elapsed() > idle { break; } std::hint::spin_loop(); }
            }
        }
        AWAKE.store(false, Ordering::Release);
    });
}
fn main() {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).use_current_thread().build().unwrap();
    let ka = std::env::var("KA").is_ok();
    for gap in [0u64, 5, 20, 50, 200] {
        for work in [20u64, 50, 100, 400] {
            let n = 2000;
            let t = Instant::now();
            for _ in 0..n { spin(gap); pool.install(|| rayon::join(|| spin(work/2), || spin(work/2))); if ka { keep_awake(&pool, Duration::from_millis(2)); } }
            let par = t.elapsed().as_secs_f64() / n as f64 * 1e6;
            println!("gap {gap:4} us work {work:4} us: par {par:7.1} us/iter, ideal {:7.1}", gap as f64 + work as f64/2.0);
        }
    }
}
