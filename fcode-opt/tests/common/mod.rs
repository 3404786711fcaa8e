//! Helpers shared by the fcode-opt integration tests: run a program on the CPU and
//! render what it did as text, and check a program at every optimisation level.

#![allow(dead_code)]

use fcode_opt::{optimize, OptOptions};
use std::path::{Path, PathBuf};
use vcode::{CpuCvl, OpStats, Program, RunOptions, RunOutcome};

/// What a run printed: program output (`WRITE`), then the final stack as vinterp prints
/// it, or `exit N`, or `trap: KIND`.
pub fn run_text(p: &Program) -> (String, OpStats) {
    let mut out = Vec::new();
    let opts = RunOptions { stats: true, max_steps: Some(50_000_000), ..Default::default() };
    let r = vcode::run(p, &mut CpuCvl::new(), &mut out, &opts);
    let mut text = String::from_utf8_lossy(&out).into_owned();
    match r {
        Ok(rep) => {
            match rep.outcome {
                RunOutcome::Finished(stack) => text.push_str(&vcode::format_vinterp(&stack)),
                RunOutcome::Exited(s) => text.push_str(&format!("exit {s}\n")),
            }
            (text, rep.stats)
        }
        Err(t) => {
            // The trap's place in the input text, which every level must keep.
            let at = t.site.as_ref().map(|s| format!(" at {}:{}", s.origin.pos.line, s.origin.pos.col)).unwrap_or_default();
            text.push_str(&format!("trap: {}{at}\n", t.kind));
            (text, OpStats::default())
        }
    }
}

/// Total CVL calls in a run's statistics.
pub fn calls(s: &OpStats) -> u64 {
    s.rows.iter().map(|r| r.1).sum()
}

/// Total elements touched in a run's statistics.
pub fn elements(s: &OpStats) -> u64 {
    s.rows.iter().map(|r| r.2).sum()
}

/// Optimises at `level` with verification on.
pub fn opt(p: &Program, level: u8) -> Program {
    let opts = OptOptions { verify: true, ..Default::default() };
    match optimize(p, level, &opts) {
        Ok(q) => q,
        Err(e) => panic!("optimisation at level {level} failed: {e}\n--- input ---\n{p}"),
    }
}

/// Parses a file.
pub fn load(path: &Path) -> Program {
    let src = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    vcode::parse(&src).unwrap_or_else(|e| panic!("{}: {e:?}", path.display()))
}

/// Checks one program: levels 1 and 2 verify, print/parse round-trip, and run with the
/// same output as level 0 (as does the level 2 program optimised again); if `expected` is given, level 0 matches it (either the whole
/// text, or only the final-stack part when the fixture expects only that).
pub fn check_levels(name: &str, p: &Program, expected: Option<&str>) -> [Program; 3] {
    let (base, _) = run_text(p);
    if let Some(exp) = expected {
        let printed: String = base.lines().filter(|l| !l.starts_with("exit ")).map(|l| format!("{l}\n")).collect();
        let stack_only =
            base.lines().filter(|l| l.starts_with('(') || l.starts_with('[')).collect::<Vec<_>>().join("\n");
        assert!(
            printed.trim_end() == exp.trim_end() || stack_only.trim_end() == exp.trim_end(),
            "{name}: level 0 output differs from the expected file\n--- expected ---\n{exp}\n--- got ---\n{base}"
        );
    }
    let l1 = opt(p, 1);
    let l2 = opt(p, 2);
    for (lvl, q) in [(1, &l1), (2, &l2)] {
        check_origins(&format!("{name} (level {lvl})"), q);
        let text = q.to_string();
        let back =
            vcode::parse(&text).unwrap_or_else(|e| panic!("{name}: level {lvl} output does not parse: {e:?}\n{text}"));
        assert!(back.same_code(q), "{name}: level {lvl} output does not round-trip");
        let (got, _) = run_text(q);
        assert_eq!(got, base, "{name}: level {lvl} output differs from level 0\n--- program ---\n{text}");
    }
    // FCODE goes through the optimiser again (its FUSED instructions are kept).
    let again = opt(&l2, 2);
    assert_eq!(run_text(&again).0, base, "{name}: optimising the level 2 output again changes it");
    [p.clone(), l1, l2]
}

/// The `.vcode` files of a folder (sorted), with their `.expected` text when present.
pub fn fixtures(dir: &Path) -> Vec<(PathBuf, Option<String>)> {
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<PathBuf> =
        rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "vcode")).collect();
    v.sort();
    v.into_iter()
        .map(|p| {
            let exp = std::fs::read_to_string(p.with_extension("expected")).ok();
            (p, exp)
        })
        .collect()
}

/// Operations of a superoperator tree (`Program::fused_parts` has one origin for each of
/// the body's, a pack's flag trees' and the further results' trees').
fn body_ops(e: &vcode::Expr) -> usize {
    match e {
        vcode::Expr::Arg(_) | vcode::Expr::Const(_) => 0,
        vcode::Expr::Binary { a, b, .. } => 1 + body_ops(a) + body_ops(b),
        vcode::Expr::Unary { a, .. } => 1 + body_ops(a),
        vcode::Expr::Select { f, a, b, .. } => 1 + body_ops(f) + body_ops(a) + body_ops(b),
    }
}

/// Every instruction of `q` has an origin with a line, and every inline chain ends; every
/// `FUSED` instruction keeps one origin (with a line) per operation it fused.
pub fn check_origins(name: &str, q: &Program) {
    for f in &q.functions {
        assert_eq!(f.origins.len(), f.body.len(), "{name}: function {} has no origin for some instructions", f.name);
        for (ins, o) in f.body.iter().zip(&f.origins) {
            assert!(o.pos.line > 0, "{name}: `{ins}` in {} has no line", f.name);
            if let (vcode::Opcode::Fused, vcode::Imm::Index(k)) = (ins.op, &ins.imm) {
                let parts = q.parts_of(*o);
                let op = &q.superops[*k as usize];
                // A pack keeps its flag trees' operations after the body's, a superoperator
                // with several results its further trees'.
                let more = op.pack.iter().flat_map(|p| &p.flags).chain(&op.more);
                let ops = body_ops(&op.body) + more.map(body_ops).sum::<usize>();
                assert_eq!(parts.len(), ops, "{name}: `{ins}` in {}: origins of its operations", f.name);
                assert!(parts.iter().all(|p| p.pos.line > 0 && p.parts == 0), "{name}: `{ins}` in {}: {parts:?}", f.name);
            }
            let mut k = o.inlined_at;
            let mut n = 0;
            while k != 0 {
                assert!(k as usize <= q.inline_sites.len(), "{name}: `{ins}` in {}: inline site {k} out of range", f.name);
                k = q.inline_sites[k as usize - 1].inlined_at;
                n += 1;
                assert!(n <= q.inline_sites.len(), "{name}: inline chain of `{ins}` in {} loops", f.name);
            }
        }
    }
}
