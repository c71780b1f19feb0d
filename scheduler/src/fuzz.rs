//! Random-schedule fuzzing (ARCHITECTURE.md): N runs of one launch, run `i` under
//! a seed derived from the campaign's seed and `i` ([`run_seed`]), in parallel on a rayon
//! pool. The report (outcome histogram, failures) is a function of the seed and N only:
//! per-run results are merged with commutative operations (sums, minima of run indices) into
//! ordered maps, so `--jobs` changes the speed and nothing else.
//!
//! A [`Stop`] (the CLI's `--timeout`) ends a campaign early: runs not yet started are not
//! made, a run cut short is not counted, and the report says it stopped
//! ([`FuzzReport::stopped`]); which runs finished then depends on timing.
//!
//! Failures are minimised ([`minimise`]): among schedules that still show the failure (a
//! predicate of the outcome: the same status, or a violated expectation), the one with the
//! fewest preemptions found by a preemption-bounded search (iterative context
//! bounding, CHESS-style), within a budget of runs.

use crate::outcome::{Observe, Outcome, Status};
use crate::pct::Pct;
use crate::replay::Recorder;
use crate::shard::{MergeError, Shard, check_complete};
use crate::{Random, Refused, Scheduler, Stop};
use rayon::prelude::*;
use semantics::machine::{Machine, Termination};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use traces::Choice;

/// Which random scheduler each run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FuzzPolicy {
    /// `random:SEED_i`: uniform over the enabled set.
    Random,
    /// `pct:SEED_i:DEPTH` with the horizon estimated by a round-robin run.
    Pct { depth: u32 },
}

/// A campaign's parameters.
#[derive(Debug, Clone)]
pub struct FuzzConfig {
    pub runs: u64,
    pub seed: u64,
    pub policy: FuzzPolicy,
    pub max_steps: u64,
    /// Worker threads (0: rayon's default).
    pub jobs: usize,
    pub observe: Observe,
    /// Set from outside to end the campaign early (`--timeout`).
    pub stop: Stop,
}

/// Per outcome: how many runs ended so, and the first of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    pub count: u64,
    pub first_run: u64,
}

/// The campaign's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuzzReport {
    /// Runs made to their end (fewer than asked when the campaign was stopped).
    pub runs: u64,
    /// The campaign was stopped ([`FuzzConfig::stop`]) before it made every run.
    pub stopped: bool,
    #[serde(with = "crate::shard::pairs")]
    pub outcomes: BTreeMap<Outcome, Tally>,
    /// Failures by status (a failure kind), with their first run.
    #[serde(with = "crate::shard::pairs")]
    pub failures: BTreeMap<Status, Tally>,
    pub total_steps: u64,
    /// PCT's horizon (the round-robin run's length), when PCT was used.
    pub horizon: u64,
}

/// Why a campaign did not report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CampaignError {
    /// The worker threads could not be started.
    #[error("cannot start {jobs} worker threads: {message}")]
    Threads { jobs: usize, message: String },
    /// The machine refused an enabled choice in run `run` (a cudasem bug); the refusal's
    /// prefix is that run's schedule up to the refused choice.
    #[error("run {run}: {refused}")]
    Refused { run: u64, refused: Refused },
}

