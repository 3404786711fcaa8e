//! Diagnostics: what went wrong in a NESL source, and where.
//!
//! Library code never prints; it returns [`Diagnostic`]s. The CLI renders them with
//! `file:line:col` and a source snippet. [`LineIndex`] turns byte offsets into
//! line/column pairs for that purpose.

use crate::ast::Span;

/// The family a diagnostic belongs to; also decides the first word of its rendering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiagKind {
    /// Bad characters, unterminated strings or comments, malformed numbers.
    Lex,
    /// The token stream does not match the grammar.
    Syntax,
    /// A name that is not defined, defined twice in one pattern, or reserved.
    Name,
    /// Types that do not unify, class constraints not met, wrong arity.
    Type,
    /// Something the compiler (flattening, code generation) cannot handle.
    Compile,
    /// A failure while the program runs (an index out of range, a division by zero...).
    Runtime,
}

impl DiagKind {
    /// The family in words (`type error`, ...), as plain renderings name it.
    pub fn describe(self) -> &'static str {
        match self {
            DiagKind::Lex => "lexical error",
            DiagKind::Syntax => "syntax error",
            DiagKind::Name => "name error",
            DiagKind::Type => "type error",
            DiagKind::Compile => "compile error",
            DiagKind::Runtime => "runtime error",
        }
    }
}

/// One error (or warning) about a source file, with the span it concerns.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// Which family of error this is.
    pub kind: DiagKind,
    /// One-line human-readable message.
    pub message: String,
    /// The primary location.
    pub span: Span,
    /// Extra lines of explanation (each rendered as a `note:`), possibly with spans.
    pub notes: Vec<(Option<Span>, String)>,
}

impl Diagnostic {
    /// A diagnostic with no notes.
    pub fn new(kind: DiagKind, span: Span, message: impl Into<String>) -> Self {
        Diagnostic { kind, message: message.into(), span, notes: Vec::new() }
    }

    /// Adds a note, optionally pointing at another span.
    pub fn with_note(mut self, span: Option<Span>, note: impl Into<String>) -> Self {
        self.notes.push((span, note.into()));
        self
    }
}

/// One NESL source text the session has read: its name (a path as the user gave it,
/// `<prelude>`, or what the REPL calls typed input), the text, and its line index.
#[derive(Clone, Debug)]
pub struct Source {
    /// The name used in messages.
    pub name: std::sync::Arc<str>,
    /// The text.
    pub text: std::sync::Arc<str>,
    /// Line starts of `text`.
    pub index: LineIndex,
}

impl Source {
    /// A source named `name` holding `text`.
    pub fn new(name: &str, text: &str) -> Self {
        Source { name: name.into(), text: text.into(), index: LineIndex::new(text) }
    }
    /// 1-based (line, column) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        self.index.line_col(offset)
    }
}

/// Maps byte offsets of one source text to 1-based line and column numbers.
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes `src`.
    pub fn new(src: &str) -> Self {
        let mut line_starts = vec![0];
        for (i, b) in src.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        LineIndex { line_starts }
    }

    /// The byte offset of a 1-based (line, column) position (clamped to the text of
    /// `len` bytes).
    pub fn offset(&self, line: usize, col: usize, len: usize) -> usize {
        match line.checked_sub(1).and_then(|l| self.line_starts.get(l)) {
            Some(&start) => (start + col.saturating_sub(1)).min(len),
            None => len,
        }
    }

    /// 1-based (line, column) of a byte offset; the column counts bytes.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        (line + 1, offset - self.line_starts[line] + 1)
    }
}
