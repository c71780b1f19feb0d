//! Persistent (ample) sets for the stateful search, with the cycle proviso (ARCHITECTURE.md
//! section 5; Peled, "All from one, one for all: on model checking using representatives",
//! CAV 1993, conditions C0-C3; Godefroid, "Partial-Order Methods for the Verification of
//! Concurrent Systems", ch. 4 and 6; Valmari, "Stubborn sets for reduced state space
//! generation", 1991).
//!
//! A state explores only an *ample* subset of its enabled transactions when a sound one is
//! known, and all of them otherwise. The ample sets built here are, first, single transactions
//! that commute with every transaction any other warp can take, now or later (`Candidate::alone`),
//! and otherwise the transactions of a set of warps ("Sets of warps" below). The singletons:
//! * a transaction whose every step touches its own warp only ([`FootprintKind::Local`]: the
//!   fold stopped inside a warp's invisible steps, or every step is a scheduling point,
//!   [`Folding::None`](crate::fold::Folding::None));
//! * under flat memory, one that ends in a fence with no memory access: flat memory performs
//!   every access at once (thesis section 5.3.2, rule membar), so the fence changes no state
//!   ([`super::dpor::outcome_footprint`]);
//! * an exit of a warp alone in its block once every block of every grid is issued and memory
//!   is flat ([`FootprintKind::Exit`] with `commutes_with_exits`): it touches its own block's
//!   barrier counts, which no other warp reads, and counters no step reads again.
//!
//! and only when the transaction is its warp's only enabled choice, no system choice is enabled,
//! the transaction neither faults nor settles a system choice after it, and (the cycle proviso)
//! the state it leads to was not known before. Such a transaction `t` of warp `p` at state `s`:
//! * **C0, C1 (persistence).** No transaction of another warp, from `s` or later, is dependent
//!   on `t`: it can neither disable `t` nor be disabled or enabled by it, and both orders reach
//!   the same state. So in every run from `s`, either `p`'s next transaction is `t` and it can
//!   be moved to the front, or `p` never steps and `t` stays enabled throughout. The one
//!   exception is a run that ends in another warp's fault (a fault stops every warp): `t`
//!   taken first, it ends in the same fault with the same memory, so the same outcome, though
//!   possibly not the same machine state.
//! * **C3 (cycle proviso).** The reduced successor is new: a state is entered by a reduced
//!   transition only when the state before it was entered earlier, so on a cycle of the
//!   reduced graph not every state can be reduced; every cycle has a fully expanded state
//!   (Bošnački, Leue and Lafuente's breadth-first proviso, "Partial-order reduction for
//!   general state exploring algorithms", 2006). This prevents *ignoring* (Peled's C3): a
//!   warp that loops on invisible steps forever is not the only thing the reduced graph sees.
//!
//! What that preserves:
//! * every reachable terminal state other than faults (completed runs, deadlocks) and every
//!   outcome, faulting ones included (persistent sets preserve terminal states: Godefroid
//!   theorem 4.3's argument holds for cyclic state spaces too, by induction on the length of
//!   the run to the terminal state);
//! * the termination verdict and a valid lasso under the **unfair** model (F = ∅: FAIL iff a
//!   deadlock or a cycle is reachable). An infinite run of the full graph is turned, state by
//!   state, into an infinite path of the reduced one (move `t` to the front, or put it in front
//!   of a run that never steps `p`), and a cycle or deadlock of the reduced graph is one of the
//!   full graph;
//! * the verdict and a valid lasso under **weak fairness towards every live unit** (`fair`,
//!   F = live). A weakly fair infinite run steps `p` (enabled for ever otherwise, `t` is never
//!   disabled), so the construction only moves transactions forward over independent ones,
//!   never adds one; every cycle of the reduced graph has a fully expanded state, where the run's
//!   next transaction is taken, so the reduced path takes every transaction of the run, with
//!   each unit's own transactions in the same order, and no unit is enabled or disabled at other
//!   points than in the run: it is weakly fair, and it ends in a strongly connected component
//!   whose units step or are disabled as in the run. A cycle of the reduced graph, with the
//!   nodes' enabled units those of the full graph ([`super::Exploration`] keeps them), is a
//!   cycle of the full graph.
//!
//! With it the search also folds a fence under flat memory into its warp's transaction as an
//! invisible step ([`super::fold::invisible_fence`]): it changes no state, so the fold's
//! argument covers it under every model (the race monitors order fences, but this search runs
//! none). A persistent singleton that ended in such a fence thus rarely remains; the fold
//! removes the states between the fence and the warp's next visible step outright, where a
//! singleton removes only the other warps' transitions from them.
//!
//! **Sets of warps** ([`persistent_sets`]). Where no singleton is known, a state may explore
//! the transactions of a set `W` of warps: every enabled choice of each warp of `W`, and those
//! of no other warp. `W` is built as the closure of a candidate warp `p` (Godefroid ch. 4's
//! conflict-based persistent sets; Valmari's stubborn sets): a warp `q` outside `W` joins it
//! when one of the next transactions of a warp of `W` is not independent
//! ([`Footprint::independent`]) of some step in `q`'s *future footprint*, everything `q` may
//! still do from its pcs on by the kernel's control-flow graph, with each access's bytes from
//! its address form under the launch and an unknown address as its whole space
//! ([`semantics::machine::future`]). A `q` with no enabled choice (at a barrier) ends the
//! candidate (its later steps would be outside the set), and so does a transaction of `W` that
//! faults, settles a system choice or has no known footprint. Only under flat memory, with no
//! system choice enabled and every block of every grid issued (no warp can appear later). Of
//! the closures that leave something out, the search takes the smallest (ties by the first
//! choice) whose every transaction leads to a state not known before.
//! * **C0.** `W` holds an enabled warp: the set is not empty.
//! * **C1 (persistence).** Take a run from `s` made of steps of warps outside `W` (and of
//!   system choices, which need a warp of theirs to arrive or exit first, so come after such
//!   steps and touch only their block). Each step is one of its warp's future steps from `s`,
//!   so it is independent of every transaction of `W` taken from `s`; those transactions'
//!   footprints depend only on their own warps' registers, which such steps do not write, so
//!   they are the same at every state of the run, stay enabled and commute with each step.
//!   That is Godefroid's definition 4.1; theorem 4.3 (terminal states, by induction on the
//!   distance to one, which a transaction of the set shortens) follows.
//! * **C2** (invisibility) is not needed: no property of a state's labels is checked, only
//!   terminal states, outcomes and the progress verdicts below.
//! * **C3 (cycle proviso).** Every transaction of the set leads to a state not known before,
//!   so, as for singletons, every cycle of the reduced graph has a fully expanded state.
//!
//! The fairness argument carries over to sets: a weakly fair run from `s` either steps a warp
//! of `W`, and its first such transaction is one of the set's (the warp's enabled choices are
//! its own, unchanged by the independent steps before) and moves to the front; or it steps no
//! warp of `W`, and then every unit of a warp of `W`, enabled throughout, must step infinitely
//! often through its other warps (at block level), so putting a transaction of the set in
//! front leaves the run weakly fair, with the same units stepping infinitely often and the same
//! units enabled. Under the unfair model any prefix does. So sets preserve what singletons do.
//!
//! **Looking ahead, tried and left out.** For what the static future cannot see (a warp spinning
//! on a held lock reaches the critical section only after the holder releases it), the set's
//! persistence can be checked directly: explore the transactions of the warps outside `W` from
//! `s`, `W` frozen, up to a bound, each with its concrete footprint (an atomic that leaves its
//! bytes as they were, a failing `atom.cas`, as a read), and accept `W` when every one is
//! independent of the set. That is Godefroid's definition itself, so it is sound. On the spin
//! lock it found sets, but they prune only edges: the holder's critical-section states are
//! reachable in any order the spinners step (their failed attempts are self-loops), so the
//! states stayed (2..8 blocks: 65 -> 63, 226 -> 222, ... 8,356 -> 8,356), while the grid
//! barrier's 32-thread transactions made it 25x slower (docs/exploration.md, "Persistent sets
//! over several warps"). It is not built.
//!
//! What it does not preserve, and why the other models are not reduced:
//! * models whose F depends on which units have stepped (OBE, HSA+OBE, LOBE) or on the lowest
//!   live unit (HSA): a run where `p` never starts may be fair there (a unit that never stepped
//!   is owed nothing under OBE), and putting `t` in front of it makes `p` a unit that stepped
//!   and is owed steps for ever;
//! * strong fairness: its fair end components are closed under every step of an F unit, and a
//!   reduced state's pruned transitions are steps the full graph's component must contain;
//!   whether the reduced graph still decides it is not argued here;
//! * the number of distinct faulting final states, and the states and transitions counts (the
//!   point of the reduction).

