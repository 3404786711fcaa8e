//! Unification of NESL types with type classes.
//!
//! A [`Unifier`] owns the unification variables of one checking run: each variable is
//! either unbound, with a class constraint, or bound to a type. Unifying two constrained
//! variables keeps the intersection of their classes (which may be a single type: the
//! only type both `ordinal` and `logical` admit is `int`); unifying a constrained variable
//! with a concrete type checks that the type belongs to the class.

use crate::ty::{Scheme, TyVar, Type, TypeClass};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// The type a shared part holds (one node copied when the part is shared).
fn own(t: Arc<Type>) -> Type {
    Arc::unwrap_or_clone(t)
}

/// Why two types do not unify.
#[derive(Clone, Debug, PartialEq)]
pub enum UnifyError {
    /// Two types of different shapes (both fully substituted at the time of failure).
    Mismatch(Type, Type),
    /// A type that is not a member of a class that a variable requires.
    Class(TypeClass, Type),
    /// A variable would have to contain itself (an infinite type).
    Occurs(TyVar, Type),
}

/// The intersection of two classes: a class, or the one type both admit.
#[derive(Clone, Debug, PartialEq)]
pub enum Meet {
    /// Still a class of several types.
    Class(TypeClass),
    /// Exactly one type belongs to both.
    Single(Type),
}

/// The intersection of two type classes.
pub fn meet(a: TypeClass, b: TypeClass) -> Meet {
    use TypeClass::*;
    match (a, b) {
        (x, y) if x == y => Meet::Class(x),
        (Any, x) | (x, Any) => Meet::Class(x),
        (Number, Ordinal) | (Ordinal, Number) => Meet::Class(Number),
        // logical = {int, bool} meets number/ordinal only in int.
        (Logical, _) | (_, Logical) => Meet::Single(Type::Int),
        // Every remaining pair is equal or handled above; keep the narrower for safety.
        (x, _) => Meet::Class(x),
    }
}

/// Whether a concrete (non-variable) type belongs to a class.
pub fn is_member(class: TypeClass, t: &Type) -> bool {
    match class {
        TypeClass::Any => true,
        TypeClass::Number => matches!(t, Type::Int | Type::Float),
        TypeClass::Ordinal => matches!(t, Type::Int | Type::Float | Type::Char),
        TypeClass::Logical => matches!(t, Type::Int | Type::Bool),
    }
}

/// What [`Unifier::zonk_shared`] has substituted already: each part (by address, kept
/// alive here) and its result.
#[derive(Default)]
pub struct ZonkMemo {
    parts: HashMap<*const Type, (Arc<Type>, Arc<Type>)>,
}

/// What [`Unifier::free_vars_shared`] has visited already: parts (by address) and
/// variables (by id). The types walked must stay alive and unchanged while it is used.
#[derive(Default)]
pub struct FreeVarsSeen {
    parts: HashSet<*const Type>,
    vars: HashSet<u32>,
}

impl FreeVarsSeen {
    /// Marks a variable as seen (so it is not reported).
    pub fn insert_var(&mut self, id: u32) {
        self.vars.insert(id);
    }
}

#[derive(Clone, Debug)]
enum Slot {
    Unbound(TypeClass),
    Bound(Type),
}

/// The substitution of one checking run.
#[derive(Clone, Debug)]
pub struct Unifier {
    base: u32,
    slots: Vec<Slot>,
}

impl Unifier {
    /// A unifier whose fresh variables are numbered from `base` on (so that they never
    /// collide with variables stored in earlier definitions).
    pub fn new(base: u32) -> Self {
        Unifier {
            base,
            slots: Vec::new(),
        }
    }

    /// The first id this unifier has not handed out.
    pub fn next_id(&self) -> u32 {
        self.base + self.slots.len() as u32
    }

    /// A fresh variable of the given class.
    pub fn fresh(&mut self, class: TypeClass) -> Type {
        let id = self.next_id();
        self.slots.push(Slot::Unbound(class));
        Type::Var(TyVar { id, class })
    }

    fn slot(&self, id: u32) -> Option<&Slot> {
        id.checked_sub(self.base)
            .and_then(|i| self.slots.get(i as usize))
    }

    fn set(&mut self, id: u32, s: Slot) {
        if let Some(i) = id.checked_sub(self.base) {
            if let Some(slot) = self.slots.get_mut(i as usize) {
                *slot = s;
            }
        }
    }

    /// The current class of a variable (its own class if the unifier does not know it).
    pub fn class_of(&self, v: TyVar) -> TypeClass {
        match self.slot(v.id) {
            Some(Slot::Unbound(c)) => *c,
            _ => v.class,
        }
    }

