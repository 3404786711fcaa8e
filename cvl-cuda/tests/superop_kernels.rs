//! Generated superoperator kernels: the CUDA C text for sample superoperators, and (when
//! `libnvrtc` is loadable) their compilation for sm_90.

use cvl_cuda::{compile, superop};
use vcode::SuperOp;

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

/// The superoperators of a whole corpus at `--opt 2`: every program evaluated on the CPU
/// (later forms need the values of earlier ones) through the optimiser, collecting each
/// optimised program's superoperator table. Returns (programs, tables' entries, distinct
/// kernels).
fn corpus_superops(dirs: &[std::path::PathBuf]) -> (usize, usize, Vec<superop::SuperKernel>) {
    use std::cell::RefCell;
    use std::rc::Rc;
    let seen: Rc<RefCell<Vec<SuperOp>>> = Rc::default();
    let mut programs = 0;
    for dir in dirs {
        let Ok(cases) = regression::discover(dir) else {
            continue;
        };
        for case in cases {
            let Ok(src) = std::fs::read_to_string(&case.source) else {
                continue;
            };
            programs += 1;
            let mut opt = regression::optimiser(2).expect("level 2 optimises");
            let sink = seen.clone();
            let ex = nesl_front::toplevel::CpuExecutor::new().with_transform(Box::new(move |p| {
                let p = opt(p)?;
                sink.borrow_mut().extend(p.superops.iter().cloned());
                Ok(p)
            }));
            regression::nesl_transcript(&case.source, &src, Box::new(ex), None);
        }
    }
    let all = seen.borrow();
    let mut kernels: Vec<superop::SuperKernel> = Vec::new();
    for op in all.iter() {
        let k = superop::kernel_source(op).unwrap_or_else(|e| panic!("{op:?}: {e}"));
        if !kernels.iter().any(|x| x.name == k.name) {
            kernels.push(k);
        }
    }
    (programs, all.len(), kernels)
}

/// Every kernel module, and every superoperator kernel that the regression corpus (plus
/// the conformance corpus with `NESL_CORPUS_CONFORMANCE=1`) generates at `--opt 2`,
/// compiles for sm_90, through the kernel cache: with `NESL_CUDA_CACHE=DIR` this fills
/// DIR with the CUBINs a GPU run of those corpora loads (see `scripts/gpu-carry.sh`).
#[test]
fn corpus_superoperators_compile_for_sm_90() {
    if !compile::nvrtc_present() {
        eprintln!(
            "SKIPPED corpus_superoperators_compile_for_sm_90: {}",
            compile::CompileError::NoNvrtc
        );
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs = vec![root.join("regression/nesl")];
    if std::env::var_os("NESL_CORPUS_CONFORMANCE").is_some() {
        dirs.extend(regression::conformance_dir(&root));
    }
    for (name, src) in kernels::SOURCES {
        compile::compile_cached(name, &compile::module_text(src), "sm_90")
            .unwrap_or_else(|e| panic!("module {name}: {e}"));
    }
    let (programs, entries, kernels) = corpus_superops(&dirs);
    assert!(programs > 0, "no corpus programs found under {dirs:?}");
    assert!(
        !kernels.is_empty(),
        "the corpus at --opt 2 generated no superoperators"
    );
    let start = std::time::Instant::now();
    let failures: Vec<String> = std::thread::scope(|sc| {
        let chunks: Vec<_> = kernels
            .chunks(kernels.len().div_ceil(4))
            .map(|chunk| {
                sc.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|k| {
                            compile::compile_cached(&k.name, &k.text, "sm_90")
                                .err()
                                .map(|e| format!("{e}\n{}", k.text))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks
            .into_iter()
            .flat_map(|j| j.join().expect("compile thread"))
            .collect()
    });
    eprintln!(
        "{} kernel modules and {} distinct superoperator kernels ({} table entries, {} programs) \
         compiled for sm_90 in {:.1} s",
        kernels::SOURCES.len(),
        kernels.len(),
        entries,
        programs,
        start.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{} superoperator kernels fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
