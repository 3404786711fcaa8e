//! Whole-program compilation of the NESL corpora (issue 4: "the VCODE that `nesl compile`
//! writes for the regression corpus passes our own `nesl vcode --check`").
//!
//! For every program of `regression/nesl/**`, of `bench/programs/` and of the shared
//! conformance corpus (when present), the forms that check are compiled into one VCODE program as `nesl compile`
//! does ([`compile_program`]); the result must parse and pass the VCODE verifier, and so
//! must its optimised versions (levels 1 and 2). A program that does not compile must be
//! refused with located diagnostics, and only when its expected transcript has an error.
//! Nothing may panic. Programs without errors, effects or randomness are also run, and the
//! values the entry function leaves must be the `it = ...` results of the transcript.

use nesl_front::check::{format_type, ItemInfo, Session};
use nesl_front::diag::LineIndex;
use nesl_front::flatten::{compile_program, CompileOptions};
use nesl_front::parser::parse_items;
use nesl_front::value::format_value;
use nesl_front::ty::Type;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The `.nesl` files under `dir`, recursively, sorted.
fn nesl_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            nesl_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "nesl") {
            out.push(p);
        }
    }
}

/// What happened to one program.
enum Outcome {
    /// Compiled and verified (as compiled and at levels 1, 2); `compared` when its
    /// results were also checked against the transcript; `refused`: the rendered
    /// diagnostics of the forms left out because they do not compile (the transcript
    /// has errors there).
    Verified { compared: bool, refused: Vec<String> },
}

/// The results of the transcript's result paragraphs whose left-hand side is `it`, in
/// order (a result runs from its `lhs = ` line to the next result line).
fn it_results(expected: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in expected.lines() {
        let starts_result = !line.starts_with(char::is_whitespace)
            && line.split_once(" = ").is_some_and(|(lhs, _)| {
                lhs.chars().all(|c| c.is_ascii_alphanumeric() || "_(), ".contains(c))
            });
        if starts_result {
            if let Some(c) = current.take() {
                out.push(c);
            }
            if line.starts_with("it = ") {
                current = Some(line.to_string());
            }
        } else if line.starts_with("Note: ") {
            // A note of the top level (a redefinition) ends the result before it.
            out.extend(current.take());
        } else if let Some(c) = &mut current {
            c.push('\n');
            c.push_str(line);
        }
    }
    out.extend(current);
    out
}

/// Whether a program stays out of the run-and-compare step: it has effects (output,
/// files, streams, errors it raises itself), randomness or time (a whole program starts
/// the generator once, the top level at every form), or commands the comparison does not
/// model. Judged by the names the source uses.
fn not_compared(src: &str) -> bool {
    const NAMES: &[&str] = &[
        "rand", "rand_seed", "time", "exit", "set", "load", "stdin", "stdout", "stderr", "nullstr", "error",
        "shell_command", "spawn", "get_environment_variable",
    ];
    src.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| {
        let w = w.to_ascii_lowercase();
        NAMES.contains(&w.as_str())
            || ["print", "write_", "read_", "open_", "close_"].iter().any(|p| w.starts_with(p))
            || w.ends_with("_check")
            || w.contains("file")
    })
}

