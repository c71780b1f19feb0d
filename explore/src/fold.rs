//! Folding invisible steps: only visible operations are scheduling points of a search
//! (docs/exploration.md; the classical reduction of invisible transitions, Lipton's movers).
//!
//! A step is *invisible* ([`invisible`]) when no other warp can observe it, now or later:
//! * its footprint is [`FootprintKind::Local`]: it reads and writes only its own warp
//!   (registers, predicates, control state, warp-collective operations);
//! * it is a load or store whose every lane resolved to `.local`, `.param` or `.const` memory
//!   (thread-private or read-only: a footprint without global or shared spans and no fence);
//! * under flat memory, its warp is alone in its block (every other warp of the block has
//!   completed, [`alone_in_block`]) and it touches only the block's shared memory or barriers:
//!   no other warp can read or write that shared memory or wait at those barriers, now or
//!   later. The release of the warp's own complete barrier (`EndBarrier`, a system choice)
//!   is then taken inside the transaction, as [`super::settle`] would take it after it.
//!
//! Such a step commutes with every step of every other warp that can happen while it is
//! enabled, and it neither enables nor disables any of them. A
//! *transaction* of the search is then one enabled choice followed, while it was invisible, by
//! the next steps of the same warp, up to and including the next visible one (global or shared
//! memory, atomics, fences, barriers, exit), and then by the invisible steps that follow that
//! one, up to but excluding the warp's next visible step: `l1 … lk v m1 … mj`. Every
//! interleaving of other warps' steps between these steps reaches the same states as the one
//! that takes them together (the `li` move right up to `v`, the `mi` left up to it), so the
//! search loses no reachable outcome, no terminal state's observation and no fair cycle by
//! scheduling only at transaction boundaries. Taking the `mi` too leaves every warp of a node
//! parked at its next visible instruction (or where the fold had to stop): the results a visible
//! step wrote and the invisible steps after it consumed (a loaded flag once compared, an atomic's
//! result once tested) are then dead registers, not part of the canonical state, and paths that
//! meet there (a spin loop's first attempt and its retries) are one node.

//! The fold takes a further step only when all of these hold (otherwise the
//! transaction ends there and the next state is an ordinary node of the search):
//! * the machine has not terminated and no system choice (block issue, barrier completion) is
//!   enabled, except the release of a barrier of a warp alone in its block (taken);
//! * the warp has exactly one enabled choice, and it is a whole-warp step or a lane group that
//!   holds every lane of the warp that has not exited: no other group of the warp can run in
//!   between, and no lane of it waits for another warp (a barrier) whose step could wake it;
//! * the choice steps the same units as the transaction's first step ([`Units::of`]), so the
//!   transaction is one unit's step for the progress models;
//! * fewer than [`MAX_FOLDED`] steps were taken, and the machine state has not repeated
//!   inside the transaction. A warp that loops forever on invisible steps alone thus still
//!   forms a cycle of the state graph (a lasso under the models that allow it): the transaction
//!   stops at a repeated state, which becomes a node, and the next transaction from it closes
//!   the cycle. While a transaction runs only its own warp changes, so a repeated machine state
//!   is a repeated warp state: the cut points do not depend on the other warps.
//!
//! Fingerprinting a state rehashes the stepped warp's registers, which costs more than the
//! step, so the fold looks for a repeat only in the states a step *entered without raising the
//! warp's pc* ([`warp_pc`]: a backward branch, a call or return, a step that stays put). That
//! finds every repeat: on a cycle of states the pc comes back to where it was, so some step of
//! the cycle does not raise it, and the state after that step recurs one period later, where
//! it is compared. Straight-line code is then never fingerprinted inside the transaction, and
//! a loop once per iteration; and only from the [`WATCH_AFTER`]th step of a transaction on.
//! Before that step, the fold compares with the transaction's start state only, and only when
//! the warp's pc is back at its start pc: an invisible loop that returns to the start state
//! (a spin on a word private to its warp) then closes after one period, so a lasso's cycle
//! goes round the loop once.
//!
//! The fold is a property of the search, not of the machine: the recorded choice list holds
//! every step, so witnesses and lassos replay step by step, and `run`, `fuzz` and the debugger
//! keep their fine-grained steps.

use super::units::Units;
use semantics::machine::{Footprint, FootprintKind, Machine, StepError};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use traces::Choice;

