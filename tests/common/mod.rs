//! Helpers of the scripted-session tests: run the built `nesl` binary on a script fed to
//! its standard input and compare what it prints with an expected transcript.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The folder of the session fixtures (`tests/sessions`).
pub fn sessions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("sessions")
}

/// Runs `nesl ARGS` in `tests/sessions` with `input` on standard input (not a terminal)
/// and returns its exit status, standard output and standard error.
pub fn run_nesl(args: &[&str], input: &str) -> (i32, String, String) {
    run_nesl_env(args, input, &[])
}

/// [`run_nesl`] with extra environment variables.
pub fn run_nesl_env(args: &[&str], input: &str, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(sessions())
        .env("NESL_HISTORY", "/nonexistent/history")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the nesl binary starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    // A session that ends early (a file that does not load) may not read its script.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    let out = child.wait_with_output().expect("nesl runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `nesl ARGS` as [`run_nesl`] does, with standard error sent into the same pipe as
/// standard output (`2>&1`): the transcript as a terminal shows it. Returns the exit
/// status and that text.
pub fn run_nesl_merged(args: &[&str], input: &str) -> (i32, String) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" \"$@\" 2>&1")
        .arg(env!("CARGO_BIN_EXE_nesl"))
        .args(args)
        .current_dir(sessions())
        .env("NESL_HISTORY", "/nonexistent/history")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the nesl binary starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    let out = child.wait_with_output().expect("nesl runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Compares `actual` with the file `tests/sessions/NAME`; with `NESL_BLESS=1` in the
/// environment, writes `actual` there instead.
pub fn check_transcript(name: &str, actual: &str) {
    let path = sessions().join(name);
    if std::env::var("NESL_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, actual).expect("the expected transcript is written");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    if expected != actual {
        let line = expected.lines().zip(actual.lines()).position(|(a, b)| a != b);
        panic!(
            "the transcript differs from {} (first difference at line {}; NESL_BLESS=1 rewrites it)\n--- actual ---\n{actual}",
            path.display(),
            line.map_or(expected.lines().count().min(actual.lines().count()) + 1, |l| l + 1)
        );
    }
}

/// Asserts that `text` contains every one of `parts`, in this order.
pub fn assert_in_order(text: &str, parts: &[&str]) {
    let mut at = 0;
    for p in parts {
        match text[at..].find(p) {
            Some(k) => at += k + p.len(),
            None => panic!("expected `{p}` after byte {at} of:\n{text}"),
        }
    }
}

/// A file or folder under the temporary directory for one test, removed with all it
/// holds when dropped: also when the test fails (the guard drops as the panic unwinds),
/// so no run leaves scratch files behind. Its name carries the test process's id, so
/// test binaries running at once never share one.
pub struct Scratch(PathBuf);

impl Scratch {
    /// `$TMPDIR/nesl-TAG-PID-NAME`, with whatever an earlier run left there removed.
    pub fn path(tag: &str, name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("nesl-{tag}-{}-{name}", std::process::id()));
        remove_scratch(&p);
        Scratch(p)
    }
    /// [`Scratch::path`] as a file holding `text`.
    pub fn file(tag: &str, name: &str, text: &str) -> Scratch {
        let s = Scratch::path(tag, name);
        std::fs::write(&s.0, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", s.0.display()));
        s
    }
    /// [`Scratch::path`] as a fresh, empty folder.
    pub fn dir(tag: &str, name: &str) -> Scratch {
        let s = Scratch::path(tag, name);
        std::fs::create_dir_all(&s.0).unwrap_or_else(|e| panic!("cannot make {}: {e}", s.0.display()));
        s
    }
    /// The path as text (a command-line argument).
    pub fn as_str(&self) -> &str {
        self.0.to_str().expect("the temporary directory's path is UTF-8")
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl std::fmt::Display for Scratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.display().fmt(f)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        remove_scratch(&self.0);
    }
}

/// Removes the file or folder at `p`, if there is one.
fn remove_scratch(p: &Path) {
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}
