//! The regression corpus (and the shared conformance corpus when present) evaluated on the
//! CUDA backend, compared transcript by transcript with the CPU backend. On a GPU it runs
//! the real kernels; without one, the CPU emulation of the kernels (slow: hence ignored by
//! default; run with `cargo test --test cuda_corpus -- --ignored`). Both run through the
//! driver's executors on a vector library chosen here.

use std::path::{Path, PathBuf};

use cvl_cuda::CudaCvl;
use nesl::exec::{CpuExecutor, VcodeExecutor};

fn cuda() -> Option<CudaCvl> {
    match CudaCvl::new() {
        Ok(c) => Some(c),
        Err(e) => match CudaCvl::new_emulated() {
            Ok(c) => {
                static TOLD: std::sync::Once = std::sync::Once::new();
                TOLD.call_once(|| eprintln!("no GPU ({e}): the kernels run in the CPU emulation"));
                Some(c)
            }
            Err(e2) => {
                eprintln!("SKIPPED: {e}; {e2}");
                None
            }
        },
    }
}

fn suites() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    let mut out = vec![root.join("regression/nesl")];
    if std::env::var_os("NESL_CORPUS_CONFORMANCE").is_some() {
        out.extend(regression::conformance_dir(&root));
    }
    if let Ok(only) = std::env::var("NESL_CORPUS_ONLY") {
        out = vec![PathBuf::from(only)];
    }
    out
}

#[test]
#[ignore = "slow without a GPU: runs every corpus program on the emulated kernels"]
fn corpus_transcripts_match_the_cpu_backend() {
    if cuda().is_none() {
        return;
    }
    let mut differ = Vec::new();
    let mut total = 0;
    for suite in suites() {
        let Ok(cases) = regression::discover(&suite) else {
            continue;
        };
        for case in cases {
            let Ok(src) = std::fs::read_to_string(&case.source) else {
                continue;
            };
            total += 1;
            let cpu =
                nesl::corpus::transcript_on(&case.source, &src, Box::new(CpuExecutor::new()), None);
            let Some(g) = cuda() else { return };
            let gpu = nesl::corpus::transcript_on(
                &case.source,
                &src,
                Box::new(VcodeExecutor::with_cvl(g)),
                None,
            );
            if cpu != gpu {
                let line = cpu
                    .lines()
                    .zip(gpu.lines())
                    .position(|(a, b)| a != b)
                    .map(|k| {
                        format!(
                            "line {}: cpu `{}` / cuda `{}`",
                            k + 1,
                            cpu.lines().nth(k).unwrap_or(""),
                            gpu.lines().nth(k).unwrap_or("")
                        )
                    })
                    .unwrap_or_else(|| "lengths differ".into());
                eprintln!("DIFF {}: {line}", case.source.display());
                differ.push(case.source.display().to_string());
            }
        }
    }
    eprintln!(
        "{} of {total} transcripts identical on the CUDA backend",
        total - differ.len()
    );
    assert!(
        differ.is_empty(),
        "{} transcripts differ: {differ:?}",
        differ.len()
    );
}
