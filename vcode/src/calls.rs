//! The interpreter's call stack: the return address of every active call, plus a
//! bounded record of the tail calls made since, for backtraces.
//!
//! A `CALL` in tail position (see `interp::mark_tail_calls`) pushes no frame: the callee
//! returns straight to its caller's caller, so tail recursion runs in constant space.
//! So that a backtrace still names the functions that tail-called their way to the
//! failing one, the stack also keeps the most recent tail calls above each frame: at
//! most `2 * TAIL_KEEP` of them, the older ones being forgotten.

/// How many of the most recent tail calls above a frame a backtrace is sure to show.
const TAIL_KEEP: usize = 16;

/// Active calls, outermost first.
#[derive(Debug, Default)]
pub(crate) struct CallStack {
    /// `(return address, tail)`: a real frame, or the record of a tail call (its
    /// "return address" is the instruction after the tail `CALL`).
    entries: Vec<(usize, bool)>,
    /// Real frames.
    depth: usize,
    /// Tail-call records on top of the last real frame.
    tail_run: usize,
}

impl CallStack {
    /// A call that returns to `ret`.
    pub(crate) fn call(&mut self, ret: usize) {
        self.entries.push((ret, false));
        self.depth += 1;
        self.tail_run = 0;
    }

    /// A tail call made by the instruction before `after`.
    pub(crate) fn tail_call(&mut self, after: usize) {
        if self.tail_run >= 2 * TAIL_KEEP {
            let start = self.entries.len() - self.tail_run;
            self.entries.drain(start..start + TAIL_KEEP);
            self.tail_run -= TAIL_KEEP;
        }
        self.entries.push((after, true));
        self.tail_run += 1;
    }

    /// Returns from the current function: the return address of its frame (`None` in the
    /// entry function).
    pub(crate) fn ret(&mut self) -> Option<usize> {
        let real = self.entries.len() - self.tail_run;
        self.entries.truncate(real);
        let (r, _) = self.entries.pop()?;
        self.depth -= 1;
        self.tail_run = self.entries.iter().rev().take_while(|e| e.1).count();
        Some(r)
    }

    /// Number of active calls (real frames).
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// The address after each `CALL` on the way to the current instruction, outermost
    /// first (tail calls included, as far as they are recorded).
    pub(crate) fn returns(&self) -> impl DoubleEndedIterator<Item = usize> + '_ {
        self.entries.iter().map(|e| e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_records_are_bounded_and_go_with_their_frame() {
        let mut c = CallStack::default();
        c.call(10);
        for i in 0..1000 {
            c.tail_call(100 + i);
        }
        assert_eq!(c.depth(), 1);
        assert!(c.returns().count() <= 1 + 2 * TAIL_KEEP);
        assert_eq!(c.returns().last(), Some(1099), "the latest tail call is kept");
        c.call(20);
        c.tail_call(30);
        assert_eq!(c.ret(), Some(20));
        assert_eq!(c.returns().last(), Some(1099));
        assert_eq!(c.ret(), Some(10));
        assert_eq!(c.ret(), None);
        assert_eq!(c.depth(), 0);
    }
}
