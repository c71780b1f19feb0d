//! `cudasem`: the command-line tool. All I/O of the project lives in this crate.
//!
//! Exit codes (ARCHITECTURE.md section 6): 0 ran clean, 1 the program misbehaved, 2 bad input or
//! usage.

mod commands;
mod kernel_source;
mod launch;
mod options;
mod output;
mod render;
mod teach;
mod timeout;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cudasem",
    version,
    about = "Execute CUDA programs (PTX) under a formal small-step semantics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The clang that compiles `.cu` files (default: $CUDASEM_CLANG, else `clang` on PATH).
    #[arg(long, global = true, value_name = "PATH")]
    clang: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and load (validate) a PTX module and summarise it.
    Parse(commands::parse::Args),
    /// Print a kernel's control-flow graph with reconvergence points.
    Cfg(commands::cfg::Args),
    /// Run a kernel launch to completion (or to a bound) and print the buffers.
    Run(commands::run::Args),
    /// Run a launch with the data race, barrier divergence and memory monitors on, over one,
    /// several or all schedules.
    Check(commands::check::Args),
    /// Verdicts of the GPU forward-progress models on AXB litmus tests (termination oracle).
    Progress(commands::progress::Args),
    /// Step a kernel launch interactively (or from a script): breakpoints, watchpoints, the SIMT
    /// stack, choosing the schedule, stepping backwards, the rules behind each step.
    Debug(commands::debug::Args),
    /// The rules of the semantics: thesis section and lines, text, cudasem's deviations.
    Rules(commands::rules::Args),
    /// Re-execute a recorded trace (file or compact string) and check every choice.
    Replay(commands::replay::Args),
    /// Run many seeded random (or PCT) schedules in parallel; histogram of outcomes.
    Fuzz(commands::fuzz::Args),
    /// Explore every schedule: outcomes, and termination under a progress model (lassos).
    Explore(commands::explore::Args),
    /// PTX memory-model litmus tests (herd format): every execution's outcome, the
    /// condition's verdict and a replayable witness.
    Litmus(commands::litmus::Args),
    /// Compile a CUDA file (.cu) to PTX with clang and cudasem's CUDA header.
    Cc(commands::cc::Args),
    /// Write a launch file (RON) for a kernel from its signature.
    Launch(commands::launch_gen::Args),
}

/// The outcome of a command, mapped to the process exit code.
pub enum Outcome {
    /// 0: everything ran clean.
    Clean,
    /// 1: the program misbehaved (deadlock, step limit, error in the kernel, race...).
    Misbehaved,
    /// 2: bad input or usage.
    BadInput,
}

fn main() -> ExitCode {
    init_tracing();
    let cli = Cli::parse();
    kernel_source::set_clang(cli.clang);
    let outcome = match cli.command {
        Command::Parse(args) => commands::parse::run(args),
        Command::Cfg(args) => commands::cfg::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Progress(args) => commands::progress::run(args),
        Command::Debug(args) => commands::debug::run(args),
        Command::Rules(args) => commands::rules::run(args),
        Command::Replay(args) => commands::replay::run(args),
        Command::Fuzz(args) => commands::fuzz::run(args),
        Command::Explore(args) => commands::explore::run(args),
        Command::Litmus(args) => commands::litmus::run(args),
        Command::Cc(args) => commands::cc::run(args),
        Command::Launch(args) => commands::launch_gen::run(args),
    };
    match outcome {
        Outcome::Clean => ExitCode::SUCCESS,
        Outcome::Misbehaved => ExitCode::from(1),
        Outcome::BadInput => ExitCode::from(2),
    }
}

/// Internal diagnostics (`CUDASEM_LOG=semantics=trace`) go to stderr; off by default.
fn init_tracing() {
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("CUDASEM_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init();
    }
}
