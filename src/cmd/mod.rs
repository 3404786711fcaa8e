//! One module per subcommand.

use crate::{Cli, Command};
use std::process::ExitCode;

/// Runs the chosen subcommand; `Ok` carries the exit status.
pub fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        other => anyhow::bail!("`{}` is not implemented yet", command_name(&other)),
    }
}

fn command_name(c: &Command) -> &'static str {
    match c {
        Command::Run { .. } => "run",
        Command::Check { .. } => "check",
        Command::Compile { .. } => "compile",
        Command::Vcode { .. } => "vcode",
        Command::Opt { .. } => "opt",
        Command::Test { .. } => "test",
    }
}
