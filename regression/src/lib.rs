//! regression: the project's regression corpus and the runner that checks it.
//!
//! The corpus lives beside this crate: `regression/nesl/**` holds `.nesl` programs with
//! their expected transcripts, `regression/vcode/` VCODE fixtures. This crate provides
//! the comparison rule of the shared conformance corpus ([`mod@compare`]) and the discovery
//! and checking of cases ([`runner`]). It decides nothing about how programs run: the
//! runner takes the function that produces a transcript as a parameter (the `nesl`
//! driver's `corpus` module supplies it).

#![deny(missing_docs)]

pub mod compare;
pub mod runner;

pub use compare::compare;
pub use runner::{check_case, discover, run_suite, Case, Summary, Verdict};

use std::path::{Path, PathBuf};

/// The shared conformance corpus, when it is present: `$NESL_CONFORMANCE`, or
/// `../shared/conformance/nesl` (then `/work/shared/conformance/nesl`) relative to the
/// workspace root `root`.
pub fn conformance_dir(root: &Path) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("NESL_CONFORMANCE") {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(root.join("../shared/conformance/nesl"));
    candidates.push(PathBuf::from("/work/shared/conformance/nesl"));
    candidates.into_iter().find(|p| p.is_dir())
}
