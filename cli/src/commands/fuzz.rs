//! `cudasem fuzz FILE.ptx --launch L --runs N [--seed S] [--jobs J] [--schedule random|pct:DEPTH]`:
//! N seeded random (or PCT) schedules in parallel, with a progress bar on a terminal. Prints
//! the histogram of distinct final outcomes (printed buffers, module variables and status),
//! every failure kind with the `cudasem replay` command of its first run (minimised to few
//! preemptions), and runs per second. The output is the same for the same seed at any
//! `--jobs`, timings aside (`scheduler::fuzz`).
//!
//! `--timeout` ends the campaign early: the report counts the runs that finished and says it
//! stopped.
//!
//! Exit codes: 0 no run failed, 1 some run failed (deadlock, fault, step limit) or the time
//! bound stopped the campaign, 2 bad input.

use crate::Exit;
use crate::commands::replay::{reproduce, save_trace, trace_of};
use crate::error::Error;
use crate::failure::Failure;
use crate::flags::OutputFormat;
use crate::options::{RunOptions, Setup};
use scheduler::fuzz::{self, FuzzConfig, FuzzPolicy, FuzzReport};
use serde::Serialize;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

/// Runs a failure's minimisation may take.
const MINIMISE_RUNS: u64 = 2000;
/// Steps the minimisation of a step-limit failure may take (a few seconds).
const MINIMISE_STEPS: u64 = 20_000_000;

/// Default step bound per run: fuzzing wants many short runs.
pub const DEFAULT_MAX_STEPS: u64 = 1_000_000;

#[derive(clap::Args)]
pub struct FuzzArgs {
    /// The PTX file, or a CUDA file (.cu, compiled with clang: docs/cuda.md).
    pub file: PathBuf,
    #[command(flatten)]
    pub options: RunOptions,
    /// Number of runs.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub runs: u64,
    /// The campaign's seed: run i uses a seed derived from it and i.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Worker threads (default: one per core).
    #[arg(long, value_name = "J", default_value_t = 0)]
    pub jobs: usize,
    /// Make only the runs i with i mod N = I (0 <= I < N; each with its seed in the whole
    /// campaign); write the report with --report and combine all N with `cudasem merge`
    /// (docs/sharding.md).
    #[arg(long, value_name = "I/N", requires = "report", value_parser = crate::commands::merge::parse_shard)]
    pub shard: Option<scheduler::shard::Shard>,
    /// With --shard: write this shard's report (JSON) to FILE.
    #[arg(long, value_name = "FILE", requires = "shard")]
    pub report: Option<PathBuf>,
    /// The random scheduler: `random` (uniform) or `pct:DEPTH`.
    #[arg(long, value_name = "POLICY", default_value = "random", value_parser = parse_policy)]
    pub schedule: FuzzPolicy,
    /// Step bound of each run (a run that hits it is a `step-limit` failure: the kernel may
    /// not terminate under that schedule).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STEPS)]
    pub max_steps: u64,
    /// Stop the campaign after this many seconds: runs not finished by then are not counted,
    /// failures are reported unminimised.
    #[command(flatten)]
    pub timeout: crate::timeout::Timeout,
    /// Do not minimise failing schedules (fewest preemptions).
    #[arg(long)]
    pub no_minimise: bool,
    /// Write the first failing run of each kind as a trace file into this directory.
    #[arg(long, value_name = "DIR")]
    pub save_failures: Option<PathBuf>,
    /// Write the teaching page (as `cudasem view` does) of the earliest failing run, minimised
    /// as its replay command is.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Schedule-dependent output is a failure: more than one distinct outcome fails the
    /// campaign, and each outcome is printed with the replay command of its first run.
    #[arg(long)]
    pub fail_on_divergence: bool,
}

fn parse_policy(text: &str) -> Result<FuzzPolicy, Error> {
    match text.split_once(':') {
        None if text == "random" => Ok(FuzzPolicy::Random),
        Some(("pct", d)) => match d.parse::<u32>() {
            Ok(depth) if (1..=1000).contains(&depth) => Ok(FuzzPolicy::Pct { depth }),
            _ => Err(Error::Usage(format!(
                "`{d}` is not a PCT depth (1 to 1000)"
            ))),
        },
        _ => Err(Error::Usage(format!(
            "unknown fuzzing schedule `{text}`: write random or pct:DEPTH (seeds come from --seed)"
        ))),
    }
}

