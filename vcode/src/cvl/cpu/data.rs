//! Element storage of the CPU library: the typed vectors ([`Data`]), borrowed runs of
//! them ([`Slice`]), the element trait ([`Elem`]) that lets every kernel be written once,
//! the macros that pick a kernel's instantiation from a vector's type, and the argument
//! checks the kernels share.

use crate::cvl::{HostScalar, VType};
use crate::trap::{Trap, TrapKind};
use std::mem::MaybeUninit;

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
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Data::Int(v) => v.len(),
            Data::Float(v) => v.len(),
            Data::Bool(v) => v.len(),
        }
    }
    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The element type.
    pub fn vtype(&self) -> VType {
        match self {
            Data::Int(_) => VType::Int,
            Data::Float(_) => VType::Float,
            Data::Bool(_) => VType::Bool,
        }
    }
    pub(super) fn slice(&self) -> Slice<'_> {
        match self {
            Data::Int(v) => Slice::Int(v),
            Data::Float(v) => Slice::Float(v),
            Data::Bool(v) => Slice::Bool(v),
        }
    }
    /// An empty placeholder (no allocation).
    pub(super) fn none() -> Data {
        Data::Int(Vec::new())
    }
}

/// A borrowed run of elements of one type.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy)]
pub enum Slice<'a> {
    Int(&'a [i64]),
    Float(&'a [f64]),
    Bool(&'a [bool]),
}

impl<'a> Slice<'a> {
    /// Itself (so that the `each!` macros take a [`Data`] or a `Slice`).
    pub(super) fn slice(self) -> Slice<'a> {
        self
    }
    pub(super) fn len(&self) -> usize {
        match self {
            Slice::Int(v) => v.len(),
            Slice::Float(v) => v.len(),
            Slice::Bool(v) => v.len(),
        }
    }
    pub(super) fn vtype(&self) -> VType {
        match self {
            Slice::Int(_) => VType::Int,
            Slice::Float(_) => VType::Float,
            Slice::Bool(_) => VType::Bool,
        }
    }
    pub(super) fn shape(&self) -> crate::cvl::check::V {
        crate::cvl::check::V { ty: self.vtype(), len: self.len() }
    }
    pub(super) fn range(self, lo: usize, hi: usize) -> Slice<'a> {
        match self {
            Slice::Int(v) => Slice::Int(&v[lo..hi]),
            Slice::Float(v) => Slice::Float(&v[lo..hi]),
            Slice::Bool(v) => Slice::Bool(&v[lo..hi]),
        }
    }
}

/// `v`'s memory as a vector of `B`, bit for bit (`A` and `B` are `i64` / `f64`: the same
/// size and alignment, and every bit pattern a valid value of both).
fn recast<A: Elem, B: Elem>(v: Vec<A>) -> Vec<B> {
    assert!(std::mem::size_of::<A>() == 8 && std::mem::size_of::<B>() == 8 && std::mem::align_of::<A>() == std::mem::align_of::<B>());
    let mut v = std::mem::ManuallyDrop::new(v);
    // SAFETY: same size and alignment (checked above), so the allocation's layout is the
    // same; both types are plain 8-byte numbers with no invalid bit patterns.
    unsafe { Vec::from_raw_parts(v.as_mut_ptr() as *mut B, v.len(), v.capacity()) }
}

/// `d`'s memory as a vector of type `to` (its elements' bits unchanged), when both types
/// are 8 bytes (`INT`, `FLOAT`) or equal; `Err(d)` otherwise. No copy: a superoperator
/// converting one into the other writes over its operand's memory.
pub(super) fn retype(d: Data, to: VType) -> Result<Data, Data> {
    match (d, to) {
        (Data::Int(v), VType::Float) => Ok(Data::Float(recast(v))),
        (Data::Float(v), VType::Int) => Ok(Data::Int(recast(v))),
        (d, t) if d.vtype() == t => Ok(d),
        (d, _) => Err(d),
    }
}

/// True when a vector of type `a` can hold one of type `b` in the same memory
/// ([`retype`]).
pub(super) fn same_width(a: VType, b: VType) -> bool {
    a == b || matches!((a, b), (VType::Int, VType::Float) | (VType::Float, VType::Int))
}

