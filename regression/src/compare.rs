//! The comparison rule of the shared conformance corpus (`conformance/README.md`,
//! implemented there as `compare.py`), in Rust.
//!
//! 1. Every error paragraph (a line whose first word is `Error` or `RUNTIME ERROR`, any
//!    case, optionally after a bracketed code such as `[E012]`, up to the next blank line)
//!    becomes one error mark; consecutive error paragraphs make a single mark.
//! 2. The rest is split into tokens: numbers, words (runs of ASCII letters and `_`) and
//!    single non-space characters; spaces and line breaks do not matter.
//! 3. The token sequences must be equal, except that two numbers match when they are
//!    equal within a relative tolerance of 1e-9 (absolute 1e-12).
//!
//! Digits are ASCII digits (`compare.py` also accepts other Unicode decimal digits, which
//! no transcript contains).

use std::fmt;

/// One token of a transcript.
#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    /// A number as written (`-3`, `1.5E10`, `.5`).
    Num(String),
    /// A run of ASCII letters and underscores.
    Word(String),
    /// One other non-space character.
    Punct(char),
    /// One or more consecutive error paragraphs.
    Error,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Num(s) | Token::Word(s) => f.write_str(s),
            Token::Punct(c) => write!(f, "{c}"),
            Token::Error => f.write_str("<error>"),
        }
    }
}

/// Splits `text` into lines as Python's `str.splitlines` does.
fn lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let is_break = matches!(
            c,
            '\n' | '\r' | '\u{0b}' | '\u{0c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}'
        );
        if is_break {
            out.push(&text[start..i]);
            let mut end = i + c.len_utf8();
            if c == '\r' {
                if let Some(&(j, '\n')) = chars.peek() {
                    chars.next();
                    end = j + 1;
                }
            }
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// True when `line` starts an error paragraph: optional spaces, an optional `[code]`,
/// then `error` or `runtime error` (any case) ending at a word boundary.
pub fn is_error_start(line: &str) -> bool {
    let mut rest = line.trim_start();
    if let Some(after) = rest.strip_prefix('[') {
        match after.find(']') {
            Some(close) => rest = after[close + 1..].trim_start(),
            None => return false,
        }
    }
    for word in ["runtime error", "error"] {
        if rest.len() >= word.len() && rest.is_char_boundary(word.len()) && rest[..word.len()].eq_ignore_ascii_case(word) {
            let next = rest[word.len()..].chars().next();
            // Python's `\b`: the next character must not be a word character.
            if !next.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                return true;
            }
        }
    }
    false
}