fn check_program(path: &Path) -> Result<Outcome, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let src = String::from_utf8_lossy(&bytes).into_owned();
    let expected = std::fs::read_to_string(path.with_extension("expected")).ok();
    let expects_error = expected
        .as_deref()
        .is_some_and(|t| t.lines().any(regression::compare::is_error_start));
    let mut session = Session::new();
    let mut items = Vec::new();
    let mut infos = Vec::new();
    let mut all_checked = true;
    for item in parse_items(&src) {
        match item.and_then(|mut form| session.check_item(&mut form).map(|info| (form, info))) {
            Ok((form, info)) => {
                items.push(form);
                infos.push(info);
            }
            Err(_) => all_checked = false,
        }
    }
    let file = path.display().to_string();
    // A form that does not compile is left out (with a located diagnostic, and only in a
    // program whose transcript has an error), and the rest is compiled again.
    let mut refused = Vec::new();
    let index = LineIndex::new(&src);
    let opts = CompileOptions::default();
    let code = loop {
        let diags = match compile_program(&session, &items, &opts) {
            Ok(code) => break code,
            Err(diags) => diags,
        };
        if diags.is_empty() {
            return Err("compilation failed without a diagnostic".into());
        }
        for d in &diags {
            let (l, c) = index.line_col(d.span.start as usize);
            refused.push(format!("{file}:{l}:{c}: {}", d.message));
        }
        if !expects_error {
            return Err(format!("a program whose transcript has no error does not compile:\n  {}", refused.join("\n  ")));
        }
        let k = (1..=items.len())
            .find(|&k| compile_program(&session, &items[..k], &opts).is_err())
            .ok_or("the program does not compile, but each of its prefixes does")?;
        items.remove(k - 1);
        infos.remove(k - 1);
        all_checked = false;
    };
    // The text `nesl compile` writes reads back as the same program.
    let reread = vcode::parse(&code.to_string()).map_err(|errs| format!("the printed VCODE does not parse: {}", errs[0]))?;
    if !reread.same_code(&code) {
        return Err("the printed VCODE does not read back as the same program".into());
    }
    let program = code;
    let complaints = |errs: Vec<vcode::VerifyError>| {
        errs.iter().take(5).map(|e| format!("\n  {e}")).collect::<String>()
    };
    vcode::verify(&program).map_err(|errs| format!("the compiled VCODE does not verify:{}", complaints(errs)))?;
    for level in [1, 2] {
        let opts = fcode_opt::OptOptions { verify: true, ..Default::default() };
        let optimised = fcode_opt::optimize(&program, level, &opts)
            .map_err(|e| format!("the optimiser (level {level}) rejects the compiled VCODE: {e}"))?;
        vcode::verify(&optimised)
            .map_err(|errs| format!("the program optimised at level {level} does not verify:{}", complaints(errs)))?;
    }
    // Run and compare with the transcript.
    let Some(expected) = expected else { return Ok(Outcome::Verified { compared: false, refused }) };
    if !all_checked || expects_error || not_compared(&src) {
        return Ok(Outcome::Verified { compared: false, refused });
    }
    let mut cvl = vcode::CpuCvl::new();
    let mut out = Vec::new();
    let report = vcode::run(&program, &mut cvl, &mut out, &vcode::RunOptions::default())
        .map_err(|t| format!("the compiled program traps: {}", t.kind))?;
    let values = match report.outcome {
        vcode::RunOutcome::Finished(v) => v,
        vcode::RunOutcome::Exited(s) => return Err(format!("the compiled program exits ({s})")),
    };
    let fields = |name: &str, args: &[Type]| {
        let d = session.datatypes.get(name)?;
        let map: HashMap<u32, Type> = d.params.iter().map(|v| v.id).zip(args.iter().cloned()).collect();
        Some(nesl_front::check::unify::substitute(&d.fields, &map))
    };
    let mut actual = Vec::new();
    let mut pos = 0;
    for info in &infos {
        let ItemInfo::Expr { ty } = info else { continue };
        let n = nesl_front::value::slot_count(ty, &fields)
            .ok_or_else(|| format!("cannot lay out {}", format_type(ty)))?;
        let slots = values.get(pos..pos + n).ok_or("the program leaves too few values")?;
        pos += n;
        let text = format_value(ty, slots, &fields, Some(100)).map_err(|e| format!("a result does not print: {e}"))?;
        actual.push(format!("it = {text} : {}", format_type(ty)));
    }
    if pos != values.len() {
        return Err(format!("the program leaves {} values where its results take {pos}", values.len()));
    }
    regression::compare(&it_results(&expected).join("\n"), &actual.join("\n"))
        .map_err(|d| format!("the compiled program's results differ from the transcript: {d}"))?;
    Ok(Outcome::Verified { compared: true, refused })
}

#[test]
fn corpus_compiles_to_verified_vcode() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    nesl_files(&root.join("regression/nesl"), &mut files);
    let own = files.len();
    nesl_files(&root.join("bench/programs"), &mut files);
    if let Some(dir) = regression::conformance_dir(root) {
        nesl_files(&dir, &mut files);
    }
    let (mut verified, mut compared, mut refused) = (0, 0, Vec::new());
    let mut failures = Vec::new();
    for path in &files {
        match std::panic::catch_unwind(|| check_program(path)) {
            Ok(Ok(Outcome::Verified { compared: c, refused: r })) => {
                verified += 1;
                compared += usize::from(c);
                refused.extend(r);
            }
            Ok(Err(e)) => failures.push(format!("{}: {e}", path.display())),
            Err(_) => failures.push(format!("{}: the compiler panicked", path.display())),
        }
    }
    println!(
        "{} programs ({own} of regression/nesl): {verified} compiled and verified (as compiled, at O1 and O2), \
         {compared} of them run with results equal to the transcript; {} forms left out, refused with a diagnostic:",
        files.len(),
        refused.len()
    );
    for r in &refused {
        println!("  {r}");
    }
    assert!(own >= 150, "the regression corpus has only {own} programs");
    assert!(failures.is_empty(), "{} programs fail:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn it_results_reads_result_paragraphs() {
    let t = "f = fn : int -> int\nit = [1,\n  2] : [int]\nx = 3 : int\nit = 4 : int\n";
    assert_eq!(it_results(t), vec!["it = [1,\n  2] : [int]".to_string(), "it = 4 : int".to_string()]);
}