/// The elements `v` as type `vt`, bit for bit ([`retype`]'s view of a slice).
pub(super) fn view_as<T: Elem>(v: &[T], vt: VType) -> Option<Slice<'_>> {
    if vt == T::VT {
        return Some(T::slice_of(v));
    }
    if std::mem::size_of::<T>() != 8 {
        return None;
    }
    // SAFETY: `T` is `i64` or `f64` (8 bytes, 8-aligned), as are the views made here.
    Some(unsafe {
        match vt {
            VType::Int => Slice::Int(std::slice::from_raw_parts(v.as_ptr() as *const i64, v.len())),
            VType::Float => Slice::Float(std::slice::from_raw_parts(v.as_ptr() as *const f64, v.len())),
            VType::Bool => return None,
        }
    })
}

/// An element type of the CPU library (`i64`, `f64`, `bool`).
pub trait Elem: Copy + Default + PartialOrd + Send + Sync + std::fmt::Debug + 'static {
    /// The VCODE element type.
    const VT: VType;
    /// Wraps a vector of this type.
    fn wrap(v: Vec<Self>) -> Data;
    /// Takes the vector out of `d` if it has this type.
    fn unwrap(d: Data) -> Option<Vec<Self>>;
    /// Views `d` as this type.
    fn view(d: &Data) -> Option<&[Self]>;
    /// A borrowed run of this type.
    fn slice_of(v: &[Self]) -> Slice<'_>;
    /// Views a borrowed run as this type.
    fn of_slice(s: Slice<'_>) -> Option<&[Self]>;
    /// Uninitialised storage of this type as a kernel's output.
    fn out(o: &mut [MaybeUninit<Self>]) -> Out<'_>;
    /// `if c { x } else { y }` without a branch (so that a loop of them vectorises and
    /// unpredictable flags cost nothing).
    fn pick(c: bool, x: Self, y: Self) -> Self;
}

macro_rules! elem {
    ($t:ty, $var:ident, $pick:expr) => {
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
            fn slice_of(v: &[Self]) -> Slice<'_> {
                Slice::$var(v)
            }
            fn of_slice(s: Slice<'_>) -> Option<&[Self]> {
                match s {
                    Slice::$var(v) => Some(v),
                    _ => None,
                }
            }
            fn out(o: &mut [MaybeUninit<Self>]) -> Out<'_> {
                Out::$var(o)
            }
            #[inline(always)]
            fn pick(c: bool, x: Self, y: Self) -> Self {
                ($pick)(c, x, y)
            }
        }
    };
}
elem!(i64, Int, |c: bool, x: i64, y: i64| {
    let m = -(c as i64);
    (x & m) | (y & !m)
});
elem!(f64, Float, |c: bool, x: f64, y: f64| {
    let m = (c as u64).wrapping_neg();
    f64::from_bits((x.to_bits() & m) | (y.to_bits() & !m))
});
elem!(bool, Bool, |c: bool, x: bool, y: bool| (c & x) | (!c & y));

/// One operand of an element-wise kernel: a run of elements, or a constant standing for
/// any number of them.
#[derive(Debug, Clone, Copy)]
pub(super) enum V<'a, T> {
    /// Elements.
    S(&'a [T]),
    /// A constant.
    K(T),
}

