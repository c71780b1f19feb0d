//! The schedules `check` runs with the monitors on: one policy's, seeded random ones, or the
//! executions of a bounded exploration; what each leaves ([`Checked`]).

use super::{BenignArg, run};
use crate::error::Error;
use crate::failure::Failure;
use crate::options::{self, RunOptions};
use explore::coverage::{CheckError, Explored, Judged, check_config, check_every_execution};
use scheduler::outcome::Observe;
use scheduler::{BoundHit, Budget, Ended, Observer, Scheduler};
use semantics::machine::{EventDetail, Machine, Termination};
use semantics::monitors::{Findings, MonitorConfig, Monitors};
use std::ops::ControlFlow;
use traces::{Choice, Event};

/// Everything one checked schedule leaves.
pub(super) struct Checked {
    pub(super) findings: Findings,
    pub(super) termination: Termination,
    pub(super) steps: u64,
    /// The schedule's first [`KEEP_CHOICES`] choices.
    pub(super) choices: Vec<Choice>,
    /// The picker stopped the run before it ended (a replayed trace ran out of choices).
    pub(super) cut: bool,
    /// The bound that cut the schedule, if one did.
    pub(super) bound_hit: Option<BoundHit>,
    /// The policy that made the schedule, when one did (not a schedule of `--explore`'s
    /// search): a schedule too long to keep is reproduced by it.
    pub(super) policy: Option<explore::policy::Policy>,
}

/// What the runs share: the loaded launch, the monitors' configuration, the bound.
pub(super) struct Setup {
    pub(super) base: options::Setup,
    pub(super) monitors: MonitorConfig,
    pub(super) uninit: Vec<usize>,
    /// The bounds of each schedule: its steps (`--max-steps`) and the time (`--timeout`).
    pub(super) budget: Budget,
    /// The time bound (`--timeout`): every schedule stops when it is set.
    pub(super) stop: scheduler::Stop,
    /// `--benign`: under `ignore`, a schedule whose only findings are benign races passes, so
    /// the schedule loops and `--explore` go on to the next schedule.
    pub(super) benign: BenignArg,
}

/// Choices a schedule keeps for its replay command (at most a few MB).
pub(super) const KEEP_CHOICES: usize = 100_000;

/// The observer of a checked schedule: the monitors see every step's events, and the first
/// [`KEEP_CHOICES`] choices are kept for the replay command.
struct Monitored {
    monitors: Monitors,
    choices: Vec<Choice>,
}

impl Observer for Monitored {
    /// The monitors read no SIMT stack except at barriers: `EventDetail::Monitors`.
    fn detail(&self) -> Option<EventDetail> {
        Some(EventDetail::Monitors)
    }

    fn observe(&mut self, choice: &Choice, events: &[Event], _: &Machine) -> ControlFlow<()> {
        self.monitors.observe(events);
        // Kept for the replay command while short; a longer schedule is reproduced by the
        // command line itself (a few bytes per step instead of a growing log).
        if self.choices.len() < KEEP_CHOICES {
            self.choices.push(*choice);
        }
        ControlFlow::Continue(())
    }
}

impl Setup {
    /// The step bound of each schedule.
    pub(super) fn max_steps(&self) -> u64 {
        self.budget.steps.unwrap_or(u64::MAX)
    }