pub fn run(mut args: FuzzArgs) -> Exit {
    crate::contexts::per_context(&mut args, |a| Failure::outcome(run_inner(a)))
}

crate::per_context_args!(FuzzArgs, "--html" => html, "--save-failures" => save_failures);

#[derive(Serialize)]
struct JsonOutcome {
    status: String,
    /// The bound that cut the runs of a `step-limit` (or `time-limit`) outcome; `null` for
    /// the others.
    bound_hit: Option<scheduler::BoundHit>,
    count: u64,
    first_run: u64,
    data: Vec<(String, Vec<crate::output::Value>)>,
    /// The expectations this outcome violates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    violations: Vec<String>,
    /// The replay command of its first run (with `--fail-on-divergence`).
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<String>,
}

#[derive(Serialize)]
struct JsonFailure {
    status: String,
    /// The bound that cut the failing runs (`step-limit`, `time-limit`), or `null`.
    bound_hit: Option<scheduler::BoundHit>,
    count: u64,
    first_run: u64,
    seed: u64,
    schedule: String,
    steps: usize,
    preemptions: usize,
    replay: String,
    /// For a violated expectation: how the first run violates it.
    #[serde(skip_serializing_if = "Option::is_none")]
    violation: Option<String>,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    kernel: &'a str,
    setup: String,
    runs: u64,
    /// Runs asked for (`runs` is smaller when the time bound stopped the campaign).
    runs_asked: u64,
    /// The time bound (the clock or an interrupt, not the memory budget) stopped the campaign
    /// before every run was made.
    time_limit_hit: bool,
    /// Which bound stopped the campaign (the time bound's, as every command names it), or
    /// `null`. A run cut by the step bound is an outcome (`step-limit`), not a cut campaign.
    bound_hit: Option<scheduler::BoundHit>,
    seed: u64,
    schedule: String,
    max_steps: u64,
    outcomes: Vec<JsonOutcome>,
    /// With `--fail-on-divergence`: more than one distinct outcome (a failure).
    diverged: bool,
    failures: Vec<JsonFailure>,
    total_steps: u64,
    seconds: f64,
    runs_per_second: f64,
}

fn run_inner(args: &FuzzArgs) -> Result<Exit, Failure> {
    let setup = args.options.setup(&args.file)?;
    let config = FuzzConfig {
        runs: args.runs,
        seed: args.seed,
        policy: args.schedule,
        max_steps: args.max_steps,
        jobs: args.jobs,
        observe: setup.observe(),
        stop: args.timeout.start(),
    };
    let bar = (std::io::stderr().is_terminal() && args.runs > 1).then(|| {
        let b = indicatif::ProgressBar::new(args.runs);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} fuzz [{bar:40}] {pos}/{len} runs ({per_sec}, eta {eta})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b
    });
    let start = Instant::now();
    let progress = |n| {
        if let Some(b) = &bar {
            b.inc(n);
        }
    };
    let refused = |e| match e {
        fuzz::CampaignError::Refused { refused, .. } => {
            Failure::refused(&setup, &args.options, &refused)
        }
        threads @ fuzz::CampaignError::Threads { .. } => {
            Failure::BadInput(Error::Input(format!("error: {threads}\n")))
        }
    };
    if let (Some(shard), Some(path)) = (args.shard, &args.report) {
        let argv = super::merge::recorded_argv();
        let campaign = super::merge::campaign(&argv, &setup);
        let part = fuzz::campaign_shard(&setup.machine, &config, shard, &campaign, &progress)
            .map_err(refused)?;
        crate::timeout::reporting();
        let seconds = start.elapsed().as_secs_f64();
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        let r = &part.report;
        let failed = !r.failures.is_empty()
            || r.outcomes
                .keys()
                .any(|o| !setup.outcome_violations(o).is_empty())
            || r.stopped;
        let text = format!(
            "fuzz shard {shard}: {} of {} runs, {} distinct outcomes, {} failing runs{} in {seconds:.3} s; report written to {}: combine the reports of all {} shards with `cudasem merge`\n",
            r.runs,
            args.runs,
            r.outcomes.len(),
            r.failures.values().map(|t| t.count).sum::<u64>(),
            if r.stopped {
                format!(
                    " (stopped by {})",
                    crate::bounds::stopped(args.timeout.millis())
                )
            } else {
                String::new()
            },
            path.display(),
            shard.count
        );
        super::merge::write(path, argv, seconds, super::merge::ShardReport::Fuzz(part))?;
        crate::emit::stdout(&text)?;
        return Ok(if failed {
            Exit::Misbehaved
        } else {
            Exit::Clean
        });
    }
    let report = fuzz::campaign(&setup.machine, &config, &progress).map_err(refused)?;
    crate::timeout::reporting();
    let seconds = start.elapsed().as_secs_f64();
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let (out, outcome) = render(args, &setup, &report, seconds)?;
    crate::emit::stdout(&out)?;
    Ok(outcome)
}

