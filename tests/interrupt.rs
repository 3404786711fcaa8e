//! Ctrl-C on a terminal (issue 16): the commands run on a pseudo-terminal, the test
//! types Ctrl-C during an endless evaluation. `nesl repl` and `nesl debug` stop the
//! evaluation with `interrupted` and go on with everything defined before; `nesl run`
//! exits with status 130.

mod common;
use common::Scratch;
use rexpect::process::WaitStatus;
use rexpect::session::{spawn_with_options, Options, PtySession};
use std::process::Command;
use std::time::{Duration, Instant};

/// The prompts of `nesl repl` and `nesl debug`.
const R: &str = "<Nesl> ";
const D: &str = "(ndb) ";

/// Most milliseconds from Ctrl-C to the `interrupted` message. The goal is 100 ms; the
/// bound leaves room for a loaded test machine (the latency is printed).
const LATENCY_MS: u128 = 2000;

/// `nesl ARGS` on a fresh pseudo-terminal (no history read or kept: its file cannot be
/// made).
fn spawn(args: &[&str]) -> PtySession {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nesl"));
    cmd.args(args).env("NESL_HISTORY", "/nonexistent/history").env("NESL_THREADS", "2").env("TERM", "xterm");
    spawn_with_options(cmd, Options::new().timeout_ms(Some(30_000)).strip_ansi_escape_codes(true)).expect("spawn nesl on a pty")
}

/// A scratch `.nesl` file holding `text` (removed when dropped).
fn program(name: &str, text: &str) -> Scratch {
    Scratch::file("interrupt", name, text)
}

/// Waits for the prompt, then types `line` (a line editor in raw mode drops what was
/// typed before it was ready).
fn say(p: &mut PtySession, prompt: &str, line: &str) {
    p.exp_string(prompt).unwrap_or_else(|e| panic!("no prompt `{prompt}` before `{line}`: {e}"));
    p.send_line(line).unwrap();
}

/// Waits `ms`, types Ctrl-C and returns how long `interrupted` took to appear.
fn interrupt(p: &mut PtySession, ms: u64) -> u128 {
    std::thread::sleep(Duration::from_millis(ms));
    let t = Instant::now();
    p.send_control('c').unwrap();
    p.exp_string("interrupted").expect("`interrupted` after Ctrl-C");
    t.elapsed().as_millis()
}

/// An endless tail recursion and an endless loop of large vector operations are both
/// stopped; the definitions made before (and `it`) are still there afterwards.
#[test]
fn repl_goes_on_after_ctrl_c() {
    let mut p = spawn(&["repl", "--backend", "cpu"]);
    say(&mut p, R, "function double(x) = 2 * x;");
    p.exp_string("double = fn : int -> int").unwrap();
    say(&mut p, R, "y = 20;");
    p.exp_string("y = 20 : int").unwrap();
    say(&mut p, R, "function spin(n) = if n < 0 then n else spin(n + 1);");
    p.exp_string("spin = fn").unwrap();
    say(&mut p, R, "spin(0);");
    let ms = interrupt(&mut p, 500);
    eprintln!("scalar loop: interrupted after {ms} ms");
    assert!(ms < LATENCY_MS, "{ms} ms");
    say(&mut p, R, "double(y + 1);");
    p.exp_string("it = 42 : int").unwrap();

    // Whole-vector work: each step is a few large CPU-library operations.
    say(&mut p, R, "function grow(v) = if sum(v) < 0 then v else grow({x + 1 : x in v});");
    p.exp_string("grow = fn").unwrap();
    say(&mut p, R, "grow(dist(1, 20000000));");
    let ms = interrupt(&mut p, 1500);
    eprintln!("vector loop: interrupted after {ms} ms");
    assert!(ms < LATENCY_MS, "{ms} ms");
    say(&mut p, R, "double(it + 20);");
    p.exp_string("it = 124 : int").unwrap(); // `it` is still 42: the interrupted form bound nothing

    // Ctrl-C while typing still drops the input; Ctrl-D leaves.
    p.exp_string(R).unwrap();
    p.send("1 +").unwrap();
    p.send_control('c').unwrap();
    p.exp_string("(input dropped)").unwrap();
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

/// `nesl run` on an endless program: Ctrl-C ends it with status 130, after saying
/// `interrupted`.
#[test]
fn run_exits_130_on_ctrl_c() {
    let file = program("endless.nesl", "function spin(n) = if n < 0 then n else spin(n + 1);\n1 + 1;\nspin(0);\n3;\n");
    let mut p = spawn(&["run", file.as_str()]);
    p.exp_string("it = 2 : int").unwrap();
    let ms = interrupt(&mut p, 300);
    eprintln!("nesl run: interrupted after {ms} ms");
    let rest = p.exp_eof().unwrap();
    assert!(!rest.contains("it = 3"), "the forms after the interrupted one do not run: {rest}");
    match p.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => assert_eq!(code, 130),
        other => panic!("nesl run ended with {other:?}"),
    }
}

/// `nesl debug`: Ctrl-C during `continue` pauses the program between two instructions;
/// the session goes on (breakpoints, stepping) and the program can go on too.
#[test]
fn debug_pauses_on_ctrl_c() {
    let file = program("debug.nesl", "function spin(n) = if n < 0 then n else spin(n + 1);\nspin(0);\n");
    let mut p = spawn(&["debug", file.as_str()]);
    p.exp_string("`help` lists the commands.").unwrap();
    say(&mut p, D, "continue");
    let ms = interrupt(&mut p, 500);
    eprintln!("nesl debug: interrupted after {ms} ms");
    say(&mut p, D, "step");
    // Ctrl-C between two instructions pauses; one that lands inside a vector operation
    // cuts it short and ends the program (`not running`): both are answers, never a hang.
    let (_, m) = p.exp_regex("at |not running").unwrap();
    if m == "at " {
        say(&mut p, D, "continue");
        interrupt(&mut p, 300);
    }
    say(&mut p, D, "quit");
    p.exp_eof().unwrap();
}
