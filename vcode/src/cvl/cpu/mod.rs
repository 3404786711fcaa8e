//! The CPU vector library: [`Cvl`] on host memory.
//!
//! Vectors are reference-counted `Vec`s of `i64`, `f64` or `bool`; a segment descriptor
//! keeps its lengths, its segment start offsets and its element count. Every operation
//! is written once, generic over the element type ([`Elem`]); the `Data` enum is only
//! matched at the edges to pick the instantiation. All sizes and indices are checked:
//! a bad operand is a [`Trap`], never a panic. Superoperators are evaluated in
//! cache-sized chunks ([`CHUNK`] elements) without full-length intermediates.
//!
//! Large buffers are recycled: when the last handle of a vector of at least 16K elements
//! drops, its buffer goes to a small per-thread pool (8 buffers, 1 GiB at most), and the next result of about that
//! size is written into it. A chain of operations over 10M elements then touches the
//! same few buffers instead of mapping (and page-faulting) fresh memory for every result,
//! which made each such operation several times slower (see `bench/vcode`).

use super::{BinOp, Cvl, HostScalar, HostVector, ReduceOp, UnOp, VType, FLOAT_MAX_IDENTITY, INT_MAX_IDENTITY};
use crate::fused::{Expr, SuperOp};
use crate::trap::{Trap, TrapKind};
use std::rc::Rc;

pub mod threads;

/// Elements per chunk when evaluating a superoperator.
pub const CHUNK: usize = 4096;

/// The storage of one CPU vector.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    /// Integers.
    Int(Vec<i64>),
    /// Doubles.
    Float(Vec<f64>),
    /// Booleans.
    Bool(Vec<bool>),
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Data::Int(v) => v.len(),
            Data::Float(v) => v.len(),
            Data::Bool(v) => v.len(),
        }
    }
    fn vtype(&self) -> VType {
        match self {
            Data::Int(_) => VType::Int,
            Data::Float(_) => VType::Float,
            Data::Bool(_) => VType::Bool,
        }
    }
    fn slice(&self) -> Slice<'_> {
        match self {
            Data::Int(v) => Slice::Int(v),
            Data::Float(v) => Slice::Float(v),
            Data::Bool(v) => Slice::Bool(v),
        }
    }
}

/// A borrowed run of elements of one type.
#[derive(Debug, Clone, Copy)]
enum Slice<'a> {
    Int(&'a [i64]),
    Float(&'a [f64]),
    Bool(&'a [bool]),
}

impl<'a> Slice<'a> {
    fn len(&self) -> usize {
        match self {
            Slice::Int(v) => v.len(),
            Slice::Float(v) => v.len(),
            Slice::Bool(v) => v.len(),
        }
    }
    fn vtype(&self) -> VType {
        match self {
            Slice::Int(_) => VType::Int,
            Slice::Float(_) => VType::Float,
            Slice::Bool(_) => VType::Bool,
        }
    }
    fn range(self, lo: usize, hi: usize) -> Slice<'a> {
        match self {
            Slice::Int(v) => Slice::Int(&v[lo..hi]),
            Slice::Float(v) => Slice::Float(&v[lo..hi]),
            Slice::Bool(v) => Slice::Bool(&v[lo..hi]),
        }
    }
}

/// An element type of the CPU library (`i64`, `f64`, `bool`).
pub trait Elem: Copy + Default + PartialOrd + std::fmt::Debug + 'static {
    /// The VCODE element type.
    const VT: VType;
    /// Wraps a vector of this type.
    fn wrap(v: Vec<Self>) -> Data;
    /// Takes the vector out of `d` if it has this type.
    fn unwrap(d: Data) -> Option<Vec<Self>>;
    /// Views `d` as this type.
    fn view(d: &Data) -> Option<&[Self]>;
}

