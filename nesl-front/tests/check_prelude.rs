//! The NESL-written part of the standard library (`flatten::prelude`) must fit the types
//! the built-in table gives the same names: every call checked against the table must be
//! a valid use of the prelude definition, i.e. the table's type must be an instance of the
//! prelude's (usually the very same type).

use nesl_front::check::unify::Unifier;
use nesl_front::check::{builtin_scheme, format_scheme};
use nesl_front::flatten::prelude::prelude;
use nesl_front::ty::{Scheme, Type};

/// Whether `specific` is an instance of `general`.
fn is_instance(general: &Scheme, specific: &Scheme) -> bool {
    let mut u = Unifier::new(0);
    let g = u.instantiate(general);
    let vars: Vec<Type> = specific.vars.iter().map(|v| u.fresh(v.class)).collect();
    let map = specific
        .vars
        .iter()
        .map(|v| v.id)
        .zip(vars.iter().cloned())
        .collect();
    let s = nesl_front::check::unify::substitute(&specific.ty, &map);
    if u.unify(&g, &s).is_err() {
        return false;
    }
    // The specific type's variables must stay distinct variables of their classes.
    let mut seen = Vec::new();
    specific
        .vars
        .iter()
        .zip(&vars)
        .all(|(v, t)| match u.zonk(t) {
            Type::Var(w) if w.class == v.class && !seen.contains(&w.id) => {
                seen.push(w.id);
                true
            }
            _ => false,
        })
}

#[test]
fn prelude_functions_fit_the_table_types() {
    let session = match prelude() {
        Ok(s) => s,
        Err(d) => panic!("prelude does not check: {d:?}"),
    };
    let mut mismatches = Vec::new();
    for (name, info) in &session.functions {
        let Some(table) = builtin_scheme(name) else {
            continue;
        };
        if !is_instance(&info.scheme, &table) {
            mismatches.push(format!(
                "{name}: prelude {}, table {}",
                format_scheme(&info.scheme),
                format_scheme(&table)
            ));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn instance_relation() {
    let s = |t: &str| nesl_front::check::builtins::parse_type_string(t, 0, &[]).unwrap();
    assert!(is_instance(
        &s("[(a, b)] -> [(a, [b])] :: (a in number)"),
        &s("[(int, a)] -> [(int, [a])]")
    ));
    assert!(is_instance(&s("a -> a"), &s("a -> a :: (a in number)")));
    assert!(!is_instance(&s("a -> a :: (a in number)"), &s("a -> a")));
    assert!(!is_instance(&s("int -> int"), &s("a -> a")));
    assert!(!is_instance(&s("(a, b) -> a"), &s("(a, a) -> b")));
}
