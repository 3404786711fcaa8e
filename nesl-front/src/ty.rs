//! NESL types as the type checker infers them and the flattener consumes them.
//!
//! Tuples are right-nested pairs (`(int, bool, float)` is
//! `Pair(Int, Pair(Bool, Float))`), like everywhere in this crate. A datatype keeps its
//! name and type arguments; its representation is the tuple of its fields, which the
//! datatype table of the type checker's session gives.

use std::sync::Arc;

/// A type class: the set of types a constrained type variable may stand for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeClass {
    /// Every type.
    Any,
    /// `int`, `float`, `char`.
    Ordinal,
    /// `int`, `float`.
    Number,
    /// `int`, `bool`.
    Logical,
}

impl TypeClass {
    /// The name NESL prints (`any`, `number`, `ordinal`, `logical`).
    pub fn name(self) -> &'static str {
        match self {
            TypeClass::Any => "any",
            TypeClass::Ordinal => "ordinal",
            TypeClass::Number => "number",
            TypeClass::Logical => "logical",
        }
    }
}

/// A type variable: an id unique within one inference session, and its class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TyVar {
    /// Unique id.
    pub id: u32,
    /// The class constraint (`Any` when unconstrained).
    pub class: TypeClass,
}

/// A NESL type. Its parts are shared (`Arc`): a copy costs one node, and the types the
/// checker writes into every node of a wide tuple share their tails, so they take space
/// linear in the tuple's width.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    /// `int`
    Int,
    /// `bool`
    Bool,
    /// `float`
    Float,
    /// `char`
    Char,
    /// `[t]`
    Seq(Arc<Type>),
    /// `(a, b)`
    Pair(Arc<Type>, Arc<Type>),
    /// `arg -> result` (only for function names and function parameters).
    Fun(Arc<Type>, Arc<Type>),
    /// A datatype applied to its type arguments (e.g. `complex`, `stream`, `tree(int)`).
    Data(String, Vec<Type>),
    /// A type variable.
    Var(TyVar),
}

impl Type {
    /// `[t]`
    pub fn seq(t: Type) -> Type {
        Type::Seq(Arc::new(t))
    }

    /// `(a, b)`
    pub fn pair(a: Type, b: Type) -> Type {
        Type::Pair(Arc::new(a), Arc::new(b))
    }

    /// `a -> b`
    pub fn fun(a: Type, b: Type) -> Type {
        Type::Fun(Arc::new(a), Arc::new(b))
    }

    /// True when the type contains no type variables.
    pub fn is_ground(&self) -> bool {
        match self {
            Type::Int | Type::Bool | Type::Float | Type::Char => true,
            Type::Seq(t) => t.is_ground(),
            Type::Pair(a, b) | Type::Fun(a, b) => a.is_ground() && b.is_ground(),
            Type::Data(_, args) => args.iter().all(Type::is_ground),
            Type::Var(_) => false,
        }
    }
}

/// A (possibly polymorphic) type scheme: `forall vars. ty`, each variable with its class.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scheme {
    /// The generalised variables.
    pub vars: Vec<TyVar>,
    /// The type.
    pub ty: Type,
}
