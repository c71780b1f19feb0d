//! Exhaustive exploration of a launch (ARCHITECTURE.md section 5): stateful breadth-first
//! search over canonical machine states ([`Machine::state_fingerprint`]) that builds the
//! progress models' labelled transition system ([`crate::progress::Lts`]) with units of a
//! chosen [`Level`], collects the set of final outcomes, and hands the graph to the termination
//! [`Oracle`] of `digests/seed000_progress.md` §4.4 for verdicts and lassos.
//!
//! * A node is (machine state, units that have stepped); its machine state is settled: system
//!   choices (block issue, barrier completion) are folded into the step before ([`settle`]).
//! * An edge is one enabled choice, with the invisible steps of its warp up to the next
//!   visible one folded in ([`fold`], unless [`Limits::folding`] is [`Folding::None`]). A
//!   choice that steps several units at once (a converged group at lane level) becomes one
//!   parallel edge per unit, all to the same node, whose
//!   `stepped` includes the whole group: the oracle then sees every member step on a cycle
//!   through it (weak check) and counts it as a step of any member (strong check).
//! * Successors of a machine state are computed once, whatever the `stepped` sets it is
//!   reached with. What is stored per state is small (`Search`): a transaction is named by
//!   the rank of its first choice and taken again to name a witness's or lasso's choices, and a
//!   state's machine is rebuilt from its origin's when its turn comes (docs/exploration.md,
//!   "What a stored state costs").
//! * Terminal states: completed runs and faults are final outcomes (a fault is not a
//!   non-termination: its units count as done); a deadlock is an outcome *and* a
//!   non-termination under every model (the oracle's deadlock rule).
//! * Symmetry ([`symmetry`], [`explore_symmetric`]): where no thread can tell its block from
//!   another, a state's key is its fingerprint up to a permutation of the blocks; it is
//!   explored through the first concrete machine found (its representative, whose fingerprint
//!   labels its nodes), and the search falls back to concrete states when a cycle of the
//!   quotient permutes blocks.
//! * Bounds: `max_states` distinct nodes. A bound hit is reported, and then no verdict is
//!   claimed ([`Exploration::verdict`] returns `None`).
//!
//! The set of final outcomes alone is cheaper by depth-first search with sleep sets
//! ([`dfs`]), which prunes interleavings of independent steps; [`coverage`] checks every
//! execution it makes (`check --explore`) and says which schedules a check covered.
//!
//! Lassos come back as choice sequences ([`Lasso::stem`], [`Lasso::cycle`]) that replay on a
//! fresh machine: the stem from the initial state (shortest, breadth-first), the cycle back to
//! the stem's end state.

pub mod ample;
pub mod axb_ptx;
pub mod budget;
pub mod coverage;
pub mod dependence;
pub mod dfs;
pub mod dpor;
pub mod fold;
pub mod keyed;
mod line_sets;
pub mod policy;
pub mod progress;
pub mod split;
pub mod symmetry;
mod table;
pub mod units;

pub use ample::Por;
pub use fold::{Folding, UnknownFolding};
pub use symmetry::{NotApplicable, Symmetry, SymmetryUse, UnknownSymmetry};

pub use units::{
    Level, TooManyUnits, Units, UnknownLevel, branches, is_system, issues_compete, settle,
};

use crate::progress::{
    Counterexample, Lts, Node, NodeId, Oracle, ProgressModel, Reason, Transition, Unit, UnitSet,
    Verdict,
};
use keyed::FingerprintMap;
use petgraph::graph::{DiGraph, NodeIndex};
use rayon::prelude::*;
use scheduler::outcome::{Observe, Outcome, Status};
use scheduler::{Refused, Stop};
use semantics::machine::Machine;
use std::collections::BTreeMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use table::IdTable;
use traces::Choice;

/// Bounds of an exploration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Stop after this many distinct nodes (machine state × stepped units).
    pub max_states: usize,
    /// Which steps are scheduling points ([`fold`]): a transition is one enabled choice with
    /// the invisible steps of its warp up to the next visible one folded in, or a single step.
    pub folding: Folding,
    /// Worker threads (`--jobs`; 0: one per core). The exploration is the same at any number:
    /// states, transitions, outcomes, verdicts and lassos; only the time changes.
    pub jobs: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_states: 1_000_000,
            folding: Folding::Invisible,
            jobs: 1,
        }
    }
}

/// What cut an exploration short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `max_states` distinct nodes.
    States(usize),
    /// The time bound: a [`Stop`] was requested (`--timeout`).
    Time,
}

/// One node's label in the LTS: the fingerprint of its machine state.
pub type StateKey = u128;

/// A distinct machine state's number, in the order the search found them.
type StateId = u32;

/// Which choice of a machine state's enabled list ([`branches`]) a transaction starts with: its
/// rank in the list sorted ([`rank`]). With the state it names the whole transaction: the fold
/// ([`fold::step_folded`]) and [`settle`] are deterministic, so the search keeps this number
/// rather than the transaction's choices (a transaction of a 32-thread block folds some twenty
/// steps), and takes the transaction again ([`How::retake`]) to name the choices of a witness
/// or lasso, or to rebuild a state's machine from its origin's. A rank, not a position: the
/// machine's order of its enabled choices depends on its history, and the machine a replay
/// reaches has the state's fingerprint but maybe another history (the set is the state's).
type ChoiceIndex = u32;

/// The rank of `c` among `enabled` (distinct choices) in [`Choice`]'s order.
fn rank(enabled: &[Choice], c: &Choice) -> ChoiceIndex {
    enabled.iter().filter(|d| *d < c).count() as ChoiceIndex
}

/// No state or node: the initial one's origin and parent.
const NONE: u32 = u32::MAX;

/// In [`StateRec::succ_len`]: the successors are in the arena ([`Search::successors`]).
const IN_ARENA: u32 = 1 << 31;

/// The key node `n` is indexed by: its state and the units that have stepped on the way to
/// it; the initial node's is no units, whatever units [`fold::park`] stepped before it.
fn node_key(
    graph: &DiGraph<Node<StateKey>, Unit, u32>,
    node_state: &[StateId],
    n: u32,
) -> (StateId, UnitSet) {
    let stepped = if n == 0 {
        UnitSet::EMPTY
    } else {
        graph[NodeIndex::new(n as usize)].stepped
    };
    (node_state[n as usize], stepped)
}

/// What one enabled choice of a machine state leads to.
#[derive(Debug, Clone, Copy)]
struct Succ {
    units: UnitSet,
    to: StateId,
    choice: ChoiceIndex,
    /// [`NONE`] for an exact edge (the transaction reaches the target's representative
    /// itself, [`symmetry`]); else the block permutation from the machine it reaches to the
    /// representative, an index into [`Search::maps`].
    map: u32,
}

