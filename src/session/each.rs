//! Apply-to-each levels of a run-time place: which apply-to-each expressions of the
//! source evaluate the expression at a place once per element, so that a run-time error's
//! call stack can say where a function was applied to each element of a sequence.

use nesl_front::ast::{Expr, ExprKind, Span, TopLevel};
use nesl_front::parser::parse_items;

fn holds(span: Span, offset: usize) -> bool {
    (span.start as usize..span.end as usize).contains(&offset)
}

/// Pushes the start of every apply-to-each in `e` whose body or filter holds `offset`,
/// innermost first. (An apply-to-each's sequences are evaluated once, not per element.)
fn walk(e: &Expr, offset: usize, out: &mut Vec<usize>) {
    if !holds(e.span, offset) {
        return;
    }
    e.for_each_child(&mut |c| walk(c, offset, out));
    if let ExprKind::ApplyToEach { body, filter, .. } = &e.kind {
        if body.iter().chain(filter.iter()).any(|x| holds(x.span, offset)) {
            out.push(e.span.start as usize);
        }
    }
}

/// The byte offsets of the apply-to-each expressions of `text` that evaluate the
/// expression at byte `offset` once per element, innermost first.
pub fn enclosing(text: &str, offset: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for form in parse_items(text).into_iter().flatten() {
        let root = match &form {
            TopLevel::Function(def) => def.body.as_ref(),
            TopLevel::Binding { expr, .. } | TopLevel::Expr(expr) => Some(expr),
            _ => None,
        };
        if let Some(e) = root {
            walk(e, offset, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::enclosing;

    #[test]
    fn bodies_and_filters_are_per_element_sequences_are_not() {
        let src = "function h(m) = {{r[i] : i in r} : r in m | #r > g(m)};\n";
        let at = |s: &str| src.find(s).expect("in the source");
        // `r[i]` is inside both levels, innermost first.
        assert_eq!(enclosing(src, at("r[i]")), [at("{r[i]"), at("{{")]);
        // The inner sequence `r` is evaluated per element of the outer level only.
        assert_eq!(enclosing(src, at("r} :") ), [at("{{")]);
        // The filter runs per element; `m` as the outer sequence does not.
        assert_eq!(enclosing(src, at("g(m)")), [at("{{")]);
        assert_eq!(enclosing(src, at("m |")), Vec::<usize>::new());
        assert_eq!(enclosing(src, at("function")), Vec::<usize>::new());
    }
}
