//! `cudasem replay TRACE [FILE.ptx] [run options]`: re-execute a recorded run and check it.
//!
//! TRACE is a trace file (RON, or JSON Lines as `cudasem run --trace` and `--save` write) or a
//! compact string (`cudasem2:...`, printed by every failing `fuzz` and `explore`). A file
//! carries its launch and configuration (the run options are then ignored) and names its PTX
//! file (FILE.ptx overrides it); a compact string needs FILE.ptx and the run options.
//!
//! Checks, in order: the program hash; every choice against the machine's enabled set (a
//! compact index against the enabled set's length, then the choices' checksum); recorded
//! events against the replayed ones; for a lasso, that the cycle returns to the state after
//! the stem. The first divergence is reported with its step. Then the final state is printed
//! like `cudasem run` does.
//!
//! `--check` runs the monitors of `cudasem check` along the replayed schedule and prints their
//! findings as `check` does; it is what `check` prints to reproduce a finding.
//!
//! Exit codes: 0 replayed and the kernel completed, 1 replayed and the run misbehaved (or the
//! lasso closed: the kernel may not terminate), 2 the trace does not match (divergence, hash)
//! or bad input.
//!
//! The command is modules of one job: [`trace`] (the trace file: its launch and configuration,
//! reading and writing), [`load`] (a trace or compact string to a ready machine and schedule),
//! [`reproduce`](mod@reproduce) (the replay commands every failing command prints).

mod load;
mod reproduce;
mod trace;

pub(crate) use load::{Loaded, load_trace};
pub use reproduce::{compact_command, reproduce};
pub use trace::{CliTrace, TraceConfig, TraceLaunch, read_trace_file, save_trace, trace_of};

use crate::Exit;
use crate::error::Error;
use crate::options::RunOptions;
use crate::output::{PrintedBuffer, RunReport};
use scheduler::replay::{CycleCheck, Replayed, replay};
use semantics::machine::{Machine, Termination};
use std::path::PathBuf;
use traces::{Event, Trace};

#[derive(clap::Args)]
pub struct ReplayArgs {
    /// A trace file (.ron or .jsonl) or a compact trace string (`cudasem2:...`).
    pub trace: String,
    /// The PTX file (required with a compact trace; overrides a trace file's `program_path`).
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub options: RunOptions,
    /// Print every step: the choice and what it executed (pc, lanes, active mask, token stack).
    #[arg(long)]
    pub events: bool,
    /// Write the replayed run, with its events, as a trace file (.ron for RON, else JSON Lines).
    #[arg(long, value_name = "OUT")]
    pub save: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = crate::flags::OutputFormat::Text)]
    pub format: crate::flags::OutputFormat,
    /// Run the monitors of `cudasem check` along the replayed schedule and report what they
    /// find (data races, barrier divergence, memory errors): what `check` prints to reproduce
    /// a finding.
    #[arg(long)]
    pub check: bool,
    /// With `--check`: the race model (as `cudasem check --race-model`).
    #[arg(long, value_enum, default_value_t = crate::commands::check::RaceModelArg::Interleaving, requires = "check")]
    pub race_model: crate::commands::check::RaceModelArg,
    /// With `--check`: a launch buffer whose contents are undefined (as `cudasem check
    /// --uninit`; repeatable).
    #[arg(long = "uninit", value_name = "BUFFER", requires = "check")]
    pub uninit: Vec<String>,
}

/// One line per executed event of a step: `pc 3  lanes 0x2  active 0x2  stack [break 0x3 @7]`.
pub fn event_lines(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Executed {
                pc,
                lanes,
                active,
                stack,
                next_pc,
                derivation,
                ..
            } => {
                let tokens: Vec<String> = stack
                    .iter()
                    .map(|t| format!("{} {:#x} @{}", t.kind.name(), t.mask, t.pc))
                    .collect();
                Some(format!(
                    "pc {pc:>3} -> {next_pc:<3} lanes {lanes:#06x}  active {active:#06x}  stack [{}]  ({derivation})",
                    tokens.join(", ")
                ))
            }
            Event::BarrierCompleted { block, barrier, .. } => {
                Some(format!("barrier {barrier} of block {block} completed"))
            }
            Event::BlockCompleted { block, .. } => Some(format!("block {block} completed")),
            _ => None,
        })
        .collect()
}

