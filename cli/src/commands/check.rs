//! `cudasem check`: run a launch with the monitors on (data races, barrier divergence,
//! out-of-bounds and uninitialised accesses; `semantics::monitors`) over one schedule, `N`
//! random schedules, or a bounded exploration, and say how far a clean result reaches.
//!
//! **Coverage** (digest `seeds_gpuverify.md` §2.1 R3/R5/R6, §2.4): for a kernel without atomics
//! (nor other strong accesses) and without warp-level communication, one terminating schedule
//! decides race freedom and barrier divergence for this input and launch (seed 004 §3.2, the
//! barrier-interval / earliest-race argument); the result is then `complete`. Otherwise a clean
//! result covers only the schedules run, unless `--explore` exhausted its search.
//!
//! **Exploration** (`--explore`): the shared explorer of `scheduler` (`explore::dfs`, stateless
//! depth-first search with sleep sets over the footprints of steps) makes at least one execution
//! per order of dependent steps, and the monitors check every one of them (the first finding
//! ends the search). The result is `complete` when the search was exhausted. Bounded by
//! `--max-schedules` round-robin runs' worth of transitions.
//!
//! Exit codes: 0 clean, 1 a finding (or the kernel misbehaved, or a bound cut it short), 2 bad
//! input, 3 an internal error (docs/reliability.md).

use super::run::{self, Format};
use crate::Outcome;
use crate::failure::Failure;
use crate::options::{self, RunOptions};
use crate::output::{grid_prefix, lanes_text, shell_command, status_word};
use explore::dfs::{self, DfsConfig, Memo, Reduction};
use scheduler::Scheduler;
use scheduler::outcome::Observe;
use semantics::Program;
use semantics::machine::{EventDetail, Machine, Termination};
use semantics::monitors::{
    Access, AccessOp, BarrierSite, Divergence, DivergenceKind, Findings, MemoryErrorKind,
    MemoryFinding, MonitorConfig, Monitors, Race, RaceKind, RaceModel, RaceScope,
    ScheduleDependence, ScopeName, UnspecifiedResult,
};
use serde::Serialize;
use std::fmt::Write as _;
use traces::{Choice, Event};

#[derive(clap::Args)]
#[group(id = "check_args")]
pub struct Args {
    /// Every `cudasem run` option (file, launch, schedule, warp model, device, format...).
    #[command(flatten)]
    pub run: run::Args,
    /// Which accesses of one warp are ordered: `interleaving` (every thread separately; only
    /// barriers and __syncwarp order) or `warp-sync` (lanes of a warp synchronise at every
    /// instruction both execute: Bardsley and Donaldson, "Warps and Atomics: Beyond Barrier
    /// Synchronization in the Verification of GPU Kernels", NFM 2014, Definition 2.2).
    #[arg(long, value_enum, default_value_t = RaceModelArg::Interleaving)]
    pub race_model: RaceModelArg,
    /// Check N random schedules (seeds 1..=N) instead of the one `--schedule` names; stops at
    /// the first with a finding.
    #[arg(long, value_name = "N", conflicts_with = "explore")]
    pub schedules: Option<u64>,
    /// Check every schedule up to the order of independent steps (a depth-first search with
    /// sleep sets over the steps' memory footprints): the monitors run over every execution the
    /// search makes and the first finding stops it; bounded by --max-schedules.
    #[arg(long)]
    pub explore: bool,
    /// Bound of --explore: the search may take as many transitions as this many round-robin
    /// runs of the launch.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_schedules: u64,
    /// Which steps --explore schedules: `fold` (visible operations only; a warp's
    /// register-only steps run with its next visible one) or `none` (every step).
    #[arg(
        long,
        value_name = "R",
        default_value = "fold",
        value_parser = super::explore::parse_folding
    )]
    pub reduction: explore::Folding,
    /// A launch buffer whose contents are undefined: reading an element before writing it is
    /// reported (repeatable).
    #[arg(long = "uninit", value_name = "BUFFER")]
    pub uninit: Vec<String>,
    /// Benign races (every occurrence wrote the value memory already held, so no order changes
    /// memory): `report` them as races, marked benign, or `ignore` them (the report says how
    /// many were left out). Still races under the PTX memory model.
    #[arg(long, value_enum, default_value_t = BenignArg::Report)]
    pub benign: BenignArg,
}

/// What `check` does with a benign race.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenignArg {
    /// Report it with the other races, marked benign.
    Report,
    /// Leave it out of the findings, counting how many were left out.
    Ignore,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RaceModelArg {
    /// Every thread separately (portable; Volta+ independent thread scheduling).
    Interleaving,
    /// Lanes of one warp are ordered by every instruction they execute together (pre-Volta
    /// warp-synchronous programming; Bardsley and Donaldson, "Warps and Atomics", NFM 2014,
    /// Definition 2.2).
    WarpSync,
}

impl RaceModelArg {
    fn name(self) -> &'static str {
        match self {
            RaceModelArg::Interleaving => "interleaving",
            RaceModelArg::WarpSync => "warp-sync",
        }
    }

    fn model(self) -> RaceModel {
        match self {
            RaceModelArg::Interleaving => RaceModel::Interleaving,
            RaceModelArg::WarpSync => RaceModel::WarpSync,
        }
    }
}