/// Per distinct machine state (the search's dense table, by [`StateId`]).
#[derive(Debug, Clone)]
struct StateRec {
    /// The state's key: its fingerprint, or its fingerprint up to a permutation of the blocks
    /// under [`Symmetry::Blocks`].
    key: StateKey,
    /// The fingerprint of its representative, the concrete machine the search explores it
    /// through (the same as `key` without symmetry): its label in the graph.
    label: StateKey,
    done: UnitSet,
    /// The units of the successors a persistent set left out ([`Por::Persistent`]): still
    /// enabled here, for the progress models.
    pruned: UnitSet,
    /// Where the successors are ([`Search::successors`]): with [`IN_ARENA`] in `succ_len`, a
    /// range of the successor arena; without, the node whose edges they are. `succ_start`
    /// is [`NONE`] until they are computed (terminal states have none). `succ_len` counts
    /// them (less the flag).
    succ_start: u32,
    succ_len: u32,
    /// The state whose transaction first reached this one, and which: the machine is rebuilt
    /// from that state's when this one is expanded ([`Search::expand_chunk`]). [`NONE`] for
    /// the initial state.
    origin: (StateId, ChoiceIndex),
}

impl StateRec {
    fn expanded(&self) -> bool {
        self.succ_start != NONE
    }
}

/// A machine kept for the states it is the origin of: rebuilt from it when they are expanded,
/// and dropped once the last of them is. Only these machines are alive between expansions
/// (and the machine of a state that is its origin's only new successor, kept as it is: one
/// machine either way, and no transaction to take again): one per state with new successors
/// not expanded yet, where the search used to keep one per frontier state (each a copy of
/// the warp its transaction stepped).
#[derive(Debug)]
struct Kept {
    machine: Box<Machine>,
    /// New non-terminal successors not expanded yet.
    pending: u32,
}

/// How the search takes a transaction, the same when it explores and when it replays one.
#[derive(Debug, Clone)]
struct How {
    folding: Folding,
    units: Units,
    /// Fences with no memory access, and the exits of warps alone in their blocks once every
    /// block is issued, are folded ([`fold::Forward::fences`], [`fold::Forward::exits`]): under
    /// persistent sets.
    fold_fences_and_exits: bool,
    /// Loads of settled words are folded ([`fold::Forward::provenance_rules`]), under persistent
    /// sets and flat memory; the flag is set when a store the search takes leaves the memory
    /// its address came from, and the search then runs again without the rule.
    escaped: Option<Arc<AtomicBool>>,
    /// The launch's future footprints, for persistent sets over several warps
    /// ([`ample::persistent_sets`]): under persistent sets and flat memory.
    futures: Option<Arc<semantics::machine::Futures>>,
}

impl How {
    /// Takes the transaction that starts with `choice` on `m` (state `key`): the choice, the
    /// invisible steps folded after it and the system choices settled after those, appending
    /// each choice to `taken`. Returns the transaction's footprint (when `footprints` or the
    /// fold asks for it) and whether `settle` took a system choice.
    fn take(
        &self,
        m: &mut Machine,
        choice: &Choice,
        key: StateKey,
        footprints: bool,
        taken: &mut Vec<Choice>,
    ) -> Result<(Option<fold::TransactionFootprint>, bool), semantics::machine::StepError> {
        let fp = fold::step_folded(
            m,
            choice,
            self.folding,
            Some(key),
            Some(&self.units),
            footprints,
            fold::Forward {
                fences: self.fold_fences_and_exits,
                provenance_rules: self.escaped.as_deref(),
                exits: self.fold_fences_and_exits,
            },
            taken,
        )?;
        let before = taken.len();
        settle(m, taken)?;
        Ok((fp, taken.len() > before))
    }

    /// Takes transaction `index` of `m` (state `key`) again, as the search took it.
    fn retake(
        &self,
        m: &mut Machine,
        key: StateKey,
        index: ChoiceIndex,
        taken: &mut Vec<Choice>,
    ) -> Result<(), semantics::machine::StepError> {
        let mut enabled = branches(m);
        enabled.sort_unstable();
        match enabled.get(index as usize) {
            Some(c) => self.take(m, c, key, false, taken).map(|_| ()),
            // The search took it from a state with this fingerprint: only a machine that is
            // not deterministic (a cudasem bug) loses it.
            None => Err(semantics::machine::StepError {
                choice: enabled
                    .last()
                    .copied()
                    .unwrap_or(Choice::Warp { block: 0, warp: 0 }),
                message: format!(
                    "the search took transaction {index} of this state, which now has {} enabled choices (a cudasem bug: a machine state that does not determine its steps)",
                    enabled.len()
                ),
            }),
        }
    }

    /// The choices from the initial machine along `path` (state before each transaction, and
    /// the transaction's index): the system choices folded before the initial node, then each
    /// transaction's.
    fn replay(
        &self,
        initial: &Machine,
        initial_choices: &[Choice],
        path: impl IntoIterator<Item = (StateKey, ChoiceIndex)>,
    ) -> Vec<Choice> {
        let mut m = initial.clone();
        let mut out = initial_choices.to_vec();
        self.replay_from(&mut m, path, &mut out);
        out
    }

    /// Takes the transactions of `path` on `m` again, appending their choices to `out`. A
    /// transaction the machine refuses ends the list (it was taken once, so only a cudasem bug
    /// makes it refuse; a replay of the list then stops there too).
    fn replay_from(
        &self,
        m: &mut Machine,
        path: impl IntoIterator<Item = (StateKey, ChoiceIndex)>,
        out: &mut Vec<Choice>,
    ) {
        for (key, index) in path {
            if self.retake(m, key, index, out).is_err() {
                break;
            }
        }
    }
}

/// A reachable final outcome and where it was first found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutcomeInfo {
    /// Distinct terminal machine states with this outcome.
    pub states: usize,
    /// The choices that reach it first (breadth-first: a shortest run).
    pub witness: Vec<Choice>,
}

/// Whether the stateful search folded loads of settled words and accesses of words private to
/// their warp ([`fold::Forward::provenance_rules`]: loads of global words no other warp may write
/// from the state they are taken in, accesses of words no other warp ever touches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SettledLoads {
    /// Not folded: the search reduces nothing with persistent sets, does not fold, or memory
    /// is cached.
    #[default]
    Off,
    /// Folded.
    Applied,
    /// A store the search took left the memory its address came from (an index past its
    /// buffer into another), which the may-write summary assumes never happens, or an access
    /// whose address the analysis could not compute touched a word private to another warp
    /// (the same assumption, [`fold::Forward::provenance_rules`]): the search ran again without
    /// folding loads of settled words or accesses of private words.
    FellBack,
}