/// SplitMix64: run `i`'s seed from the campaign seed (a bijection of `i` for a fixed seed).
pub fn run_seed(seed: u64, run: u64) -> u64 {
    let mut z = seed
        .wrapping_add(run.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The scheduler of one run.
pub fn scheduler_for(policy: FuzzPolicy, seed: u64, horizon: u64) -> Box<dyn Scheduler + Send> {
    match policy {
        FuzzPolicy::Random => Box::new(Random::new(seed)),
        FuzzPolicy::Pct { depth } => Box::new(Pct::new(seed, depth, horizon)),
    }
}

/// The policy text of one run (`random:S`, `pct:S:D`), as `cudasem run --schedule` takes it.
pub fn policy_text(policy: FuzzPolicy, seed: u64) -> String {
    match policy {
        FuzzPolicy::Random => format!("random:{seed}"),
        FuzzPolicy::Pct { depth } => format!("pct:{seed}:{depth}"),
    }
}

/// PCT's horizon: the length of a round-robin run (at least 1).
pub fn horizon(machine: &Machine, max_steps: u64) -> u64 {
    horizon_until(machine, max_steps, &Stop::never()).unwrap_or(1)
}

/// [`horizon`], or `None` when `stop` was requested before the round-robin run ended (a
/// runaway kernel's horizon run is as long as `max_steps`: the campaign's bounds cut it too).
pub fn horizon_until(machine: &Machine, max_steps: u64, stop: &Stop) -> Option<u64> {
    let mut m = machine.clone();
    let t = crate::run_until(&mut m, &mut crate::RoundRobin::new(), max_steps, stop);
    (t != Termination::TimeLimit).then(|| m.steps().max(1))
}

/// One run: its outcome and steps.
pub fn run_one(
    machine: &Machine,
    policy: FuzzPolicy,
    seed: u64,
    horizon: u64,
    max_steps: u64,
    observe: &Observe,
) -> (Outcome, u64) {
    let mut m = machine.clone();
    let mut s = scheduler_for(policy, seed, horizon);
    let t = crate::run(&mut m, s.as_mut(), max_steps);
    (Outcome::of(&m, &t, observe), m.steps())
}

/// One run of a campaign: `None` when `stop` cut it short.
fn run_stoppable(
    machine: &Machine,
    config: &FuzzConfig,
    seed: u64,
    horizon: u64,
) -> Result<Option<(Outcome, u64)>, Refused> {
    let mut m = machine.clone();
    let mut s = scheduler_for(config.policy, seed, horizon);
    match crate::try_run_until(&mut m, s.as_mut(), config.max_steps, &config.stop) {
        Ok(t) => Ok((t != Termination::TimeLimit)
            .then(|| (Outcome::of(&m, &t, &config.observe), m.steps()))),
        Err(refused) => {
            // Again, recording, for the schedule that shows the bug (the run is deterministic:
            // the recorder's last choice is the refused one).
            let mut m = machine.clone();
            let mut rec = Recorder::new(scheduler_for(config.policy, seed, horizon));
            let again = crate::try_run_until(&mut m, &mut rec, config.max_steps, &Stop::never());
            let mut prefix = rec.choices;
            prefix.pop();
            Err(match again {
                Err(r) => Refused { prefix, ..r },
                Ok(_) => refused,
            })
        }
    }
}

/// One run again, recording its choices (for the replay command of a failure).
pub fn record_one(
    machine: &Machine,
    policy: FuzzPolicy,
    seed: u64,
    horizon: u64,
    max_steps: u64,
) -> Vec<Choice> {
    let mut m = machine.clone();
    let mut rec = Recorder::new(scheduler_for(policy, seed, horizon));
    crate::run(&mut m, &mut rec, max_steps);
    rec.choices
}

impl<S: Scheduler + ?Sized> Scheduler for Box<S> {
    fn pick(&mut self, machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        (**self).pick(machine, enabled)
    }
}

#[derive(Default)]
struct Acc {
    outcomes: BTreeMap<Outcome, Tally>,
    runs: u64,
    steps: u64,
    /// The first run (by index, for determinism) whose machine refused an enabled choice.
    refused: Option<(u64, Refused)>,
}

fn first_refusal(a: Option<(u64, Refused)>, b: Option<(u64, Refused)>) -> Option<(u64, Refused)> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
        (x, y) => x.or(y),
    }
}

fn add(map: &mut BTreeMap<Outcome, Tally>, o: Outcome, t: Tally) {
    map.entry(o)
        .and_modify(|x| {
            x.count += t.count;
            x.first_run = x.first_run.min(t.first_run);
        })
        .or_insert(t);
}

/// Runs the campaign. `progress` is called after each run with the number of runs it adds
/// (from any worker thread).
pub fn campaign(
    machine: &Machine,
    config: &FuzzConfig,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<FuzzReport, CampaignError> {
    campaign_runs(machine, config, Shard::WHOLE, progress)
}

/// One shard's report of a campaign ([`crate::shard`]): its runs, and what names the campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FuzzShard {
    /// The caller's name for the campaign (the program and the options that change results).
    pub campaign: String,
    pub shard: Shard,
    /// The campaign's runs, all shards together ([`FuzzConfig::runs`]).
    pub runs_asked: u64,
    pub seed: u64,
    pub report: FuzzReport,
}

