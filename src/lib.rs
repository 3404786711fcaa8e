//! `nesl`: the driver of the NESL system. It owns the one pipeline and the top-level
//! session; the `nesl` command line (`src/main.rs`, `src/cmd/`) and the tests call it.
//!
//! - [`pipeline`]: source text -> checked forms -> `vcode::Program` -> optimised program,
//!   and VCODE/FCODE files read and verified.
//! - [`backend`]: the vector libraries (CPU, CUDA) and which this machine has.
//! - [`exec`]: executors, how compiled code runs on a backend at an optimisation level
//!   ([`exec::Config`] is the one place that decides it).
//! - [`session`]: the NESL top level (evaluate forms, print the transcript, render
//!   run-time errors at their NESL place).
//! - [`corpus`]: a program's transcript in a fresh session, and a regression case checked
//!   on a configuration (the `regression` crate finds and compares cases).
//! - [`diagnostics`]: rendering diagnostics for people.
//! - [`display`]: the displays of the graphics library (a web page, SVG files).
//! - [`Error`]: what crosses these boundaries.

pub mod backend;
pub mod corpus;
pub mod diagnostics;
pub mod display;
mod error;
pub mod exec;
pub mod pipeline;
pub mod session;

pub use backend::Backend;
pub use error::{trap_message, Backtrace, Error, Result, RuntimeError};
pub use exec::{Config, ExecResult, Executor};
pub use session::TopLevel;