pub fn run(mut args: Args) -> Outcome {
    match crate::contexts::count(&args.run.run_options()) {
        0 => check(&args).unwrap_or_else(Failure::report),
        n => {
            let files = [
                ("--html", args.run.html.is_some()),
                ("--trace", args.run.trace.is_some()),
            ];
            if let Some(refused) = crate::contexts::refuse_files(n, &files) {
                return refused;
            }
            let json = args.run.format == Format::Json;
            crate::contexts::each(n, json, |i| {
                args.run.context = Some(i);
                check(&args).unwrap_or_else(Failure::report)
            })
        }
    }
}

/// Everything one checked schedule leaves.
struct Checked {
    findings: Findings,
    termination: Termination,
    steps: u64,
    /// The schedule's first [`KEEP_CHOICES`] choices.
    choices: Vec<Choice>,
    /// The picker stopped the run before it ended (a replayed trace ran out of choices).
    cut: bool,
    /// The policy that made the schedule, when one did (not a schedule of `--explore`'s
    /// search): a schedule too long to keep is reproduced by it.
    policy: Option<explore::policy::Policy>,
}

/// What the runs share: the loaded launch, the monitors' configuration, the bound.
struct Setup {
    base: options::Setup,
    monitors: MonitorConfig,
    uninit: Vec<usize>,
    max_steps: u64,
    /// The time bound (`--timeout`): every schedule stops when it is set.
    stop: scheduler::Stop,
    /// `--benign`: under `ignore`, a schedule whose only findings are benign races passes, so
    /// the schedule loops and `--explore` go on to the next schedule.
    benign: BenignArg,
}

/// Choices a schedule keeps for its replay command (at most a few MB).
const KEEP_CHOICES: usize = 100_000;

impl Setup {
    /// Whether a schedule's result ends the check: it did not complete, or it has a finding
    /// (benign races count only under `--benign report`).
    fn fails(&self, result: &Checked) -> bool {
        if result.termination != Termination::Completed {
            return true;
        }
        match self.benign {
            BenignArg::Report => !result.findings.is_clean(),
            BenignArg::Ignore => {
                let f = &result.findings;
                f.races.iter().any(|r| !r.benign)
                    || !f.divergences.is_empty()
                    || !f.memory.is_empty()
                    || !f.unspecified.is_empty()
            }
        }
    }

    /// Runs one schedule with the monitors; `pick` chooses among the enabled choices, or
    /// stops the run (`None`).
    fn check(
        &self,
        pick: &mut dyn FnMut(&Machine, &[Choice]) -> Option<usize>,
    ) -> Result<Checked, Failure> {
        let mut machine = self.base.machine.clone();
        let mut monitors = Monitors::new(&machine, &self.base.resolved.config, self.monitors);
        for &i in &self.uninit {
            monitors.mark_buffer_uninitialised(i);
        }
        let mut events: Vec<Event> = Vec::new();
        let mut choices = Vec::new();
        let mut taken = 0u64;
        let mut cut = false;
        let termination = loop {
            if let Some(t) = machine.termination() {
                break t.clone();
            }
            if taken >= self.max_steps {
                machine.stop_at_step_limit();
                break Termination::StepLimit;
            }
            if self.stop.requested() {
                machine.stop_at_time_limit();
                break Termination::TimeLimit;
            }
            let enabled = machine.enabled();
            if enabled.is_empty() {
                break machine
                    .termination()
                    .cloned()
                    .unwrap_or(Termination::Completed);
            }
            let Some(i) = pick(&machine, enabled) else {
                cut = true;
                break Termination::StepLimit;
            };
            let choice = enabled[i.min(enabled.len() - 1)];
            events.clear();
            // The monitors read no SIMT stack except at barriers: `EventDetail::Monitors`.
            if let Err(e) = machine.step_observed_with(&choice, &mut events, EventDetail::Monitors)
            {
                return Err(Failure::internal(format!(
                    "step {taken} (`{choice}`) was enabled but failed: {e}"
                )));
            }
            monitors.observe(&events);
            // Kept for the replay command while short; a longer schedule is reproduced by
            // the command line itself (a few bytes per step instead of a growing log).
            if choices.len() < KEEP_CHOICES {
                choices.push(choice);
            }
            taken += 1;
        };
        Ok(Checked {
            findings: monitors.finish(),
            termination,
            steps: machine.steps(),
            choices,
            cut,
            policy: None,
        })
    }

    /// Indices of the `--uninit` buffers.
    fn uninit_buffers(base: &options::Setup, names: &[String]) -> Result<Vec<usize>, String> {
        names
            .iter()
            .map(|name| {
                base.resolved
                    .config
                    .buffers
                    .iter()
                    .position(|b| &b.name == name)
                    .ok_or_else(|| {
                        format!("error: --uninit {name}: the launch has no buffer `{name}`\n")
                    })
            })
            .collect()
    }
}

/// How the schedules were chosen, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    One(explore::policy::Policy),
    Random(u64),
    Explore,
}

/// `--html FILE`: the teaching page of the schedule the report describes (the failing one,
/// else the last one checked), as `cudasem view` draws it.
fn html_page(
    base: &options::Setup,
    result: &Checked,
    path: &std::path::Path,
) -> Result<(), Failure> {
    if result.choices.len() >= KEEP_CHOICES {
        return Err(format!(
            "error: --html {}: the schedule is longer than the {KEEP_CHOICES} steps a check keeps; write its page with `cudasem run ... --html` and the same --schedule\n",
            path.display()
        )
        .into());
    }
    let policy = result
        .policy
        .as_ref()
        .map_or_else(|| "check --explore".to_string(), |p| p.to_string());
    crate::commands::view::write_html_flag(base, &result.choices, None, policy, None, path)?;
    Ok(())
}

