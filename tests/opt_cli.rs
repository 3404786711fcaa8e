//! `nesl opt` and `nesl vcode` on FCODE, end to end through the binary: compile a NESL
//! program, optimise it with every flag, check the FCODE file (one superoperator for
//! `muladd`, print → parse → print lossless, the CUDA kernel), and run VCODE and FCODE
//! with `nesl vcode` at every level with the same output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn nesl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nesl")).args(args).output().expect("run nesl")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nesl-opt-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

const MULADD: &str = "function muladd(xs, ys, zs) = {x * y + z : x in xs; y in ys; z in zs};\n\
                      muladd([1.5, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.25]);\n";

#[test]
fn opt_writes_fcode_and_cuda_that_vcode_runs() {
    let dir = scratch("muladd");
    let src = dir.join("muladd.nesl");
    std::fs::write(&src, MULADD).expect("write");
    let vc = dir.join("muladd.vcode");
    let fc = dir.join("muladd.fcode");
    let cu = dir.join("muladd.cu");
    let o = nesl(&["compile", s(&src), "-o", s(&vc)]);
    assert!(o.status.success(), "compile: {}", text(&o.stderr));

    let o = nesl(&[
        "opt",
        s(&vc),
        "-o",
        s(&fc),
        "--emit-cuda",
        s(&cu),
        "--verify",
        "--timings",
        "--dump-after",
        "fuse",
    ]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "opt: {err}");
    assert!(err.contains("; ---- after fuse ----") && err.contains("FUSED 0"), "dump of the fuse pass:\n{err}");
    for pass in fcode_opt::PASSES {
        assert!(err.lines().any(|l| l.starts_with(pass) && l.ends_with(" ms")), "timing of {pass}:\n{err}");
    }

    // The body of `muladd` is one superoperator and the main function's one FUSED
    // instruction, with no loose arithmetic anywhere. (The shared check-record function's
    // `PACK` by negated flags is a superoperator of its own, a pack root.)
    let fcode = std::fs::read_to_string(&fc).expect("fcode written");
    let q = vcode::parse(&fcode).expect("the FCODE parses");
    let texts: Vec<String> = q.superops.iter().map(|o| o.to_string()).collect();
    assert_eq!(texts[0], "(FLOAT FLOAT FLOAT) (+ FLOAT (* FLOAT $0 $1) $2)", "{fcode}");
    assert!(q.superops[1..].iter().all(|o| o.pack.is_some()), "{fcode}");
    let main = q.functions.iter().find(|f| f.name == "MAIN1_1").expect("MAIN1_1");
    assert_eq!(main.body.iter().filter(|i| i.op == vcode::Opcode::Fused).count(), 1, "{fcode}");
    let count = |op| q.functions.iter().flat_map(|f| &f.body).filter(|i| i.op == op).count();
    assert_eq!(count(vcode::Opcode::Mul) + count(vcode::Opcode::Add), 0, "{fcode}");
    // Lossless text form: print(parse(text)) is the text, and parses to the same code.
    assert_eq!(q.to_string(), fcode);
    assert!(vcode::parse(&q.to_string()).expect("reparses").same_code(&q));
    let kernels = std::fs::read_to_string(&cu).expect("cuda written");
    // One kernel per element-wise part of each superoperator (a pack root runs as its body
    // and its flag trees; identical kernels are emitted once).
    let mut names: Vec<String> = q.superops.iter().flat_map(|o| o.parts()).map(|o| o.to_string()).collect();
    names.sort();
    names.dedup();
    assert_eq!(kernels.matches("__global__").count(), names.len(), "{kernels}");

    // VCODE and FCODE give the same stack at every level.
    let base = nesl(&["vcode", "--backend", "cpu", "--opt", "0", s(&vc)]);
    assert!(base.status.success(), "{}", text(&base.stderr));
    let stack = text(&base.stdout);
    assert!(stack.contains("1.30000000000000e+01"), "{stack}");
    for file in [&vc, &fc] {
        for level in ["0", "1", "2"] {
            let o = nesl(&["vcode", "--backend", "cpu", "--opt", level, s(file)]);
            assert!(o.status.success(), "{} --opt {level}: {}", file.display(), text(&o.stderr));
            assert_eq!(text(&o.stdout), stack, "{} --opt {level}", file.display());
        }
    }
    // `--stats` shows the superoperator at level 2 and none at level 0.
    let o = nesl(&["vcode", "--backend", "cpu", "--opt", "2", "--stats", s(&vc)]);
    assert!(text(&o.stderr).lines().any(|l| l.starts_with("fused ")), "{}", text(&o.stderr));
    let o = nesl(&["vcode", "--backend", "cpu", "--opt", "0", "--stats", s(&vc)]);
    assert!(!text(&o.stderr).lines().any(|l| l.starts_with("fused ")), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_stats_show_fusion_only_when_optimising() {
    let dir = scratch("run");
    let src = dir.join("muladd.nesl");
    std::fs::write(&src, MULADD).expect("write");
    let mut outs = Vec::new();
    for level in ["0", "1", "2"] {
        let o = nesl(&["run", "--backend", "cpu", "--opt", level, "--stats", s(&src)]);
        assert!(o.status.success(), "run --opt {level}: {}", text(&o.stderr));
        let fused = text(&o.stderr).lines().any(|l| l.starts_with("fused "));
        assert_eq!(fused, level == "2", "--opt {level}:\n{}", text(&o.stderr));
        outs.push(text(&o.stdout));
    }
    assert!(outs[0].contains("it = [13.0, 18.0, 27.25] : [float]"), "{}", outs[0]);
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[0], outs[2]);
    // The default level is 2.
    let o = nesl(&["run", "--backend", "cpu", "--stats", s(&src)]);
    assert!(text(&o.stderr).lines().any(|l| l.starts_with("fused ")), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn opt_errors_name_the_file() {
    let dir = scratch("errors");
    let bad = dir.join("bad.vcode");
    std::fs::write(&bad, "FUNC MAIN\nCONST BOOL T\nIF\nCONST INT 1\nELSE\nENDIF\nRET\n").expect("write");
    let o = nesl(&["opt", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    // The verifier names the ENDIF where the branches meet.
    assert!(err.contains(&format!("error: {}:6:1:", bad.display())) && err.contains("different stack depths"), "{err}");
    let o = nesl(&["vcode", "--backend", "cpu", s(&bad)]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let good = dir.join("good.vcode");
    std::fs::write(&good, "FUNC MAIN\nCONST INT 1\nRET\n").expect("write");
    let o = nesl(&["opt", s(&good), "--dump-after", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("unknown pass `nope`"), "{}", text(&o.stderr));
    // NESL source given where VCODE is read: one error saying so, not one per line.
    let src = dir.join("prog.nesl");
    std::fs::write(&src, "function f(x) = x + 1;\nf(2);\n").expect("write");
    for cmd in ["opt", "vcode"] {
        let o = nesl(&[cmd, s(&src)]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
        assert_eq!(err.lines().filter(|l| l.starts_with("error")).count(), 1, "{cmd}: {err}");
        assert!(err.contains("this is NESL source, not VCODE"), "{cmd}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Parses VCODE text, or fails with its errors.
fn parse(text: &str) -> vcode::Program {
    vcode::parse(text).unwrap_or_else(|e| panic!("does not parse: {e:?}\n{text}"))
}

/// `--origins` on `nesl compile` and `nesl opt`: every instruction compiled from a NESL
/// expression is followed by a comment naming its place (`{ FILE:line:col in F }`), an
/// inlined one also the call it replaced; the text parses back to the program written
/// without the flag.
#[test]
fn origins_are_comments_that_read_back() {
    let dir = scratch("origins");
    let src = dir.join("muladd.nesl");
    std::fs::write(&src, MULADD).expect("write");
    let plain = nesl(&["compile", s(&src)]);
    let commented = nesl(&["compile", "--origins", s(&src)]);
    assert!(plain.status.success() && commented.status.success(), "{}", text(&commented.stderr));
    let (plain, commented) = (text(&plain.stdout), text(&commented.stdout));
    assert!(commented.contains(&format!("{{ {}:1:", s(&src))) && commented.contains(" in muladd }"), "{commented}");
    assert!(commented.contains(&format!("{{ {}:2:1 }}", s(&src))), "the top-level form has no function: {commented}");
    assert_eq!(parse(&plain).to_string(), parse(&commented).to_string());

    let vc = dir.join("muladd.vcode");
    std::fs::write(&vc, &plain).expect("write");
    let fcode = nesl(&["opt", "--origins", s(&vc)]);
    assert!(fcode.status.success(), "{}", text(&fcode.stderr));
    let fcode = text(&fcode.stdout);
    assert!(fcode.contains(&format!(", inlined at {}:", s(&vc))), "{fcode}");
    let unmarked = text(&nesl(&["opt", s(&vc)]).stdout);
    assert_eq!(parse(&fcode).to_string(), unmarked);
    let _ = std::fs::remove_dir_all(&dir);
}