    /// Follows variable bindings at the top of `t` only.
    pub fn shallow(&self, t: &Type) -> Type {
        match self.resolve(t) {
            Type::Var(v) => Type::Var(TyVar { id: v.id, class: self.class_of(*v) }),
            other => other.clone(),
        }
    }

    /// Follows variable bindings at the top of `t`, by reference (no copy: every
    /// recursion over a type goes through here, and copying the whole type at each level
    /// made checking a nested literal grow like its depth to the fourth power). A
    /// variable that is left keeps the class it was written with: see [`Self::class_of`].
    fn resolve<'a>(&'a self, mut t: &'a Type) -> &'a Type {
        while let Type::Var(v) = t {
            match self.slot(v.id) {
                Some(Slot::Bound(b)) => t = b,
                _ => break,
            }
        }
        t
    }

    /// Applies the substitution everywhere in `t`, refreshing the classes of the
    /// variables that remain.
    pub fn zonk(&self, t: &Type) -> Type {
        match self.resolve(t) {
            Type::Var(v) => Type::Var(TyVar { id: v.id, class: self.class_of(*v) }),
            Type::Seq(e) => Type::seq(self.zonk(e)),
            Type::Pair(a, b) => Type::pair(self.zonk(a), self.zonk(b)),
            Type::Fun(a, b) => Type::fun(self.zonk(a), self.zonk(b)),
            Type::Data(n, args) => Type::Data(n.clone(), args.iter().map(|a| self.zonk(a)).collect()),
            other => other.clone(),
        }
    }

    /// [`Self::zonk`] for many types that share parts (the types of the nodes of one
    /// form): each shared part is substituted once, and the results share it in turn, so
    /// substituting every node's type of a tuple of n components costs O(n), not O(n^2).
    /// The memo is valid while no variable is bound.
    pub fn zonk_shared(&self, t: &Type, memo: &mut ZonkMemo) -> Type {
        match self.resolve(t) {
            Type::Var(v) => Type::Var(TyVar { id: v.id, class: self.class_of(*v) }),
            Type::Seq(e) => Type::Seq(self.zonk_part(e, memo)),
            Type::Pair(a, b) => Type::Pair(self.zonk_part(a, memo), self.zonk_part(b, memo)),
            Type::Fun(a, b) => Type::Fun(self.zonk_part(a, memo), self.zonk_part(b, memo)),
            Type::Data(n, args) => {
                Type::Data(n.clone(), args.iter().map(|a| self.zonk_shared(a, memo)).collect())
            }
            other => other.clone(),
        }
    }

    fn zonk_part(&self, p: &Arc<Type>, memo: &mut ZonkMemo) -> Arc<Type> {
        let key = Arc::as_ptr(p);
        if let Some((_, z)) = memo.parts.get(&key) {
            return z.clone();
        }
        let z = Arc::new(self.zonk_shared(p, memo));
        // The memo keeps the part alive, so that its address is not reused for another.
        memo.parts.insert(key, (p.clone(), z.clone()));
        z
    }

    /// Adds the variables left in `t` once substituted (with their current classes) to
    /// `out`, each once, in order of first appearance; parts already visited (by address,
    /// in `seen`) are skipped, so a walk over types that share parts is linear.
    pub fn free_vars_shared(&self, t: &Type, seen: &mut FreeVarsSeen, out: &mut Vec<TyVar>) {
        match self.resolve(t) {
            Type::Var(v) => {
                if seen.vars.insert(v.id) {
                    out.push(TyVar { id: v.id, class: self.class_of(*v) });
                }
            }
            Type::Seq(e) => self.free_vars_part(e, seen, out),
            Type::Pair(a, b) | Type::Fun(a, b) => {
                self.free_vars_part(a, seen, out);
                self.free_vars_part(b, seen, out);
            }
            Type::Data(_, args) => args.iter().for_each(|a| self.free_vars_shared(a, seen, out)),
            _ => {}
        }
    }

    fn free_vars_part(&self, p: &Arc<Type>, seen: &mut FreeVarsSeen, out: &mut Vec<TyVar>) {
        if seen.parts.insert(Arc::as_ptr(p)) {
            self.free_vars_shared(p, seen, out);
        }
    }

    fn occurs(&self, id: u32, t: &Type) -> bool {
        match self.resolve(t) {
            Type::Var(v) => v.id == id,
            Type::Seq(e) => self.occurs(id, e),
            Type::Pair(a, b) | Type::Fun(a, b) => self.occurs(id, a) || self.occurs(id, b),
            Type::Data(_, args) => args.iter().any(|a| self.occurs(id, a)),
            _ => false,
        }
    }

