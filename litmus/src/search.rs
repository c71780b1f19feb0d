//! Exhaustive exploration of a translated litmus test: depth-first search over the machine's
//! enabled choices with a visited set of canonical state fingerprints
//! ([`Machine::state_fingerprint`]: the step counter is not part of the state, so spin loops
//! close and independent steps in different orders meet again).
//!
//! * System choices (block issue, barrier completion) are folded into the step before them
//!   ([`explore::settle`]): with flat memory neither when a block is issued nor when a
//!   complete barrier releases its warps adds behaviour (the released warps need not run at
//!   once). Cached memory's `Choice::Mem` steps are *not* system choices that can be folded:
//!   they stay branching points (`settle` leaves them alone).
//! * Invisible steps (a thread's register-only instructions) are folded into the thread's next
//!   visible one unless `folding` is [`Folding::None`] ([`explore::fold`]).
//! * Final outcomes are the observed terms' values in *completed* terminal states. Deadlocked
//!   and faulting states are counted but give no outcome (herd conditions speak of complete
//!   executions). Counts are the number of distinct final machine states with that outcome, not
//!   the number of paths (the visited set merges paths).
//! * Bounds: `max_states` distinct states, and a [`Stop`] (the time bound); when one cuts the
//!   search the result says so and no verdict is claimed.
//!
//! Under flat memory with the fold, a test the stateful search does not decide within
//! [`QUICK_STATES`] states is searched by stateless source-set DPOR
//! ([`explore::dfs::outcomes_dpor`]), one execution per class of executions that order their
//! dependent steps alike; the final states of its executions are recorded once each by their
//! fingerprint, so the counts are distinct final states as in the stateful search. DPOR gives
//! up at the first schedule that comes back to a state on it or reaches its depth bound (a
//! spin loop: the CADP forward-progress tests) or when its transitions reach its budget or
//! `max_states`; then the stateful search decides the test, as it would have without DPOR.

use super::parse::{Quantifier, Term};
use super::translate::{Slot, Translation};
use explore::dfs::{self, DfsBound};
use explore::fold::{self, Folding};
use explore::keyed::FingerprintSet;
use explore::settle;
use explore::{Por, ample, dependence};
use scheduler::Refused;
use scheduler::Stop;
use scheduler::outcome::Observe;
use semantics::machine::{Futures, Machine, MemoryKind, Termination};
use std::cell::OnceCell;
use std::collections::BTreeMap;
use traces::Choice;

/// One final outcome: the observed terms' values, in the order of [`Translation::observed`].
pub type Values = Vec<i64>;

/// Which search decided a test, and so what [`Exploration::states`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Searched {
    /// The stateful search: `states` counts distinct machine states.
    States,
    /// Stateless source-set DPOR ([`dfs::outcomes_dpor`]): `states` counts the states it
    /// entered, the nodes of its schedule tree (a state reached by several explored schedules
    /// counts once per schedule).
    Dpor,
}

impl Searched {
    /// What `states` counts, in words (for the text and JSON reports).
    pub const fn counts(self) -> &'static str {
        match self {
            Searched::States => "distinct machine states",
            Searched::Dpor => "states entered by source-set DPOR (nodes of its schedule tree)",
        }
    }
}

/// What the search found.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// States visited, as [`Exploration::searched`] says.
    pub states: usize,
    /// Which search decided the test.
    pub searched: Searched,
    /// Outcome → number of distinct completed final states reaching it.
    pub outcomes: BTreeMap<Values, usize>,
    /// A path (all choices from the initial state, system choices included) to a completed
    /// final state, for each outcome: the first one found.
    pub paths: BTreeMap<Values, Vec<Choice>>,
    /// Distinct deadlocked final states (e.g. a barrier that never fills).
    pub deadlocks: usize,
    /// Distinct faulting final states, with the first fault's message.
    pub faults: usize,
    pub first_fault: Option<String>,
    /// The `max_states` bound cut the search.
    pub bounded: bool,
    /// The time bound (a [`Stop`]) cut the search.
    pub timed_out: bool,
    /// The machine refused one of its enabled choices (a cudasem bug): the search stopped
    /// there, its outcomes are incomplete.
    pub refused: Option<Refused>,
}

