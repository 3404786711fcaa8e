//! Programs of a regression corpus run through the driver: the transcript of a program in
//! a fresh top level, and one case checked on one configuration. Finding cases and
//! comparing transcripts is the `regression` crate's ([`regression::runner`],
//! [`mod@regression::compare`]); how the programs run is decided here.

use crate::exec::{Config, Executor};
use crate::session::{Renderer, TopLevel};
use regression::{Case, Verdict};
use std::path::Path;

/// Evaluates a NESL program in a fresh top level running on `executor` and returns its
/// transcript (diagnostics rendered by `render`, the plain renderer when `None`).
pub fn transcript_on(path: &Path, src: &str, executor: Box<dyn Executor>, render: Option<Renderer>) -> String {
    // As `nesl run` runs a program (so the corpus runs with values dropped when dead).
    let mut top = TopLevel::new(executor).dropping_dead_globals();
    if let Some(r) = render {
        top = top.with_renderer(r);
    }
    let mut out = Vec::new();
    if let Err(e) = top.eval_source(&path.display().to_string(), src, &mut out) {
        out.extend_from_slice(format!("\nerror: writing the transcript failed: {e}\n\n").as_bytes());
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The transcript of a NESL program on a fresh executor of `config`; a backend that
/// cannot start gives a one-paragraph error transcript.
pub fn transcript(path: &Path, src: &str, config: &Config, render: Option<Renderer>) -> String {
    match config.executor() {
        Ok(ex) => transcript_on(path, src, ex, render),
        Err(e) => format!("error: {e}\n\n"),
    }
}

/// Programs that use files run one at a time: a program runs on several configurations
/// at once, and its file names are fixed.
static FILE_PROGRAMS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Checks one case in-process on `config` (the regression tests verify every program
/// before it runs: [`Config::with_verify`]). Cases whose source names a file under
/// `/tmp/` never run concurrently with one another.
pub fn check_case(case: &Case, config: &Config) -> Verdict {
    let uses_files = std::fs::read_to_string(&case.source).is_ok_and(|s| s.contains("/tmp/"));
    let _one_at_a_time = uses_files.then(|| FILE_PROGRAMS.lock().unwrap_or_else(|e| e.into_inner()));
    regression::check_case(case, &mut |path: &Path, src: &str| transcript(path, src, config, None))
}