/// The result of building the state graph.
#[derive(Debug, Clone)]
pub struct Exploration {
    pub units: Units,
    oracle: Oracle<StateKey>,
    /// Per edge index: the transaction it stands for, of its source's state.
    edge_choice: Vec<ChoiceIndex>,
    /// The initial machine, settled: witnesses and lassos are replayed from it.
    initial: Box<Machine>,
    how: How,
    /// System choices folded before the initial node, then (under persistent sets) the steps
    /// that park every warp at its first visible instruction ([`fold::park`]).
    pub initial_choices: Vec<Choice>,
    pub outcomes: BTreeMap<Outcome, OutcomeInfo>,
    /// Distinct machine states (nodes differ also by `stepped`).
    pub machine_states: usize,
    /// The bound that cut the search, if one did: no verdict then.
    pub bound_hit: Option<Bound>,
    pub limits: Limits,
    /// The partial-order reduction the search applied: verdicts and lassos only for the
    /// models it preserves ([`Por::preserves`]).
    pub por: Por,
    /// Machine states explored through a persistent singleton rather than every enabled
    /// transaction.
    pub reduced_states: usize,
    /// What the search did with symmetry ([`symmetry`]): with [`SymmetryUse::Applied`] the
    /// states (and an outcome's terminal states) are counted up to a permutation of the
    /// blocks, and verdicts and lassos come only for the models [`Symmetry::preserves`].
    pub symmetry: SymmetryUse,
    /// Whether the fold took loads of settled words as invisible ([`fold::Forward`]).
    pub settled_loads: SettledLoads,
    /// Under symmetry, per node its state, and per state its representative's label and the
    /// transaction that first reached it (a lasso's stem is that chain: [`symmetry`]); empty
    /// otherwise.
    node_state: Vec<StateId>,
    origins: Vec<(StateKey, (StateId, ChoiceIndex))>,
}

/// Why no state graph came out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExploreFailure {
    /// The launch has more units than the progress models handle: the user's to change.
    #[error(transparent)]
    TooManyUnits(#[from] TooManyUnits),
    /// The machine refused one of its enabled choices: a cudasem bug.
    #[error(transparent)]
    Refused(#[from] Refused),
}

/// A non-termination witness in replayable form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lasso {
    pub model: ProgressModel,
    /// From the initial machine (system choices included).
    pub stem: Vec<Choice>,
    /// From the stem's end back to the same machine state (empty for a deadlock).
    pub cycle: Vec<Choice>,
    pub reason: Reason,
    /// The units that step in the cycle.
    pub stepping: UnitSet,
}

/// Explores every schedule of `machine` (usually fresh) with units at `level`.
pub fn explore(
    machine: &Machine,
    level: Level,
    observe: &Observe,
    limits: Limits,
) -> Result<Exploration, ExploreFailure> {
    explore_until(machine, level, observe, limits, &Stop::never())
}

/// [`explore`], cut short (with [`Bound::Time`]) when `stop` is requested.
pub fn explore_until(
    machine: &Machine,
    level: Level,
    observe: &Observe,
    limits: Limits,
    stop: &Stop,
) -> Result<Exploration, ExploreFailure> {
    explore_with(machine, level, observe, limits, Por::None, stop)
}

/// [`explore_until`] with the partial-order reduction `por` ([`ample`]): the verdicts of the
/// models it preserves ([`Por::preserves`], [`Por::for_model`]) and the outcomes are those of
/// the full search, with fewer states; [`Exploration::verdict`] and [`Exploration::lasso`]
/// answer only for those models.
pub fn explore_with(
    machine: &Machine,
    level: Level,
    observe: &Observe,
    limits: Limits,
    por: Por,
    stop: &Stop,
) -> Result<Exploration, ExploreFailure> {
    explore_symmetric(machine, level, observe, limits, por, Symmetry::None, stop)
}

/// [`explore_with`] with states taken up to the symmetry `symmetry` where the launch has it
/// ([`symmetry::applicable`]); the search runs again without it when the quotient has a cycle
/// that permutes blocks ([`SymmetryUse::FellBack`]). Ask only for a `symmetry` that preserves
/// the model whose verdict is wanted ([`Symmetry::for_model`]): [`Exploration::verdict`]
/// answers only for those.
pub fn explore_symmetric(
    machine: &Machine,
    level: Level,
    observe: &Observe,
    limits: Limits,
    por: Por,
    symmetry: Symmetry,
    stop: &Stop,
) -> Result<Exploration, ExploreFailure> {
    if symmetry == Symmetry::None {
        return search(machine, level, observe, limits, por, false, stop);
    }
    let mut settled = machine.clone();
    // A machine whose system choices fail is reported by the search itself.
    let applicable = settle(&mut settled, &mut Vec::new())
        .ok()
        .map_or(Ok(()), |()| symmetry::applicable(&settled));
    if let Err(why) = applicable {
        let mut x = search(machine, level, observe, limits, por, false, stop)?;
        x.symmetry = SymmetryUse::NotApplicable(why);
        return Ok(x);
    }
    let x = search(machine, level, observe, limits, por, true, stop)?;
    if x.symmetry != SymmetryUse::FellBack {
        return Ok(x);
    }
    let mut x = search(machine, level, observe, limits, por, false, stop)?;
    x.symmetry = SymmetryUse::FellBack;
    Ok(x)
}

/// The stateful search, over quotient states when `symmetric`, folding loads of settled
/// words where it may ([`fold::Forward::provenance_rules`]); run again without that rule when a
/// store it took left the memory its address came from ([`SettledLoads::FellBack`]).
fn search(
    machine: &Machine,
    level: Level,
    observe: &Observe,
    limits: Limits,
    por: Por,
    symmetric: bool,
    stop: &Stop,
) -> Result<Exploration, ExploreFailure> {
    let x = search_once(machine, level, observe, limits, por, symmetric, true, stop)?;
    if x.settled_loads != SettledLoads::FellBack {
        return Ok(x);
    }
    let mut x = search_once(machine, level, observe, limits, por, symmetric, false, stop)?;
    x.settled_loads = SettledLoads::FellBack;
    Ok(x)
}

/// One stateful search, folding loads of settled words when `settled` asks and the search may
/// (persistent sets, the fold, flat memory).
#[allow(clippy::too_many_arguments)]
fn search_once(
    machine: &Machine,
    level: Level,
    observe: &Observe,
    limits: Limits,
    por: Por,
    symmetric: bool,
    settled: bool,
    stop: &Stop,
) -> Result<Exploration, ExploreFailure> {
    let mut search = Search::start(machine, level, observe, limits, por, symmetric, settled)?;
    let pool = worker_pool(limits.jobs);
    match &pool {
        // The search itself runs on one of the pool's threads, which takes its share of each
        // chunk's expansions: `jobs` threads in all (a calling thread outside the pool would
        // be one more, competing with the workers while it enters a chunk), and the machines
        // it frees were mostly allocated on its own thread.
        Some(p) => p.install(|| grow(&mut search, Some(p), stop))?,
        None => grow(&mut search, None, stop)?,
    }
    Ok(search.finish())
}

