//! What a check of some schedules covers (`check`'s coverage line), and the exploration that
//! checks every execution of a launch (`check --explore`).
//!
//! * [`Coverage`]: the verdict on coverage, decided from what the runs did ([`Runs`]) and what
//!   makes the launch's behaviour depend on the schedule ([`Dependence`]): all schedules (one
//!   schedule decides, or the exploration exhausted them), or only the schedules run, and why.
//! * [`check_every_execution`]: a stateless depth-first search with sleep sets ([`dfs`]) whose
//!   every execution the caller checks (its monitors replay the schedule), stopping at the first
//!   that fails. Sleep sets make at least one execution per Mazurkiewicz trace of the
//!   footprints' independence, and a monitor whose verdict depends only on the trace (its
//!   happens-before orders nothing that independence could reorder) then decides every
//!   schedule from these: an exhausted clean search covers all of them.
//!
//!   Not source-set DPOR, which the outcomes search uses ([`super::dpor`]): measured on the
//!   corpus kernels with barriers it makes more executions, not fewer (`grid_2d` 79,278
//!   against 10,044, `transpose_shared` 52,224 against 13,792; `shared_broadcast` and
//!   `matmul_tiled` not exhausted in 20 s against 5,184 and 13,888), because a transaction that
//!   releases a barrier is dependent with every event there; and its footprints fold a fence
//!   under flat memory into its warp's own steps, which the race monitors, ordering fences,
//!   must not assume.
//! * [`check_bound`]: which bound cut the search, in `check`'s flags.

use crate::Folding;
use crate::dfs::{self, DfsBound, DfsConfig, Memo, Reduction};
use scheduler::outcome::Observe;
use scheduler::{BoundHit, Refused, Stop};
use semantics::Program;
use semantics::machine::{Machine, MemoryKind};
use semantics::monitors::ScheduleDependence;
use std::fmt;
use traces::Choice;

/// What makes one schedule not decide for every schedule: the first instruction (by PTX line)
/// of the kind that does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dependence {
    /// Atomics or strong (`.relaxed`, `.acquire`, `.release`, `.volatile`) accesses.
    Atomics { ptx_line: u32 },
    /// Warp-level communication (`vote`, `shfl`, `match`, `redux`, `activemask`).
    WarpLevel { ptx_line: u32 },
    /// A call of a function without a body whose result is one of several values, chosen by
    /// the schedule (`extern_calls` `Values`, deviation D28).
    Picks { ptx_line: u32 },
}

impl Dependence {
    /// The first dependence of the launch, `None` when it has none (one schedule decides).
    pub fn of(dependence: &ScheduleDependence, program: &Program) -> Option<Dependence> {
        let line = |pcs: &[u32]| {
            pcs.first()
                .map(|&pc| program.source.get(pc as usize).map_or(0, |s| s.ptx_line))
        };
        if let Some(ptx_line) = line(&dependence.atomics) {
            Some(Dependence::Atomics { ptx_line })
        } else if let Some(ptx_line) = line(&dependence.warp_level) {
            Some(Dependence::WarpLevel { ptx_line })
        } else {
            line(&dependence.picks).map(|ptx_line| Dependence::Picks { ptx_line })
        }
    }
}

impl fmt::Display for Dependence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dependence::Atomics { ptx_line } => write!(
                f,
                "the kernel has atomics or strong accesses (first at PTX line {ptx_line})"
            ),
            Dependence::WarpLevel { ptx_line } => write!(
                f,
                "the kernel has warp-level communication (first at PTX line {ptx_line})"
            ),
            Dependence::Picks { ptx_line } => write!(
                f,
                "each thread's call of a function without a body returns one of several values, a choice of the schedule (`extern_calls` `Values`, first at PTX line {ptx_line})"
            ),
        }
    }
}

/// How the schedules were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// By a policy: one schedule, or random schedules by seed.
    Policy,
    /// By [`check_every_execution`], bounded by `--max-schedules`; `cut`: the bound that cut
    /// the search ([`check_bound`]), `None` when a finding stopped it.
    Explore { cut: Option<BoundHit> },
}

/// What the runs of a check did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runs {
    /// Schedules run (executions checked).
    pub schedules: u64,
    /// The time bound stopped the reported schedule.
    pub timed_out: bool,
    /// Every schedule run completed.
    pub all_completed: bool,
    /// The exploration exhausted the schedules ([`Explored::exhausted`]).
    pub exhausted: bool,
    pub sampling: Sampling,
}