/// Reads the observed terms of a completed machine: locations from memory, registers from
/// the threads' final registers (the machine keeps them: [`super::start`] sets
/// `FinalRegisters::Observed`).
pub fn observe(machine: &Machine, t: &Translation) -> Values {
    let register = |thread: usize, name: &str| -> i64 {
        let (Some(reg), Some(&(block, warp))) = (
            Translation::register_id(machine.program(), name),
            t.placement.get(thread),
        ) else {
            return 0;
        };
        machine
            .register(block, warp, 0, reg)
            .map_or(0, |v| v as u32 as i32 as i64)
    };
    let word = |bytes: &[u8], i: usize| -> i64 {
        bytes
            .get(i * 4..i * 4 + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(0, |b| i32::from_le_bytes(b) as i64)
    };
    t.observed
        .iter()
        .map(|(_, slot)| match slot {
            Slot::Register { thread, name } => register(*thread, name),
            Slot::Variable(v) => machine.variable(v).map_or(0, |b| word(&b, 0)),
            Slot::Const(c) => *c,
        })
        .collect()
}

impl Exploration {
    /// Nothing found yet, by the search `searched`.
    fn empty(searched: Searched) -> Exploration {
        Exploration {
            states: 0,
            searched,
            outcomes: BTreeMap::new(),
            paths: BTreeMap::new(),
            deadlocks: 0,
            faults: 0,
            first_fault: None,
            bounded: false,
            timed_out: false,
            refused: None,
        }
    }
}

struct Frame {
    /// The choices that led here from the parent (the picked one, then settled system ones).
    taken: Vec<Choice>,
    /// The successors still to visit: the machine, the choices and the state fingerprint of
    /// each transaction.
    succ: std::vec::IntoIter<Successor>,
}

/// Which persistent sets the stateful search builds ([`Por::Persistent`]).
#[derive(Clone, Copy)]
enum Reduce<'a> {
    /// Flat memory: sets of warps from their future footprints
    /// ([`explore::ample::persistent_sets`]).
    Futures(&'a Futures),
    /// Cached memory: the choices of one block when all of them touch only that block's
    /// places, and the closures at the grain of cache lines
    /// ([`explore::dependence::block_persistent_sets_sharing`]), with the launch's future
    /// footprints computed once, when a closure first needs them.
    Blocks(&'a OnceCell<Futures>),
}

/// A transaction the machine refused: the choices taken up to it, the step count, the error.
type Refusal = (Vec<Choice>, u64, semantics::machine::StepError);

/// One successor: its machine, the choices of its transaction, its state fingerprint.
type Successor = (Machine, Vec<Choice>, u128);

/// The successors of `m` to visit: one per enabled choice, in the machine's order, or, under
/// `futures` (persistent sets), those of one persistent set over several warps
/// ([`explore::ample::persistent_sets`]) when there is one: the one with the fewest successors
/// not `visited` yet, then the smallest, then the first. Any persistent set keeps every
/// terminal state ([`explore_until_with`]), and one whose successors were all visited adds
/// nothing to the search.
fn successors(
    m: &Machine,
    folding: Folding,
    reduce: Option<Reduce<'_>>,
    visited: &FingerprintSet<u128>,
) -> Result<Vec<Successor>, Refusal> {
    let enabled = m.enabled();
    let reduce = reduce.filter(|_| enabled.len() > 1);
    let futures = match reduce {
        Some(Reduce::Futures(f)) => Some(f),
        _ => None,
    };
    let mut out = Vec::with_capacity(enabled.len());
    let mut judged = Vec::new();
    for choice in enabled {
        let mut m2 = m.clone();
        let mut taken = Vec::new();
        // The choice came from the enabled set: a refusal is a cudasem bug, never skipped.
        let fp = match fold::step_folded(
            &mut m2,
            choice,
            folding,
            None,
            None,
            reduce.is_some(),
            // Under persistent sets, flat memory: a fence changes no state, and the exit of a
            // warp alone in its block commutes with everything (the final states and outcomes
            // are all this search keeps; no race monitor orders fences here).
            fold::Forward {
                fences: futures.is_some(),
                provenance_rules: None,
                exits: futures.is_some(),
            },
            &mut taken,
        ) {
            Ok(fp) => fp,
            Err(e) => return Err((taken, m2.steps(), e)),
        };
        let before = taken.len();
        if let Err(e) = settle(&mut m2, &mut taken) {
            return Err((taken, m2.steps(), e));
        }
        if reduce.is_some() {
            judged.push(ample::Judged::of(fp, &m2, taken.len() > before));
        }
        let key = m2.state_fingerprint();
        out.push((m2, taken, key));
    }
    let fresh = |set: &Vec<usize>| {
        set.iter()
            .filter(|&&i| out.get(i).is_some_and(|s| !visited.contains(&s.2)))
            .count()
    };
    let sets = match reduce {
        Some(Reduce::Futures(f)) => ample::persistent_sets(m, f, enabled, &judged),
        Some(Reduce::Blocks(futures)) => {
            dependence::block_persistent_sets_sharing(m, enabled, &judged, futures)
        }
        None => Vec::new(),
    };
    if let Some(set) = sets
        .into_iter()
        .enumerate()
        .min_by_key(|(k, set)| (fresh(set), *k))
        .map(|(_, set)| set)
    {
        let mut i = 0;
        out.retain(|_| {
            i += 1;
            set.contains(&(i - 1))
        });
    }
    Ok(out)
}

/// Explores every execution of `initial` (a fresh machine of `t`) by the stateful search.
pub fn explore(initial: Machine, t: &Translation, max_states: usize) -> Exploration {
    explore_until(initial, t, max_states, Folding::Invisible, &Stop::never())
}

/// The states of the first stateful stage ([`explore_staged`]).
pub const QUICK_STATES: usize = 5_000;

/// The search of the `litmus` command, in stages (module header). Under flat memory with the fold, the
/// stateful search and DPOR take turns, each with four times the bound of its last turn: the
/// stateful search with at most `quick` states first (most tests of the suite end there, in
/// milliseconds), then DPOR with a budget of twice as many transitions, and so on, until one
/// decides the test. DPOR is not tried again once a schedule came back to a state or reached
/// its depth bound (the test loops) or once its budget reached [`dfs::DPOR_BUDGET`]. Neither
/// search wins everywhere: DPOR takes one execution per class of executions that order the
/// dependent steps alike and the stateful search one visit per state, and tests whose threads
/// all write one location (coherence tests) have far more of the first, the families (MP-n,
/// SB-n, LB-n, IRIW-n) far more of the second; taking turns costs at most a constant factor
/// over the better one. Last, the stateful search with `max_states`. `quick` = 0: DPOR with its
/// whole budget first.
pub fn explore_staged(
    initial: Machine,
    t: &Translation,
    max_states: usize,
    folding: Folding,
    quick: usize,
    stop: &Stop,
) -> Exploration {
    if folding == Folding::Invisible && initial.config().memory == MemoryKind::Flat {
        let mut states = quick;
        let mut budget = if quick == 0 {
            dfs::DPOR_BUDGET
        } else {
            2 * quick as u64
        };
        let mut dpor = true;
        loop {
            if states > 0 {
                if states >= max_states {
                    break;
                }
                let found = explore_until(initial.clone(), t, states, folding, stop);
                if !found.bounded {
                    return found;
                }
            }
            if dpor {
                match explore_dpor(&initial, t, budget.min(max_states as u64), stop) {
                    Ok(found) => return found,
                    Err(DfsBound::Transitions(_)) if budget < dfs::DPOR_BUDGET => {}
                    Err(_) => dpor = false,
                }
            }
            if states == 0 {
                break;
            }
            states = states.saturating_mul(4);
            budget = budget.saturating_mul(4);
        }
    }
    explore_until(initial, t, max_states, folding, stop)
}

/// [`explore()`] (the stateful search, module header), cut short (`timed_out`) when `stop` is
/// requested; with persistent sets ([`Por::Persistent`]) when `folding` folds invisible steps.
pub fn explore_until(
    initial: Machine,
    t: &Translation,
    max_states: usize,
    folding: Folding,
    stop: &Stop,
) -> Exploration {
    let por = match folding {
        Folding::Invisible => Por::Persistent,
        Folding::None => Por::None,
    };
    explore_until_with(initial, t, max_states, folding, por, stop)
}

/// [`explore_until`] with the partial-order reduction `por`: under flat memory,
/// [`Por::Persistent`] visits at each state only the transactions of the smallest persistent
/// set over several warps ([`explore::ample::persistent_sets`]) when one is known. A
/// depth-first search with a visited set and persistent sets reaches every terminal state
/// (Godefroid, "Partial-Order Methods for the Verification of Concurrent Systems", theorem
/// 4.3: by induction on the distance to the terminal state, which a transaction of the set
/// shortens; it needs no cycle proviso, since terminal states are all it must keep), so the
/// same completed final states and outcomes with the same counts, and the same deadlocks; a
/// run that ends in another warp's fault ends in the same fault, so `faults` may be lower.
pub fn explore_until_with(
    initial: Machine,
    t: &Translation,
    max_states: usize,
    folding: Folding,
    por: Por,
    stop: &Stop,
) -> Exploration {
    let mut result = Exploration::empty(Searched::States);
    let mut root = initial;
    let mut taken = Vec::new();
    if let Err(e) = settle(&mut root, &mut taken) {
        result.refused = Some(Refused::new(&taken, root.steps(), e));
        return result;
    }
    let mut visited: FingerprintSet<u128> = FingerprintSet::default();
    visited.insert(root.state_fingerprint());
    result.states = 1;
    let mut stack: Vec<Frame> = Vec::new();
    if classify(&root, t, &mut result, &[&taken]) {
        return result;
    }
    let futures = (por == Por::Persistent && root.performs_accesses_at_once())
        .then(|| root.future_footprints());
    let cached_futures = OnceCell::new();
    let reduce = match (&futures, por) {
        (Some(f), _) => Some(Reduce::Futures(f)),
        (None, Por::Persistent) => Some(Reduce::Blocks(&cached_futures)),
        (None, Por::None) => None,
    };
    // Expands `m`, reached by `taken` after the stack's frames; a refusal ends the search.
    let expand = |m: &Machine,
                  stack: &[Frame],
                  taken: &[Choice],
                  visited: &FingerprintSet<u128>,
                  result: &mut Exploration| {
        successors(m, folding, reduce, visited)
            .map_err(|(failed, steps, e)| {
                let prefix: Vec<Choice> = stack
                    .iter()
                    .flat_map(|f| f.taken.iter().copied())
                    .chain(taken.iter().copied())
                    .chain(failed)
                    .collect();
                result.refused = Some(Refused::new(&prefix, steps, e));
            })
            .ok()
    };
    let Some(succ) = expand(&root, &stack, &taken, &visited, &mut result) else {
        return result;
    };
    stack.push(Frame {
        taken,
        succ: succ.into_iter(),
    });
    while let Some(top) = stack.last_mut() {
        if stop.requested() {
            result.timed_out = true;
            break;
        }
        let Some((m, taken, key)) = top.succ.next() else {
            stack.pop();
            continue;
        };
        if !visited.insert(key) {
            continue;
        }
        result.states += 1;
        if result.states > max_states {
            result.bounded = true;
            break;
        }
        let path: Vec<&[Choice]> = stack
            .iter()
            .map(|f| f.taken.as_slice())
            .chain(std::iter::once(taken.as_slice()))
            .collect();
        if classify(&m, t, &mut result, &path) {
            continue;
        }
        let Some(succ) = expand(&m, &stack, &taken, &visited, &mut result) else {
            break;
        };
        stack.push(Frame {
            taken,
            succ: succ.into_iter(),
        });
    }
    result
}

/// The search by stateless source-set DPOR (module header), with at most `budget`
/// transitions; the bound at which DPOR gave up, if it did (a schedule came back to a state or
/// reached the depth bound, [`DfsBound::Depth`]; the budget, [`DfsBound::Transitions`]).
fn explore_dpor(
    initial: &Machine,
    t: &Translation,
    budget: u64,
    stop: &Stop,
) -> Result<Exploration, DfsBound> {
    let mut result = Exploration::empty(Searched::Dpor);
    let mut finals: FingerprintSet<u128> = FingerprintSet::default();
    let report = dfs::outcomes_dpor(
        initial,
        &Observe::default(),
        Folding::Invisible,
        budget,
        stop,
        &mut |m, path| {
            if finals.insert(m.state_fingerprint()) {
                classify(m, t, &mut result, &[path]);
            }
            true
        },
    )?;
    result.states = report.states as usize;
    result.refused = report.refused;
    result.timed_out = report.bound_hit == Some(DfsBound::Time);
    Ok(result)
}

/// Records a terminal state; false when `m` has not terminated.
fn classify(m: &Machine, t: &Translation, r: &mut Exploration, path: &[&[Choice]]) -> bool {
    match m.termination() {
        None => {
            if m.enabled().is_empty() {
                // Not terminated yet nothing enabled: treat as a deadlock (never expected).
                r.deadlocks += 1;
                return true;
            }
            false
        }
        Some(Termination::Completed) => {
            let v = observe(m, t);
            *r.outcomes.entry(v.clone()).or_insert(0) += 1;
            r.paths
                .entry(v)
                .or_insert_with(|| path.iter().flat_map(|p| p.iter().copied()).collect());
            true
        }
        Some(Termination::Deadlock(_)) => {
            r.deadlocks += 1;
            true
        }
        Some(other) => {
            r.faults += 1;
            r.first_fault.get_or_insert_with(|| other.to_string());
            true
        }
    }
}

/// The verdict of `quantifier expr` over the reached outcomes: whether the condition as written
/// holds, and the outcome that witnesses it (exists) or refutes it (~exists, forall), if any.
pub fn verdict<'a>(
    quantifier: Quantifier,
    outcomes: impl Iterator<Item = &'a Values>,
    satisfies: impl Fn(&Values) -> bool,
) -> (bool, Option<&'a Values>) {
    let mut outcomes = outcomes;
    match quantifier {
        Quantifier::Exists => {
            let w = outcomes.find(|v| satisfies(v));
            (w.is_some(), w)
        }
        Quantifier::NotExists => {
            let w = outcomes.find(|v| satisfies(v));
            (w.is_none(), w)
        }
        Quantifier::Forall => {
            let w = outcomes.find(|v| !satisfies(v));
            (w.is_none(), w)
        }
    }
}

/// Formats an outcome herd-style: `1:r0=1; x=2;`.
pub fn format_outcome(terms: &[Term], values: &Values) -> String {
    terms
        .iter()
        .zip(values)
        .map(|(t, v)| format!("{t}={v};"))
        .collect::<Vec<_>>()
        .join(" ")
}