/// Expands nodes in breadth-first order until every node is expanded or a bound cuts the
/// search (recorded in `search.bound_hit`).
fn grow(
    search: &mut Search<'_>,
    pool: Option<&rayon::ThreadPool>,
    stop: &Stop,
) -> Result<(), ExploreFailure> {
    let mut next = 0usize;
    'search: while next < search.graph.node_count() {
        // A chunk of consecutive nodes: the successors of its machine states are computed in
        // parallel (phase 1), then entered into the graph in node order (phase 2), exactly as
        // one node after the other would: the result does not depend on `jobs`.
        let size = if pool.is_some() { CHUNK } else { 1 };
        let chunk = next..search.graph.node_count().min(next + size);
        let mut expanded = search.expand_chunk(chunk.clone(), pool);
        for n in chunk {
            if stop.requested() {
                search.bound_hit = Some(Bound::Time);
                break 'search;
            }
            let from = NodeIndex::new(n);
            next = n + 1;
            // Successors of the machine state, computed once.
            let id = search.id_of(from);
            if let Some(result) = expanded.remove(&id) {
                search.record(from, id, result)?;
            }
            search.add_edges(from, id);
            if search.bound_hit.is_some() {
                break 'search;
            }
        }
    }
    Ok(())
}

/// The stateful search under way: the state graph built so far and what it needs to grow.
///
/// What a state costs is kept small (issue 14: the search used to hold some 5 KB per state):
/// a distinct machine state is a [`StateRec`] and an entry of `states`; a node an entry of
/// `graph`, `index` and `parent`; a successor a [`Succ`]; an edge an entry of `graph` and
/// `edge_choice`. No transaction's choices are stored ([`ChoiceIndex`]), and a state not
/// expanded yet has its machine only when it is its origin's one new successor: otherwise it
/// is rebuilt, when its turn comes, from the machine of the state that first reached it
/// ([`Kept`]).
struct Search<'o> {
    memory_units: UnitSet,
    limits: Limits,
    observe: &'o Observe,
    how: How,
    /// The initial machine, settled.
    initial: Box<Machine>,
    /// System choices folded before the initial node, then (under persistent sets) the steps
    /// that park every warp at its first visible instruction ([`fold::park`]).
    initial_choices: Vec<Choice>,
    /// The states by key (`recs[id].key`).
    states: IdTable,
    recs: Vec<StateRec>,
    /// The final outcomes of terminal states.
    outcomes: FingerprintMap<StateId, Outcome>,
    /// The machines kept for the states not expanded yet that they are the origin of.
    kept: FingerprintMap<StateId, Kept>,
    /// The machines of states not expanded yet that are their origin's only new successor.
    ready: FingerprintMap<StateId, Box<Machine>>,
    graph: DiGraph<Node<StateKey>, Unit, u32>,
    /// The nodes by (state, units that have stepped): `node_state[n]`, `graph[n].stepped`.
    index: IdTable,
    /// Per edge: the transaction it stands for.
    edge_choice: Vec<ChoiceIndex>,
    /// Per node: its breadth-first parent and the transaction from it ([`NONE`] for the
    /// initial node), to name a witness for each outcome.
    parent: Vec<(u32, ChoiceIndex)>,
    /// The successors of the states the graph cannot say them for ([`Search::successors`]),
    /// back to back.
    succ_arena: Vec<Succ>,
    /// The successors [`Search::record`] just entered, for the node `fresh_for` it expanded.
    fresh: Vec<Succ>,
    fresh_for: u32,
    bound_hit: Option<Bound>,
    por: Por,
    reduced_states: usize,
    /// States are taken up to a permutation of the blocks ([`symmetry`]).
    symmetric: bool,
    /// Per node, its state.
    node_state: Vec<StateId>,
    /// Under symmetry, per state its representative's canonical block order
    /// ([`Machine::canonical_block_order`]).
    orders: Vec<Box<[u32]>>,
    /// The block permutations of the non-exact edges ([`Succ::map`]).
    maps: Vec<Box<[u32]>>,
}