macro_rules! elem {
    ($t:ty, $var:ident) => {
        impl Elem for $t {
            const VT: VType = VType::$var;
            fn wrap(v: Vec<Self>) -> Data {
                Data::$var(v)
            }
            fn unwrap(d: Data) -> Option<Vec<Self>> {
                match d {
                    Data::$var(v) => Some(v),
                    _ => None,
                }
            }
            fn view(d: &Data) -> Option<&[Self]> {
                match d {
                    Data::$var(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
elem!(i64, Int);
elem!(f64, Float);
elem!(bool, Bool);

/// Maximum and minimum, shared by `i64` and `f64` (for floats, a NaN operand `b` is
/// never chosen).
trait Num: Elem {
    fn max(a: Self, b: Self) -> Self {
        if b > a {
            b
        } else {
            a
        }
    }
    fn min(a: Self, b: Self) -> Self {
        if b < a {
            b
        } else {
            a
        }
    }
}
impl Num for i64 {}
impl Num for f64 {}

/// Reuses the storage of `out` for a vector of `T` (empty, capacity kept when the type
/// matches).
fn take<T: Elem>(out: &mut Data) -> Vec<T> {
    match T::unwrap(std::mem::replace(out, Data::Int(Vec::new()))) {
        Some(mut v) => {
            v.clear();
            v
        }
        None => Vec::new(),
    }
}

/// Buffers of at least this many elements go back to a pool when their vector dies, and
/// new vectors of about their size take them from there: a program's working set of
/// large vectors is allocated (and page-faulted in) once, not once per operation.
const POOLED_MIN: usize = 1 << 14;
/// Most buffers the pool keeps (the oldest goes first).
const POOL_SLOTS: usize = 8;
/// Most bytes the pool keeps, so that idle buffers never hold more than this much memory.
const POOL_BYTES: usize = 1 << 30;

thread_local! {
    static POOL: std::cell::RefCell<Vec<Data>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn capacity(d: &Data) -> usize {
    match d {
        Data::Int(v) => v.capacity(),
        Data::Float(v) => v.capacity(),
        Data::Bool(v) => v.capacity(),
    }
}

fn bytes(d: &Data) -> usize {
    match d {
        Data::Int(v) => v.capacity() * std::mem::size_of::<i64>(),
        Data::Float(v) => v.capacity() * std::mem::size_of::<f64>(),
        Data::Bool(v) => v.capacity(),
    }
}

/// Gives a dead vector's buffer to the pool.
fn recycle(d: Data) {
    if capacity(&d) >= POOLED_MIN && bytes(&d) <= POOL_BYTES {
        // A thread that is exiting has no pool any more; the buffer is then just freed.
        let _ = POOL.try_with(|p| {
            let mut p = p.borrow_mut();
            let mut held: usize = p.iter().map(bytes).sum::<usize>() + bytes(&d);
            while !p.is_empty() && (p.len() >= POOL_SLOTS || held > POOL_BYTES) {
                held -= bytes(&p.remove(0));
            }
            p.push(d);
        });
    }
}

/// An empty buffer of `T` with room for `n` elements (and at most `4n`) from the pool.
fn pooled<T: Elem>(n: usize) -> Option<Vec<T>> {
    if n < POOLED_MIN {
        return None;
    }
    POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        let best = p
            .iter()
            .enumerate()
            .filter(|(_, d)| d.vtype() == T::VT && (n..=n.saturating_mul(4)).contains(&capacity(d)))
            .min_by_key(|(_, d)| capacity(d))
            .map(|(i, _)| i)?;
        let mut v = T::unwrap(p.swap_remove(best))?;
        v.clear();
        Some(v)
    })
    .ok()
    .flatten()
}

/// The output buffer `out` holds, or a pooled one when that has no room for `n`.
fn output<T: Elem>(out: &mut Data, n: usize) -> Vec<T> {
    let v = take::<T>(out);
    if v.capacity() >= n {
        return v;
    }
    pooled(n).unwrap_or(v)
}

#[inline]
fn map1<A: Copy, R: Elem>(a: &[A], out: &mut Data, f: impl Fn(A) -> R) {
    let mut v = output::<R>(out, a.len());
    v.extend(a.iter().map(|&x| f(x)));
    *out = R::wrap(v);
}

#[inline]
fn map2<A: Copy, B: Copy, R: Elem>(a: &[A], b: &[B], out: &mut Data, f: impl Fn(A, B) -> R) {
    let mut v = output::<R>(out, a.len());
    v.extend(a.iter().zip(b).map(|(&x, &y)| f(x, y)));
    *out = R::wrap(v);
}

fn compare<T: Elem>(op: BinOp, a: &[T], b: &[T], out: &mut Data, ordered: bool) -> bool {
    match op {
        BinOp::Eq => map2(a, b, out, |x, y| x == y),
        BinOp::Ne => map2(a, b, out, |x, y| x != y),
        BinOp::Lt if ordered => map2(a, b, out, |x, y| x < y),
        BinOp::Le if ordered => map2(a, b, out, |x, y| x <= y),
        BinOp::Gt if ordered => map2(a, b, out, |x, y| x > y),
        BinOp::Ge if ordered => map2(a, b, out, |x, y| x >= y),
        _ => return false,
    }
    true
}

fn unsupported(what: &str, t: VType) -> Trap {
    Trap::ty(format!("{what} is not defined on {}", t.name()))
}

/// Evaluates `$body` with `$f` bound to the element function of `$op` on elements of type
/// `$t` when the result has the operands' type (every binary operator but the
/// comparisons), giving `true`; gives `false` for the other operators. The one definition
/// of these operators, used by the out-of-place and the in-place paths. Integer `/` and
/// `%` expect the caller to have rejected zero divisors.
macro_rules! same_type_op {
    (i64, $op:expr, |$f:ident| $body:expr) => {
        match $op {
            BinOp::Add => same_type_op!(@run i64::wrapping_add, $f, $body),
            BinOp::Sub => same_type_op!(@run i64::wrapping_sub, $f, $body),
            BinOp::Mul => same_type_op!(@run i64::wrapping_mul, $f, $body),
            BinOp::Div => same_type_op!(@run i64::wrapping_div, $f, $body),
            BinOp::Mod => same_type_op!(@run i64::wrapping_rem, $f, $body),
            BinOp::Max => same_type_op!(@run <i64 as Num>::max, $f, $body),
            BinOp::Min => same_type_op!(@run <i64 as Num>::min, $f, $body),
            BinOp::Lshift => same_type_op!(@run |x: i64, y: i64| x.wrapping_shl((y & 63) as u32), $f, $body),
            BinOp::Rshift => same_type_op!(@run |x: i64, y: i64| x.wrapping_shr((y & 63) as u32), $f, $body),
            BinOp::And => same_type_op!(@run |x: i64, y: i64| x & y, $f, $body),
            BinOp::Or => same_type_op!(@run |x: i64, y: i64| x | y, $f, $body),
            BinOp::Xor => same_type_op!(@run |x: i64, y: i64| x ^ y, $f, $body),
            _ => false,
        }
    };
    (f64, $op:expr, |$f:ident| $body:expr) => {
        match $op {
            BinOp::Add => same_type_op!(@run |x: f64, y: f64| x + y, $f, $body),
            BinOp::Sub => same_type_op!(@run |x: f64, y: f64| x - y, $f, $body),
            BinOp::Mul => same_type_op!(@run |x: f64, y: f64| x * y, $f, $body),
            BinOp::Div => same_type_op!(@run |x: f64, y: f64| x / y, $f, $body),
            BinOp::Max => same_type_op!(@run <f64 as Num>::max, $f, $body),
            BinOp::Min => same_type_op!(@run <f64 as Num>::min, $f, $body),
            _ => false,
        }
    };
    (bool, $op:expr, |$f:ident| $body:expr) => {
        match $op {
            BinOp::And => same_type_op!(@run |x: bool, y: bool| x & y, $f, $body),
            BinOp::Or => same_type_op!(@run |x: bool, y: bool| x | y, $f, $body),
            BinOp::Xor => same_type_op!(@run |x: bool, y: bool| x ^ y, $f, $body),
            _ => false,
        }
    };
    (@run $fun:expr, $f:ident, $body:expr) => {{
        let $f = $fun;
        $body;
        true
    }};
}

fn check_divisors(op: BinOp, b: &[i64]) -> Result<(), Trap> {
    if matches!(op, BinOp::Div | BinOp::Mod) && b.contains(&0) {
        return Err(Trap::new(TrapKind::DivisionByZero));
    }
    Ok(())
}

fn binary_lengths(op: BinOp, a: usize, b: usize) -> Result<(), Trap> {
    if a != b {
        return Err(Trap::length(format!(
            "operands of `{}` have lengths {a} and {b}",
            crate::fused::binop_name(op)
        )));
    }
    Ok(())
}

/// `out = a op b` element-wise.
fn binary_into(op: BinOp, a: Slice, b: Slice, out: &mut Data) -> Result<(), Trap> {
    binary_lengths(op, a.len(), b.len())?;
    let done = match (a, b) {
        (Slice::Int(a), Slice::Int(b)) => {
            check_divisors(op, b)?;
            same_type_op!(i64, op, |f| map2(a, b, out, f)) || compare(op, a, b, out, true)
        }
        (Slice::Float(a), Slice::Float(b)) => {
            same_type_op!(f64, op, |f| map2(a, b, out, f)) || compare(op, a, b, out, true)
        }
        (Slice::Bool(a), Slice::Bool(b)) => {
            same_type_op!(bool, op, |f| map2(a, b, out, f)) || compare(op, a, b, out, false)
        }
        (a, b) => {
            return Err(Trap::ty(format!(
                "operands of `{}` are {} and {}",
                crate::fused::binop_name(op),
                a.vtype().name(),
                b.vtype().name()
            )))
        }
    };
    if done {
        Ok(())
    } else {
        Err(unsupported(&format!("`{}`", crate::fused::binop_name(op)), a.vtype()))
    }
}

#[inline]
fn zip_in<T: Copy>(a: &mut [T], b: &[T], f: impl Fn(T, T) -> T) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x = f(*x, y);
    }
}

/// `a = a op b` in place when the result has `a`'s type; `Ok(false)` (and `a` untouched)
/// when it has not.
fn binary_in_place(op: BinOp, a: &mut Data, b: Slice) -> Result<bool, Trap> {
    binary_lengths(op, a.len(), b.len())?;
    Ok(match (a, b) {
        (Data::Int(a), Slice::Int(b)) => {
            check_divisors(op, b)?;
            same_type_op!(i64, op, |f| zip_in(a, b, f))
        }
        (Data::Float(a), Slice::Float(b)) => same_type_op!(f64, op, |f| zip_in(a, b, f)),
        (Data::Bool(a), Slice::Bool(b)) => same_type_op!(bool, op, |f| zip_in(a, b, f)),
        _ => false,
    })
}

/// The `FLOAT -> FLOAT` functions among the unary operators.
fn float_fn(op: UnOp) -> Option<fn(f64) -> f64> {
    Some(match op {
        UnOp::Log => f64::ln,
        UnOp::Sqrt => f64::sqrt,
        UnOp::Exp => f64::exp,
        UnOp::Sin => f64::sin,
        UnOp::Cos => f64::cos,
        UnOp::Tan => f64::tan,
        UnOp::Asin => f64::asin,
        UnOp::Acos => f64::acos,
        UnOp::Atan => f64::atan,
        UnOp::Sinh => f64::sinh,
        UnOp::Cosh => f64::cosh,
        UnOp::Tanh => f64::tanh,
        _ => return None,
    })
}

/// `a = op a` in place when the result has `a`'s type; `false` (and `a` untouched) when
/// it has not.
fn unary_in_place(op: UnOp, a: &mut Data) -> bool {
    match (op, a) {
        (UnOp::Not, Data::Int(a)) => a.iter_mut().for_each(|x| *x = !*x),
        (UnOp::Not, Data::Bool(a)) => a.iter_mut().for_each(|x| *x = !*x),
        (UnOp::Sqrt, Data::Float(a)) => a.iter_mut().for_each(|x| *x = x.sqrt()),
        (op, Data::Float(a)) => match float_fn(op) {
            Some(f) => a.iter_mut().for_each(|x| *x = f(*x)),
            None => return false,
        },
        _ => return false,
    }
    true
}

/// `out = op a` element-wise.
fn unary_into(op: UnOp, a: Slice, out: &mut Data) -> Result<(), Trap> {
    match (op, a) {
        (UnOp::Not, Slice::Int(a)) => map1(a, out, |x: i64| !x),
        (UnOp::Not, Slice::Bool(a)) => map1(a, out, |x: bool| !x),
        (UnOp::Floor, Slice::Float(a)) => map1(a, out, |x: f64| x.floor() as i64),
        (UnOp::Ceil, Slice::Float(a)) => map1(a, out, |x: f64| x.ceil() as i64),
        (UnOp::Trunc, Slice::Float(a)) => map1(a, out, |x: f64| x.trunc() as i64),
        (UnOp::Round, Slice::Float(a)) => map1(a, out, |x: f64| (x + 0.5).trunc() as i64),
        (UnOp::IToF, Slice::Int(a)) => map1(a, out, |x: i64| x as f64),
        (UnOp::IToB, Slice::Int(a)) => map1(a, out, |x: i64| x != 0),
        (UnOp::BToI, Slice::Bool(a)) => map1(a, out, i64::from),
        (UnOp::Sqrt, Slice::Float(a)) => map1(a, out, f64::sqrt),
        (op, Slice::Float(a)) if float_fn(op).is_some() => {
            if let Some(f) = float_fn(op) {
                map1(a, out, f)
            }
        }
        (op, a) => return Err(unsupported(&format!("`{}`", crate::fused::unop_name(op)), a.vtype())),
    }
    Ok(())
}

fn select_t<T: Elem>(f: &[bool], a: &[T], b: &[T], out: &mut Data) {
    let mut v = output::<T>(out, f.len());
    v.extend(f.iter().zip(a.iter().zip(b)).map(|(&c, (&x, &y))| if c { x } else { y }));
    *out = T::wrap(v);
}

/// `out = f ? a : b` element-wise.
fn select_into(f: Slice, a: Slice, b: Slice, out: &mut Data) -> Result<(), Trap> {
    if f.len() != a.len() || a.len() != b.len() {
        return Err(Trap::length(format!(
            "operands of `SELECT` have lengths {}, {} and {}",
            f.len(),
            a.len(),
            b.len()
        )));
    }
    let Slice::Bool(f) = f else {
        return Err(Trap::ty(format!("`SELECT` flags are {}, not BOOL", f.vtype().name())));
    };
    match (a, b) {
        (Slice::Int(a), Slice::Int(b)) => select_t(f, a, b, out),
        (Slice::Float(a), Slice::Float(b)) => select_t(f, a, b, out),
        (Slice::Bool(a), Slice::Bool(b)) => select_t(f, a, b, out),
        (a, b) => {
            return Err(Trap::ty(format!(
                "branches of `SELECT` are {} and {}",
                a.vtype().name(),
                b.vtype().name()
            )))
        }
    }
    Ok(())
}

/// A segment descriptor: lengths, start offsets, element count.
#[derive(Debug, Clone, PartialEq)]
pub struct Seg {
    lens: Vec<usize>,
    starts: Vec<usize>,
    total: usize,
}

impl Seg {
    fn new(lens: &[i64]) -> Result<Seg, Trap> {
        let mut starts = Vec::with_capacity(lens.len());
        let mut out = Vec::with_capacity(lens.len());
        let mut total: usize = 0;
        for &l in lens {
            if l < 0 {
                return Err(Trap::new(TrapKind::NegativeLength(l)));
            }
            starts.push(total);
            out.push(l as usize);
            total = total
                .checked_add(l as usize)
                .filter(|t| *t <= (isize::MAX as usize) / 16)
                .ok_or_else(|| Trap::new(TrapKind::OutOfMemory(format!("segment lengths sum past {}", isize::MAX as usize / 16))))?;
        }
        Ok(Seg { lens: out, starts, total })
    }
    /// `(start, len)` of every segment.
    fn ranges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.starts.iter().copied().zip(self.lens.iter().copied())
    }
    fn m(&self) -> usize {
        self.lens.len()
    }
}

/// The storage of a vector handle: dropping the last handle gives the buffer back to
/// the pool.
#[derive(Debug)]
struct Buf(Data);

impl std::ops::Deref for Buf {
    type Target = Data;
    fn deref(&self) -> &Data {
        &self.0
    }
}

impl Drop for Buf {
    fn drop(&mut self) {
        recycle(std::mem::replace(&mut self.0, Data::Int(Vec::new())));
    }
}

/// Handle to a CPU data vector (reference counted).
#[derive(Debug, Clone)]
pub struct CpuVector(Rc<Buf>);

impl CpuVector {
    /// The elements.
    pub fn data(&self) -> &Data {
        &self.0 .0
    }
}

/// Handle to a CPU segment descriptor (reference counted).
#[derive(Debug, Clone)]
pub struct CpuSegdes(Rc<Seg>);

/// The CPU vector library.
#[derive(Debug)]
pub struct CpuCvl {
    rng: u64,
    max_elements: usize,
}

impl Default for CpuCvl {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuCvl {
    /// A library with the random generator seeded with 0.
    pub fn new() -> Self {
        CpuCvl { rng: 0, max_elements: usize::MAX }
    }
    /// A library that refuses (with an out-of-memory trap) any segment descriptor or
    /// fill describing more than `n` elements: a guard for untrusted programs.
    pub fn with_max_elements(n: usize) -> Self {
        CpuCvl { rng: 0, max_elements: n }
    }
    fn limit(&self, n: usize) -> Result<(), Trap> {
        if n <= self.max_elements {
            Ok(())
        } else {
            Err(Trap::new(TrapKind::OutOfMemory(format!(
                "{n} elements is over this library's limit of {}",
                self.max_elements
            ))))
        }
    }
    fn seg(&self, lens: &[i64]) -> Result<CpuSegdes, Trap> {
        let s = Seg::new(lens)?;
        self.limit(s.total.max(s.m()))?;
        Ok(CpuSegdes(Rc::new(s)))
    }
    fn next_random(&mut self) -> u64 {
        // splitmix64
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

fn vecd(d: Data) -> CpuVector {
    CpuVector(Rc::new(Buf(d)))
}

fn alloc<T: Elem>(n: usize) -> Result<Vec<T>, Trap> {
    if let Some(v) = pooled(n) {
        return Ok(v);
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Trap::new(TrapKind::OutOfMemory(format!("cannot allocate {n} elements"))))?;
    Ok(v)
}

/// A copy of `v` in a pooled or fresh buffer.
fn copied<T: Elem>(v: &[T]) -> Result<Vec<T>, Trap> {
    let mut out = alloc(v.len())?;
    out.extend_from_slice(v);
    Ok(out)
}

fn filled<T: Elem>(x: T, n: usize) -> Result<Vec<T>, Trap> {
    let mut v = alloc(n)?;
    v.resize(n, x);
    Ok(v)
}

fn ints<'a>(v: &'a CpuVector, what: &str) -> Result<&'a [i64], Trap> {
    match v.data() {
        Data::Int(x) => Ok(x),
        d => Err(Trap::ty(format!("{what} must be INT, not {}", d.vtype().name()))),
    }
}

fn bools<'a>(v: &'a CpuVector, what: &str) -> Result<&'a [bool], Trap> {
    match v.data() {
        Data::Bool(x) => Ok(x),
        d => Err(Trap::ty(format!("{what} must be BOOL, not {}", d.vtype().name()))),
    }
}

fn check_len(what: &str, have: usize, want: usize) -> Result<(), Trap> {
    if have == want {
        Ok(())
    } else {
        Err(Trap::length(format!("{what} has length {have}, expected {want}")))
    }
}

fn same_m(a: &Seg, b: &Seg) -> Result<(), Trap> {
    if a.m() == b.m() {
        Ok(())
    } else {
        Err(Trap::length(format!(
            "source descriptor has {} segments, destination descriptor {}",
            a.m(),
            b.m()
        )))
    }
}

#[inline]
fn idx(k: i64, len: usize) -> Result<usize, Trap> {
    if k >= 0 && (k as u64) < len as u64 {
        Ok(k as usize)
    } else {
        Err(Trap::index(k, len))
    }
}

/// Applies a generic function to the typed slice of a vector, wrapping its result.
macro_rules! each {
    ($d:expr, |$v:ident| $body:expr) => {
        match $d {
            Data::Int($v) => Data::Int($body?),
            Data::Float($v) => Data::Float($body?),
            Data::Bool($v) => Data::Bool($body?),
        }
    };
}

/// The same for two vectors that must have the same type.
macro_rules! each2 {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {
        match ($a, $b) {
            (Data::Int($x), Data::Int($y)) => Data::Int($body?),
            (Data::Float($x), Data::Float($y)) => Data::Float($body?),
            (Data::Bool($x), Data::Bool($y)) => Data::Bool($body?),
            (a, b) => {
                return Err(Trap::ty(format!(
                    "values are {} and {}; they must have one type",
                    a.vtype().name(),
                    b.vtype().name()
                )))
            }
        }
    };
}

fn scan_t<T: Elem>(v: &[T], s: &Seg, id: T, f: impl Fn(T, T) -> T) -> Result<Vec<T>, Trap> {
    let mut out = filled(id, v.len())?;
    for (st, len) in s.ranges() {
        // The identity is only ever an output (first element), never an operand, so
        // elements beyond the identity's range (e.g. ints below the 32-bit `min_int` that
        // is the reference's MAX identity) still combine correctly.
        let (seg, dst) = (&v[st..st + len], &mut out[st..st + len]);
        if let (Some((&first, rest)), Some((_, dst))) = (seg.split_first(), dst.split_first_mut()) {
            let mut acc = first;
            for (o, &x) in dst.iter_mut().zip(rest) {
                *o = acc;
                acc = f(acc, x);
            }
        }
    }
    Ok(out)
}

fn reduce_t<T: Copy>(v: &[T], s: &Seg, id: T, f: impl Fn(T, T) -> T) -> Result<Vec<T>, Trap> {
    // Identity only for an empty segment (see `scan_t`).
    Ok(s.ranges()
        .map(|(st, len)| v[st..st + len].iter().copied().reduce(&f).unwrap_or(id))
        .collect())
}

/// Runs `$f(slice, seg, identity, operator)` for the monoid of `$op` on `$d`'s type.
macro_rules! monoid {
    ($op:expr, $d:expr, $s:expr, $f:ident) => {
        match ($op, $d) {
            (ReduceOp::Add, Data::Int(v)) => Data::Int($f(v, $s, 0, i64::wrapping_add)?),
            (ReduceOp::Mul, Data::Int(v)) => Data::Int($f(v, $s, 1, i64::wrapping_mul)?),
            (ReduceOp::Max, Data::Int(v)) => Data::Int($f(v, $s, INT_MAX_IDENTITY, <i64 as Num>::max)?),
            (ReduceOp::Min, Data::Int(v)) => Data::Int($f(v, $s, -INT_MAX_IDENTITY - 1, <i64 as Num>::min)?),
            (ReduceOp::And, Data::Int(v)) => Data::Int($f(v, $s, -1, |a, b| a & b)?),
            (ReduceOp::Or, Data::Int(v)) => Data::Int($f(v, $s, 0, |a, b| a | b)?),
            (ReduceOp::Xor, Data::Int(v)) => Data::Int($f(v, $s, 0, |a, b| a ^ b)?),
            (ReduceOp::Add, Data::Float(v)) => Data::Float($f(v, $s, 0.0, |a, b| a + b)?),
            (ReduceOp::Mul, Data::Float(v)) => Data::Float($f(v, $s, 1.0, |a, b| a * b)?),
            (ReduceOp::Max, Data::Float(v)) => {
                Data::Float($f(v, $s, FLOAT_MAX_IDENTITY, <f64 as Num>::max)?)
            }
            (ReduceOp::Min, Data::Float(v)) => {
                Data::Float($f(v, $s, -FLOAT_MAX_IDENTITY, <f64 as Num>::min)?)
            }
            (ReduceOp::And, Data::Bool(v)) => Data::Bool($f(v, $s, true, |a, b| a & b)?),
            (ReduceOp::Or, Data::Bool(v)) => Data::Bool($f(v, $s, false, |a, b| a | b)?),
            (ReduceOp::Xor, Data::Bool(v)) => Data::Bool($f(v, $s, false, |a, b| a ^ b)?),
            (op, d) => return Err(unsupported(&format!("{op:?} scan/reduce"), d.vtype())),
        }
    };
}

fn permute_t<T: Elem>(v: &[T], i: &[i64], s: &Seg) -> Result<Vec<T>, Trap> {
    let mut out = filled(T::default(), v.len())?;
    for (st, len) in s.ranges() {
        let dst = &mut out[st..st + len];
        for (&x, &k) in v[st..st + len].iter().zip(&i[st..st + len]) {
            dst[idx(k, len)?] = x;
        }
    }
    Ok(out)
}

/// Scatter of the (flagged) sources of each source segment into the matching
/// destination segment of `out`.
fn scatter_t<T: Elem>(
    out: &mut [T],
    v: &[T],
    i: &[i64],
    f: Option<&[bool]>,
    ss: &Seg,
    sd: &Seg,
) -> Result<(), Trap> {
    for ((sst, slen), (dst, dlen)) in ss.ranges().zip(sd.ranges()) {
        let (src, ix, to) = (&v[sst..sst + slen], &i[sst..sst + slen], &mut out[dst..dst + dlen]);
        match f {
            None => {
                for (&x, &k) in src.iter().zip(ix) {
                    to[idx(k, dlen)?] = x;
                }
            }
            Some(f) => {
                for ((&x, &k), _) in src.iter().zip(ix).zip(&f[sst..sst + slen]).filter(|(_, &b)| b) {
                    to[idx(k, dlen)?] = x;
                }
            }
        }
    }
    Ok(())
}

fn gather_t<T: Elem>(v: &[T], i: &[i64], f: Option<&[bool]>, ss: &Seg, sd: &Seg) -> Result<Vec<T>, Trap> {
    let mut out = filled(T::default(), sd.total)?;
    for ((sst, slen), (dst, dlen)) in ss.ranges().zip(sd.ranges()) {
        let (src, ix, to) = (&v[sst..sst + slen], &i[dst..dst + dlen], &mut out[dst..dst + dlen]);
        match f {
            None => {
                for (o, &k) in to.iter_mut().zip(ix) {
                    *o = src[idx(k, slen)?];
                }
            }
            Some(f) => {
                for ((o, &k), &b) in to.iter_mut().zip(ix).zip(&f[dst..dst + dlen]) {
                    if b {
                        *o = src[idx(k, slen)?];
                    }
                }
            }
        }
    }
    Ok(out)
}

fn dist_t<T: Elem>(x: &[T], s: &Seg) -> Result<Vec<T>, Trap> {
    let mut out = alloc(s.total)?;
    for (k, (_, len)) in s.ranges().enumerate() {
        out.resize(out.len() + len, x[k]);
    }
    Ok(out)
}

fn extract_t<T: Elem>(v: &[T], i: &[i64], s: &Seg) -> Result<Vec<T>, Trap> {
    s.ranges().enumerate().map(|(k, (st, len))| Ok(v[st + idx(i[k], len)?])).collect()
}

fn replace_t<T: Elem>(out: &mut [T], i: &[i64], x: &[T], s: &Seg) -> Result<(), Trap> {
    for ((st, len), (&k, &y)) in s.ranges().zip(i.iter().zip(x)) {
        out[st + idx(k, len)?] = y;
    }
    Ok(())
}

/// A copy of a vector's elements.
fn copy_data(d: &Data) -> Result<Data, Trap> {
    Ok(match d {
        Data::Int(v) => Data::Int(copied(v)?),
        Data::Float(v) => Data::Float(copied(v)?),
        Data::Bool(v) => Data::Bool(copied(v)?),
    })
}

/// Runs `$body` on `$out` (mutable) and `$x` viewed at one element type; a type mismatch
/// is a trap.
macro_rules! each_mut {
    ($out:expr, $x:expr, |$o:ident, $y:ident| $body:expr) => {
        match ($out, $x) {
            (Data::Int($o), Data::Int($y)) => $body,
            (Data::Float($o), Data::Float($y)) => $body,
            (Data::Bool($o), Data::Bool($y)) => $body,
            (a, b) => {
                return Err(Trap::ty(format!(
                    "values are {} and {}; they must have one type",
                    a.vtype().name(),
                    b.vtype().name()
                )))
            }
        }
    };
}

impl CpuCvl {
    /// `REPLACE` into `out`, the elements of the replaced vector (owned). On error `out`
    /// comes back as it was when every index is in range (callers that reuse a vector's
    /// storage check the indices first).
    fn replace_into(&self, mut out: Data, i: &CpuVector, x: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, (Trap, Data)> {
        let r = (|| {
            let iv = ints(i, "REPLACE indices")?;
            check_len("REPLACE data", out.len(), s.0.total)?;
            check_len("REPLACE indices (one per segment)", iv.len(), s.0.m())?;
            check_len("REPLACE values (one per segment)", x.0.len(), s.0.m())?;
            each_mut!(&mut out, x.data(), |o, y| replace_t(o, iv, y, &s.0))
        })();
        match r {
            Ok(()) => Ok(vecd(out)),
            Err(t) => Err((t, out)),
        }
    }
    /// `DPERMUTE` into `out`, the elements of the defaults (owned); on error as
    /// [`CpuCvl::replace_into`].
    fn dpermute_into(
        &self,
        v: &CpuVector,
        i: &CpuVector,
        mut out: Data,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, (Trap, Data)> {
        let r = (|| {
            let iv = ints(i, "DPERMUTE indices")?;
            check_len("DPERMUTE data", v.0.len(), ss.0.total)?;
            check_len("DPERMUTE indices", iv.len(), ss.0.total)?;
            check_len("DPERMUTE defaults", out.len(), sd.0.total)?;
            same_m(&ss.0, &sd.0)?;
            each_mut!(&mut out, v.data(), |o, x| scatter_t(o, x, iv, None, &ss.0, &sd.0))
        })();
        match r {
            Ok(()) => Ok(vecd(out)),
            Err(t) => Err((t, out)),
        }
    }
}

fn pack_t<T: Elem>(v: &[T], f: &[bool], kept: usize) -> Result<Vec<T>, Trap> {
    // Branch-free: every element is stored at the next free position, which advances only
    // past kept ones (flags are unpredictable, a branch per element mispredicts often).
    // One spare slot takes the stores after the last kept element.
    let mut out = filled(T::default(), kept + 1)?;
    let mut j = 0usize;
    for (&x, &b) in v.iter().zip(f) {
        out[j.min(kept)] = x;
        j += b as usize;
    }
    out.truncate(kept);
    Ok(out)
}

/// Keys that rank: an order-preserving map to `u64`. Floats go by their IEEE bit
/// patterns as the reference's radix sort orders them (`-0.0` before `+0.0`, NaNs at the
/// ends), which is also a total order, so no key makes the sort misbehave.
trait RankKey: Elem {
    fn key(self) -> u64;
}
impl RankKey for i64 {
    fn key(self) -> u64 {
        (self as u64) ^ (1 << 63)
    }
}
impl RankKey for f64 {
    fn key(self) -> u64 {
        let b = self.to_bits();
        if b >> 63 == 1 {
            !b
        } else {
            b | (1 << 63)
        }
    }
}

/// Segments shorter than this are ranked by a comparison sort, longer ones by radix sort.
const RADIX_MIN: usize = 1024;

/// Sorts `(key, position)` pairs by key, stably: a least-significant-digit radix sort,
/// one pass per byte, skipping the bytes in which all keys agree.
fn radix_sort(mut a: Vec<(u64, usize)>) -> Vec<(u64, usize)> {
    let mut b = a.clone();
    for shift in (0..64).step_by(8) {
        let mut count = [0usize; 256];
        for &(k, _) in &a {
            count[((k >> shift) & 0xff) as usize] += 1;
        }
        if count.contains(&a.len()) {
            continue;
        }
        let mut at = 0;
        for c in count.iter_mut() {
            let n = *c;
            *c = at;
            at += n;
        }
        for &(k, p) in &a {
            let d = ((k >> shift) & 0xff) as usize;
            b[count[d]] = (k, p);
            count[d] += 1;
        }
        std::mem::swap(&mut a, &mut b);
    }
    a
}

fn rank_t<T: RankKey>(v: &[T], s: &Seg, up: bool) -> Result<Vec<i64>, Trap> {
    let mut out = filled(0i64, v.len())?;
    // Descending order is ascending order of the complemented keys; equal keys keep
    // their positions' order either way (stable).
    let flip = if up { 0 } else { u64::MAX };
    for (st, len) in s.ranges() {
        let mut pairs: Vec<(u64, usize)> = v[st..st + len].iter().enumerate().map(|(p, &x)| (x.key() ^ flip, p)).collect();
        if len < RADIX_MIN {
            pairs.sort_by_key(|&(k, _)| k);
        } else {
            pairs = radix_sort(pairs);
        }
        let dst = &mut out[st..st + len];
        for (r, &(_, p)) in pairs.iter().enumerate() {
            dst[p] = r as i64;
        }
    }
    Ok(out)
}

/// One operand of a compiled superoperator step.
#[derive(Debug, Clone, Copy)]
enum Src {
    Arg(usize),
    Reg(usize),
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Bin(BinOp, Src, Src),
    Un(UnOp, Src),
    Sel(Src, Src, Src),
}

/// A superoperator flattened into steps; register `r` holds the result of step `r`
/// (or a broadcast constant, whose step is `None`).
struct Compiled {
    steps: Vec<Option<Step>>,
    regs: Vec<Data>,
}

fn compile(e: &Expr, c: &mut Compiled) -> Result<Src, Trap> {
    let step = match e {
        Expr::Arg(i) => return Ok(Src::Arg(*i)),
        Expr::Const(s) => {
            let d = match *s {
                HostScalar::Int(x) => Data::Int(filled(x, CHUNK)?),
                HostScalar::Float(x) => Data::Float(filled(x, CHUNK)?),
                HostScalar::Bool(x) => Data::Bool(filled(x, CHUNK)?),
            };
            c.steps.push(None);
            c.regs.push(d);
            return Ok(Src::Reg(c.regs.len() - 1));
        }
        Expr::Binary { op, a, b, .. } => Step::Bin(*op, compile(a, c)?, compile(b, c)?),
        Expr::Unary { op, a, .. } => Step::Un(*op, compile(a, c)?),
        Expr::Select { f, a, b, .. } => Step::Sel(compile(f, c)?, compile(a, c)?, compile(b, c)?),
    };
    c.steps.push(Some(step));
    c.regs.push(Data::Int(Vec::new()));
    Ok(Src::Reg(c.regs.len() - 1))
}

fn operand<'a>(src: Src, args: &[Slice<'a>], regs: &'a [Data], lo: usize, hi: usize) -> Slice<'a> {
    match src {
        Src::Arg(i) => args[i].range(lo, hi),
        Src::Reg(r) => {
            let s = regs[r].slice();
            if s.len() == hi - lo {
                s
            } else {
                s.range(0, hi - lo)
            }
        }
    }
}

fn eval_fused(op: &SuperOp, args: &[Option<Slice>], len: usize) -> Result<Data, Trap> {
    let rt = op.result_type().map_err(Trap::ty)?;
    // Data arguments; segdes parameters get an empty stand-in that is never read.
    let mut slices = Vec::with_capacity(args.len());
    for (i, a) in args.iter().enumerate() {
        match a {
            Some(s) => {
                check_len(&format!("superoperator argument ${i}"), s.len(), len)?;
                slices.push(*s);
            }
            None => slices.push(Slice::Int(&[])),
        }
    }
    let mut c = Compiled { steps: Vec::new(), regs: Vec::new() };
    let root = compile(&op.body, &mut c)?;
    let mut out = match rt {
        VType::Int => Data::Int(alloc(len)?),
        VType::Float => Data::Float(alloc(len)?),
        VType::Bool => Data::Bool(alloc(len)?),
    };
    let mut lo = 0;
    while lo < len {
        let hi = (lo + CHUNK).min(len);
        for r in 0..c.steps.len() {
            let Some(step) = c.steps[r] else { continue };
            let mut dst = std::mem::replace(&mut c.regs[r], Data::Int(Vec::new()));
            let regs = &c.regs;
            match step {
                Step::Bin(op, a, b) => binary_into(
                    op,
                    operand(a, &slices, regs, lo, hi),
                    operand(b, &slices, regs, lo, hi),
                    &mut dst,
                )?,
                Step::Un(op, a) => unary_into(op, operand(a, &slices, regs, lo, hi), &mut dst)?,
                Step::Sel(f, a, b) => select_into(
                    operand(f, &slices, regs, lo, hi),
                    operand(a, &slices, regs, lo, hi),
                    operand(b, &slices, regs, lo, hi),
                    &mut dst,
                )?,
            }
            c.regs[r] = dst;
        }
        match (operand(root, &slices, &c.regs, lo, hi), &mut out) {
            (Slice::Int(s), Data::Int(o)) => o.extend_from_slice(s),
            (Slice::Float(s), Data::Float(o)) => o.extend_from_slice(s),
            (Slice::Bool(s), Data::Bool(o)) => o.extend_from_slice(s),
            (s, _) => return Err(Trap::ty(format!("superoperator produced {}", s.vtype().name()))),
        }
        lo = hi;
    }
    Ok(out)
}

impl Cvl for CpuCvl {
    type Vector = CpuVector;
    type Segdes = CpuSegdes;

    fn name(&self) -> &'static str {
        "cpu"
    }
    fn len(&self, v: &CpuVector) -> usize {
        v.0.len()
    }
    fn vtype(&self, v: &CpuVector) -> VType {
        v.0.vtype()
    }
    fn segment_count(&self, s: &CpuSegdes) -> usize {
        s.0.m()
    }
    fn element_count(&self, s: &CpuSegdes) -> usize {
        s.0.total
    }

    fn from_host(&mut self, v: HostVector) -> Result<CpuVector, Trap> {
        Ok(vecd(match v {
            HostVector::Int(x) => Data::Int(x),
            HostVector::Float(x) => Data::Float(x),
            HostVector::Bool(x) => Data::Bool(x),
        }))
    }
    fn to_host(&mut self, v: &CpuVector) -> Result<HostVector, Trap> {
        Ok(match v.data() {
            Data::Int(x) => HostVector::Int(x.clone()),
            Data::Float(x) => HostVector::Float(x.clone()),
            Data::Bool(x) => HostVector::Bool(x.clone()),
        })
    }
    fn get_int(&mut self, v: &CpuVector, i: usize) -> Result<i64, Trap> {
        let x = ints(v, "the scalar")?;
        x.get(i).copied().ok_or_else(|| Trap::index(i as i64, x.len()))
    }
    fn get_bool(&mut self, v: &CpuVector, i: usize) -> Result<bool, Trap> {
        let x = bools(v, "the flag")?;
        x.get(i).copied().ok_or_else(|| Trap::index(i as i64, x.len()))
    }
    fn fill(&mut self, value: HostScalar, n: usize) -> Result<CpuVector, Trap> {
        self.limit(n)?;
        Ok(vecd(match value {
            HostScalar::Int(x) => Data::Int(filled(x, n)?),
            HostScalar::Float(x) => Data::Float(filled(x, n)?),
            HostScalar::Bool(x) => Data::Bool(filled(x, n)?),
        }))
    }

    fn make_segdes(&mut self, lengths: &CpuVector) -> Result<CpuSegdes, Trap> {
        self.seg(ints(lengths, "MAKE_SEGDES lengths")?)
    }
    fn segdes_from_host(&mut self, lengths: &[i64]) -> Result<CpuSegdes, Trap> {
        self.seg(lengths)
    }
    fn lengths(&mut self, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        Ok(vecd(Data::Int(s.0.lens.iter().map(|&l| l as i64).collect())))
    }
    fn segdes_to_host(&mut self, s: &CpuSegdes) -> Result<Vec<i64>, Trap> {
        Ok(s.0.lens.iter().map(|&l| l as i64).collect())
    }

    fn binary(&mut self, op: BinOp, a: &CpuVector, b: &CpuVector) -> Result<CpuVector, Trap> {
        let mut out = Data::Int(Vec::new());
        binary_into(op, a.0.slice(), b.0.slice(), &mut out)?;
        Ok(vecd(out))
    }
    fn unary(&mut self, op: UnOp, a: &CpuVector) -> Result<CpuVector, Trap> {
        let mut out = Data::Int(Vec::new());
        unary_into(op, a.0.slice(), &mut out)?;
        Ok(vecd(out))
    }
    fn select(&mut self, f: &CpuVector, a: &CpuVector, b: &CpuVector) -> Result<CpuVector, Trap> {
        let mut out = Data::Int(Vec::new());
        select_into(f.0.slice(), a.0.slice(), b.0.slice(), &mut out)?;
        Ok(vecd(out))
    }
    fn rand(&mut self, bounds: &CpuVector) -> Result<CpuVector, Trap> {
        let b = ints(bounds, "RAND bounds")?;
        if b.contains(&0) {
            return Err(Trap::new(TrapKind::DivisionByZero));
        }
        let mut out = alloc(b.len())?;
        for &x in b {
            out.push((self.next_random() % x.unsigned_abs()) as i64);
        }
        Ok(vecd(Data::Int(out)))
    }
    fn srand(&mut self, seed: i64) -> Result<(), Trap> {
        self.rng = seed as u64;
        Ok(())
    }

    fn scan(&mut self, op: ReduceOp, v: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check_len("the scanned vector", v.0.len(), s.0.total)?;
        Ok(vecd(monoid!(op, v.data(), &s.0, scan_t)))
    }
    fn reduce(&mut self, op: ReduceOp, v: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check_len("the reduced vector", v.0.len(), s.0.total)?;
        Ok(vecd(monoid!(op, v.data(), &s.0, reduce_t)))
    }

    fn permute(&mut self, v: &CpuVector, i: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        let iv = ints(i, "PERMUTE indices")?;
        check_len("PERMUTE data", v.0.len(), s.0.total)?;
        check_len("PERMUTE indices", iv.len(), s.0.total)?;
        Ok(vecd(each!(v.data(), |x| permute_t(x, iv, &s.0))))
    }
    fn dpermute(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        d: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        self.dpermute_into(v, i, copy_data(d.data())?, ss, sd).map_err(|(t, _)| t)
    }
    fn fpermute(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        f: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        let iv = ints(i, "FPERMUTE indices")?;
        let fv = bools(f, "FPERMUTE flags")?;
        check_len("FPERMUTE data", v.0.len(), ss.0.total)?;
        check_len("FPERMUTE indices", iv.len(), ss.0.total)?;
        check_len("FPERMUTE flags", fv.len(), ss.0.total)?;
        same_m(&ss.0, &sd.0)?;
        Ok(vecd(each!(v.data(), |x| {
            filled(Default::default(), sd.0.total).and_then(|mut out| {
                scatter_t(&mut out, x, iv, Some(fv), &ss.0, &sd.0).map(|_| out)
            })
        })))
    }
    fn bpermute(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        let iv = ints(i, "BPERMUTE indices")?;
        check_len("BPERMUTE data", v.0.len(), ss.0.total)?;
        check_len("BPERMUTE indices", iv.len(), sd.0.total)?;
        same_m(&ss.0, &sd.0)?;
        Ok(vecd(each!(v.data(), |x| gather_t(x, iv, None, &ss.0, &sd.0))))
    }
    fn bfpermute(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        f: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        let iv = ints(i, "BFPERMUTE indices")?;
        let fv = bools(f, "BFPERMUTE flags")?;
        check_len("BFPERMUTE data", v.0.len(), ss.0.total)?;
        check_len("BFPERMUTE indices", iv.len(), sd.0.total)?;
        check_len("BFPERMUTE flags", fv.len(), sd.0.total)?;
        same_m(&ss.0, &sd.0)?;
        Ok(vecd(each!(v.data(), |x| gather_t(x, iv, Some(fv), &ss.0, &sd.0))))
    }
    fn dfpermute(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        f: &CpuVector,
        d: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        let iv = ints(i, "DFPERMUTE indices")?;
        let fv = bools(f, "DFPERMUTE flags")?;
        check_len("DFPERMUTE data", v.0.len(), ss.0.total)?;
        check_len("DFPERMUTE indices", iv.len(), ss.0.total)?;
        check_len("DFPERMUTE flags", fv.len(), ss.0.total)?;
        check_len("DFPERMUTE defaults", d.0.len(), sd.0.total)?;
        same_m(&ss.0, &sd.0)?;
        Ok(vecd(each2!(v.data(), d.data(), |x, dv| {
            let mut out = copied(dv)?;
            scatter_t(&mut out, x, iv, Some(fv), &ss.0, &sd.0).map(|_| out)
        })))
    }

    fn dist(&mut self, x: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check_len("DIST values (one per segment)", x.0.len(), s.0.m())?;
        Ok(vecd(each!(x.data(), |v| dist_t(v, &s.0))))
    }
    fn index(&mut self, b: &CpuVector, k: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        let bv = ints(b, "INDEX start")?;
        let kv = ints(k, "INDEX stride")?;
        check_len("INDEX start (one per segment)", bv.len(), s.0.m())?;
        check_len("INDEX stride (one per segment)", kv.len(), s.0.m())?;
        let mut out = alloc(s.0.total)?;
        for (j, (_, len)) in s.0.ranges().enumerate() {
            let (b0, k0) = (bv[j], kv[j]);
            out.extend((0..len as i64).map(|t| b0.wrapping_add(t.wrapping_mul(k0))));
        }
        Ok(vecd(Data::Int(out)))
    }
    fn extract(&mut self, v: &CpuVector, i: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        let iv = ints(i, "EXTRACT indices")?;
        check_len("EXTRACT data", v.0.len(), s.0.total)?;
        check_len("EXTRACT indices (one per segment)", iv.len(), s.0.m())?;
        Ok(vecd(each!(v.data(), |x| extract_t(x, iv, &s.0))))
    }
    fn replace(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        x: &CpuVector,
        s: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        self.replace_into(copy_data(v.data())?, i, x, s).map_err(|(t, _)| t)
    }

    fn binary_reusing(&mut self, op: BinOp, a: &mut CpuVector, b: &CpuVector) -> Result<CpuVector, Trap> {
        if let Some(buf) = Rc::get_mut(&mut a.0) {
            if binary_in_place(op, &mut buf.0, b.data().slice())? {
                return Ok(a.clone());
            }
        }
        self.binary(op, a, b)
    }
    fn unary_reusing(&mut self, op: UnOp, a: &mut CpuVector) -> Result<CpuVector, Trap> {
        if let Some(buf) = Rc::get_mut(&mut a.0) {
            if unary_in_place(op, &mut buf.0) {
                return Ok(a.clone());
            }
        }
        self.unary(op, a)
    }
    fn replace_reusing(&mut self, v: &mut CpuVector, i: &CpuVector, x: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        let iv = ints(i, "REPLACE indices")?;
        if iv.len() == s.0.m() && s.0.ranges().zip(iv).all(|((_, len), &k)| idx(k, len).is_ok()) {
            if let Some(buf) = Rc::get_mut(&mut v.0) {
                let out = std::mem::replace(&mut buf.0, Data::Int(Vec::new()));
                // Every check that can fail is made before the first write.
                return match self.replace_into(out, i, x, s) {
                    Ok(r) => Ok(r),
                    Err((t, out)) => {
                        buf.0 = out;
                        Err(t)
                    }
                };
            }
        }
        self.replace(v, i, x, s)
    }
    fn dpermute_reusing(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        d: &mut CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        let iv = ints(i, "DPERMUTE indices")?;
        let in_range = iv.len() == ss.0.total
            && ss.0.m() == sd.0.m()
            && ss.0.ranges().zip(sd.0.ranges()).all(|((st, len), (_, dlen))| iv[st..st + len].iter().all(|&k| idx(k, dlen).is_ok()));
        if in_range {
            if let Some(buf) = Rc::get_mut(&mut d.0) {
                let out = std::mem::replace(&mut buf.0, Data::Int(Vec::new()));
                return match self.dpermute_into(v, i, out, ss, sd) {
                    Ok(r) => Ok(r),
                    Err((t, out)) => {
                        buf.0 = out;
                        Err(t)
                    }
                };
            }
        }
        self.dpermute(v, i, d, ss, sd)
    }

    fn pack(
        &mut self,
        v: &CpuVector,
        f: &CpuVector,
        s: &CpuSegdes,
    ) -> Result<(CpuVector, CpuSegdes), Trap> {
        let fv = bools(f, "PACK flags")?;
        check_len("PACK data", v.0.len(), s.0.total)?;
        check_len("PACK flags", fv.len(), s.0.total)?;
        let lens: Vec<i64> = s
            .0
            .ranges()
            .map(|(st, len)| fv[st..st + len].iter().filter(|&&b| b).count() as i64)
            .collect();
        let kept = lens.iter().sum::<i64>() as usize;
        let data = each!(v.data(), |x| pack_t(x, fv, kept));
        Ok((vecd(data), CpuSegdes(Rc::new(Seg::new(&lens)?))))
    }
    fn rank(&mut self, up: bool, v: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check_len("the ranked vector", v.0.len(), s.0.total)?;
        Ok(vecd(Data::Int(match v.data() {
            Data::Int(x) => rank_t(x, &s.0, up)?,
            Data::Float(x) => rank_t(x, &s.0, up)?,
            Data::Bool(_) => return Err(unsupported("RANK", VType::Bool)),
        })))
    }

    fn fused(
        &mut self,
        op: &SuperOp,
        args: &[Option<&CpuVector>],
        len: usize,
    ) -> Result<CpuVector, Trap> {
        if args.len() != op.params.len() {
            return Err(Trap::length(format!(
                "superoperator takes {} operands, got {}",
                op.params.len(),
                args.len()
            )));
        }
        let slices: Vec<Option<Slice>> = args.iter().map(|a| a.map(|v| v.0.slice())).collect();
        Ok(vecd(eval_fused(op, &slices, len)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(c: &mut CpuCvl, x: &[i64]) -> CpuVector {
        c.from_host(HostVector::Int(x.to_vec())).expect("host")
    }
    fn host(c: &mut CpuCvl, v: &CpuVector) -> HostVector {
        c.to_host(v).expect("host")
    }

    #[test]
    fn scans_and_reductions() {
        let mut c = CpuCvl::new();
        let v = iv(&mut c, &[1, 2, 3, 4, 5]);
        let s = c.segdes_from_host(&[2, 0, 3]).expect("seg");
        let r = c.scan(ReduceOp::Add, &v, &s).expect("scan");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![0, 1, 0, 3, 7]));
        let r = c.reduce(ReduceOp::Max, &v, &s).expect("reduce");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![2, -2147483648, 5]));
    }

    #[test]
    fn permutes() {
        let mut c = CpuCvl::new();
        let v = iv(&mut c, &[10, 20, 30, 40, 50]);
        let i = iv(&mut c, &[1, 0, 2, 0, 1]);
        let s = c.segdes_from_host(&[2, 3]).expect("seg");
        let r = c.permute(&v, &i, &s).expect("permute");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![20, 10, 40, 50, 30]));
        let i2 = iv(&mut c, &[1, 0, 1, 2]);
        let sd = c.segdes_from_host(&[1, 3]).expect("seg");
        let r = c.bpermute(&v, &i2, &s, &sd).expect("bpermute");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![20, 30, 40, 50]));
        let bad = iv(&mut c, &[2, 0, 2, 0, 1]);
        assert!(matches!(c.permute(&v, &bad, &s), Err(Trap { kind: TrapKind::IndexOutOfRange { .. }, .. })));
    }

    #[test]
    fn rank_is_stable() {
        let mut c = CpuCvl::new();
        let v = iv(&mut c, &[5, 3, 5, 1]);
        let s = c.segdes_from_host(&[4]).expect("seg");
        let r = c.rank(true, &v, &s).expect("rank");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![2, 1, 3, 0]));
        let r = c.rank(false, &v, &s).expect("rank");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![0, 2, 1, 3]));
    }

    #[test]
    fn pooled_buffers_are_reused_and_never_leak_old_elements() {
        let mut c = CpuCvl::new();
        let n = POOLED_MIN * 3 + 5;
        let a = iv(&mut c, &(0..n as i64).collect::<Vec<_>>());
        let first = c.binary(BinOp::Mul, &a, &a).expect("mul");
        let addr = match first.data() {
            Data::Int(v) => v.as_ptr() as usize,
            _ => 0,
        };
        drop(first);
        // The next result of that size takes the dead buffer from the pool.
        let s = c.segdes_from_host(&[n as i64 - 7, 0, 7]).expect("seg");
        let r = c.scan(ReduceOp::Add, &a, &s).expect("scan");
        match r.data() {
            Data::Int(v) => assert_eq!(v.as_ptr() as usize, addr, "the pooled buffer was not reused"),
            d => panic!("scan gave {d:?}"),
        }
        let mut want = Vec::with_capacity(n);
        for (st, len) in [(0, n - 7), (n - 7, 0), (n - 7, 7)] {
            let mut acc = 0i64;
            for j in st..st + len {
                want.push(acc);
                acc += j as i64;
            }
        }
        assert_eq!(host(&mut c, &r), HostVector::Int(want));
        drop(r);
        // Shorter results from pooled buffers hold exactly their own elements.
        let f = c.from_host(HostVector::Bool((0..n).map(|j| j % 3 == 0).collect())).expect("flags");
        let one = c.segdes_from_host(&[n as i64]).expect("seg");
        let (p, ps) = c.pack(&a, &f, &one).expect("pack");
        let kept: Vec<i64> = (0..n as i64).filter(|j| j % 3 == 0).collect();
        assert_eq!(c.segdes_to_host(&ps).expect("lengths"), vec![kept.len() as i64]);
        assert_eq!(host(&mut c, &p), HostVector::Int(kept));
        let rev = iv(&mut c, &(0..n as i64).rev().collect::<Vec<_>>());
        let r = c.permute(&a, &rev, &one).expect("permute");
        assert_eq!(host(&mut c, &r), HostVector::Int((0..n as i64).rev().collect()));
        let g = c.bpermute(&a, &rev, &one, &one).expect("bpermute");
        assert_eq!(host(&mut c, &g), HostVector::Int((0..n as i64).rev().collect()));
    }

    fn ptr(v: &CpuVector) -> usize {
        match v.data() {
            Data::Int(x) => x.as_ptr() as usize,
            Data::Float(x) => x.as_ptr() as usize,
            Data::Bool(x) => x.as_ptr() as usize,
        }
    }

    #[test]
    fn reusing_operations_write_over_unique_vectors_only() {
        let mut c = CpuCvl::new();
        let mut a = iv(&mut c, &[1, 2, 3]);
        let b = iv(&mut c, &[10, 20, 30]);
        // Unique: the sum is written over `a`.
        let at = ptr(&a);
        let mut r = c.binary_reusing(BinOp::Add, &mut a, &b).expect("add");
        drop(a);
        assert_eq!(ptr(&r), at);
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![11, 22, 33]));
        // Shared: the other handle keeps its elements.
        let keep = r.clone();
        let mut r2 = c.binary_reusing(BinOp::Mul, &mut r, &b).expect("mul");
        assert_eq!(host(&mut c, &keep), HostVector::Int(vec![11, 22, 33]));
        assert_eq!(host(&mut c, &r2), HostVector::Int(vec![110, 440, 990]));
        // A comparison cannot overwrite INT operands; a failing operation leaves its
        // operand as it was.
        let lt = c.binary_reusing(BinOp::Lt, &mut r2, &b).expect("lt");
        assert_eq!(host(&mut c, &lt), HostVector::Bool(vec![false, false, false]));
        let z = iv(&mut c, &[1, 0, 1]);
        assert!(c.binary_reusing(BinOp::Div, &mut r2, &z).is_err());
        assert_eq!(host(&mut c, &r2), HostVector::Int(vec![110, 440, 990]));
        let mut b2 = b.clone();
        drop(b);
        let n = c.unary_reusing(UnOp::Not, &mut b2).expect("not");
        assert_eq!(host(&mut c, &n), HostVector::Int(vec![-11, -21, -31]));
        let mut f = c.from_host(HostVector::Float(vec![4.0, 9.0])).expect("host");
        let ft = ptr(&f);
        let q = c.unary_reusing(UnOp::Sqrt, &mut f).expect("sqrt");
        assert_eq!((ptr(&q), host(&mut c, &q)), (ft, HostVector::Float(vec![2.0, 3.0])));
        // REPLACE and DPERMUTE update a unique vector in place, a shared one by copy; a
        // bad index leaves the vector as it was.
        let s = c.segdes_from_host(&[2, 1]).expect("seg");
        let mut v = iv(&mut c, &[1, 2, 3]);
        let (i, x) = (iv(&mut c, &[1, 0]), iv(&mut c, &[7, 8]));
        let bad = iv(&mut c, &[1, 1]);
        assert!(c.replace_reusing(&mut v, &bad, &x, &s).is_err());
        assert_eq!(host(&mut c, &v), HostVector::Int(vec![1, 2, 3]));
        let vt = ptr(&v);
        let r = c.replace_reusing(&mut v, &i, &x, &s).expect("replace");
        assert_eq!((ptr(&r), host(&mut c, &r)), (vt, HostVector::Int(vec![1, 7, 8])));
        drop(v);
        let mut shared = r.clone();
        let x2 = iv(&mut c, &[5, 6]);
        let r3 = c.replace_reusing(&mut shared, &i, &x2, &s).expect("replace");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![1, 7, 8]));
        assert_eq!(host(&mut c, &r3), HostVector::Int(vec![1, 5, 6]));
        let mut d = iv(&mut c, &[0, 0, 0]);
        let dt = ptr(&d);
        let one = c.segdes_from_host(&[3]).expect("seg");
        let (src, to, two) = (iv(&mut c, &[4, 5]), iv(&mut c, &[2, 0]), c.segdes_from_host(&[2]).expect("seg"));
        let far = iv(&mut c, &[3, 0]);
        assert!(c.dpermute_reusing(&src, &far, &mut d, &two, &one).is_err());
        assert_eq!(host(&mut c, &d), HostVector::Int(vec![0, 0, 0]));
        let p = c.dpermute_reusing(&src, &to, &mut d, &two, &one).expect("dpermute");
        assert_eq!((ptr(&p), host(&mut c, &p)), (dt, HostVector::Int(vec![5, 0, 4])));
    }

    #[test]
    fn radix_and_comparison_ranks_agree() {
        let mut c = CpuCvl::new();
        let n = RADIX_MIN * 3;
        // Keys with many ties, negative and positive, in a long and a short segment.
        let keys: Vec<i64> = (0..n as i64).map(|j| (j * 7919 % 301) - 150).collect();
        let v = iv(&mut c, &keys);
        let s = c.segdes_from_host(&[n as i64 - 10, 10]).expect("seg");
        for up in [true, false] {
            let r = c.rank(up, &v, &s).expect("rank");
            let mut want = vec![0i64; n];
            for (st, len) in [(0, n - 10), (n - 10, 10)] {
                let mut perm: Vec<usize> = (st..st + len).collect();
                perm.sort_by(|&a, &b| if up { keys[a].cmp(&keys[b]) } else { keys[b].cmp(&keys[a]) });
                for (r, &p) in perm.iter().enumerate() {
                    want[p] = r as i64;
                }
            }
            assert_eq!(host(&mut c, &r), HostVector::Int(want), "up = {up}");
        }
        let f = c
            .from_host(HostVector::Float(vec![0.0, -0.0, f64::NAN, -1.5, f64::INFINITY, 2.0, f64::NEG_INFINITY]))
            .expect("host");
        let one = c.segdes_from_host(&[7]).expect("seg");
        let r = c.rank(true, &f, &one).expect("rank");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![3, 2, 6, 1, 5, 4, 0]));
    }

    #[test]
    fn the_pool_stays_bounded() {
        for _ in 0..3 * POOL_SLOTS {
            recycle(Data::Float(Vec::with_capacity(POOLED_MIN)));
        }
        recycle(Data::Bool(Vec::with_capacity(POOLED_MIN - 1)));
        let (len, held) = POOL.with(|p| (p.borrow().len(), p.borrow().iter().map(bytes).sum::<usize>()));
        assert_eq!(len, POOL_SLOTS);
        assert!(held <= POOL_BYTES);
        assert!(pooled::<f64>(POOLED_MIN).is_some());
        assert!(pooled::<i64>(POOLED_MIN).is_none(), "no INT buffer was given back");
        assert!(pooled::<f64>(POOLED_MIN * 5).is_none(), "too small for this size");
    }

    #[test]
    fn fused_matches_parts_across_chunks() {
        let mut c = CpuCvl::new();
        let n = CHUNK * 2 + 17;
        let a: Vec<i64> = (0..n as i64).collect();
        let b: Vec<i64> = (0..n as i64).map(|x| x % 7 + 1).collect();
        let av = iv(&mut c, &a);
        let bv = iv(&mut c, &b);
        let op = SuperOp::parse("(INT INT SEGDES) (SELECT INT (< INT $0 (CONST INT 100)) (* INT $0 $1) (/ INT $0 $1))")
            .expect("parse");
        let r = c.fused(&op, &[Some(&av), Some(&bv), None], n).expect("fused");
        let want: Vec<i64> = a.iter().zip(&b).map(|(&x, &y)| if x < 100 { x * y } else { x / y }).collect();
        assert_eq!(host(&mut c, &r), HostVector::Int(want));
        let z = iv(&mut c, &vec![0; n]);
        assert!(c.fused(&op, &[Some(&av), Some(&z), None], n).is_err());
    }
}