/// The most steps one transaction takes (the last may be the visible one).
pub const MAX_FOLDED: usize = 1024;

/// Steps of a transaction after which the fold watches for a repeated state (module header):
/// short transactions, most of them, pay nothing for the liveness check, not even a look at the
/// pc. A cycle is a cycle at any step, so it is found all the same.
const WATCH_AFTER: usize = 8;

/// Which steps are scheduling points of a search (`--reduction`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Folding {
    /// Every step (the unreduced search).
    None,
    /// Visible steps only: invisible steps are folded into the next visible step of their warp.
    #[default]
    Invisible,
}

impl Folding {
    pub const fn name(self) -> &'static str {
        match self {
            Folding::None => "none",
            Folding::Invisible => "fold",
        }
    }
}

impl fmt::Display for Folding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A reduction name that is none of the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown reduction `{0}` (expected none or fold)")]
pub struct UnknownFolding(pub String);

impl FromStr for Folding {
    type Err = UnknownFolding;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Folding::None),
            "fold" | "invisible" => Ok(Folding::Invisible),
            _ => Err(UnknownFolding(s.to_string())),
        }
    }
}

/// What a transaction may touch besides its own warp, for sleep sets: the footprint of its
/// visible step (or of its last step, where the fold stopped before any), and whether it took
/// invisible steps besides (`invisible_before`: before or after that step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransactionFootprint {
    pub last: Footprint,
    pub invisible_before: bool,
}

impl TransactionFootprint {
    /// Whether every step of `self` is independent of every step of `other`
    /// ([`Footprint::independent`]): the two transactions commute.
    pub fn independent(&self, other: &TransactionFootprint) -> bool {
        let local = |f: &Footprint| Footprint {
            warp: f.warp,
            kind: FootprintKind::Local,
        };
        self.last.independent(&other.last)
            && (!self.invisible_before || local(&self.last).independent(&other.last))
            && (!other.invisible_before || self.last.independent(&local(&other.last)))
            && (!(self.invisible_before && other.invisible_before)
                || local(&self.last).independent(&local(&other.last)))
    }
}

/// What a search folds besides the steps every search may fold ([`invisible`]), when it only
/// ever reorders a step with the steps that come after it and runs no monitor (the stateful
/// search under persistent sets). Both are steps that commute with every step another warp can
/// take *from the state they are taken in*, which is all the fold's argument needs (module
/// header); a search that compares a step with earlier ones (DPOR's races, sleep sets woken by
/// later steps) or a monitor that orders fences must not fold them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Forward<'a> {
    /// Under flat memory, a fence with no memory access ([`invisible_fence`]): it changes no
    /// state. The race monitors order fences, which is why only such a search folds it.
    pub fences: bool,
    /// The two rules that rest on where addresses came from (their provenance, the may-write
    /// summary's): when set, the fold takes as invisible
    /// * loads of settled words ([`Machine::loads_only_settled_words`]: every global word the
    ///   load reads is one no other warp may write from this state on): such a load commutes
    ///   with every later step of every other warp;
    /// * accesses of words private to their warp ([`Machine::accesses_only_private_words`]:
    ///   no other warp of the launch ever reads or writes them), under flat memory: such an
    ///   access commutes with every step of every other warp, as a `.local` one does.
    ///
    /// The flag is set when a step taken is a store that leaves the memory its address came
    /// from ([`Machine::writes_within_provenance`]) or an access with an address the analysis
    /// could not compute that touches another warp's private words
    /// ([`Machine::respects_private_words`]), after which the search's answer rests on a
    /// false premise and the caller runs it again without these rules.
    pub provenance_rules: Option<&'a AtomicBool>,
    /// Under flat memory, the exit of a warp alone in its block once every block of every grid
    /// is issued ([`FootprintKind::Exit`] with `commutes_with_exits`): it touches only its own
    /// block's barrier counts, which no other warp reads, and counters no step reads again, so
    /// it commutes with every step of every other warp and enables or disables none. A search
    /// that keeps only final states and outcomes may take it as invisible, and so may the
    /// stateful search under the models persistent sets preserve (unfair; weak fairness towards
    /// every live unit): a weakly fair run must take the exit (the warp stays enabled until it
    /// does), so taking it at once only moves it over independent transactions, and an unfair
    /// cycle that leaves it untaken is a cycle of the other warps, which stays one after it. The
    /// OBE-like models may not: which units have completed or stepped decides what they owe.
    pub exits: bool,
}

