//! regression: the project's regression corpus and the runner that checks it.
//!
//! Holds `.nesl` programs with expected transcripts, `.vcode` fixtures with expected
//! output and bad inputs with expected errors, and the comparison rule of the shared
//! conformance corpus.
