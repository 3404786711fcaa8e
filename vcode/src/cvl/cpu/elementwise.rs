//! Element-wise operations: the one definition of every binary and unary operator and of
//! `SELECT` on chunks (used directly for short vectors and by the superoperator
//! evaluator for long ones), and their in-place forms.

use super::data::{unsupported, write_data, Data, Elem, Num, Out, Slice, Val, V};
use super::par::Par;
use crate::cvl::{BinOp, HostScalar, UnOp, VType};
use crate::cvl::check::V as CV;
use crate::trap::{Trap, TrapKind};
use std::mem::MaybeUninit;

/// `out[i] = f(a[i])` (a constant operand gives one value everywhere).
#[inline(always)]
fn map1<A: Copy, R: Copy>(a: V<A>, out: &mut [MaybeUninit<R>], f: impl Fn(A) -> R) {
    match a {
        V::S(a) => {
            let a = &a[..out.len()];
            for (o, &x) in out.iter_mut().zip(a) {
                o.write(f(x));
            }
        }
        V::K(x) => {
            let y = f(x);
            for o in out {
                o.write(y);
            }
        }
    }
}

/// `out[i] = f(a[i], b[i])`, one loop per kind of operand (so that each vectorises).
#[inline(always)]
fn map2<A: Copy, R: Copy>(a: V<A>, b: V<A>, out: &mut [MaybeUninit<R>], f: impl Fn(A, A) -> R) {
    let n = out.len();
    match (a, b) {
        (V::S(a), V::S(b)) => {
            let (a, b) = (&a[..n], &b[..n]);
            for i in 0..n {
                out[i].write(f(a[i], b[i]));
            }
        }
        (V::S(a), V::K(y)) => map1(V::S(a), out, |x| f(x, y)),
        (V::K(x), V::S(b)) => map1(V::S(b), out, |y| f(x, y)),
        (V::K(x), V::K(y)) => map1(V::K(x), out, |y2| f(y2, y)),
    }
}

/// `out[i] = f(a[i], b[i], c[i])`, one loop per kind of operand.
#[inline(always)]
fn map3<A: Copy, R: Copy>(a: V<A>, b: V<A>, c: V<A>, out: &mut [MaybeUninit<R>], f: impl Fn(A, A, A) -> R) {
    let n = out.len();
    match (a, b, c) {
        (V::S(a), V::S(b), V::S(c)) => {
            let (a, b, c) = (&a[..n], &b[..n], &c[..n]);
            for i in 0..n {
                out[i].write(f(a[i], b[i], c[i]));
            }
        }
        (V::S(a), V::S(b), V::K(z)) => map2(V::S(a), V::S(b), out, |x, y| f(x, y, z)),
        (V::S(a), V::K(y), c) => map2(V::S(a), c, out, |x, z| f(x, y, z)),
        (V::K(x), b, c) => map2(b, c, out, |y, z| f(x, y, z)),
    }
}

/// Which sum a product feeds in a multiply-add step ([`mul_add_kernel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum MulAdd {
    /// `a * b + c` (also `c + a * b`: IEEE addition is commutative, so the value is the
    /// same; only which NaN payload a sum of two NaNs keeps may differ, and NESL never
    /// shows one).
    Add,
    /// `a * b - c`.
    Sub,
    /// `c - a * b`.
    SubFrom,
}

