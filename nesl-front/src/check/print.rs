//! Printing types the way the NESL top level does (spec section 6.2).
//!
//! Pairs print as `t1, t2` at the top of a type and as `(t1, t2)` inside brackets,
//! datatype arguments and function arguments and results; a function type prints as
//! `(int, int) -> int`; type variables are renamed `a`, `b`, `c`, ... and their classes
//! are listed in a trailing context ` :: (a in number; b in any)`.
//!
//! The letters follow CMU NESL: a type printed on its own ([`TypePrinter::with_context`])
//! letters its variables in the order of their *last* occurrence when the type is read
//! with a function's result before its argument (`history = fn : ([(b, a)], b) -> [a]`:
//! read as `[a]`, then `[(b, a)]`, `b`); CMU collects a type's variables as the ordered
//! union of its parts' variables, where a variable of both parts keeps its place in the
//! later part. Several types printed with one shared renaming (error messages) are
//! lettered in order of first appearance.

use crate::ty::{Scheme, TyVar, Type, TypeClass};
use std::collections::HashMap;

/// Prints several types with one shared renaming of their variables, so that the same
/// variable gets the same letter in all of them (used for error messages).
#[derive(Default)]
pub struct TypePrinter {
    names: Vec<(u32, TypeClass)>,
    /// Where each named variable is in `names` (a type of 20,000 variables must not
    /// look each up by a scan).
    index: HashMap<u32, usize>,
    overrides: HashMap<u32, TypeClass>,
}

impl TypePrinter {
    /// A printer with no variables named yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn name(&mut self, v: TyVar) -> String {
        let class = self.overrides.get(&v.id).copied().unwrap_or(v.class);
        let i = match self.index.get(&v.id) {
            Some(&i) => i,
            None => {
                self.names.push((v.id, class));
                self.index.insert(v.id, self.names.len() - 1);
                self.names.len() - 1
            }
        };
        letter_name(i)
    }

    /// `t` as it appears at the top of a result (`int, float`).
    pub fn top(&mut self, t: &Type) -> String {
        match t {
            Type::Pair(..) => self.spine(t),
            Type::Fun(a, r) => self.fun(a, r),
            _ => self.inner(t),
        }
    }

    fn fun(&mut self, a: &Type, r: &Type) -> String {
        let a = self.inner(a);
        let r = self.inner(r);
        format!("{a} -> {r}")
    }

    /// The components of a tuple, separated by commas. A function-typed component is
    /// written without parentheses (`((a, a) -> a, a, [a])`), as NESL writes the type
    /// of `scan`: `->` binds tighter than `,`.
    fn spine(&mut self, mut t: &Type) -> String {
        // A loop, not a recursion that copies the rest at each component: a tuple of
        // n components prints in O(n).
        let mut out = String::new();
        while let Type::Pair(a, b) = t {
            out.push_str(&self.component(a));
            out.push_str(", ");
            t = b;
        }
        out.push_str(&self.component(t));
        out
    }

    fn component(&mut self, t: &Type) -> String {
        match t {
            Type::Fun(a, r) => self.fun(a, r),
            _ => self.inner(t),
        }
    }

    /// `t` as it appears inside brackets or arguments (`(int, float)`).
    pub fn inner(&mut self, t: &Type) -> String {
        match t {
            Type::Int => "int".into(),
            Type::Bool => "bool".into(),
            Type::Float => "float".into(),
            Type::Char => "char".into(),
            Type::Seq(e) => format!("[{}]", self.inner(e)),
            Type::Pair(..) => format!("({})", self.spine(t)),
            Type::Fun(a, r) => format!("({})", self.fun(a, r)),
            Type::Data(n, args) if args.is_empty() => n.clone(),
            Type::Data(n, args) => {
                let args: Vec<String> = args.iter().map(|a| self.inner(a)).collect();
                format!("{n}({})", args.join(", "))
            }
            Type::Var(v) => self.name(*v),
        }
    }

    /// The context of every variable named so far: ` :: (a in number; b in any)`, or
    /// the empty string when no variable was printed.
    pub fn context(&self) -> String {
        if self.names.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = self
            .names
            .iter()
            .enumerate()
            .map(|(i, (_, c))| format!("{} in {}", letter_name(i), c.name()))
            .collect();
        format!(" :: ({})", parts.join("; "))
    }

    /// `t` at the top, followed by the context of its variables (lettered as CMU
    /// letters them: see the module documentation).
    pub fn with_context(&mut self, t: &Type) -> String {
        let mut order = Vec::new();
        last_occurrences(t, &mut order);
        for v in order {
            self.name(v);
        }
        let s = self.top(t);
        format!("{s}{}", self.context())
    }
}

