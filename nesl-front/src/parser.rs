//! Parser (lalrpop grammar over the logos lexer): tokens to the AST.
//!
//! The grammar (`grammar.lalrpop`) parses one top-level form at a time. The driver here
//! splits a source text into forms the way the NESL top level does: a form ends at the
//! first `;` or `$` at which it is complete (a `;` inside a `let` or an apply-to-each does
//! not end it), and after a syntax error the rest of the form up to the next `;`/`$` is
//! skipped, so the following forms are still parsed. Top-level commands (`load`,
//! `describe`, `set`, `help`/`?`, `exit`) are recognised here, before the grammar.
//!
//! Entry points: [`parse_program`] (all forms, all errors), [`parse_items`] (form by form,
//! for a top level that evaluates each form before the next), [`parse_expr`] (one
//! expression) and [`is_incomplete`] (does the text end in the middle of a form).
//!
//! The AST follows the conventions of [`crate::ast`]: lower-case names, right-nested
//! pairs, operators as calls of the functions they denote, a span on every node.

use crate::ast::{
    Command, CommandKind, Expr, ExprKind, Ident, Pattern, PatternKind, Span, TopLevel,
    TypeSpec,
};
use crate::diag::{DiagKind, Diagnostic};
use crate::lexer::{self, Lexed, Spanned, Token};
use lalrpop_util::ParseError;

lalrpop_util::lalrpop_mod!(
    #[allow(clippy::all, unused_imports, unused_parens, missing_docs)]
    grammar
);

/// The error type of grammar actions (a failed pattern conversion).
pub(crate) type ActionError = Diagnostic;

type GrammarError = ParseError<usize, Token, ActionError>;

// ---------------------------------------------------------------------------------------
// AST builders used by the grammar's actions

