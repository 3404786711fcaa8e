//! `nesl`: the driver of the NESL system. The one pipeline (source -> checked AST ->
//! `vcode::Program` -> optimised program -> an executor on a backend) and the top-level
//! session; the `nesl` command line (`src/main.rs`, `src/cmd/`) calls it.

pub mod pipeline;
