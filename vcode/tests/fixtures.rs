//! Runs the VCODE fixtures of `regression/vcode/`: every `*.vcode` / `*.fcode` must
//! parse, print and re-parse to the same IR, verify, and run on the CPU printing exactly
//! its `*.expected` (what `vinterp file 2>&1` prints: `WRITE` output, then the final
//! stack). Every `bad/*.vcode` must fail (parse, verify or run) with exactly the error
//! lines of its `*.expected`, without panicking. Each runs with and without host
//! scalars ([`vcode::Cvl::host_scalars`]), to the same outcome. With `VCODE_BLESS=1` in the
//! environment, the bad fixtures' `*.expected` files are rewritten from the actual
//! errors (review the diff before committing).
//!
//! Fixtures in `regression/vcode/stdin/` read standard input: a `NAME.stdin` file beside
//! `NAME.vcode` is what they read (elsewhere standard input is empty). The other
//! directories' fixtures need nothing beyond the file itself, so other crates may run
//! them too.

use std::path::{Path, PathBuf};

fn dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../regression/vcode").join(sub)
}

fn files(d: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(d)
        .expect("fixture directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|e| e.to_str()).is_some_and(|e| exts.contains(&e)))
        .collect();
    v.sort();
    v
}

fn expected(p: &Path) -> String {
    std::fs::read_to_string(p.with_extension("expected"))
        .unwrap_or_else(|_| panic!("{} has no .expected file", p.display()))
}

/// What the fixture at `p` reads as standard input.
fn stdin_of(p: &Path) -> Vec<u8> {
    std::fs::read(p.with_extension("stdin")).unwrap_or_default()
}

/// What running `src` prints (output, then the final stack), or its error lines. It
/// runs twice, with the interpreter holding one-element element-wise results as host
/// scalars and without (every value a vector in the library), which must agree.
fn outcome(src: &str, stdin: Vec<u8>) -> Result<String, String> {
    let on = outcome_on(src, stdin.clone(), vcode::CpuCvl::new());
    let off = outcome_on(src, stdin, vcode::CpuCvl::new().with_host_scalars(false));
    if on != off {
        return Err(format!("host scalars change the outcome:\n--- with\n{on:?}\n--- without\n{off:?}"));
    }
    on
}

fn outcome_on(src: &str, stdin: Vec<u8>, mut cvl: vcode::CpuCvl) -> Result<String, String> {
    let prog = vcode::parse(src).map_err(|e| join(&e))?;
    vcode::verify(&prog).map_err(|e| join(&e))?;
    let mut out = Vec::new();
    let opts = vcode::RunOptions { stdin: Some(stdin), ..Default::default() };
    let rep = vcode::run(&prog, &mut cvl, &mut out, &opts)
        .map_err(|t| t.to_string())?;
    let mut text = String::from_utf8_lossy(&out).into_owned();
    if let vcode::RunOutcome::Finished(stack) = rep.outcome {
        text.push_str(&vcode::format_vinterp(&stack));
    }
    Ok(text)
}

fn join<E: ToString>(e: &[E]) -> String {
    e.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
}

#[test]
fn good_fixtures_run_and_round_trip() {
    let mut all = files(&dir(""), &["vcode", "fcode"]);
    all.extend(files(&dir("stdin"), &["vcode"]));
    assert!(all.len() >= 20, "only {} fixtures", all.len());
    let mut failures = Vec::new();
    for f in &all {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let src = std::fs::read_to_string(f).expect("read fixture");
        if let Ok(p) = vcode::parse(&src) {
            let printed = p.to_string();
            match vcode::parse(&printed) {
                Ok(q) if q.same_code(&p) && q.to_string() == printed => {}
                Ok(_) => failures.push(format!("{name}: print/parse round trip changed the program")),
                Err(e) => failures.push(format!("{name}: printed text does not parse: {}", join(&e))),
            }
        }
        match outcome(&src, stdin_of(f)) {
            Ok(text) if text == expected(f) => {}
            Ok(text) => failures.push(format!("{name}: output differs\n--- expected\n{}--- got\n{text}", expected(f))),
            Err(e) => failures.push(format!("{name}: failed: {e}")),
        }
    }
    assert!(failures.is_empty(), "{} failing fixture(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn bad_fixtures_fail_with_their_message() {
    let all = files(&dir("bad"), &["vcode", "fcode"]);
    assert!(all.len() >= 20, "only {} bad fixtures", all.len());
    let mut failures = Vec::new();
    for f in &all {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let bytes = std::fs::read(f).expect("read fixture");
        let src = String::from_utf8_lossy(&bytes);
        if std::env::var_os("VCODE_BLESS").is_some() {
            if let Err(e) = outcome(&src, stdin_of(f)) {
                std::fs::write(f.with_extension("expected"), format!("{e}\n")).expect("bless");
            }
        }
        let want = expected(f);
        match outcome(&src, stdin_of(f)) {
            Ok(_) => failures.push(format!("{name}: ran without an error")),
            Err(e) if e.trim_end() == want.trim_end() => {}
            Err(e) => failures.push(format!("{name}: error differs\n--- expected\n{want}\n--- got\n{e}")),
        }
    }
    assert!(failures.is_empty(), "{} failing bad fixture(s):\n{}", failures.len(), failures.join("\n"));
}
