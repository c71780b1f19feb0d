//! `cudasem`: the binary. It parses the command line and hands it to the library's [`cli::run`],
//! which runs the command and gives the exit code (see the library's header for the codes).

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    cli::run(cli::Cli::parse())
}
