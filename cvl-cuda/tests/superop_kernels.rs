//! Generated superoperator kernels: the CUDA C text for sample superoperators, and (when
//! `libnvrtc` is loadable) their compilation for sm_90.

use cvl_cuda::{compile, superop};
use vcode::{SuperOp, VType};

const SAMPLES: &[&str] = &[
    "SUPEROP 0 (INT INT SEGDES) (* INT (- INT $0 $1) (CONST INT 7))",
    "SUPEROP 1 (FLOAT FLOAT FLOAT) (+ FLOAT (* FLOAT $0 $1) $2)",
    "SUPEROP 2 (INT INT) (/ INT $0 (% INT $1 (CONST INT -9223372036854775808)))",
    "SUPEROP 3 (FLOAT BOOL) (SELECT FLOAT $1 (SQRT FLOAT $0) (CONST FLOAT -1.5))",
    "SUPEROP 4 (INT FLOAT) (< FLOAT (I_TO_F INT $0) (SQRT FLOAT $1))",
    "SUPEROP 5 (INT FLOAT BOOL) (AND BOOL (< INT $0 (FLOOR FLOAT $1)) (NOT BOOL $2))",
];

fn parse(src: &str) -> SuperOp {
    // `SuperOp::parse` takes the text after `SUPEROP n`.
    let body = src.splitn(3, ' ').nth(2).unwrap_or(src);
    match SuperOp::parse(body) {
        Ok(op) => op,
        Err(e) => panic!("{src}: {e:?}"),
    }
}

#[test]
fn sources_name_every_parameter_and_the_result() {
    let k = superop::kernel_source(&parse(SAMPLES[0])).expect("generates");
    assert!(k.name.starts_with("superop_"));
    assert!(k.text.contains(&format!("void {}(", k.name)), "{}", k.text);
    assert!(k.text.contains("const i64* __restrict__ a0"));
    assert!(
        k.text.contains("const void* a2"),
        "SEGDES parameter: {}",
        k.text
    );
    assert!(k.text.contains("wmul("), "{}", k.text);
    assert!(!k.may_trap);
    let k2 = superop::kernel_source(&parse(SAMPLES[2])).expect("generates");
    assert!(k2.may_trap, "integer division can trap");
    assert!(k2.text.contains("0x8000000000000000ull"), "{}", k2.text);
    // Same superoperator, same kernel (and cache entry); different ones differ.
    assert_eq!(
        superop::kernel_source(&parse(SAMPLES[0])).unwrap().name,
        k.name
    );
    assert_ne!(k2.name, k.name);
}

#[test]
fn sample_superoperators_compile_for_sm_90() {
    if !compile::nvrtc_present() {
        eprintln!(
            "SKIPPED sample_superoperators_compile_for_sm_90: {}",
            compile::CompileError::NoNvrtc
        );
        return;
    }
    for src in SAMPLES {
        let k = superop::kernel_source(&parse(src)).expect("generates");
        if let Err(e) = compile::compile_cubin(&k.name, &k.text, "sm_90") {
            panic!("{src}: {e}\n{}", k.text);
        }
        let size =
            superop::compile_superop(&parse(src), "sm_90").expect("compiles through the cache");
        assert!(size > 0);
    }
}

/// Folding and guarded superoperators: their kernels, the emitted table (`nesl opt
/// --emit-cuda`'s text: what the backend compiles) as one compilable unit.
const SHAPED: &[&str] = &[
    "SUPEROP 6 (FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT $0 $1) $2)",
    "SUPEROP 7 (INT SEGDES) (MAX_SCAN INT (/ INT $0 (CONST INT 3)) $1)",
    "SUPEROP 8 (FLOAT FLOAT SEGDES) (- FLOAT (SQRT FLOAT $0) (SQRT FLOAT $0)) (OR_REDUCE BOOL (< FLOAT $1 (CONST FLOAT 0.0)) $2)",
    "SUPEROP 9 (FLOAT FLOAT INT SEGDES) (* FLOAT (SQRT FLOAT $0) $1) (* FLOAT (SQRT FLOAT $0) (I_TO_F INT $2)) (< INT $2 (CONST INT 0)) (OR_REDUCE BOOL (< FLOAT $0 (CONST FLOAT 0.0)) $3)",
];

#[test]
fn folding_and_guarded_shapes_and_the_emitted_table() {
    let fold = superop::kernel_source(&parse(SHAPED[0])).expect("generates");
    assert!(matches!(fold.shape, superop::Shape::Fold { .. }));
    assert_eq!(fold.kernel_names(), vec![format!("{}_tiles", fold.name), format!("{}_down", fold.name)]);
    assert!(fold.text.contains("scan_tiles<OpAddD>") && fold.text.contains("scan_down<OpAddD>"), "{}", fold.text);
    let scan = superop::kernel_source(&parse(SHAPED[1])).expect("generates");
    assert!(scan.may_trap && scan.text.contains("OpMaxZ"), "{}", scan.text);
    let guarded = superop::kernel_source(&parse(SHAPED[2])).expect("generates");
    assert_eq!(guarded.shape, superop::Shape::Guarded);
    assert!(guarded.text.contains("b8* __restrict__ g") && guarded.text.contains("g[p] = "), "{}", guarded.text);
    // The repeated `SQRT $0` is computed once.
    assert_eq!(guarded.code.matches("sqrt(").count(), 1, "{}", guarded.code);
    // Several results: a pointer each after `r`, the guard's last; the square root they
    // share computed once.
    let many = superop::kernel_source(&parse(SHAPED[3])).expect("generates");
    assert_eq!((many.shape, many.result, many.more.clone()), (superop::Shape::Guarded, VType::Float, vec![VType::Float, VType::Bool]));
    assert!(many.text.contains("double* __restrict__ r, double* __restrict__ r1, b8* __restrict__ r2, b8* __restrict__ g, i64 n"), "{}", many.text);
    assert!(many.text.contains("r1[p] = ") && many.text.contains("r2[p] = "), "{}", many.text);
    assert_eq!(many.code.matches("sqrt(").count(), 1, "{}", many.code);
    let ops: Vec<SuperOp> = SAMPLES.iter().chain(SHAPED).map(|s| parse(s)).collect();
    let unit = superop::program_source(&ops).expect("emits");
    for op in &ops {
        let k = superop::kernel_source(op).unwrap();
        for name in k.kernel_names() {
            assert_eq!(unit.matches(&format!(" {name}(")).count(), 1, "{name} in\n{unit}");
        }
    }
    if !compile::nvrtc_present() {
        eprintln!("SKIPPED compiling the emitted table: {}", compile::CompileError::NoNvrtc);
        return;
    }
    if let Err(e) = compile::compile_cubin("emitted", &unit, "sm_90") {
        panic!("the emitted table does not compile: {e}\n{unit}");
    }
}
