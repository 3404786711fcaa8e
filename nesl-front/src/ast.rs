//! The NESL abstract syntax tree: the contract between the parser, the type checker and
//! the flattener.
//!
//! Conventions (fixed; every pass relies on them):
//! - Every node carries a [`Span`] (byte offsets into the source text of one file).
//! - Names are folded to **lower case** by the parser (NESL is case-insensitive);
//!   [`Ident::name`] is always lower case. Character and string literals keep their case.
//! - Tuples are **right-nested pairs**: `(a, b, c)` is `Pair(a, Pair(b, c))`, in
//!   expressions, patterns and types alike. A function's argument is one tuple:
//!   `f(x, y, z)` is `Call { func: f, arg: Pair(x, Pair(y, z)) }`.
//! - Infix and prefix operators are calls of the function with the operator's name:
//!   `a + b` is `Call { func: "+", arg: Pair(a, b) }`; `-x` is `Call { func: "negate", .. }`;
//!   `#x` is `length`; `@x` is `string`; `a[i]` is `elt`; `a -> i` is `->` (read);
//!   `a <- i` is `<-` (write); `a ++ b` is `++`; `s || n` is `||`; `==` `/=` `<` `>` `<=`
//!   `>=` `*` `/` `^` `and` `or` `xor` `nand` `nor` keep their own names.
//!   The `func` ident's span is the operator's span.
//! - The type checker fills [`Expr::ty`] on every expression and [`Ident::res`] on every
//!   name use; the parser leaves them `None` / [`Res::Unresolved`].

use crate::ty::Type;

/// A byte range `[start, end)` in the source text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl Span {
    /// The span `[start, end)`.
    pub fn new(start: usize, end: usize) -> Self {
        Span { start: start as u32, end: end as u32 }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// What a name use refers to, as decided by name resolution.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Res {
    /// Not resolved yet (parser output).
    #[default]
    Unresolved,
    /// A variable bound by a pattern in an enclosing `let`, apply-to-each or the
    /// function's parameters.
    Local,
    /// A top-level binding (`x = e;`) made by an earlier form.
    Global,
    /// A user-defined function.
    Function,
    /// A function or constant of the standard library (prelude).
    Builtin,
    /// The constructor of a user (or predefined, e.g. `stream`) datatype.
    Constructor,
}

/// A name occurrence (definition or use).
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name, folded to lower case.
    pub name: String,
    /// Where it appears.
    pub span: Span,
    /// What it refers to (filled by name resolution; only meaningful on uses).
    pub res: Res,
}

impl Ident {
    /// An unresolved identifier.
    pub fn new(name: impl Into<String>, span: Span) -> Self {
        Ident { name: name.into(), span, res: Res::Unresolved }
    }
}

/// A whole source file: its top-level forms in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Forms in source order.
    pub items: Vec<TopLevel>,
}

/// A top-level form, terminated by `;` or `$` in the source.
#[derive(Clone, Debug, PartialEq)]
pub enum TopLevel {
    /// `function name(args) [: typespec] ["doc"] = body;` (or a declaration without body).
    Function(FunDef),
    /// `datatype name(t1, ..., tn) [:: context];`
    Datatype(DataDef),
    /// `pattern = exp;` — binds global variables.
    Binding {
        /// What is bound.
        pat: Pattern,
        /// The value.
        expr: Expr,
        /// The whole form.
        span: Span,
    },
    /// `exp;` — evaluated and bound to `it`.
    Expr(Expr),
    /// A top-level command (`load`, `describe`, `set`, ...).
    Command(Command),
}

impl TopLevel {
    /// The span of the whole form.
    pub fn span(&self) -> Span {
        match self {
            TopLevel::Function(f) => f.span,
            TopLevel::Datatype(d) => d.span,
            TopLevel::Binding { span, .. } => *span,
            TopLevel::Expr(e) => e.span,
            TopLevel::Command(c) => c.span,
        }
    }
}

/// A function definition.
#[derive(Clone, Debug, PartialEq)]
pub struct FunDef {
    /// The function's name.
    pub name: Ident,
    /// The argument pattern: the parameters as one (right-nested pair) tuple pattern.
    pub params: Pattern,
    /// The optional declared type.
    pub sig: Option<TypeSpec>,
    /// The optional documentation string.
    pub doc: Option<String>,
    /// The body; `None` for a declaration without body.
    pub body: Option<Expr>,
    /// The whole definition.
    pub span: Span,
}

/// A datatype (record) definition: `datatype name(t1, ..., tn) :: (a in class; ...)`.
#[derive(Clone, Debug, PartialEq)]
pub struct DataDef {
    /// The datatype's (and its constructor's) name.
    pub name: Ident,
    /// The field types, in order (the record is represented as their right-nested tuple).
    pub fields: Vec<TypeExpr>,
    /// Class constraints on the type variables used in the fields.
    pub context: Vec<(Ident, Ident)>,
    /// The whole definition.
    pub span: Span,
}

/// A type with an optional context: `t :: (a in number; b in any)`.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeSpec {
    /// The type.
    pub ty: TypeExpr,
    /// `(type variable, class name)` pairs.
    pub context: Vec<(Ident, Ident)>,
    /// The whole type spec.
    pub span: Span,
}

/// A type as written in the source.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    /// What kind of type.
    pub kind: TypeExprKind,
    /// Where it is written.
    pub span: Span,
}

/// The forms of written types.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeExprKind {
    /// `int`, `bool`, `float`, `char`, a type variable, or a datatype without arguments.
    Name(Ident),
    /// `[t]`.
    Seq(Box<TypeExpr>),
    /// `t1, t2` (right-nested for longer tuples).
    Pair(Box<TypeExpr>, Box<TypeExpr>),
    /// `arg -> result`.
    Fun(Box<TypeExpr>, Box<TypeExpr>),
    /// `name(t1, ..., tn)` — a datatype applied to type arguments.
    Data(Ident, Vec<TypeExpr>),
}