/// The campaign's report (one run's, or merged from shards by `cudasem merge`). `seconds` is
/// the time the runs took (summed over shards).
pub fn render(
    args: &FuzzArgs,
    setup: &Setup,
    report: &FuzzReport,
    seconds: f64,
) -> Result<(String, Exit), Failure> {
    let mut failures = failure_details(args, setup, report)?;
    failures.extend(expectation_failures(args, setup, report)?);
    let diverged = args.fail_on_divergence && report.outcomes.len() > 1;
    let failed = !failures.is_empty() || diverged;
    // With --fail-on-divergence every outcome is a witness of the divergence: its first run
    // reproduces it.
    let witnesses: Vec<Option<String>> = report
        .outcomes
        .values()
        .map(|t| {
            if !args.fail_on_divergence {
                return Ok(None);
            }
            replay_of_run(args, setup, report, t.first_run).map(Some)
        })
        .collect::<Result<_, Failure>>()?;
    let schedule = match args.schedule {
        FuzzPolicy::Random => "random".to_string(),
        FuzzPolicy::Pct { depth } => format!("pct:{depth}"),
    };
    let rate = crate::output::per_second(report.runs as f64, seconds);
    let out = match args.format {
        OutputFormat::Text => text(
            args, setup, report, &failures, &witnesses, &schedule, seconds, rate,
        ),
        OutputFormat::Json => {
            let bound_hit = report
                .stopped
                .then(|| crate::bounds::stopped(args.timeout.millis()));
            let j = JsonReport {
                kernel: &setup.kernel_title(),
                setup: setup.setup_text(),
                runs: report.runs,
                runs_asked: args.runs,
                time_limit_hit: crate::bounds::is_time(bound_hit),
                bound_hit,
                seed: args.seed,
                schedule,
                max_steps: args.max_steps,
                outcomes: report
                    .outcomes
                    .iter()
                    .zip(&witnesses)
                    .map(|((o, t), w)| JsonOutcome {
                        status: o.status.to_string(),
                        bound_hit: run_bound(args, &o.status),
                        count: t.count,
                        first_run: t.first_run,
                        data: setup.data_values(&o.data),
                        violations: setup.outcome_violations(o),
                        replay: w.clone(),
                    })
                    .collect(),
                diverged,
                failures,
                total_steps: report.total_steps,
                seconds,
                runs_per_second: rate,
            };
            serde_json::to_string(&j).unwrap_or_default() + "\n"
        }
    };
    Ok((
        out,
        if !failed && !report.stopped {
            Exit::Clean
        } else {
            Exit::Misbehaved
        },
    ))
}

/// For each failure kind: re-run its first run recording the schedule, minimise it, and build
/// the replay command (and save the trace when asked).
fn failure_details(
    args: &FuzzArgs,
    setup: &Setup,
    report: &FuzzReport,
) -> Result<Vec<JsonFailure>, Failure> {
    let mut out = Vec::new();
    // `--html`: the failure whose first run came first.
    let mut earliest: Option<(u64, Vec<traces::Choice>, String)> = None;
    for (status, tally) in &report.failures {
        let (seed, mut choices) = recorded_run(args, setup, report, tally.first_run);
        // Past the time bound there is no time left to minimise.
        if !args.no_minimise && !report.stopped {
            // Every attempt of a step-limit failure runs to the bound: its budget is counted
            // in steps (the preemption-free schedule, tried first, is usually the answer).
            let budget = match status {
                scheduler::outcome::Status::StepLimit => {
                    (MINIMISE_STEPS / args.max_steps.max(1)).clamp(1, MINIMISE_RUNS)
                }
                _ => MINIMISE_RUNS,
            };
            choices = fuzz::minimise(
                &setup.machine,
                &choices,
                &|o| o.status == *status,
                &setup.observe(),
                args.max_steps,
                budget,
            );
        }
        if let Some(dir) = &args.save_failures {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io("cannot create", dir.display(), e))?;
            let trace = trace_of(
                setup,
                choices.clone(),
                fuzz::policy_text(args.schedule, seed),
                Some(seed),
            );
            save_trace(
                &dir.join(format!("{}-run{}.jsonl", status.word(), tally.first_run)),
                &trace,
            )?;
        }
        if args.html.is_some() && earliest.as_ref().is_none_or(|e| tally.first_run < e.0) {
            let policy = fuzz::policy_text(args.schedule, seed);
            earliest = Some((tally.first_run, choices.clone(), policy));
        }
        out.push(failure_entry(
            args,
            setup,
            (status.to_string(), run_bound(args, status), None),
            (tally.count, tally.first_run),
            seed,
            &choices,
        )?);
    }
    match (&args.html, earliest) {
        (Some(path), Some((_, choices, policy))) => {
            crate::commands::view::write_html_flag(setup, &choices, None, policy, None, path)?;
        }
        (Some(path), None) => {
            eprintln!("note: no run failed: no page written to {}", path.display())
        }
        (None, _) => {}
    }
    Ok(out)
}

