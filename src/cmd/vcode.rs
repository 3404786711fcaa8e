//! `nesl vcode`: run (or only check) a VCODE / FCODE file and print the final stack as
//! CMU's `vinterp` does; `--opt 1|2` (default 2) runs it through the FCODE optimiser
//! first, `--opt 0` exactly as written. Program output (`WRITE`) goes to stderr, the final stack to
//! stdout. Errors print `error: FILE:line:col: message` and exit with status 1.

use crate::{Backend, RunOpts};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

fn report(file: &Path, errors: impl IntoIterator<Item = String>) -> ExitCode {
    let _ = std::io::stdout().flush();
    for e in errors {
        eprintln!("error: {}:{e}", file.display());
    }
    ExitCode::from(1)
}

/// Entry point of `nesl vcode`.
pub fn main(file: &Path, check: bool, opts: &RunOpts) -> anyhow::Result<ExitCode> {
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => return Ok(report(file, [format!(" cannot read the file: {e}")])),
    };
    let src = String::from_utf8_lossy(&bytes);
    let prog = match vcode::parse(&src) {
        Ok(p) => p,
        Err(errs) => return Ok(report(file, errs.iter().map(|e| e.to_string()))),
    };
    if let Err(errs) = vcode::verify(&prog) {
        return Ok(report(file, errs.iter().map(|e| e.to_string())));
    }
    if check {
        return Ok(ExitCode::SUCCESS);
    }
    // `--opt 1|2` optimises first (FCODE is optimised again: its FUSED instructions stay).
    let prog = match fcode_opt::optimize(&prog, opts.opt, &fcode_opt::OptOptions::default()) {
        Ok(p) => p,
        Err(e) => return Ok(report(file, [format!(" cannot optimise at level {}: {e}", opts.opt)])),
    };
    let run_opts = vcode::RunOptions { stats: opts.stats, ..Default::default() };
    let cuda = match opts.backend {
        Backend::Cpu => None,
        Backend::Cuda => match regression::cuda_library() {
            Ok(c) => Some(c),
            Err(e) => return Ok(report(file, [format!(" {e}")])),
        },
        Backend::Auto => regression::gpu_present().then(|| cvl_cuda::CudaCvl::new().ok()).flatten(),
    };
    match cuda {
        Some(mut cvl) => {
            // On a GPU, build every superoperator kernel when the program is loaded.
            if cvl.is_gpu() {
                if let Err(e) = cvl.prepare_superops(&prog.superops) {
                    return Ok(report(file, [format!(" the superoperator kernels do not build: {e}")]));
                }
            }
            let probe = opts.stats.then(|| cvl.stats_probe());
            let code = run_on(file, &prog, cvl, &run_opts)?;
            if let Some(p) = probe {
                let rows: Vec<(String, u64)> =
                    p.stats().rows().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                super::run::print_device_rows(&p.device(), &rows);
            }
            Ok(code)
        }
        None => run_on(file, &prog, vcode::CpuCvl::new(), &run_opts),
    }
}

/// Runs `prog` on the vector library `cvl`, printing the final stack (and the operation
/// counts when asked).
fn run_on<C: vcode::Cvl>(file: &Path, prog: &vcode::Program, mut cvl: C, run_opts: &vcode::RunOptions) -> anyhow::Result<ExitCode> {
    let mut stderr = std::io::stderr();
    let result = vcode::run(prog, &mut cvl, &mut stderr, run_opts);
    match result {
        Ok(rep) => {
            if run_opts.stats {
                super::run::print_op_rows(&rep.stats.rows);
                super::run::print_instructions(rep.stats.instructions);
            }
            match rep.outcome {
                vcode::RunOutcome::Finished(stack) => {
                    let mut so = std::io::stdout().lock();
                    so.write_all(vcode::format_vinterp(&stack).as_bytes())?;
                    so.flush()?;
                    Ok(ExitCode::SUCCESS)
                }
                vcode::RunOutcome::Exited(status) => Ok(ExitCode::from(status.clamp(0, 255) as u8)),
            }
        }
        Err(trap) => {
            let msg = if trap.site.is_some() { trap.to_string() } else { format!(" {trap}") };
            Ok(report(file, [msg]))
        }
    }
}
