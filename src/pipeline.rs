//! The compiler pipeline: source text -> checked forms -> `vcode::Program` -> optimised
//! program.

use nesl_front::check::Session;
use nesl_front::flatten::{compile_program, CompileOptions};
use nesl_front::parser::parse_items;
use std::time::{Duration, Instant};

/// Compiles the whole file `src` (named `name`) as `nesl compile` does and optimises the
/// result at `level`, timing each stage: parse, check, flatten, optimise. `Err` says why
/// the file does not compile.
pub fn timed_compile(name: &str, src: &str, level: u8) -> Result<[Duration; 4], String> {
    let t0 = Instant::now();
    let parsed = parse_items(src);
    let t1 = Instant::now();
    let mut session = Session::new();
    session.set_source(name, src);
    let mut items = Vec::new();
    for item in parsed {
        let mut form = item.map_err(|d| format!("{} syntax errors", d.len()))?;
        session.check_item(&mut form).map_err(|d| format!("{} errors", d.len()))?;
        items.push(form);
    }
    let t2 = Instant::now();
    let program = compile_program(&session, &items, &CompileOptions::default()).map_err(|d| format!("{} errors", d.len()))?;
    let t3 = Instant::now();
    fcode_opt::optimize_report(&program, level, &fcode_opt::OptOptions::default()).map_err(|e| e.to_string())?;
    let t4 = Instant::now();
    Ok([t1 - t0, t2 - t1, t3 - t2, t4 - t3])
}