pub fn run(args: ReplayArgs) -> Exit {
    crate::failure::Failure::outcome(run_inner(&args))
}

fn run_inner(args: &ReplayArgs) -> Result<Exit, crate::failure::Failure> {
    let loaded = load_trace(args)?;
    if args.check {
        return crate::commands::check::replay_checked(args, loaded);
    }
    let setup = &loaded.setup;
    let mut machine = setup.machine.clone();
    let r = replay(
        &mut machine,
        &loaded.choices,
        loaded.events.as_deref(),
        loaded.cycle_start,
        args.events || args.save.is_some(),
    );
    let mut out = if args.events {
        events_text(&loaded, &r)
    } else {
        String::new()
    };
    if let Some(path) = &args.save {
        save_replayed(path, &loaded, &r)?;
    }
    if let Some(d) = &r.divergence {
        let msg = format!(
            "{out}replay diverged after {} of {} choices: {d}\n",
            r.taken,
            loaded.choices.len()
        );
        if args.format == crate::flags::OutputFormat::Json {
            let j = serde_json::json!({
                "replayed": r.taken,
                "choices": loaded.choices.len(),
                "divergence": { "step": d.step, "message": d.to_string() },
            });
            crate::emit::stdout(&format!("{j}\n"))?;
        } else {
            eprint!("{msg}");
        }
        return Ok(Exit::BadInput);
    }
    let lasso = lasso_text(&loaded, &r);
    // The printed buffers, then the `--print-register` registers.
    let buffers_bytes: Vec<Vec<u8>> = setup
        .resolved
        .print
        .iter()
        .map(|&i| machine.buffer(i))
        .chain(crate::registers::final_bytes(&machine, &setup.registers))
        .collect();
    let title = setup.kernel_title();
    let report = report_of(&loaded, &r, &machine, &title, &buffers_bytes);
    let outcome = outcome_of(&report, &r);
    match args.format {
        crate::flags::OutputFormat::Text => {
            out.push_str(&replayed_text(&loaded, &r, lasso.as_deref(), &report));
        }
        crate::flags::OutputFormat::Json => {
            let j = serde_json::json!({
                "replayed": r.taken,
                "choices": loaded.choices.len(),
                "divergence": serde_json::Value::Null,
                "program_hash": format!("{:016x}", setup.program.hash),
                "events_checked": loaded.events.is_some(),
                "lasso": lasso.as_ref().map(|_| matches!(r.cycle, Some(CycleCheck::Closed { .. }))),
                "ended": r.termination.is_some(),
                "run": serde_json::from_str::<serde_json::Value>(&report.json()).unwrap_or_default(),
            });
            out.push_str(&j.to_string());
            out.push('\n');
        }
    }
    crate::emit::stdout(&out)?;
    Ok(outcome)
}

/// `--events`: every replayed choice with the events it executed, the cycle of a lasso marked.
fn events_text(loaded: &Loaded, r: &Replayed) -> String {
    let mut out = String::new();
    let Some(events) = &r.events else {
        return out;
    };
    for (i, (c, ev)) in loaded.choices.iter().zip(events).enumerate() {
        if loaded.cycle_start == Some(i) {
            out.push_str("-- cycle (repeats forever) --\n");
        }
        out.push_str(&format!("{i:>6}  {c}\n"));
        for line in event_lines(ev) {
            out.push_str(&format!("          {line}\n"));
        }
    }
    out
}

/// `--save OUT`: the replayed run, with its events, as a trace file.
fn save_replayed(path: &std::path::Path, loaded: &Loaded, r: &Replayed) -> Result<(), Error> {
    let setup = &loaded.setup;
    let mut t: CliTrace = Trace::new(
        setup.program.hash,
        TraceLaunch::of(
            &setup.resolved.config,
            Some(
                setup
                    .resolved
                    .print
                    .iter()
                    .map(|&i| setup.resolved.config.buffers[i].name.clone())
                    .collect(),
            ),
            setup.launch_path.as_deref(),
        )
        .with_grids(&setup.grids),
        TraceConfig(setup.config),
        None,
    );
    t.choices = loaded.choices[..r.taken].to_vec();
    t.program_path = Some(setup.ptx_path.clone());
    t.cycle_start = loaded.cycle_start;
    t.events = r.events.clone();
    t.policy = Some("replay".to_string());
    save_trace(path, &t)
}

