//! nesl-front: everything from NESL source text to VCODE.
//!
//! Pipeline: [`lexer`] (logos) → [`parser`] (lalrpop) → [`ast`] with a [`Span`] on every
//! node → [`check`]: name resolution and type inference ([`ty`]: Hindley–Milner with NESL's
//! type classes) → [`flatten`]: flattening (vectorisation) into VCODE text in the CMU
//! dialect, which the `vcode` crate parses and runs → [`toplevel`]: the NESL top level
//! (evaluate forms in order, print the transcript). Errors are [`Diagnostic`]s carrying
//! spans; rendering them with source snippets is the CLI's job.

pub mod ast;
pub mod check;
pub mod diag;
pub mod flatten;
pub mod lexer;
pub mod parser;
pub mod toplevel;
pub mod ty;

pub use ast::Span;
pub use diag::{DiagKind, Diagnostic};