impl Forward<'_> {
    /// Whether the step of `c`, of footprint `fp`, is a load of settled words or an access of
    /// words private to its warp, to fold ([`Forward::provenance_rules`]).
    fn by_provenance(&self, machine: &Machine, c: &Choice, fp: &Footprint) -> bool {
        if self.provenance_rules.is_none() {
            return false;
        }
        match fp.kind {
            FootprintKind::Memory {
                global_reads: Some(_),
                global_writes: None,
                fence: false,
                ..
            } if machine.loads_only_settled_words(c) => true,
            FootprintKind::Memory {
                global_reads,
                global_writes,
                shared_reads: None,
                shared_writes: None,
                fence: false,
            } => {
                (global_reads.is_some() || global_writes.is_some())
                    && machine.accesses_only_private_words(c)
            }
            _ => false,
        }
    }

    /// Notes a step of `c` that breaks the premise of [`Forward::provenance_rules`]: a store
    /// that leaves the memory its address came from, or an access that touches another warp's
    /// private words.
    fn check_step(&self, machine: &Machine, c: &Choice) {
        if let Some(escaped) = self.provenance_rules
            && !(machine.writes_within_provenance(c) && machine.respects_private_words(c))
        {
            escaped.store(true, Ordering::Relaxed);
        }
    }
}

/// Takes `choice` on `machine` and, under [`Folding::Invisible`], the invisible steps of its
/// warp that follow up to the next visible one (module header), appending every choice taken to
/// `taken`. `start` is the fingerprint of the machine before the step, when the caller knows it
/// (a transaction that comes back to it stops there). `units`, when given, keeps the
/// transaction within the units of the first step. `forward`: what a search
/// that only ever reorders a step with the steps after it, and runs no monitor, folds besides
/// ([`Forward`]). Returns the transaction's footprint (the
/// footprints are computed only when `footprints` is asked for), or the error of the step that
/// failed (every choice is enabled when taken, so a failure is a cudasem bug: `taken` then holds
/// the choices taken before it).
#[allow(clippy::too_many_arguments)]
pub fn step_folded(
    machine: &mut Machine,
    choice: &Choice,
    folding: Folding,
    start: Option<u128>,
    units: Option<&Units>,
    footprints: bool,
    forward: Forward<'_>,
    taken: &mut Vec<Choice>,
) -> Result<Option<TransactionFootprint>, StepError> {
    let fences = forward.fences && machine.performs_accesses_at_once();
    let need_fp = footprints || folding == Folding::Invisible;
    let first_fp = need_fp.then(|| machine.footprint(choice));
    let first_by_provenance = folding == Folding::Invisible
        && first_fp.is_some_and(|f| forward.by_provenance(machine, choice, &f));
    let label = units.map(|u| u.of(machine, choice));
    // Where the warp starts, to close a loop back to the start state after one period.
    let start_pc = match (start, choice.warp()) {
        (Some(_), Some(w)) => Some(warp_pc(machine, w)),
        _ => None,
    };
    forward.check_step(machine, choice);
    machine.step(choice)?;
    taken.push(*choice);
    let mut fp = first_fp.map(|last| TransactionFootprint {
        last,
        invisible_before: false,
    });
    if folding == Folding::None {
        return Ok(fp);
    }
    let Some(warp) = choice.warp() else {
        return Ok(fp);
    };
    let alone = alone_in_block(machine, warp);
    let mut seen: Vec<u128> = start.into_iter().collect();
    // The warp's pc before the step just taken, once watched (module header).
    let mut pc: Option<Option<u32>> = None;
    let mut steps = 1;
    let exits = forward.exits && machine.performs_accesses_at_once() && alone;
    let folds = |f: &Footprint| {
        invisible(f, alone)
            || (fences && invisible_fence(f))
            || (exits
                && f.kind
                    == FootprintKind::Exit {
                        commutes_with_exits: true,
                    })
    };
    // Whether the transaction has taken its visible step: from then on it takes only the
    // invisible steps that follow it, and stops right before the warp's next visible one.
    let mut visible_taken = fp.is_some_and(|f| !folds(&f.last)) && !first_by_provenance;
    while let Some(f) = fp
        && steps < MAX_FOLDED
    {
        // The warp's own barrier, complete: its release is the block's alone (module header).
        if alone && let Some(release) = own_barrier_release(machine, warp.0) {
            machine.step(&release)?;
            taken.push(release);
            continue;
        }
        let Some(next) = continuation(machine, warp) else {
            break;
        };
        if label.is_some_and(|l| units.is_some_and(|u| u.of(machine, &next) != l)) {
            break;
        }
        let next_fp = machine.footprint(&next);
        let next_folds = folds(&next_fp) || forward.by_provenance(machine, &next, &next_fp);
        if visible_taken && !next_folds {
            break;
        }
        if steps < WATCH_AFTER {
            // Back where the transaction began: an invisible loop that has come back to the
            // start state closes here, after one period, not after the first watched repeat.
            if start_pc.is_some_and(|sp| warp_pc(machine, warp) == sp)
                && start == Some(machine.state_fingerprint())
            {
                break;
            }
        } else {
            let now = warp_pc(machine, warp);
            if pc.is_some_and(|before| now <= before) {
                let key = machine.state_fingerprint();
                if seen.contains(&key) {
                    break;
                }
                seen.push(key);
            }
            pc = Some(now);
        }
        // `next` is enabled: a refusal is a cudasem bug, reported (after the choices taken).
        forward.check_step(machine, &next);
        machine.step(&next)?;
        taken.push(next);
        steps += 1;
        // The footprint kept is the visible step's: the invisible ones are the warp's own.
        fp = Some(TransactionFootprint {
            last: if visible_taken { f.last } else { next_fp },
            invisible_before: true,
        });
        visible_taken |= !next_folds;
    }
    Ok(fp)
}