/// The replay command of run `run` of the campaign (as recorded, not minimised).
fn replay_of_run(
    args: &FuzzArgs,
    setup: &Setup,
    report: &FuzzReport,
    run: u64,
) -> Result<String, Failure> {
    let (seed, choices) = recorded_run(args, setup, report, run);
    replay_of(args, setup, &choices, seed)
}

/// Run `run` of the campaign as it was made: its seed and its choices.
fn recorded_run(
    args: &FuzzArgs,
    setup: &Setup,
    report: &FuzzReport,
    run: u64,
) -> (u64, Vec<traces::Choice>) {
    let seed = fuzz::run_seed(args.seed, run);
    let choices = fuzz::record_one(
        &setup.machine,
        args.schedule,
        seed,
        report.horizon,
        args.max_steps,
    );
    (seed, choices)
}

/// The replay command of `choices`, a run of the campaign's policy with `seed`.
fn replay_of(
    args: &FuzzArgs,
    setup: &Setup,
    choices: &[traces::Choice],
    seed: u64,
) -> Result<String, Failure> {
    Ok(reproduce(
        setup,
        &args.options,
        choices,
        None,
        fuzz::policy_text(args.schedule, seed),
        Some(seed),
    )?)
}

/// The bound that cut a run that ended in `status`: the step bound of each run, or the stop
/// flag's (a run the time or memory bound stopped).
fn run_bound(args: &FuzzArgs, status: &scheduler::outcome::Status) -> Option<scheduler::BoundHit> {
    match status {
        scheduler::outcome::Status::StepLimit => Some(scheduler::BoundHit::Steps(args.max_steps)),
        scheduler::outcome::Status::TimeLimit => {
            Some(crate::bounds::stopped(args.timeout.millis()))
        }
        _ => None,
    }
}

/// A failure's report entry: `(status, bound, violation)`, `(runs, first run)`, and the (possibly
/// minimised) schedule `choices` of a run with `seed`, with its preemptions and replay command.
fn failure_entry(
    args: &FuzzArgs,
    setup: &Setup,
    (status, bound_hit, violation): (String, Option<scheduler::BoundHit>, Option<String>),
    (count, first_run): (u64, u64),
    seed: u64,
    choices: &[traces::Choice],
) -> Result<JsonFailure, Failure> {
    let preemptions = fuzz::preemptions(&setup.machine, choices)
        .map_err(|r| Failure::refused(setup, &args.options, &r))?;
    Ok(JsonFailure {
        status,
        bound_hit,
        count,
        first_run,
        seed,
        schedule: fuzz::policy_text(args.schedule, seed),
        steps: choices.len(),
        preemptions,
        replay: replay_of(args, setup, choices, seed)?,
        violation,
    })
}

