//! Lexer (logos): NESL source text to tokens.
//!
//! [`lex`] turns a whole source text into a vector of [`Spanned`] tokens and never
//! fails: every lexical error (a bad or non-ASCII character, an unterminated string or
//! comment, a malformed literal) becomes one [`Token::Error`] in the stream, at the place
//! of the error, together with a [`DiagKind::Lex`] [`Diagnostic`] whose span starts at the
//! same offset. The parser then fails on that token and reports the lexical diagnostic.
//!
//! Lexical rules (spec section 1): whitespace is space, tab, newline, carriage return and
//! form feed; `%` ... `%` is a comment (no nesting); identifiers and keywords are folded to
//! lower case; `t` and `f` are the boolean literals; a character literal is a back-quote
//! followed by exactly one character; in a string a backslash makes the next character
//! literal. Source text must be ASCII outside comments.
//!
//! Not here: the top-level command words (`load`, `set`, ...), which are ordinary
//! identifiers to the lexer and are recognised by the parser at the start of a form.

use crate::ast::Span;
use crate::diag::{DiagKind, Diagnostic};
use logos::Logos;
use std::fmt;

/// A token with its byte range: `(start, token, end)`, the triple lalrpop consumes.
pub type Spanned = (usize, Token, usize);

/// A NESL token.
#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    /// An identifier, folded to lower case.
    Ident(String),
    /// An integer literal.
    Int(i64),
    /// A floating-point literal.
    Float(f64),
    /// A character literal (`` `a ``).
    Char(u8),
    /// A string literal, escapes resolved.
    Str(Vec<u8>),
    /// `function`
    Function,
    /// `datatype`
    Datatype,
    /// `if`
    If,
    /// `then`
    Then,
    /// `else`
    Else,
    /// `let`
    Let,
    /// `in`
    In,
    /// `and`
    And,
    /// `or`
    Or,
    /// `nor`
    Nor,
    /// `xor`
    Xor,
    /// `nand`
    Nand,
    /// `t` (true)
    True,
    /// `f` (false)
    False,
    /// `time`
    Time,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `,`
    Comma,
    /// `;`
    Semi,
    /// `$`
    Dollar,
    /// `:`
    Colon,
    /// `::`
    ColonColon,
    /// `=`
    Eq,
    /// `==`
    EqEq,
    /// `/=`
    NotEq,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `^`
    Caret,
    /// `#`
    Hash,
    /// `@`
    At,
    /// `->`
    Arrow,
    /// `<-`
    LArrow,
    /// `++`
    PlusPlus,
    /// `||`
    BarBar,
    /// `|`
    Bar,
    /// `?`
    Question,
    /// `!`
    Bang,
    /// `&`
    Amp,
    /// `'`
    Quote,
    /// `\`
    Backslash,
    /// `>>`
    GtGt,
    /// `=>`
    FatArrow,
    /// `&=`
    AmpEq,
    /// `:=`
    ColonEq,
    /// `|=`
    BarEq,
    /// A lexical error; the matching diagnostic is in [`Lexed::diags`].
    Error,
}

impl Token {
    /// The keyword token for a lower-cased identifier, if it is one.
    fn keyword(name: &str) -> Option<Token> {
        Some(match name {
            "function" => Token::Function,
            "datatype" => Token::Datatype,
            "if" => Token::If,
            "then" => Token::Then,
            "else" => Token::Else,
            "let" => Token::Let,
            "in" => Token::In,
            "and" => Token::And,
            "or" => Token::Or,
            "nor" => Token::Nor,
            "xor" => Token::Xor,
            "nand" => Token::Nand,
            "t" => Token::True,
            "f" => Token::False,
            "time" => Token::Time,
            _ => return None,
        })
    }