impl<'o> Search<'o> {
    /// The graph of the initial node alone: `machine`, settled.
    fn start(
        machine: &Machine,
        level: Level,
        observe: &'o Observe,
        limits: Limits,
        por: Por,
        symmetric: bool,
        settled: bool,
    ) -> Result<Search<'o>, ExploreFailure> {
        let units = Units::new(machine, level)?;
        let mut init = machine.clone();
        let mut initial_choices = Vec::new();
        if let Err(e) = settle(&mut init, &mut initial_choices) {
            return Err(Refused::new(&initial_choices, init.steps(), e).into());
        }
        // Every warp parked at its first visible instruction (fold::park), where the model does
        // not depend on which units have stepped: the persistent sets' models.
        let mut stepped0 = UnitSet::EMPTY;
        if por == Por::Persistent && limits.folding == Folding::Invisible {
            match fold::park(&mut init, true, Some(&units), &mut initial_choices) {
                Ok(s) => stepped0 = s,
                Err(e) => return Err(Refused::new(&initial_choices, init.steps(), e).into()),
            }
        }
        let label0 = init.state_fingerprint();
        let key0 = if symmetric {
            init.symmetric_fingerprint()
        } else {
            label0
        };
        let order0 = symmetric.then(|| init.canonical_block_order().into_boxed_slice());
        let info = state_info(&init, &units, observe);
        let mut search = Search {
            memory_units: units.memory_units(),
            how: How {
                folding: limits.folding,
                units,
                fold_fences_and_exits: por == Por::Persistent,
                escaped: (settled
                    && por == Por::Persistent
                    && limits.folding == Folding::Invisible
                    && machine.performs_accesses_at_once())
                .then(Arc::default),
                futures: (por == Por::Persistent && machine.performs_accesses_at_once())
                    .then(|| Arc::new(init.future_footprints())),
            },
            limits,
            observe,
            initial: Box::new(init),
            initial_choices,
            states: IdTable::default(),
            recs: Vec::new(),
            outcomes: FingerprintMap::default(),
            kept: FingerprintMap::default(),
            ready: FingerprintMap::default(),
            graph: DiGraph::default(),
            index: IdTable::default(),
            edge_choice: Vec::new(),
            parent: Vec::new(),
            succ_arena: Vec::new(),
            fresh: Vec::new(),
            fresh_for: NONE,
            bound_hit: None,
            por,
            reduced_states: 0,
            symmetric,
            node_state: Vec::new(),
            orders: Vec::new(),
            maps: Vec::new(),
        };
        let done0 = info.done;
        search.insert_state(key0, label0, info, order0, (NONE, NONE));
        let root = search.graph.add_node(Node {
            state: label0,
            stepped: stepped0,
            done: done0,
            enabled: UnitSet::EMPTY,
        });
        search.parent.push((NONE, NONE));
        search.node_state.push(0);
        search
            .index
            .insert_new(&(0, UnitSet::EMPTY), root.index() as u32, |_| {
                (0, UnitSet::EMPTY)
            });
        Ok(search)
    }

    /// The state of node `n`.
    fn id_of(&self, n: NodeId) -> StateId {
        self.node_state.get(n.index()).copied().unwrap_or(NONE)
    }

    /// Enters a state found for the first time, reached by transaction `origin`, explored
    /// through the machine with fingerprint `label` (and, under symmetry, canonical block
    /// order `order`).
    fn insert_state(
        &mut self,
        key: StateKey,
        label: StateKey,
        info: StateInfo,
        order: Option<Box<[u32]>>,
        origin: (StateId, ChoiceIndex),
    ) {
        let id = self.recs.len() as StateId;
        let terminal = info.outcome.is_some();
        if let Some(o) = info.outcome {
            self.outcomes.insert(id, o);
        }
        if self.symmetric {
            self.orders.push(order.unwrap_or_default());
        }
        self.recs.push(StateRec {
            key,
            label,
            done: info.done,
            pruned: UnitSet::EMPTY,
            // Terminal states have no successors: expanded at once.
            succ_start: if terminal { 0 } else { NONE },
            succ_len: 0,
            origin,
        });
        let recs = &self.recs;
        self.states.insert_new(&key, id, |i| recs[i as usize].key);
    }

    /// The successors of the machine states of the nodes `chunk` not expanded yet, on the
    /// `pool`'s threads when there is one (phase 1: a pure function of each machine, rebuilt
    /// from its origin's).
    fn expand_chunk(
        &mut self,
        chunk: std::ops::Range<usize>,
        pool: Option<&rayon::ThreadPool>,
    ) -> FingerprintMap<StateId, Result<(Box<Machine>, Expansion), Failed>> {
        let mut work: Vec<(StateId, Option<Box<Machine>>)> = Vec::new();
        for n in chunk {
            let id = self.id_of(NodeIndex::new(n));
            if self
                .recs
                .get(id as usize)
                .is_some_and(|r| !r.expanded() && !work.iter().any(|w| w.0 == id))
            {
                work.push((id, self.ready.remove(&id)));
            }
        }
        let (how, observe, states, recs, kept, initial, por, symmetric) = (
            &self.how,
            self.observe,
            &self.states,
            &self.recs,
            &self.kept,
            &*self.initial,
            self.por,
            self.symmetric,
        );
        let expand_one = |(id, ready): (StateId, Option<Box<Machine>>)| {
            let rec = &recs[id as usize];
            let machine = match ready {
                Some(m) => Ok(m),
                None => rebuild(rec, recs, kept, initial, how),
            };
            (
                id,
                machine.and_then(|m| {
                    let known = |k: &StateKey| states.contains(k, |i| recs[i as usize].key);
                    let e = expand(&m, rec.label, por, how, observe, &known, symmetric)?;
                    Ok((m, e))
                }),
            )
        };
        match pool {
            Some(pool) => pool.install(|| work.into_par_iter().map(expand_one).collect()),
            None => work.into_iter().map(expand_one).collect(),
        }
    }

    /// Enters the successors of node `from`'s machine state `id` into the arenas (phase 2),
    /// and the new states among them into the state table. A refused enabled choice is a
    /// cudasem bug, never skipped (a skipped choice would hide states and make the verdict
    /// wrong).
    fn record(
        &mut self,
        from: NodeId,
        id: StateId,
        result: Result<(Box<Machine>, Expansion), Failed>,
    ) -> Result<(), ExploreFailure> {
        let (machine, Expansion { list, sets }) = match result {
            Ok(r) => r,
            Err(failed) => {
                let mut prefix = self.path_to(from);
                prefix.extend_from_slice(&failed.taken);
                return Err(Refused::new(&prefix, failed.steps, failed.error).into());
            }
        };
        let key = self.recs[id as usize].key;
        // A persistent singleton: the first successor that may be explored alone and leads to
        // a state not known before (the cycle proviso, [`ample`]).
        let known = |k: &StateKey| self.states.contains(k, |i| self.recs[i as usize].key);
        let new_target = |e: &Expanded| e.to != key && !known(&e.to);
        let alone = list.iter().position(|e| e.alone && new_target(e));
        // Else the smallest persistent set over several warps whose every transaction leads to
        // a state not known before (the cycle proviso for sets, [`ample`]).
        let kept: Option<Vec<usize>> = match alone {
            Some(a) => Some(vec![a]),
            None => sets
                .into_iter()
                .find(|set| set.iter().all(|&i| list.get(i).is_some_and(new_target))),
        };
        let mut pruned = UnitSet::EMPTY;
        if kept.is_some() {
            self.reduced_states += 1;
        }
        let succ_start = self.succ_arena.len();
        // The new non-terminal successors, with their machines.
        let mut new: Vec<(StateId, Option<Box<Machine>>)> = Vec::new();
        for (i, e) in list.into_iter().enumerate() {
            if kept.as_ref().is_some_and(|k| !k.contains(&i)) {
                pruned = pruned.union(e.units);
                continue;
            }
            // The first machine found with a fingerprint is the one explored: its state's
            // origin is this transaction.
            let mut map = NONE;
            let recs = &self.recs;
            let to = match (self.states.get(&e.to, |i| recs[i as usize].key), e.info) {
                (Some(to), _) => {
                    // Under symmetry, a machine other than the representative: the edge is
                    // not exact, and the permutation renames its units ([`symmetry`]).
                    if self.recs[to as usize].label != e.label {
                        let blocks = self.how.units.blocks();
                        map = self.maps.len() as u32;
                        self.maps.push(symmetry::block_map(
                            e.order.as_deref().unwrap_or_default(),
                            &self.orders[to as usize],
                            blocks,
                        ));
                    }
                    to
                }
                (None, Some(info)) => {
                    let terminal = info.outcome.is_some();
                    self.insert_state(e.to, e.label, info, e.order, (id, e.choice));
                    let to = (self.recs.len() - 1) as StateId;
                    if !terminal {
                        new.push((to, e.machine));
                    }
                    to
                }
                // Unknown before the chunk, so its information came with it.
                (None, None) => continue,
            };
            self.succ_arena.push(Succ {
                units: e.units,
                to,
                choice: e.choice,
                map,
            });
        }
        let count = (self.succ_arena.len() - succ_start) as u32;
        // Successors are read back from the graph (the edges of `from`, which `add_edges`
        // draws next) unless the graph cannot say them: under symmetry (an edge's block
        // permutation) or when a successor steps no unit (its edge is charged to another).
        let in_arena = self.symmetric
            || self.succ_arena[succ_start..]
                .iter()
                .any(|s| s.units.is_empty());
        let rec = &mut self.recs[id as usize];
        if in_arena {
            rec.succ_start = succ_start as u32;
            rec.succ_len = count | IN_ARENA;
        } else {
            rec.succ_start = from.index() as u32;
            rec.succ_len = count;
            self.fresh.clear();
            self.fresh.extend(self.succ_arena.drain(succ_start..));
            self.fresh_for = from.index() as u32;
        }
        rec.pruned = pruned;
        let origin = rec.origin.0;
        match new.len() {
            0 => {}
            // Its only new successor keeps its own machine: the same memory as keeping this
            // one, and no transaction to take again.
            1 => {
                if let Some((to, Some(m))) = new.pop() {
                    self.ready.insert(to, m);
                } else {
                    self.kept.insert(
                        id,
                        Kept {
                            machine,
                            pending: 1,
                        },
                    );
                }
            }
            n => {
                self.kept.insert(
                    id,
                    Kept {
                        machine,
                        pending: n as u32,
                    },
                );
            }
        }
        // One state fewer waits for the origin's machine.
        if let Entry::Occupied(mut k) = self.kept.entry(origin) {
            k.get_mut().pending = k.get().pending.saturating_sub(1);
            if k.get().pending == 0 {
                k.remove();
            }
        }
        Ok(())
    }

    /// The edges out of node `from` (state `id`), one per successor and unit it steps, to the
    /// nodes (machine state × stepped units) they reach, new ones appended; stops at the node
    /// bound.
    fn add_edges(&mut self, from: NodeId, id: StateId) {
        let mut succ = std::mem::take(&mut self.fresh);
        if self.fresh_for != from.index() as u32 {
            self.successors(id, &mut succ);
        }
        self.fresh_for = NONE;
        self.add_edges_to(from, id, &succ);
        self.fresh = succ;
    }

    /// The successors of state `id` (expanded), as [`Search::record`] entered them: from the
    /// arena, or from the edges of the node it was expanded at, one per unit, in the order
    /// they were drawn (a successor's edges next to each other, with its transaction).
    fn successors(&self, id: StateId, out: &mut Vec<Succ>) {
        out.clear();
        let Some(rec) = self.recs.get(id as usize).filter(|r| r.expanded()) else {
            return;
        };
        let start = rec.succ_start as usize;
        let count = (rec.succ_len & !IN_ARENA) as usize;
        if rec.succ_len & IN_ARENA != 0 || count == 0 {
            out.extend_from_slice(&self.succ_arena[start..start + count]);
            return;
        }
        let mut edges: Vec<(usize, usize, Unit)> = self
            .graph
            .edges(NodeIndex::new(start))
            .map(|e| {
                use petgraph::visit::EdgeRef;
                (e.id().index(), e.target().index(), *e.weight())
            })
            .collect();
        edges.sort_unstable_by_key(|e| e.0);
        for (edge, target, unit) in edges {
            let choice = self.edge_choice[edge];
            match out.last_mut() {
                Some(last) if last.choice == choice => last.units = last.units.with(unit),
                _ => out.push(Succ {
                    units: UnitSet::single(unit),
                    to: self.node_state[target],
                    choice,
                    map: NONE,
                }),
            }
        }
    }

    /// [`Search::add_edges`] with the state's successors `succ`.
    fn add_edges_to(&mut self, from: NodeId, id: StateId, succ: &[Succ]) {
        let Search {
            how,
            memory_units,
            limits,
            recs,
            graph,
            index,
            edge_choice,
            parent,
            bound_hit,
            node_state,
            maps,
            ..
        } = self;
        let Some(rec) = recs.get(id as usize) else {
            return;
        };
        let stepped = graph[from].stepped;
        // Units whose transitions a persistent set left out are enabled here all the same.
        let mut enabled_units = rec.pruned;
        for s in succ {
            let to = &recs[s.to as usize];
            // The memory system's steps make no program unit have stepped.
            let mut to_stepped = stepped.union(s.units.difference(*memory_units));
            // Named as in the target's representative ([`symmetry`], "Nodes and `stepped`").
            if let Some(map) = maps.get(s.map as usize) {
                to_stepped = how.units.rename_blocks(to_stepped, map);
            }
            let key = (s.to, to_stepped);
            let to_node = match index.get(&key, |n| node_key(graph, node_state, n)) {
                Some(n) => NodeIndex::new(n as usize),
                None => {
                    if graph.node_count() >= limits.max_states {
                        *bound_hit = Some(Bound::States(limits.max_states));
                        break;
                    }
                    let n = graph.add_node(Node {
                        state: to.label,
                        stepped: to_stepped,
                        done: to.done,
                        enabled: UnitSet::EMPTY,
                    });
                    parent.push((from.index() as u32, s.choice));
                    node_state.push(s.to);
                    index.insert_new(&key, n.index() as u32, |n| node_key(graph, node_state, n));
                    n
                }
            };
            // Every enabled choice steps at least one unit (memory choices the issuing unit
            // or the memory system, [`units`]); should one step none, charge the lowest
            // live unit rather than lose the transition.
            let labels = if s.units.is_empty() {
                graph[from]
                    .live(how.units.graph_units())
                    .min()
                    .map_or(UnitSet::EMPTY, UnitSet::single)
            } else {
                s.units
            };
            for u in labels.iter() {
                enabled_units = enabled_units.with(u);
                graph.add_edge(from, to_node, u);
                edge_choice.push(s.choice);
            }
        }
        graph[from].enabled = enabled_units;
    }

    /// The choices of the breadth-first path from the initial machine to node `n`; under
    /// symmetry, of the chain of transactions that first reached its state, which ends on the
    /// state's representative itself (a node's parent edge may not be exact).
    fn path_to(&self, n: NodeId) -> Vec<Choice> {
        if self.symmetric {
            let chain = origin_chain(self.id_of(n), |id| {
                let r = &self.recs[id as usize];
                (r.label, r.origin)
            });
            return self.how.replay(&self.initial, &self.initial_choices, chain);
        }
        path_to(
            n,
            &self.graph,
            &self.parent,
            &self.how,
            &self.initial,
            &self.initial_choices,
        )
    }

    /// The exploration: outcomes are the terminal states in breadth-first order, each with
    /// the shortest run that reaches it.
    fn finish(self) -> Exploration {
        let mut outcomes: BTreeMap<Outcome, OutcomeInfo> = BTreeMap::new();
        let mut counted: FingerprintMap<StateId, ()> = FingerprintMap::default();
        for n in self.graph.node_indices() {
            let id = self.id_of(n);
            let Some(o) = self.outcomes.get(&id) else {
                continue;
            };
            if counted.insert(id, ()).is_some() {
                continue;
            }
            let e = outcomes.entry(o.clone()).or_insert_with(|| OutcomeInfo {
                states: 0,
                witness: self.path_to(n),
            });
            e.states += 1;
        }
        let symmetry = match (self.symmetric, self.bound_hit) {
            (false, _) => SymmetryUse::Off,
            // A search cut short gives no verdict: no cycle to trust.
            (true, Some(_)) => SymmetryUse::Applied,
            (true, None) => {
                let edges = self.recs.iter().enumerate().flat_map(|(id, r)| {
                    let succ: &[Succ] = if r.expanded() {
                        let start = r.succ_start as usize;
                        // Under symmetry every state's successors are in the arena.
                        &self.succ_arena[start..start + (r.succ_len & !IN_ARENA) as usize]
                    } else {
                        &[]
                    };
                    succ.iter().map(move |s| (id as u32, s.to, s.map == NONE))
                });
                if symmetry::cycles_are_exact(self.recs.len(), edges) {
                    SymmetryUse::Applied
                } else {
                    SymmetryUse::FellBack
                }
            }
        };
        let (node_state, origins) = if self.symmetric {
            let origins = self.recs.iter().map(|r| (r.label, r.origin)).collect();
            (self.node_state, origins)
        } else {
            (Vec::new(), Vec::new())
        };
        let settled_loads = match &self.how.escaped {
            None => SettledLoads::Off,
            Some(escaped) if escaped.load(Ordering::Relaxed) => SettledLoads::FellBack,
            Some(_) => SettledLoads::Applied,
        };
        let lts = Lts {
            units: self.how.units.graph_units(),
            owed: self.how.units.op_units(),
            graph: self.graph,
        };
        Exploration {
            units: self.how.units.clone(),
            oracle: Oracle::new(lts),
            edge_choice: self.edge_choice,
            initial: self.initial,
            how: self.how,
            initial_choices: self.initial_choices,
            outcomes,
            machine_states: self.recs.len(),
            bound_hit: self.bound_hit,
            limits: self.limits,
            por: self.por,
            reduced_states: self.reduced_states,
            symmetry,
            settled_loads,
            node_state,
            origins,
        }
    }
}

