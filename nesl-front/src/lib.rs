//! nesl-front: everything from NESL source text to VCODE.
//!
//! Pipeline: [`lexer`] (logos) → [`parser`] (lalrpop) → [`ast`] with a [`Span`] on every
//! node → [`check`]: name resolution and type inference ([`ty`]: Hindley–Milner with NESL's
//! type classes) → [`flatten`]: flattening (vectorisation) into VCODE text in the CMU
//! dialect, which the `vcode` crate parses and runs; [`value`] prints values the way the
//! NESL top level does. Running programs and the top-level session are the driver's (the
//! root package). Errors are [`Diagnostic`]s carrying spans; rendering them with source
//! snippets is the driver's job.

pub mod ast;
pub mod check;
pub mod diag;
pub mod flatten;
mod lambda;
pub mod lexer;
pub mod parser;
pub mod ty;
pub mod value;

pub use ast::Span;
pub use diag::{DiagKind, Diagnostic};

/// The native stack a thread needs to run the front end on the deepest input it accepts:
/// the type checker, the flattener and the AST's destructor recurse on the expression
/// tree, and the checker's depth limits (a located error, never a stack overflow) are set
/// for this much stack. The `nesl` binary runs every command on such a thread; a library
/// user feeding it untrusted input should too (`std::thread::Builder::stack_size`). The
/// memory is reserved, not used: only the depth a program reaches is ever touched.
pub const STACK_SIZE: usize = 1 << 30;
