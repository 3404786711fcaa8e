//! Run-time failures of VCODE programs: a small enum of trap kinds plus the place where
//! the trap happened (filled in by the interpreter; vector libraries leave it empty).

use crate::ir::Origin;
use std::fmt;

/// What went wrong at run time. Every variant is a clean failure, never a panic.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrapKind {
    /// An index (permute, extract, replace, back-permute) fell outside its segment.
    #[error("index {index} out of range for a segment of length {len}")]
    IndexOutOfRange {
        /// The offending index (relative to its segment).
        index: i64,
        /// The length of the segment it had to fall into.
        len: usize,
    },
    /// Operand lengths (or segment counts) do not fit together.
    #[error("length mismatch: {0}")]
    LengthMismatch(String),
    /// An operand had the wrong element type (or was a segdes where a vector was expected).
    #[error("type mismatch: {0}")]
    TypeMismatch(String),
    /// An instruction needed more stack slots than there were.
    #[error("stack underflow: needs {needed} slots, the stack holds {have}")]
    StackUnderflow {
        /// Slots the instruction needed.
        needed: usize,
        /// Slots on the stack.
        have: usize,
    },
    /// Integer `/` or `%` by zero (or `RAND` with a zero bound).
    #[error("division by zero")]
    DivisionByZero,
    /// A segment length was negative.
    #[error("negative segment length {0}")]
    NegativeLength(i64),
    /// The vector library could not allocate memory.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// An `IF` flag vector was empty.
    #[error("IF condition is an empty vector")]
    EmptyCondition,
    /// The call stack grew beyond the configured limit (runaway recursion).
    #[error("call stack overflow (more than {0} nested calls)")]
    CallStackOverflow(usize),
    /// A value that cannot be printed (a pair) was left on the final stack.
    #[error("cannot print the final stack: {0}")]
    Unprintable(String),
    /// Writing program output failed.
    #[error("output error: {0}")]
    Output(String),
    /// The operation is not supported by this vector library or interpreter.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The run was stopped from outside (Ctrl-C: [`crate::interrupt::request`]).
    #[error("interrupted")]
    Interrupted,
    /// A failure inside a vector library back end (e.g. a CUDA error).
    #[error("backend error: {0}")]
    Backend(String),
    /// A run-time check of compiled NESL failed: the program ended with `EXIT` on a
    /// check record (see [`CheckFailure::record`]).
    #[error("{0}")]
    Check(CheckFailure),
}

/// A failed NESL argument check with its data. Compiled NESL reports one by ending the
/// program with `EXIT` on the INT vector `[CHECK_MARK, code, data...]` (the *check
/// record*); the branch that does so first writes CMU's fixed message, so CMU's
/// interpreter (which ignores what `EXIT` is given) prints that and stops, while this
/// interpreter, which holds back a `WRITE` that can only be followed by `EXIT`, reports
/// the record's data instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckFailure {
    /// `a[i]`, `->`, `<-` and the like: an index outside its sequence.
    Index {
        /// The index.
        index: i64,
        /// The length of the sequence it indexes.
        len: i64,
    },
    /// Sequences that must have equal lengths do not.
    Lengths {
        /// The length of the first.
        first: i64,
        /// The length of the other.
        other: i64,
    },
    /// Division (or remainder) by zero.
    DivideByZero,
    /// `subseq(a, start, end)`: a range that does not fit in the sequence.
    Range {
        /// The first position.
        start: i64,
        /// The position past the last.
        end: i64,
        /// The length of the sequence.
        len: i64,
    },
    /// `take` and `drop`: more elements (or, negative, from the end) than the sequence has.
    Count {
        /// The count asked for.
        count: i64,
        /// The length of the sequence.
        len: i64,
    },
    /// `[s:e:l]` (and `iseq`): an end before the start, or a stride below 1.
    BadRange {
        /// The start `s`.
        start: i64,
        /// The end `e`.
        end: i64,
        /// The stride `l`.
        stride: i64,
    },
    /// `x ^ n` with a negative exponent.
    NegativePower {
        /// The exponent.
        exponent: i64,
    },
    /// `rand(n)` with `n` not positive (`None`: a float, which a record cannot carry).
    RandBound {
        /// The argument, when it is an integer.
        bound: Option<i64>,
    },
    /// `hash(x, n)` with a table size `n` that is not positive.
    HashSize {
        /// The table size.
        size: i64,
    },
    /// `exp_string(x, d)` with more than 8 digits after the point.
    ExpStringDigits {
        /// The digits asked for.
        digits: i64,
    },
    /// `sqrt` of a negative number.
    NegativeSqrt,
    /// `ln` of a negative number.
    NegativeLn,
}

