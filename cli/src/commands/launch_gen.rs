//! `cudasem launch FILE.cu|FILE.ptx [--kernel K] [--threads N] [--block X] [-o FILE.ron]`: a
//! launch file written from the kernel's signature (`cuda_front::launch_gen`: every parameter,
//! buffers of N elements, types from the C++ signature or the PTX), which `cudasem run FILE
//! --launch FILE.ron` runs as it is.
//!
//! The plan is tried before it is written: one round-robin run, at most [`TRIAL_STEPS`] steps.
//! A trial that leaves a launch buffer doubles that buffer (a kernel may write several elements
//! per thread); one that leaves shared memory halves the integer scalars (a bin count or a size
//! the kernel's fixed shared arrays cannot hold), or when none is left the block (more threads
//! than those arrays have elements); at most [`TRIAL_REPAIRS`] such changes. The
//! launch file's header says how the last trial ended. `--no-trial` writes the plan untried.
//!
//! Exit codes: 0 written, 2 bad input (unreadable or invalid kernel file, no such kernel).

use crate::Exit;
use crate::error::Error;
use crate::failure::Failure;
use crate::launch::Launch;
use cuda_front::launch_gen::{CudaSource, Hint, LaunchPlan};
use semantics::machine::{ErrorKind, Machine, MachineConfig, Termination};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Steps of a trial run: enough for the corpus's kernels at the default size, bounded so that
/// `launch` answers at once for a kernel that does not terminate.
pub const TRIAL_STEPS: u64 = 2_000_000;
/// Changes the trials may make before the plan is written as it stands.
pub const TRIAL_REPAIRS: usize = 16;

#[derive(clap::Args)]
pub struct LaunchGenArgs {
    /// The kernel file (PTX, or CUDA compiled with clang).
    pub file: PathBuf,
    /// The kernel to launch (PTX name or C++ name; needed when the module has several).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// Threads to launch in all; buffers get this many elements.
    #[arg(long, value_name = "N", default_value_t = 256,
          value_parser = clap::value_parser!(u64).range(1..=(1 << 24)))]
    pub threads: u64,
    /// Threads per block in x (default 64 for a 1D kernel, 8x8 for 2D, 4x4x4 for 3D).
    #[arg(long, value_name = "X", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub block: Option<u32>,
    /// Write the launch as planned, without a trial run.
    #[arg(long)]
    pub no_trial: bool,
    /// Write the launch file here (default: standard output).
    #[arg(short, long, value_name = "FILE.ron")]
    pub output: Option<PathBuf>,
}

pub fn run(args: LaunchGenArgs) -> Exit {
    Failure::outcome(run_inner(&args).map(|()| Exit::Clean))
}

fn run_inner(args: &LaunchGenArgs) -> Result<(), Failure> {
    let path = args.file.display().to_string();
    let ptx = crate::kernel_source::read_kernel(&args.file)?;
    let ptx_name = crate::kernel_source::ptx_name(&args.file);
    let program = crate::commands::run::load_program(&ptx_name, &ptx)?;
    // The C++ parameter names come from the `.cu` text at the kernel's line.
    let cuda_text = if cuda_front::is_cuda_source(&args.file) {
        std::fs::read_to_string(&args.file).ok()
    } else {
        None
    };
    let source = cuda_text.as_deref().map(|text| CudaSource {
        name: path.as_str(),
        text,
    });
    let hint = Hint {
        threads: args.threads,
        block_x: args.block,
    };
    let mut plan =
        cuda_front::launch_gen::plan_launch(&program, args.kernel.as_deref(), &hint, &path, source)
            .map_err(|e| Error::Input(e.to_string()))?;
    if !args.no_trial {
        let program = Arc::new(program);
        let note = try_and_repair(&program, &mut plan, &path);
        plan.notes.push(note);
    }
    let ron = plan.render();
    match &args.output {
        Some(out) => {
            std::fs::write(out, ron).map_err(|e| Error::io("cannot write", out.display(), e).into())
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(ron.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(Error::Input(format!("error: cannot write the launch file: {e}")).into())
                }
                _ => Ok(()),
            }
        }
    }
}

/// Runs the plan (round-robin, [`TRIAL_STEPS`]) and repairs what a trial shows too small (module
/// doc); returns the header note saying how the last trial ended.
fn try_and_repair(program: &Arc<semantics::Program>, plan: &mut LaunchPlan, path: &str) -> String {
    let mut repairs = 0;
    loop {
        let ended = match trial(program, plan, path) {
            Ok(t) => t,
            Err(error) => return format!("not tried: {}", error.to_string().trim()),
        };
        let (termination, steps) = ended;
        let described = match &termination {
            Termination::Completed => {
                return format!("A trial run (round-robin) completed in {steps} steps.");
            }
            Termination::StepLimit | Termination::TimeLimit => {
                format!("did not end within {TRIAL_STEPS} steps")
            }
            Termination::Deadlock(_) => "deadlocked".to_string(),
            Termination::Error(e) => {
                if e.kind == ErrorKind::OutOfBounds && repairs < TRIAL_REPAIRS {
                    let named = plan
                        .buffer_names()
                        .into_iter()
                        .find(|n| e.message.contains(&format!("buffer `{n}`")))
                        .map(str::to_string);
                    let repaired = match named {
                        Some(n) => plan.grow_buffer(&n),
                        None if e.message.contains("shared") => {
                            plan.halve_scalars() || plan.halve_block()
                        }
                        None => false,
                    };
                    if repaired {
                        repairs += 1;
                        continue;
                    }
                }
                format!("stopped: {}", e.message)
            }
        };
        return format!(
            "A trial run (round-robin, {steps} steps) {described}: adjust the launch before running it."
        );
    }
}

/// One trial: the plan's launch on the default machine, round-robin.
fn trial(
    program: &Arc<semantics::Program>,
    plan: &LaunchPlan,
    path: &str,
) -> Result<(Termination, u64), Error> {
    let launch = Launch::from_ron(&plan.render(), path, Path::new("."))
        .map_err(|e| Error::Input(e.message))?;
    let resolved = launch
        .resolve(program)
        .map_err(|e| Error::Input(e.message))?;
    let mut machine = Machine::new(
        Arc::clone(program),
        &resolved.config,
        &MachineConfig::default(),
    )
    .map_err(|e| Error::Input(e.message))?;
    let mut rr = scheduler::RoundRobin::new();
    let termination = scheduler::run_until(
        &mut machine,
        &mut rr,
        TRIAL_STEPS,
        &scheduler::Stop::never(),
    );
    Ok((termination, machine.steps()))
}
