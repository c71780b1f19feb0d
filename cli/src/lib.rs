//! `cudasem`: the command-line tool as a library. All I/O of the project lives in this crate;
//! the binary (`src/main.rs`) parses the command line and calls [`run`].
//!
//! Exit codes (ARCHITECTURE.md section 6, docs/reliability.md): 0 ran clean, 1 the program
//! misbehaved (or a time limit cut it short), 2 bad input, usage or an unwritable output, 3 an
//! internal error (a bug in cudasem), 130 interrupted by Ctrl-C.

mod bounds;
mod budget;
mod commands;
mod contexts;
mod emit;
mod error;
mod expectations;
mod kernel_source;
/// Launch files, read as every command and harness reads them.
use launch_file as launch;
mod failure;
mod flags;
#[cfg(test)]
mod fuzz_inputs;
mod options;
mod output;
mod registers;
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
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The clang that compiles `.cu` files (default: $CUDASEM_CLANG, else `clang` on PATH).
    #[arg(long, global = true, value_name = "PATH")]
    clang: Option<std::path::PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and load (validate) a PTX module and summarise it.
    Parse(commands::parse::ParseArgs),
    /// Print a kernel's control-flow graph with reconvergence points.
    Cfg(commands::cfg::CfgArgs),
    /// Run a kernel launch to completion (or to a bound) and print the buffers.
    Run(commands::run::RunArgs),
    /// Run a launch with the data race, barrier divergence and memory monitors on, over one,
    /// several or all schedules.
    Check(commands::check::CheckArgs),
    /// Verdicts of the GPU forward-progress models on AXB litmus tests (termination oracle).
    Progress(commands::progress::ProgressArgs),
    /// Step a kernel launch interactively (or from a script): breakpoints, watchpoints, the SIMT
    /// stack, choosing the schedule, stepping backwards, the rules behind each step.
    Debug(commands::debug::DebugArgs),
    /// The rules of the semantics: thesis section and lines, text, cudasem's deviations.
    Rules(commands::rules::RulesArgs),
    /// Re-execute a recorded trace (file or compact string) and check every choice.
    Replay(commands::replay::ReplayArgs),
    /// Run many seeded random (or PCT) schedules in parallel; histogram of outcomes.
    Fuzz(commands::fuzz::FuzzArgs),
    /// Explore every schedule: outcomes, and termination under a progress model (lassos).
    Explore(commands::explore::ExploreArgs),
    /// PTX memory-model litmus tests (herd format): every execution's outcome, the
    /// condition's verdict and a replayable witness.
    Litmus(commands::litmus::LitmusArgs),
    /// Combine the reports of every shard of one `fuzz` or `explore --search outcomes` run
    /// (`--shard I/N --report FILE`) into what the unsharded run prints.
    Merge(commands::merge::MergeArgs),
    /// Write a recorded run as a teaching page: one self-contained HTML file that steps
    /// through it as the thesis's figures draw it.
    View(commands::view::ViewArgs),
    /// Compile a CUDA file (.cu) to PTX with clang and cudasem's CUDA header.
    Cc(commands::cc::CcArgs),
    /// Write a launch file (RON) for a kernel from its signature.
    Launch(commands::launch_gen::LaunchGenArgs),
}

/// The outcome of a command, mapped to the process exit code.
pub enum Exit {
    /// 0: everything ran clean.
    Clean,
    /// 1: the program misbehaved (deadlock, step limit, error in the kernel, race...).
    Misbehaved,
    /// 2: bad input or usage (also: the output could not be written).
    BadInput,
    /// 3: an invariant of cudasem itself broke: a bug in cudasem, not in the program.
    Internal,
}

/// Exit code of an internal error (a bug in cudasem).
const INTERNAL_EXIT: u8 = 3;

impl Exit {
    /// Of two outcomes (of the files of one command), the one that says more: an internal
    /// error over bad input over misbehaviour over clean.
    pub fn worst(self, other: Exit) -> Exit {
        let rank = |o: &Exit| match o {
            Exit::Clean => 0,
            Exit::Misbehaved => 1,
            Exit::BadInput => 2,
            Exit::Internal => 3,
        };
        if rank(&other) > rank(&self) {
            other
        } else {
            self
        }
    }
}

impl Command {
    /// The `--timeout` of a command that takes one.
    fn timeout(&self) -> Option<std::time::Duration> {
        match self {
            Command::Run(a) => a.timeout.timeout,
            Command::Check(a) => a.run.timeout.timeout,
            Command::Fuzz(a) => a.timeout.timeout,
            Command::Explore(a) => a.timeout.timeout,
            Command::Litmus(a) => a.timeout.timeout,
            Command::Progress(a) => a.timeout.timeout,
            Command::Parse(_)
            | Command::Cfg(_)
            | Command::Debug(_)
            | Command::Rules(_)
            | Command::Replay(_)
            | Command::Merge(_)
            | Command::View(_)
            | Command::Cc(_)
            | Command::Launch(_) => None,
        }
    }

    /// Whether the command polls the stop flags (it runs kernels or explores states): those
    /// take `--timeout` and `--max-memory`.
    fn runs_kernels(&self) -> bool {
        matches!(
            self,
            Command::Run(_)
                | Command::Check(_)
                | Command::Fuzz(_)
                | Command::Explore(_)
                | Command::Litmus(_)
                | Command::Progress(_)
        )
    }

    /// The `--max-memory` of a command that launches kernels.
    fn max_memory(&self) -> Option<u64> {
        match self {
            Command::Run(a) => a.options.machine.device.max_memory,
            Command::Check(a) => a.run.options.machine.device.max_memory,
            Command::Fuzz(a) => a.options.machine.device.max_memory,
            Command::Explore(a) => a.options.machine.device.max_memory,
            Command::Replay(a) => a.options.machine.device.max_memory,
            Command::Debug(a) => a.options.machine.device.max_memory,
            Command::Litmus(a) => a.max_memory,
            Command::Progress(a) => a.max_memory,
            Command::Parse(_)
            | Command::Cfg(_)
            | Command::Rules(_)
            | Command::Merge(_)
            | Command::View(_)
            | Command::Cc(_)
            | Command::Launch(_) => None,
        }
    }
}

/// Runs the parsed command line: arms the watchdogs, runs the command and maps its
/// [`Exit`] (or an interruption) to the process exit code.
pub fn run(cli: Cli) -> ExitCode {
    // From the start: `--timeout` bounds set-up (loading, building buffers) too.
    timeout::arm(cli.command.timeout());
    budget::set(cli.command.max_memory());
    if cli.command.runs_kernels() {
        timeout::arm_memory(budget::bytes());
    }
    // The debugger's Ctrl-C interrupts its running command instead (commands::debug).
    if !matches!(cli.command, Command::Debug(_)) {
        timeout::install_interrupt();
    }
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
        Command::Merge(args) => commands::merge::run(args),
        Command::View(args) => commands::view::run(args),
        Command::Cc(args) => commands::cc::run(args),
        Command::Launch(args) => commands::launch_gen::run(args),
    };
    if timeout::interrupted() {
        eprintln!("interrupted (Ctrl-C): what was printed is a partial report");
        return ExitCode::from(timeout::INTERRUPTED_EXIT);
    }
    match outcome {
        Exit::Clean => ExitCode::SUCCESS,
        Exit::Misbehaved => ExitCode::from(1),
        Exit::BadInput => ExitCode::from(2),
        Exit::Internal => ExitCode::from(INTERNAL_EXIT),
    }
}
