//! `cudasem run`: load a PTX module, read the launch (file and/or flags), run one schedule until
//! the kernel ends or the step bound is hit, and print the buffers, the status and the step count.
//!
//! Exit codes: 0 completed, 1 the program misbehaved (deadlock, step limit, fault), 2 bad input
//! (unreadable files, parse/load errors, a bad launch, a launch the device cannot hold).
//! A failing run prints the `cudasem replay` command that reproduces it: its schedule is
//! recorded as it runs (`scheduler::replay::Recorder`) and handed to the one helper that
//! `fuzz` and `explore` use too (`commands::replay::reproduce`).

use crate::Outcome;
use crate::failure::Failure;
use crate::launch::{DeviceFile, Launch, LaunchError, LaunchFlags};
use crate::options::{RunOptions, Setup};
use crate::output::{PrintedBuffer, RunReport, shell_command};
use crate::render;
use explore::policy::Policy;
use scheduler::Scheduler;
use semantics::machine::Termination;
use semantics::machine::{DeviceConfig, Machine, MachineConfig, MemoryKind, WarpModel};
use std::io::Write;
use std::path::PathBuf;
use traces::Choice;

/// Generous but bounded: a kernel that has not ended after this many steps is reported as such.
pub const DEFAULT_MAX_STEPS: u64 = 100_000_000;

#[derive(clap::Args)]
pub struct Args {
    /// The PTX file, or a CUDA file (.cu, compiled with clang: docs/cuda.md).
    pub file: PathBuf,
    /// The launch file (RON): kernel, grid, block, buffers, args, globals, print (docs/run.md).
    #[arg(long, value_name = "FILE.ron")]
    pub launch: Option<PathBuf>,

    #[command(flatten)]
    pub quick: Box<QuickLaunch>,