    /// The fixed source text of a keyword or punctuation token (`None` for tokens that
    /// carry data and for [`Token::Error`]).
    pub fn text(&self) -> Option<&'static str> {
        Some(match self {
            Token::Function => "function",
            Token::Datatype => "datatype",
            Token::If => "if",
            Token::Then => "then",
            Token::Else => "else",
            Token::Let => "let",
            Token::In => "in",
            Token::And => "and",
            Token::Or => "or",
            Token::Nor => "nor",
            Token::Xor => "xor",
            Token::Nand => "nand",
            Token::True => "t",
            Token::False => "f",
            Token::Time => "time",
            Token::LParen => "(",
            Token::RParen => ")",
            Token::LBracket => "[",
            Token::RBracket => "]",
            Token::LBrace => "{",
            Token::RBrace => "}",
            Token::Comma => ",",
            Token::Semi => ";",
            Token::Dollar => "$",
            Token::Colon => ":",
            Token::ColonColon => "::",
            Token::Eq => "=",
            Token::EqEq => "==",
            Token::NotEq => "/=",
            Token::Lt => "<",
            Token::Gt => ">",
            Token::Le => "<=",
            Token::Ge => ">=",
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Star => "*",
            Token::Slash => "/",
            Token::Caret => "^",
            Token::Hash => "#",
            Token::At => "@",
            Token::Arrow => "->",
            Token::LArrow => "<-",
            Token::PlusPlus => "++",
            Token::BarBar => "||",
            Token::Bar => "|",
            Token::Question => "?",
            Token::Bang => "!",
            Token::Amp => "&",
            Token::Quote => "'",
            Token::Backslash => "\\",
            Token::GtGt => ">>",
            Token::FatArrow => "=>",
            Token::AmpEq => "&=",
            Token::ColonEq => ":=",
            Token::BarEq => "|=",
            Token::Ident(_)
            | Token::Int(_)
            | Token::Float(_)
            | Token::Char(_)
            | Token::Str(_)
            | Token::Error => return None,
        })
    }

    /// Whether this token ends a top-level form (`;` or `$`).
    pub fn is_terminator(&self) -> bool {
        matches!(self, Token::Semi | Token::Dollar)
    }
}

impl fmt::Display for Token {
    /// How a token is named in error messages: `` `then` ``, ``identifier `x` ``, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Ident(name) => write!(f, "identifier `{name}`"),
            Token::Int(v) => write!(f, "integer `{v}`"),
            Token::Float(v) => write!(f, "float `{v:?}`"),
            Token::Char(c) => write!(f, "character `{}", char::from(*c).escape_default()),
            Token::Str(s) => {
                let text = String::from_utf8_lossy(s);
                if text.len() > 20 {
                    let cut: String = text.chars().take(17).collect();
                    write!(f, "string \"{}...\"", cut.escape_default())
                } else {
                    write!(f, "string \"{}\"", text.escape_default())
                }
            }
            Token::Error => write!(f, "invalid input"),
            other => match other.text() {
                Some(text) => write!(f, "`{text}`"),
                None => write!(f, "token"),
            },
        }
    }
}

/// The result of lexing a whole source text.
#[derive(Clone, Debug, Default)]
pub struct Lexed {
    /// The tokens in order; lexical errors appear as [`Token::Error`].
    pub tokens: Vec<Spanned>,
    /// One diagnostic per [`Token::Error`], in the same order, each starting at the
    /// start of its error token.
    pub diags: Vec<Diagnostic>,
    /// True when the text ends inside a string or a comment (an interactive top level
    /// may then read more input).
    pub ends_open: bool,
}

impl Lexed {
    /// The lexical diagnostic belonging to the error token starting at `start`.
    pub fn diag_at(&self, start: usize) -> Option<&Diagnostic> {
        self.diags.iter().find(|d| d.span.start as usize == start)
    }
}

/// What went wrong in one raw token (logos' error type).
#[derive(Clone, Debug, Default, PartialEq)]
enum RawError {
    /// A character that cannot start any token (the default for logos).
    #[default]
    BadChar,
    /// `%` without a closing `%`.
    UnterminatedComment,
    /// `"` without a closing `"`.
    UnterminatedString,
    /// A non-ASCII character inside a string or character literal at this absolute
    /// offset.
    NonAsciiLiteral(usize),
    /// A back-quote at the end of the input.
    EmptyChar,
    /// An integer literal that does not fit in 64 bits.
    IntOverflow,
    /// A float literal that does not parse.
    BadFloat,
}

/// Raw tokens as logos sees them; identifiers are turned into keywords afterwards.
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(error = RawError)]
#[logos(skip r"[ \t\r\n\x0C]+")]
enum Raw {
    #[token("%", comment)]
    Comment,
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*")]
    Ident,
    #[regex(r"[0-9]+", int_literal)]
    Int(i64),
    #[regex(r"[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?", float_literal)]
    #[regex(r"\.[0-9]+([eE][+-]?[0-9]+)?", float_literal)]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+", float_literal)]
    Float(f64),
    #[token("`", char_literal)]
    Char(u8),
    #[token("\"", string_literal)]
    Str(Vec<u8>),
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(";")]
    Semi,
    #[token("$")]
    Dollar,
    #[token(":")]
    Colon,
    #[token("::")]
    ColonColon,
    #[token("=")]
    Eq,
    #[token("==")]
    EqEq,
    #[token("/=")]
    NotEq,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("<=")]
    Le,
    #[token(">=")]
    Ge,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("^")]
    Caret,
    #[token("#")]
    Hash,
    #[token("@")]
    At,
    #[token("->")]
    Arrow,
    #[token("<-")]
    LArrow,
    #[token("++")]
    PlusPlus,
    #[token("||")]
    BarBar,
    #[token("|")]
    Bar,
    #[token("?")]
    Question,
    #[token("!")]
    Bang,
    #[token("&")]
    Amp,
    #[token("'")]
    Quote,
    #[token("\\")]
    Backslash,
    #[token(">>")]
    GtGt,
    #[token("=>")]
    FatArrow,
    #[token("&=")]
    AmpEq,
    #[token(":=")]
    ColonEq,
    #[token("|=")]
    BarEq,
}