/// Parks every warp of a search's initial machine at its first visible instruction: the
/// `l1 … lk` of each warp's first transaction taken before the search starts, warp by warp in
/// order. The fold's argument covers it (each step is invisible: it
/// commutes with every step of every other warp and enables or disables none), and every node
/// of the search then has each warp parked at its next visible instruction, the root included:
/// the states in which some warp has not yet run its prologue (loading parameters, computing
/// its index) are not nodes. Only [`invisible`] steps of a warp not alone in its block and,
/// with `fences` under flat memory, [`invisible_fence`]s are taken, never a visible one, and a
/// warp stops where its state repeats (an invisible loop from the start: the search's own fold
/// then closes its cycle) or after [`MAX_FOLDED`] steps. Nothing is taken while a system
/// choice is enabled. Returns the units that stepped ([`Units::of`]), to mark them stepped.
///
/// Which units have stepped is what the OBE-like progress models owe fairness to, so a search
/// parks only where the model does not depend on it (the unfair model and weak fairness towards
/// every live unit, [`super::Por::preserves`]) or keeps no verdict at all (litmus outcomes).
pub fn park(
    machine: &mut Machine,
    fences: bool,
    units: Option<&Units>,
    taken: &mut Vec<Choice>,
) -> Result<super::progress::UnitSet, StepError> {
    let mut stepped = super::progress::UnitSet::EMPTY;
    let fences = fences && machine.performs_accesses_at_once();
    let mut warps: Vec<(u32, u32)> = machine.enabled().iter().filter_map(Choice::warp).collect();
    warps.sort_unstable();
    warps.dedup();
    for warp in warps {
        let mut seen: Vec<u128> = Vec::new();
        let mut pc = warp_pc(machine, warp);
        for _ in 0..MAX_FOLDED {
            let Some(next) = continuation(machine, warp) else {
                break;
            };
            let f = machine.footprint(&next);
            if !(invisible(&f, false) || (fences && invisible_fence(&f))) {
                break;
            }
            if let Some(u) = units {
                stepped = stepped.union(u.of(machine, &next));
            }
            machine.step(&next)?;
            taken.push(next);
            let now = warp_pc(machine, warp);
            if now <= pc {
                let key = machine.state_fingerprint();
                if seen.contains(&key) {
                    break;
                }
                seen.push(key);
            }
            pc = now;
        }
    }
    Ok(stepped)
}

/// The pc of `warp` as [`Machine::warp_view`] gives it (the SIMT stack's warp pc, under ITS
/// the lowest live lane's), `None` when the warp is not resident. A function of the machine
/// state, as the repeat check needs (module header).
fn warp_pc(machine: &Machine, (block, warp): (u32, u32)) -> Option<u32> {
    machine.warp_view(block, warp).map(|v| v.pc)
}

