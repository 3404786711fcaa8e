//! Finding regression cases (`.nesl` programs with an `.expected` transcript beside them)
//! and checking one case: produce its transcript, compare it by the rule of
//! [`mod@crate::compare`].
//!
//! How a transcript is produced is a parameter (a closure from the program's path and
//! source to its transcript), so the runner is independent of the front end and of the
//! back end; the `nesl` driver's `corpus::transcript` is the one the tools use.

use crate::compare::compare;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// One regression case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// The program's path relative to the suite's root, without `.nesl`
    /// (`scalar/01-int-arith`).
    pub name: String,
    /// The `.nesl` program.
    pub source: PathBuf,
    /// The expected transcript, `None` when the program has no `.expected` beside it.
    pub expected: Option<PathBuf>,
}

/// Every `.nesl` file under `root` (recursively), in path order, each with the
/// `.expected` file of the same stem when there is one. `root` may also be a single
/// `.nesl` file.
pub fn discover(root: &Path) -> Result<Vec<Case>, String> {
    let meta = fs::metadata(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut files = Vec::new();
    if meta.is_file() {
        files.push(root.to_path_buf());
    } else {
        collect(root, &mut files)?;
    }
    files.sort();
    Ok(files
        .into_iter()
        .map(|source| {
            let rel = source.strip_prefix(root).unwrap_or(&source).with_extension("");
            let name = if rel.as_os_str().is_empty() {
                source.with_extension("").file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
            } else {
                rel.to_string_lossy().replace('\\', "/")
            };
            let expected = source.with_extension("expected");
            let expected = expected.is_file().then_some(expected);
            Case { name, source, expected }
        })
        .collect())
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "nesl") {
            out.push(path);
        }
    }
    Ok(())
}

/// The result of checking one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The transcript matches.
    Pass,
    /// It does not (or the program could not be read, or the implementation panicked):
    /// the first difference, or what went wrong.
    Fail(String),
    /// Nothing to compare with (no `.expected` file).
    Skip(String),
}

impl Verdict {
    /// True for [`Verdict::Pass`].
    pub fn passed(&self) -> bool {
        matches!(self, Verdict::Pass)
    }
}

/// Produces the transcript of a program from its path and source text.
pub type Transcriber<'a> = dyn FnMut(&Path, &str) -> String + 'a;

/// Checks one case: reads the program and its expected transcript, produces the actual
/// transcript with `transcribe` (a panic inside it is caught and fails the case) and
/// compares the two.
pub fn check_case(case: &Case, transcribe: &mut Transcriber<'_>) -> Verdict {
    let Some(expected_path) = &case.expected else {
        return Verdict::Skip(format!("no {} beside it", case.source.with_extension("expected").display()));
    };
    let read = |p: &Path| fs::read(p).map(|b| String::from_utf8_lossy(&b).into_owned());
    let src = match read(&case.source) {
        Ok(s) => s,
        Err(e) => return Verdict::Fail(format!("{}: {e}", case.source.display())),
    };
    let expected = match read(expected_path) {
        Ok(s) => s,
        Err(e) => return Verdict::Fail(format!("{}: {e}", expected_path.display())),
    };
    let actual = match catch_unwind(AssertUnwindSafe(|| transcribe(&case.source, &src))) {
        Ok(t) => t,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            return Verdict::Fail(format!("the implementation panicked: {msg}"));
        }
    };
    match compare(&expected, &actual) {
        Ok(()) => Verdict::Pass,
        Err(diff) => Verdict::Fail(diff),
    }
}

/// Counts of a suite run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases without an expected transcript.
    pub skipped: usize,
}

impl Summary {
    /// Adds one verdict.
    pub fn add(&mut self, v: &Verdict) {
        match v {
            Verdict::Pass => self.passed += 1,
            Verdict::Fail(_) => self.failed += 1,
            Verdict::Skip(_) => self.skipped += 1,
        }
    }

    /// Cases that were compared.
    pub fn total(&self) -> usize {
        self.passed + self.failed
    }
}

/// Checks every case under `root`, calling `report` after each one; returns the counts.
pub fn run_suite(
    root: &Path,
    transcribe: &mut Transcriber<'_>,
    report: &mut dyn FnMut(&Case, &Verdict),
) -> Result<Summary, String> {
    let mut summary = Summary::default();
    for case in discover(root)? {
        let v = check_case(&case, transcribe);
        report(&case, &v);
        summary.add(&v);
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh scratch directory in the system temporary directory.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("nesl-regression-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("sub")).expect("create scratch dir");
        dir
    }

    fn write(p: &Path, s: &str) {
        fs::write(p, s).expect("write scratch file");
    }

    /// A fake implementation: the transcript of a program is its text with every `;`
    /// turned into a newline, and `boom` panics.
    fn fake(_: &Path, src: &str) -> String {
        if src.contains("boom") {
            panic!("boom happened");
        }
        src.replace(';', "\n")
    }

    #[test]
    fn suite() {
        let dir = scratch("suite");
        write(&dir.join("a.nesl"), "it = 1 : int;");
        write(&dir.join("a.expected"), "it = 1 : int\n");
        write(&dir.join("sub/b.nesl"), "it = [1, 2] : [int];");
        write(&dir.join("sub/b.expected"), "it = [1, 3] : [int]\n");
        write(&dir.join("sub/c.nesl"), "nothing to compare with");
        write(&dir.join("sub/d.nesl"), "boom");
        write(&dir.join("sub/d.expected"), "");
        write(&dir.join("notes.txt"), "ignored");

        let cases = discover(&dir).expect("discover");
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "sub/b", "sub/c", "sub/d"]);
        assert!(cases[2].expected.is_none());

        let mut seen = Vec::new();
        let summary = run_suite(&dir, &mut fake, &mut |c, v| seen.push((c.name.clone(), v.clone()))).expect("run");
        assert_eq!(summary, Summary { passed: 1, failed: 2, skipped: 1 });
        assert_eq!(summary.total(), 3);
        assert_eq!(seen[0].1, Verdict::Pass);
        match &seen[1].1 {
            Verdict::Fail(m) => assert!(m.contains("expected `3`, got `2`"), "{m}"),
            v => panic!("unexpected verdict {v:?}"),
        }
        assert!(matches!(&seen[2].1, Verdict::Skip(_)));
        match &seen[3].1 {
            Verdict::Fail(m) => assert!(m.contains("panicked: boom happened"), "{m}"),
            v => panic!("unexpected verdict {v:?}"),
        }

        // A single file is a suite of one case.
        let one = discover(&dir.join("a.nesl")).expect("discover one");
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].name, "a");
        assert!(discover(&dir.join("missing")).is_err());
        let _ = fs::remove_dir_all(&dir);
    }
}