/// Shard `shard` of the campaign: the runs `i` with `i mod N = I` (seeds as in the whole
/// campaign, [`run_seed`]), so that [`merge`] of every shard's report is the whole campaign's.
pub fn campaign_shard(
    machine: &Machine,
    config: &FuzzConfig,
    shard: Shard,
    campaign: &str,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<FuzzShard, CampaignError> {
    Ok(FuzzShard {
        campaign: campaign.to_string(),
        shard,
        runs_asked: config.runs,
        seed: config.seed,
        report: campaign_runs(machine, config, shard, progress)?,
    })
}

/// The whole campaign's report from every shard's ([`campaign_shard`]): exactly what one
/// unsharded [`campaign`] reports (sums, and minima of run indices). Refused when the reports
/// are not each shard of one campaign exactly once.
pub fn merge(shards: &[FuzzShard]) -> Result<FuzzReport, MergeError> {
    check_complete(shards.iter().map(|s| (s.campaign.as_str(), s.shard)))?;
    let first = &shards[0];
    if shards.iter().any(|s| {
        s.runs_asked != first.runs_asked
            || s.seed != first.seed
            || s.report.horizon != first.report.horizon
    }) {
        return Err(MergeError::Disagree {
            what: "the runs, seed or PCT horizon",
        });
    }
    let mut outcomes = BTreeMap::new();
    let (mut runs, mut steps, mut stopped) = (0, 0, false);
    for s in shards {
        for (o, t) in &s.report.outcomes {
            add(&mut outcomes, o.clone(), *t);
        }
        runs += s.report.runs;
        steps += s.report.total_steps;
        stopped |= s.report.stopped;
    }
    Ok(FuzzReport {
        runs,
        stopped,
        failures: failures_of(&outcomes),
        outcomes,
        total_steps: steps,
        horizon: first.report.horizon,
    })
}

/// Failures by status, from the outcome histogram.
fn failures_of(outcomes: &BTreeMap<Outcome, Tally>) -> BTreeMap<Status, Tally> {
    let mut failures: BTreeMap<Status, Tally> = BTreeMap::new();
    for (o, t) in outcomes {
        if o.status.is_failure() {
            failures
                .entry(o.status.clone())
                .and_modify(|x| {
                    x.count += t.count;
                    x.first_run = x.first_run.min(t.first_run);
                })
                .or_insert(*t);
        }
    }
    failures
}

/// The runs of `shard` (every run for [`Shard::WHOLE`]).
fn campaign_runs(
    machine: &Machine,
    config: &FuzzConfig,
    shard: Shard,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<FuzzReport, CampaignError> {
    let horizon = match config.policy {
        FuzzPolicy::Pct { .. } => match horizon_until(machine, config.max_steps, &config.stop) {
            Some(h) => h,
            // Stopped before the first run: an empty, stopped campaign.
            None => {
                return Ok(FuzzReport {
                    runs: 0,
                    stopped: true,
                    outcomes: BTreeMap::new(),
                    failures: BTreeMap::new(),
                    total_steps: 0,
                    horizon: 0,
                });
            }
        },
        FuzzPolicy::Random => 0,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.jobs)
        .build()
        .map_err(|e| CampaignError::Threads {
            jobs: config.jobs,
            message: e.to_string(),
        })?;
    let work = || {
        (0..config.runs)
            .into_par_iter()
            .filter(|&i| shard.owns(i))
            // Once stopped, the remaining indices are not even visited (a campaign of 10^8
            // runs would otherwise spend seconds skipping them).
            .take_any_while(|_| !config.stop.requested())
            .fold(Acc::default, |mut acc, i| {
                if config.stop.requested() {
                    return acc;
                }
                let seed = run_seed(config.seed, i);
                let (o, steps) = match run_stoppable(machine, config, seed, horizon) {
                    Ok(Some(done)) => done,
                    Ok(None) => return acc,
                    Err(r) => {
                        acc.refused = first_refusal(acc.refused.take(), Some((i, r)));
                        return acc;
                    }
                };
                add(
                    &mut acc.outcomes,
                    o,
                    Tally {
                        count: 1,
                        first_run: i,
                    },
                );
                acc.steps += steps;
                acc.runs += 1;
                progress(1);
                acc
            })
            .reduce(Acc::default, |mut a, b| {
                for (o, t) in b.outcomes {
                    add(&mut a.outcomes, o, t);
                }
                a.steps += b.steps;
                a.runs += b.runs;
                a.refused = first_refusal(a.refused.take(), b.refused);
                a
            })
    };
    let mut acc = pool.install(work);
    if let Some((run, refused)) = acc.refused.take() {
        return Err(CampaignError::Refused { run, refused });
    }
    let failures = failures_of(&acc.outcomes);
    Ok(FuzzReport {
        runs: acc.runs,
        stopped: acc.runs < shard.len_of(config.runs),
        outcomes: acc.outcomes,
        failures,
        total_steps: acc.steps,
        horizon,
    })
}

/// Preemptions of a schedule: steps where the previous choice's warp was still enabled and
/// another warp ran instead. The schedule is one the machine made: a step it refuses is a
/// cudasem bug, the error.
pub fn preemptions(machine: &Machine, choices: &[Choice]) -> Result<usize, Refused> {
    let mut m = machine.clone();
    let mut prev: Option<(u32, u32)> = None;
    let mut count = 0;
    for (i, c) in choices.iter().enumerate() {
        let me = c.warp();
        if let (Some(p), Some(me)) = (prev, me)
            && p != me
            && m.enabled().iter().any(|e| e.warp() == Some(p))
        {
            count += 1;
        }
        let step = m.steps();
        if let Err(e) = m.step(c) {
            return Err(Refused::new(&choices[..i], step, e));
        }
        if me.is_some() {
            prev = me;
        }
    }
    Ok(count)
}

/// A scheduler that keeps running the previous warp while it is enabled, except at the
/// preemption points it is told (step numbers), where it takes the `k`-th other choice.
struct Bounded {
    preempt: Vec<(u64, usize)>,
    step: u64,
    prev: Option<(u32, u32)>,
}

impl Scheduler for Bounded {
    fn pick(&mut self, _machine: &Machine, enabled: &[Choice]) -> Option<usize> {
        let step = self.step;
        self.step += 1;
        let sticky = self
            .prev
            .and_then(|p| enabled.iter().position(|e| e.warp() == Some(p)));
        let i = match self.preempt.iter().find(|(s, _)| *s == step) {
            Some(&(_, k)) => {
                let others: Vec<usize> =
                    (0..enabled.len()).filter(|&i| Some(i) != sticky).collect();
                others.get(k % others.len().max(1)).copied().unwrap_or(0)
            }
            None => sticky.unwrap_or(0),
        };
        if let Some(w) = enabled.get(i).and_then(Choice::warp) {
            self.prev = Some(w);
        }
        Some(i)
    }
}

/// Looks for a schedule with fewer preemptions than `choices` whose run still shows the
/// failure the user sees, `keeps` of its outcome (observed with `observe`): the same status, or
/// a completed run that still violates an expectation. It tries no preemption, then one at each
/// step (and each other choice), up to `budget` runs. Returns the shortest-preemption schedule
/// found, or `choices` itself.
pub fn minimise(
    machine: &Machine,
    choices: &[Choice],
    keeps: &dyn Fn(&Outcome) -> bool,
    observe: &Observe,
    max_steps: u64,
    budget: u64,
) -> Vec<Choice> {
    // A schedule that does not replay is reported where it was recorded; here it stays as is.
    let Ok(original) = preemptions(machine, choices) else {
        return choices.to_vec();
    };
    let attempt = |preempt: Vec<(u64, usize)>| -> Option<Vec<Choice>> {
        let mut m = machine.clone();
        let mut rec = Recorder::new(Bounded {
            preempt,
            step: 0,
            prev: None,
        });
        let t = crate::run(&mut m, &mut rec, max_steps);
        keeps(&Outcome::of(&m, &t, observe)).then_some(rec.choices)
    };
    if original == 0 {
        return choices.to_vec();
    }
    if let Some(c) = attempt(Vec::new()) {
        return c;
    }
    if original == 1 {
        return choices.to_vec();
    }
    // One preemption: at each step of the original's length, each other choice (up to 4).
    let len = choices.len() as u64;
    let mut runs = 1u64;
    for step in 0..len {
        for k in 0..4 {
            if runs >= budget {
                return choices.to_vec();
            }
            runs += 1;
            if let Some(c) = attempt(vec![(step, k)]) {
                return c;
            }
        }
    }
    choices.to_vec()
}
