//! The set of final outcomes by depth-first search with sleep sets or source-set DPOR
//! (ARCHITECTURE.md section 5;
//! Godefroid, "Partial-Order Methods for the Verification of Concurrent Systems", ch. 5).
//!
//! The search runs over the same transition system as the breadth-first explorer
//! ([`super::explore`]): a transition is one enabled choice, with the invisible steps of its
//! warp up to the next visible one ([`super::fold`], per [`DfsConfig::folding`]) and the
//! system choices that follow ([`super::settle`]) folded in. With [`Reduction::SleepSets`],
//! after exploring choice `a` from a state, every later sibling `b` whose transaction is
//! independent of `a`'s ([`fold::TransactionFootprint::independent`], from
//! [`semantics::machine::Footprint::independent`]) starts with `a` asleep: the runs that take
//! `a` after `b` reach the states the runs that took `a` first already reached, so they are not
//! repeated. A choice whose step faults ends the run, commutes with nothing, and never sleeps.
//!
//! With [`Reduction::SourceDpor`] the search is source-set DPOR ([`super::dpor`]): a state
//! explores only the choices that reverse a race of an execution explored below it, with the
//! sleep sets above. DPOR is stateless: under [`Memo::States`] it runs with a depth bound and a
//! transition budget and gives way to the sleep-set search with the state cache when a
//! schedule is too deep or the budget is spent ([`search_from`]); with a state cache
//! throughout it would be unsound (a cut subtree's races never add their backtrack points).
//!
//! Two memories, [`Memo`]:
//! * `Stateless`: a plain DFS over schedules, cut at a depth bound (spin loops never end);
//! * `States`: states already explored are not explored again, which makes cyclic state spaces
//!   finite. With sleep sets a state is revisited only with the choices asleep on *both* visits
//!   (the state-caching rule that keeps sleep sets sound, Godefroid §5.3), so no terminal
//!   state is lost.
//!
//! Counting: `transitions` (steps computed), `executions` (arrivals at a final state),
//! `states` (distinct states, with `States`), `slept` (choices skipped because asleep).
//! Bounds are reported; a bounded search claims no completeness.

use super::dpor::{self, Proc, Trace};
use super::fold::{self, Folding, TransactionFootprint};
use super::keyed::FingerprintMap;
use super::{branches, settle};
use scheduler::Refused;
use scheduler::Stop;
use scheduler::outcome::{Observe, Outcome, Status};
use semantics::machine::Machine;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use traces::Choice;

/// How the search prunes interleavings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// Every interleaving.
    None,
    /// Sleep sets (Godefroid ch. 5): every enabled choice is explored, except those asleep.
    SleepSets,
    /// Source-set DPOR with sleep sets ([`super::dpor`]): only the choices that reverse a race
    /// of an explored execution are explored. DPOR is stateless: under [`Memo::States`] it
    /// runs first with a depth bound and a budget, and the sleep-set search with the state
    /// cache answers when they cut it ([`search_from`]).
    SourceDpor,
}

impl Reduction {
    /// Whether sleep sets prune (both reductions keep them).
    pub fn sleeps(self) -> bool {
        self != Reduction::None
    }

    /// Whether races pick the explored choices: DPOR, in a stateless search.
    fn dpor(self, memo: Memo) -> bool {
        self == Reduction::SourceDpor && matches!(memo, Memo::Stateless { .. })
    }
}

/// What the search remembers of explored states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memo {
    /// Nothing: a schedule tree, cut at `max_depth` transitions.
    Stateless { max_depth: usize },
    /// Canonical state fingerprints (with the sleep set of their last visit).
    States,
}

/// A search's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DfsConfig {
    pub reduction: Reduction,
    pub memo: Memo,
    /// Stop after this many transitions.
    pub max_transitions: u64,
    /// Which steps are scheduling points ([`fold`]).
    pub folding: Folding,
}

/// Which bound cut a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DfsBound {
    /// `max_transitions` was reached.
    Transitions(u64),
    /// Some schedule was longer than `max_depth` (stateless search only).
    Depth(usize),
    /// The time bound: a [`Stop`] was requested (`--timeout`).
    Time,
    /// The caller stopped the search ([`outcomes_each`]'s callback said so: e.g. a finding).
    Halted,
}

