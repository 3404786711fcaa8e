//! One module per subcommand; each exposes `main(...) -> anyhow::Result<ExitCode>`.

use crate::{Cli, Command};
use std::process::ExitCode;

pub mod bench;
pub mod check;
pub mod compile;
pub mod debug;
pub mod frontbench;
pub mod opt;
pub mod repl;
pub mod run;
pub mod test;
pub mod vcode;

/// Installs the graphics display that `opts` chose (`--display`, `--events`); without
/// `--display`: the web page when `person` (a person at a terminal), else SVG files in
/// `svg_default`.
pub fn install_display(opts: &crate::RunOpts, person: bool, svg_default: &std::path::Path) -> anyhow::Result<()> {
    use nesl::display::Choice;
    let choice = match &opts.display {
        Some(s) => Choice::parse(s).map_err(anyhow::Error::msg)?,
        None if person => Choice::Web,
        None => Choice::Svg(svg_default.to_path_buf()),
    };
    if opts.events.is_some() && choice == Choice::Web {
        anyhow::bail!("--events is for the svg display; the web display takes input from its page");
    }
    nesl::display::install(&choice, opts.events.as_deref(), person).map_err(anyhow::Error::msg)
}

/// Writes out the windows still open at the end of a run (SVG files); a failure is
/// reported on stderr.
pub fn finish_display() {
    if let Err(e) = nesl::display::finish() {
        eprintln!("error: {e}");
    }
}

/// True when a person is at the terminal (standard input and output are terminals).
pub fn person_at_terminal() -> bool {
    use std::io::IsTerminal;
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// The exit status of a program stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
pub const INTERRUPTED: u8 = 130;

/// Catches Ctrl-C (SIGINT) for the commands that run code: the first press asks the
/// running evaluation to stop ([`::vcode::interrupt::request`]: the interpreter and the
/// vector library poll it, the top level goes on or, in `nesl run`, ends with status
/// 130). With `exit_on_second`, a second press before the first was answered ends the
/// process at once with status 130 (a front end busy on a huge input does not poll).
fn catch_interrupts(exit_on_second: bool) {
    use std::sync::atomic::{AtomicBool, Ordering};
    static PRESSED: AtomicBool = AtomicBool::new(false);
    let installed = ctrlc::set_handler(move || {
        if exit_on_second && PRESSED.swap(true, Ordering::Relaxed) && ::vcode::interrupt::requested() {
            std::process::exit(i32::from(INTERRUPTED));
        }
        ::vcode::interrupt::request();
    });
    if let Err(e) = installed {
        eprintln!("warning: Ctrl-C cannot be caught ({e}); it ends the process");
    }
}

/// Runs the chosen subcommand; `Ok` carries the exit status. A command whose standard
/// output was closed (`nesl run f.nesl | head -1`) stops there quietly, with status 0.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match run_command(cli) {
        Err(e) if is_broken_pipe(&e) => Ok(ExitCode::SUCCESS),
        r => r,
    }
}

/// Prints a warning on stderr for each function of a VCODE file defined again under the
/// same name, naming both places (the later definition wins, as the spec says).
pub fn warn_redefinitions(file: &std::path::Path, program: &::vcode::Program) {
    let file = file.display();
    for (name, before, later) in program.redefinitions() {
        eprintln!(
            "warning: {file}:{}:{}: function `{name}` is defined again; this definition replaces the one at {file}:{}:{}",
            later.line, later.col, before.line, before.col
        );
    }
}

/// True when `e` comes from writing to a closed pipe.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

fn run_command(cli: Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Run { .. } => catch_interrupts(true),
        Command::Repl { .. } | Command::Debug { .. } => catch_interrupts(false),
        _ => {}
    }
    match cli.command {
        Command::Run { file, opts, stats_json } => run::main(&file, &opts, stats_json.as_deref()),
        Command::Check { file } => check::main(&file),
        Command::Compile { file, output, origins } => compile::main(&file, output.as_deref(), origins),
        Command::Vcode { file, check, opts } => vcode::main(&file, check, &opts),
        Command::Opt { file, output, emit_cuda, opt: level, verify, dump_after, timings, origins } => {
            let flags = opt::OptFlags { level, verify, dump_after, timings, origins };
            opt::main(&file, output.as_deref(), emit_cuda.as_deref(), &flags)
        }
        Command::Test { dirs, opts } => test::main(&dirs, &opts),
        Command::Repl { opts } => repl::main(&opts),
        Command::Debug { file, backend, opt } => debug::main(&file, backend, opt),
        Command::Bench { quick, sweep, runs, programs, opt, backend, threads_list, timeout, out } => {
            let threads = threads_list.into_iter().map(|t| t as usize).collect();
            bench::main(bench::Args { quick, sweep, runs, programs, opt, backend, threads, timeout, out })
        }
        Command::Frontbench { paths, runs } => frontbench::main(&paths, runs),
        Command::BenchPeer { program, n } => bench::peer_main(&program, n),
    }
}
