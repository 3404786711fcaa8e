//! Which top-level variables a file still needs. `nesl run` (and the regression runner)
//! drops a variable's value after the last form of the file that names it, so that its
//! vectors are freed for the forms after: a program that draws its input into one
//! sequence and then takes the parts it works on (`rs = {rand(r) : ...}; xs = take(rs,
//! n); ...`) no longer holds the whole draw while it works, and the forms after reuse its
//! memory instead of page-faulting fresh memory in.
//!
//! A name is needed after form `i` while a later form names it, or any function of the
//! file does (a function may reach a top-level variable and be called by any later
//! form). Names are the identifier tokens of each form's text, so the answer errs only
//! towards keeping a value. A file that loads other files, or that does not parse, drops
//! nothing; neither does an interactive top level, whose next input is unknown.

use nesl_front::ast::{CommandKind, TopLevel as Item};
use nesl_front::lexer::{lex, Token};
use nesl_front::Diagnostic;
use std::collections::HashMap;

/// The last form of a file that names each identifier.
pub(super) struct Liveness {
    /// Form index of the last mention; `usize::MAX` for a name a function mentions.
    last: HashMap<String, usize>,
}

impl Liveness {
    /// The liveness of the names of `src`'s forms `items` (as `parse_items` gives them);
    /// `None` when a form does not parse or loads a file.
    pub(super) fn of(src: &str, items: &[Result<Item, Vec<Diagnostic>>]) -> Option<Liveness> {
        let mut spans = Vec::with_capacity(items.len());
        for item in items {
            let item = item.as_ref().ok()?;
            if let Item::Command(c) = item {
                if matches!(c.kind, CommandKind::Load(_) | CommandKind::LoadExpr(_)) {
                    return None;
                }
            }
            let s = item.span();
            spans.push((s.start as usize, s.end as usize, matches!(item, Item::Function(_))));
        }
        let mut last = HashMap::new();
        // Forms and tokens are both in text order: walk them together.
        let mut form = 0;
        for (start, token, _) in lex(src).tokens {
            while spans.get(form).is_some_and(|&(_, end, _)| end <= start) {
                form += 1;
            }
            let Some(&(s, _, in_function)) = spans.get(form) else { break };
            if let (Token::Ident(name), true) = (token, start >= s) {
                let at = if in_function { usize::MAX } else { form };
                let e = last.entry(name).or_insert(at);
                *e = (*e).max(at);
            }
        }
        Some(Liveness { last })
    }

    /// Whether no form after form `i` (and no function) names `name`.
    pub(super) fn dead_after(&self, name: &str, i: usize) -> bool {
        self.last.get(name).is_none_or(|&l| l <= i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nesl_front::parser::parse_items;

    fn liveness(src: &str) -> Option<Liveness> {
        Liveness::of(src, &parse_items(src))
    }

    #[test]
    fn a_variable_is_needed_until_the_last_form_that_names_it() {
        let src = "rs = {rand(r) : r in dist(1.0, 8)};\nxs = take(rs, 4);\n% rs in a comment %\nys = drop(RS, 4);\nsum(xs) + sum(ys);\nit * 2;\n";
        let l = liveness(src).expect("parses, loads nothing");
        // `RS` is `rs` (identifiers fold to lower case); the comment does not count.
        assert!(!l.dead_after("rs", 1) && l.dead_after("rs", 2));
        assert!(!l.dead_after("xs", 2) && l.dead_after("xs", 3));
        assert!(!l.dead_after("it", 3) && l.dead_after("it", 4));
        assert!(l.dead_after("unnamed", 0));
    }

    #[test]
    fn a_name_a_function_mentions_is_always_needed() {
        let src = "n = 10;\nfunction g(x) = x + n;\nm = 3;\ng(m);\n";
        let l = liveness(src).expect("parses");
        assert!(!l.dead_after("n", 3));
        assert!(!l.dead_after("m", 2) && l.dead_after("m", 3));
    }

    #[test]
    fn files_that_load_files_or_do_not_parse_drop_nothing() {
        assert!(liveness("a = 1;\nload \"other.nesl\";\na + 1;\n").is_none());
        assert!(liveness("a = 1;\nb = ;\na;\n").is_none());
        assert!(liveness("").is_some());
    }
}