    /// How warps execute divergent code.
    #[arg(long, value_enum, default_value_t = WarpModelArg::SimtStack)]
    pub warp_model: WarpModelArg,
    /// The memory system.
    #[arg(long, value_enum, default_value_t = MemoryArg::Flat)]
    pub memory: MemoryArg,
    /// The scheduling policy: round-robin, random:SEED, pct:SEED:DEPTH, replay:FILE (a trace
    /// file's choices, then round-robin) or MODEL@LEVEL[:SEED] (only schedules fair under a
    /// progress model: fair@blocks, obe-strong@warps:7).
    #[arg(long, value_name = "POLICY", default_value = "round-robin", value_parser = parse_policy)]
    pub schedule: Policy,
    /// Stop after this many steps (one step = one choice: a warp instruction, a block issue, a
    /// barrier completion...).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STEPS)]
    pub max_steps: u64,
    #[command(flatten)]
    pub timeout: crate::timeout::Timeout,
    /// Write the run as JSON Lines: a header (program hash, launch, config, seed), then one line
    /// per choice taken.
    #[arg(long, value_name = "OUT.jsonl")]
    pub trace: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Teaching view: `stack` prints, per warp, the thesis-style table of every step (PTX line
    /// executed, active mask α, disable mask δ, token stack τ after it; thesis Figure 5.2).
    #[arg(long, value_enum, value_name = "VIEW")]
    pub show: Option<Show>,
    /// The format of `--trace`: `jsonl` (replayable choices) or `perfetto` (Chrome trace JSON
    /// for the Perfetto UI: a track per warp, a slice per instruction).
    #[arg(long, value_enum, default_value_t = TraceFormat::Jsonl, requires = "trace")]
    pub trace_format: TraceFormat,
    /// Also write the run's teaching page (as `cudasem view` does): one self-contained HTML
    /// file, the first steps in full and the whole run as an overview (docs/teaching.md).
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,

    #[command(flatten)]
    pub device: Box<DeviceArgs>,
    /// Hardware behaviour: an exited warp counts as arrived at its block's barriers.
    #[arg(long)]
    pub exited_warps_arrive: bool,
    /// Check the SIMT stack's safety invariants (thesis chapter 6) after every step (slower).
    #[arg(long)]
    pub check_invariants: bool,
    /// Run only context N (from 0) of a launch file with `contexts: [...]` (thesis 5.8); without
    /// it, `run`, `fuzz`, `explore` and `check` run every context in turn.
    #[arg(long, value_name = "N")]
    pub context: Option<usize>,
}

/// Flags that describe a launch or override a launch file's fields.
#[derive(clap::Args, Clone)]
#[command(next_help_heading = "Launch flags (override the launch file's fields)")]
pub struct QuickLaunch {
    /// The kernel (.entry) to launch (overrides the launch file's `kernel`).
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,
    /// Grid dimensions (overrides `grid`).
    #[arg(long, value_name = "X[,Y,Z]")]
    pub grid: Option<String>,
    /// Block dimensions (overrides `block`).
    #[arg(long, value_name = "X[,Y,Z]")]
    pub block: Option<String>,
    /// Bytes of dynamic shared memory (`.extern .shared`; overrides `shared`).
    #[arg(long, value_name = "BYTES")]
    pub shared: Option<u32>,
    /// A buffer: INIT is zeros, range:START:STEP, values:V1,V2,..., random:SEED:MIN:MAX or
    /// file:PATH. Replaces the launch file's buffer of the same name.
    #[arg(long = "buffer", value_name = "NAME:TYPE:LEN[:INIT]")]
    pub buffers: Vec<String>,
    /// A kernel argument: buffer:NAME, TYPE:VALUE (s32:100, f32:2.5) or null. Given at all,
    /// these replace the launch file's `args`.
    #[arg(long = "arg", value_name = "ARG")]
    pub args: Vec<String>,
    /// Initial value of a module variable (overrides `globals`).
    #[arg(long = "global", value_name = "NAME=VALUE")]
    pub globals: Vec<String>,
    /// Buffers to print, comma separated (overrides `print`; default all).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub print: Option<Vec<String>>,
    /// An expectation on the final buffers (repeatable; adds to the launch file's `expect`):
    /// `out == [1, 2, 3]`, `sum(out) == 8256`, `out[i] == 2*a[i]` (an index variable ranges
    /// over the buffer it indexes). A run that violates one fails (docs/run.md).
    #[arg(long = "expect", value_name = "EXPR")]
    pub expect: Vec<String>,
}

/// The device's shape.
#[derive(clap::Args, Clone)]
#[command(next_help_heading = "Device")]
pub struct DeviceArgs {
    /// The device's shape (RON, any subset of the fields below).
    #[arg(long, value_name = "FILE.ron")]
    pub device: Option<PathBuf>,
    /// Number of SMs.
    #[arg(long, value_name = "N")]
    pub sms: Option<u32>,
    /// Threads per warp (32 on NVIDIA GPUs; small values reproduce the thesis's figures).
    #[arg(long, value_name = "N")]
    pub warp_size: Option<u32>,
    #[arg(long, value_name = "N")]
    pub max_blocks_per_sm: Option<u32>,
    #[arg(long, value_name = "N")]
    pub max_threads_per_sm: Option<u32>,
    #[arg(long, value_name = "N")]
    pub max_warps_per_sm: Option<u32>,
    #[arg(long, value_name = "BYTES")]
    pub shared_mem_per_sm: Option<u32>,
    #[arg(long, value_name = "N")]
    pub max_threads_per_block: Option<u32>,
    /// The memory budget of the command (bytes, or with a K, M, G or T suffix): a launch whose
    /// buffers exceed it is refused before anything is allocated. Default: half of the
    /// machine's memory.
    #[arg(long, value_name = "BYTES", value_parser = crate::budget::parse_size)]
    pub max_memory: Option<u64>,
    /// `--memory cached`: bytes per cache line (a power of two, 8 to 64; default 32).
    #[arg(long, value_name = "BYTES")]
    pub line_bytes: Option<u32>,
    /// `--memory cached`: lines per L1 (one L1 per SM; default 1024).
    #[arg(long, value_name = "N")]
    pub l1_lines: Option<u32>,
    /// `--memory cached`: lines of the L2 (default 16384).
    #[arg(long, value_name = "N")]
    pub l2_lines: Option<u32>,
    /// `--memory cached`: which silent cache actions the scheduler may take (thesis 4.6):
    /// none, observable (L1 evictions and flushes, the default) or all.
    #[arg(long, value_enum, value_name = "WHICH")]
    pub silent: Option<SilentArg>,
}

/// `--silent`: which silent rules of the cached memory are choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SilentArg {
    None,
    Observable,
    All,
}