/// Compiles a whole program as `nesl compile` does and runs it on the CPU; returns the
/// printed results of its expression forms.
fn run_whole_program(src: &str) -> Vec<String> {
    let mut session = Session::new();
    let mut items = Vec::new();
    let mut types = Vec::new();
    for item in parse_items(src) {
        let mut form = item.expect("the program parses");
        if let ItemInfo::Expr { ty } = session.check_item(&mut form).expect("the program checks") {
            types.push(ty);
        }
        items.push(form);
    }
    let code = compile_program(&session, &items, &CompileOptions::default()).expect("the program compiles");
    let program = code;
    vcode::verify(&program).expect("the VCODE verifies");
    let mut out = Vec::new();
    let report = vcode::run(&program, &mut vcode::CpuCvl::new(), &mut out, &vcode::RunOptions::default()).expect("runs");
    let vcode::RunOutcome::Finished(values) = report.outcome else { panic!("the program exited") };
    let no_data = |_: &str, _: &[Type]| None;
    let mut pos = 0;
    types
        .iter()
        .map(|ty| {
            let n = nesl_front::value::slot_count(ty, &no_data).expect("a layout");
            let text = format_value(ty, &values[pos..pos + n], &no_data, None).expect("prints");
            pos += n;
            text
        })
        .collect()
}

#[test]
fn a_binding_read_by_functions_is_evaluated_once() {
    // Were `r` evaluated again where a function reads it, the differences would not be 0.
    let src = "r = rand(1000000000);\nfunction addr(x) = x + r;\nfunction twice(x) = addr(addr(x));\n\
               addr(0) - r;\n{twice(i) - 2 * r : i in [1:4]};\nit;\n";
    assert_eq!(run_whole_program(src), ["0", "[1, 2, 3]", "[1, 2, 3]"]);
}

#[test]
fn a_function_sees_the_binding_current_at_each_call() {
    let src = "k = 2;\nfunction fk(x) = x * k;\nfunction g(xs) = {fk(x) : x in xs};\ng([1, 2]);\nk = 5;\n\
               g([1, 2]);\nk = [7, 8];\nfunction h(i) = k[i] + fk(1);\n{h(i) : i in [1, 0]};\n";
    // `fk` was checked with `k : int`; the last call of `h` reaches `fk` with `k` a sequence.
    let mut session = Session::new();
    let mut items = Vec::new();
    for item in parse_items(src) {
        let mut form = item.expect("parses");
        session.check_item(&mut form).expect("checks");
        items.push(form);
    }
    let diags = compile_program(&session, &items, &CompileOptions::default()).expect_err("a rebound type is refused");
    assert!(diags[0].message.contains("`k` has been bound again"), "{}", diags[0].message);
    let src = src.replace("+ fk(1)", "");
    assert_eq!(run_whole_program(&src), ["[2, 4]", "[5, 10]", "[8, 7]"]);
}

#[test]
fn the_executor_verifies_when_asked() {
    use nesl::exec::{CpuExecutor, Executor};
    let bad = "FUNC MAIN1_1\nCONST INT 1\nCONST FLOAT 2.0\n+ INT\nRET\n";
    let mut out = Vec::new();
    let bad = vcode::parse(bad).expect("parses");
    let e = CpuExecutor::new().with_verify(true).execute(bad, &mut out).expect_err("refused");
    assert!(matches!(e, nesl::Error::Verify { .. }), "{e}");
    assert!(e.to_string().contains("does not verify"), "{e}");
    let good = "FUNC MAIN1_1\nCONST INT 1\nCONST INT 2\n+ INT\nRET\n";
    let good = vcode::parse(good).expect("parses");
    assert!(CpuExecutor::new().with_verify(true).execute(good, &mut out).is_ok());
}

#[test]
fn nesl_compile_output_passes_nesl_vcode_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let nesl = env!("CARGO_BIN_EXE_nesl");
    let src = root.join("regression/nesl/toplevel/01-globals-in-functions.nesl");
    let out = std::env::temp_dir().join(format!("nesl-compile-verify-{}.vcode", std::process::id()));
    let compile = std::process::Command::new(nesl).arg("compile").arg(&src).arg("-o").arg(&out).output().expect("runs");
    assert!(compile.status.success(), "{}", String::from_utf8_lossy(&compile.stderr));
    let check = std::process::Command::new(nesl).args(["vcode", "--check"]).arg(&out).output().expect("runs");
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let run = std::process::Command::new(nesl).arg("vcode").arg(&out).output().expect("runs");
    let _ = std::fs::remove_file(&out);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    // The expression forms' values, as vinterp prints a final stack (bottom first).
    let expected = "( 18 )\n[ 3 ]\n( 43 13 33 )\n[ 3 ]\n( 30 20 10 )\n[ 4 ]\n( 15 23 43 3 )\n[ 3 ]\n( 3 6 9 )\n( 200 )\n\
                    [ 2 ]\n( 50 20 )\n[ 3 ]\n( 30 30 0 )\n";
    assert_eq!(String::from_utf8_lossy(&run.stdout), expected);
}