/// A binary operator application `a op b`: a call of `op` on the pair `(a, b)`.
pub(crate) fn binop(op: (&'static str, Span), a: Expr, b: Expr, l: usize, r: usize) -> Expr {
    let arg_span = a.span.to(b.span);
    let arg = Expr::new(ExprKind::Pair(Box::new(a), Box::new(b)), arg_span);
    Expr::new(
        ExprKind::Call { func: Ident::new(op.0, op.1), arg: Box::new(arg) },
        Span::new(l, r),
    )
}

/// A prefix operator application: a call of the operator's function.
pub(crate) fn prefix(op: (&'static str, Span), a: Expr, l: usize, r: usize) -> Expr {
    Expr::new(ExprKind::Call { func: Ident::new(op.0, op.1), arg: Box::new(a) }, Span::new(l, r))
}

/// The pair `(a, b)`.
pub(crate) fn pair(a: Expr, b: Expr, l: usize, r: usize) -> Expr {
    Expr::new(ExprKind::Pair(Box::new(a), Box::new(b)), Span::new(l, r))
}

/// A pattern without a type.
pub(crate) fn pattern(kind: PatternKind, l: usize, r: usize) -> Pattern {
    Pattern { kind, span: Span::new(l, r), ty: None }
}

/// A parenthesised expression: the same node; a tuple's span is widened to the
/// parentheses (other nodes keep their exact span).
pub(crate) fn widen_expr(mut e: Expr, l: usize, r: usize) -> Expr {
    if matches!(e.kind, ExprKind::Pair(..)) {
        e.span = Span::new(l, r);
    }
    e
}

/// A parenthesised pattern: the same node; a tuple's span is widened to the parentheses.
pub(crate) fn widen_pattern(mut p: Pattern, l: usize, r: usize) -> Pattern {
    if matches!(p.kind, PatternKind::Pair(..)) {
        p.span = Span::new(l, r);
    }
    p
}

/// Reads an expression as a pattern: where the grammar cannot know yet whether it parses
/// a pattern (`p = e;` at top level, `{p in s}`), it parses an expression and converts.
/// Only names, pairs and constructor applications written `name(...)` are patterns.
pub(crate) fn expr_to_pattern(src: &str, e: Expr) -> Result<Pattern, GrammarError> {
    let span = e.span;
    let kind = match e.kind {
        ExprKind::Var(id) => PatternKind::Var(id),
        ExprKind::Pair(a, b) => PatternKind::Pair(
            Box::new(expr_to_pattern(src, *a)?),
            Box::new(expr_to_pattern(src, *b)?),
        ),
        ExprKind::Call { func, arg } if written_as_name(src, &func) => {
            PatternKind::Con(func, Box::new(expr_to_pattern(src, *arg)?))
        }
        other => {
            let what = describe_expr(&other);
            let mut d = Diagnostic::new(
                DiagKind::Syntax,
                span,
                format!("{what} cannot be used as a pattern"),
            )
            .with_note(
                None,
                "a pattern is a name, a tuple of patterns, or a datatype constructor applied \
                 to patterns, e.g. `(x, point(a, b))`",
            );
            if matches!(other, ExprKind::Bool(_)) {
                d = d.with_note(None, "`t`, `f` and `time` are reserved and cannot be bound");
            }
            return Err(ParseError::User { error: d });
        }
    };
    Ok(Pattern { kind, span, ty: None })
}

/// Whether a call's function name is written as that name in the source (a constructor
/// application), as opposed to an operator (`a[i]`, `-x`, `a + b`).
fn written_as_name(src: &str, func: &Ident) -> bool {
    let is_name = func.name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    is_name
        && src
            .get(func.span.start as usize..func.span.end as usize)
            .is_some_and(|text| text.eq_ignore_ascii_case(&func.name))
}

/// A short description of an expression, for error messages.
fn describe_expr(kind: &ExprKind) -> String {
    match kind {
        ExprKind::Int(_) => "an integer literal".into(),
        ExprKind::Float(_) => "a float literal".into(),
        ExprKind::Bool(_) => "a boolean literal".into(),
        ExprKind::Char(_) => "a character literal".into(),
        ExprKind::Str(_) => "a string literal".into(),
        ExprKind::Var(_) => "a name".into(),
        ExprKind::Call { func, .. } => format!("an application of `{}`", func.name),
        ExprKind::Pair(..) => "a tuple".into(),
        ExprKind::If(..) => "an `if` expression".into(),
        ExprKind::Let(..) => "a `let` expression".into(),
        ExprKind::ApplyToEach { .. } => "an apply-to-each".into(),
        ExprKind::Seq(_) | ExprKind::EmptySeq(_) => "a sequence".into(),
        ExprKind::Range { .. } => "a range".into(),
        ExprKind::Time(_) => "a `time` expression".into(),
    }
}

// ---------------------------------------------------------------------------------------
// Entry points

/// Parses a whole source text: every form that parses, and every error (parsing resumes
/// after each erroneous form at the next `;` or `$`).
pub fn parse_program(src: &str) -> (Vec<TopLevel>, Vec<Diagnostic>) {
    let mut items = Vec::new();
    let mut diags = Vec::new();
    for item in parse_items(src) {
        match item {
            Ok(t) => items.push(t),
            Err(ds) => diags.extend(ds),
        }
    }
    (items, diags)
}

/// Parses a source text form by form, in order: each form is either parsed or the errors
/// that stopped it. After an error, parsing resumes at the next top-level terminator
/// (`;` or `$`), so a top level can report the error and go on with the next form.
pub fn parse_items(src: &str) -> Vec<Result<TopLevel, Vec<Diagnostic>>> {
    Driver::new(src).run().0
}

/// Whether `src` ends in the middle of a form (an unterminated form, string or comment):
/// an interactive top level reads another line before evaluating.
pub fn is_incomplete(src: &str) -> bool {
    Driver::new(src).run().1
}

/// Parses one expression (no terminator).
pub fn parse_expr(src: &str) -> Result<Expr, Vec<Diagnostic>> {
    let lexed = lexer::lex(src);
    let tokens = lexed.tokens.iter().cloned().map(Ok::<Spanned, ActionError>);
    grammar::ExprOnlyParser::new().parse(src, tokens).map_err(|e| whole_input_diags(src, &lexed, e))
}

/// The diagnostics of a parser run over all of `lexed`: the parse error, then the lexical
/// errors after the place it stopped.
fn whole_input_diags(src: &str, lexed: &Lexed, e: GrammarError) -> Vec<Diagnostic> {
    let (diag, at) = error_diagnostic(src, lexed, &lexed.tokens, e);
    let mut diags = vec![diag];
    diags.extend(lex_diags_after(lexed, &lexed.tokens, at));
    diags
}

/// Parses one type with its optional context, `t :: (a in number; ...)` (no terminator):
/// the grammar of a function's declared type.
pub fn parse_type(src: &str) -> Result<TypeSpec, Vec<Diagnostic>> {
    let lexed = lexer::lex(src);
    let tokens = lexed.tokens.iter().cloned().map(Ok::<Spanned, ActionError>);
    grammar::TypeOnlyParser::new().parse(src, tokens).map_err(|e| whole_input_diags(src, &lexed, e))
}

// ---------------------------------------------------------------------------------------
// The form-by-form driver

struct Driver<'s> {
    src: &'s str,
    lexed: Lexed,
    parser: grammar::ItemParser,
}

impl<'s> Driver<'s> {
    fn new(src: &'s str) -> Self {
        Driver { src, lexed: lexer::lex(src), parser: grammar::ItemParser::new() }
    }

    /// All forms, and whether the text ends inside one.
    fn run(&self) -> (Vec<Result<TopLevel, Vec<Diagnostic>>>, bool) {
        let toks = &self.lexed.tokens;
        let mut out = Vec::new();
        let mut incomplete = self.lexed.ends_open;
        let mut i = 0;
        while i < toks.len() {
            if toks[i].1.is_terminator() {
                // An empty form: nothing to do.
                i += 1;
                continue;
            }
            if let Some((result, next)) = self.command(i) {
                if let Err(ref ds) = result {
                    incomplete |= next >= toks.len() && ds.iter().any(|d| d.message.contains("end of input"));
                }
                out.push(result);
                i = next;
                continue;
            }
            let (result, next, eof) = self.form(i);
            incomplete |= eof;
            out.push(result);
            i = next;
        }
        (out, incomplete)
    }

    /// Index of the first terminator at or after `from`, or `toks.len()`.
    fn next_terminator(&self, from: usize) -> usize {
        let toks = &self.lexed.tokens;
        (from..toks.len()).find(|&k| toks[k].1.is_terminator()).unwrap_or(toks.len())
    }

    /// Index of the first terminator at or after `from` at which the form that starts at
    /// `start` can be complete: outside every bracket, and outside every `let` (a `let`
    /// at bracket depth 0 is closed by an `in` at depth 0), or `toks.len()`. A form
    /// cannot end at any earlier terminator, so the parser need not try those.
    fn balanced_terminator(&self, start: usize, from: usize) -> usize {
        let toks = &self.lexed.tokens;
        let mut depth = 0i64;
        let mut lets = 0i64;
        for (k, (_, tok, _)) in toks.iter().enumerate().skip(start) {
            match tok {
                Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
                Token::RParen | Token::RBracket | Token::RBrace => depth -= 1,
                Token::Let if depth <= 0 => lets += 1,
                Token::In if depth <= 0 && lets > 0 => lets -= 1,
                _ => {}
            }
            if k >= from && tok.is_terminator() && depth <= 0 && lets <= 0 {
                return k;
            }
        }
        toks.len()
    }

    /// Parses the form starting at token `start`: the result, the index of the first token
    /// after it, and whether it failed at the end of the input.
    fn form(&self, start: usize) -> (Result<TopLevel, Vec<Diagnostic>>, usize, bool) {
        let toks = &self.lexed.tokens;
        let mut end = self.balanced_terminator(start, start);
        loop {
            let last = end.min(toks.len() - 1);
            let slice = &toks[start..=last];
            let tokens = slice.iter().cloned().map(Ok::<Spanned, ActionError>);
            match self.parser.parse(self.src, tokens) {
                Ok(item) => {
                    if let Some(longer) = self.bare_context_continues(start, &item, last) {
                        return longer;
                    }
                    return (Ok(item), last + 1, false);
                }
                Err(ParseError::UnrecognizedEof { .. }) if end + 1 < toks.len() => {
                    // The terminator belongs to an inner construct: extend the form.
                    end = self.balanced_terminator(start, end + 1);
                }
                Err(e) => {
                    let eof = matches!(e, ParseError::UnrecognizedEof { .. });
                    let (diag, at) = error_diagnostic(self.src, &self.lexed, slice, e);
                    if eof {
                        let mut diags = vec![diag];
                        diags.extend(lex_diags_after(&self.lexed, slice, at));
                        return (Err(diags), toks.len(), true);
                    }
                    let err = start + slice.iter().position(|t| t.0 >= at).unwrap_or(slice.len() - 1);
                    let stop = self.recovery_point(start, err);
                    let skipped = &toks[start..stop.min(toks.len())];
                    let mut diags = vec![diag];
                    diags.extend(lex_diags_after(&self.lexed, skipped, at));
                    return (Err(diags), stop + 1, false);
                }
            }
        }
    }

    /// A datatype with a context without parentheses ends at its first `;` as far as the
    /// grammar can tell (`datatype d(a, b) :: a in any; b in any $`). When the tokens
    /// after that `;` are another context item (`name in class` and a terminator, which
    /// no form can be), the form goes on: the parse of the longer text, if it succeeds.
    fn bare_context_continues(
        &self,
        start: usize,
        item: &TopLevel,
        last: usize,
    ) -> Option<(Result<TopLevel, Vec<Diagnostic>>, usize, bool)> {
        let toks = &self.lexed.tokens;
        if !matches!(item, TopLevel::Datatype(_)) || !matches!(toks[last].1, Token::Semi) {
            return None;
        }
        let next = toks.get(last + 1..last + 5)?;
        let item_follows = matches!(next[0].1, Token::Ident(_))
            && matches!(next[1].1, Token::In)
            && matches!(next[2].1, Token::Ident(_))
            && next[3].1.is_terminator();
        if !item_follows {
            return None;
        }
        let slice = &toks[start..=last + 4];
        let tokens = slice.iter().cloned().map(Ok::<Spanned, ActionError>);
        let item = self.parser.parse(self.src, tokens).ok()?;
        Some(self.bare_context_continues(start, &item, last + 4).unwrap_or((Ok(item), last + 5, false)))
    }

    /// Where a form with a syntax error at token `err` ends: the first terminator at or
    /// after the error that is outside every bracket and `let` opened since the form's
    /// start, or after which a new form starts by layout (`[1, 2;` on a line of its own
    /// ends at its `;`). Returns `toks.len()` if there is none.
    fn recovery_point(&self, start: usize, err: usize) -> usize {
        let toks = &self.lexed.tokens;
        let mut depth = 0i64;
        let mut lets = 0i64;
        for k in start..toks.len() {
            let tok = &toks[k].1;
            match tok {
                Token::LParen | Token::LBracket | Token::LBrace => depth += 1,
                Token::RParen | Token::RBracket | Token::RBrace => depth -= 1,
                Token::Let if depth <= 0 => lets += 1,
                Token::In if depth <= 0 && lets > 0 => lets -= 1,
                _ => {}
            }
            if k >= err
                && tok.is_terminator()
                && ((depth <= 0 && lets <= 0) || self.new_form_after(k))
            {
                return k;
            }
        }
        toks.len()
    }

    /// Whether the token after `k` starts a new form by its layout: in the first column of
    /// a later line, or a `function` / `datatype` keyword.
    fn new_form_after(&self, k: usize) -> bool {
        let toks = &self.lexed.tokens;
        let Some((next, tok, _)) = toks.get(k + 1) else { return true };
        if matches!(tok, Token::Function | Token::Datatype) {
            return true;
        }
        let between = &self.src[toks[k].2..*next];
        between.contains('\n') && (*next == 0 || self.src.as_bytes()[next - 1] == b'\n')
    }

    /// A top-level command starting at token `start`, if the form is one: the result and
    /// the index after it.
    fn command(&self, start: usize) -> Option<(Result<TopLevel, Vec<Diagnostic>>, usize)> {
        let toks = &self.lexed.tokens;
        let (l, first, r) = &toks[start];
        let word = match first {
            Token::Question => {
                // `?` needs no terminator.
                let next = match toks.get(start + 1) {
                    Some((_, t, _)) if t.is_terminator() => start + 2,
                    _ => start + 1,
                };
                let cmd = Command { kind: CommandKind::Help, span: Span::new(*l, *r) };
                return Some((Ok(TopLevel::Command(cmd)), next));
            }
            Token::Ident(w) if COMMANDS.contains(&w.as_str()) => w.as_str(),
            Token::Ident(w) if UNSUPPORTED_COMMANDS.contains(&w.as_str()) => w.as_str(),
            _ => return None,
        };
        // Only a form that cannot be an expression is a command (`exit + 1` is not).
        match toks.get(start + 1).map(|t| &t.1) {
            None
            | Some(
                Token::Semi
                | Token::Dollar
                | Token::Str(_)
                | Token::Ident(_)
                | Token::Int(_)
                | Token::Float(_),
            ) => {}
            // `load ("dir/" ++ name);`: the file name may be any expression.
            Some(Token::LParen) if word == "load" => {}
            Some(_) => return None,
        }
        let end = self.next_terminator(start + 1);
        let args = &toks[start + 1..end.min(toks.len())];
        let span_end = args.last().map_or(*r, |t| t.2);
        let span = Span::new(*l, span_end);
        if end >= toks.len() {
            let d = Diagnostic::new(
                DiagKind::Syntax,
                Span::new(self.src.len(), self.src.len()),
                format!("unexpected end of input: the `{word}` command must end with `;` or `$`"),
            )
            .with_note(Some(span), "the command starts here");
            return Some((Err(vec![d]), end));
        }
        if UNSUPPORTED_COMMANDS.contains(&word) {
            let d = Diagnostic::new(
                DiagKind::Syntax,
                span,
                format!("the top-level command `{word}` is not supported by this implementation"),
            );
            return Some((Err(vec![d]), end + 1));
        }
        let kind = match (word, args) {
            ("help", []) => Some(CommandKind::Help),
            ("exit", []) => Some(CommandKind::Exit),
            ("load", []) => Some(CommandKind::Load(None)),
            ("load", [(_, Token::Str(s), _)]) => {
                Some(CommandKind::Load(Some(String::from_utf8_lossy(s).into_owned())))
            }
            // CMU's `load <exp>;`: any expression that computes the file name.
            ("load", _) => {
                let tokens = args.iter().cloned().map(Ok::<Spanned, ActionError>);
                match grammar::ExprOnlyParser::new().parse(self.src, tokens) {
                    Ok(e) => Some(CommandKind::LoadExpr(Box::new(e))),
                    Err(e) => {
                        let (d, at) = error_diagnostic(self.src, &self.lexed, args, e);
                        let d = d.with_note(
                            Some(span),
                            "`load` takes a file name: a string, or an expression that computes one",
                        );
                        let mut diags = vec![d];
                        diags.extend(lex_diags_after(&self.lexed, args, at));
                        return Some((Err(diags), end + 1));
                    }
                }
            }
            ("describe", [(a, Token::Ident(n), b)]) => {
                Some(CommandKind::Describe(Ident::new(n.clone(), Span::new(*a, *b))))
            }
            ("set", [(a, Token::Ident(n), b), values @ ..]) if !values.is_empty() => values
                .iter()
                .map(|(_, t, _)| setting_word(t))
                .collect::<Option<Vec<String>>>()
                .map(|vals| CommandKind::Set(Ident::new(n.clone(), Span::new(*a, *b)), vals)),
            _ => None,
        };
        let result = match kind {
            Some(kind) => Ok(TopLevel::Command(Command { kind, span })),
            None => {
                let usage = match word {
                    "load" => "load \"file\";` or `load expression;",
                    "describe" => "describe name;",
                    "set" => "set name value;",
                    "help" => "help;",
                    _ => "exit;",
                };
                let mut diags = vec![Diagnostic::new(
                    DiagKind::Syntax,
                    span,
                    format!("malformed `{word}` command: expected `{usage}`"),
                )];
                diags.extend(lex_diags_after(&self.lexed, &toks[start..end], *l));
                Err(diags)
            }
        };
        Some((result, end + 1))
    }
}

/// The top-level command words (recognised only at the start of a form).
const COMMANDS: [&str; 5] = ["load", "describe", "set", "help", "exit"];

/// Commands of the CMU NESL top level that this implementation does not provide.
const UNSUPPORTED_COMMANDS: [&str; 8] =
    ["apropos", "show", "dump", "shell", "edit", "get", "defconfig", "source"];

/// A value word of a `set` command, as text.
fn setting_word(t: &Token) -> Option<String> {
    match t {
        Token::Ident(s) => Some(s.clone()),
        Token::Int(v) => Some(v.to_string()),
        Token::Float(v) => Some(v.to_string()),
        Token::Str(s) => Some(String::from_utf8_lossy(s).into_owned()),
        Token::True => Some("t".into()),
        Token::False => Some("f".into()),
        _ => None,
    }
}

/// The lexical diagnostics of error tokens in `slice` that start after offset `at`.
fn lex_diags_after(lexed: &Lexed, slice: &[Spanned], at: usize) -> Vec<Diagnostic> {
    slice
        .iter()
        .filter(|(l, t, _)| *t == Token::Error && *l > at)
        .filter_map(|(l, _, _)| lexed.diag_at(*l).cloned())
        .collect()
}

// ---------------------------------------------------------------------------------------
// Error messages

/// Turns a grammar error into a diagnostic; also returns the offset where it happened.
fn error_diagnostic(
    src: &str,
    lexed: &Lexed,
    slice: &[Spanned],
    e: GrammarError,
) -> (Diagnostic, usize) {
    match e {
        ParseError::UnrecognizedToken { token: (l, Token::Error, r), .. }
        | ParseError::ExtraToken { token: (l, Token::Error, r) } => {
            let d = lexed.diag_at(l).cloned().unwrap_or_else(|| {
                Diagnostic::new(DiagKind::Lex, Span::new(l, r), "invalid input")
            });
            (d, l)
        }
        ParseError::UnrecognizedToken { token: (l, tok, r), expected } => {
            let mut d = Diagnostic::new(
                DiagKind::Syntax,
                Span::new(l, r),
                format!(
                    "unexpected {}{}",
                    describe_token(src, l, &tok, r),
                    expected_suffix(&expected)
                ),
            );
            for note in hints(slice, l, &tok, &expected) {
                d = d.with_note(None, note);
            }
            (d, l)
        }
        ParseError::UnrecognizedEof { location, expected } => {
            let at = if slice.is_empty() { src.len() } else { location };
            let d = Diagnostic::new(
                DiagKind::Syntax,
                Span::new(at, at),
                format!("unexpected end of input{}", expected_suffix(&expected)),
            );
            let d = match slice.first() {
                Some((l, _, r)) if slice.len() > 1 => {
                    d.with_note(Some(Span::new(*l, *r)), "in the form that starts here")
                }
                _ => d,
            };
            (d, at)
        }
        ParseError::ExtraToken { token: (l, tok, r) } => (
            Diagnostic::new(DiagKind::Syntax, Span::new(l, r), format!("unexpected {tok}")),
            l,
        ),
        ParseError::InvalidToken { location } => (
            Diagnostic::new(DiagKind::Lex, Span::new(location, location), "invalid token"),
            location,
        ),
        ParseError::User { error } => {
            let at = error.span.start as usize;
            (error, at)
        }
    }
}

/// Tokens that can start an expression (as lalrpop names them, quotes removed).
const EXPR_START: [&str; 16] = [
    "ident", "int", "float", "char", "string", "t", "f", "time", "(", "[", "{", "if", "let",
    "-", "#", "@",
];

/// The binary operators.
const BINARY_OPS: [&str; 20] = [
    "or", "nor", "xor", "and", "nand", "==", "/=", "<", ">", "<=", ">=", "+", "-", "++", "*",
    "/", "||", "^", "<-", "->",
];

/// `; expected ...` for an error message, summarising the grammar's expected set.
fn expected_suffix(expected: &[String]) -> String {
    let names: Vec<&str> = expected.iter().map(|s| s.trim_matches('"')).collect();
    if names.is_empty() {
        return String::new();
    }
    let has = |n: &str| names.contains(&n);
    let expr = ["int", "(", "if", "["].iter().all(|n| has(n));
    let ops = BINARY_OPS.iter().filter(|n| has(n)).count() >= 10;
    let mut parts: Vec<String> = Vec::new();
    if expr {
        parts.push("an expression".into());
    }
    for n in &names {
        if expr && EXPR_START.contains(n) {
            continue;
        }
        if ops && (BINARY_OPS.contains(n) || *n == "[") {
            continue;
        }
        parts.push(match *n {
            "ident" => "a name".into(),
            "int" => "an integer".into(),
            "float" => "a float".into(),
            "char" => "a character".into(),
            "string" => "a string".into(),
            other => format!("`{other}`"),
        });
    }
    if ops {
        parts.push("an operator".into());
    }
    // Keep messages short.
    let shown: Vec<String> = if parts.len() > 8 {
        let mut v = parts[..7].to_vec();
        v.push(format!("{} more", parts.len() - 7));
        v
    } else {
        parts
    };
    let list = match shown.as_slice() {
        [] => return String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
    };
    format!("; expected {list}")
}

/// Extra explanations for common mistakes.
fn hints(slice: &[Spanned], at: usize, tok: &Token, expected: &[String]) -> Vec<String> {
    let wants = |n: &str| expected.iter().any(|e| e.trim_matches('"') == n);
    let k = slice.iter().position(|t| t.0 == at).unwrap_or(0);
    let prev = |back: usize| if k >= back { Some(&slice[k - back].1) } else { None };
    let mut notes = Vec::new();
    if matches!(tok, Token::True | Token::False | Token::Time) && wants("ident") {
        notes.push("`t`, `f` and `time` are reserved and cannot be used as names".to_string());
    }
    if prev(1) == Some(&Token::Time) && *tok != Token::LParen {
        notes.push("`time` is reserved: `time(exp)` evaluates `exp` and times it".to_string());
    } else if *tok == Token::Eq && !wants("ident") {
        notes.push("equality is written `==`; `=` only binds names".to_string());
    }
    if *tok == Token::RParen && prev(1) == Some(&Token::LParen) {
        notes.push(
            "a function takes at least one argument; a constant is defined with `name = exp;`"
                .to_string(),
        );
    }
    // `[]` followed by something that is not a type.
    if prev(1) == Some(&Token::RBracket) && prev(2) == Some(&Token::LBracket) {
        notes.push("an empty sequence must name its element type, e.g. `[] int`".to_string());
    }
    if matches!(tok, Token::ColonEq | Token::FatArrow | Token::AmpEq | Token::BarEq) {
        notes.push(format!("{tok} is not supported by this implementation"));
    }
    notes
}

/// How an unexpected token is named in a message, literals as written in the source.
fn describe_token(src: &str, l: usize, tok: &Token, r: usize) -> String {
    let text = src.get(l..r).unwrap_or_default();
    match tok {
        Token::Int(_) | Token::Float(_) => format!("number `{text}`"),
        Token::Char(_) => format!("character literal `{text}`"),
        _ => tok.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(src: &str) -> Expr {
        match parse_expr(src) {
            Ok(e) => e,
            Err(d) => panic!("{src}: {d:?}"),
        }
    }

    /// A compact rendering of an expression's structure, for tests.
    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Float(v) => format!("{v:?}"),
            ExprKind::Bool(b) => if *b { "t" } else { "f" }.into(),
            ExprKind::Char(c) => format!("`{}", *c as char),
            ExprKind::Str(s) => format!("{:?}", String::from_utf8_lossy(s)),
            ExprKind::Var(id) => id.name.clone(),
            ExprKind::Call { func, arg } => format!("{}({})", func.name, show(arg)),
            ExprKind::Pair(a, b) => format!("({}, {})", show(a), show(b)),
            ExprKind::If(c, a, b) => format!("if {} then {} else {}", show(c), show(a), show(b)),
            ExprKind::Let(bs, body) => {
                let bs: Vec<String> = bs.iter().map(|(p, e)| format!("{} = {}", pat(p), show(e))).collect();
                format!("let {} in {}", bs.join("; "), show(body))
            }
            ExprKind::ApplyToEach { body, binders, filter } => {
                let bs: Vec<String> =
                    binders.iter().map(|b| format!("{} in {}", pat(&b.pat), show(&b.seq))).collect();
                format!(
                    "{{{}{}{}}}",
                    body.as_ref().map_or(String::new(), |b| show(b) + " : "),
                    bs.join("; "),
                    filter.as_ref().map_or(String::new(), |f| format!(" | {}", show(f)))
                )
            }
            ExprKind::Seq(es) => {
                format!("[{}]", es.iter().map(show).collect::<Vec<_>>().join(", "))
            }
            ExprKind::EmptySeq(_) => "[]".into(),
            ExprKind::Range { start, end, stride } => format!(
                "[{}:{}{}]",
                show(start),
                show(end),
                stride.as_ref().map_or(String::new(), |s| format!(":{}", show(s)))
            ),
            ExprKind::Time(e) => format!("time({})", show(e)),
        }
    }

    fn pat(p: &Pattern) -> String {
        match &p.kind {
            PatternKind::Var(id) => id.name.clone(),
            PatternKind::Pair(a, b) => format!("({}, {})", pat(a), pat(b)),
            PatternKind::Con(c, a) => format!("{}({})", c.name, pat(a)),
        }
    }

    #[test]
    fn precedence_follows_the_spec() {
        assert_eq!(show(&expr("#[1,2] + 1")), "+((length([1, 2]), 1))");
        assert_eq!(show(&expr("- 3 * 2")), "*((negate(3), 2))");
        assert_eq!(show(&expr("2 - -3")), "-((2, negate(3)))");
        assert_eq!(show(&expr("a -> i + 1")), "+((->((a, i)), 1))");
        assert_eq!(show(&expr("x == y and p")), "and((==((x, y)), p))");
        assert_eq!(show(&expr("a or b and c")), "or((a, and((b, c))))");
        assert_eq!(show(&expr("1 - 2 - 3")), "-((-((1, 2)), 3))");
        assert_eq!(show(&expr("a -> b -> c")), "->((a, ->((b, c))))");
        assert_eq!(show(&expr("a ++ b ++ c")), "++((++((a, b)), c))");
        assert_eq!(show(&expr("s || 3 + 1")), "+((||((s, 3)), 1))");
        assert_eq!(show(&expr("a[i][j] ^ 2")), "^((elt((elt((a, i)), j)), 2))");
        assert_eq!(show(&expr("d <- {(p, x) : x in s}")), "<-((d, {(p, x) : x in s}))");
    }

    #[test]
    fn if_and_let_extend_to_the_right() {
        assert_eq!(show(&expr("[if c then 1 else 2, 3]")), "[if c then 1 else (2, 3)]");
        assert_eq!(show(&expr("[1, if c then 2 else 3]")), "[1, if c then 2 else 3]");
        assert_eq!(show(&expr("1 + if c then 2 else 3 * 4")), "+((1, if c then 2 else *((3, 4))))");
        assert_eq!(
            show(&expr("let a = 1; (b, c) = g(a); in a, b")),
            "let a = 1; (b, c) = g(a) in (a, b)"
        );
    }

    #[test]
    fn sequences_ranges_and_apply_to_each() {
        assert_eq!(show(&expr("[0:10]")), "[0:10]");
        assert_eq!(show(&expr("[0:#s:2]")), "[0:length(s):2]");
        assert_eq!(show(&expr("[[] int, [1]]")), "[[], [1]]");
        assert_eq!(
            show(&expr("{g(x, y) : x in xs; (y, z) in ps | x < y}")),
            "{g((x, y)) : x in xs; (y, z) in ps | <((x, y))}"
        );
        assert_eq!(show(&expr("{i in [0:n]; fl in flags | fl}")), "{i in [0:n]; fl in flags | fl}");
        assert_eq!(show(&expr("{a + 1 : a}")), "{+((a, 1)) : a in a}");
        assert_eq!(show(&expr("{w : item(k, w, ok) in items}")), "{w : item((k, (w, ok))) in items}");
        assert_eq!(show(&expr("time(g(1))")), "time(g(1))");
        assert_eq!(show(&expr("@(1, f)")), "string((1, f))");
    }

    #[test]
    fn patterns_only_from_pattern_syntax() {
        assert!(parse_expr("{x + 1 in s}").is_err());
        assert!(parse_expr("{a[i] in s}").is_err());
        let (items, diags) = parse_program("(r, point(a, b)) = g(1);");
        assert!(diags.is_empty());
        match &items[0] {
            TopLevel::Binding { pat: p, .. } => assert_eq!(pat(p), "(r, point((a, b)))"),
            other => panic!("{other:?}"),
        }
        let (_, diags) = parse_program("-x = 3;");
        assert_eq!(diags.len(), 1);
        assert!(diags[0].message.contains("cannot be used as a pattern"), "{:?}", diags[0]);
    }

    #[test]
    fn forms_and_recovery() {
        let src = "x = 5;\nif x > 2 then 1;\nx + 1;\n[1, 2, 3;\n[[1, 2], []];\nfunction g(y) = y * 2;\nlet z = 3 in z + ;\n{y * 2 : y in [1, 2, 3] | };\ng(g(x)) $";
        let items = parse_items(src);
        let oks: Vec<bool> = items.iter().map(|r| r.is_ok()).collect();
        assert_eq!(oks, vec![true, false, true, false, false, true, false, false, true]);
        let e = items[1].as_ref().unwrap_err();
        assert!(e[0].message.contains("`else`"), "{:?}", e);
        assert!(!is_incomplete(src));
        assert!(is_incomplete("let x = 1;"));
        assert!(is_incomplete("x = \"abc"));
    }

    #[test]
    fn functions_datatypes_commands() {
        let src = "function ff(x) : a -> a :: (a in number) = x;\n\
                   function g(point(x, y), d) : (point, int) -> int \"doc\" = x;\n\
                   function h(x) : int -> int;\n\
                   datatype tagged(int, a) :: (a in any);\n\
                   load \"foo.nesl\"; set print_length 20; describe ff; help; ? exit;";
        let (items, diags) = parse_program(src);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(items.len(), 10);
        match &items[1] {
            TopLevel::Function(f) => {
                assert_eq!(f.doc.as_deref(), Some("doc"));
                assert_eq!(pat(&f.params), "(point((x, y)), d)");
            }
            other => panic!("{other:?}"),
        }
        match &items[2] {
            TopLevel::Function(f) => assert!(f.body.is_none()),
            other => panic!("{other:?}"),
        }
        match &items[5] {
            TopLevel::Command(Command { kind: CommandKind::Set(n, v), .. }) => {
                assert_eq!(n.name, "print_length");
                assert_eq!(v, &vec!["20".to_string()]);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&items[9], TopLevel::Command(Command { kind: CommandKind::Exit, .. })));
    }
}