fn check(args: &Args) -> Result<Outcome, Failure> {
    let r = &args.run;
    crate::expectations::refuse_flag("check", &r.quick)?;
    let options = r.run_options();
    let base = options.setup(&r.file)?;
    let uninit = Setup::uninit_buffers(&base, &args.uninit)?;
    let dependence = ScheduleDependence::of_launch(&base.program, &base.resolved.config);
    let setup = Setup {
        base,
        monitors: MonitorConfig {
            race_model: args.race_model.model(),
            ..MonitorConfig::default()
        },
        uninit,
        max_steps: r.max_steps,
        stop: r.timeout.start(),
        benign: args.benign,
    };

    let mode = if args.explore {
        Mode::Explore
    } else if let Some(n) = args.schedules {
        Mode::Random(n)
    } else {
        Mode::One(r.schedule.clone())
    };
    let mut runs = 0u64;
    let mut exhausted = false;
    let mut failing: Option<(Checked, Option<u64>)> = None;
    let mut last: Option<Checked> = None;
    let mut all_completed = true;
    match &mode {
        Mode::One(schedule) => {
            let result = run_policy(&setup, schedule)?;
            runs = 1;
            all_completed = result.termination == Termination::Completed;
            if setup.fails(&result) {
                failing = Some((result, schedule.seed()));
            } else {
                last = Some(result);
            }
        }
        Mode::Random(n) => {
            for seed in 1..=*n {
                let result = run_policy(&setup, &explore::policy::Policy::Random { seed })?;
                runs += 1;
                all_completed &= result.termination == Termination::Completed;
                if setup.fails(&result) {
                    failing = Some((result, Some(seed)));
                    break;
                }
                last = Some(result);
            }
        }
        Mode::Explore => {
            let x = explore(&setup, &options, args.max_schedules, args.reduction)?;
            runs = x.checked;
            exhausted = x.exhausted;
            all_completed = x.result.termination == Termination::Completed;
            if setup.fails(&x.result) {
                failing = Some((x.result, None));
            } else {
                last = Some(x.result);
            }
        }
    }
    // Stopped or ended: what remains is the report (the watchdogs let it finish).
    crate::timeout::reporting();
    let (result, seed) = match (failing, last) {
        (Some((f, seed)), _) => (f, seed),
        (None, Some(l)) => (l, None),
        (None, None) => return Err("error: no schedule was run\n".to_string().into()),
    };
    if let Some(path) = &r.html {
        html_page(&setup.base, &result, path)?;
    }
    let (result, benign_left_out) = apply_benign(result, args.benign);
    let independent = dependence.schedule_independent();
    let complete = all_completed && (independent || exhausted);
    let coverage = if result.termination == Termination::TimeLimit {
        format!(
            "stopped during schedule {runs} ({}): other schedules were not covered",
            crate::timeout::cause_text(None)
        )
    } else if !all_completed {
        "the kernel did not complete under this schedule: other schedules were not covered"
            .to_string()
    } else if independent {
        "all schedules: no atomics and no warp-level communication, so one schedule decides races and divergence for this input (barrier-interval argument: Donaldson, \"The GPUVerify Method: a Tutorial Overview\", AVoCS 2014, section 3.2)".to_string()
    } else if exhausted {
        format!(
            "all schedules: --explore exhausted the schedules (sleep sets: one per order of dependent steps) and checked every one of the {runs} executions it made"
        )
    } else {
        let why = if !dependence.atomics.is_empty() {
            format!(
                "the kernel has atomics or strong accesses (first at PTX line {})",
                line_of(&setup.base.program, dependence.atomics[0])
            )
        } else if !dependence.warp_level.is_empty() {
            format!(
                "the kernel has warp-level communication (first at PTX line {})",
                line_of(&setup.base.program, dependence.warp_level[0])
            )
        } else {
            format!(
                "each thread's call of a function without a body returns one of several values, a choice of the schedule (`extern_calls` `Values`, first at PTX line {})",
                line_of(&setup.base.program, dependence.picks[0])
            )
        };
        match mode {
            Mode::Explore => format!(
                "only the {runs} schedule(s) checked (bound --max-schedules {} reached, or a finding stopped the search): {why}",
                args.max_schedules
            ),
            _ => format!("only the {runs} schedule(s) run: {why}; try --schedules N or --explore"),
        }
    };
    // Under cached memory an access is seen when its warp issues it; the caches may perform
    // strong accesses of different blocks in another order than they were issued, and the race
    // monitor matches releases with acquires in issue order.
    let coverage = if setup.base.config.memory == semantics::machine::MemoryKind::Cached
        && !dependence.atomics.is_empty()
    {
        format!(
            "{coverage}; under --memory cached release/acquire between blocks is matched in the order accesses were issued, which the caches may not keep: a race between blocks that synchronise through memory may be a false positive (compare with --memory flat)"
        )
    } else {
        coverage
    };
    let replay = if result.findings.is_clean() && result.termination == Termination::Completed {
        Vec::new()
    } else {
        vec![reproduce(&setup, &options, args, &result, &mode, seed)?]
    };
    let ctx = Render {
        ptx_path: &setup.base.ptx_name,
        text: &setup.base.text,
        program: &setup.base.program,
        grids: crate::output::grid_kernels(&setup.base.machine),
    };
    let title = setup.base.kernel_title();
    let report = Report {
        kernel: &title,
        race_model: args.race_model.model(),
        result: &result,
        complete,
        coverage,
        schedules: runs,
        seed,
        replay,
        benign_left_out,
    };
    Ok(report.print(&ctx, r.format))
}