/// Skips a comment: everything up to and including the next `%`.
fn comment(lex: &mut logos::Lexer<Raw>) -> Result<logos::Skip, RawError> {
    match lex.remainder().find('%') {
        Some(i) => {
            lex.bump(i + 1);
            Ok(logos::Skip)
        }
        None => {
            lex.bump(lex.remainder().len());
            Err(RawError::UnterminatedComment)
        }
    }
}

fn int_literal(lex: &mut logos::Lexer<Raw>) -> Result<i64, RawError> {
    lex.slice().parse().map_err(|_| RawError::IntOverflow)
}

fn float_literal(lex: &mut logos::Lexer<Raw>) -> Result<f64, RawError> {
    lex.slice().parse().map_err(|_| RawError::BadFloat)
}

/// A back-quote followed by exactly one (ASCII) character.
fn char_literal(lex: &mut logos::Lexer<Raw>) -> Result<u8, RawError> {
    let at = lex.span().end;
    match lex.remainder().chars().next() {
        None => Err(RawError::EmptyChar),
        Some(c) => {
            lex.bump(c.len_utf8());
            if c.is_ascii() {
                Ok(c as u8)
            } else {
                Err(RawError::NonAsciiLiteral(at))
            }
        }
    }
}

/// The rest of a string literal after its opening `"`; a backslash quotes the next
/// character.
fn string_literal(lex: &mut logos::Lexer<Raw>) -> Result<Vec<u8>, RawError> {
    let base = lex.span().end;
    let rest = lex.remainder();
    let mut out = Vec::new();
    let mut non_ascii = None;
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        let c = match c {
            '"' => {
                lex.bump(i + 1);
                return match non_ascii {
                    Some(at) => Err(RawError::NonAsciiLiteral(at)),
                    None => Ok(out),
                };
            }
            '\\' => match chars.next() {
                Some((j, c)) => {
                    if !c.is_ascii() && non_ascii.is_none() {
                        non_ascii = Some(base + j);
                    }
                    c
                }
                None => break,
            },
            c => {
                if !c.is_ascii() && non_ascii.is_none() {
                    non_ascii = Some(base + i);
                }
                c
            }
        };
        if c.is_ascii() {
            out.push(c as u8);
        }
    }
    lex.bump(rest.len());
    Err(RawError::UnterminatedString)
}

/// The token for a raw token whose text is `slice`.
fn cook(raw: Raw, slice: &str) -> Token {
    match raw {
        Raw::Comment => Token::Error, // never produced: comments are skipped
        Raw::Ident => {
            let name = slice.to_ascii_lowercase();
            Token::keyword(&name).unwrap_or(Token::Ident(name))
        }
        Raw::Int(v) => Token::Int(v),
        Raw::Float(v) => Token::Float(v),
        Raw::Char(c) => Token::Char(c),
        Raw::Str(s) => Token::Str(s),
        Raw::LParen => Token::LParen,
        Raw::RParen => Token::RParen,
        Raw::LBracket => Token::LBracket,
        Raw::RBracket => Token::RBracket,
        Raw::LBrace => Token::LBrace,
        Raw::RBrace => Token::RBrace,
        Raw::Comma => Token::Comma,
        Raw::Semi => Token::Semi,
        Raw::Dollar => Token::Dollar,
        Raw::Colon => Token::Colon,
        Raw::ColonColon => Token::ColonColon,
        Raw::Eq => Token::Eq,
        Raw::EqEq => Token::EqEq,
        Raw::NotEq => Token::NotEq,
        Raw::Lt => Token::Lt,
        Raw::Gt => Token::Gt,
        Raw::Le => Token::Le,
        Raw::Ge => Token::Ge,
        Raw::Plus => Token::Plus,
        Raw::Minus => Token::Minus,
        Raw::Star => Token::Star,
        Raw::Slash => Token::Slash,
        Raw::Caret => Token::Caret,
        Raw::Hash => Token::Hash,
        Raw::At => Token::At,
        Raw::Arrow => Token::Arrow,
        Raw::LArrow => Token::LArrow,
        Raw::PlusPlus => Token::PlusPlus,
        Raw::BarBar => Token::BarBar,
        Raw::Bar => Token::Bar,
        Raw::Question => Token::Question,
        Raw::Bang => Token::Bang,
        Raw::Amp => Token::Amp,
        Raw::Quote => Token::Quote,
        Raw::Backslash => Token::Backslash,
        Raw::GtGt => Token::GtGt,
        Raw::FatArrow => Token::FatArrow,
        Raw::AmpEq => Token::AmpEq,
        Raw::ColonEq => Token::ColonEq,
        Raw::BarEq => Token::BarEq,
    }
}