impl SilentArg {
    pub(crate) fn name(self) -> &'static str {
        match self {
            SilentArg::None => "none",
            SilentArg::Observable => "observable",
            SilentArg::All => "all",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WarpModelArg {
    /// The thesis's SIMT stack (lock-step, reconvergence at post-dominators).
    SimtStack,
    /// Independent thread scheduling (Volta+).
    Its,
    /// Every thread alone, interleaved.
    Threads,
}

impl WarpModelArg {
    pub(crate) fn model(self) -> WarpModel {
        match self {
            WarpModelArg::SimtStack => WarpModel::SimtStack,
            WarpModelArg::Its => WarpModel::Its,
            WarpModelArg::Threads => WarpModel::Threads,
        }
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            WarpModelArg::SimtStack => "simt-stack",
            WarpModelArg::Its => "its",
            WarpModelArg::Threads => "threads",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MemoryArg {
    /// Sequentially consistent memory; an access completes inside its step.
    Flat,
    /// Thesis chapter 4: per-SM L1s (not coherent), one L2, DRAM; accesses are memory programs
    /// whose micro steps the scheduler interleaves.
    Cached,
}

impl MemoryArg {
    pub(crate) fn name(self) -> &'static str {
        match self {
            MemoryArg::Flat => "flat",
            MemoryArg::Cached => "cached",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Readable rows and a status paragraph.
    Text,
    /// One JSON object.
    Json,
}

/// `--show`: teaching views printed before the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Show {
    /// The thesis-style SIMT stack table per warp.
    Stack,
}

/// `--trace-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    /// A header line and one JSON choice per line (replayable).
    Jsonl,
    /// Chrome trace JSON (Perfetto UI, chrome://tracing).
    Perfetto,
}

/// The two policies `debug` and `check --schedules` take (`--schedule` of `run` takes every
/// [`Policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    RoundRobin,
    Random(u64),
}

/// `--schedule` of `run` (and `check`): every policy `explore::policy` names.
pub fn parse_policy(text: &str) -> Result<Policy, String> {
    text.parse()
        .map_err(|e: explore::policy::BadPolicy| e.to_string())
}

pub fn parse_schedule(text: &str) -> Result<Schedule, String> {
    match text.split_once(':') {
        None if text == "round-robin" => Ok(Schedule::RoundRobin),
        Some(("random", seed)) => seed.parse().map(Schedule::Random).map_err(|_| {
            format!("`{seed}` is not a seed: write random:SEED with SEED a number up to 2^64-1")
        }),
        _ if text == "random" => {
            Err("random needs a seed: write random:SEED, e.g. random:7".to_string())
        }
        _ => Err(format!(
            "unknown schedule `{text}`: write round-robin or random:SEED"
        )),
    }
}

pub fn run(mut args: Args) -> Outcome {
    match crate::contexts::count(&args.run_options()) {
        0 => run_inner(&args).unwrap_or_else(Failure::report),
        n => {
            let files = [
                ("--html", args.html.is_some()),
                ("--trace", args.trace.is_some()),
            ];
            if let Some(refused) = crate::contexts::refuse_files(n, &files) {
                return refused;
            }
            let json = args.format == Format::Json;
            crate::contexts::each(n, json, |i| {
                args.context = Some(i);
                run_inner(&args).unwrap_or_else(Failure::report)
            })
        }
    }
}

/// Runs the command; `Err` is bad input, already rendered for stderr.
fn run_inner(args: &Args) -> Result<Outcome, Failure> {
    let options = args.run_options();
    let setup = options.setup(&args.file)?;
    let result = execute(&setup, args)?;
    // Stopped or ended: what remains is the report (the watchdogs let it finish).
    crate::timeout::reporting();
    if let (Some(path), Some(choices)) = (&args.html, &result.choices) {
        let policy = args.schedule.to_string();
        crate::commands::view::write_html_flag(&setup, choices, None, policy, None, path)?;
    }
    // Expectations speak of final buffers: they are checked when the run completed.
    let expectations = if result.termination == Termination::Completed {
        crate::expectations::check(&setup.resolved, |i| {
            result.buffers.get(i).map(Vec::as_slice)
        })
    } else {
        Vec::new()
    };
    let failed = !matches!(result.termination, Termination::Completed)
        || expectations.iter().any(|(_, v)| v.is_some());
    let replay = if failed {
        reproduce_command(&setup, &options, args, &result)?
    } else {
        String::new()
    };

    let resolved = &setup.resolved;
    let buffers = resolved
        .print
        .iter()
        .map(|&i| PrintedBuffer {
            name: &resolved.config.buffers[i].name,
            elem: resolved.elems[i],
            bytes: &result.buffers[i],
        })
        .collect();
    let report = RunReport {
        kernel: &setup.kernel_title(),
        ptx_path: &setup.ptx_name,
        files: &setup.program.files,
        buffers,
        termination: &result.termination,
        steps: result.steps,
        max_steps: args.max_steps,
        setup: format!("{}, {}", setup.setup_text(), args.schedule),
        replay,
        expectations,
        grids: crate::output::grid_kernels(&setup.machine),
    };
    let out = match args.format {
        Format::Text => report.text(),
        Format::Json => report.json() + "\n",
    };
    crate::emit::stdout(&out)?;
    Ok(if failed {
        Outcome::Misbehaved
    } else {
        Outcome::Clean
    })
}

/// The `cudasem replay ...` command of a failed run: its recorded schedule when it was kept
/// whole, else the `--trace` file it wrote, else (a run too long to keep) the `run` command
/// itself with the advice to write a trace.
fn reproduce_command(
    setup: &Setup,
    options: &RunOptions,
    args: &Args,
    result: &RunResult,
) -> Result<String, String> {
    if result.termination == Termination::TimeLimit {
        // Cut by time: the same run bounded by the steps it made reproduces it.
        return Ok(crate::options::own_command(
            &[
                ("--timeout", true),
                ("--max-steps", true),
                ("--format", true),
            ],
            &["--max-steps".to_string(), result.steps.to_string()],
        ));
    }
    if let Some(choices) = &result.choices
        && let Some(command) =
            crate::commands::replay::compact_command(setup, options, choices, None)?
    {
        return Ok(command);
    }
    if let (Some(path), TraceFormat::Jsonl) = (&args.trace, args.trace_format) {
        return Ok(shell_command(&[
            "cudasem".to_string(),
            "replay".to_string(),
            path.display().to_string(),
            setup.ptx_path.clone(),
        ]));
    }
    // Every schedule policy of `run` is a function of its flags: the command reproduces
    // itself, and no trace is written that the user did not ask for.
    Ok(format!(
        "{}  (add --trace FILE.jsonl to record the run's {} choices as a replay trace)",
        crate::options::own_command(&[("--format", true)], &[]),
        result.steps
    ))
}

impl Args {
    /// The launch, warp model, memory and device flags as the shared [`RunOptions`].
    pub(crate) fn run_options(&self) -> RunOptions {
        RunOptions {
            launch: self.launch.clone(),
            quick: self.quick.clone(),
            warp_model: self.warp_model,
            memory: self.memory,
            device: self.device.clone(),
            exited_warps_arrive: self.exited_warps_arrive,
            check_invariants: self.check_invariants,
            context: self.context,
        }
    }
}

/// Where `--schedule replay:FILE` leaves its first divergence: a recorded choice that was not
/// enabled (`step N: ... is not enabled; enabled: [...]`).
pub(crate) type Diverged = std::sync::Arc<std::sync::Mutex<Option<String>>>;

/// `--schedule replay:FILE`: the trace's choices, each checked against the enabled set as
/// `cudasem replay` checks them; at the first one that is not enabled the divergence is noted
/// and the run is stopped (through `stop`), then round-robin after the trace's end.
struct StrictReplay {
    choices: Vec<Choice>,
    at: usize,
    fallback: scheduler::RoundRobin,
    diverged: Diverged,
    stop: scheduler::Stop,
}

impl Scheduler for StrictReplay {
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> usize {
        if let Some(c) = self.choices.get(self.at) {
            let step = self.at;
            self.at += 1;
            if let Some(i) = enabled.iter().position(|e| e == c) {
                return i;
            }
            let list: Vec<String> = enabled.iter().map(Choice::to_string).collect();
            let mut slot = self.diverged.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert_with(|| {
                format!(
                    "step {step}: `{c}` is not enabled; enabled: [{}]",
                    list.join(", ")
                )
            });
            self.stop.request();
            self.choices.clear();
        }
        self.fallback.pick(machine, enabled)
    }
}

/// The error of a `--schedule replay:FILE` run that diverged from its trace (bad input: the
/// trace does not belong to this launch and configuration).
pub(crate) fn divergence_error(policy: &Policy, diverged: &Diverged) -> Result<(), String> {
    match diverged.lock().unwrap_or_else(|e| e.into_inner()).take() {
        Some(d) => Err(format!(
            "error: --schedule {policy}: replay diverged at {d}\n  = the trace does not belong to this program, launch and configuration\n"
        )),
        None => Ok(()),
    }
}

/// The scheduler a policy names. `replay:FILE` reads the trace file (it must come from the
/// same program), checks its choices strictly (a divergence is left in the returned slot and
/// stops the run through `stop`) and continues round-robin after them; PCT's horizon is the
/// length of a round-robin run, as `fuzz` estimates it.
pub(crate) fn policy_scheduler(
    policy: &Policy,
    machine: &Machine,
    max_steps: u64,
    stop: &scheduler::Stop,
) -> Result<(Box<dyn Scheduler>, Diverged), Failure> {
    let diverged = Diverged::default();
    let scheduler = policy_scheduler_of(policy, machine, max_steps, stop, &diverged)?;
    Ok((scheduler, diverged))
}

fn policy_scheduler_of(
    policy: &Policy,
    machine: &Machine,
    max_steps: u64,
    stop: &scheduler::Stop,
    diverged: &Diverged,
) -> Result<Box<dyn Scheduler>, Failure> {
    match policy {
        Policy::Replay { file } => {
            let trace = crate::commands::replay::read_trace_file(file)?;
            let hash = machine.program().hash;
            if trace.program_hash != hash {
                return Err(format!(
                    "error: --schedule replay:{file}: the trace was recorded from program {:016x}, this one is {hash:016x}\n",
                    trace.program_hash
                )
                .into());
            }
            Ok(Box::new(StrictReplay {
                choices: trace.choices,
                at: 0,
                fallback: scheduler::RoundRobin::new(),
                diverged: diverged.clone(),
                stop: stop.clone(),
            }))
        }
        &Policy::Progress { model, level, seed } => {
            explore::policy::ProgressPolicy::new(machine, model, level, seed)
                .map(|p| Box::new(p) as Box<dyn Scheduler>)
                .map_err(|e| format!("error: --schedule {policy}: {e}\n").into())
        }
        Policy::Pct { .. } => {
            let horizon = scheduler::fuzz::horizon(machine, max_steps);
            policy
                .scheduler(machine, horizon)
                .ok_or_else(|| Failure::internal("the PCT policy made no scheduler"))
        }
        Policy::RoundRobin | Policy::Random { .. } => policy
            .scheduler(machine, 0)
            .ok_or_else(|| Failure::internal(format!("the policy {policy} made no scheduler"))),
    }
}

/// Parses and loads. Diagnostics (errors and warnings) are rendered to stderr by `render`
/// (`file:line:col` with the line and a caret); `Err` then carries nothing more to print.
pub fn load_program(path: &str, text: &str) -> Result<semantics::Program, String> {
    let parsed = ptx_parser::parse(text);
    if parsed.has_errors() {
        // Loading a module with syntax errors would report their consequences again.
        render::diagnostics(path, text, &parsed.diagnostics);
        return Err(String::new());
    }
    match semantics::load(&parsed.module, text) {
        Ok((program, warnings)) => {
            render::diagnostics(path, text, &warnings);
            Ok(program)
        }
        Err(diagnostics) => {
            render::diagnostics(path, text, &diagnostics);
            Err(String::new())
        }
    }
}

/// A launch file resolved against the program: one kernel launch, or a program of several
/// launches (thesis 5.7: grids of one context, in streams). `first` is the (first) launch's
/// resolution, which carries the buffers and what to print.
pub(crate) struct Resolution {
    pub first: crate::launch::Resolved,
    /// The program's launches; `None` for one kernel launch.
    pub program: Option<semantics::machine::ProgramLaunch>,
}

pub(crate) fn resolve(launch: &Launch, program: &semantics::Program) -> Result<Resolution, String> {
    let budget = crate::budget::bytes();
    if launch.launches.is_empty() {
        let first = launch
            .resolve_within(program, budget)
            .map_err(|e: LaunchError| e.to_string())?;
        return Ok(Resolution {
            first,
            program: None,
        });
    }
    let mut grids = launch
        .resolve_program(program, budget)
        .map_err(|e: LaunchError| e.to_string())?;
    let launches = semantics::machine::ProgramLaunch::from_launches(
        grids.iter().map(|g| (g.stream, &g.resolved.config)),
    )
    .expect("a program has a launch");
    Ok(Resolution {
        first: grids.swap_remove(0).resolved,
        program: Some(launches),
    })
}

/// The launch file (or the quick flags alone) with the flags applied and a C++ kernel name
/// resolved; not yet checked against the program.
pub(crate) fn read_launch(
    launch_file: Option<&std::path::Path>,
    q: &QuickLaunch,
    program: &semantics::Program,
) -> Result<Launch, String> {
    let mut launch = match launch_file {
        Some(path) => Launch::read(path).map_err(|e| e.to_string())?,
        None => Launch::default(),
    };
    let flags = LaunchFlags {
        kernel: q.kernel.clone(),
        grid: q.grid.clone(),
        block: q.block.clone(),
        shared: q.shared,
        buffers: q.buffers.clone(),
        args: q.args.clone(),
        globals: q.globals.clone(),
        print: q.print.clone(),
        expect: q.expect.clone(),
    };
    if launch_file.is_none() && flags.is_empty() {
        return Err("error: no launch given\n  = help: pass --launch FILE.ron, or --grid, --block, --buffer and --arg flags (docs/run.md); `cudasem launch KERNEL -o FILE.ron` writes a launch file from the kernel's signature\n".to_string());
    }
    launch.apply_flags(&flags).map_err(|e| e.to_string())?;
    // A C++ kernel may be named as written in the source (`reduce` for `_Z6reducePKfPfi`).
    if let Some(name) = &launch.kernel
        && let Ok(f) = cuda_front::launch_gen::select_kernel(program, Some(name))
    {
        launch.kernel = Some(f.name.clone());
    }
    Ok(launch)
}

/// The machine configuration that the shared run flags describe (`run`, `debug`, `check`,
/// `fuzz`, `explore`, `replay` all spell them the same way): device file, then device flags.
pub(crate) fn machine_config_of(
    d: &DeviceArgs,
    warp_model: WarpModelArg,
    memory: MemoryArg,
    exited_warps_arrive: bool,
    check_invariants: bool,
) -> Result<MachineConfig, String> {
    let mut device = DeviceConfig::default();
    if let Some(path) = &d.device {
        DeviceFile::read(path)
            .map_err(|e| e.to_string())?
            .apply(&mut device);
    }
    DeviceFile {
        num_sms: d.sms,
        max_blocks_per_sm: d.max_blocks_per_sm,
        max_threads_per_sm: d.max_threads_per_sm,
        max_warps_per_sm: d.max_warps_per_sm,
        shared_mem_per_sm: d.shared_mem_per_sm,
        max_threads_per_block: d.max_threads_per_block,
        warp_size: d.warp_size,
    }
    .apply(&mut device);
    if device.warp_size == 0 || device.warp_size > 64 {
        return Err(format!(
            "error: warp size {} is not supported\n  = help: warps have 1 to 64 lanes",
            device.warp_size
        ));
    }
    check_device_limits(&device)?;
    let mut cache = memory_model::cached::CacheConfig::default();
    if let Some(b) = d.line_bytes {
        cache.line_bytes = b;
    }
    if let Some(n) = d.l1_lines {
        cache.l1_lines = n;
    }
    if let Some(n) = d.l2_lines {
        cache.l2_lines = n;
    }
    if let Some(s) = d.silent {
        cache.silent = match s {
            SilentArg::None => memory_model::cached::SilentActions::None,
            SilentArg::Observable => memory_model::cached::SilentActions::Observable,
            SilentArg::All => memory_model::cached::SilentActions::All,
        };
    }
    Ok(MachineConfig {
        warp_model: warp_model.model(),
        memory: match memory {
            MemoryArg::Flat => MemoryKind::Flat,
            MemoryArg::Cached => MemoryKind::Cached,
        },
        cache,
        device,
        exited_warps_arrive,
        check_invariants,
        ..MachineConfig::default()
    })
}

/// The largest device cudasem models, far beyond any GPU (an H100 has 132 SMs of 2048 threads
/// and 228 KiB of shared memory): the machine allocates per SM and per resident block, so an
/// absurd `--sms 1000000000` must be refused before anything is allocated rather than abort.
const DEVICE_LIMITS: [(&str, u32); 5] = [
    ("sms", 4096),
    ("max-blocks-per-sm", 1024),
    ("max-threads-per-sm", 65_536),
    ("max-warps-per-sm", 2048),
    ("shared-mem-per-sm", 1 << 24),
];

/// Refuses a device beyond [`DEVICE_LIMITS`].
fn check_device_limits(device: &DeviceConfig) -> Result<(), String> {
    let values = [
        device.num_sms,
        device.max_blocks_per_sm,
        device.max_threads_per_sm,
        device.max_warps_per_sm,
        device.shared_mem_per_sm,
    ];
    for ((flag, limit), value) in DEVICE_LIMITS.iter().zip(values) {
        if value > *limit {
            return Err(format!(
                "error: --{flag} {value} is beyond what cudasem models (at most {limit})\n  = help: real GPUs stay far below it; the device is allocated up front"
            ));
        }
    }
    Ok(())
}

/// Choices a failing run keeps for a compact replay string (a few MB at most); a longer run is
/// reproduced by its own command line.
const RECORD_LIMIT: usize = 100_000;

/// What a run leaves: the final buffers (all of them, in launch order), how it ended, its steps,
/// and its schedule when it was short enough to keep.
struct RunResult {
    buffers: Vec<Vec<u8>>,
    termination: Termination,
    steps: u64,
    choices: Option<Vec<Choice>>,
}

/// Runs the machine. `Err` is bad input (an unreadable replay file, an unwritable trace).
fn execute(setup: &Setup, args: &Args) -> Result<RunResult, Failure> {
    let config = &setup.config;
    let resolved = &setup.resolved;
    let mut machine = setup.machine.clone();
    let stop = args.timeout.start();
    let (policy, diverged) = policy_scheduler(&args.schedule, &machine, args.max_steps, &stop)?;
    // `--html` draws every step: the whole schedule is kept.
    let limit = if args.html.is_some() {
        usize::MAX
    } else {
        RECORD_LIMIT
    };
    let mut recorder = scheduler::replay::Recorder::with_limit(policy, limit);
    let termination = if args.show.is_some() || args.trace_format == TraceFormat::Perfetto {
        // Teaching views observe every step (slower than the plain run below).
        let (termination, rows) =
            match crate::teach::run_observed(&mut machine, &mut recorder, args.max_steps, &stop) {
                Ok(done) => done,
                Err(mut refused) => {
                    // The recorder's last choice is the refused one.
                    if recorder.complete() {
                        refused.prefix = recorder.choices;
                        refused.prefix.pop();
                    }
                    return Err(Failure::refused(setup, &args.run_options(), &refused));
                }
            };
        let ws = config.device.warp_size;
        if let Some(Show::Stack) = args.show {
            crate::emit::stdout(&crate::teach::stack_tables(&machine, &rows, ws))?;
        }
        if let (Some(path), TraceFormat::Perfetto) = (&args.trace, args.trace_format) {
            let json = crate::teach::perfetto(&machine, &setup.text, &rows, ws);
            std::fs::write(path, json)
                .map_err(|e| format!("error: cannot write trace {}: {e}\n", path.display()))?;
        }
        termination
    } else {
        match &args.trace {
            None => {
                match scheduler::try_run_until(&mut machine, &mut recorder, args.max_steps, &stop) {
                    Ok(t) => t,
                    Err(mut refused) => {
                        // The recorder's last choice is the refused one.
                        if recorder.complete() {
                            refused.prefix = recorder.choices;
                            refused.prefix.pop();
                        }
                        return Err(Failure::refused(setup, &args.run_options(), &refused));
                    }
                }
            }
            Some(path) => {
                let file = std::fs::File::create(path)
                    .map_err(|e| format!("error: cannot write trace {}: {e}\n", path.display()))?;
                let mut writer = TraceWriter {
                    inner: &mut recorder,
                    out: std::io::BufWriter::new(file),
                    error: None,
                };
                // The launch as every trace writes it (buffers of a launch file by name).
                let mut trace = traces::Trace::new(
                    setup.program.hash,
                    crate::commands::replay::TraceLaunch::of(
                        &resolved.config,
                        None,
                        setup.launch_path.as_deref(),
                    )
                    .with_grids(&setup.grids),
                    crate::commands::replay::TraceConfig::of(config),
                    args.schedule.seed(),
                );
                // `cudasem replay t.jsonl` finds the program from the trace alone (the hash
                // checks that it is still the same).
                trace.program_path = Some(setup.ptx_path.clone());
                let header = TraceHeader {
                    trace,
                    schedule: args.schedule.to_string(),
                    max_steps: args.max_steps,
                };
                writer.write_line(&header);
                let termination =
                    scheduler::run_until(&mut machine, &mut writer, args.max_steps, &stop);
                if let Err(e) = writer.out.flush() {
                    writer.error.get_or_insert(e);
                }
                if let Some(e) = writer.error {
                    return Err(
                        format!("error: cannot write trace {}: {e}\n", path.display()).into(),
                    );
                }
                termination
            }
        }
    };
    divergence_error(&args.schedule, &diverged)?;
    let buffers = (0..resolved.config.buffers.len())
        .map(|i| machine.buffer(i))
        .collect();
    let complete = recorder.complete();
    Ok(RunResult {
        buffers,
        termination,
        steps: machine.steps(),
        choices: complete.then_some(recorder.choices),
    })
}

/// The first line of a `--trace` file: the trace's identity (its `choices` list stays empty:
/// the choices follow, one JSON line each).
#[derive(serde::Serialize)]
struct TraceHeader {
    #[serde(flatten)]
    trace: crate::commands::replay::CliTrace,
    schedule: String,
    max_steps: u64,
}

/// A scheduler that writes every choice its inner scheduler takes as a JSON line.
struct TraceWriter<'a, W: Write> {
    inner: &'a mut dyn Scheduler,
    out: W,
    /// The first write error (reported after the run: a scheduler cannot fail).
    error: Option<std::io::Error>,
}

impl<W: Write> TraceWriter<'_, W> {
    fn write_line<T: serde::Serialize>(&mut self, value: &T) {
        if self.error.is_some() {
            return;
        }
        let result = serde_json::to_writer(&mut self.out, value)
            .map_err(std::io::Error::from)
            .and_then(|()| self.out.write_all(b"\n"));
        if let Err(e) = result {
            self.error = Some(e);
        }
    }
}

impl<W: Write> Scheduler for TraceWriter<'_, W> {
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> usize {
        let i = self
            .inner
            .pick(machine, enabled)
            .min(enabled.len().saturating_sub(1));
        if let Some(choice) = enabled.get(i) {
            self.write_line(choice);
        }
        i
    }
}
