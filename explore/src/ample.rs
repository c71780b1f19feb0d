//! Persistent (ample) sets for the stateful search, with the cycle proviso (ARCHITECTURE.md
//! section 5; Peled, "All from one, one for all: on model checking using representatives",
//! CAV 1993, conditions C0-C3; Godefroid, "Partial-Order Methods for the Verification of
//! Concurrent Systems", ch. 4 and 6; Valmari, "Stubborn sets for reduced state space
//! generation", 1991).
//!
//! A state explores only an *ample* subset of its enabled transactions when a sound one is
//! known, and all of them otherwise. The ample sets built here are single transactions that
//! commute with every transaction any other warp can take, now or later ([`alone_ample`]):
//! * a transaction whose every step touches its own warp only ([`FootprintKind::Local`]: the
//!   fold stopped inside a warp's invisible steps, or every step is a scheduling point,
//!   [`Folding::None`]);
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
use semantics::machine::{FootprintKind, Machine};
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
        (before.cache().is_none() && single && !enabled.iter().any(is_system)).then(|| Candidate {
            alone_in_block: alone_in_block(before, warp),
        })
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
