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
use scheduler::Refused;
use scheduler::Stop;
use scheduler::outcome::Observe;
use semantics::machine::{Machine, MemoryKind, Termination};
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
    machine: Machine,
    /// The choices that led here from the parent (the picked one, then settled system ones).
    taken: Vec<Choice>,
    next: usize,
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

/// [`explore`] (the stateful search, module header), cut short (`timed_out`) when `stop` is
/// requested.
pub fn explore_until(
    initial: Machine,
    t: &Translation,
    max_states: usize,
    folding: Folding,
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
    stack.push(Frame {
        machine: root,
        taken,
        next: 0,
    });
    while let Some(top) = stack.last_mut() {
        if stop.requested() {
            result.timed_out = true;
            break;
        }
        let Some(choice) = top.machine.enabled().get(top.next).copied() else {
            stack.pop();
            continue;
        };
        top.next += 1;
        let mut m = top.machine.clone();
        let mut taken = Vec::new();
        // The choice came from the enabled set: a refusal is a cudasem bug, never skipped.
        let refused = match fold::step_folded(
            &mut m,
            &choice,
            folding,
            None,
            None,
            false,
            Default::default(),
            &mut taken,
        ) {
            Ok(_) => settle(&mut m, &mut taken).err(),
            Err(e) => Some(e),
        };
        if let Some(e) = refused {
            let prefix: Vec<Choice> = stack
                .iter()
                .flat_map(|f| f.taken.iter().copied())
                .chain(taken.iter().copied())
                .collect();
            result.refused = Some(Refused::new(&prefix, m.steps(), e));
            break;
        }
        if !visited.insert(m.state_fingerprint()) {
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
        stack.push(Frame {
            machine: m,
            taken,
            next: 0,
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