/// The transactions from the initial state to state `id` along the states' origins (`rec`
/// gives a state's label and origin), as (state label, transaction) pairs.
fn origin_chain(
    mut id: StateId,
    rec: impl Fn(StateId) -> (StateKey, (StateId, ChoiceIndex)),
) -> Vec<(StateKey, ChoiceIndex)> {
    let mut chain = Vec::new();
    while id != NONE {
        let (_, (origin, index)) = rec(id);
        if origin == NONE {
            break;
        }
        chain.push((rec(origin).0, index));
        id = origin;
    }
    chain.reverse();
    chain
}

/// The machine of state `rec`: the initial machine, or its origin's with the origin's
/// transaction taken again (the same machine the search found it with: the steps are
/// deterministic).
fn rebuild(
    rec: &StateRec,
    recs: &[StateRec],
    kept: &FingerprintMap<StateId, Kept>,
    initial: &Machine,
    how: &How,
) -> Result<Box<Machine>, Failed> {
    let (origin, index) = rec.origin;
    if origin == NONE {
        return Ok(Box::new(initial.clone()));
    }
    let from = &recs[origin as usize];
    let mut m = match kept.get(&origin) {
        Some(k) => k.machine.clone(),
        // Kept until every state it is the origin of is expanded: only a bug loses it.
        None => {
            return Err(Failed {
                taken: Vec::new(),
                steps: 0,
                error: semantics::machine::StepError {
                    choice: Choice::Warp { block: 0, warp: 0 },
                    message:
                        "the search lost the machine of a state not expanded yet (a cudasem bug)"
                            .to_string(),
                },
            });
        }
    };
    let mut taken = Vec::new();
    match how.retake(&mut m, from.label, index, &mut taken) {
        Ok(()) => Ok(m),
        Err(error) => Err(Failed {
            taken,
            steps: m.steps(),
            error,
        }),
    }
}