    /// Makes `a` and `b` equal, or says why they cannot be. On failure some variables
    /// may already be bound; callers abandon the whole form then.
    pub fn unify(&mut self, a: &Type, b: &Type) -> Result<(), UnifyError> {
        self.unify_owned(self.shallow(a), self.shallow(b))
    }

    /// [`Self::unify`] on types already resolved at the top: the parts of a structure are
    /// moved into the recursion, so each level costs only its own node (plus the
    /// bindings followed), not a copy of everything below it.
    fn unify_owned(&mut self, a: Type, b: Type) -> Result<(), UnifyError> {
        match (a, b) {
            (Type::Var(x), Type::Var(y)) if x.id == y.id => Ok(()),
            (Type::Var(x), Type::Var(y)) => {
                match meet(x.class, y.class) {
                    Meet::Class(c) => {
                        self.set(x.id, Slot::Bound(Type::Var(TyVar { id: y.id, class: c })));
                        self.set(y.id, Slot::Unbound(c));
                    }
                    Meet::Single(t) => {
                        self.set(x.id, Slot::Bound(t.clone()));
                        self.set(y.id, Slot::Bound(t));
                    }
                }
                Ok(())
            }
            (Type::Var(x), t) | (t, Type::Var(x)) => self.bind(x, &t),
            (Type::Int, Type::Int)
            | (Type::Bool, Type::Bool)
            | (Type::Float, Type::Float)
            | (Type::Char, Type::Char) => Ok(()),
            (Type::Seq(p), Type::Seq(q)) => self.unify_parts(own(p), own(q)),
            (Type::Pair(a1, b1), Type::Pair(a2, b2)) | (Type::Fun(a1, b1), Type::Fun(a2, b2)) => {
                self.unify_parts(own(a1), own(a2))?;
                self.unify_parts(own(b1), own(b2))
            }
            (Type::Data(n1, a1), Type::Data(n2, a2)) if n1 == n2 && a1.len() == a2.len() => {
                for (p, q) in a1.into_iter().zip(a2) {
                    self.unify_parts(p, q)?;
                }
                Ok(())
            }
            (a, b) => Err(UnifyError::Mismatch(self.zonk(&a), self.zonk(&b))),
        }
    }

    /// Unifies two parts of structures being unified (each resolved at its top first).
    fn unify_parts(&mut self, a: Type, b: Type) -> Result<(), UnifyError> {
        let a = self.shallow_owned(a);
        let b = self.shallow_owned(b);
        self.unify_owned(a, b)
    }

    /// [`Self::shallow`] of an owned type: a structure is returned as it is.
    fn shallow_owned(&self, t: Type) -> Type {
        match t {
            Type::Var(_) => self.shallow(&t),
            other => other,
        }
    }

    fn bind(&mut self, v: TyVar, t: &Type) -> Result<(), UnifyError> {
        if self.occurs(v.id, t) {
            return Err(UnifyError::Occurs(v, self.zonk(t)));
        }
        if !is_member(v.class, t) {
            return Err(UnifyError::Class(v.class, self.zonk(t)));
        }
        self.set(v.id, Slot::Bound(t.clone()));
        Ok(())
    }

    /// A copy of the scheme's type with its generalised variables replaced by fresh
    /// variables of the same classes.
    pub fn instantiate(&mut self, s: &Scheme) -> Type {
        let map: HashMap<u32, Type> = s.vars.iter().map(|v| (v.id, self.fresh(v.class))).collect();
        substitute(&s.ty, &map)
    }
}

/// Replaces the variables of `t` found in `map`.
pub fn substitute(t: &Type, map: &HashMap<u32, Type>) -> Type {
    match t {
        Type::Var(v) => map.get(&v.id).cloned().unwrap_or(Type::Var(*v)),
        Type::Seq(e) => Type::seq(substitute(e, map)),
        Type::Pair(a, b) => Type::pair(substitute(a, map), substitute(b, map)),
        Type::Fun(a, b) => Type::fun(substitute(a, map), substitute(b, map)),
        Type::Data(n, args) => {
            Type::Data(n.clone(), args.iter().map(|a| substitute(a, map)).collect())
        }
        other => other.clone(),
    }
}