/// `--benign ignore`: the result without its benign races, and how many were left out.
fn apply_benign(mut result: Checked, benign: BenignArg) -> (Checked, usize) {
    match benign {
        BenignArg::Report => (result, 0),
        BenignArg::Ignore => {
            let before = result.findings.races.len();
            result.findings.races.retain(|r| !r.benign);
            let left_out = before - result.findings.races.len();
            (result, left_out)
        }
    }
}

fn line_of(program: &Program, pc: u32) -> u32 {
    program.source.get(pc as usize).map_or(0, |s| s.ptx_line)
}

fn run_policy(setup: &Setup, schedule: &explore::policy::Policy) -> Result<Checked, Failure> {
    let (mut policy, diverged) =
        run::policy_scheduler(schedule, &setup.base.machine, setup.max_steps, &setup.stop)?;
    let mut checked = setup.check(&mut |m, enabled| Some(policy.pick(m, enabled)))?;
    run::divergence_error(schedule, &diverged)?;
    checked.policy = Some(schedule.clone());
    Ok(checked)
}

/// What distinguishes final outcomes for `--explore`: every launch buffer and every scalar
/// module `.global` variable (more outcomes, more witness schedules checked).
fn observe_all(setup: &Setup) -> Observe {
    Observe {
        buffers: (0..setup.base.resolved.config.buffers.len()).collect(),
        variables: setup
            .base
            .program
            .variables
            .iter()
            .filter(|v| v.space == semantics::program::Space::Global && v.size <= 8)
            .map(|v| v.name.clone())
            .collect(),
    }
}

/// What `--explore` found.
struct Explored {
    /// The first execution with a finding (or that misbehaved), else the last clean one.
    result: Checked,
    /// Executions checked (every one the search made, up to a finding).
    checked: u64,
    /// The search exhausted the schedules with every execution clean.
    exhausted: bool,
}

/// `--explore` through the shared explorer (`explore::dfs`): a stateless depth-first
/// search with sleep sets, and the monitors check every execution it makes (replayed), stopping
/// at the first with a finding. Sleep sets make at least one execution per Mazurkiewicz trace of
/// the footprints' independence, and the monitors' verdict depends only on the trace (their
/// happens-before orders nothing that independence could reorder), so an exhausted clean search
/// covers every schedule. `bound` (`--max-schedules`) is turned into a transition budget of that
/// many round-robin runs' length.
fn explore(
    setup: &Setup,
    options: &RunOptions,
    bound: u64,
    folding: explore::Folding,
) -> Result<Explored, Failure> {
    let machine = &setup.base.machine;
    let first = run_policy(setup, &explore::policy::Policy::RoundRobin)?;
    if setup.fails(&first) {
        return Ok(Explored {
            result: first,
            checked: 1,
            exhausted: false,
        });
    }
    let config = DfsConfig {
        reduction: Reduction::SleepSets,
        memo: Memo::Stateless {
            max_depth: usize::try_from(setup.max_steps).unwrap_or(usize::MAX),
        },
        max_transitions: bound.saturating_mul(first.steps.max(1)),
        folding,
    };
    // Every execution the search makes is checked as it is found (replayed with the monitors);
    // the first with a finding ends the search.
    let mut last = first;
    let mut checked = 0u64;
    let mut failed: Option<Checked> = None;
    let mut error: Option<Failure> = None;
    let report = dfs::outcomes_each(
        machine,
        &observe_all(setup),
        config,
        &setup.stop,
        &mut |path| {
            let mut at = 0usize;
            let mut lost = false;
            let result = setup.check(&mut |_, enabled| {
                let i = path
                    .get(at)
                    .and_then(|c| enabled.iter().position(|e| e == c));
                at += 1;
                lost |= i.is_none();
                Some(i.unwrap_or(0))
            });
            match result {
                Ok(_) if lost => {
                    let what = "a schedule of the search does not replay with the monitors";
                    error = Some(
                        match crate::commands::replay::reproduce(
                            &setup.base,
                            options,
                            path,
                            None,
                            "explore".to_string(),
                            None,
                        ) {
                            Ok(replay) => Failure::Internal {
                                what: what.to_string(),
                                replay: Some(replay),
                            },
                            Err(_) => Failure::internal(what),
                        },
                    );
                    false
                }
                Ok(result) => {
                    checked += 1;
                    if setup.fails(&result) {
                        failed = Some(result);
                        false
                    } else {
                        last = result;
                        true
                    }
                }
                Err(e) => {
                    error = Some(e);
                    false
                }
            }
        },
    );
    if let Some(e) = error {
        return Err(e);
    }
    if let Some(r) = &report.refused {
        return Err(Failure::refused(&setup.base, options, r));
    }
    if let Some(result) = failed {
        return Ok(Explored {
            result,
            checked,
            exhausted: false,
        });
    }
    Ok(Explored {
        result: last,
        checked: checked.max(1),
        exhausted: report.bound_hit.is_none(),
    })
}