/// Nodes whose successors are computed together when `jobs` > 1. Any size gives the same
/// result; this one keeps enough work per thread and bounds the machines alive at once.
const CHUNK: usize = 512;

/// The worker threads of a search: `None` runs on the calling thread (`jobs` = 1, or the
/// threads could not be started: the result is the same, only slower). `jobs` = 0 asks for
/// rayon's default (one per core).
pub(crate) fn worker_pool(jobs: usize) -> Option<rayon::ThreadPool> {
    if jobs == 1 {
        return None;
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .ok()
}

/// What a search learns of a machine state when it first finds it (the machine itself is
/// not kept: [`Kept`]).
#[derive(Debug, Clone)]
struct StateInfo {
    done: UnitSet,
    /// The final outcome, for terminal states.
    outcome: Option<Outcome>,
}

/// The node information of a machine state reached for the first time.
fn state_info(m: &Machine, units: &Units, observe: &Observe) -> StateInfo {
    match m.termination() {
        Some(t) => {
            let outcome = Outcome::of(m, t, observe);
            // A fault ends the run: not a non-termination, so its units count as done.
            let done = if matches!(outcome.status, Status::Error { .. }) {
                UnitSet::all(units.graph_units())
            } else {
                units.done(m)
            };
            StateInfo {
                done,
                outcome: Some(outcome),
            }
        }
        None => StateInfo {
            done: units.done(m),
            outcome: None,
        },
    }
}

/// One successor of a machine state, as computed by [`expand`].
struct Expanded {
    units: UnitSet,
    /// Its transaction: the index of its first choice in the state's enabled list.
    choice: ChoiceIndex,
    to: StateKey,
    /// Its machine's fingerprint (`to` without symmetry).
    label: StateKey,
    /// Under symmetry, its machine's canonical block order.
    order: Option<Box<[u32]>>,
    /// The successor's node information, unless its state was known before the chunk.
    info: Option<StateInfo>,
    /// Its transaction may be explored alone (`ample::Candidate::alone`; the cycle proviso is
    /// checked when it is recorded).
    alone: bool,
    /// The successor's machine when its state was not known before the chunk and is not
    /// terminal: kept if it turns out to be its origin's only new successor.
    machine: Option<Box<Machine>>,
}

/// The unknown non-terminal successors of a state seen so far in [`expand`]: none, one (its
/// index in the list, its key and machine), or several distinct ones.
#[allow(clippy::large_enum_variant)] // one, on the stack of one expansion: boxing is the cost saved
enum Single {
    None,
    One(usize, StateKey, Machine),
    Many,
}

/// The successors of one machine state.
struct Expansion {
    list: Vec<Expanded>,
    /// The persistent sets over several warps ([`ample::persistent_sets`]), as indices into
    /// `list`, smallest first.
    sets: Vec<Vec<usize>>,
}

/// A step the machine refused while expanding a state: the choices of the transaction up to
/// it, the machine's step count and the error.
struct Failed {
    taken: Vec<Choice>,
    steps: u64,
    error: semantics::machine::StepError,
}

/// The successors of machine state `key` (the machine's fingerprint), one per enabled choice
/// in the machine's order (a pure function of the machine: threads may compute them in any
/// order). `known` is only read, to skip the information of states already recorded. Under
/// `symmetric`, the successors' keys are their fingerprints up to a permutation of the blocks.
fn expand(
    m: &Machine,
    key: StateKey,
    por: Por,
    how: &How,
    observe: &Observe,
    known: &dyn Fn(&StateKey) -> bool,
    symmetric: bool,
) -> Result<Expansion, Failed> {
    let enabled: Vec<Choice> = branches(m);
    let mut out = Vec::with_capacity(enabled.len());
    let mut taken = Vec::new();
    // Persistent sets over several warps need every transaction's footprint.
    let futures = how.futures.as_deref().filter(|_| {
        por == Por::Persistent
            && enabled.len() > 1
            && !enabled.iter().any(is_system)
            && m.every_block_issued()
    });
    // Under cached memory, the sets of a block or a warp from the places its choices touch
    // ([`dependence::block_persistent_sets`]): they need every transaction's footprint too.
    let cached_sets =
        por == Por::Persistent && enabled.len() > 1 && dependence::may_have_block_sets(m, &enabled);
    let mut judged = Vec::new();
    // A successor's machine is kept only when it is its origin's one new successor
    // ([`Search::record`]). With two distinct unknown successors here, at most one of them can
    // turn out the only new one (when states recorded before this one found the others), and
    // the search then keeps this state's machine instead: so only a lone unknown successor's
    // machine goes back, and the others are freed here, on the thread that allocated them
    // (the allocator's cheap path), without boxing them (a machine is some 1.3 KB).
    let mut single = Single::None;
    for c in &enabled {
        let u = how.units.of(m, c);
        // Every choice is judged: which one is the persistent singleton is decided when the
        // successors are recorded, in node order, whatever the number of threads.
        let candidate = (por == Por::Persistent && enabled.len() > 1)
            .then(|| ample::Candidate::of(m, &enabled, c))
            .flatten();
        let mut m2 = m.clone();
        taken.clear();
        let footprints = candidate.is_some() || futures.is_some() || cached_sets;
        let (fp, settled) = match how.take(&mut m2, c, key, footprints, &mut taken) {
            Ok(t) => t,
            Err(error) => {
                return Err(Failed {
                    taken,
                    steps: m2.steps(),
                    error,
                });
            }
        };
        let label = m2.state_fingerprint();
        let (to, order) = if symmetric {
            let order = m2.canonical_block_order().into_boxed_slice();
            (m2.symmetric_fingerprint(), Some(order))
        } else {
            (label, None)
        };
        let alone = candidate.is_some_and(|cand| cand.alone(fp, &m2, settled));
        if futures.is_some() || cached_sets {
            judged.push(ample::Judged::of(fp, &m2, settled));
        }
        let info = (!known(&to)).then(|| state_info(&m2, &how.units, observe));
        if info.as_ref().is_some_and(|i| i.outcome.is_none()) {
            single = match single {
                Single::None => Single::One(out.len(), to, m2),
                Single::One(i, first, m) if first == to => Single::One(i, first, m),
                _ => Single::Many,
            };
        }
        out.push(Expanded {
            units: u,
            choice: rank(&enabled, c),
            to,
            label,
            order,
            info,
            alone,
            machine: None,
        });
    }
    if let Single::One(i, _, m) = single {
        out[i].machine = Some(Box::new(m));
    }
    let sets = match futures {
        Some(f) => ample::persistent_sets(m, f, &enabled, &judged),
        None if cached_sets => {
            let mut sets = dependence::block_persistent_sets(m, &enabled, &judged);
            // Only sets that cannot hide a run in which an operation starves
            // ([`dependence`], "Fairness").
            sets.retain(|set| {
                dependence::fair_to_operations(m, &how.units, &enabled, &judged, set)
            });
            sets
        }
        None => Vec::new(),
    };
    Ok(Expansion { list: out, sets })
}

/// The choices of the breadth-first path from the initial machine to node `n` of `graph`
/// (`parent` per node), each transaction taken again ([`How::replay`]).
fn path_to(
    n: NodeId,
    graph: &DiGraph<Node<StateKey>, Unit, u32>,
    parent: &[(u32, ChoiceIndex)],
    how: &How,
    initial: &Machine,
    initial_choices: &[Choice],
) -> Vec<Choice> {
    let mut path = Vec::new();
    let mut cur = n.index();
    while let Some(&(p, index)) = parent.get(cur)
        && p != NONE
    {
        path.push((graph[NodeIndex::new(p as usize)].state, index));
        cur = p as usize;
    }
    path.reverse();
    how.replay(initial, initial_choices, path)
}

impl Exploration {
    /// Nodes of the LTS (machine state × stepped units).
    pub fn states(&self) -> usize {
        self.oracle.lts().state_count()
    }

    pub fn transitions(&self) -> usize {
        self.oracle.lts().edge_count()
    }

    pub fn oracle(&self) -> &Oracle<StateKey> {
        &self.oracle
    }

    /// The verdict under `model`; `None` when a bound cut the exploration, or when its
    /// reductions do not preserve `model`'s verdict ([`Por::preserves`],
    /// [`Symmetry::preserves`]).
    pub fn verdict(&self, model: ProgressModel) -> Option<Verdict> {
        self.decides(model).then(|| self.oracle.verdict(model))
    }

    /// Whether the search decides `model`: complete, and reduced only in ways that preserve
    /// its verdict.
    fn decides(&self, model: ProgressModel) -> bool {
        self.bound_hit.is_none()
            && self.por.preserves(model)
            && (!self.symmetry.applied() || Symmetry::Blocks.preserves(model))
    }

    /// A lasso when `model`'s verdict is FAIL (never when bounded out).
    pub fn lasso(&self, model: ProgressModel) -> Option<Lasso> {
        if !self.decides(model) {
            return None;
        }
        let cx: Counterexample = self.oracle.counterexample(model)?;
        // The stem starts at the initial node and the cycle where the stem ends: one replay
        // takes both, each transaction again from the state it leaves.
        let g = &self.oracle.lts().graph;
        let path = |ts: &[Transition]| -> Vec<(StateKey, ChoiceIndex)> {
            ts.iter()
                .map(|t| (g[t.from].state, self.choice_of(t)))
                .collect()
        };
        let mut m = (*self.initial).clone();
        let mut stem = self.initial_choices.clone();
        if self.symmetry.applied() {
            // The chain of first transactions to the cycle's state: it ends on the state's
            // representative itself, where the cycle's exact edges start ([`symmetry`]).
            let start = cx
                .cycle
                .first()
                .map(|t| t.from)
                .or_else(|| cx.stem.last().map(|t| t.to))
                .map_or(0, |n| n.index());
            let id = self.node_state.get(start).copied().unwrap_or(NONE);
            let chain = origin_chain(id, |id| self.origins[id as usize]);
            self.how.replay_from(&mut m, chain, &mut stem);
        } else {
            self.how.replay_from(&mut m, path(&cx.stem), &mut stem);
        }
        let mut cycle = Vec::new();
        self.how.replay_from(&mut m, path(&cx.cycle), &mut cycle);
        let stepping = cx.cycle.iter().fold(UnitSet::EMPTY, |s, t| s.with(t.unit));
        Some(Lasso {
            model,
            stem,
            cycle,
            reason: cx.reason,
            stepping,
        })
    }

    /// The transaction of the edge `t` stands for.
    fn choice_of(&self, t: &Transition) -> ChoiceIndex {
        let g = &self.oracle.lts().graph;
        g.edges_connecting(t.from, t.to)
            .find(|e| *e.weight() == t.unit)
            .and_then(|e| {
                self.edge_choice
                    .get(petgraph::visit::EdgeRef::id(&e).index())
                    .copied()
            })
            .unwrap_or(NONE)
    }
}
