//! Every superoperator kernel the regression corpus generates at `--opt 2` (the programs
//! evaluated through the driver's top level on the CPU, the optimiser collecting each
//! program's superoperator table), compiled for sm_90 with NVRTC through the kernel cache
//! (`NESL_CUDA_CACHE=DIR` keeps the CUBINs). Skipped, saying why, without `libnvrtc`.

use cvl_cuda::{compile, superop};
use vcode::SuperOp;

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
            let sink = seen.clone();
            let ex = nesl::exec::CpuExecutor::new().with_transform(Box::new(move |p| {
                let p = nesl::pipeline::optimise(&p, 2)?;
                sink.borrow_mut().extend(p.superops.iter().cloned());
                Ok(p)
            }));
            nesl::corpus::transcript_on(&case.source, &src, Box::new(ex), None);
        }
    }
    let all = seen.borrow();
    let mut kernels: Vec<superop::SuperKernel> = Vec::new();
    // A pack root runs as its element-wise parts (the body and each flag tree), as the
    // CUDA library runs it: those are the kernels it loads.
    for op in all.iter().flat_map(|op| op.parts()) {
        let k = superop::kernel_source(&op).unwrap_or_else(|e| panic!("{op:?}: {e}"));
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
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("regression/nesl")];
    if std::env::var_os("NESL_CORPUS_CONFORMANCE").is_some() {
        dirs.extend(regression::conformance_dir(root));
    }
    for (name, src) in cvl_cuda::semantics::modules() {
        compile::compile_cached(name, &compile::module_text(&src), "sm_90")
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
