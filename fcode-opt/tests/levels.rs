//! Every VCODE fixture gives the same output at levels 0, 1 and 2, and the optimised
//! programs verify and round-trip through their text form.
//!
//! Fixtures: `fcode-opt/tests/vcode/*.vcode` (hand-written, and programs compiled by
//! `nesl compile`) and the regression corpus `regression/vcode/*.vcode`, each with an
//! optional `.expected` output. Set `FCODE_OPT_CORPUS=DIR` to also check every `.vcode`
//! file of another folder (the ignored test `extra_corpus`).

mod common;

use common::{calls, check_levels, fixtures, load, run_text};
use std::path::Path;

fn check_dir(dir: &Path) -> usize {
    let mut n = 0;
    for (path, exp) in fixtures(dir) {
        let p = load(&path);
        let [a, b, c] = check_levels(&path.display().to_string(), &p, exp.as_deref());
        if std::env::var_os("FCODE_OPT_SHOW").is_some() {
            let (out, s0) = run_text(&a);
            let (_, s1) = run_text(&b);
            let (_, s2) = run_text(&c);
            eprintln!(
                "{:<40} instrs {:>6} {:>6} {:>6}  calls {:>6} {:>6} {:>6}  superops {:>3} {}",
                path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(),
                a.instruction_count(),
                b.instruction_count(),
                c.instruction_count(),
                calls(&s0),
                calls(&s1),
                calls(&s2),
                c.superops.len(),
                if out.contains("trap:") { "TRAP" } else { "" }
            );
        }
        n += 1;
    }
    n
}

#[test]
fn own_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vcode");
    let n = check_dir(&dir);
    assert!(n >= 10, "expected the fixtures in {}", dir.display());
}

#[test]
fn regression_vcode_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../regression/vcode");
    check_dir(&dir);
}

#[test]
#[ignore = "set FCODE_OPT_CORPUS to a folder of .vcode files"]
fn extra_corpus() {
    let Ok(dir) = std::env::var("FCODE_OPT_CORPUS") else { return };
    let n = check_dir(Path::new(&dir));
    eprintln!("{n} programs checked");
}