/// The `cudasem replay ... --check` command that reproduces the reported schedule with the
/// monitors on (the helper behind every failure's replay command, plus `check`'s own flags).
fn reproduce(
    setup: &Setup,
    options: &RunOptions,
    args: &Args,
    result: &Checked,
    mode: &Mode,
    seed: Option<u64>,
) -> Result<String, String> {
    let policy = match (mode, seed) {
        (_, Some(s)) => format!("random:{s}"),
        (Mode::One(p), None) => p.to_string(),
        _ => "explore".to_string(),
    };
    let kept_all = result.choices.len() as u64 == result.steps;
    if !kept_all || result.termination == Termination::TimeLimit {
        let Some(made_by) = &result.policy else {
            return Ok(format!(
                "(none: the schedule's {} steps were too many to keep; a smaller --max-steps keeps them)",
                result.steps
            ));
        };
        // A deterministic schedule too long to keep (or cut by time): the command with its
        // policy, bounded by the steps it took, reproduces it.
        return Ok(crate::options::own_command(
            &[
                ("--schedule", true),
                ("--schedules", true),
                ("--explore", false),
                ("--max-schedules", true),
                ("--max-steps", true),
                ("--timeout", true),
                ("--format", true),
            ],
            &[
                "--schedule".to_string(),
                made_by.to_string(),
                "--max-steps".to_string(),
                result.steps.to_string(),
            ],
        ));
    }
    let replay = crate::commands::replay::reproduce(
        &setup.base,
        options,
        &result.choices,
        None,
        policy,
        seed,
    )?;
    let mut flags = vec!["--check".to_string()];
    if args.race_model != RaceModelArg::Interleaving {
        flags.push("--race-model".to_string());
        flags.push(args.race_model.name().to_string());
    }
    for b in &args.uninit {
        flags.push("--uninit".to_string());
        flags.push(b.clone());
    }
    Ok(format!("{replay} {}", shell_command(&flags)))
}

/// `cudasem replay TRACE --check`: the monitors along a recorded schedule, reported as `check`
/// reports one schedule. A recorded choice that is not enabled is a divergence (bad input).
pub(crate) fn replay_checked(
    args: &crate::commands::replay::Args,
    loaded: crate::commands::replay::Loaded,
) -> Result<Outcome, Failure> {
    let total = loaded.choices.len();
    let uninit = Setup::uninit_buffers(&loaded.setup, &args.uninit)?;
    let setup = Setup {
        base: loaded.setup,
        monitors: MonitorConfig {
            race_model: args.race_model.model(),
            ..MonitorConfig::default()
        },
        uninit,
        max_steps: total as u64,
        stop: scheduler::Stop::never(),
        // A replay reports every finding of the schedule.
        benign: BenignArg::Report,
    };
    let choices = loaded.choices;
    let mut at = 0usize;
    let mut diverged: Option<(usize, Choice, Vec<Choice>)> = None;
    let result = setup.check(&mut |_, enabled| {
        let c = choices.get(at)?;
        match enabled.iter().position(|e| e == c) {
            Some(i) => {
                at += 1;
                Some(i)
            }
            None => {
                diverged = Some((at, *c, enabled.to_vec()));
                None
            }
        }
    })?;
    if let Some((step, c, enabled)) = diverged {
        let list: Vec<String> = enabled.iter().map(Choice::to_string).collect();
        return Err(format!(
            "replay diverged after {step} of {total} choices: step {step}: `{c}` is not enabled; enabled: [{}]\n",
            list.join(", ")
        )
        .into());
    }
    let coverage = if result.cut {
        format!("this replayed schedule only; the trace's {total} choices end before the run does")
    } else {
        format!("this replayed schedule only ({total} choices)")
    };
    let ctx = Render {
        ptx_path: &setup.base.ptx_name,
        text: &setup.base.text,
        program: &setup.base.program,
        grids: crate::output::grid_kernels(&setup.base.machine),
    };
    let title = setup.base.kernel_title();
    let report = Report {
        kernel: &title,
        race_model: args.race_model.model(),
        result: &result,
        complete: false,
        coverage,
        schedules: 1,
        seed: None,
        replay: Vec::new(),
        // A replay reports every finding of the schedule, benign races included.
        benign_left_out: 0,
    };
    Ok(report.print(&ctx, args.format))
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

struct Render<'a> {
    ptx_path: &'a str,
    text: &'a str,
    program: &'a Program,
    /// The kernel of each grid of a program of several launches (empty for one launch).
    grids: Vec<String>,
}

impl Render<'_> {
    /// The kernel of grid `grid` (JSON's `kernel` beside `grid`).
    fn grid_kernel(&self, grid: Option<u32>) -> Option<&str> {
        grid.and_then(|g| self.grids.get(g as usize))
            .map(String::as_str)
    }
    /// The instruction's text at a pc (from its span).
    fn instruction(&self, pc: u32) -> String {
        self.program
            .source
            .get(pc as usize)
            .and_then(|s| self.text.get(s.span.start as usize..s.span.end as usize))
            .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    }
    fn source(&self, loc: Option<(u32, u32)>) -> Option<String> {
        let (file, line) = loc?;
        let name = self
            .program
            .files
            .get(&file)
            .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
            .unwrap_or_else(|| format!("file {file}"));
        Some(format!("{name}:{line}"))
    }
    fn position(&self, ptx_line: u32, loc: Option<(u32, u32)>) -> String {
        match self.source(loc) {
            Some(s) => format!("{}:{ptx_line} ({s})", self.ptx_path),
            None => format!("{}:{ptx_line}", self.ptx_path),
        }
    }
}