/// Length in bytes of the number at the start of `s` (`[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?`),
/// or 0 when none starts there.
fn number_len(s: &[u8]) -> usize {
    let digits = |from: usize| s[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut i = 0;
    if matches!(s.first(), Some(b'-' | b'+')) {
        i = 1;
    }
    let int = digits(i);
    if int > 0 {
        i += int;
        if s.get(i) == Some(&b'.') {
            i += 1 + digits(i + 1);
        }
    } else if s.get(i) == Some(&b'.') && digits(i + 1) > 0 {
        i += 1 + digits(i + 1);
    } else {
        return 0;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(s.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        let exp = digits(j);
        if exp > 0 {
            i = j + exp;
        }
    }
    i
}

/// Appends the tokens of one (non-error) line.
fn line_tokens(line: &str, out: &mut Vec<Token>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < line.len() {
        let n = number_len(&bytes[i..]);
        if n > 0 {
            out.push(Token::Num(line[i..i + n].to_string()));
            i += n;
            continue;
        }
        let w = bytes[i..].iter().take_while(|b| b.is_ascii_alphabetic() || **b == b'_').count();
        if w > 0 {
            out.push(Token::Word(line[i..i + w].to_string()));
            i += w;
            continue;
        }
        let c = line[i..].chars().next().unwrap_or(' ');
        if !c.is_whitespace() {
            out.push(Token::Punct(c));
        }
        i += c.len_utf8().max(1);
    }
}

/// The tokens of a transcript, error paragraphs replaced by [`Token::Error`] marks.
pub fn tokens(text: &str) -> Vec<Token> {
    let lines = lines(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if is_error_start(lines[i]) {
            while i < lines.len() && !lines[i].trim().is_empty() {
                i += 1;
            }
            if out.last() != Some(&Token::Error) {
                out.push(Token::Error);
            }
            continue;
        }
        line_tokens(lines[i], &mut out);
        i += 1;
    }
    out
}

/// Whether two tokens match: numbers within the tolerance, anything else exactly.
fn same(a: &Token, b: &Token) -> bool {
    match (a, b) {
        (Token::Num(x), Token::Num(y)) => match (x.parse::<f64>(), y.parse::<f64>()) {
            (Ok(x), Ok(y)) => x == y || (x - y).abs() <= f64::max(1e-12, 1e-9 * x.abs().max(y.abs())),
            _ => x == y,
        },
        _ => a == b,
    }
}

fn join(ts: &[Token]) -> String {
    ts.iter().map(Token::to_string).collect::<Vec<_>>().join(" ")
}

/// Compares an actual transcript with the expected one. `Err` says where they first
/// differ, with a few tokens of context on both sides.
pub fn compare(expected: &str, actual: &str) -> Result<(), String> {
    let e = tokens(expected);
    let a = tokens(actual);
    for k in 0..e.len().min(a.len()) {
        if !same(&e[k], &a[k]) {
            let from = k.saturating_sub(8);
            return Err(format!(
                "token {k}: expected `{}`, got `{}`\n  expected: ...{}...\n  actual:   ...{}...",
                e[k],
                a[k],
                join(&e[from..(k + 4).min(e.len())]),
                join(&a[from..(k + 4).min(a.len())]),
            ));
        }
    }
    if e.len() != a.len() {
        let (longer, name) = if e.len() > a.len() { (&e, "expected") } else { (&a, "actual") };
        let n = e.len().min(a.len());
        let rest = &longer[n..(n + 12).min(longer.len())];
        return Err(format!("the {name} transcript goes on after the other ends: {}", join(rest)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXPECTED: &str = "it = 1.5E10 : float\nError at top level.\nF is undefined.\n\nRUNTIME ERROR: x\n\nit = T : bool123\n";

    #[test]
    fn readme_examples() {
        let good = "it = 15000000000.0 : float\nerror: undefined variable `f`\n  --> a.nesl:2:1\n\nit = T : bool\n123\n";
        assert_eq!(compare(EXPECTED, good), Ok(()));
        let bad = "it = 1.5E10 : float\nit = T : bool123\n";
        assert!(compare(EXPECTED, bad).is_err());
        assert_eq!(compare("it = 0.333333333333333 : float", "it = 0.3333333333333333 : float"), Ok(()));
        assert!(compare("it = 0.3333 : float", "it = 0.3334 : float").is_err());
        assert_eq!(compare("it = [-1, 0] : [int]", "it = [-1,0] : [int]"), Ok(()));
        assert_eq!(compare("x = 1.5E10", "x = 1.5e10"), Ok(()));
    }

    #[test]
    fn tokenizer() {
        use Token::*;
        let w = |s: &str| Word(s.into());
        let n = |s: &str| Num(s.into());
        assert_eq!(
            tokens("it = [1, -2.5E3] : [int]"),
            vec![w("it"), Punct('='), Punct('['), n("1"), Punct(','), n("-2.5E3"), Punct(']'), Punct(':'), Punct('['), w("int"), Punct(']')]
        );
        assert_eq!(tokens("bool123 a1"), vec![w("bool"), n("123"), w("a"), n("1")]);
        assert_eq!(tokens("1e 1.x .5 x-1 - 3"), vec![n("1"), w("e"), n("1."), w("x"), n(".5"), w("x"), n("-1"), Punct('-'), n("3")]);
        assert_eq!(tokens("`a \"q\\\"\""), vec![Punct('`'), w("a"), Punct('"'), w("q"), Punct('\\'), Punct('"'), Punct('"')]);
        assert_eq!(tokens("1.2.3"), vec![n("1.2"), n(".3")]);
    }

    #[test]
    fn error_paragraphs() {
        assert!(is_error_start("Error at top level."));
        assert!(is_error_start("  error: bad"));
        assert!(is_error_start("RUNTIME ERROR: Divide by zero."));
        assert!(is_error_start("[E012] error here"));
        assert!(is_error_start("error[Syntax]: unexpected `;`"));
        assert!(is_error_start("ERROR"));
        assert!(!is_error_start("errors = 3 : int"));
        assert!(!is_error_start("it = \"error\" : [char]"));
        assert!(!is_error_start("[unclosed error"));
        assert!(!is_error_start("runtime errors"));
        // Consecutive paragraphs merge into one mark; the text inside does not matter.
        let a = "RUNTIME ERROR: a\n\nError at top level.  \nError while running VCODE.\n\nit = 1 : int\n";
        let b = "error: something else entirely\n   with more lines\n\nit = 1 : int";
        assert_eq!(compare(a, b), Ok(()));
        assert_eq!(tokens(a), vec![Token::Error, Token::Word("it".into()), Token::Punct('='), Token::Num("1".into()), Token::Punct(':'), Token::Word("int".into())]);
        // A missing error is a difference, and so is an extra one.
        assert!(compare(a, "it = 1 : int").is_err());
        assert!(compare("it = 1 : int", a).is_err());
        // Whitespace-only lines end a paragraph.
        assert_eq!(tokens("error x\n   \nit"), vec![Token::Error, Token::Word("it".into())]);
    }

    #[test]
    fn line_breaks_and_spaces_do_not_matter() {
        assert_eq!(compare("it = [1,\n 2] : [int]", "it=[1, 2]:[int]"), Ok(()));
        assert_eq!(compare("a\r\nb", "a b"), Ok(()));
        assert!(compare("ab", "a b").is_err());
    }

    #[test]
    fn numbers() {
        assert_eq!(compare("1e-13", "0"), Ok(()));
        assert!(compare("1e-11", "0").is_err());
        assert_eq!(compare("1000000000", "1000000000.5"), Ok(()));
        assert!(compare("1000", "1000.5").is_err());
        assert!(compare("1", "x").is_err());
        assert!(compare("+", "+1").is_err());
    }

    #[test]
    fn difference_messages() {
        let msg = compare("it = [1, 2] : [int]", "it = [1, 3] : [int]").unwrap_err();
        assert!(msg.starts_with("token 5: expected `2`, got `3`"), "{msg}");
        let msg = compare("it = 1 : int\nit = 2 : int", "it = 1 : int").unwrap_err();
        assert!(msg.contains("expected transcript goes on"), "{msg}");
        assert!(msg.contains("it = 2 : int"), "{msg}");
        let msg = compare("", "x").unwrap_err();
        assert!(msg.contains("actual transcript goes on"), "{msg}");
    }
}