/// The variables of `t` in order of first appearance (left to right), without repeats.
pub fn free_vars(t: &Type) -> Vec<TyVar> {
    fn go(t: &Type, seen: &mut HashSet<u32>, out: &mut Vec<TyVar>) {
        match t {
            Type::Var(v) => {
                if seen.insert(v.id) {
                    out.push(*v);
                }
            }
            Type::Seq(e) => go(e, seen, out),
            Type::Pair(a, b) | Type::Fun(a, b) => {
                go(a, seen, out);
                go(b, seen, out);
            }
            Type::Data(_, args) => args.iter().for_each(|a| go(a, seen, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    go(t, &mut HashSet::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use TypeClass::*;

    fn var(u: &mut Unifier, c: TypeClass) -> Type {
        u.fresh(c)
    }

    #[test]
    fn class_meets() {
        assert_eq!(meet(Any, Number), Meet::Class(Number));
        assert_eq!(meet(Ordinal, Number), Meet::Class(Number));
        assert_eq!(meet(Number, Ordinal), Meet::Class(Number));
        assert_eq!(meet(Ordinal, Logical), Meet::Single(Type::Int));
        assert_eq!(meet(Logical, Number), Meet::Single(Type::Int));
        assert_eq!(meet(Logical, Logical), Meet::Class(Logical));
        assert_eq!(meet(Logical, Any), Meet::Class(Logical));
    }

    #[test]
    fn membership() {
        assert!(is_member(Number, &Type::Float));
        assert!(!is_member(Number, &Type::Char));
        assert!(is_member(Ordinal, &Type::Char));
        assert!(!is_member(Ordinal, &Type::Bool));
        assert!(is_member(Logical, &Type::Bool));
        assert!(!is_member(Logical, &Type::Float));
        assert!(!is_member(Number, &Type::seq(Type::Int)));
        assert!(is_member(Any, &Type::seq(Type::Int)));
    }

    #[test]
    fn unify_structural() {
        let mut u = Unifier::new(0);
        let a = var(&mut u, Any);
        let b = var(&mut u, Any);
        u.unify(
            &Type::pair(a.clone(), Type::seq(b.clone())),
            &Type::pair(Type::Int, Type::seq(Type::Char)),
        )
        .unwrap();
        assert_eq!(u.zonk(&a), Type::Int);
        assert_eq!(u.zonk(&b), Type::Char);
        assert!(matches!(
            u.unify(&a, &Type::Float),
            Err(UnifyError::Mismatch(Type::Int, Type::Float))
        ));
    }

    #[test]
    fn narrowing_keeps_the_intersection() {
        let mut u = Unifier::new(10);
        let o = var(&mut u, Ordinal);
        let n = var(&mut u, Number);
        u.unify(&o, &n).unwrap();
        match u.zonk(&o) {
            Type::Var(v) => assert_eq!(v.class, Number),
            t => panic!("expected a variable, got {t:?}"),
        }
        assert!(matches!(
            u.unify(&o, &Type::Char),
            Err(UnifyError::Class(Number, Type::Char))
        ));
        u.unify(&n, &Type::Float).unwrap();
        assert_eq!(u.zonk(&o), Type::Float);
    }

    #[test]
    fn ordinal_and_logical_is_int() {
        let mut u = Unifier::new(0);
        let o = var(&mut u, Ordinal);
        let l = var(&mut u, Logical);
        u.unify(&l, &o).unwrap();
        assert_eq!(u.zonk(&o), Type::Int);
        assert_eq!(u.zonk(&l), Type::Int);
    }

    #[test]
    fn class_rejects_structures() {
        let mut u = Unifier::new(0);
        let n = var(&mut u, Number);
        assert!(matches!(
            u.unify(&n, &Type::seq(Type::Int)),
            Err(UnifyError::Class(Number, _))
        ));
        let l = var(&mut u, Logical);
        assert!(matches!(u.unify(&Type::Bool, &l), Ok(())));
        assert_eq!(u.zonk(&l), Type::Bool);
    }

    #[test]
    fn occurs_check() {
        let mut u = Unifier::new(0);
        let a = var(&mut u, Any);
        assert!(matches!(
            u.unify(&a, &Type::seq(a.clone())),
            Err(UnifyError::Occurs(..))
        ));
    }

    #[test]
    fn instantiate_renames_scheme_vars() {
        let v = TyVar {
            id: 0,
            class: Number,
        };
        let s = Scheme {
            vars: vec![v],
            ty: Type::fun(Type::pair(Type::Var(v), Type::Var(v)), Type::Var(v)),
        };
        let mut u = Unifier::new(100);
        let t = u.instantiate(&s);
        let fv = free_vars(&t);
        assert_eq!(fv.len(), 1);
        assert_eq!(fv[0].id, 100);
        assert_eq!(fv[0].class, Number);
    }
}