use super::dpor::outcome_footprint;
use super::fold::{TransactionFootprint, alone_in_block};
use super::progress::{ModelKind, ProgressModel, Strength};
use super::units::is_system;
use scheduler::outcome::Status;
use semantics::machine::{Footprint, FootprintKind, Futures, Machine};
use traces::Choice;

/// Which partial-order reduction the stateful search applies (besides the fold).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Por {
    /// Every enabled transaction of every state.
    #[default]
    None,
    /// Persistent singletons with the cycle proviso, and flat-memory fences folded (module
    /// header): preserves the outcomes, deadlocks and the verdicts of [`Por::preserves`].
    Persistent,
}

impl Por {
    /// Whether the reduced graph decides `model` exactly as the full one (module header): the
    /// unfair model and weak fairness towards every live unit.
    pub fn preserves(self, model: ProgressModel) -> bool {
        match self {
            Por::None => true,
            Por::Persistent => {
                model.kind == ModelKind::Unfair
                    || (model.kind == ModelKind::Fair && model.strength == Strength::Weak)
            }
        }
    }

    /// The strongest reduction that preserves `model`'s verdict.
    pub fn for_model(model: ProgressModel) -> Por {
        if Por::Persistent.preserves(model) {
            Por::Persistent
        } else {
            Por::None
        }
    }
}