/// The result: the final outcomes with a witness each, and what the search cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DfsReport {
    /// Each outcome with the choices of the first run found to reach it (replayable from the
    /// fresh machine: initial system choices included).
    #[serde(with = "scheduler::shard::pairs")]
    pub outcomes: BTreeMap<Outcome, Vec<Choice>>,
    pub transitions: u64,
    pub executions: u64,
    pub states: u64,
    pub slept: u64,
    pub bound_hit: Option<DfsBound>,
    /// The search stopped because the machine refused one of its enabled choices: a cudasem
    /// bug, with the schedule that shows it (never skipped: a skipped choice would hide
    /// schedules and make the search's answer wrong).
    pub refused: Option<Refused>,
}

/// One state on the search stack.
struct Frame {
    /// `None` once the last child took it (no clone for the last child).
    machine: Option<Machine>,
    enabled: Vec<Choice>,
    /// Choices asleep here, with the footprints of their transactions in this state; explored
    /// siblings are added.
    sleep: Vec<(Choice, TransactionFootprint)>,
    next: usize,
    /// Length of the path (choices) up to this state.
    path_len: usize,
    /// DPOR: the choices to explore here (the backtrack set), and those taken or skipped.
    backtrack: Vec<Choice>,
    done: Vec<Choice>,
    /// The state's fingerprint, in a stateless search that gives up at a cycle.
    key: Option<u128>,
}

/// Explores every schedule of `machine` (usually fresh) and collects the final outcomes.
pub fn outcomes(machine: &Machine, observe: &Observe, config: DfsConfig) -> DfsReport {
    outcomes_until(machine, observe, config, &Stop::never())
}

/// [`outcomes`], cut short (with [`DfsBound::Time`]) when `stop` is requested.
pub fn outcomes_until(
    machine: &Machine,
    observe: &Observe,
    config: DfsConfig,
    stop: &Stop,
) -> DfsReport {
    outcomes_each(machine, observe, config, stop, &mut |_| true)
}

/// [`outcomes_until`], calling `each` with every execution the search makes (its choices,
/// replayable from the fresh machine) as it reaches a final state; `each`
/// returning `false` ends the search ([`DfsBound::Halted`]). With sleep sets the executions are
/// at least one per Mazurkiewicz trace of the independence of footprints (Godefroid ch. 5), so a
/// property that depends only on the trace (such as the race monitors' happens-before) is
/// decided for every schedule by checking these. Source-set DPOR also makes at least one per
/// trace, but of its own independence, under which flat-memory fences commute
/// ([`super::dpor::outcome_footprint`]): a property that orders fences needs sleep sets.
pub fn outcomes_each(
    machine: &Machine,
    observe: &Observe,
    config: DfsConfig,
    stop: &Stop,
    each: &mut dyn FnMut(&[Choice]) -> bool,
) -> DfsReport {
    let mut root = machine.clone();
    let mut path = Vec::new();
    if let Err(e) = settle(&mut root, &mut path) {
        let mut report = DfsReport::empty();
        report.refused = Some(Refused::new(&path, root.steps(), e));
        return report;
    }
    search_from(root, path, Vec::new(), observe, config, stop, each)
}

/// A choice asleep in a state, with the footprint of its transaction there.
pub(crate) type Sleeper = (Choice, TransactionFootprint);

impl DfsReport {
    /// Nothing found, nothing computed.
    pub fn empty() -> DfsReport {
        DfsReport {
            outcomes: BTreeMap::new(),
            transitions: 0,
            executions: 0,
            states: 0,
            slept: 0,
            bound_hit: None,
            refused: None,
        }
    }
}