/// The first element of a check record: `NESL` in ASCII (fits CMU's 32-bit INT).
pub const CHECK_MARK: i64 = 0x4E45_534C;

impl CheckFailure {
    /// The record's code for this kind of failure.
    pub fn code(&self) -> i64 {
        match self {
            CheckFailure::Index { .. } => 1,
            CheckFailure::Lengths { .. } => 2,
            CheckFailure::DivideByZero => 3,
            CheckFailure::Range { .. } => 4,
            CheckFailure::Count { .. } => 5,
            CheckFailure::BadRange { .. } => 6,
            CheckFailure::NegativePower { .. } => 7,
            CheckFailure::RandBound { bound: Some(_) } => 8,
            CheckFailure::HashSize { .. } => 9,
            CheckFailure::ExpStringDigits { .. } => 10,
            CheckFailure::NegativeSqrt => 11,
            CheckFailure::NegativeLn => 12,
            CheckFailure::RandBound { bound: None } => 13,
        }
    }

    /// How many data follow the code in a record of kind `code` (`None`: no such kind).
    pub fn data_len(code: i64) -> Option<usize> {
        match code {
            1 | 2 | 5 => Some(2),
            3 | 11 | 12 | 13 => Some(0),
            4 | 6 => Some(3),
            7..=10 => Some(1),
            _ => None,
        }
    }

    /// The check record `[CHECK_MARK, code, data...]`.
    pub fn record(&self) -> Vec<i64> {
        let data = match *self {
            CheckFailure::Index { index, len } => vec![index, len],
            CheckFailure::Lengths { first, other } => vec![first, other],
            CheckFailure::DivideByZero => vec![],
            CheckFailure::Range { start, end, len } => vec![start, end, len],
            CheckFailure::Count { count, len } => vec![count, len],
            CheckFailure::BadRange { start, end, stride } => vec![start, end, stride],
            CheckFailure::NegativePower { exponent: x }
            | CheckFailure::RandBound { bound: Some(x) }
            | CheckFailure::HashSize { size: x }
            | CheckFailure::ExpStringDigits { digits: x } => vec![x],
            CheckFailure::NegativeSqrt | CheckFailure::NegativeLn | CheckFailure::RandBound { bound: None } => vec![],
        };
        let mut r = vec![CHECK_MARK, self.code()];
        r.extend(data);
        r
    }

    /// Reads a check record; `None` when `r` is not one.
    pub fn from_record(r: &[i64]) -> Option<Self> {
        let (head, data) = (r.get(..2)?, r.get(2..)?);
        let code = head[1];
        if head[0] != CHECK_MARK || Self::data_len(code) != Some(data.len()) {
            return None;
        }
        Some(match code {
            1 => CheckFailure::Index { index: data[0], len: data[1] },
            2 => CheckFailure::Lengths { first: data[0], other: data[1] },
            4 => CheckFailure::Range { start: data[0], end: data[1], len: data[2] },
            5 => CheckFailure::Count { count: data[0], len: data[1] },
            6 => CheckFailure::BadRange { start: data[0], end: data[1], stride: data[2] },
            7 => CheckFailure::NegativePower { exponent: data[0] },
            8 => CheckFailure::RandBound { bound: Some(data[0]) },
            9 => CheckFailure::HashSize { size: data[0] },
            10 => CheckFailure::ExpStringDigits { digits: data[0] },
            11 => CheckFailure::NegativeSqrt,
            12 => CheckFailure::NegativeLn,
            13 => CheckFailure::RandBound { bound: None },
            _ => CheckFailure::DivideByZero,
        })
    }
}

