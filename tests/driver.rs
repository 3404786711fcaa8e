//! The driver library's boundaries: each stage of the pipeline and the executors report
//! what went wrong as a `nesl::Error` variant that carries its data.

use nesl::{Backend, Config, Error};
use nesl_front::flatten::CompileOptions;
use std::path::Path;

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    match nesl::pipeline::read_source(Path::new("no/such/file.nesl")) {
        Err(e @ Error::Io { .. }) => assert!(e.to_string().starts_with("cannot read no/such/file.nesl: "), "{e}"),
        other => panic!("{:?}", other.map(|s| s.name)),
    }
}

#[test]
fn compile_errors_keep_their_diagnostics_and_source() {
    let src = "function inc(x) = x + 1;\ninc(t);\ny = ;\n";
    match nesl::pipeline::compile("bad.nesl", src, &CompileOptions::default()) {
        Err(Error::Compile { file, text, diags }) => {
            assert_eq!(file, "bad.nesl");
            assert_eq!(&*text, src);
            assert_eq!(diags.len(), 2, "one type error and one syntax error: {diags:?}");
        }
        other => panic!("{:?}", other.map(|p| p.to_string())),
    }
    let program = nesl::pipeline::compile("good.nesl", "function inc(x) = x + 1;\ninc(41);\n", &CompileOptions::default())
        .expect("compiles");
    for level in [0, 1, 2] {
        nesl::pipeline::optimise(&program, level).expect("optimises");
    }
    assert!(matches!(nesl::pipeline::optimise(&program, 3), Err(Error::OptLevel(3))));
}

#[test]
fn vcode_errors_name_their_lines() {
    let dir = std::env::temp_dir().join(format!("nesl-driver-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let file = dir.join("bad.vcode");
    std::fs::write(&file, "FUNC MAIN1_1\nCONST INT 1\nCONST FLOAT 2.0\n+ INT\nRET\n").expect("write");
    assert!(nesl::pipeline::read_vcode(&file, false).is_ok(), "it parses");
    match nesl::pipeline::read_vcode(&file, true) {
        Err(Error::Vcode { errors, .. }) => assert!(errors[0].starts_with("4:"), "{errors:?}"),
        other => panic!("{:?}", other.map(|p| p.to_string())),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn runtime_errors_carry_the_trap_and_its_nesl_places() {
    let src = "function get(a, i) = a[i];\nget([1, 2], 5);\n";
    for opt in [0, 1, 2] {
        let mut executor = Config::new(Backend::Cpu, opt).executor().expect("cpu");
        // Unchecked, the index runs into the vector library's own check: a trap with data.
        let program = nesl::pipeline::compile("t.nesl", src, &CompileOptions { arg_check: false }).expect("compiles");
        match executor.execute(program, &mut Vec::new()) {
            Err(Error::Runtime(e)) => {
                assert_eq!(e.trap.kind, vcode::TrapKind::IndexOutOfRange { index: 5, len: 2 });
                assert!(e.is_located());
                let inner = &e.backtrace.places[0];
                assert_eq!((inner.function.as_deref(), inner.pos.line, inner.pos.col), (Some("get"), 1, 22), "--opt {opt}");
                assert_eq!(e.to_string(), "index 5 out of range for a segment of length 2");
            }
            other => panic!("--opt {opt}: {other:?}"),
        }
        // With the argument check, the check fails with its data (CMU's message, which the
        // program writes before its EXIT, is held back) at the same NESL place.
        let program = nesl::pipeline::compile("t.nesl", src, &CompileOptions::default()).expect("compiles");
        let mut written = Vec::new();
        match executor.execute(program, &mut written) {
            Err(Error::Runtime(e)) => {
                assert_eq!(e.trap.kind, vcode::TrapKind::Check(vcode::CheckFailure::Index { index: 5, len: 2 }));
                assert!(written.is_empty(), "{}", String::from_utf8_lossy(&written));
                let inner = &e.backtrace.places[0];
                assert_eq!((inner.function.as_deref(), inner.pos.line, inner.pos.col), (Some("get"), 1, 22), "--opt {opt}");
                assert_eq!(e.to_string(), "index 5 is out of bounds for a sequence of length 2");
                assert!(!e.backtrace.truncated);
            }
            other => panic!("--opt {opt}: {other:?}"),
        }
    }
}

#[test]
fn an_unusable_backend_is_a_backend_error() {
    if nesl::backend::gpu_present() || std::env::var("NESL_CUDA_EMULATE").is_ok_and(|v| v == "1") {
        return;
    }
    match Config::new(Backend::Cuda, 2).executor() {
        Err(e @ Error::Backend(_)) => assert!(e.to_string().contains("CUDA backend cannot start"), "{e}"),
        Err(e) => panic!("{e}"),
        Ok(_) => {} // a CUDA library that starts without a GPU (the emulation)
    }
}