/// Which schedules a check covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coverage {
    /// The time bound stopped schedule `during`: other schedules were not covered.
    Stopped { during: u64 },
    /// A schedule did not complete: other schedules were not covered.
    NotCompleted,
    /// All schedules: the launch has no [`Dependence`], so one schedule decides races and
    /// divergence for this input (the barrier-interval argument).
    ScheduleIndependent,
    /// All schedules: the exploration exhausted them and checked every one of its `executions`.
    Exhausted { executions: u64 },
    /// Only the `schedules` run, which do not decide for the others because of `why`.
    Partial {
        schedules: u64,
        why: Dependence,
        sampling: Sampling,
    },
}

impl Coverage {
    /// The coverage of `runs` of a launch whose first dependence is `dependence`.
    pub fn of(runs: &Runs, dependence: Option<Dependence>) -> Coverage {
        if runs.timed_out {
            return Coverage::Stopped {
                during: runs.schedules,
            };
        }
        if !runs.all_completed {
            return Coverage::NotCompleted;
        }
        let Some(why) = dependence else {
            return Coverage::ScheduleIndependent;
        };
        if runs.exhausted {
            return Coverage::Exhausted {
                executions: runs.schedules,
            };
        }
        Coverage::Partial {
            schedules: runs.schedules,
            why,
            sampling: runs.sampling,
        }
    }

    /// Whether every schedule is covered.
    pub fn complete(&self) -> bool {
        matches!(
            self,
            Coverage::ScheduleIndependent | Coverage::Exhausted { .. }
        )
    }

    /// The coverage line of `check`'s report; `stop_cause` says what stopped a run that timed
    /// out (the caller's words for its time bound).
    pub fn text(&self, stop_cause: &str) -> String {
        match self {
            Coverage::Stopped { during } => format!(
                "stopped during schedule {during} ({stop_cause}): other schedules were not covered"
            ),
            Coverage::NotCompleted => {
                "the kernel did not complete under this schedule: other schedules were not covered"
                    .to_string()
            }
            Coverage::ScheduleIndependent => "all schedules: no atomics and no warp-level communication, so one schedule decides races and divergence for this input (barrier-interval argument: Donaldson, \"The GPUVerify Method: a Tutorial Overview\", AVoCS 2014, section 3.2)".to_string(),
            Coverage::Exhausted { executions } => format!(
                "all schedules: --explore exhausted the schedules (sleep sets: one per order of dependent steps) and checked every one of the {executions} executions it made"
            ),
            Coverage::Partial {
                schedules,
                why,
                sampling: Sampling::Explore { cut: Some(bound) },
            } => format!(
                "only the {schedules} schedule(s) checked ({bound} cut the search): {why}"
            ),
            Coverage::Partial {
                schedules,
                why,
                sampling: Sampling::Explore { cut: None },
            } => format!(
                "only the {schedules} schedule(s) checked (a finding stopped the search): {why}"
            ),
            Coverage::Partial {
                schedules,
                why,
                sampling: Sampling::Policy,
            } => format!(
                "only the {schedules} schedule(s) run: {why}; try --schedules N or --explore"
            ),
        }
    }
}

/// The caveat a coverage line carries under cached memory when the launch synchronises through
/// memory: an access is seen when its warp issues it, the caches may perform strong accesses of
/// different blocks in another order, and the race monitor matches releases with acquires in
/// issue order.
pub fn cached_memory_caveat(
    memory: MemoryKind,
    dependence: &ScheduleDependence,
) -> Option<&'static str> {
    (memory == MemoryKind::Cached && !dependence.atomics.is_empty()).then_some(
        "under --memory cached release/acquire between blocks is matched in the order accesses were issued, which the caches may not keep: a race between blocks that synchronise through memory may be a false positive (compare with --memory flat)",
    )
}

/// What the caller's check said of one execution of the search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judged<R> {
    /// Checked, nothing to report: the search goes on.
    Clean(R),
    /// Checked, with a finding (or the run misbehaved): the search stops here.
    Failing(R),
    /// The execution did not replay under the caller's check (a cudasem bug).
    Lost,
}

