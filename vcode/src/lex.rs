//! The lexer of the VCODE text format (spec/vcode.md section 4).
//!
//! A token is a word (a maximal run of characters other than white space, `(`, `)`,
//! `{`, `}` and `"`), a parenthesis, or a string. Words are then classified: integers
//! (`[+-]?digits`), floats (`[+-]?digits.digits?([eE][+-]?digits)?`, the `.` being
//! mandatory), superoperator parameters (`$n`), or names (keywords and labels), which may
//! only use the label characters `A-Z a-z 0-9 - + * / % < > = ! . _`. Comments are
//! `{ ... }` and do not nest.

use crate::ir::Pos;
use crate::ParseError;

/// A token kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Word(String),
    Int(i64),
    Float(f64),
    Str(String),
    Arg(u32),
    LParen,
    RParen,
    /// A token the lexer already reported as an error.
    Bad,
    Eof,
}

/// A token and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

impl Tok {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Int(i) => format!("integer `{i}`"),
            Tok::Float(x) => format!("float `{x}`"),
            Tok::Str(_) => "a string".to_string(),
            Tok::Arg(i) => format!("`${i}`"),
            Tok::LParen => "`(`".to_string(),
            Tok::RParen => "`)`".to_string(),
            Tok::Bad => "an invalid token".to_string(),
            Tok::Eof => "end of file".to_string(),
        }
    }
}

fn is_label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-+*/%<>=!._".contains(c)
}

fn is_int(w: &str) -> bool {
    let d = w.strip_prefix(['+', '-']).unwrap_or(w);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
}

fn is_float(w: &str) -> bool {
    let d = w.strip_prefix(['+', '-']).unwrap_or(w);
    let (mant, exp) = match d.find(['e', 'E']) {
        Some(i) => (&d[..i], Some(&d[i + 1..])),
        None => (d, None),
    };
    let Some((int, frac)) = mant.split_once('.') else { return false };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) {
        return false;
    }
    match exp {
        None => true,
        Some(e) => is_int(e),
    }
}

/// Splits `src` into tokens, ending with `Eof`. Errors are collected; the offending
/// text is skipped.
pub(crate) fn lex(src: &str, errors: &mut Vec<ParseError>) -> Vec<Token> {
    let mut toks = Vec::new();
    let chars: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let advance = |i: &mut usize, line: &mut u32, col: &mut u32| {
        if chars[*i] == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
        *i += 1;
    };
    while i < chars.len() {
        let c = chars[i];
        let pos = Pos { line, col };
        if c.is_whitespace() {
            advance(&mut i, &mut line, &mut col);
        } else if c == '{' {
            while i < chars.len() && chars[i] != '}' {
                advance(&mut i, &mut line, &mut col);
            }
            if i == chars.len() {
                errors.push(ParseError::at(pos, "unterminated comment (missing `}`)"));
                toks.push(Token { tok: Tok::Bad, pos });
            } else {
                advance(&mut i, &mut line, &mut col);
            }
        } else if c == '}' {
            errors.push(ParseError::at(pos, "`}` outside a comment"));
            advance(&mut i, &mut line, &mut col);
        } else if c == '(' || c == ')' {
            toks.push(Token { tok: if c == '(' { Tok::LParen } else { Tok::RParen }, pos });
            advance(&mut i, &mut line, &mut col);
        } else if c == '"' {
            advance(&mut i, &mut line, &mut col);
            let start = i;
            while i < chars.len() && chars[i] != '"' {
                advance(&mut i, &mut line, &mut col);
            }
            if i == chars.len() {
                errors.push(ParseError::at(pos, "unterminated string (missing `\"`)"));
                toks.push(Token { tok: Tok::Bad, pos });
            } else {
                toks.push(Token { tok: Tok::Str(chars[start..i].iter().collect()), pos });
                advance(&mut i, &mut line, &mut col);
            }
        } else {
            let start = i;
            let mut bad: Option<(Pos, char)> = None;
            while i < chars.len() && !chars[i].is_whitespace() && !"(){}\"".contains(chars[i]) {
                let ch = chars[i];
                if bad.is_none() && !is_label_char(ch) && !(ch == '$' && i == start) {
                    bad = Some((Pos { line, col }, ch));
                }
                advance(&mut i, &mut line, &mut col);
            }
            let w: String = chars[start..i].iter().collect();
            if let Some((p, ch)) = bad {
                let shown = if ch.is_control() || ch == '\u{fffd}' {
                    format!("character U+{:04X}", ch as u32)
                } else {
                    format!("character `{ch}`")
                };
                errors.push(ParseError::at(p, format!("invalid {shown}")));
                toks.push(Token { tok: Tok::Bad, pos });
                continue;
            }
            let tok = if let Some(n) = w.strip_prefix('$') {
                match n.parse::<u32>() {
                    Ok(k) if is_int(n) => Tok::Arg(k),
                    _ => {
                        errors.push(ParseError::at(pos, format!("bad parameter `{w}`")));
                        toks.push(Token { tok: Tok::Bad, pos });
                        continue;
                    }
                }
            } else if is_int(&w) {
                match w.parse::<i64>() {
                    Ok(v) => Tok::Int(v),
                    Err(_) => {
                        errors.push(ParseError::at(pos, format!("integer `{w}` out of range")));
                        toks.push(Token { tok: Tok::Bad, pos });
                        continue;
                    }
                }
            } else if is_float(&w) {
                match w.parse::<f64>() {
                    Ok(v) => Tok::Float(v),
                    Err(_) => {
                        errors.push(ParseError::at(pos, format!("bad float `{w}`")));
                        toks.push(Token { tok: Tok::Bad, pos });
                        continue;
                    }
                }
            } else {
                Tok::Word(w)
            };
            toks.push(Token { tok, pos });
        }
    }
    toks.push(Token { tok: Tok::Eof, pos: Pos { line, col } });
    toks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        let mut e = Vec::new();
        let t = lex(s, &mut e).into_iter().map(|t| t.tok).collect();
        assert!(e.is_empty(), "{e:?}");
        t
    }

    #[test]
    fn numbers_and_words() {
        assert_eq!(kinds("-5")[0], Tok::Int(-5));
        assert_eq!(kinds("+3")[0], Tok::Int(3));
        assert_eq!(kinds("2.")[0], Tok::Float(2.0));
        assert_eq!(kinds("3.0E-7")[0], Tok::Float(3.0e-7));
        assert_eq!(kinds("1e5")[0], Tok::Word("1e5".into()));
        assert_eq!(kinds(".5")[0], Tok::Word(".5".into()));
        assert_eq!(kinds("-")[0], Tok::Word("-".into()));
        assert_eq!(kinds("5x")[0], Tok::Word("5x".into()));
        assert_eq!(kinds("(1 2)").len(), 5);
        assert_eq!(kinds("{ c } X { multi\nline }")[0], Tok::Word("X".into()));
    }

    #[test]
    fn errors_have_positions() {
        let mut e = Vec::new();
        lex("FUNC A\n  @", &mut e);
        assert_eq!(e[0].to_string(), "2:3: invalid character `@`");
    }
}
