//! Rendering of front-end [`Diagnostic`]s for people: `error[Kind]: message`, the place as
//! `file:line:col`, and a source snippet with the span underlined (codespan-reporting,
//! never coloured, ASCII only) with [`render`]; one line per diagnostic with
//! [`plain_render`].
//!
//! Every rendered diagnostic starts with the word `error` and ends with a blank line, with
//! no blank line inside it: the conformance comparison treats such a paragraph as one
//! error mark (see `shared/conformance/README.md`).
//!
//! A snippet shows at most [`WINDOW`] characters of a source line: on a longer line, a
//! window around the column of the error, cut ends marked `...` (a 132 KB one-line
//! program gives a few lines of message, not the whole line).

use codespan_reporting::diagnostic::{Diagnostic as Report, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor::NoColor, Chars, Config};
use nesl_front::diag::LineIndex;
use nesl_front::{Diagnostic, Span};
use std::ops::Range;

/// Renders `diags` about the source text `src` of `file` as text, one paragraph per
/// diagnostic, in order.
///
/// At most [`MAX_SHOWN`] diagnostics are rendered; the last one shown then says how many
/// more there were (100,000 cascading errors in one long line, each rendered from the
/// whole line, took minutes and gave megabytes of output).
pub fn render(file: &str, src: &str, diags: &[Diagnostic]) -> String {
    let files = SimpleFile::new(file, src);
    let config = Config { chars: Chars::ascii(), ..Config::default() };
    let mut out = String::new();
    let shown = diags.len().min(MAX_SHOWN);
    for (i, d) in diags[..shown].iter().enumerate() {
        let mut buf = NoColor::new(Vec::new());
        let more = diags.len() - shown;
        let capped;
        let d = if i + 1 == shown && more > 0 {
            let mut c = d.clone();
            let s = if more == 1 { "" } else { "s" };
            c.notes.push((None, format!("{more} more error{s} in this form not shown")));
            capped = c;
            &capped
        } else {
            d
        };
        let report = to_report(src, d);
        let text = match term::emit(&mut buf, &config, &files, &report) {
            Ok(()) => window(&String::from_utf8_lossy(&buf.into_inner()), column(src, d.span)),
            Err(_) => fallback(file, src, d),
        };
        out.push_str(&paragraph(&text));
    }
    out
}

/// Most diagnostics [`render`] shows for one form.
pub const MAX_SHOWN: usize = 50;

/// Most characters of a source line a snippet shows.
pub const WINDOW: usize = 120;
/// Characters shown before the error's column when a line is cut.
const BEFORE: usize = 40;

/// The 0-based character column of the start of `span` in its line.
fn column(src: &str, span: Span) -> usize {
    let at = clamp(src, span).start;
    let line_start = src[..at].rfind('\n').map_or(0, |k| k + 1);
    src[line_start..at].chars().count()
}