/// A choice that may be explored alone from its state if its transaction turns out to be
/// one of the module header's ([`Candidate::alone`]): it is its warp's only enabled choice, no
/// system choice is enabled, and memory is flat (conditions C0 and C1 in part; the cycle
/// proviso C3 is the caller's: the state the transaction leads to must be new).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The warp is alone in its block (every other warp of the block has completed).
    alone_in_block: bool,
}

impl Candidate {
    /// `c`, one of `enabled` (the choices of `before`), if it is a candidate.
    pub(crate) fn of(before: &Machine, enabled: &[Choice], c: &Choice) -> Option<Candidate> {
        let warp = c.warp()?;
        let single = enabled.iter().filter(|e| e.warp() == Some(warp)).count() == 1;
        (before.performs_accesses_at_once() && single && !enabled.iter().any(is_system)).then(
            || Candidate {
                alone_in_block: alone_in_block(before, warp),
            },
        )
    }

    /// Whether the transaction, of footprint `fp`, that led to `after` (then `settled`: system
    /// choices were taken after it) may be explored alone: it neither faults nor settles, and
    /// its steps commute with every transaction of every other warp (module header).
    pub(crate) fn alone(
        self,
        fp: Option<TransactionFootprint>,
        after: &Machine,
        settled: bool,
    ) -> bool {
        let Some(fp) = fp else {
            return false;
        };
        if settled
            || matches!(
                after.termination().map(Status::of),
                Some(Status::Error { .. })
            )
        {
            return false;
        }
        // The steps besides the last visible one are invisible (the fold's condition); that
        // one decides (`last` is the visible step's footprint, or the last step's if none was).
        match outcome_footprint(fp, true).last.kind {
            FootprintKind::Local => true,
            FootprintKind::Exit {
                commutes_with_exits: true,
            } => self.alone_in_block,
            _ => false,
        }
    }
}