impl fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckFailure::Index { index, len } => write!(f, "index {index} is out of bounds for a sequence of length {len}"),
            CheckFailure::Lengths { first, other } => write!(f, "length mismatch: a sequence of length {first} with one of length {other}"),
            CheckFailure::DivideByZero => f.write_str("division by zero"),
            CheckFailure::Range { start, end, len } => {
                write!(f, "the range {start} to {end} does not fit in a sequence of length {len}")
            }
            CheckFailure::Count { count, len } => {
                write!(f, "{} elements asked of a sequence of length {len}", count.unsigned_abs())
            }
            CheckFailure::BadRange { start, end, stride } if *stride < 1 => {
                write!(f, "the stride of the range [{start}:{end}:{stride}] must be positive")
            }
            CheckFailure::BadRange { start, end, stride } => {
                write!(f, "the range [{start}:{end}:{stride}] ends before it starts")
            }
            CheckFailure::NegativePower { exponent } => {
                write!(f, "the exponent of `^` must not be negative; it is {exponent}")
            }
            CheckFailure::RandBound { bound: Some(n) } => {
                write!(f, "the argument of `rand` must be positive; it is {n}")
            }
            CheckFailure::RandBound { bound: None } => f.write_str("the argument of `rand` must be positive"),
            CheckFailure::HashSize { size } => {
                write!(f, "the table size given to `hash` must be positive; it is {size}")
            }
            CheckFailure::ExpStringDigits { digits } => {
                write!(f, "`exp_string` shows at most 8 digits after the point; {digits} were asked")
            }
            CheckFailure::NegativeSqrt => f.write_str("square root of a negative number"),
            CheckFailure::NegativeLn => f.write_str("logarithm of a negative number"),
        }
    }
}

/// Where a trap happened: the instruction, its function, its source position, its
/// [`Origin`] and the run-time call stack that led to it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrapSite {
    /// The instruction as written (e.g. `PERMUTE INT`).
    pub instr: String,
    /// The enclosing function.
    pub function: String,
    /// 1-based source line (`origin.pos.line`).
    pub line: u32,
    /// 1-based source column (`origin.pos.col`).
    pub col: u32,
    /// Where the instruction came from (its position, scope and inline chain; expand
    /// `origin.inlined_at` through [`Program::inline_sites`](crate::Program::inline_sites)).
    pub origin: Origin,
    /// The active calls at the time, innermost first: for each, the function that made
    /// the call and the origin of its `CALL` instruction. Empty in the entry function;
    /// at most [`MAX_FRAMES`] frames.
    /// These are run-time frames only; calls the optimiser inlined show up in the
    /// `inlined_at` chains of `origin` and of each frame's `call`.
    pub stack: Vec<Frame>,
}

/// Most frames a [`TrapSite::stack`] keeps (the innermost ones): a runaway recursion
/// does not build a million-frame report.
pub const MAX_FRAMES: usize = 1000;

/// One active call of a [`TrapSite::stack`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frame {
    /// The VCODE function that executed the `CALL` (the caller).
    pub function: String,
    /// The origin of that `CALL` instruction.
    pub call: Origin,
}

/// A run-time failure: its kind and, once the interpreter has seen it, its site.
#[derive(Debug, Clone, PartialEq)]
pub struct Trap {
    /// What went wrong.
    pub kind: TrapKind,
    /// Where (absent while the trap travels up from a vector library). Boxed: traps
    /// travel in every `Result` of the vector libraries, which stay small.
    pub site: Option<Box<TrapSite>>,
    /// For a trap of a superoperator (`FUSED`): which of its element-wise operations
    /// failed, numbered in evaluation order (postfix: operands left to right, then the
    /// operation), at the first element (in element order) where one failed. Set by the
    /// vector library; the interpreter turns it into the origin of that operation
    /// ([`crate::Program::part_origin`]) when it attaches the site.
    pub part: Option<u32>,
    /// For a trap a vector library found after the instruction that caused it (a GPU
    /// library's deferred checks): that instruction's position, as the interpreter gave
    /// it to [`crate::Cvl::set_position`]. The interpreter names that instruction.
    pub deferred_at: Option<u64>,
}

