//! `nesl vcode`: run (or only check) a VCODE / FCODE file and print the final stack as
//! CMU's `vinterp` does; `--opt 1|2` (default 2) runs it through the FCODE optimiser
//! first, `--opt 0` exactly as written. Program output (`WRITE`) goes to stderr, the final stack to
//! stdout. Errors print `error: FILE:line:col: message` and exit with status 1.

use crate::RunOpts;
use nesl::backend::Library;
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
    let prog = match nesl::pipeline::read_vcode(file, true) {
        Ok(p) => p,
        Err(e) => return Ok(report(file, super::opt::file_errors(e))),
    };
    super::warn_redefinitions(file, &prog);
    if check {
        return Ok(ExitCode::SUCCESS);
    }
    // `--opt 1|2` optimises first (FCODE is optimised again: its FUSED instructions stay).
    let prog = match nesl::pipeline::optimise(&prog, opts.opt) {
        Ok(p) => p,
        Err(nesl::Error::Optimise { error, .. }) => {
            return Ok(report(file, [format!(" cannot optimise at level {}: {error}", opts.opt)]))
        }
        Err(e) => return Ok(report(file, [format!(" {e}")])),
    };
    let library = match Library::open(opts.backend) {
        Ok(l) => l,
        Err(e) => return Ok(report(file, [format!(" {e}")])),
    };
    super::install_display(opts, false, Path::new("."))?;
    let run = nesl::exec::run_once(&prog, library, opts.stats, &mut std::io::stderr());
    super::finish_display();
    let trips = run.result.as_ref().map(|r| r.stats.round_trips.clone()).unwrap_or_default();
    let code = match run.result {
        Ok(rep) => {
            if opts.stats {
                super::run::print_op_rows(&rep.stats.rows);
                super::run::print_instructions(rep.stats.instructions);
                super::run::print_parts(rep.stats.parts);
            }
            match rep.outcome {
                vcode::RunOutcome::Finished(stack) => {
                    let mut so = std::io::stdout().lock();
                    so.write_all(vcode::format_vinterp(&stack).as_bytes())?;
                    so.flush()?;
                    ExitCode::SUCCESS
                }
                vcode::RunOutcome::Exited(status) => ExitCode::from(status.clamp(0, 255) as u8),
            }
        }
        // A trap names its VCODE line (`FILE:line:col: runtime error in function F ...`).
        Err(nesl::Error::Runtime(e)) if e.trap.site.is_some() => report(file, [e.trap.to_string()]),
        Err(nesl::Error::Runtime(e)) => report(file, [format!(" {}", e.trap)]),
        Err(e) => report(file, [format!(" {e}")]),
    };
    if let Some((device, rows)) = &run.device {
        super::run::print_device_rows(device, rows);
        super::run::print_round_trips(&trips);
    }
    Ok(code)
}
