//! fcode-opt: the optimiser of the GPU NESL paper (section 5).
//!
//! Turns VCODE into FCODE: inlines small non-recursive functions, converts stack code to
//! let-form, reduces it, fuses element-wise operations into superoperators and generates
//! stack code again with `FUSED n` instructions; it can also emit the CUDA C of each
//! superoperator. It does not run anything: the `vcode` crate executes FCODE.
//!
//! # Passes
//!
//! Each pass is a named function from one IR to the next; [`PASSES`] lists them in order:
//!
//! | name | from → to | what it does |
//! |---|---|---|
//! | `inline` | stack → stack | [`inline`]: bottom-up, non-recursive callees of at most [`INLINE_SIZE_LIMIT`] computational instructions (or with one call site) |
//! | `let` | stack → let | [`tolet`]: symbolic execution with the signatures of [`vcode::analyze`] (which checks the program); `COPY`/`POP`/`CPOP` disappear, `IF` becomes a structured statement |
//! | `cse` | let → let | [`cse`]: a pure statement repeating an earlier, dominating one (same instruction, same operands) reads that one's results |
//! | `reduce` | let → let | [`reduce`]: element-wise trees, substitution of single-use bindings and constants, folding of segment bookkeeping and checks on constants, dead code and unused parameters |
//! | `fuse` | let → let | [`fuse`]: trees of two or more operations become superoperators (deduplicated) |
//! | `checks` | let → let | [`checks`]: consecutive run-time checks over one segment descriptor become one pass, the checks themselves run only when it finds a failure; a test followed by the element-wise superoperator it guards becomes that superoperator's guard (one pass for both) |
//! | `codegen` | let → stack | [`codegen`]: compact stack code, `FUSED n` for superoperators |
//!
//! Level 0 returns the program unchanged; level 1 runs `inline`, `let`, `cse`, `reduce`
//! (without fusion) and `codegen`; level 2 runs all seven. With [`OptOptions::verify`] the input and
//! the output of every pass are checked (`vcode::verify` for stack code, [`lir::check`]
//! for let code); [`OptOptions::dump_after`] prints a pass's output on stderr and
//! [`OptOptions::timings`] the time each pass took. [`optimize_report`] returns both
//! instead of printing them. Constants are shared (`vcode::Const` holds `Arc` slices), so
//! passes that copy instructions never copy a large constant's elements.
//!
//! # Origins
//!
//! Every pass keeps each instruction's [`vcode::Origin`], so a run-time error in
//! optimised code names the same source place as in the input: the inliner records each
//! `CALL` it replaces in [`vcode::Program::inline_sites`] and points the copied
//! instructions' `inlined_at` at it (extending the chains of instructions the callee had
//! itself inlined); let statements and expression-tree operations carry the origin of
//! their stack instruction; a `FUSED` statement takes the origin of its first operation
//! that can trap (integer `/`, `%`), else of its root; code generation gives every
//! instruction the origin of the statement it serves (shuffles included) and `RET` the
//! input's `RET` origin. [`vcode::Program::scopes`] passes through unchanged.
//!
//! # CUDA kernels ([`emit_cuda`])
//!
//! One self-contained CUDA C text (no `#include`) with, for superoperator `n` of the
//! table, the kernel
//!
//! ```text
//! extern "C" __global__ void fused_<n>(const T0* __restrict__ a0, ..., const Tk* __restrict__ ak,
//!                                      R* __restrict__ r, long long n, long long* err)
//! ```
//!
//! * one pointer per parameter `$i`, in order: `const long long*` for `INT`,
//!   `const double*` for `FLOAT`, `const unsigned char*` (0 or 1) for `BOOL`, and
//!   `const void*` for a `SEGDES` parameter, which the kernel never reads (pass null);
//! * `r`: the result, of the superoperator's result type, `n` elements;
//! * `n`: the number of elements (the length rule of `FUSED`: element count of `$0` if it
//!   is a segment descriptor, otherwise its length); every data operand has `n` elements;
//! * `err`: an error mailbox of at least 3 `long long`s, zeroed before the launch (may be
//!   null): integer division or remainder by zero stores code 2 in `err[0]` (first error
//!   wins, by `atomicCAS`) and the dividend in `err[1]`; the element's result is then 0;
//! * any grid and block size works (grid-stride loop); each thread reads each operand
//!   element once and writes the result element once.
//!
//! A superoperator with a guard also gets `fused_<n>_guard`, of the same form, computing
//! the guard's tree (`unsigned char` per element; the library `OR`-reduces it).

pub mod checks;
pub mod codegen;
pub mod cse;
pub mod cuda;
pub mod fuse;
pub mod inline;
pub mod lir;
pub mod reduce;
pub mod tolet;
mod util;

pub use cuda::emit_cuda;
pub use inline::INLINE_SIZE_LIMIT;

use std::time::{Duration, Instant};
use vcode::{Program, VerifyError};

/// The passes, in the order they run (the names `--dump-after` accepts).
pub const PASSES: &[&str] = &["inline", "let", "cse", "reduce", "fuse", "checks", "codegen"];

/// Options of [`optimize`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptOptions {
    /// Check the input and the result of every pass.
    pub verify: bool,
    /// Print the program after this pass (one of [`PASSES`]) on stderr.
    pub dump_after: Option<String>,
    /// Print the time each pass took on stderr.
    pub timings: bool,
}