/// The variables of `t`, each once, in the order of their last occurrence when `t` is
/// read left to right with a function's result before its argument.
fn last_occurrences(t: &Type, out: &mut Vec<TyVar>) {
    fn all(t: &Type, out: &mut Vec<TyVar>) {
        match t {
            Type::Int | Type::Bool | Type::Float | Type::Char => {}
            Type::Seq(e) => all(e, out),
            Type::Pair(a, b) => {
                all(a, out);
                all(b, out);
            }
            Type::Fun(a, r) => {
                all(r, out);
                all(a, out);
            }
            Type::Data(_, args) => args.iter().for_each(|a| all(a, out)),
            Type::Var(v) => out.push(*v),
        }
    }
    let mut occurrences = Vec::new();
    all(t, &mut occurrences);
    let mut last: HashMap<u32, usize> = HashMap::new();
    for (i, v) in occurrences.iter().enumerate() {
        last.insert(v.id, i);
    }
    out.retain(|w| !last.contains_key(&w.id));
    out.extend(
        occurrences
            .iter()
            .enumerate()
            .filter(|(i, v)| last.get(&v.id) == Some(i))
            .map(|(_, v)| *v),
    );
}

/// `a`, `b`, ..., `z`, `a1`, `b1`, ...
fn letter_name(i: usize) -> String {
    let letter = (b'a' + (i % 26) as u8) as char;
    if i < 26 {
        letter.to_string()
    } else {
        format!("{letter}{}", i / 26)
    }
}

/// A type as printed after `it = value :` (with a context when it has variables).
pub fn format_type(t: &Type) -> String {
    TypePrinter::new().with_context(t)
}

/// A scheme as printed after `name = fn :`, e.g. `(a, a) -> a :: (a in number)`. The
/// classes recorded in the scheme's variable list take precedence over those stored in
/// the type's variables.
pub fn format_scheme(s: &Scheme) -> String {
    let mut p = TypePrinter::new();
    p.overrides = s.vars.iter().map(|v| (v.id, v.class)).collect();
    p.with_context(&s.ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(id: u32, class: TypeClass) -> Type {
        Type::Var(TyVar { id, class })
    }

    #[test]
    fn ground_types() {
        assert_eq!(format_type(&Type::seq(Type::Int)), "[int]");
        assert_eq!(
            format_type(&Type::pair(Type::Int, Type::Float)),
            "int, float"
        );
        assert_eq!(
            format_type(&Type::seq(Type::pair(Type::Int, Type::Bool))),
            "[(int, bool)]"
        );
        assert_eq!(
            format_type(&Type::pair(Type::pair(Type::Int, Type::Int), Type::Int)),
            "(int, int), int"
        );
        assert_eq!(
            format_type(&Type::pair(Type::Int, Type::pair(Type::Int, Type::Int))),
            "int, int, int"
        );
        assert_eq!(
            format_type(&Type::Data("box".into(), vec![Type::seq(Type::Char)])),
            "box([char])"
        );
        assert_eq!(
            format_type(&Type::Data("complex".into(), vec![])),
            "complex"
        );
    }

    #[test]
    fn function_types() {
        let a = v(7, TypeClass::Number);
        let t = Type::fun(Type::pair(a.clone(), a.clone()), a.clone());
        assert_eq!(format_type(&t), "(a, a) -> a :: (a in number)");
        let t = Type::fun(a.clone(), Type::pair(a.clone(), a.clone()));
        assert_eq!(format_type(&t), "a -> (a, a) :: (a in number)");
        let b = v(3, TypeClass::Any);
        let t = Type::fun(
            Type::pair(
                Type::pair(b.clone(), a.clone()),
                Type::pair(b.clone(), a.clone()),
            ),
            Type::pair(b.clone(), a.clone()),
        );
        assert_eq!(
            format_type(&t),
            "((a, b), a, b) -> (a, b) :: (a in any; b in number)"
        );
    }

    #[test]
    fn letters_as_cmu() {
        // CMU: history = fn : ([(b, a)], b) -> [a] :: (a in number; b in ordinal)
        let n = v(1, TypeClass::Number);
        let o = v(2, TypeClass::Ordinal);
        let t = Type::fun(
            Type::pair(Type::seq(Type::pair(o.clone(), n.clone())), o.clone()),
            Type::seq(n.clone()),
        );
        assert_eq!(
            format_type(&t),
            "([(b, a)], b) -> [a] :: (a in number; b in ordinal)"
        );
        // swap and rot3 keep the argument order.
        let (a, b, c) = (v(5, TypeClass::Any), v(6, TypeClass::Any), v(7, TypeClass::Any));
        let t = Type::fun(Type::pair(a.clone(), b.clone()), Type::pair(b.clone(), a.clone()));
        assert_eq!(format_type(&t), "(a, b) -> (b, a) :: (a in any; b in any)");
        let t = Type::fun(
            Type::pair(a.clone(), Type::pair(b.clone(), c.clone())),
            Type::pair(b.clone(), Type::pair(c.clone(), a.clone())),
        );
        assert_eq!(format_type(&t), "(a, b, c) -> (b, c, a) :: (a in any; b in any; c in any)");
    }

    #[test]
    fn scheme_classes_win() {
        let stale = TyVar {
            id: 1,
            class: TypeClass::Any,
        };
        let s = Scheme {
            vars: vec![TyVar {
                id: 1,
                class: TypeClass::Ordinal,
            }],
            ty: Type::fun(Type::seq(Type::Var(stale)), Type::Var(stale)),
        };
        assert_eq!(format_scheme(&s), "[a] -> a :: (a in ordinal)");
    }
}
