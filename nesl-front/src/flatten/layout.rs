//! Flat layouts: how a NESL type is represented by VCODE vectors (vcode.md section 3).
//!
//! A [`Lay`] is the shape that matters to code generation: base vectors, one segment
//! descriptor per level of sequence nesting, and tuples side by side. `char` is an `INT`
//! vector, a datatype is its field tuple, a function value has no slots.

use crate::ty::Type;
use std::collections::HashMap;
use std::sync::Arc;

/// The kind of one VCODE stack slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlotKind {
    /// An `INT` vector (also characters and streams).
    Int,
    /// A `FLOAT` vector.
    Float,
    /// A `BOOL` vector.
    Bool,
    /// A segment descriptor.
    Segdes,
}

impl SlotKind {
    /// The VCODE type of this slot kind.
    pub fn ty(self) -> vcode::Ty {
        match self {
            SlotKind::Int => vcode::Ty::Int,
            SlotKind::Float => vcode::Ty::Float,
            SlotKind::Bool => vcode::Ty::Bool,
            SlotKind::Segdes => vcode::Ty::Segdes,
        }
    }
    /// The VCODE type keyword (`INT`, `FLOAT`, `BOOL`, `SEGDES`).
    pub fn keyword(self) -> &'static str {
        match self {
            SlotKind::Int => "INT",
            SlotKind::Float => "FLOAT",
            SlotKind::Bool => "BOOL",
            SlotKind::Segdes => "SEGDES",
        }
    }
}

/// The flat layout of a type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Lay {
    /// One base vector (`Int`, `Float` or `Bool`; never `Segdes`).
    Base(SlotKind),
    /// A sequence: a segment descriptor, then the layout of the elements.
    Seq(Arc<Lay>),
    /// Two components side by side.
    Pair(Arc<Lay>, Arc<Lay>),
    /// No slots (function values whose callee is not known).
    Unit,
    /// No slots: a function value whose callee is known at compile time. NESL functions
    /// are not data; a function argument is resolved statically and every function that
    /// receives one is specialised for it (the callee is part of the instance's layout).
    Fun(FunRef),
}

/// The callee of a function value known at compile time.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum FunRef {
    /// A user function (`User`) or a prelude function (`Prelude`), by name.
    Def(super::gen::Origin, String),
    /// A builtin function, by name.
    Builtin(String),
    /// A datatype constructor, by name.
    Con(String),
}

impl Lay {
    /// Number of stack slots.
    pub(crate) fn size(&self) -> usize {
        match self {
            Lay::Base(_) => 1,
            Lay::Seq(e) => 1 + e.size(),
            Lay::Pair(a, b) => a.size() + b.size(),
            Lay::Unit | Lay::Fun(_) => 0,
        }
    }

    /// Whether a sequence lies anywhere inside: a value without one is a tuple of base
    /// vectors, one element per position.
    pub(crate) fn holds_seq(&self) -> bool {
        match self {
            Lay::Seq(_) => true,
            Lay::Pair(a, b) => a.holds_seq() || b.holds_seq(),
            Lay::Base(_) | Lay::Unit | Lay::Fun(_) => false,
        }
    }

    /// The slot kinds in stack order.
    pub(crate) fn slots(&self, out: &mut Vec<SlotKind>) {
        match self {
            Lay::Base(k) => out.push(*k),
            Lay::Seq(e) => {
                out.push(SlotKind::Segdes);
                e.slots(out);
            }
            Lay::Pair(a, b) => {
                a.slots(out);
                b.slots(out);
            }
            Lay::Unit | Lay::Fun(_) => {}
        }
    }

    /// A short mangled name, used to name per-layout helper functions.
    pub(crate) fn mangle(&self) -> String {
        match self {
            Lay::Base(SlotKind::Int) => "I".into(),
            Lay::Base(SlotKind::Float) => "F".into(),
            Lay::Base(SlotKind::Bool) => "B".into(),
            Lay::Base(SlotKind::Segdes) => "S".into(),
            Lay::Seq(e) => format!("V{}", e.mangle()),
            Lay::Pair(a, b) => format!("P{}{}", a.mangle(), b.mangle()),
            // A function value has no slots: its helpers are those of `Unit`.
            Lay::Unit | Lay::Fun(_) => "U".into(),
        }
    }
}

/// Looks up the field tuple type of a datatype applied to type arguments.
pub(crate) trait DataTypes {
    /// The type of the field tuple of `name(args)`, or `None` for an unknown datatype.
    fn fields(&self, name: &str, args: &[Type]) -> Option<Type>;
}

/// The layout of a ground type. Unknown datatypes and leftover type variables are
/// reported as `Err` with a description.
pub(crate) fn lay_of(ty: &Type, dt: &dyn DataTypes) -> Result<Lay, String> {
    Ok(match ty {
        Type::Int | Type::Char => Lay::Base(SlotKind::Int),
        Type::Float => Lay::Base(SlotKind::Float),
        Type::Bool => Lay::Base(SlotKind::Bool),
        Type::Seq(e) => Lay::Seq(Arc::new(lay_of(e, dt)?)),
        Type::Pair(a, b) => Lay::Pair(Arc::new(lay_of(a, dt)?), Arc::new(lay_of(b, dt)?)),
        Type::Fun(..) => Lay::Unit,
        Type::Data(name, args) => {
            if name == "stream" && args.is_empty() {
                return Ok(Lay::Base(SlotKind::Int));
            }
            match dt.fields(name, args) {
                Some(f) => lay_of(&f, dt)?,
                None => return Err(format!("unknown datatype {name}")),
            }
        }
        // A type variable left after specialisation constrains nothing the program can
        // observe (e.g. the element type of an empty sequence never used): use `int`.
        Type::Var(_) => Lay::Base(SlotKind::Int),
    })
}

/// Applies a substitution of type variables (by id) to a type.
pub(crate) fn subst(ty: &Type, s: &HashMap<u32, Type>) -> Type {
    if s.is_empty() {
        return ty.clone();
    }
    match ty {
        Type::Var(v) => match s.get(&v.id) {
            Some(t) => t.clone(),
            None => ty.clone(),
        },
        Type::Seq(e) => Type::seq(subst(e, s)),
        Type::Pair(a, b) => Type::pair(subst(a, s), subst(b, s)),
        Type::Fun(a, b) => Type::fun(subst(a, s), subst(b, s)),
        Type::Data(n, args) => Type::Data(n.clone(), args.iter().map(|a| subst(a, s)).collect()),
        _ => ty.clone(),
    }
}

/// Matches a (polymorphic) pattern type against a ground type, extending `s` with the
/// bindings of the pattern's variables. Returns false on a shape mismatch.
pub(crate) fn match_type(pat: &Type, ground: &Type, s: &mut HashMap<u32, Type>) -> bool {
    match (pat, ground) {
        (Type::Var(v), g) => match s.get(&v.id) {
            Some(prev) => prev == g,
            None => {
                s.insert(v.id, g.clone());
                true
            }
        },
        (Type::Seq(a), Type::Seq(b)) => match_type(a, b, s),
        (Type::Pair(a1, b1), Type::Pair(a2, b2)) | (Type::Fun(a1, b1), Type::Fun(a2, b2)) => {
            match_type(a1, a2, s) && match_type(b1, b2, s)
        }
        (Type::Data(n1, a1), Type::Data(n2, a2)) => {
            n1 == n2 && a1.len() == a2.len() && a1.iter().zip(a2).all(|(x, y)| match_type(x, y, s))
        }
        (a, b) => a == b,
    }
}