/// A pattern (in function parameters, `let` bindings, apply-to-each binders and global
/// bindings).
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    /// What kind of pattern.
    pub kind: PatternKind,
    /// Where it is written.
    pub span: Span,
    /// The type of the matched value (filled by the type checker).
    pub ty: Option<Type>,
}

/// The forms of patterns.
#[derive(Clone, Debug, PartialEq)]
pub enum PatternKind {
    /// Binds a variable.
    Var(Ident),
    /// A pair `p1, p2` (right-nested for longer tuples).
    Pair(Box<Pattern>, Box<Pattern>),
    /// A datatype constructor applied to the field patterns (`point(x, y)`); the fields
    /// are a single (right-nested pair) pattern, as for calls.
    Con(Ident, Box<Pattern>),
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What kind of expression.
    pub kind: ExprKind,
    /// Where it is written.
    pub span: Span,
    /// Its type (filled by the type checker). Inside a polymorphic function it may
    /// contain that function's generalised type variables; everywhere else it is ground.
    pub ty: Option<Type>,
}

impl Expr {
    /// An untyped expression.
    pub fn new(kind: ExprKind, span: Span) -> Self {
        Expr { kind, span, ty: None }
    }

    /// Calls `f` on each direct subexpression, in source order (for walks that do not
    /// care which names the subexpression binds).
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Call { arg, .. } => f(arg),
            ExprKind::Pair(a, b) => {
                f(a);
                f(b);
            }
            ExprKind::If(c, a, b) => {
                f(c);
                f(a);
                f(b);
            }
            ExprKind::Let(binds, body) => {
                for (_, x) in binds {
                    f(x);
                }
                f(body);
            }
            ExprKind::ApplyToEach { body, binders, filter } => {
                for b in binders {
                    f(&b.seq);
                }
                for x in filter.iter().chain(body.iter()) {
                    f(x);
                }
            }
            ExprKind::Seq(es) => es.iter().for_each(|x| f(x)),
            ExprKind::Range { start, end, stride } => {
                f(start);
                f(end);
                if let Some(s) = stride {
                    f(s);
                }
            }
            ExprKind::Time(x) => f(x),
            ExprKind::Var(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Char(_)
            | ExprKind::Str(_)
            | ExprKind::EmptySeq(_) => {}
        }
    }
}

/// One binder of an apply-to-each: `pattern in seq`. (A bare `NAME` binder is parsed as
/// `NAME in NAME`.)
#[derive(Clone, Debug, PartialEq)]
pub struct Binder {
    /// The pattern bound to each element.
    pub pat: Pattern,
    /// The sequence iterated over.
    pub seq: Expr,
}

/// The forms of expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// Integer literal.
    Int(i64),
    /// Float literal.
    Float(f64),
    /// `t` / `f`.
    Bool(bool),
    /// Character literal (`` `a ``); also `space`, `newline`, `tab` resolve as builtins.
    Char(u8),
    /// String literal: a `[char]`.
    Str(Vec<u8>),
    /// A variable, global, constant (`pi`, `max_int`) or a function name used as a value.
    Var(Ident),
    /// A call `func(arg)` of a function, builtin, operator or datatype constructor; `arg`
    /// is the argument tuple (right-nested pairs).
    Call {
        /// The called name.
        func: Ident,
        /// The argument tuple.
        arg: Box<Expr>,
    },
    /// `a, b`.
    Pair(Box<Expr>, Box<Expr>),
    /// `if c then a else b`.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `let p1 = e1; p2 = e2 in body` — bindings in order, each visible to the next.
    Let(Vec<(Pattern, Expr)>, Box<Expr>),
    /// `{ body : binders | filter }`. `body` is `None` for `{ p in s | c }`, whose
    /// value is the elements themselves (then there is exactly one binder and its
    /// pattern is the result).
    ApplyToEach {
        /// The body, or `None` for the bodyless form.
        body: Option<Box<Expr>>,
        /// One or more binders, all over sequences of equal length.
        binders: Vec<Binder>,
        /// The optional filter.
        filter: Option<Box<Expr>>,
    },
    /// `[e1, ..., en]`, n ≥ 1.
    Seq(Vec<Expr>),
    /// `[] t` — an empty sequence of element type `t`.
    EmptySeq(TypeExpr),
    /// `[start:end]` or `[start:end:stride]`.
    Range {
        /// First element.
        start: Box<Expr>,
        /// Exclusive bound.
        end: Box<Expr>,
        /// Step (default 1).
        stride: Option<Box<Expr>>,
    },
    /// `time(e)` — the value and the elapsed seconds.
    Time(Box<Expr>),
}

/// A top-level command.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    /// What command.
    pub kind: CommandKind,
    /// The whole command.
    pub span: Span,
}

/// The top-level commands the system understands.
#[derive(Clone, Debug, PartialEq)]
pub enum CommandKind {
    /// `load "file";` (`None`: reload the last file).
    Load(Option<String>),
    /// `load exp;` with an expression that computes the file name (`load dir ++ "x";`),
    /// evaluated at the top level; it must be a `[char]`.
    LoadExpr(Box<Expr>),
    /// `describe name;`
    Describe(Ident),
    /// `set name value;` — e.g. `set arg_check off;`, `set print_length 20;`.
    Set(Ident, Vec<String>),
    /// `help;` or `?`
    Help,
    /// `exit;`
    Exit,
}