impl Trap {
    /// A trap with no site yet (what vector libraries return).
    pub fn new(kind: TrapKind) -> Self {
        Trap { kind, site: None, part: None, deferred_at: None }
    }
    /// The same trap, raised by operation `part` of a superoperator (see [`Trap::part`]);
    /// an operation already named (by an inner evaluation) is kept.
    pub fn in_part(mut self, part: u32) -> Self {
        if self.part.is_none() && self.site.is_none() {
            self.part = Some(part);
        }
        self
    }
    /// Shorthand for [`TrapKind::LengthMismatch`].
    pub fn length(msg: impl Into<String>) -> Self {
        Trap::new(TrapKind::LengthMismatch(msg.into()))
    }
    /// Shorthand for [`TrapKind::TypeMismatch`].
    pub fn ty(msg: impl Into<String>) -> Self {
        Trap::new(TrapKind::TypeMismatch(msg.into()))
    }
    /// Shorthand for [`TrapKind::Backend`].
    pub fn backend(msg: impl Into<String>) -> Self {
        Trap::new(TrapKind::Backend(msg.into()))
    }
    /// Shorthand for [`TrapKind::IndexOutOfRange`].
    pub fn index(index: i64, len: usize) -> Self {
        Trap::new(TrapKind::IndexOutOfRange { index, len })
    }
    /// Attaches a site unless one is already there.
    pub fn at(mut self, site: impl FnOnce() -> TrapSite) -> Self {
        if self.site.is_none() {
            self.site = Some(Box::new(site()));
        }
        self
    }
    /// The instruction a trap raised while running the instruction at `pc` belongs to:
    /// `pc`, or the earlier one whose deferred check reported it.
    pub fn raised_at(&self, pc: usize) -> usize {
        self.deferred_at.map_or(pc, |p| p as usize)
    }

    /// Attaches the site of the instruction that raised the trap, in program `p`, unless
    /// one is already there; when a superoperator's operation raised it ([`Trap::part`]),
    /// the site names that operation's origin instead of the `FUSED` instruction's.
    pub fn at_in(mut self, p: &crate::Program, site: impl FnOnce() -> TrapSite) -> Self {
        if self.site.is_none() {
            let mut s = site();
            if let Some(k) = self.part.take() {
                let o = p.part_origin(s.origin, k);
                s.origin = o;
                s.line = o.pos.line;
                s.col = o.pos.col;
            }
            self.site = Some(Box::new(s));
        }
        self
    }
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.site {
            Some(s) => write!(
                f,
                "{}:{}: runtime error in function {} at `{}`: {}",
                s.line, s.col, s.function, s.instr, self.kind
            ),
            None => write!(f, "runtime error: {}", self.kind),
        }
    }
}

impl std::error::Error for Trap {}

impl From<TrapKind> for Trap {
    fn from(kind: TrapKind) -> Self {
        Trap::new(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_records_round_trip_and_reject_other_vectors() {
        let all = [
            CheckFailure::Index { index: 5, len: 2 },
            CheckFailure::Lengths { first: 3, other: 2 },
            CheckFailure::DivideByZero,
            CheckFailure::Range { start: 2, end: 9, len: 4 },
            CheckFailure::Count { count: -7, len: 3 },
            CheckFailure::BadRange { start: 5, end: 2, stride: 1 },
            CheckFailure::NegativePower { exponent: -3 },
            CheckFailure::RandBound { bound: Some(0) },
            CheckFailure::RandBound { bound: None },
            CheckFailure::HashSize { size: -1 },
            CheckFailure::ExpStringDigits { digits: 12 },
            CheckFailure::NegativeSqrt,
            CheckFailure::NegativeLn,
        ];
        for c in all {
            assert_eq!(CheckFailure::from_record(&c.record()), Some(c.clone()));
        }
        assert_eq!(
            CheckFailure::Index { index: 5, len: 2 }.to_string(),
            "index 5 is out of bounds for a sequence of length 2"
        );
        assert_eq!(
            CheckFailure::Count { count: -7, len: 3 }.to_string(),
            "7 elements asked of a sequence of length 3"
        );
        assert_eq!(CheckFailure::from_record(&[CHECK_MARK, 4, 1, 2]), None);
        assert_eq!(CheckFailure::from_record(&[1]), None);
        assert_eq!(CheckFailure::from_record(&[CHECK_MARK + 1, 3]), None);
        assert_eq!(CheckFailure::from_record(&[CHECK_MARK, 1, 5]), None);
        assert_eq!(CheckFailure::from_record(&[CHECK_MARK, 9]), None);
        assert_eq!(CheckFailure::from_record(&[CHECK_MARK, 14]), None);
        assert_eq!(
            CheckFailure::BadRange { start: 0, end: 9, stride: 0 }.to_string(),
            "the stride of the range [0:9:0] must be positive"
        );
        assert_eq!(
            CheckFailure::BadRange { start: 5, end: 2, stride: 1 }.to_string(),
            "the range [5:2:1] ends before it starts"
        );
    }
}