/// Why optimisation failed.
#[derive(Debug, thiserror::Error)]
pub enum OptError {
    /// The program is not well formed (unbalanced `IF`, stack underflow, unknown callee,
    /// branches of different depths...).
    #[error("{}{message}", if function.is_empty() { String::new() } else { format!("in function {function}: ") })]
    Malformed {
        /// The function (empty when the problem is global).
        function: String,
        /// What is wrong, with `line:col` when known.
        message: String,
    },
    /// A stack program failed `vcode::verify` after a pass (or as input).
    #[error("verification failed after `{pass}`:\n{}", .errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))]
    Verify {
        /// The pass (`input` for the program given).
        pass: String,
        /// The problems.
        errors: Vec<VerifyError>,
    },
    /// A let program failed [`lir::check`] after a pass.
    #[error("let-form check failed after `{pass}`:\n{}", .errors.join("\n"))]
    LetCheck {
        /// The pass.
        pass: String,
        /// The problems.
        errors: Vec<String>,
    },
    /// `dump_after` names no pass.
    #[error("unknown pass `{0}` (passes: inline, let, cse, reduce, fuse, checks, codegen)")]
    UnknownPass(String),
    /// The optimisation level is not 0, 1 or 2.
    #[error("unknown optimisation level {0} (0, 1 or 2)")]
    BadLevel(u8),
}

/// What [`optimize_report`] observed besides the result.
#[derive(Debug, Clone, Default)]
pub struct OptReport {
    /// Time of each pass that ran, in order.
    pub timings: Vec<(&'static str, Duration)>,
    /// The text of the program after the pass named by `dump_after`, if it ran.
    pub dump: Option<(String, String)>,
}

impl OptReport {
    /// The timings as text, one `pass  time` line each.
    pub fn timings_text(&self) -> String {
        self.timings.iter().map(|(n, d)| format!("{n:<8} {:>10.3} ms\n", d.as_secs_f64() * 1e3)).collect()
    }
}

struct Driver<'a> {
    opts: &'a OptOptions,
    report: OptReport,
}

impl Driver<'_> {
    fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> Result<T, OptError>) -> Result<T, OptError> {
        let t0 = Instant::now();
        let r = f()?;
        self.report.timings.push((name, t0.elapsed()));
        Ok(r)
    }
    fn after_stack(&mut self, name: &str, p: &Program) -> Result<(), OptError> {
        if self.opts.verify {
            vcode::verify(p).map_err(|errors| OptError::Verify { pass: name.to_string(), errors })?;
        }
        if self.opts.dump_after.as_deref() == Some(name) {
            self.report.dump = Some((name.to_string(), p.to_string()));
        }
        Ok(())
    }
    fn after_let(&mut self, name: &str, p: &lir::LProgram) -> Result<(), OptError> {
        if self.opts.verify {
            lir::check(p).map_err(|errors| OptError::LetCheck { pass: name.to_string(), errors })?;
        }
        if self.opts.dump_after.as_deref() == Some(name) {
            self.report.dump = Some((name.to_string(), p.to_string()));
        }
        Ok(())
    }
}

/// Optimises `p` at `level` (0 = identity, 1 = inline + let + re-stack, 2 = + fusion) and
/// returns the new program (FCODE when superoperators were made). Dumps and timings asked
/// for in `opts` are printed on stderr; see [`optimize_report`] to get them instead.
pub fn optimize(p: &Program, level: u8, opts: &OptOptions) -> Result<Program, OptError> {
    let (out, report) = optimize_report(p, level, opts)?;
    if let Some((name, text)) = &report.dump {
        eprintln!("; ---- after {name} ----\n{text}");
    }
    if opts.timings {
        eprint!("{}", report.timings_text());
    }
    Ok(out)
}

/// [`optimize`], returning the pass timings and the requested dump instead of printing
/// them.
pub fn optimize_report(p: &Program, level: u8, opts: &OptOptions) -> Result<(Program, OptReport), OptError> {
    if let Some(d) = &opts.dump_after {
        if !PASSES.contains(&d.as_str()) {
            return Err(OptError::UnknownPass(d.clone()));
        }
    }
    if level > 2 {
        return Err(OptError::BadLevel(level));
    }
    let mut drv = Driver { opts, report: OptReport::default() };
    if level == 0 {
        return Ok((p.clone(), drv.report));
    }
    if opts.verify {
        vcode::verify(p).map_err(|errors| OptError::Verify { pass: "input".into(), errors })?;
    }
    let inlined = drv.time("inline", || inline::inline(p))?;
    drv.after_stack("inline", &inlined)?;
    let mut lp = drv.time("let", || {
        // The verifier's analysis gives every function's stack signature.
        // A malformed input is reported as such (the inliner keeps positions, so its
        // errors are the input's); otherwise the inliner broke the program.
        let analysis = vcode::analyze(&inlined).map_err(|errors| match vcode::analyze(p) {
            Err(errors) => OptError::Verify { pass: "input".into(), errors },
            Ok(_) => OptError::Verify { pass: "inline".into(), errors },
        })?;
        tolet::to_let(&inlined, &analysis)
    })?;
    drv.after_let("let", &lp)?;
    drv.time("cse", || {
        cse::cse(&mut lp);
        Ok(())
    })?;
    drv.after_let("cse", &lp)?;
    let entry = inlined.entry();
    drv.time("reduce", || {
        reduce::reduce(&mut lp, entry, level >= 2);
        Ok(())
    })?;
    drv.after_let("reduce", &lp)?;
    if level >= 2 {
        drv.time("fuse", || {
            fuse::fuse(&mut lp);
            reduce::dead_code(&mut lp, entry);
            Ok(())
        })?;
        drv.after_let("fuse", &lp)?;
        drv.time("checks", || {
            checks::merge_checks(&mut lp);
            Ok(())
        })?;
        drv.after_let("checks", &lp)?;
    }
    let out = drv.time("codegen", || codegen::codegen(&lp))?;
    drv.after_stack("codegen", &out)?;
    Ok((out, drv.report))
}