#[inline(always)]
fn compare<T: Elem>(op: BinOp, a: V<T>, b: V<T>, out: &mut [MaybeUninit<bool>], ordered: bool) -> bool {
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

/// True when some element of `x` is a NaN or an infinity (in parallel by blocks).
pub(super) fn any_non_finite(par: &Par, x: &[f64]) -> bool {
    par.map_blocks(x.len(), |lo, hi| x[lo..hi].iter().fold(false, |z, &v| z | !v.is_finite())).contains(&true)
}

/// Integer `/` and `%` trap on a zero divisor (checked before any element is written).
pub(super) fn check_divisors(par: &Par, op: BinOp, b: &[i64]) -> Result<(), Trap> {
    if matches!(op, BinOp::Div | BinOp::Mod)
        && par.map_blocks(b.len(), |lo, hi| b[lo..hi].iter().fold(false, |z, &x| z | (x == 0))).contains(&true)
    {
        return Err(Trap::new(TrapKind::DivisionByZero));
    }
    Ok(())
}

pub(super) fn binary_lengths(op: BinOp, a: usize, b: usize) -> Result<(), Trap> {
    if a != b {
        return Err(Trap::length(format!(
            "operands of `{}` have lengths {a} and {b}",
            crate::fused::binop_name(op)
        )));
    }
    Ok(())
}

fn binary_types(op: BinOp, a: VType, b: VType) -> Result<(), Trap> {
    if a != b {
        return Err(Trap::ty(format!("operands of `{}` are {} and {}", crate::fused::binop_name(op), a.name(), b.name())));
    }
    Ok(())
}

/// The checks of `a op b` that do not depend on the elements but the divisors.
pub(super) fn binary_check(op: BinOp, a: CV, b: CV) -> Result<(), Trap> {
    binary_lengths(op, a.len, b.len)?;
    binary_types(op, a.ty, b.ty)?;
    // `=` and `!=` compare booleans too (as on the device), though the op table lists
    // them for INT and FLOAT.
    if matches!(op, BinOp::Eq | BinOp::Ne) && a.ty == VType::Bool {
        return Ok(());
    }
    crate::fused::node_types(crate::fused::NodeKind::Binary(op), a.ty)
        .map(|_| ())
        .map_err(|_| unsupported(&format!("`{}`", crate::fused::binop_name(op)), a.ty))
}

/// `out = a op b` element-wise over whole vectors (on the calling thread), reusing the
/// storage of `out`.
pub(super) fn binary_into(op: BinOp, a: Slice, b: Slice, out: &mut Data) -> Result<(), Trap> {
    binary_check(op, a.shape(), b.shape())?;
    let rt = if op.is_comparison() { VType::Bool } else { a.vtype() };
    write_data(out, rt, a.len(), |o| binary_kernel(op, Val::of(a), Val::of(b), o))
}

/// `fill` run over one position, and its element: the scalars of serial code computed by
/// the kernels of whole vectors, on constant operands.
#[inline(always)]
pub(super) fn one(rt: VType, fill: impl FnOnce(Out<'_>) -> Result<(), Trap>) -> Result<HostScalar, Trap> {
    macro_rules! go {
        ($var:ident) => {{
            let mut o = [MaybeUninit::uninit()];
            fill(Out::$var(&mut o))?;
            // SAFETY: `fill` returned `Ok`, so it wrote its one element (its contract).
            HostScalar::$var(unsafe { o[0].assume_init() })
        }};
    }
    Ok(match rt {
        VType::Int => go!(Int),
        VType::Float => go!(Float),
        VType::Bool => go!(Bool),
    })
}

fn shape(x: HostScalar) -> CV {
    CV { ty: x.vtype(), len: 1 }
}

/// `a op b` on one element each: [`binary_into`]'s checks and kernel, the same value or
/// the same trap.
#[inline(always)]
pub(super) fn binary_one(op: BinOp, a: HostScalar, b: HostScalar) -> Result<HostScalar, Trap> {
    // The kernel refuses an operator the type has not, in `binary_check`'s words.
    binary_types(op, a.vtype(), b.vtype())?;
    let rt = if op.is_comparison() { VType::Bool } else { a.vtype() };
    one(rt, |o| binary_body(op, Val::konst(a), Val::konst(b), o))
}

/// `op a` on one element: [`unary_into`]'s check and kernel.
#[inline(always)]
pub(super) fn unary_one(op: UnOp, a: HostScalar) -> Result<HostScalar, Trap> {
    let rt = crate::fused::node_types(crate::fused::NodeKind::Unary(op), a.vtype())
        .map_err(|_| unsupported(&format!("`{}`", crate::fused::unop_name(op)), a.vtype()))?;
    one(rt, |o| unary_body(op, Val::konst(a), o))
}

/// `f ? a : b` on one element each: [`select_into`]'s check and kernel.
#[inline(always)]
pub(super) fn select_one(f: HostScalar, a: HostScalar, b: HostScalar) -> Result<HostScalar, Trap> {
    select_check(shape(f), shape(a), shape(b))?;
    one(a.vtype(), |o| select_body(Val::konst(f), Val::konst(a), Val::konst(b), o))
}

/// Whether the kernels run their AVX2 builds: on x86-64 processors that have it, unless
/// `NESL_NO_AVX2` is set (to compare). Results are bit-identical either way (the same
/// IEEE operations, never contracted into fused multiply-adds).
#[cfg(target_arch = "x86_64")]
fn wide() -> bool {
    static WIDE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WIDE.get_or_init(|| std::arch::is_x86_feature_detected!("avx2") && std::env::var_os("NESL_NO_AVX2").is_none())
        && !NARROW.load(std::sync::atomic::Ordering::Relaxed)
}

/// Makes the kernels run their baseline builds (tests compare both builds).
pub(super) static NARROW: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Defines `$name` to run `$body` (an `#[inline(always)]` function), compiled once for
/// the baseline target and once with AVX2, choosing at run time.
macro_rules! dispatch {
    ($(#[$m:meta])* $vis:vis fn $name:ident / $wide:ident ($($a:ident: $t:ty),*) = $body:ident) => {
        $(#[$m])*
        $vis fn $name($($a: $t),*) -> Result<(), Trap> {
            #[cfg(target_arch = "x86_64")]
            if wide() {
                // SAFETY: `wide` checked that the processor has AVX2.
                return unsafe { $wide($($a),*) };
            }
            $body($($a),*)
        }
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        fn $wide($($a: $t),*) -> Result<(), Trap> {
            $body($($a),*)
        }
    };
}

dispatch! {
    /// `out = a op b` element-wise, `out` as long as the operands that are not constants:
    /// the one definition of every binary operator. Integer `/` and `%` trap on a zero
    /// divisor before anything is written.
    pub(super) fn binary_kernel / binary_avx2 (op: BinOp, a: Val, b: Val, out: Out) = binary_body
}
/// `out = op a` element-wise: the one definition of every unary operator; its AVX-512
/// build where [`wide512`], else its AVX2 build where [`wide`].
pub(super) fn unary_kernel(op: UnOp, a: Val, out: Out) -> Result<(), Trap> {
    #[cfg(target_arch = "x86_64")]
    {
        if wide512() {
            // SAFETY: `wide512` checked that the processor has AVX-512F.
            return unsafe { unary_avx512(op, a, out) };
        }
        if wide() {
            // SAFETY: `wide` checked that the processor has AVX2.
            return unsafe { unary_avx2(op, a, out) };
        }
    }
    unary_body(op, a, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn unary_avx512(op: UnOp, a: Val, out: Out) -> Result<(), Trap> {
    unary_body(op, a, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn unary_avx2(op: UnOp, a: Val, out: Out) -> Result<(), Trap> {
    unary_body(op, a, out)
}
dispatch! {
    /// `out = f ? a : b` element-wise, without branches.
    pub(super) fn select_kernel / select_avx2 (f: Val, a: Val, b: Val, out: Out) = select_body
}

dispatch! {
    /// `out = a * b + c` (or `a * b - c`, `c - a * b`) element-wise for `INT` (wrapping)
    /// and `FLOAT`: a product and the sum it alone feeds, as one step of a superoperator.
    /// Each operation rounds as the separate `*` and `+` do (never a fused multiply-add),
    /// so the values are bit-identical to theirs.
    pub(super) fn mul_add_kernel / mul_add_avx2 (form: MulAdd, a: Val, b: Val, c: Val, out: Out) = mul_add_body
}

/// `a op b` for a comparison `op` over `n` positions, as bits: position `i` goes to bit
/// `(at + i) % 64` of word `(at + i) / 64` of `words`, whose bits there must be 0 (a
/// pack's flag tree that is one comparison writes its flags this way, never a byte each).
/// `false`, and nothing written, unless the operands are both `INT` or both `FLOAT` and
/// `op` is a comparison. Bit-identical to [`binary_kernel`]'s booleans (the same IEEE
/// comparisons: a NaN compares unequal and unordered).
pub(super) fn compare_bits(op: BinOp, a: Val, b: Val, words: &mut [u64], at: usize, n: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if wide512() {
            // SAFETY: `wide512` checked that the processor has AVX-512F.
            return unsafe { compare_bits_avx512(op, a, b, words, at, n) };
        }
        if wide() {
            // SAFETY: `wide` checked that the processor has AVX2.
            return unsafe { compare_bits_avx2(op, a, b, words, at, n) };
        }
    }
    compare_bits_body(op, a, b, words, at, n)
}

/// Whether [`compare_bits`] and [`unary_kernel`] run their AVX-512 builds (comparisons
/// straight into mask registers; `exp` and `ln` eight elements at a time, 0.68x the AVX2
/// build's time on a sum of both, 0.80x on Black-Scholes; the other kernels measured no
/// gain from it): on x86-64 processors that have AVX-512F, unless `NESL_NO_AVX512` is set or
/// the kernels are held to their baseline builds ([`NARROW`]).
#[cfg(target_arch = "x86_64")]
pub(super) fn wide512() -> bool {
    static WIDE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WIDE.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f") && std::env::var_os("NESL_NO_AVX512").is_none())
        && !NARROW.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn compare_bits_avx512(op: BinOp, a: Val, b: Val, words: &mut [u64], at: usize, n: usize) -> bool {
    compare_bits_body(op, a, b, words, at, n)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn compare_bits_avx2(op: BinOp, a: Val, b: Val, words: &mut [u64], at: usize, n: usize) -> bool {
    compare_bits_body(op, a, b, words, at, n)
}

#[inline(always)]
fn compare_bits_body(op: BinOp, a: Val, b: Val, words: &mut [u64], at: usize, n: usize) -> bool {
    #[inline(always)]
    fn typed<T: Copy + PartialOrd>(op: BinOp, a: V<T>, b: V<T>, words: &mut [u64], at: usize, n: usize) -> bool {
        match op {
            BinOp::Eq => bits2(a, b, words, at, n, |x, y| x == y),
            BinOp::Ne => bits2(a, b, words, at, n, |x, y| x != y),
            BinOp::Lt => bits2(a, b, words, at, n, |x, y| x < y),
            BinOp::Le => bits2(a, b, words, at, n, |x, y| x <= y),
            BinOp::Gt => bits2(a, b, words, at, n, |x, y| x > y),
            BinOp::Ge => bits2(a, b, words, at, n, |x, y| x >= y),
            _ => return false,
        }
        true
    }
    match (a, b) {
        (Val::Int(a), Val::Int(b)) => typed(op, a, b, words, at, n),
        (Val::Float(a), Val::Float(b)) => typed(op, a, b, words, at, n),
        _ => false,
    }
}

/// [`compare_bits`] of one comparison `f`, one loop per kind of operand (so that each
/// compiles to whole-vector comparisons whose masks are the words).
#[inline(always)]
fn bits2<T: Copy>(a: V<T>, b: V<T>, words: &mut [u64], at: usize, n: usize, f: impl Fn(T, T) -> bool) {
    match (a, b) {
        (V::S(a), V::S(b)) => {
            let (a, b) = (&a[..n], &b[..n]);
            bits_by(words, at, n, |i| f(a[i], b[i]), |i| {
                let (a, b): (&[T; 64], &[T; 64]) = (a[i..i + 64].try_into().unwrap(), b[i..i + 64].try_into().unwrap());
                word64(|k| f(a[k], b[k]))
            })
        }
        (V::S(a), V::K(y)) => {
            let a = &a[..n];
            bits_by(words, at, n, |i| f(a[i], y), |i| {
                let a: &[T; 64] = a[i..i + 64].try_into().unwrap();
                word64(|k| f(a[k], y))
            })
        }
        (V::K(x), V::S(b)) => {
            let b = &b[..n];
            bits_by(words, at, n, |i| f(x, b[i]), |i| {
                let b: &[T; 64] = b[i..i + 64].try_into().unwrap();
                word64(|k| f(x, b[k]))
            })
        }
        (V::K(x), V::K(y)) => {
            let v = f(x, y);
            bits_by(words, at, n, |_| v, |_| if v { u64::MAX } else { 0 })
        }
    }
}

/// The word whose bit `k` is `bit(k)` (a fixed 64 iterations: one mask per vector of
/// comparisons).
#[inline(always)]
fn word64(bit: impl Fn(usize) -> bool) -> u64 {
    (0..64).fold(0u64, |w, k| w | (bit(k) as u64) << k)
}

/// Writes the bits of positions `0..n` at bits `at..at + n` of `words`: `one(i)` gives
/// position `i`'s, `word(i)` the 64 of positions `i..i + 64` (used where they fill a whole
/// word, which is then stored, not ORed).
#[inline(always)]
fn bits_by(words: &mut [u64], at: usize, n: usize, one: impl Fn(usize) -> bool, word: impl Fn(usize) -> u64) {
    let mut i = 0;
    while i < n && !(at + i).is_multiple_of(64) {
        words[(at + i) / 64] |= (one(i) as u64) << ((at + i) % 64);
        i += 1;
    }
    while i + 64 <= n {
        words[(at + i) / 64] = word(i);
        i += 64;
    }
    while i < n {
        words[(at + i) / 64] |= (one(i) as u64) << ((at + i) % 64);
        i += 1;
    }
}

#[inline(always)]
fn mul_add_body(form: MulAdd, a: Val, b: Val, c: Val, out: Out) -> Result<(), Trap> {
    match (a, b, c, out) {
        (Val::Float(a), Val::Float(b), Val::Float(c), Out::Float(o)) => match form {
            MulAdd::Add => map3(a, b, c, o, |x: f64, y, z| x * y + z),
            MulAdd::Sub => map3(a, b, c, o, |x: f64, y, z| x * y - z),
            MulAdd::SubFrom => map3(a, b, c, o, |x: f64, y, z| z - x * y),
        },
        (Val::Int(a), Val::Int(b), Val::Int(c), Out::Int(o)) => match form {
            MulAdd::Add => map3(a, b, c, o, |x: i64, y, z| x.wrapping_mul(y).wrapping_add(z)),
            MulAdd::Sub => map3(a, b, c, o, |x: i64, y, z| x.wrapping_mul(y).wrapping_sub(z)),
            MulAdd::SubFrom => map3(a, b, c, o, |x: i64, y, z| z.wrapping_sub(x.wrapping_mul(y))),
        },
        (a, ..) => return Err(unsupported("a multiply-add", a.vtype())),
    }
    Ok(())
}

#[inline(always)]
fn binary_body(op: BinOp, a: Val, b: Val, out: Out) -> Result<(), Trap> {
    let ty = a.vtype();
    let done = match (a, b, out) {
        (Val::Int(a), Val::Int(b), Out::Int(o)) => {
            if matches!(op, BinOp::Div | BinOp::Mod) && !o.is_empty() {
                let zero = match b {
                    V::S(b) => b[..o.len()].contains(&0),
                    V::K(y) => y == 0,
                };
                if zero {
                    return Err(Trap::new(TrapKind::DivisionByZero));
                }
            }
            same_type_op!(i64, op, |f| map2(a, b, o, f))
        }
        (Val::Float(a), Val::Float(b), Out::Float(o)) => same_type_op!(f64, op, |f| map2(a, b, o, f)),
        (Val::Bool(a), Val::Bool(b), Out::Bool(o)) => {
            if op.is_comparison() {
                compare(op, a, b, o, false)
            } else {
                same_type_op!(bool, op, |f| map2(a, b, o, f))
            }
        }
        (Val::Int(a), Val::Int(b), Out::Bool(o)) => compare(op, a, b, o, true),
        (Val::Float(a), Val::Float(b), Out::Bool(o)) => compare(op, a, b, o, true),
        (a, b, o) => {
            return Err(Trap::ty(format!(
                "`{}` on {} and {} into {}",
                crate::fused::binop_name(op),
                a.vtype().name(),
                b.vtype().name(),
                o.vtype().name()
            )))
        }
    };
    if done {
        Ok(())
    } else {
        Err(unsupported(&format!("`{}`", crate::fused::binop_name(op)), ty))
    }
}

#[inline]
fn zip_in<T: Copy>(a: &mut [T], b: &[T], f: impl Fn(T, T) -> T) {
    for (x, &y) in a.iter_mut().zip(b) {
        *x = f(*x, y);
    }
}

/// `a = a op b` in place (in parallel blocks) when the result has `a`'s type;
/// `Ok(false)` (and `a` untouched) when it has not.
pub(super) fn binary_in_place(par: &Par, op: BinOp, a: &mut Data, b: Slice) -> Result<bool, Trap> {
    binary_lengths(op, a.len(), b.len())?;
    Ok(match (a, b) {
        (Data::Int(a), Slice::Int(b)) => {
            check_divisors(par, op, b)?;
            same_type_op!(i64, op, |f| par.blocks_mut(a, |lo, blk| zip_in(blk, &b[lo..], f)))
        }
        (Data::Float(a), Slice::Float(b)) => {
            same_type_op!(f64, op, |f| par.blocks_mut(a, |lo, blk| zip_in(blk, &b[lo..], f)))
        }
        (Data::Bool(a), Slice::Bool(b)) => {
            same_type_op!(bool, op, |f| par.blocks_mut(a, |lo, blk| zip_in(blk, &b[lo..], f)))
        }
        _ => false,
    })
}

/// The `FLOAT -> FLOAT` functions among the unary operators.
fn float_fn(op: UnOp) -> Option<fn(f64) -> f64> {
    Some(match op {
        UnOp::Log => super::math::ln,
        UnOp::Sqrt => f64::sqrt,
        UnOp::Exp => super::math::exp,
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

/// `a = op a` in place (in parallel blocks) when the result has `a`'s type; `false` (and
/// `a` untouched) when it has not.
pub(super) fn unary_in_place(par: &Par, op: UnOp, a: &mut Data) -> bool {
    match (op, a) {
        (UnOp::Not, Data::Int(a)) => par.blocks_mut(a, |_, b| b.iter_mut().for_each(|x| *x = !*x)),
        (UnOp::Not, Data::Bool(a)) => par.blocks_mut(a, |_, b| b.iter_mut().for_each(|x| *x = !*x)),
        (UnOp::Sqrt, Data::Float(a)) => par.blocks_mut(a, |_, b| b.iter_mut().for_each(|x| *x = x.sqrt())),
        (UnOp::Exp, Data::Float(a)) => par.blocks_mut(a, |_, b| b.iter_mut().for_each(|x| *x = super::math::exp(*x))),
        (UnOp::Log, Data::Float(a)) => par.blocks_mut(a, |_, b| b.iter_mut().for_each(|x| *x = super::math::ln(*x))),
        (op, Data::Float(a)) => match float_fn(op) {
            Some(f) => par.blocks_mut(a, |_, b| b.iter_mut().for_each(|x| *x = f(*x))),
            None => return false,
        },
        _ => return false,
    }
    true
}

/// `out = op a` element-wise over a whole vector (on the calling thread), reusing the
/// storage of `out`.
pub(super) fn unary_into(op: UnOp, a: Slice, out: &mut Data) -> Result<(), Trap> {
    let rt = crate::fused::node_types(crate::fused::NodeKind::Unary(op), a.vtype())
        .map_err(|_| unsupported(&format!("`{}`", crate::fused::unop_name(op)), a.vtype()))?;
    write_data(out, rt, a.len(), |o| unary_kernel(op, Val::of(a), o))
}

#[inline(always)]
fn unary_body(op: UnOp, a: Val, out: Out) -> Result<(), Trap> {
    match (op, a, out) {
        (UnOp::Not, Val::Int(a), Out::Int(o)) => map1(a, o, |x: i64| !x),
        (UnOp::Not, Val::Bool(a), Out::Bool(o)) => map1(a, o, |x: bool| !x),
        (UnOp::Floor, Val::Float(a), Out::Int(o)) => map1(a, o, |x: f64| x.floor() as i64),
        (UnOp::Ceil, Val::Float(a), Out::Int(o)) => map1(a, o, |x: f64| x.ceil() as i64),
        (UnOp::Trunc, Val::Float(a), Out::Int(o)) => map1(a, o, |x: f64| x.trunc() as i64),
        (UnOp::Round, Val::Float(a), Out::Int(o)) => map1(a, o, |x: f64| (x + 0.5).trunc() as i64),
        (UnOp::IToF, Val::Int(a), Out::Float(o)) => map1(a, o, |x: i64| x as f64),
        (UnOp::IToB, Val::Int(a), Out::Bool(o)) => map1(a, o, |x: i64| x != 0),
        (UnOp::BToI, Val::Bool(a), Out::Int(o)) => map1(a, o, i64::from),
        (UnOp::Sqrt, Val::Float(a), Out::Float(o)) => map1(a, o, f64::sqrt),
        (UnOp::Exp, Val::Float(a), Out::Float(o)) => map1(a, o, super::math::exp),
        (UnOp::Log, Val::Float(a), Out::Float(o)) => map1(a, o, super::math::ln),
        (op, Val::Float(a), Out::Float(o)) if float_fn(op).is_some() => {
            if let Some(f) = float_fn(op) {
                map1(a, o, f)
            }
        }
        (op, a, _) => return Err(unsupported(&format!("`{}`", crate::fused::unop_name(op)), a.vtype())),
    }
    Ok(())
}

#[inline(always)]
fn select_t<T: Elem>(f: &[bool], a: V<T>, b: V<T>, out: &mut [MaybeUninit<T>]) {
    let n = out.len();
    let f = &f[..n];
    match (a, b) {
        (V::S(a), V::S(b)) => {
            let (a, b) = (&a[..n], &b[..n]);
            for i in 0..n {
                out[i].write(T::pick(f[i], a[i], b[i]));
            }
        }
        (V::S(a), V::K(y)) => {
            let a = &a[..n];
            for i in 0..n {
                out[i].write(T::pick(f[i], a[i], y));
            }
        }
        (V::K(x), V::S(b)) => {
            let b = &b[..n];
            for i in 0..n {
                out[i].write(T::pick(f[i], x, b[i]));
            }
        }
        (V::K(x), V::K(y)) => {
            for i in 0..n {
                out[i].write(T::pick(f[i], x, y));
            }
        }
    }
}

/// The checks of `SELECT`.
pub(super) fn select_check(f: CV, a: CV, b: CV) -> Result<(), Trap> {
    crate::cvl::check::select(f, a, b)
}

/// `out = f ? a : b` element-wise over whole vectors (on the calling thread), reusing the
/// storage of `out`.
pub(super) fn select_into(f: Slice, a: Slice, b: Slice, out: &mut Data) -> Result<(), Trap> {
    select_check(f.shape(), a.shape(), b.shape())?;
    write_data(out, a.vtype(), a.len(), |o| select_kernel(Val::of(f), Val::of(a), Val::of(b), o))
}

#[inline(always)]
fn select_body(f: Val, a: Val, b: Val, out: Out) -> Result<(), Trap> {
    let f = match f {
        Val::Bool(V::S(f)) => f,
        // A constant flag picks one operand.
        Val::Bool(V::K(c)) => {
            match (if c { a } else { b }, out) {
                (Val::Int(x), Out::Int(o)) => map1(x, o, |x| x),
                (Val::Float(x), Out::Float(o)) => map1(x, o, |x| x),
                (Val::Bool(x), Out::Bool(o)) => map1(x, o, |x| x),
                (x, o) => return Err(crate::cvl::cpu::data::one_type(x.vtype(), o.vtype())),
            }
            return Ok(());
        }
        f => return Err(Trap::ty(format!("SELECT flags must be BOOL, not {}", f.vtype().name()))),
    };
    match (a, b, out) {
        (Val::Int(a), Val::Int(b), Out::Int(o)) => select_t(f, a, b, o),
        (Val::Float(a), Val::Float(b), Out::Float(o)) => select_t(f, a, b, o),
        (Val::Bool(a), Val::Bool(b), Out::Bool(o)) => select_t(f, a, b, o),
        (a, b, _) => return Err(crate::cvl::cpu::data::one_type(a.vtype(), b.vtype())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `SELECT` whose flag is a constant copies the operand it picks (a vector or a
    /// constant) whole, of every type; operands of two types are refused.
    #[test]
    fn a_constant_flag_selects_one_operand_whole() {
        let (xs, ys) = ([1i64, -2, 3, 40], [5i64, 6, -7, 8]);
        for c in [true, false] {
            let mut out = vec![MaybeUninit::new(0i64); 4];
            select_body(Val::Bool(V::K(c)), Val::Int(V::S(&xs)), Val::Int(V::S(&ys)), Out::Int(&mut out)).expect("selects");
            // SAFETY: every element was initialised above.
            let got: Vec<i64> = out.iter().map(|e| unsafe { e.assume_init() }).collect();
            assert_eq!(got, if c { xs } else { ys }, "flag {c}");
            let mut out = vec![MaybeUninit::new(0.0f64); 3];
            select_body(Val::Bool(V::K(c)), Val::Float(V::K(1.5)), Val::Float(V::S(&[2.0, 3.0, 4.0])), Out::Float(&mut out)).expect("selects");
            // SAFETY: as above.
            let got: Vec<f64> = out.iter().map(|e| unsafe { e.assume_init() }).collect();
            assert_eq!(got, if c { vec![1.5; 3] } else { vec![2.0, 3.0, 4.0] }, "flag {c}, floats");
            let mut out = vec![MaybeUninit::new(false); 2];
            select_body(Val::Bool(V::K(c)), Val::Bool(V::S(&[true, false])), Val::Bool(V::K(true)), Out::Bool(&mut out)).expect("selects");
            // SAFETY: as above.
            let got: Vec<bool> = out.iter().map(|e| unsafe { e.assume_init() }).collect();
            assert_eq!(got, if c { vec![true, false] } else { vec![true, true] }, "flag {c}, booleans");
            let mut out = vec![MaybeUninit::new(0i64); 2];
            assert!(select_body(Val::Bool(V::K(c)), Val::Float(V::K(1.0)), Val::Float(V::K(2.0)), Out::Int(&mut out)).is_err(), "mixed types");
        }
    }

    /// `exp` and `ln` over long vectors give, in every build of the unary kernel the
    /// processor can run (baseline, AVX2, AVX-512), the bits of the same function called
    /// on one element: vectorised, they compute the same values.
    #[test]
    fn exp_and_ln_give_the_same_bits_in_every_build() {
        let mut next = super::super::test_rng(11);
        let specials = [0.0, -0.0, 1.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, 5e-324, f64::MAX, 709.8, -745.2, -700.0];
        let xs: Vec<f64> = (0..4099)
            .map(|i| match i % 5 {
                0 => specials[(next() % specials.len() as u64) as usize],
                1 => f64::from_bits(next() & 0x7fff_ffff_ffff_ffff),
                _ => ((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 1500.0,
            })
            .collect();
        type Build = fn(UnOp, Val, Out) -> Result<(), Trap>;
        let mut builds: Vec<(&str, Build)> = vec![("baseline", unary_body)];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2.
                builds.push(("avx2", |op, a, o| unsafe { unary_avx2(op, a, o) }));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the processor has AVX-512F.
                builds.push(("avx512", |op, a, o| unsafe { unary_avx512(op, a, o) }));
            }
        }
        for (op, f) in [(UnOp::Exp, super::super::math::exp as fn(f64) -> f64), (UnOp::Log, super::super::math::ln)] {
            let want: Vec<u64> = xs.iter().map(|&x| f(x).to_bits()).collect();
            for (name, build) in &builds {
                let mut out = vec![MaybeUninit::new(0.0f64); xs.len()];
                build(op, Val::Float(V::S(&xs)), Out::Float(&mut out)).expect("runs");
                for (i, o) in out.iter().enumerate() {
                    // SAFETY: every element was written above.
                    let got = unsafe { o.assume_init() }.to_bits();
                    let nan = f64::from_bits(got).is_nan() && f64::from_bits(want[i]).is_nan();
                    assert!(got == want[i] || nan, "{op:?}({:e}) in the {name} build: {:e} against {:e}", xs[i], f64::from_bits(got), f64::from_bits(want[i]));
                }
            }
        }
    }

    /// Every comparison written as bits ([`compare_bits`]) gives the booleans of
    /// [`binary_kernel`], on `INT` and `FLOAT` (ties, NaNs, infinities, signed zeros),
    /// operands and constants on either side, runs starting on and off a word boundary,
    /// shorter and longer than a word; bits outside the run stay 0; other types and
    /// operators write nothing. Both the wide and the baseline builds.
    #[test]
    fn comparisons_as_bits_match_the_booleans() {
        let mut next = super::super::test_rng(7);
        let len = 400;
        let ints: Vec<Vec<i64>> = (0..2).map(|_| (0..len).map(|_| (next() % 7) as i64 - 3).collect()).collect();
        let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1.5];
        let floats: Vec<Vec<f64>> = (0..2).map(|_| (0..len).map(|_| specials[(next() % 6) as usize]).collect()).collect();
        let ops = [BinOp::Eq, BinOp::Ne, BinOp::Lt, BinOp::Le, BinOp::Gt, BinOp::Ge];
        let runs = [(0, 0), (0, 1), (0, 64), (3, 61), (5, 200), (63, 130), (64, 300), (1, 399)];
        for narrow in [false, true] {
            NARROW.store(narrow, std::sync::atomic::Ordering::Relaxed);
            for &op in &ops {
                for &(at, n) in &runs {
                    for form in 0..4 {
                        let cases: Vec<(Val, Val)> = vec![
                            match form {
                                0 => (Val::Int(V::S(&ints[0][..n])), Val::Int(V::S(&ints[1][..n]))),
                                1 => (Val::Int(V::S(&ints[0][..n])), Val::Int(V::K(0))),
                                2 => (Val::Int(V::K(1)), Val::Int(V::S(&ints[1][..n]))),
                                _ => (Val::Int(V::K(2)), Val::Int(V::K(2))),
                            },
                            match form {
                                0 => (Val::Float(V::S(&floats[0][..n])), Val::Float(V::S(&floats[1][..n]))),
                                1 => (Val::Float(V::S(&floats[0][..n])), Val::Float(V::K(f64::NAN))),
                                2 => (Val::Float(V::K(0.0)), Val::Float(V::S(&floats[1][..n]))),
                                _ => (Val::Float(V::K(-0.0)), Val::Float(V::K(0.0))),
                            },
                        ];
                        for (a, b) in cases {
                            let mut want = vec![MaybeUninit::new(false); n];
                            binary_kernel(op, a, b, Out::Bool(&mut want)).unwrap();
                            // SAFETY: every element was initialised above.
                            let want: Vec<bool> = want.iter().map(|w| unsafe { w.assume_init() }).collect();
                            let mut words = vec![0u64; (at + n) / 64 + 2];
                            assert!(compare_bits(op, a, b, &mut words, at, n));
                            for p in 0..64 * words.len() {
                                let bit = words[p / 64] >> (p % 64) & 1 == 1;
                                let expect = (at..at + n).contains(&p) && want[p - at];
                                assert_eq!(bit, expect, "{op:?} form {form} at {at} n {n} position {p} narrow {narrow} {}", a.vtype().name());
                            }
                        }
                    }
                }
            }
            let mut words = vec![0u64; 2];
            let bools = [true, false, true];
            assert!(!compare_bits(BinOp::Eq, Val::Bool(V::S(&bools)), Val::Bool(V::S(&bools)), &mut words, 0, 3));
            assert!(!compare_bits(BinOp::Add, Val::Int(V::S(&ints[0][..3])), Val::Int(V::K(1)), &mut words, 0, 3));
            assert_eq!(words, [0, 0]);
        }
        NARROW.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}