/// `text` (a rendered report) with every snippet line (`NN | source`, `   |   ^^^`)
/// cut to the [`WINDOW`] characters around character column `col`, when some snippet
/// line is longer than that. A cut source line shows `...` where text was left out; a
/// caret line keeps its alignment.
fn window(text: &str, col: usize) -> String {
    // The gutter: spaces and digits, then `|`; the snippet text starts after `| `.
    let split = |line: &str| -> Option<usize> {
        let bar = line.find('|')?;
        let gutter = &line[..bar];
        (!gutter.is_empty() && gutter.bytes().all(|b| b == b' ' || b.is_ascii_digit())).then_some(bar + 1)
    };
    let long = text.lines().any(|l| split(l).is_some_and(|k| l[k..].chars().count() > WINDOW + 1));
    if !long {
        return text.to_string();
    }
    let lo = col.saturating_sub(BEFORE);
    let mut out = String::with_capacity(WINDOW * 8);
    for line in text.lines() {
        match split(line) {
            Some(k) => {
                out.push_str(&line[..k]);
                // The snippet text, after the space that follows the bar (kept).
                let body = &line[k..];
                let n = body.chars().count();
                if n <= lo + 1 {
                    out.push_str(body.trim_end());
                } else {
                    let left: String = body.chars().take(lo + 1).collect();
                    let shown: String = body.chars().skip(lo + 1).take(WINDOW).collect();
                    if lo > 0 {
                        // Source text was cut on the left; a caret line only loses spaces.
                        out.push_str(if left.trim().is_empty() { "    " } else { " ..." });
                    } else {
                        out.push_str(&left);
                    }
                    out.push_str(shown.trim_end());
                    if n > lo + 1 + WINDOW && !shown.trim().is_empty() {
                        out.push_str("...");
                    }
                }
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The codespan report for one diagnostic.
fn to_report(src: &str, d: &Diagnostic) -> Report<()> {
    let mut labels = vec![Label::primary((), clamp(src, d.span))];
    let mut notes = Vec::new();
    for (span, note) in &d.notes {
        match span {
            Some(s) => labels.push(Label::secondary((), clamp(src, *s)).with_message(note)),
            None if note.starts_with("note:") || note.starts_with("help:") => notes.push(note.clone()),
            None => notes.push(format!("note: {note}")),
        }
    }
    Report::error()
        .with_code(format!("{:?}", d.kind))
        .with_message(&d.message)
        .with_labels(labels)
        .with_notes(notes)
}

/// A span as a byte range that is inside `src` and on character boundaries.
fn clamp(src: &str, span: Span) -> Range<usize> {
    let fix = |mut i: usize| {
        i = i.min(src.len());
        while !src.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let start = fix(span.start as usize);
    let end = fix(span.end as usize).max(start);
    start..end
}

/// The plain rendering used if codespan cannot render a diagnostic.
fn fallback(file: &str, src: &str, d: &Diagnostic) -> String {
    let (line, col) = LineIndex::new(src).line_col(clamp(src, d.span).start);
    let mut text = format!("error[{:?}]: {}\n --> {file}:{line}:{col}\n", d.kind, d.message);
    for (_, note) in &d.notes {
        text.push_str(&format!("  = note: {note}\n"));
    }
    text
}

/// One error paragraph: no blank line inside, exactly one blank line at the end.
fn paragraph(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The plain renderer: `error: FILE:LINE:COL: KIND: MESSAGE`, one `note:` line per note,
/// and a blank line after each diagnostic (the regression corpus's transcripts).
pub fn plain_render(file: &str, src: &str, diags: &[Diagnostic]) -> String {
    let index = LineIndex::new(src);
    let mut out = String::new();
    for d in diags {
        let (line, col) = index.line_col(d.span.start as usize);
        out.push_str(&format!("error: {file}:{line}:{col}: {}: {}\n", d.kind.describe(), d.message));
        for (span, note) in &d.notes {
            match span {
                Some(s) => {
                    let (l, c) = index.line_col(s.start as usize);
                    out.push_str(&format!("  note: {file}:{l}:{c}: {note}\n"));
                }
                None => out.push_str(&format!("  note: {note}\n")),
            }
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use nesl_front::DiagKind;

    /// 100,000 cascading errors on one line: the first [`MAX_SHOWN`] are shown, the last
    /// of them saying how many more there were.
    #[test]
    fn many_errors_are_capped() {
        let n = 100_000;
        let src = format!("{}[1];\n", "#".repeat(n));
        let diags: Vec<Diagnostic> = (0..n).map(|i| Diagnostic::new(DiagKind::Type, Span::new(i, i + 1), "bad")).collect();
        let text = render("many.nesl", &src, &diags);
        assert_eq!(text.matches("error[Type]: bad").count(), MAX_SHOWN, "{text}");
        assert!(text.contains(&format!("= note: {} more errors in this form not shown", n - MAX_SHOWN)), "{text}");
        assert!(text.len() < 50_000, "{} bytes", text.len());
    }

    #[test]
    fn renders_location_snippet_and_paragraphs() {
        let src = "x = 5;\nif x > 2 then 1;\n";
        let d1 = Diagnostic::new(DiagKind::Syntax, Span::new(22, 23), "unexpected `;`");
        let d2 = Diagnostic::new(DiagKind::Lex, Span::new(0, 1), "bad").with_note(None, "a note");
        let text = render("prog.nesl", src, &[d1, d2]);
        let paras: Vec<&str> = text.split("\n\n").filter(|p| !p.is_empty()).collect();
        assert_eq!(paras.len(), 2, "{text}");
        assert!(paras[0].starts_with("error[Syntax]: unexpected `;`"), "{text}");
        assert!(paras[0].contains("prog.nesl:2:16"), "{text}");
        assert!(paras[0].contains("if x > 2 then 1;"), "{text}");
        assert!(paras[1].starts_with("error[Lex]: bad"), "{text}");
        assert!(paras[1].contains("a note"), "{text}");
        assert!(text.ends_with("\n\n"));
    }

    /// An error in the middle of a 132 KB line: a window of the line around the
    /// column, the caret under the offending token, a few hundred bytes in all.
    #[test]
    fn long_lines_show_a_window() {
        let mut src = String::from("x = 1");
        while src.len() < 66_000 {
            src.push_str(" + 1");
        }
        let at = src.len() + 3;
        src.push_str(" + @@ + 1");
        while src.len() < 132_000 {
            src.push_str(" + 1");
        }
        src.push_str(";\n");
        let d = Diagnostic::new(DiagKind::Lex, Span::new(at, at + 2), "unexpected `@@`");
        let text = render("long.nesl", &src, &[d]);
        assert!(text.len() < 1000, "{} bytes: {}", text.len(), &text[..text.len().min(2000)]);
        assert!(text.contains(&format!("long.nesl:1:{}", at + 1)), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let code = lines.iter().find(|l| l.starts_with("1 |")).expect("the source line");
        let carets = lines.iter().find(|l| l.contains('^')).expect("the caret line");
        assert_eq!(code.find("@@"), carets.find('^'), "{text}");
        assert!(code.contains(" ...") && code.ends_with("..."), "{text}");
        assert!(code.len() < WINDOW + 20, "{text}");
        // Short lines are untouched.
        let short = render("s.nesl", "x = @;\n", &[Diagnostic::new(DiagKind::Lex, Span::new(4, 5), "bad")]);
        assert!(short.contains("1 | x = @;"), "{short}");
    }

    #[test]
    fn out_of_range_spans_do_not_panic() {
        let src = "é";
        let d = Diagnostic::new(DiagKind::Lex, Span::new(1, 99), "x");
        let text = render("f.nesl", src, &[d]);
        assert!(text.starts_with("error[Lex]: x"));
    }
}