/// The caller's check of one execution, given its choices from the fresh machine.
pub type Judge<'a, R, E> = dyn FnMut(&[Choice]) -> Result<Judged<R>, E> + 'a;

/// What [`check_every_execution`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explored<R> {
    /// The first execution that failed, else the last clean one (the first run's when the
    /// search made none).
    pub result: R,
    /// Executions checked (every one the search made, up to a failing one; at least 1).
    pub checked: u64,
    /// The search exhausted the schedules with every execution clean.
    pub exhausted: bool,
    /// What cut the search when it was not exhausted: a bound, or [`DfsBound::Halted`] when an
    /// execution failed ([`check_bound`] names it in `check`'s flags).
    pub cut: Option<DfsBound>,
}

/// The bound that cut a check's search, named by the flag that set it: the transition budget
/// of [`check_config`] is `--max-schedules`, the depth bound `--max-steps`; `None` when no
/// bound cut it (exhausted, or a finding stopped it). `time_ms`: the time bound as set.
pub fn check_bound(
    cut: Option<DfsBound>,
    max_steps: u64,
    max_schedules: u64,
    time_ms: Option<u64>,
) -> Option<BoundHit> {
    match cut? {
        DfsBound::Transitions(_) => Some(BoundHit::Schedules(max_schedules)),
        DfsBound::Depth(_) => Some(BoundHit::Steps(max_steps)),
        DfsBound::Time => Some(BoundHit::Time(time_ms)),
        DfsBound::Halted => None,
    }
}

/// Why [`check_every_execution`] could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError<E> {
    /// The caller's check failed.
    #[error("{0}")]
    Check(E),
    /// An execution of the search did not replay under the caller's check (a cudasem bug):
    /// its choices, to reproduce it.
    #[error("a schedule of the search does not replay with the monitors")]
    Lost { path: Vec<Choice> },
    /// The machine refused one of its enabled choices (a cudasem bug).
    #[error(transparent)]
    Refused(Refused),
}

/// The search's configuration for a check: sleep sets, stateless with executions at most
/// `max_steps` transitions deep, and a budget of `max_schedules` runs of `first_steps`
/// transitions each (the length of a first, round-robin run).
pub fn check_config(
    max_steps: u64,
    max_schedules: u64,
    first_steps: u64,
    folding: Folding,
) -> DfsConfig {
    DfsConfig {
        reduction: Reduction::SleepSets,
        memo: Memo::Stateless {
            max_depth: usize::try_from(max_steps).unwrap_or(usize::MAX),
        },
        max_transitions: max_schedules.saturating_mul(first_steps.max(1)),
        folding,
    }
}

/// Every execution of `machine` that the search of `config` makes (module header), checked by
/// `check` (given the execution's choices from the fresh machine) as it is found; the first
/// that fails ends the search. `first` is the result of a run checked before (the clean one the
/// caller sized the budget with): the result when the search makes no execution.
pub fn check_every_execution<R, E>(
    machine: &Machine,
    observe: &Observe,
    config: DfsConfig,
    stop: &Stop,
    first: R,
    check: &mut Judge<'_, R, E>,
) -> Result<Explored<R>, CheckError<E>> {
    let mut last = first;
    let mut checked = 0u64;
    let mut failed: Option<R> = None;
    let mut error: Option<CheckError<E>> = None;
    let report = dfs::outcomes_each(
        machine,
        observe,
        config,
        stop,
        &mut |path| match check(path) {
            Ok(Judged::Clean(result)) => {
                checked += 1;
                last = result;
                true
            }
            Ok(Judged::Failing(result)) => {
                checked += 1;
                failed = Some(result);
                false
            }
            Ok(Judged::Lost) => {
                error = Some(CheckError::Lost {
                    path: path.to_vec(),
                });
                false
            }
            Err(e) => {
                error = Some(CheckError::Check(e));
                false
            }
        },
    );
    if let Some(e) = error {
        return Err(e);
    }
    if let Some(r) = report.refused {
        return Err(CheckError::Refused(r));
    }
    if let Some(result) = failed {
        return Ok(Explored {
            result,
            checked,
            exhausted: false,
            cut: Some(DfsBound::Halted),
        });
    }
    Ok(Explored {
        result: last,
        checked: checked.max(1),
        exhausted: report.bound_hit.is_none(),
        cut: report.bound_hit,
    })
}