/// An operand of an element-wise kernel, of any element type.
#[derive(Debug, Clone, Copy)]
pub(super) enum Val<'a> {
    Int(V<'a, i64>),
    Float(V<'a, f64>),
    Bool(V<'a, bool>),
}

impl<'a> Val<'a> {
    pub(super) fn of(s: Slice<'a>) -> Val<'a> {
        match s {
            Slice::Int(v) => Val::Int(V::S(v)),
            Slice::Float(v) => Val::Float(V::S(v)),
            Slice::Bool(v) => Val::Bool(V::S(v)),
        }
    }
    pub(super) fn konst(c: HostScalar) -> Val<'a> {
        match c {
            HostScalar::Int(x) => Val::Int(V::K(x)),
            HostScalar::Float(x) => Val::Float(V::K(x)),
            HostScalar::Bool(x) => Val::Bool(V::K(x)),
        }
    }
    pub(super) fn vtype(&self) -> VType {
        match self {
            Val::Int(_) => VType::Int,
            Val::Float(_) => VType::Float,
            Val::Bool(_) => VType::Bool,
        }
    }
}

/// Uninitialised storage a kernel writes every element of.
#[allow(missing_docs)]
#[derive(Debug)]
pub enum Out<'a> {
    Int(&'a mut [MaybeUninit<i64>]),
    Float(&'a mut [MaybeUninit<f64>]),
    Bool(&'a mut [MaybeUninit<bool>]),
}

impl Out<'_> {
    pub(super) fn vtype(&self) -> VType {
        match self {
            Out::Int(_) => VType::Int,
            Out::Float(_) => VType::Float,
            Out::Bool(_) => VType::Bool,
        }
    }
}

/// Makes `d` a vector of `n` elements of type `rt` written by `fill`, reusing its storage
/// (a register of the superoperator evaluator, or a short result). `fill` must write every
/// element when it returns `Ok`; on `Err` `d` is left empty.
pub(super) fn write_data(d: &mut Data, rt: VType, n: usize, fill: impl FnOnce(Out<'_>) -> Result<(), Trap>) -> Result<(), Trap> {
    fn room<T: Elem>(v: &mut Vec<T>, n: usize) -> Result<(), Trap> {
        v.clear();
        if v.capacity() < n {
            crate::memory::check(n, n.saturating_mul(std::mem::size_of::<T>()))?;
            v.try_reserve_exact(n)
                .map_err(|_| Trap::new(TrapKind::OutOfMemory(format!("cannot allocate {n} elements"))))?;
        }
        Ok(())
    }
    if d.vtype() != rt {
        *d = match rt {
            VType::Int => Data::Int(Vec::new()),
            VType::Float => Data::Float(Vec::new()),
            VType::Bool => Data::Bool(Vec::new()),
        };
    }
    macro_rules! go {
        ($v:ident, $var:ident) => {{
            room($v, n)?;
            fill(Out::$var(&mut $v.spare_capacity_mut()[..n]))?;
            // SAFETY: `fill` returned `Ok`, so it wrote all `n` elements (its contract),
            // and the capacity is at least `n`.
            unsafe { $v.set_len(n) };
        }};
    }
    match d {
        Data::Int(v) => go!(v, Int),
        Data::Float(v) => go!(v, Float),
        Data::Bool(v) => go!(v, Bool),
    }
    Ok(())
}

/// Maximum and minimum, shared by `i64` and `f64` (for floats, a NaN operand `b` is
/// never chosen).
pub(super) trait Num: Elem {
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

/// Applies a generic function to the typed slice of a vector, wrapping its result.
macro_rules! each {
    ($d:expr, |$v:ident| $body:expr) => {
        match $d.slice() {
            crate::cvl::cpu::data::Slice::Int($v) => Data::Int($body?),
            crate::cvl::cpu::data::Slice::Float($v) => Data::Float($body?),
            crate::cvl::cpu::data::Slice::Bool($v) => Data::Bool($body?),
        }
    };
}

/// The same for two vectors that must have the same type.
macro_rules! each2 {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {
        match ($a.slice(), $b.slice()) {
            (crate::cvl::cpu::data::Slice::Int($x), crate::cvl::cpu::data::Slice::Int($y)) => Data::Int($body?),
            (crate::cvl::cpu::data::Slice::Float($x), crate::cvl::cpu::data::Slice::Float($y)) => Data::Float($body?),
            (crate::cvl::cpu::data::Slice::Bool($x), crate::cvl::cpu::data::Slice::Bool($y)) => Data::Bool($body?),
            (a, b) => return Err(crate::cvl::cpu::data::one_type(a.vtype(), b.vtype())),
        }
    };
}

/// Runs `$body` on `$out` (mutable) and `$x` viewed at one element type; a type mismatch
/// is a trap.
macro_rules! each_mut {
    ($out:expr, $x:expr, |$o:ident, $y:ident| $body:expr) => {
        match ($out, $x.slice()) {
            (Data::Int($o), crate::cvl::cpu::data::Slice::Int($y)) => $body,
            (Data::Float($o), crate::cvl::cpu::data::Slice::Float($y)) => $body,
            (Data::Bool($o), crate::cvl::cpu::data::Slice::Bool($y)) => $body,
            (a, b) => return Err(crate::cvl::cpu::data::one_type(a.vtype(), b.vtype())),
        }
    };
}

pub(super) use {each, each2, each_mut};

pub(crate) fn one_type(a: VType, b: VType) -> Trap {
    Trap::ty(format!("values are {} and {}; they must have one type", a.name(), b.name()))
}

pub(super) fn unsupported(what: &str, t: VType) -> Trap {
    Trap::ty(format!("{what} is not defined on {}", t.name()))
}

pub(super) fn ints<'a>(d: &'a Data, what: &str) -> Result<&'a [i64], Trap> {
    match d {
        Data::Int(x) => Ok(x),
        d => Err(Trap::ty(format!("{what} must be INT, not {}", d.vtype().name()))),
    }
}

pub(super) fn bools<'a>(d: &'a Data, what: &str) -> Result<&'a [bool], Trap> {
    match d {
        Data::Bool(x) => Ok(x),
        d => Err(Trap::ty(format!("{what} must be BOOL, not {}", d.vtype().name()))),
    }
}