struct Report<'a> {
    kernel: &'a str,
    race_model: RaceModel,
    result: &'a Checked,
    complete: bool,
    coverage: String,
    schedules: u64,
    seed: Option<u64>,
    replay: Vec<String>,
    /// Benign races `--benign ignore` left out of `result`.
    benign_left_out: usize,
}

/// Why a benign race is benign, by its kind.
fn benign_text(k: RaceKind) -> &'static str {
    match k {
        RaceKind::WriteWrite => "benign: both writes store the same value",
        RaceKind::ReadWrite | RaceKind::WriteRead => {
            "benign: the write stores the value memory already held"
        }
    }
}

fn op_word(op: AccessOp, strong: Option<ScopeName>) -> String {
    let base = match op {
        AccessOp::Read => "read",
        AccessOp::Write => "write",
        AccessOp::Atomic => "atomic",
    };
    match (op, strong) {
        (AccessOp::Atomic, Some(ScopeName::Cta)) => "atomic (.cta)".to_string(),
        (AccessOp::Atomic, _) | (_, None) => base.to_string(),
        (_, Some(s)) => format!("strong {base} ({})", scope_word(s)),
    }
}

fn scope_word(s: ScopeName) -> &'static str {
    match s {
        ScopeName::Cta => ".cta",
        ScopeName::Gpu => ".gpu",
        ScopeName::Sys => ".sys",
    }
}

fn race_kind_word(k: RaceKind) -> &'static str {
    match k {
        RaceKind::ReadWrite => "read-write",
        RaceKind::WriteRead => "write-read",
        RaceKind::WriteWrite => "write-write",
    }
}

fn race_scope_word(s: RaceScope) -> &'static str {
    match s {
        RaceScope::IntraWarp => "intra-warp",
        RaceScope::InterWarp => "inter-warp",
        RaceScope::InterBlock => "inter-block",
        RaceScope::InterGrid => "inter-grid",
    }
}

fn divergence_word(k: DivergenceKind) -> &'static str {
    match k {
        DivergenceKind::DifferentBarriers => "threads reach different barriers",
        DivergenceKind::LoopIterations => "threads reach the barrier in different loop iterations",
        DivergenceKind::DivergentWarp => "a warp reaches the barrier with diverged lanes",
        DivergenceKind::ExitedBeforeBarrier => {
            "a thread exits while its block waits at the barrier"
        }
    }
}

fn space_word(s: traces::MemSpace) -> &'static str {
    memory_model::space_name(s)
}

fn where_text(a: &Access) -> String {
    let loc = match &a.location {
        Some(l) if l.byte == 0 => format!("`{}[{}]`", l.name, l.index),
        Some(l) => format!("`{}[{}]` byte {}", l.name, l.index, l.byte),
        None => "no buffer".to_string(),
    };
    format!(
        "{} {loc} (address {:#x}, {} bytes)",
        space_word(a.space),
        a.address,
        a.size
    )
}

