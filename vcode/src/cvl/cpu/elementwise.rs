//! Element-wise operations: the one definition of every binary and unary operator and of
//! `SELECT` on chunks (used directly for short vectors and by the superoperator
//! evaluator for long ones), and their in-place forms.

use super::data::{unsupported, Data, Elem, Num, Slice};
use super::par::Par;
use crate::cvl::{BinOp, UnOp};
use crate::trap::{Trap, TrapKind};

/// Reuses the storage of `out` for a vector of `T` (empty, capacity kept when the type
/// matches).
fn take<T: Elem>(out: &mut Data) -> Vec<T> {
    match T::unwrap(std::mem::replace(out, Data::none())) {
        Some(mut v) => {
            v.clear();
            v
        }
        None => Vec::new(),
    }
}

#[inline]
fn map1<A: Copy, R: Elem>(a: &[A], out: &mut Data, f: impl Fn(A) -> R) {
    let mut v = take::<R>(out);
    v.extend(a.iter().map(|&x| f(x)));
    *out = R::wrap(v);
}

#[inline]
fn map2<A: Copy, B: Copy, R: Elem>(a: &[A], b: &[B], out: &mut Data, f: impl Fn(A, B) -> R) {
    let mut v = take::<R>(out);
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

/// The checks of `a op b` that do not depend on the elements but the divisors.
pub(super) fn binary_check(op: BinOp, a: Slice, b: Slice) -> Result<(), Trap> {
    binary_lengths(op, a.len(), b.len())?;
    if a.vtype() != b.vtype() {
        return Err(Trap::ty(format!(
            "operands of `{}` are {} and {}",
            crate::fused::binop_name(op),
            a.vtype().name(),
            b.vtype().name()
        )));
    }
    crate::fused::node_types(crate::fused::NodeKind::Binary(op), a.vtype())
        .map(|_| ())
        .map_err(|_| unsupported(&format!("`{}`", crate::fused::binop_name(op)), a.vtype()))
}

/// `out = a op b` element-wise (one chunk, on the calling thread).
pub(super) fn binary_into(op: BinOp, a: Slice, b: Slice, out: &mut Data) -> Result<(), Trap> {
    binary_lengths(op, a.len(), b.len())?;
    let done = match (a, b) {
        (Slice::Int(a), Slice::Int(b)) => {
            if matches!(op, BinOp::Div | BinOp::Mod) && b.contains(&0) {
                return Err(Trap::new(TrapKind::DivisionByZero));
            }
            same_type_op!(i64, op, |f| map2(a, b, out, f)) || compare(op, a, b, out, true)
        }
        (Slice::Float(a), Slice::Float(b)) => {
            same_type_op!(f64, op, |f| map2(a, b, out, f)) || compare(op, a, b, out, true)
        }
        (Slice::Bool(a), Slice::Bool(b)) => {
            same_type_op!(bool, op, |f| map2(a, b, out, f)) || compare(op, a, b, out, false)
        }
        (a, b) => return binary_check(op, a, b),
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

/// `a = op a` in place (in parallel blocks) when the result has `a`'s type; `false` (and
/// `a` untouched) when it has not.
pub(super) fn unary_in_place(par: &Par, op: UnOp, a: &mut Data) -> bool {
    match (op, a) {
        (UnOp::Not, Data::Int(a)) => par.blocks_mut(a, |_, b| b.iter_mut().for_each(|x| *x = !*x)),
        (UnOp::Not, Data::Bool(a)) => par.blocks_mut(a, |_, b| b.iter_mut().for_each(|x| *x = !*x)),
        (UnOp::Sqrt, Data::Float(a)) => par.blocks_mut(a, |_, b| b.iter_mut().for_each(|x| *x = x.sqrt())),
        (op, Data::Float(a)) => match float_fn(op) {
            Some(f) => par.blocks_mut(a, |_, b| b.iter_mut().for_each(|x| *x = f(*x))),
            None => return false,
        },
        _ => return false,
    }
    true
}

/// `out = op a` element-wise (one chunk, on the calling thread).
pub(super) fn unary_into(op: UnOp, a: Slice, out: &mut Data) -> Result<(), Trap> {
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
    let mut v = take::<T>(out);
    v.extend(f.iter().zip(a.iter().zip(b)).map(|(&c, (&x, &y))| if c { x } else { y }));
    *out = T::wrap(v);
}

/// The checks of `SELECT`.
pub(super) fn select_check(f: Slice, a: Slice, b: Slice) -> Result<(), Trap> {
    use crate::cvl::check::{select, V};
    select(V { ty: f.vtype(), len: f.len() }, V { ty: a.vtype(), len: a.len() }, V { ty: b.vtype(), len: b.len() })
}

/// `out = f ? a : b` element-wise (one chunk, on the calling thread).
pub(super) fn select_into(f: Slice, a: Slice, b: Slice, out: &mut Data) -> Result<(), Trap> {
    match (f, a, b) {
        (Slice::Bool(f), Slice::Int(a), Slice::Int(b)) if f.len() == a.len() && a.len() == b.len() => select_t(f, a, b, out),
        (Slice::Bool(f), Slice::Float(a), Slice::Float(b)) if f.len() == a.len() && a.len() == b.len() => select_t(f, a, b, out),
        (Slice::Bool(f), Slice::Bool(a), Slice::Bool(b)) if f.len() == a.len() && a.len() == b.len() => select_t(f, a, b, out),
        (f, a, b) => return select_check(f, a, b),
    }
    Ok(())
}