/// The search below `root` (settled, reached by the choices `path` from the fresh machine),
/// with the choices of `sleep` asleep there: the whole search from the fresh machine, or one
/// subtree of a split one ([`super::split`]). Witnesses and `each` get whole paths.
///
/// [`Reduction::SourceDpor`] with [`Memo::States`] is DPOR while it pays: under flat memory,
/// the stateless DPOR search with the depth bound [`DPOR_DEPTH`] and at most [`DPOR_BUDGET`]
/// transitions first; if some schedule reaches that depth (a spin loop) or the budget is spent
/// (lane groups of one warp under ITS, whose steps are all dependent, interleave in every order
/// and join again in states only a state cache recognises), that search is abandoned and the
/// sleep-set search with the state cache answers instead (its `transitions` include the
/// abandoned ones, and `each` has seen the abandoned search's executions too). Both answers are
/// complete, so either is the answer. Under `--memory cached` (memory micro steps commute with
/// nothing) it is the sleep-set search with the state cache.
pub(crate) fn search_from(
    root: Machine,
    path: Vec<Choice>,
    sleep: Vec<Sleeper>,
    observe: &Observe,
    config: DfsConfig,
    stop: &Stop,
    each: &mut dyn FnMut(&[Choice]) -> bool,
) -> DfsReport {
    let each = &mut |_: &Machine, p: &[Choice]| each(p);
    let cached = DfsConfig {
        reduction: Reduction::SleepSets,
        ..config
    };
    if config.reduction != Reduction::SourceDpor || config.memo != Memo::States {
        return search(root, path, sleep, observe, config, stop, each, false);
    }
    if !root.performs_accesses_at_once() {
        // Memory micro steps commute with nothing: DPOR cannot reduce them, and without
        // the state cache their interleavings are explored again and again.
        return search(root, path, sleep, observe, cached, stop, each, false);
    }
    let dpor = search(
        root.clone(),
        path.clone(),
        sleep.clone(),
        observe,
        attempt(config.folding, config.max_transitions),
        stop,
        each,
        true,
    );
    let gave_up = match dpor.bound_hit {
        Some(DfsBound::Depth(_)) => true,
        Some(DfsBound::Transitions(_)) => config.max_transitions > DPOR_BUDGET,
        _ => false,
    };
    if !gave_up {
        return dpor;
    }
    let mut report = search(root, path, sleep, observe, cached, stop, each, false);
    report.transitions += dpor.transitions;
    report
}

/// The configuration of a DPOR attempt ([`search_from`], [`outcomes_dpor`]): stateless, cut at
/// [`DPOR_DEPTH`] and at `max_transitions` or [`DPOR_BUDGET`], whichever is lower.
fn attempt(folding: Folding, max_transitions: u64) -> DfsConfig {
    DfsConfig {
        reduction: Reduction::SourceDpor,
        memo: Memo::Stateless {
            max_depth: DPOR_DEPTH,
        },
        max_transitions: max_transitions.min(DPOR_BUDGET),
        folding,
    }
}

/// Stateless source-set DPOR ([`Reduction::SourceDpor`]) from `machine` (usually fresh) that
/// gives up rather than search long: `Err` with the bound as soon as a schedule reaches
/// [`DPOR_DEPTH`] transactions or comes back to a state on it ([`DfsBound::Depth`]: a spin
/// loop; the schedules of a cyclic program never end, and a state repeated on the schedule
/// shows it at once) or the transitions reach `max_transitions` or [`DPOR_BUDGET`]
/// ([`DfsBound::Transitions`]). The caller then answers by a search with a state cache. Otherwise the report is complete (or cut by `stop`, [`DfsBound::Time`],
/// or by `each`, [`DfsBound::Halted`], or by a refused choice), and `each` has seen every
/// execution it made, with its final machine and its choices (replayable from the fresh
/// machine). At least one execution per Mazurkiewicz trace of DPOR's independence is made
/// ([`outcomes_each`]), and executions of one trace end in the same state, so every reachable
/// final state is the final state of some execution `each` sees.
///
/// Meant for flat memory (under `--memory cached` the micro steps commute with nothing, and
/// the budget is spent at once).
pub fn outcomes_dpor(
    machine: &Machine,
    observe: &Observe,
    folding: Folding,
    max_transitions: u64,
    stop: &Stop,
    each: &mut dyn FnMut(&Machine, &[Choice]) -> bool,
) -> Result<DfsReport, DfsBound> {
    let mut root = machine.clone();
    let mut path = Vec::new();
    if let Err(e) = settle(&mut root, &mut path) {
        let mut report = DfsReport::empty();
        report.refused = Some(Refused::new(&path, root.steps(), e));
        return Ok(report);
    }
    let config = attempt(folding, max_transitions);
    let report = search(root, path, Vec::new(), observe, config, stop, each, true);
    match report.bound_hit {
        Some(b @ (DfsBound::Depth(_) | DfsBound::Transitions(_))) if report.refused.is_none() => {
            Err(b)
        }
        _ => Ok(report),
    }
}