/// Appended to a bad-character message that covers a run of them.
const AND_MORE: &str = " (and more after it)";

/// Describes a character that cannot appear in NESL source.
fn bad_char_message(c: char) -> String {
    if !c.is_ascii() {
        format!("non-ASCII character `{c}` (U+{:04X}): NESL source text must be ASCII", c as u32)
    } else if c.is_ascii_control() {
        format!("invalid control character U+{:04X} in source text", c as u32)
    } else {
        format!("unexpected character `{c}`")
    }
}

/// Lexes a whole source text. Never fails: errors become [`Token::Error`] tokens with a
/// matching diagnostic (consecutive bad characters are reported once).
pub fn lex(src: &str) -> Lexed {
    let mut out = Lexed::default();
    let mut lexer = Raw::lexer(src);
    // End of the last bad-character error, to merge runs of them.
    let mut prev_bad_end: Option<usize> = None;
    while let Some(next) = lexer.next() {
        let range = lexer.span();
        if !matches!(next, Err(RawError::BadChar)) {
            prev_bad_end = None;
        }
        match next {
            Ok(raw) => out.tokens.push((range.start, cook(raw, lexer.slice()), range.end)),
            Err(err) => {
                let (diag, err_start, err_end) = match err {
                    RawError::BadChar => {
                        let c = src[range.start..].chars().next().unwrap_or('\u{FFFD}');
                        let end = range.start + c.len_utf8();
                        // Merge a run of bad characters into the previous error.
                        if prev_bad_end == Some(range.start) {
                            if let (Some(tok), Some(prev)) = (out.tokens.last_mut(), out.diags.last_mut()) {
                                tok.2 = end;
                                prev.span.end = end as u32;
                                if !prev.message.ends_with(AND_MORE) {
                                    prev.message.push_str(AND_MORE);
                                }
                                prev_bad_end = Some(end);
                                continue;
                            }
                        }
                        prev_bad_end = Some(end);
                        let span = Span::new(range.start, end);
                        (Diagnostic::new(DiagKind::Lex, span, bad_char_message(c)), range.start, end)
                    }
                    RawError::UnterminatedComment => {
                        out.ends_open = true;
                        let d = Diagnostic::new(
                            DiagKind::Lex,
                            Span::new(range.start, range.start + 1),
                            "unterminated comment: no closing `%` before the end of the input",
                        );
                        (d, range.start, range.end)
                    }
                    RawError::UnterminatedString => {
                        out.ends_open = true;
                        let d = Diagnostic::new(
                            DiagKind::Lex,
                            Span::new(range.start, range.start + 1),
                            "unterminated string: no closing `\"` before the end of the input",
                        );
                        (d, range.start, range.end)
                    }
                    RawError::NonAsciiLiteral(at) => {
                        let c = src[at..].chars().next().unwrap_or('\u{FFFD}');
                        let what = if src[range.start..].starts_with('"') {
                            "string"
                        } else {
                            "character"
                        };
                        let d = Diagnostic::new(
                            DiagKind::Lex,
                            Span::new(range.start, range.end),
                            format!(
                                "non-ASCII character `{c}` (U+{:04X}) in a {what} literal: NESL characters are ASCII",
                                c as u32
                            ),
                        )
                        .with_note(Some(Span::new(at, at + c.len_utf8())), "this character");
                        (d, range.start, range.end)
                    }
                    RawError::EmptyChar => {
                        let d = Diagnostic::new(
                            DiagKind::Lex,
                            Span::new(range.start, range.end),
                            "character literal: a back-quote must be followed by a character",
                        );
                        (d, range.start, range.end)
                    }
                    RawError::IntOverflow => {
                        let d = Diagnostic::new(
                            DiagKind::Lex,
                            Span::new(range.start, range.end),
                            format!("integer literal `{}` is too large", lexer.slice()),
                        );
                        (d, range.start, range.end)
                    }
                    RawError::BadFloat => {
                        let d = Diagnostic::new(
                            DiagKind::Lex,
                            Span::new(range.start, range.end),
                            format!("malformed float literal `{}`", lexer.slice()),
                        );
                        (d, range.start, range.end)
                    }
                };
                out.tokens.push((err_start, Token::Error, err_end));
                out.diags.push(diag);
            }
        }
    }
    out
}

