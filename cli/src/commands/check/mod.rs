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
//! The command is modules of one job: [`schedules`] runs and explores the schedules with the
//! monitors on, [`reproduce`](mod@reproduce) writes the replay commands and checks a replayed trace, [`render`]
//! (with [`text`] and [`json`]) writes the report.
//!
//! Exit codes: 0 clean, 1 a finding (or the kernel misbehaved, or a bound cut it short), 2 bad
//! input, 3 an internal error (docs/reliability.md).

mod json;
mod render;
mod reproduce;
mod schedules;
mod text;

use super::run;
use crate::Exit;
use crate::error::Error;
use crate::failure::Failure;
use explore::coverage::{Coverage, Dependence, Runs, Sampling, cached_memory_caveat};
use render::{Render, Report};
pub(crate) use reproduce::replay_checked;
use reproduce::{html_page, reproduce};
use schedules::{Checked, Setup, apply_benign, explore, run_policy};
use semantics::machine::Termination;
use semantics::monitors::{MonitorConfig, RaceModel, ScheduleDependence};

#[derive(clap::Args)]
#[group(id = "check_args")]
pub struct CheckArgs {
    /// Every `cudasem run` option (file, launch, schedule, warp model, device, format...).
    #[command(flatten)]
    pub run: run::RunArgs,
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

pub fn run(mut args: CheckArgs) -> Exit {
    crate::contexts::per_context(&mut args, |a| check(a).unwrap_or_else(Failure::report))
}

/// `check` takes `run`'s flags, output files and format.
impl crate::contexts::PerContext for CheckArgs {
    fn options(&mut self) -> &mut crate::options::RunOptions {
        self.run.options()
    }

    fn output_files(&self) -> Vec<(&'static str, bool)> {
        self.run.output_files()
    }

    fn json(&self) -> bool {
        self.run.json()
    }
}

/// How the schedules were chosen, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    One(explore::policy::Policy),
    Random(u64),
    Explore,
}

fn check(args: &CheckArgs) -> Result<Exit, Failure> {
    let r = &args.run;
    crate::expectations::refuse_flag("check", &r.options.launch.quick)?;
    let options = &r.options;
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
        budget: scheduler::Budget {
            steps: Some(r.max_steps),
            time_ms: r.timeout.millis(),
            ..scheduler::Budget::UNBOUNDED
        },
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
    let Ran {
        result,
        seed,
        runs,
        exhausted,
        cut,
        all_completed,
    } = run_schedules(&setup, &mode, args, options)?;
    if let Some(path) = &r.html {
        html_page(&setup.base, &result, path)?;
    }
    let (result, benign_left_out) = apply_benign(result, args.benign);
    let (complete, coverage) = coverage(
        &setup,
        &result,
        &dependence,
        &mode,
        Reach {
            runs,
            exhausted,
            all_completed,
            cut,
        },
    );
    let replay = if result.findings.is_clean() && result.termination == Termination::Completed {
        Vec::new()
    } else {
        vec![reproduce(&setup, options, args, &result, &mode, seed)?]
    };
    let ctx = Render::of(&setup.base);
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
        search_bound_hit: cut,
    };
    Ok(report.print(&ctx, r.format))
}

/// What the schedules of a check left: the schedule the report describes (the first that
/// failed, else the last one checked) with its seed, and how far the check reached.
struct Ran {
    result: Checked,
    seed: Option<u64>,
    runs: u64,
    exhausted: bool,
    /// The bound that cut `--explore`'s search (`None`: exhausted, a finding stopped it, or no
    /// search).
    cut: Option<scheduler::BoundHit>,
    all_completed: bool,
}

/// Checks the schedules `mode` names until one fails.
fn run_schedules(
    setup: &Setup,
    mode: &Mode,
    args: &CheckArgs,
    options: &crate::options::RunOptions,
) -> Result<Ran, Failure> {
    let mut runs = 0u64;
    let mut exhausted = false;
    let mut cut = None;
    let mut failing: Option<(Checked, Option<u64>)> = None;
    let mut last: Option<Checked> = None;
    let mut all_completed = true;
    match mode {
        Mode::One(schedule) => {
            let result = run_policy(setup, schedule)?;
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
                let result = run_policy(setup, &explore::policy::Policy::Random { seed })?;
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
            let x = explore(setup, options, args.max_schedules, args.reduction)?;
            runs = x.checked;
            exhausted = x.exhausted;
            cut = explore::coverage::check_bound(
                x.cut,
                setup.max_steps(),
                args.max_schedules,
                setup.budget.time_ms,
            );
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
        (None, None) => {
            return Err(Error::Input("error: no schedule was run\n".to_string()).into());
        }
    };
    Ok(Ran {
        result,
        seed,
        runs,
        exhausted,
        cut,
        all_completed,
    })
}

/// How far the schedules of a check reached (for [`coverage`]).
struct Reach {
    runs: u64,
    exhausted: bool,
    all_completed: bool,
    cut: Option<scheduler::BoundHit>,
}

/// Whether a clean result covers every schedule, and the coverage line that says how far it
/// reaches (module doc: one terminating schedule decides a kernel without atomics nor
/// warp-level communication; otherwise only an exhausted `--explore` covers every schedule).
fn coverage(
    setup: &Setup,
    result: &Checked,
    dependence: &ScheduleDependence,
    mode: &Mode,
    reach: Reach,
) -> (bool, String) {
    let Reach {
        runs,
        exhausted,
        all_completed,
        cut,
    } = reach;
    let sampling = match mode {
        Mode::Explore => Sampling::Explore { cut },
        _ => Sampling::Policy,
    };
    let runs = Runs {
        schedules: runs,
        timed_out: result.termination == Termination::TimeLimit,
        all_completed,
        exhausted,
        sampling,
    };
    let coverage = Coverage::of(&runs, Dependence::of(dependence, &setup.base.program));
    let mut text = coverage.text(&crate::timeout::cause_text(None));
    if let Some(caveat) = cached_memory_caveat(setup.base.config.memory, dependence) {
        text = format!("{text}; {caveat}");
    }
    (coverage.complete(), text)
}