/// The depth bound of DPOR under [`Memo::States`] ([`search_from`]): litmus tests and the
/// corpus's terminating kernels take far fewer transactions.
pub const DPOR_DEPTH: usize = 2_000;

/// The transitions DPOR may take under [`Memo::States`] before the state-caching search takes
/// over ([`search_from`]): well under a second; the litmus families up to 8 threads take at
/// most 50,000.
pub const DPOR_BUDGET: u64 = 200_000;

/// [`search_from`] with `config` as it is; `give_up`: stop at the first schedule of a
/// stateless search that reaches the depth bound or comes back to a state on it (a cycle, which
/// it would repeat up to the depth bound: [`DfsBound::Depth`] is reported either way).
#[allow(clippy::too_many_arguments)]
fn search(
    root: Machine,
    path: Vec<Choice>,
    sleep: Vec<Sleeper>,
    observe: &Observe,
    config: DfsConfig,
    stop: &Stop,
    each: &mut dyn FnMut(&Machine, &[Choice]) -> bool,
    give_up: bool,
) -> DfsReport {
    let mut report = DfsReport::empty();
    let mut path = path;
    let mut memo: FingerprintMap<u128, Vec<Choice>> = FingerprintMap::default();

    let mut stack: Vec<Frame> = Vec::new();
    let dpor = config.reduction.dpor(config.memo);
    // DPOR: the events of the execution from `root` to the top of the stack, one per frame.
    let mut trace = Trace::default();
    let mut pending = Some((root, sleep));
    loop {
        // Enter the pending state: a final one is an outcome, a known one may be cut.
        if let Some((m, sleep)) = pending.take() {
            let mut key = None;
            if let Some(t) = m.termination() {
                report.executions += 1;
                report
                    .outcomes
                    .entry(Outcome::of(&m, t, observe))
                    .or_insert_with(|| path.clone());
                if !each(&m, &path) {
                    report.bound_hit.get_or_insert(DfsBound::Halted);
                    break;
                }
            } else {
                let sleep_choices = match config.memo {
                    Memo::States => {
                        let key = m.state_fingerprint();
                        let now: Vec<Choice> = sleep.iter().map(|(c, _)| *c).collect();
                        match memo.get_mut(&key) {
                            // Explored before with no more asleep: nothing new below.
                            Some(before) if before.iter().all(|c| now.contains(c)) => None,
                            Some(before) => {
                                before.retain(|c| now.contains(c));
                                Some(before.clone())
                            }
                            None => {
                                report.states += 1;
                                memo.insert(key, now.clone());
                                Some(now)
                            }
                        }
                    }
                    Memo::Stateless { max_depth } => {
                        // Giving up, a schedule that comes back to a state on it would repeat
                        // its cycle up to the depth bound: it gives up there already.
                        key = give_up.then(|| m.state_fingerprint());
                        let cycle = key.is_some() && stack.iter().any(|f| f.key == key);
                        if stack.len() >= max_depth || cycle {
                            report.bound_hit.get_or_insert(DfsBound::Depth(max_depth));
                            if give_up {
                                break;
                            }
                            None
                        } else {
                            report.states += 1;
                            Some(sleep.iter().map(|(c, _)| *c).collect())
                        }
                    }
                };
                if let Some(asleep) = sleep_choices {
                    let sleep: Vec<(Choice, TransactionFootprint)> = sleep
                        .into_iter()
                        .filter(|(c, _)| asleep.contains(c))
                        .collect();
                    stack.push(Frame {
                        enabled: branches(&m),
                        machine: Some(m),
                        sleep,
                        next: 0,
                        path_len: path.len(),
                        backtrack: Vec::new(),
                        done: Vec::new(),
                        key,
                    });
                }
            }
        }
        if report.transitions >= config.max_transitions {
            report
                .bound_hit
                .get_or_insert(DfsBound::Transitions(config.max_transitions));
            break;
        }
        if stop.requested() {
            report.bound_hit.get_or_insert(DfsBound::Time);
            break;
        }
        let depth = stack.len().saturating_sub(1);
        let Some(top) = stack.last_mut() else {
            break;
        };
        path.truncate(top.path_len);
        let pick = if dpor {
            dpor_pick(top, &mut report.slept)
        } else {
            awake_pick(top, &mut report.slept)
        };
        let Some(c) = pick else {
            stack.pop();
            continue;
        };
        // DPOR keeps every state until it is left: races may add choices to it later.
        let last = !dpor
            && !top.enabled[top.next..]
                .iter()
                .any(|e| !top.sleep.iter().any(|(s, _)| s == e));
        let mut child = match (last, top.machine.take()) {
            (true, Some(m)) => m,
            (false, Some(m)) => {
                let child = m.clone();
                top.machine = Some(m);
                child
            }
            (_, None) => {
                stack.pop();
                continue;
            }
        };
        report.transitions += 1;
        match transition_event(&mut child, c, &mut top.sleep, config, &mut path) {
            Ok(step) => {
                if dpor {
                    trace.truncate(depth);
                    let footprint = step.footprint.filter(|_| !step.faulted && !step.settled);
                    for race in trace.push(Proc::of(&c), footprint) {
                        reverse(&mut stack[race.at], &race.initials);
                    }
                }
                pending = Some((child, step.sleep));
            }
            Err(refused) => {
                report.refused = Some(refused);
                break;
            }
        }
    }
    report
}