/// What the replay says of a lasso's cycle: whether the state after the stem recurs.
fn lasso_text(loaded: &Loaded, r: &Replayed) -> Option<String> {
    match r.cycle {
        Some(CycleCheck::Closed { fingerprint }) => Some(format!(
            "the cycle closes: the state after choice {} recurs after choice {} (fingerprint {fingerprint:032x}); repeating it never terminates\n",
            loaded.cycle_start.unwrap_or(0),
            loaded.choices.len()
        )),
        Some(CycleCheck::Open {
            stem_end,
            cycle_end,
        }) => Some(format!(
            "the cycle does NOT close: state {stem_end:032x} after the stem, {cycle_end:032x} after the cycle\n"
        )),
        None => None,
    }
}

/// The final state as `cudasem run` reports it, with the launch's expectations (a launch
/// file's `expect`, `--expect`) checked on a completed run.
fn report_of<'a>(
    loaded: &'a Loaded,
    r: &'a Replayed,
    machine: &Machine,
    kernel: &'a str,
    buffers_bytes: &'a [Vec<u8>],
) -> RunReport<'a> {
    let setup = &loaded.setup;
    let printed: Vec<PrintedBuffer> = setup
        .resolved
        .print
        .iter()
        .zip(buffers_bytes)
        .map(|(&i, bytes)| PrintedBuffer {
            name: &setup.resolved.config.buffers[i].name,
            elem: setup.resolved.elems[i],
            bytes,
        })
        .chain(crate::registers::printed(
            &setup.registers,
            buffers_bytes
                .get(setup.resolved.print.len()..)
                .unwrap_or_default(),
        ))
        .collect();
    let expectations = if r.termination == Some(Termination::Completed) {
        let all: Vec<Vec<u8>> = (0..setup.resolved.config.buffers.len())
            .map(|i| machine.buffer(i))
            .collect();
        crate::expectations::check(&setup.resolved, |i| all.get(i).map(Vec::as_slice))
    } else {
        Vec::new()
    };
    RunReport {
        kernel,
        ptx_path: &setup.ptx_name,
        files: &setup.program.files,
        buffers: printed,
        termination: r.termination.as_ref().unwrap_or(&STOPPED),
        steps: machine.steps(),
        max_steps: loaded.choices.len() as u64,
        time_ms: None,
        setup: format!("{}, replay of {} choices", setup.setup_text(), r.taken),
        replay: String::new(),
        expectations,
        grids: crate::output::grid_kernels(&setup.machine),
    }
}

/// What a replay whose trace ended before the run did reports as its termination.
static STOPPED: Termination = Termination::StepLimit;

/// The exit outcome of a replay: an open lasso is bad input (the trace is no lasso of this
/// program), a closed one or a misbehaving run is misbehaviour.
fn outcome_of(report: &RunReport, r: &Replayed) -> Exit {
    let violated = report.expectations.iter().any(|(_, v)| v.is_some());
    match (&r.termination, &r.cycle) {
        (_, Some(CycleCheck::Open { .. })) => Exit::BadInput,
        (_, Some(CycleCheck::Closed { .. })) => Exit::Misbehaved,
        (Some(Termination::Completed), _) if violated => Exit::Misbehaved,
        (Some(Termination::Completed), _) => Exit::Clean,
        (Some(_), _) => Exit::Misbehaved,
        // The trace ended before the run did (a step-limit failure, or a partial run).
        (None, _) => Exit::Misbehaved,
    }
}

/// The text report: what was checked, the lasso's verdict, then the run's report.
fn replayed_text(loaded: &Loaded, r: &Replayed, lasso: Option<&str>, report: &RunReport) -> String {
    let mut out = format!(
        "replayed {} choices: program hash {:016x} matches, every choice was enabled{}\n",
        r.taken,
        loaded.setup.program.hash,
        if loaded.events.is_some() {
            ", every step's events match the recorded ones"
        } else {
            ""
        }
    );
    if let Some(l) = lasso {
        out.push_str(l);
    }
    if r.termination.is_some() {
        out.push_str(&report.text());
    } else {
        out.push_str(&format!(
            "the run has not ended after the trace's {} choices\n",
            r.taken
        ));
    }
    out
}
