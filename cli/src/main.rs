//! `cudasem`: the command-line tool. All I/O of the project lives in this crate.
//!
//! Exit codes (ARCHITECTURE.md section 6): 0 ran clean, 1 the program misbehaved, 2 bad input or
//! usage.

mod commands;
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
    /// Write a recorded run as a teaching page: one self-contained HTML file that steps
    /// through it as the thesis's figures draw it.
    View(commands::view::Args),
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
    let cli = Cli::parse();
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
        Command::View(args) => commands::view::run(args),
    };
    match outcome {
        Outcome::Clean => ExitCode::SUCCESS,
        Outcome::Misbehaved => ExitCode::from(1),
        Outcome::BadInput => ExitCode::from(2),
    }
}