impl Report<'_> {
    /// Writes the report to stdout; the exit outcome: clean only when nothing was found and
    /// the kernel completed.
    fn print(&self, ctx: &Render, format: Format) -> Outcome {
        let out = match format {
            Format::Text => self.text(ctx),
            Format::Json => self.json(ctx) + "\n",
        };
        let outcome = if self.result.findings.is_clean()
            && self.result.termination == Termination::Completed
        {
            Outcome::Clean
        } else {
            Outcome::Misbehaved
        };
        crate::emit::report(&out, outcome)
    }

    fn access_lines(&self, out: &mut String, label: &str, a: &Access, r: &Render) {
        let _ = writeln!(
            out,
            "  {label} {}block ({}, {}, {}) thread ({}, {}, {}) [warp {} lane {}]: {} at {}",
            grid_prefix(a.grid, &r.grids),
            a.block_idx[0],
            a.block_idx[1],
            a.block_idx[2],
            a.thread_idx[0],
            a.thread_idx[1],
            a.thread_idx[2],
            a.warp,
            a.lane,
            op_word(a.op, a.strong),
            r.position(a.ptx_line, a.source_line),
        );
        let _ = writeln!(out, "          pc {}: {}", a.pc, r.instruction(a.pc));
    }

    fn site_lines(&self, out: &mut String, label: &str, s: &BarrierSite, r: &Render) {
        let counters = if s.loop_counters.is_empty() {
            String::new()
        } else {
            format!(", loop iterations {:?} (outermost first)", s.loop_counters)
        };
        let _ = writeln!(
            out,
            "  {label} thread ({}, {}, {}) [warp {} lane {}]: {} at {}{counters}",
            s.thread_idx[0],
            s.thread_idx[1],
            s.thread_idx[2],
            s.warp,
            s.lane,
            s.what,
            r.position(s.ptx_line, s.source_line),
        );
        let _ = writeln!(out, "          pc {}: {}", s.pc, r.instruction(s.pc));
    }

    fn unspecified_lines(&self, out: &mut String, u: &UnspecifiedResult, r: &Render) {
        let _ = writeln!(out, "{}", u.kind.describe());
        let _ = writeln!(
            out,
            "  by:    {}block ({}, {}, {}) thread ({}, {}, {}) [warp {} lane {}] at {}",
            grid_prefix(u.grid, &r.grids),
            u.block_idx[0],
            u.block_idx[1],
            u.block_idx[2],
            u.thread_idx[0],
            u.thread_idx[1],
            u.thread_idx[2],
            u.warp,
            u.lane,
            r.position(u.ptx_line, u.source_line),
        );
        let _ = writeln!(out, "          pc {}: {}", u.pc, r.instruction(u.pc));
        let _ = writeln!(out, "  lanes {}", lanes_text(u.lanes));
        if u.occurrences > 1 {
            let _ = writeln!(out, "  ({} times in this run)", u.occurrences);
        }
        out.push('\n');
    }

    fn text(&self, r: &Render) -> String {
        let mut out = String::new();
        let f = &self.result.findings;
        for race in &f.races {
            let _ = writeln!(
                out,
                "data race ({}, {}) on {}",
                race_kind_word(race.kind),
                race_scope_word(race.scope),
                where_text(&race.second)
            );
            self.access_lines(&mut out, "first: ", &race.first, r);
            self.access_lines(&mut out, "second:", &race.second, r);
            if race.first.address != race.second.address || race.first.size != race.second.size {
                let _ = writeln!(out, "  first access: {}", where_text(&race.first));
            }
            if let Some(n) = &race.note {
                let _ = writeln!(out, "  note: {n}");
            }
            if race.benign {
                let _ = writeln!(out, "  {}", benign_text(race.kind));
            }
            if race.occurrences > 1 {
                let _ = writeln!(out, "  ({} times in this run)", race.occurrences);
            }
            out.push('\n');
        }
        for d in &f.divergences {
            let _ = writeln!(
                out,
                "barrier divergence in {}block ({}, {}, {}), barrier {}: {}",
                grid_prefix(d.grid, &r.grids),
                d.block_idx[0],
                d.block_idx[1],
                d.block_idx[2],
                d.barrier,
                divergence_word(d.kind)
            );
            self.site_lines(&mut out, "first: ", &d.first, r);
            self.site_lines(&mut out, "second:", &d.second, r);
            out.push('\n');
        }
        for m in &f.memory {
            let what = match m.kind {
                MemoryErrorKind::OutOfBounds => "out-of-bounds access",
                MemoryErrorKind::Uninitialised => "read of uninitialised memory",
            };
            let _ = writeln!(out, "{what}: {}", where_text(&m.access));
            self.access_lines(&mut out, "by:", &m.access, r);
            if m.occurrences > 1 {
                let _ = writeln!(out, "  ({} times in this run)", m.occurrences);
            }
            out.push('\n');
        }
        for u in &f.unspecified {
            self.unspecified_lines(&mut out, u, r);
        }
        if let Termination::Error(e) = &self.result.termination {
            let _ = writeln!(
                out,
                "error: {} ({}block ({}, {}, {}), thread ({}, {}, {}), at {})",
                e.message,
                grid_prefix(e.grid, &r.grids),
                e.block[0],
                e.block[1],
                e.block[2],
                e.thread[0],
                e.thread[1],
                e.thread[2],
                r.position(e.ptx_line, e.source_line)
            );
            let _ = writeln!(out, "          pc {}: {}", e.pc, r.instruction(e.pc));
            out.push('\n');
        }
        if let Termination::Deadlock(w) = &self.result.termination {
            let _ = writeln!(out, "deadlock:");
            for i in w {
                let _ = writeln!(
                    out,
                    "  {}block ({}, {}, {}) warp {} lanes {} at {}: {}",
                    grid_prefix(i.grid, &r.grids),
                    i.block[0],
                    i.block[1],
                    i.block[2],
                    i.warp,
                    lanes_text(i.lanes),
                    r.position(i.ptx_line, i.source_line),
                    i.waiting_for
                );
            }
            out.push('\n');
        }
        if f.dropped > 0 {
            let _ = writeln!(out, "({} more findings not shown)\n", f.dropped);
        }
        if self.benign_left_out > 0 {
            let _ = writeln!(
                out,
                "({} benign race(s) left out: --benign ignore)\n",
                self.benign_left_out
            );
        }
        let n = f.races.len() + f.divergences.len() + f.memory.len() + f.unspecified.len();
        let status = if n == 0 && self.result.termination == Termination::Completed {
            "clean".to_string()
        } else {
            let mut parts = Vec::new();
            if !f.races.is_empty() {
                parts.push(format!("{} data race(s)", f.races.len()));
            }
            if !f.divergences.is_empty() {
                parts.push(format!("{} barrier divergence(s)", f.divergences.len()));
            }
            if !f.memory.is_empty() {
                parts.push(format!("{} memory error(s)", f.memory.len()));
            }
            if !f.unspecified.is_empty() {
                parts.push(format!("{} unspecified result(s)", f.unspecified.len()));
            }
            match &self.result.termination {
                Termination::Completed => {}
                // Which bound: the time, Ctrl-C or the memory budget.
                Termination::TimeLimit => {
                    parts.push(format!("stopped, {}", crate::timeout::cause_text(None)))
                }
                other => parts.push(status_word(other).replace('_', " ")),
            }
            parts.join(", ")
        };
        let _ = writeln!(
            out,
            "{}: {status} ({} steps, race model {}, {} schedule(s) checked)",
            cuda_front::demangle(self.kernel),
            self.result.steps,
            self.race_model.name(),
            self.schedules
        );
        let _ = writeln!(
            out,
            "coverage: {}{}",
            if self.complete {
                "complete, "
            } else {
                "partial, "
            },
            self.coverage
        );
        if n > 0 || self.result.termination != Termination::Completed {
            for c in &self.replay {
                let _ = writeln!(out, "reproduce: {c}");
            }
        }
        out
    }

    fn json(&self, r: &Render) -> String {
        #[derive(Serialize)]
        struct J<'a> {
            kernel: &'a str,
            status: &'a str,
            race_model: &'a str,
            races: Vec<JRace<'a>>,
            barrier_divergence: Vec<JDiv<'a>>,
            errors: Vec<JErr<'a>>,
            unspecified: Vec<JUnspec<'a>>,
            complete: bool,
            coverage: &'a str,
            schedules: u64,
            steps: u64,
            seed: Option<u64>,
            replay: &'a [String],
            dropped: u64,
            benign_left_out: usize,
        }
        #[derive(Serialize)]
        struct JUnspec<'a> {
            #[serde(flatten)]
            finding: &'a UnspecifiedResult,
            message: &'static str,
            instruction: String,
            source: Option<String>,
        }
        #[derive(Serialize)]
        struct JAccess<'a> {
            #[serde(flatten)]
            access: &'a Access,
            /// The grid's kernel, beside `grid` (programs of several launches only).
            #[serde(skip_serializing_if = "Option::is_none")]
            kernel: Option<&'a str>,
            instruction: String,
            source: Option<String>,
        }
        #[derive(Serialize)]
        struct JRace<'a> {
            #[serde(flatten)]
            race: &'a Race,
            accesses: [JAccess<'a>; 2],
        }
        #[derive(Serialize)]
        struct JSite<'a> {
            #[serde(flatten)]
            site: &'a BarrierSite,
            instruction: String,
            source: Option<String>,
        }
        #[derive(Serialize)]
        struct JDiv<'a> {
            #[serde(flatten)]
            div: &'a Divergence,
            sites: [JSite<'a>; 2],
        }
        #[derive(Serialize)]
        struct JErr<'a> {
            kind: &'a str,
            message: String,
            access: Option<JAccess<'a>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            finding: Option<&'a MemoryFinding>,
        }
        let f = &self.result.findings;
        let mk = |a: &Access| (r.instruction(a.pc), r.source(a.source_line));
        let races = f
            .races
            .iter()
            .map(|x| {
                let (i1, s1) = mk(&x.first);
                let (i2, s2) = mk(&x.second);
                JRace {
                    race: x,
                    accesses: [
                        JAccess {
                            access: &x.first,
                            kernel: r.grid_kernel(x.first.grid),
                            instruction: i1,
                            source: s1,
                        },
                        JAccess {
                            access: &x.second,
                            kernel: r.grid_kernel(x.second.grid),
                            instruction: i2,
                            source: s2,
                        },
                    ],
                }
            })
            .collect();
        let site = |s: &BarrierSite| (r.instruction(s.pc), r.source(s.source_line));
        let divs = f
            .divergences
            .iter()
            .map(|d| {
                let (i1, s1) = site(&d.first);
                let (i2, s2) = site(&d.second);
                JDiv {
                    div: d,
                    sites: [
                        JSite {
                            site: &d.first,
                            instruction: i1,
                            source: s1,
                        },
                        JSite {
                            site: &d.second,
                            instruction: i2,
                            source: s2,
                        },
                    ],
                }
            })
            .collect();
        let mut errors: Vec<JErr> = f
            .memory
            .iter()
            .map(|m| {
                let (i, s) = mk(&m.access);
                JErr {
                    kind: match m.kind {
                        MemoryErrorKind::OutOfBounds => "out_of_bounds",
                        MemoryErrorKind::Uninitialised => "uninitialised",
                    },
                    message: where_text(&m.access),
                    access: Some(JAccess {
                        access: &m.access,
                        kernel: r.grid_kernel(m.access.grid),
                        instruction: i,
                        source: s,
                    }),
                    finding: Some(m),
                }
            })
            .collect();
        match &self.result.termination {
            Termination::Error(e) => errors.push(JErr {
                kind: "machine_error",
                message: e.to_string(),
                access: None,
                finding: None,
            }),
            Termination::Deadlock(_) => errors.push(JErr {
                kind: "deadlock",
                message: self.result.termination.to_string(),
                access: None,
                finding: None,
            }),
            Termination::StepLimit => errors.push(JErr {
                kind: "step_limit",
                message: "the step bound was reached".to_string(),
                access: None,
                finding: None,
            }),
            Termination::TimeLimit => errors.push(JErr {
                kind: "time_limit",
                message: format!("stopped: {}", crate::timeout::cause_text(None)),
                access: None,
                finding: None,
            }),
            Termination::Completed => {}
        }
        let unspecified = f
            .unspecified
            .iter()
            .map(|u| JUnspec {
                finding: u,
                message: u.kind.describe(),
                instruction: r.instruction(u.pc),
                source: r.source(u.source_line),
            })
            .collect();
        let clean = f.is_clean() && self.result.termination == Termination::Completed;
        let j = J {
            kernel: self.kernel,
            status: if clean { "clean" } else { "failed" },
            race_model: self.race_model.name(),
            races,
            barrier_divergence: divs,
            errors,
            complete: self.complete,
            coverage: &self.coverage,
            schedules: self.schedules,
            steps: self.result.steps,
            seed: self.seed,
            replay: &self.replay,
            dropped: f.dropped,
            unspecified,
            benign_left_out: self.benign_left_out,
        };
        serde_json::to_string(&j).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}