    /// Whether a schedule's result ends the check: it did not complete, or it has a finding
    /// (benign races count only under `--benign report`).
    pub(super) fn fails(&self, result: &Checked) -> bool {
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

    /// Runs one schedule with the monitors; `scheduler` chooses among the enabled choices, or
    /// stops the run (`None`: the result is `cut`).
    pub(super) fn check(&self, scheduler: &mut dyn Scheduler) -> Result<Checked, Failure> {
        let mut machine = self.base.machine.clone();
        let mut monitors = Monitors::new(&machine, &self.base.resolved.config, self.monitors);
        for &i in &self.uninit {
            monitors.mark_buffer_uninitialised(i);
        }
        let mut watched = Monitored {
            monitors,
            choices: Vec::new(),
        };
        let ran = scheduler::run_with(
            &mut machine,
            scheduler,
            &self.budget,
            &self.stop,
            &mut watched,
        )
        .map_err(|refused| Failure::internal(refused.to_string()))?;
        Ok(Checked {
            findings: watched.monitors.finish(),
            termination: ran.ended.termination(),
            steps: machine.steps(),
            choices: watched.choices,
            cut: ran.ended == Ended::SchedulerStopped,
            bound_hit: ran.ended.bound_hit().map(crate::bounds::named),
            policy: None,
        })
    }

    /// Indices of the `--uninit` buffers.
    pub(super) fn uninit_buffers(
        base: &options::Setup,
        names: &[String],
    ) -> Result<Vec<usize>, Error> {
        names
            .iter()
            .map(|name| {
                base.resolved
                    .config
                    .buffers
                    .iter()
                    .position(|b| &b.name == name)
                    .ok_or_else(|| {
                        Error::Input(format!(
                            "error: --uninit {name}: the launch has no buffer `{name}`\n"
                        ))
                    })
            })
            .collect()
    }
}

/// `--benign ignore`: the result without its benign races, and how many were left out.
pub(super) fn apply_benign(mut result: Checked, benign: BenignArg) -> (Checked, usize) {
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

pub(super) fn run_policy(
    setup: &Setup,
    schedule: &explore::policy::Policy,
) -> Result<Checked, Failure> {
    let (mut policy, diverged) =
        run::policy_scheduler(schedule, &setup.base.machine, setup.max_steps())?;
    let mut checked = setup.check(policy.as_mut())?;
    run::divergence_error(schedule, &diverged)?;
    checked.policy = Some(schedule.clone());
    Ok(checked)
}

/// What distinguishes final outcomes for `--explore`: every launch buffer and every scalar
/// module `.global` variable (more outcomes, more witness schedules checked).
pub(super) fn observe_all(setup: &Setup) -> Observe {
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
        registers: Vec::new(),
    }
}

/// `--explore` through the shared explorer's check of every execution
/// (`explore::coverage::check_every_execution`: a stateless depth-first search with sleep sets);
/// the monitors check every execution it makes (replayed), stopping at the first with a
/// finding. `bound` (`--max-schedules`) is turned into a transition budget of that many
/// round-robin runs' length.
pub(super) fn explore(
    setup: &Setup,
    options: &RunOptions,
    bound: u64,
    folding: explore::Folding,
) -> Result<Explored<Checked>, Failure> {
    let first = run_policy(setup, &explore::policy::Policy::RoundRobin)?;
    if setup.fails(&first) {
        return Ok(Explored {
            result: first,
            checked: 1,
            exhausted: false,
            cut: Some(explore::dfs::DfsBound::Halted),
        });
    }
    let config = check_config(setup.max_steps(), bound, first.steps, folding);
    let found = check_every_execution(
        &setup.base.machine,
        &observe_all(setup),
        config,
        &setup.stop,
        first,
        &mut |path| {
            let mut at = 0usize;
            let mut lost = false;
            let result = setup.check(&mut scheduler::from_fn(|_, enabled| {
                let i = path
                    .get(at)
                    .and_then(|c| enabled.iter().position(|e| e == c));
                at += 1;
                lost |= i.is_none();
                Some(i.unwrap_or(0))
            }))?;
            Ok(if lost {
                Judged::Lost
            } else if setup.fails(&result) {
                Judged::Failing(result)
            } else {
                Judged::Clean(result)
            })
        },
    );
    found.map_err(|e| match e {
        CheckError::Check(e) => e,
        CheckError::Lost { path } => {
            let what = "a schedule of the search does not replay with the monitors";
            match crate::commands::replay::reproduce(
                &setup.base,
                options,
                &path,
                None,
                "explore".to_string(),
                None,
            ) {
                Ok(replay) => Failure::Internal {
                    what: what.to_string(),
                    replay: Some(replay),
                },
                Err(_) => Failure::internal(what),
            }
        }
        CheckError::Refused(r) => Failure::refused(&setup.base, options, &r),
    })
}