/// What one transaction did, for the search.
pub(crate) struct Step {
    /// The child's sleep set.
    pub sleep: Vec<Sleeper>,
    /// The transaction's footprint (with sleep sets).
    pub footprint: Option<TransactionFootprint>,
    /// Its step faulted: it commutes with nothing.
    pub faulted: bool,
    /// System choices were settled after it (a block issued, a barrier released): what they
    /// enable is not in the footprint.
    pub settled: bool,
}

/// Takes the transaction of choice `c` on `child` (a copy of the state whose sleep set is
/// `sleep`), appending its choices to `path`; returns the child's sleep set and adds `c` to
/// `sleep` (unless it faulted). Err: the machine refused an enabled choice (a cudasem bug).
pub(crate) fn transition(
    child: &mut Machine,
    c: Choice,
    sleep: &mut Vec<Sleeper>,
    config: DfsConfig,
    path: &mut Vec<Choice>,
) -> Result<Vec<Sleeper>, Refused> {
    transition_event(child, c, sleep, config, path).map(|step| step.sleep)
}

/// [`transition`], with what the transaction did ([`Step`]).
pub(crate) fn transition_event(
    child: &mut Machine,
    c: Choice,
    sleep: &mut Vec<Sleeper>,
    config: DfsConfig,
    path: &mut Vec<Choice>,
) -> Result<Step, Refused> {
    let sleeping = config.reduction.sleeps();
    // The state before the step is known only to the state cache; a transaction that comes
    // back to it is cut by the step bound instead.
    // DPOR judges fences under flat memory by what they change (nothing): for its sleep sets
    // too ([`dpor::outcome_footprint`]).
    let flat_fences =
        config.reduction == Reduction::SourceDpor && child.performs_accesses_at_once();
    let judged = |fp: TransactionFootprint| dpor::outcome_footprint(fp, flat_fences);
    let fp = match fold::step_folded(
        child,
        &c,
        config.folding,
        None,
        None,
        sleeping,
        Default::default(),
        path,
    ) {
        Ok(fp) => fp.filter(|_| sleeping).map(judged),
        Err(e) => return Err(Refused::new(path.iter(), child.steps(), e)),
    };
    let before_settle = path.len();
    if let Err(e) = settle(child, path) {
        return Err(Refused::new(path.iter(), child.steps(), e));
    }
    let settled = path.len() > before_settle;
    let faulted = matches!(
        child.termination().map(Status::of),
        Some(Status::Error { .. })
    );
    let child_sleep = match fp {
        Some(fp) => {
            let inherited: Vec<Sleeper> = sleep
                .iter()
                .filter(|(_, f)| f.independent(&fp))
                .copied()
                .collect();
            if !faulted {
                sleep.push((c, fp));
            }
            inherited
        }
        None => Vec::new(),
    };
    // Footprints of the inherited sleepers are recomputed in the child's state, where the
    // next siblings' independence is judged. A folded transaction's footprint is kept: the
    // child's transaction is the same one, since what was independent of it did not touch
    // its warp (and its cut points depend on its warp alone, [`fold`]).
    let sleep = match config.folding {
        Folding::None => child_sleep
            .into_iter()
            .map(|(s, _)| {
                let last = child.footprint(&s);
                (
                    s,
                    judged(TransactionFootprint {
                        last,
                        invisible_before: false,
                    }),
                )
            })
            .collect(),
        Folding::Invisible => child_sleep,
    };
    Ok(Step {
        sleep,
        footprint: fp,
        faulted,
        settled,
    })
}

