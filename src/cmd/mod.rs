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

/// Runs the chosen subcommand; `Ok` carries the exit status.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
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