/// Whether a step of footprint `fp` is invisible to every other warp: it touches only its own
/// warp ([`FootprintKind::Local`]), or only memory no other thread can reach (an access whose
/// every lane resolved to `.local`, `.param` or `.const` memory: no global or shared span and
/// no fence), or, when the warp is `alone` in its block ([`alone_in_block`]), only its block's
/// shared memory and barriers.
pub fn invisible(fp: &Footprint, alone: bool) -> bool {
    match fp.kind {
        FootprintKind::Local => true,
        FootprintKind::Memory {
            global_reads: None,
            global_writes: None,
            shared_reads,
            shared_writes,
            fence: false,
        } => alone || (shared_reads.is_none() && shared_writes.is_none()),
        FootprintKind::Block => alone,
        FootprintKind::Memory { .. } | FootprintKind::Exit { .. } | FootprintKind::Anything => {
            false
        }
    }
}

/// Whether a step of footprint `fp` is a fence with no memory access, which under flat memory
/// changes no state (thesis section 5.3.2, rule membar: every access is performed at once):
/// it commutes with every step of every other warp and enables or disables none, so for the
/// outcomes and the progress verdicts it is invisible. The race monitors order fences, so the
/// searches that run them do not fold it ([`step_folded`]).
pub fn invisible_fence(fp: &Footprint) -> bool {
    matches!(
        fp.kind,
        FootprintKind::Memory {
            global_reads: None,
            global_writes: None,
            shared_reads: None,
            shared_writes: None,
            fence: true,
        }
    )
}

/// Whether `warp` is the only warp of its block that has not completed, under flat memory: then
/// no other warp can read or write the block's shared memory or wait at its barriers, now or
/// later (a completed warp never steps again), so the warp's shared accesses and barrier
/// arrivals are invisible to every other warp. Under `--memory cached` a shared access is an
/// in-flight operation whose micro steps interleave with everything, so it stays visible.
pub fn alone_in_block(machine: &Machine, (block, warp): (u32, u32)) -> bool {
    machine.performs_accesses_at_once()
        && (0..machine.warps_in_block(block)).all(|w| w == warp || machine.warp_completed(block, w))
}

/// The release (`EndBarrier`) of the lowest-numbered complete barrier of `block` when releases
/// of that block's barriers are the only system choices enabled: what [`super::settle`] would
/// take next. Only the block's warps wait at its
/// barriers, so for a warp alone in its block it is part of that warp's transaction.
fn own_barrier_release(machine: &Machine, block: u32) -> Option<Choice> {
    if machine.termination().is_some() {
        return None;
    }
    // The lowest-numbered complete barrier of the block, as `settle` orders them.
    let mut release: Option<(u32, Choice)> = None;
    for c in machine.enabled() {
        match *c {
            Choice::EndBarrier { block: b, barrier } if b == block => {
                release = Some(match release {
                    Some(lower) if lower.0 < barrier => lower,
                    _ => (barrier, *c),
                });
            }
            Choice::Issue { .. } | Choice::EndBarrier { .. } => return None,
            _ => {}
        }
    }
    release.map(|(_, c)| c)
}

/// The warp's only enabled choice, when the fold may take it (module header).
fn continuation(machine: &Machine, (block, warp): (u32, u32)) -> Option<Choice> {
    if machine.termination().is_some() {
        return None;
    }
    let mut found = None;
    for c in machine.enabled() {
        match *c {
            Choice::Issue { .. } | Choice::EndBarrier { .. } => return None,
            Choice::Mem(_) => {}
            _ if c.warp() == Some((block, warp)) => {
                if found.is_some() {
                    return None;
                }
                found = Some(*c);
            }
            _ => {}
        }
    }
    let c = found?;
    if let Choice::Lanes { mask, .. } = c {
        let ws = machine.warp_size();
        let real = machine
            .threads_in_block(block)
            .saturating_sub(warp * ws)
            .min(ws);
        let all = if real >= 64 {
            u64::MAX
        } else {
            (1u64 << real) - 1
        };
        if (mask | machine.warp_exited_lanes(block, warp)) & all != all {
            return None;
        }
    }
    Some(c)
}
