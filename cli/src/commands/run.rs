//! `cudasem run`: load a PTX module, read the launch (file and/or flags), run one schedule until
//! the kernel ends or the step bound is hit, and print the buffers, the status and the step count.
//!
//! Exit codes: 0 completed, 1 the program misbehaved (deadlock, step limit, fault), 2 bad input
//! (unreadable files, parse/load errors, a bad launch, a launch the device cannot hold).
//! A failing run prints the `cudasem replay` command that reproduces it: its schedule is
//! recorded as it runs (`scheduler::replay::Recorder`) and handed to the one helper that
//! `fuzz` and `explore` use too (`commands::replay::reproduce`).

use crate::Exit;
use crate::error::Error;
use crate::failure::Failure;
use crate::flags::LaunchArgs;
use crate::flags::OutputFormat;
use crate::launch::{Launch, LaunchFlags};
use crate::options::{RunOptions, Setup};
use crate::output::{PrintedBuffer, RunReport, shell_command};
use crate::render;
use explore::policy::Policy;
use scheduler::Scheduler;
use semantics::machine::Machine;
use semantics::machine::Termination;
use std::io::Write;
use std::path::PathBuf;
use traces::Choice;

/// Generous but bounded: a kernel that has not ended after this many steps is reported as such.
pub const DEFAULT_MAX_STEPS: u64 = 100_000_000;