/// Sleep sets (or no reduction): the next choice to take at `frame`, the next enabled one that
/// is awake. `None`: the state is done.
fn awake_pick(frame: &mut Frame, slept: &mut u64) -> Option<Choice> {
    while let Some(&c) = frame.enabled.get(frame.next) {
        frame.next += 1;
        if frame.sleep.iter().any(|(s, _)| *s == c) {
            *slept += 1;
            continue;
        }
        return Some(c);
    }
    None
}

/// DPOR: the next choice to take at `frame`, the first (in enabled order) of its backtrack set
/// not yet taken and awake; a fresh state's backtrack set starts with the first awake choice's
/// process ([`schedule`]). `None`: the state is done.
fn dpor_pick(frame: &mut Frame, slept: &mut u64) -> Option<Choice> {
    if frame.backtrack.is_empty() {
        let first = frame
            .enabled
            .iter()
            .find(|c| !frame.sleep.iter().any(|(s, _)| s == *c))
            .copied()?;
        schedule(frame, Proc::of(&first));
    }
    loop {
        let c = frame
            .enabled
            .iter()
            .find(|c| frame.backtrack.contains(c) && !frame.done.contains(c))
            .copied()?;
        frame.done.push(c);
        if frame.sleep.iter().any(|(s, _)| *s == c) {
            *slept += 1;
            continue;
        }
        return Some(c);
    }
}

/// Adds every choice of process `proc` enabled at `frame` to its backtrack set (a warp's lane
/// groups and branch targets are its own nondeterminism: all are explored, [`super::dpor`]).
/// False when `proc` has no enabled choice there.
fn schedule(frame: &mut Frame, proc: Proc) -> bool {
    let mut any = false;
    for c in &frame.enabled {
        if Proc::of(c) == proc {
            any = true;
            if !frame.backtrack.contains(c) {
                frame.backtrack.push(*c);
            }
        }
    }
    any
}

/// Reverses a race at `frame` (the state before its first event): unless one of `initials` is
/// already scheduled there, schedules the first that is enabled; when none is, every enabled
/// choice ([`super::dpor`]).
fn reverse(frame: &mut Frame, initials: &[Proc]) {
    if frame
        .backtrack
        .iter()
        .any(|c| initials.contains(&Proc::of(c)))
    {
        return;
    }
    if initials.iter().any(|p| schedule(frame, *p)) {
        return;
    }
    for c in &frame.enabled {
        if !frame.backtrack.contains(c) {
            frame.backtrack.push(*c);
        }
    }
}
