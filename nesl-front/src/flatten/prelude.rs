//! The part of the standard library written in NESL.
//!
//! These functions are natural as NESL code (recursion, selection, set operations); they
//! are parsed and checked once, in a session of their own with `prelude_mode` on, and a
//! call of one of these builtins compiles the prelude definition like a user function.
//! Everything else in the library is generated directly as VCODE ([`super::prims`]).

use crate::check::Session;
use crate::diag::Diagnostic;
use std::sync::OnceLock;

/// The NESL source of the prelude.
pub const PRELUDE_SRC: &str = concat!(
    include_str!("../prelude.nesl"),
    "\n",
    include_str!("../prelude_strings.nesl"),
    "\n",
    include_str!("../prelude_window.nesl")
);

static PRELUDE: OnceLock<Result<Session, Vec<Diagnostic>>> = OnceLock::new();

/// The name of the standard library's source in origins and messages.
pub const PRELUDE_NAME: &str = "<prelude>";

/// The checked prelude (built on first use, then cached).
pub fn prelude() -> Result<&'static Session, &'static Vec<Diagnostic>> {
    PRELUDE
        .get_or_init(|| {
            let mut s = Session::new();
            s.prelude_mode = true;
            s.set_source(PRELUDE_NAME, PRELUDE_SRC);
            let (items, diags) = crate::parser::parse_program(PRELUDE_SRC);
            if !diags.is_empty() {
                return Err(diags);
            }
            for mut item in items {
                s.check_item(&mut item)?;
            }
            Ok(s)
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    #[test]
    fn prelude_checks() {
        if let Err(d) = super::prelude() {
            panic!("prelude does not check: {d:?}");
        }
    }

    /// Each library function written in NESL has the type its row of the built-in
    /// table says (the graphics library's rows are CMU's types).
    #[test]
    fn prelude_types_match_the_table() {
        use crate::check::print::format_scheme;
        let p = super::prelude().expect("prelude checks");
        let mut bad = Vec::new();
        // Rows whose type is narrower than the code's, on purpose (CMU's types).
        const NARROWED: &[&str] = &["int_collect", "int_collect_pairs", "group_by_space"];
        for name in crate::check::builtins::BUILTINS.iter().map(|b| &b.name) {
            if NARROWED.contains(name) {
                continue;
            }
            let Some(f) = p.functions.get(*name) else { continue };
            let Some(want) = crate::check::builtins::builtin_scheme(name) else { continue };
            let (got, want) = (format_scheme(&f.scheme), format_scheme(&want));
            if got != want {
                bad.push(format!("{name}: prelude {got}, table {want}"));
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}