/// One failure per violated expectation: the runs whose outcome violates it, and the replay
/// command of the first, minimised as a failing status is (to a schedule with fewer
/// preemptions whose run completes and still violates that expectation).
fn expectation_failures(
    args: &FuzzArgs,
    setup: &Setup,
    report: &FuzzReport,
) -> Result<Vec<JsonFailure>, Failure> {
    // Expectation text -> (runs, first run, its violation).
    let mut by_text: Vec<(String, u64, u64, String)> = Vec::new();
    for (o, t) in &report.outcomes {
        if o.status != scheduler::outcome::Status::Completed {
            continue;
        }
        for v in setup.violations(&o.data) {
            match by_text.iter_mut().find(|e| e.0 == v.expectation) {
                Some(e) => {
                    e.1 += t.count;
                    if t.first_run < e.2 {
                        e.2 = t.first_run;
                        e.3 = v.to_string();
                    }
                }
                None => by_text.push((v.expectation.clone(), t.count, t.first_run, v.to_string())),
            }
        }
    }
    let mut out = Vec::new();
    for (expectation, count, first_run, mut violation) in by_text {
        let (seed, mut choices) = recorded_run(args, setup, report, first_run);
        if !args.no_minimise && !report.stopped {
            // How the kept run violates the expectation (its values may differ from the
            // first run's).
            let kept: std::cell::RefCell<Option<String>> = std::cell::RefCell::new(None);
            let keeps = |o: &scheduler::outcome::Outcome| {
                if o.status != scheduler::outcome::Status::Completed {
                    return false;
                }
                let found = setup
                    .violations(&o.data)
                    .into_iter()
                    .find(|v| v.expectation == expectation);
                let hit = found.is_some();
                *kept.borrow_mut() = found.map(|v| v.to_string());
                hit
            };
            let minimised = fuzz::minimise(
                &setup.machine,
                &choices,
                &keeps,
                &setup.observe(),
                args.max_steps,
                MINIMISE_RUNS,
            );
            if minimised != choices
                && let Some(v) = kept.into_inner()
            {
                violation = v;
                choices = minimised;
            }
        }
        out.push(failure_entry(
            args,
            setup,
            ("expectation violated".to_string(), None, Some(violation)),
            (count, first_run),
            seed,
            &choices,
        )?);
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn text(
    args: &FuzzArgs,
    setup: &Setup,
    report: &FuzzReport,
    failures: &[JsonFailure],
    witnesses: &[Option<String>],
    schedule: &str,
    seconds: f64,
    rate: f64,
) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "fuzz: {} runs of `{}` ({}, {} schedules, seed {}, at most {} steps each)\n",
        report.runs,
        cuda_front::demangle(&setup.kernel_title()),
        setup.setup_text(),
        schedule,
        args.seed,
        args.max_steps
    ));
    s.push_str(&format!("outcomes ({} distinct):\n", report.outcomes.len()));
    let width = report
        .outcomes
        .values()
        .map(|t| t.count.to_string().len())
        .max()
        .unwrap_or(1);
    for ((o, t), witness) in report.outcomes.iter().zip(witnesses) {
        let data: Vec<String> = setup
            .data_text(&o.data)
            .into_iter()
            .map(|(n, v)| format!("{n}=[{}]", v.join(", ")))
            .collect();
        let violated = if setup.outcome_violations(o).is_empty() {
            ""
        } else {
            "  (violates an expectation)"
        };
        s.push_str(&format!(
            "  {:>width$}  {}  {}{violated}\n",
            t.count,
            o.status,
            data.join(" ")
        ));
        if let Some(w) = witness {
            s.push_str(&format!("      first run {}: {w}\n", t.first_run));
        }
    }
    if args.fail_on_divergence && report.outcomes.len() > 1 {
        s.push_str(&format!(
            "DIVERGENCE: {} distinct outcomes: the output depends on the schedule (--fail-on-divergence)\n",
            report.outcomes.len()
        ));
    }
    if failures.is_empty() {
        s.push_str("failures: none\n");
    } else {
        s.push_str(&format!(
            "failures ({} kind{}):\n",
            failures.len(),
            if failures.len() == 1 { "" } else { "s" }
        ));
        for f in failures {
            if let Some(v) = &f.violation {
                s.push_str(&format!(
                    "  {}: {} runs, first run {} ({}): {v}; it reproduces with:\n    {}\n",
                    f.status, f.count, f.first_run, f.schedule, f.replay
                ));
                continue;
            }
            let cut = f
                .bound_hit
                .map_or_else(String::new, |hit| format!(" cut by {hit}"));
            s.push_str(&format!(
                "  {}: {} runs{cut}, first run {} ({}); a schedule of {} steps with {} preemptions reproduces it:\n    {}\n",
                f.status, f.count, f.first_run, f.schedule, f.steps, f.preemptions, f.replay
            ));
        }
    }
    if report.stopped {
        s.push_str(&format!(
            "stopped ({}): {} of {} runs made; which runs finished depends on timing\n",
            args.timeout.flag_text(),
            report.runs,
            args.runs
        ));
    }
    s.push_str(&format!(
        "{} runs, {} steps in {:.3} s: {:.0} runs/s\n",
        report.runs, report.total_steps, seconds, rate
    ));
    s
}