/// One enabled transaction of a state, as the construction of persistent sets over several
/// warps sees it ([`persistent_sets`]).
#[derive(Debug, Clone, Copy)]
pub struct Judged {
    /// The footprint of its visible step (the last step's when none was visible; a fence
    /// under flat memory as a local step, [`outcome_footprint`]), `None` when unknown.
    pub footprint: Option<Footprint>,
    /// It neither faults nor settles a system choice after it, nor, under cached memory,
    /// ends the run.
    pub clean: bool,
}

impl Judged {
    /// The transaction of footprint `fp` that led to `after` (then `settled`).
    pub fn of(fp: Option<TransactionFootprint>, after: &Machine, settled: bool) -> Judged {
        // A fence changes no state only under flat memory; under cached memory it issues an
        // operation (`dependence::fair_to_operations` tells a step that issues nothing from
        // one that issues).
        let flat = after.performs_accesses_at_once();
        // Under cached memory, the transaction that ends the run disables every silent rule
        // of every cache (a terminal state offers none): it is dependent with each of them,
        // whichever block's or line's it looks like, so no set may leave them out of it.
        let ends_cached_run = !flat && after.termination().is_some();
        Judged {
            footprint: fp.map(|fp| outcome_footprint(fp, flat).last),
            clean: !settled
                && !ends_cached_run
                && !matches!(
                    after.termination().map(Status::of),
                    Some(Status::Error { .. })
                ),
        }
    }
}

/// The persistent sets over several warps of state `m` (module header, "Sets of warps"): for
/// each warp with an enabled choice, the closure of the warps whose future conflicts with the
/// next transactions of the warps already in it, as the indices into `enabled` of the closure's
/// transactions; only closures of enabled warps that leave out some transaction, distinct,
/// smallest first, ties by their first index. `judged` holds every enabled choice's
/// transaction. Empty when a system choice is enabled, memory is cached or a block is still
/// to be issued.
pub fn persistent_sets(
    m: &Machine,
    futures: &Futures,
    enabled: &[Choice],
    judged: &[Judged],
) -> Vec<Vec<usize>> {
    if !m.performs_accesses_at_once()
        || enabled.iter().any(is_system)
        || !m.every_block_issued()
        || judged.len() != enabled.len()
    {
        return Vec::new();
    }
    let live = m.live_warps();
    let mut warps: Vec<(u32, u32)> = enabled.iter().filter_map(Choice::warp).collect();
    warps.sort_unstable();
    warps.dedup();
    let mut sets: Vec<Vec<usize>> = Vec::new();
    'candidates: for &p in &warps {
        let mut closure = vec![p];
        let mut next = 0;
        while let Some(&w) = closure.get(next) {
            next += 1;
            for (c, j) in enabled.iter().zip(judged) {
                if c.warp() != Some(w) {
                    continue;
                }
                let (Some(fp), true) = (j.footprint, j.clean) else {
                    continue 'candidates;
                };
                for &q in &live {
                    if closure.contains(&q) || m.future_independent(futures, q, &fp) {
                        continue;
                    }
                    // A warp with no enabled choice would be in the set without a transaction
                    // of it: its later steps would not be independent of the set's.
                    if warps.binary_search(&q).is_err() {
                        continue 'candidates;
                    }
                    closure.push(q);
                }
            }
        }
        let set: Vec<usize> = enabled
            .iter()
            .enumerate()
            .filter(|(_, c)| c.warp().is_some_and(|w| closure.contains(&w)))
            .map(|(i, _)| i)
            .collect();
        if set.len() < enabled.len() && !sets.contains(&set) {
            sets.push(set);
        }
    }
    sets.sort_by_key(|s| (s.len(), s.first().copied()));
    sets
}
