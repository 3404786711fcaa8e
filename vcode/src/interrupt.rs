//! Interrupting a running program (Ctrl-C): one process-wide flag.
//!
//! The command line's signal handler calls [`request`]; the interpreter polls the flag
//! before every instruction and stops the run with [`TrapKind::Interrupted`]. The CPU
//! vector library polls it too, once per block of a long operation (see
//! `cvl::cpu::par`): it then skips the blocks still to do and marks the work
//! [`abandoned`], so that an operation whose output it did not finish returns the trap
//! instead of a half-written vector, and the interpreter never lets a program go on
//! with one. The top level [`clear`]s the flag before each form.
//!
//! The flag is an atomic boolean read with relaxed ordering: a poll is one load.
//!
//! [`TrapKind::Interrupted`]: crate::TrapKind::Interrupted

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by [`request`], cleared by [`clear`].
static REQUESTED: AtomicBool = AtomicBool::new(false);
/// Set when some work was skipped because of a request (cleared by [`clear`]).
static ABANDONED: AtomicBool = AtomicBool::new(false);

/// Asks the running program to stop (what a SIGINT handler calls; async-signal-safe).
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// True when a stop was asked for since the last [`clear`].
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Forgets any request (before a new top-level form or debugger command).
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
    ABANDONED.store(false, Ordering::Relaxed);
}

/// For a vector library about to run one block of work: true when a stop was asked
/// for, in which case the block must be skipped and the work counts as abandoned.
#[inline]
pub fn skip_work() -> bool {
    if requested() {
        ABANDONED.store(true, Ordering::Relaxed);
        true
    } else {
        false
    }
}

/// True when some vector operation skipped part of its work since the last [`clear`]:
/// its result is incomplete and the run must stop.
#[inline]
pub fn abandoned() -> bool {
    ABANDONED.load(Ordering::Relaxed)
}