#[derive(clap::Args)]
pub struct RunArgs {
    /// The PTX file, or a CUDA file (.cu, compiled with clang: docs/cuda.md).
    pub file: PathBuf,
    #[command(flatten)]
    pub options: RunOptions,
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
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
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

/// `--schedule` of `run` (and `check`): every policy `explore::policy` names.
pub fn parse_policy(text: &str) -> Result<Policy, Error> {
    text.parse()
        .map_err(|e: explore::policy::BadPolicy| Error::Usage(e.to_string()))
}

pub fn run(mut args: RunArgs) -> Exit {
    crate::contexts::per_context(&mut args, |a| run_inner(a).unwrap_or_else(Failure::report))
}

crate::per_context_args!(RunArgs, "--html" => html, "--trace" => trace);

/// Runs the command; `Err` is bad input, already rendered for stderr.
fn run_inner(args: &RunArgs) -> Result<Exit, Failure> {
    let options = &args.options;
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
        reproduce_command(&setup, options, args, &result)?
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
        .chain(crate::registers::printed(
            &setup.registers,
            &result.registers,
        ))
        .collect();
    let report = RunReport {
        kernel: &setup.kernel_title(),
        ptx_path: &setup.ptx_name,
        files: &setup.program.files,
        buffers,
        termination: &result.termination,
        steps: result.steps,
        max_steps: args.max_steps,
        time_ms: args.timeout.millis(),
        setup: format!("{}, {}", setup.setup_text(), args.schedule),
        replay,
        expectations,
        grids: crate::output::grid_kernels(&setup.machine),
    };
    let out = match args.format {
        OutputFormat::Text => report.text(),
        OutputFormat::Json => report.json() + "\n",
    };
    crate::emit::stdout(&out)?;
    Ok(if failed {
        Exit::Misbehaved
    } else {
        Exit::Clean
    })
}

/// The `cudasem replay ...` command of a failed run: its recorded schedule when it was kept
/// whole, else the `--trace` file it wrote, else (a run too long to keep) the `run` command
/// itself with the advice to write a trace.
fn reproduce_command(
    setup: &Setup,
    options: &RunOptions,
    args: &RunArgs,
    result: &RunResult,
) -> Result<String, Error> {
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

/// Where `--schedule replay:FILE` leaves its first divergence: a recorded choice that was not
/// enabled (`step N: ... is not enabled; enabled: [...]`).
pub(crate) type Diverged = std::sync::Arc<std::sync::Mutex<Option<String>>>;

/// `--schedule replay:FILE`: the trace's choices, each checked against the enabled set as
/// `cudasem replay` checks them; at the first one that is not enabled the divergence is noted
/// and the run stops (no choice), then round-robin after the trace's end.
struct StrictReplay {
    choices: Vec<Choice>,
    at: usize,
    fallback: scheduler::RoundRobin,
    diverged: Diverged,
}

impl Scheduler for StrictReplay {
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        if let Some(c) = self.choices.get(self.at) {
            let step = self.at;
            self.at += 1;
            if let Some(i) = enabled.iter().position(|e| e == c) {
                return Some(i);
            }
            let list: Vec<String> = enabled.iter().map(Choice::to_string).collect();
            let mut slot = self.diverged.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert_with(|| {
                format!(
                    "step {step}: `{c}` is not enabled; enabled: [{}]",
                    list.join(", ")
                )
            });
            return None;
        }
        self.fallback.pick(machine, enabled)
    }
}

/// The error of a `--schedule replay:FILE` run that diverged from its trace (bad input: the
/// trace does not belong to this launch and configuration).
pub(crate) fn divergence_error(policy: &Policy, diverged: &Diverged) -> Result<(), Error> {
    match diverged.lock().unwrap_or_else(|e| e.into_inner()).take() {
        Some(d) => Err(Error::Input(format!(
            "error: --schedule {policy}: replay diverged at {d}\n  = the trace does not belong to this program, launch and configuration\n"
        ))),
        None => Ok(()),
    }
}

/// The scheduler a policy names. `replay:FILE` reads the trace file (it must come from the
/// same program), checks its choices strictly (a divergence is left in the returned slot and
/// stops the run) and continues round-robin after them; PCT's horizon is the
/// length of a round-robin run, as `fuzz` estimates it.
pub(crate) fn policy_scheduler(
    policy: &Policy,
    machine: &Machine,
    max_steps: u64,
) -> Result<(Box<dyn Scheduler>, Diverged), Failure> {
    let diverged = Diverged::default();
    let scheduler = policy_scheduler_of(policy, machine, max_steps, &diverged)?;
    Ok((scheduler, diverged))
}

fn policy_scheduler_of(
    policy: &Policy,
    machine: &Machine,
    max_steps: u64,
    diverged: &Diverged,
) -> Result<Box<dyn Scheduler>, Failure> {
    match policy {
        Policy::Replay { file } => {
            let trace = crate::commands::replay::read_trace_file(file)?;
            let hash = machine.program().hash;
            if trace.program_hash != hash {
                return Err(Error::Input(format!(
                    "error: --schedule replay:{file}: the trace was recorded from program {:016x}, this one is {hash:016x}\n",
                    trace.program_hash
                ))
                .into());
            }
            Ok(Box::new(StrictReplay {
                choices: trace.choices,
                at: 0,
                fallback: scheduler::RoundRobin::new(),
                diverged: diverged.clone(),
            }))
        }
        &Policy::Progress { model, level, seed } => {
            explore::policy::ProgressPolicy::new(machine, model, level, seed)
                .map(|p| Box::new(p) as Box<dyn Scheduler>)
                .map_err(|e| Error::Input(format!("error: --schedule {policy}: {e}\n")).into())
        }
        Policy::Pct { .. } => {
            let horizon = scheduler::fuzz::horizon(machine, max_steps);
            policy.scheduler(machine, horizon).ok_or_else(|| {
                Error::Internal("the PCT policy made no scheduler".to_string()).into()
            })
        }
        Policy::RoundRobin | Policy::Random { .. } => {
            policy.scheduler(machine, 0).ok_or_else(|| {
                Error::Internal(format!("the policy {policy} made no scheduler")).into()
            })
        }
    }
}

/// Parses and loads. Diagnostics (errors and warnings) are rendered to stderr by `render`
/// (`file:line:col` with the line and a caret); `Err` then carries nothing more to print.
pub fn load_program(path: &str, text: &str) -> Result<semantics::Program, Error> {
    let not_loaded = || Error::Load {
        file: path.to_string(),
    };
    let parsed = ptx_parser::parse(text);
    if parsed.has_errors() {
        // Loading a module with syntax errors would report their consequences again.
        render::diagnostics(path, text, &parsed.diagnostics);
        return Err(not_loaded());
    }
    match semantics::load(&parsed.module, text) {
        Ok((program, warnings)) => {
            render::diagnostics(path, text, &warnings);
            Ok(program)
        }
        Err(diagnostics) => {
            render::diagnostics(path, text, &diagnostics);
            Err(not_loaded())
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

pub(crate) fn resolve(launch: &Launch, program: &semantics::Program) -> Result<Resolution, Error> {
    let budget = crate::budget::bytes();
    if launch.launches.is_empty() {
        let first = launch.resolve_within(program, budget)?;
        return Ok(Resolution {
            first,
            program: None,
        });
    }
    let mut grids = launch.resolve_program(program, budget)?;
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
    args: &LaunchArgs,
    program: &semantics::Program,
) -> Result<Launch, Error> {
    let (launch_file, q) = (args.file.as_deref(), &args.quick);
    let mut launch = match launch_file {
        Some(path) => Launch::read(path)?,
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
        return Err(Error::Input("error: no launch given\n  = help: pass --launch FILE.ron, or --grid, --block, --buffer and --arg flags (docs/run.md); `cudasem launch KERNEL -o FILE.ron` writes a launch file from the kernel's signature\n".to_string()));
    }
    launch.apply_flags(&flags)?;
    // A C++ kernel may be named as written in the source (`reduce` for `_Z6reducePKfPfi`).
    if let Some(name) = &launch.kernel
        && let Ok(f) = cuda_front::launch_gen::select_kernel(program, Some(name))
    {
        launch.kernel = Some(f.name.clone());
    }
    Ok(launch)
}

/// Choices a failing run keeps for a compact replay string (a few MB at most); a longer run is
/// reproduced by its own command line.
const RECORD_LIMIT: usize = 100_000;

/// What a run leaves: the final buffers (all of them, in launch order), how it ended, its steps,
/// and its schedule when it was short enough to keep.
struct RunResult {
    buffers: Vec<Vec<u8>>,
    /// The `--print-register` registers' final values, each its declared type's bytes (empty
    /// where the machine has none).
    registers: Vec<Vec<u8>>,
    termination: Termination,
    steps: u64,
    choices: Option<Vec<Choice>>,
}

/// Runs the machine. `Err` is bad input (an unreadable replay file, an unwritable trace).
fn execute(setup: &Setup, args: &RunArgs) -> Result<RunResult, Failure> {
    let config = &setup.config;
    let resolved = &setup.resolved;
    let mut machine = setup.machine.clone();
    let stop = args.timeout.start();
    let (policy, diverged) = policy_scheduler(&args.schedule, &machine, args.max_steps)?;
    // `--html` draws every step: the whole schedule is kept.
    let limit = if args.html.is_some() {
        usize::MAX
    } else {
        RECORD_LIMIT
    };
    let mut recorder = scheduler::replay::Recorder::with_limit(policy, limit);
    let budget = scheduler::Budget {
        steps: Some(args.max_steps),
        time_ms: args.timeout.millis(),
        ..scheduler::Budget::UNBOUNDED
    };
    // Teaching views observe every step (slower than the plain run).
    let teaching = args.show.is_some() || args.trace_format == TraceFormat::Perfetto;
    let mut executed = crate::teach::ExecutedSteps::default();
    let mut plain = ();
    let observer: &mut dyn scheduler::Observer = if teaching { &mut executed } else { &mut plain };
    let ran = match (&args.trace, teaching) {
        (Some(path), false) => {
            let file = std::fs::File::create(path)
                .map_err(|e| Error::io("cannot write trace", path.display(), e))?;
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
                crate::commands::replay::TraceConfig(*config),
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
            let ran = scheduler::run_with(&mut machine, &mut writer, &budget, &stop, observer);
            if let Err(e) = writer.out.flush() {
                writer.error.get_or_insert(e);
            }
            if let Some(e) = writer.error {
                return Err(Error::io("cannot write trace", path.display(), e).into());
            }
            ran
        }
        _ => scheduler::run_with(&mut machine, &mut recorder, &budget, &stop, observer),
    };
    let termination = match ran {
        Ok(ran) => ran.ended.termination(),
        Err(mut refused) => {
            // The recorder's last choice is the refused one.
            if recorder.complete() {
                refused.prefix = recorder.choices;
                refused.prefix.pop();
            }
            return Err(Failure::refused(setup, &args.options, &refused));
        }
    };
    if teaching {
        let (rows, ws) = (&executed.rows, config.device.warp_size);
        if let Some(Show::Stack) = args.show {
            crate::emit::stdout(&crate::teach::stack_tables(&machine, rows, ws))?;
        }
        if let (Some(path), TraceFormat::Perfetto) = (&args.trace, args.trace_format) {
            let json = crate::teach::perfetto(&machine, &setup.text, rows, ws);
            std::fs::write(path, json)
                .map_err(|e| Error::io("cannot write trace", path.display(), e))?;
        }
    }
    divergence_error(&args.schedule, &diverged)?;
    let buffers = (0..resolved.config.buffers.len())
        .map(|i| machine.buffer(i))
        .collect();
    let registers = crate::registers::final_bytes(&machine, &setup.registers);
    let complete = recorder.complete();
    Ok(RunResult {
        buffers,
        registers,
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
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        let i = self
            .inner
            .pick(machine, enabled)?
            .min(enabled.len().saturating_sub(1));
        if let Some(choice) = enabled.get(i) {
            self.write_line(choice);
        }
        Some(i)
    }
}
