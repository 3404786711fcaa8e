//! `nesl opt IN.vcode [-o OUT.fcode] [--emit-cuda OUT.cu] [--opt N] [--verify]
//! [--dump-after PASS] [--timings]`: optimise VCODE (or FCODE) into FCODE (level 2:
//! inline, let form, reduce, fuse, merged checks, stack code) and optionally write the CUDA C of its
//! superoperators. The output is checked with the VCODE verifier before it is written.
//! Errors print `error: FILE:line:col: message` and exit with status 1.

use fcode_opt::OptOptions;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Options of `nesl opt` beyond its files.
#[derive(Debug, Clone)]
pub struct OptFlags {
    /// Optimisation level (0, 1 or 2).
    pub level: u8,
    /// Verify the input and the result of every pass.
    pub verify: bool,
    /// Print the program after this pass on stderr.
    pub dump_after: Option<String>,
    /// Print the time of each pass on stderr.
    pub timings: bool,
    /// Print each instruction's origin as a comment.
    pub origins: bool,
}

impl Default for OptFlags {
    fn default() -> Self {
        OptFlags { level: 2, verify: false, dump_after: None, timings: false, origins: false }
    }
}

/// The lines after `error: FILE:` of an error reading a VCODE file: one per problem for
/// text that does not parse (each starting with its `line:col`).
pub fn file_errors(e: nesl::Error) -> Vec<String> {
    match e {
        nesl::Error::Vcode { errors, .. } => errors,
        nesl::Error::Io { io, .. } => vec![format!(" cannot read the file: {io}")],
        e => vec![format!(" {e}")],
    }
}

fn report(file: &Path, errors: impl IntoIterator<Item = String>) -> ExitCode {
    for e in errors {
        eprintln!("error: {}:{e}", file.display());
    }
    ExitCode::from(1)
}

/// Entry point of `nesl opt` with its flags (`--opt`, `--verify`, `--dump-after`,
/// `--timings`).
pub fn main(file: &Path, output: Option<&Path>, cuda_out: Option<&Path>, flags: &OptFlags) -> anyhow::Result<ExitCode> {
    let prog = match nesl::pipeline::read_vcode(file, false) {
        Ok(p) => p,
        Err(e) => return Ok(report(file, file_errors(e))),
    };
    super::warn_redefinitions(file, &prog);
    let opts = OptOptions { verify: flags.verify, dump_after: flags.dump_after.clone(), timings: flags.timings };
    let (out, rep) = match nesl::pipeline::optimise_with(&prog, flags.level, &opts) {
        Ok(r) => r,
        // A malformed input: each problem as `FILE:line:col: ...`.
        Err(nesl::Error::Optimise { error: fcode_opt::OptError::Verify { pass, errors }, .. }) if pass == "input" => {
            return Ok(report(file, errors.iter().map(|e| e.to_string())))
        }
        Err(nesl::Error::Optimise { error, .. }) => return Ok(report(file, [format!(" {error}")])),
        Err(e) => return Ok(report(file, [format!(" {e}")])),
    };
    if let Some((name, text)) = &rep.dump {
        eprintln!("; ---- after {name} ----\n{text}");
    }
    if flags.timings {
        eprint!("{}", rep.timings_text());
    }
    if let Err(errs) = vcode::verify(&out) {
        return Ok(report(
            file,
            errs.iter().map(|e| format!(" internal error: the optimised program does not verify: {e}")),
        ));
    }
    let name = file.display().to_string();
    let text = if flags.origins { out.with_origins(Some(&name)).to_string() } else { out.to_string() };
    match output {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| nesl::Error::write(path, e))?
        }
        None => std::io::stdout().lock().write_all(text.as_bytes())?,
    }
    if let Some(path) = cuda_out {
        // The CUDA backend's own generator: what it writes is what a GPU run compiles.
        let cu = cvl_cuda::superop::program_source(&out.superops)
            .map_err(|t| nesl::Error::Backend(format!("{}: --emit-cuda: {t}", file.display())))?;
        std::fs::write(path, cu).map_err(|e| nesl::Error::write(path, e))?;
    }
    Ok(ExitCode::SUCCESS)
}