/// Checks that raw bytes are a source text the lexer accepts at all (UTF-8), for callers
/// that read files: binary input gives a located [`DiagKind::Lex`] diagnostic at the
/// first byte that is not valid UTF-8. (Non-ASCII characters in valid UTF-8 are then
/// reported by [`lex`].)
pub fn source_from_bytes(bytes: &[u8]) -> Result<&str, Diagnostic> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let len = e.error_len().unwrap_or(bytes.len() - at).max(1);
        let shown: Vec<String> = bytes[at..(at + len).min(bytes.len())]
            .iter()
            .map(|b| format!("0x{b:02X}"))
            .collect();
        Diagnostic::new(
            DiagKind::Lex,
            Span::new(at, at),
            format!(
                "binary input: byte {} is not text (NESL source must be ASCII)",
                shown.join(" ")
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Token> {
        lex(src).tokens.into_iter().map(|(_, t, _)| t).collect()
    }

    #[test]
    fn keywords_fold_case_and_literals() {
        assert_eq!(
            toks("FUNCTION Twice(X) = T"),
            vec![
                Token::Function,
                Token::Ident("twice".into()),
                Token::LParen,
                Token::Ident("x".into()),
                Token::RParen,
                Token::Eq,
                Token::True
            ]
        );
        assert_eq!(
            toks("1 2.5 2. .5 1e5 `a ` \"a\\\"b\""),
            vec![
                Token::Int(1),
                Token::Float(2.5),
                Token::Float(2.0),
                Token::Float(0.5),
                Token::Float(1e5),
                Token::Char(b'a'),
                Token::Char(b' '),
                Token::Str(b"a\"b".to_vec())
            ]
        );
    }

    #[test]
    fn operators_longest_match() {
        assert_eq!(
            toks("a<-b->c++d||e/=f==g<=h::i:=j"),
            vec![
                Token::Ident("a".into()),
                Token::LArrow,
                Token::Ident("b".into()),
                Token::Arrow,
                Token::Ident("c".into()),
                Token::PlusPlus,
                Token::Ident("d".into()),
                Token::BarBar,
                Token::Ident("e".into()),
                Token::NotEq,
                Token::False,
                Token::EqEq,
                Token::Ident("g".into()),
                Token::Le,
                Token::Ident("h".into()),
                Token::ColonColon,
                Token::Ident("i".into()),
                Token::ColonEq,
                Token::Ident("j".into())
            ]
        );
    }

    #[test]
    fn comments_are_skipped_and_unterminated_ones_reported() {
        assert_eq!(toks("1 % a comment\n over lines % 2"), vec![Token::Int(1), Token::Int(2)]);
        let l = lex("1 % never closed");
        assert_eq!(l.tokens.last().map(|t| &t.1), Some(&Token::Error));
        assert_eq!(l.diags.len(), 1);
        assert_eq!(l.diags[0].span, Span::new(2, 3));
        assert!(l.ends_open);
    }

    #[test]
    fn bad_characters_are_located_and_merged() {
        let l = lex("x = é;");
        assert_eq!(l.diags.len(), 1);
        assert_eq!(l.diags[0].span, Span::new(4, 6));
        assert!(l.diags[0].message.contains("non-ASCII"));
        let l = lex("a \u{1}\u{2}\u{3} b ~");
        assert_eq!(l.diags.len(), 2);
        assert_eq!(l.diags[0].span, Span::new(2, 5));
    }

    #[test]
    fn unterminated_string_and_overflow() {
        let l = lex("\"abc");
        assert_eq!(l.diags.len(), 1);
        assert!(l.diags[0].message.contains("unterminated string"));
        let l = lex("99999999999999999999");
        assert!(l.diags[0].message.contains("too large"));
    }

    #[test]
    fn binary_input_is_rejected_with_offset() {
        let e = source_from_bytes(b"ab\xff\xfe").unwrap_err();
        assert_eq!(e.span.start, 2);
        assert!(source_from_bytes(b"x = 1;").is_ok());
    }
}
