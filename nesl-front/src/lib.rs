//! nesl-front: everything from NESL source text to VCODE.
//!
//! Pipeline: [`lexer`] (logos) → parser (lalrpop) → [`ast`] with a [`Span`] on every node →
//! name resolution and type inference ([`ty`]: Hindley–Milner with NESL's type classes) →
//! flattening (vectorisation) into VCODE text in the CMU dialect, which the `vcode` crate
//! parses and runs. Errors are [`Diagnostic`]s carrying spans; rendering them with source
//! snippets is the CLI's job, not this crate's.

pub mod ast;
pub mod diag;
pub mod ty;

pub use ast::Span;
pub use diag::{Diagnostic, DiagKind};
