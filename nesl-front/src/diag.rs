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

/// Maps byte offsets of one source text to 1-based line and column numbers. Columns
/// count characters, as rustc's do (and the snippets of rendered diagnostics): on a line
/// with non-ASCII text they differ from byte offsets.
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    /// The text, kept to count the characters of lines that are not all ASCII.
    text: std::sync::Arc<str>,
    /// Per line: whether it is all ASCII (its columns are byte offsets).
    ascii: Vec<bool>,
}

impl LineIndex {
    /// Indexes `src`.
    pub fn new(src: &str) -> Self {
        let mut line_starts = vec![0];
        let mut ascii = Vec::new();
        let mut all_ascii = true;
        for (i, b) in src.bytes().enumerate() {
            all_ascii &= b.is_ascii();
            if b == b'\n' {
                line_starts.push(i + 1);
                ascii.push(all_ascii);
                all_ascii = true;
            }
        }
        ascii.push(all_ascii);
        LineIndex { line_starts, text: src.into(), ascii }
    }

    /// The byte offset of a 1-based (line, column) position, the column counted in
    /// characters (clamped to the text of `len` bytes).
    pub fn offset(&self, line: usize, col: usize, len: usize) -> usize {
        let Some(l) = line.checked_sub(1).filter(|&l| l < self.line_starts.len()) else { return len };
        let start = self.line_starts[l];
        let k = col.saturating_sub(1);
        let at = if self.ascii[l] {
            start + k
        } else {
            let end = self.line_starts.get(l + 1).copied().unwrap_or(self.text.len());
            let line_text = self.text.get(start..end).unwrap_or("");
            match line_text.char_indices().nth(k) {
                Some((b, _)) => start + b,
                None => start + line_text.len() + k.saturating_sub(line_text.chars().count()),
            }
        };
        at.min(len)
    }

    /// 1-based (line, column) of a byte offset; the column counts characters (an offset
    /// inside a character is that character's column).
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.line_starts[line];
        if self.ascii[line] {
            return (line + 1, offset - start + 1);
        }
        let mut end = offset.min(self.text.len());
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let chars = self.text.get(start..end.max(start)).map_or(0, |t| t.chars().count());
        (line + 1, chars + 1)
    }
}

#[cfg(test)]
mod line_index_tests {
    use super::LineIndex;

    #[test]
    fn columns_count_characters_on_non_ascii_lines() {
        let src = "x = 1;\ny = \"h\u{e9}llo\"[9] + \u{1f600};\nz;";
        let idx = LineIndex::new(src);
        // `[` of line 2: `y = "h`, `é` (2 bytes), `llo"`: character 12, byte 13.
        let bracket = src.find('[').unwrap();
        assert_eq!(idx.line_col(bracket), (2, 12));
        assert_eq!(idx.offset(2, 12, src.len()), bracket);
        // Past the 4-byte emoji.
        let semi = src.find("\u{1f600};").unwrap() + 4;
        let (l, c) = idx.line_col(semi);
        assert_eq!((l, c), (2, 19));
        assert_eq!(idx.offset(l, c, src.len()), semi);
        // ASCII lines: bytes and characters agree.
        assert_eq!(idx.line_col(src.len() - 1), (3, 2));
        assert_eq!(idx.offset(3, 2, src.len()), src.len() - 1);
        assert_eq!(idx.offset(1, 1, src.len()), 0);
        // Out of range: clamped, never a panic.
        assert_eq!(idx.offset(9, 1, src.len()), src.len());
        assert_eq!(idx.offset(2, 500, src.len()), src.len());
    }
}
