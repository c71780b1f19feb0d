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
//!   reached with; a machine is kept only until its successors are known.
//! * Terminal states: completed runs and faults are final outcomes (a fault is not a
//!   non-termination: its units count as done); a deadlock is an outcome *and* a
//!   non-termination under every model (the oracle's deadlock rule).
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
pub mod coverage;
pub mod dfs;
pub mod dpor;
pub mod fold;
pub mod keyed;
pub mod policy;
pub mod progress;
pub mod split;
pub mod units;

pub use ample::Por;
pub use fold::{Folding, UnknownFolding};

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

/// The choices of one successor: a range of the exploration's choice arena (one list per
/// successor, shared by every edge that stands for it; no allocation per successor).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ChoiceRange {
    start: u32,
    len: u32,
}

impl ChoiceRange {
    fn of(arena: &[Choice], range: ChoiceRange) -> &[Choice] {
        let start = range.start as usize;
        arena
            .get(start..start + range.len as usize)
            .unwrap_or_default()
    }
}

/// What one enabled choice of a machine state leads to.
#[derive(Debug, Clone)]
struct Succ {
    units: UnitSet,
    /// The choice, then the system choices folded after it.
    choices: ChoiceRange,
    to: StateKey,
}

/// The successors of one machine state: a range of the exploration's successor arena (no
/// list per state).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SuccRange {
    start: u32,
    len: u32,
}

/// Per distinct machine state.
#[derive(Debug, Clone, Default)]
struct StateInfo {
    /// Present until the successors are computed. Boxed: the map stays small (a machine is
    /// large, and the map moves its entries as it grows).
    machine: Option<Box<Machine>>,
    /// The successors, a range of the successor arena, once computed.
    succ: Option<SuccRange>,
    done: UnitSet,
    /// The final outcome, for terminal states.
    outcome: Option<Outcome>,
    /// The units of the successors a persistent set left out ([`Por::Persistent`]): still
    /// enabled here, for the progress models.
    pruned: UnitSet,
}

/// A reachable final outcome and where it was first found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutcomeInfo {
    /// Distinct terminal machine states with this outcome.
    pub states: usize,
    /// The choices that reach it first (breadth-first: a shortest run).
    pub witness: Vec<Choice>,
}

/// The result of building the state graph.
#[derive(Debug, Clone)]
pub struct Exploration {
    pub units: Units,
    oracle: Oracle<StateKey>,
    /// Per edge index: the choices it stands for.
    edge_choices: Vec<ChoiceRange>,
    /// Every successor's choices, back to back.
    choice_arena: Vec<Choice>,
    /// System choices folded before the initial node.
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
    let mut search = Search::start(machine, level, observe, limits, por)?;
    let pool = worker_pool(limits.jobs);
    let mut next = 0usize;
    'search: while next < search.graph.node_count() {
        // A chunk of consecutive nodes: the successors of its machine states are computed in
        // parallel (phase 1), then entered into the graph in node order (phase 2), exactly as
        // one node after the other would: the result does not depend on `jobs`.
        // On one thread, one node at a time: every state recorded so far is known to `expand`,
        // which then drops every known successor's machine at once.
        let size = if pool.is_some() { CHUNK } else { 1 };
        let chunk = next..search.graph.node_count().min(next + size);
        let mut expanded = search.expand_chunk(chunk.clone(), pool.as_ref());
        for n in chunk {
            if stop.requested() {
                search.bound_hit = Some(Bound::Time);
                break 'search;
            }
            let from = NodeIndex::new(n);
            next = n + 1;
            // Successors of the machine state, computed once.
            if let Some(result) = expanded.remove(&search.graph[from].state) {
                search.record(from, result)?;
            }
            search.add_edges(from);
            if search.bound_hit.is_some() {
                break 'search;
            }
        }
    }
    Ok(search.finish())
}

/// The stateful search under way: the state graph built so far and what it needs to grow.
struct Search<'o> {
    units: Units,
    /// The memory system's units: their steps make no program unit have stepped.
    memory_units: UnitSet,
    limits: Limits,
    observe: &'o Observe,
    /// System choices folded before the initial node.
    initial_choices: Vec<Choice>,
    states: FingerprintMap<StateKey, StateInfo>,
    graph: DiGraph<Node<StateKey>, Unit, u32>,
    index: FingerprintMap<(StateKey, UnitSet), NodeId>,
    /// Per edge: the choices it stands for.
    edge_choices: Vec<ChoiceRange>,
    choice_arena: Vec<Choice>,
    /// Breadth-first parents, to name a witness for each outcome.
    parent: Vec<Option<(NodeId, ChoiceRange)>>,
    /// Every state's successors, back to back.
    succ_arena: Vec<Succ>,
    bound_hit: Option<Bound>,
    por: Por,
    reduced_states: usize,
}

impl<'o> Search<'o> {
    /// The graph of the initial node alone: `machine`, settled.
    fn start(
        machine: &Machine,
        level: Level,
        observe: &'o Observe,
        limits: Limits,
        por: Por,
    ) -> Result<Search<'o>, ExploreFailure> {
        let units = Units::new(machine, level)?;
        let mut init = machine.clone();
        let mut initial_choices = Vec::new();
        if let Err(e) = settle(&mut init, &mut initial_choices) {
            return Err(Refused::new(&initial_choices, init.steps(), e).into());
        }
        let mut search = Search {
            memory_units: units.memory_units(),
            units,
            limits,
            observe,
            initial_choices,
            states: FingerprintMap::default(),
            graph: DiGraph::default(),
            index: FingerprintMap::default(),
            edge_choices: Vec::new(),
            choice_arena: Vec::new(),
            parent: Vec::new(),
            succ_arena: Vec::new(),
            bound_hit: None,
            por,
            reduced_states: 0,
        };
        let key0 = init.state_fingerprint();
        let info = state_info(init, &search.units, observe);
        let done0 = info.done;
        search.states.insert(key0, info);
        let root = search.graph.add_node(Node {
            state: key0,
            stepped: UnitSet::EMPTY,
            done: done0,
            enabled: UnitSet::EMPTY,
        });
        search.parent.push(None);
        search.index.insert((key0, UnitSet::EMPTY), root);
        Ok(search)
    }

    /// The successors of the machine states of the nodes `chunk` not expanded yet, on the
    /// `pool`'s threads when there is one (phase 1: a pure function of each machine).
    fn expand_chunk(
        &mut self,
        chunk: std::ops::Range<usize>,
        pool: Option<&rayon::ThreadPool>,
    ) -> FingerprintMap<StateKey, Result<Expansion, Failed>> {
        let mut work: Vec<(StateKey, Box<Machine>)> = Vec::new();
        for n in chunk {
            let key = self.graph[NodeIndex::new(n)].state;
            if let Some(s) = self.states.get_mut(&key)
                && s.succ.is_none()
                && let Some(m) = s.machine.take()
            {
                work.push((key, m));
            }
        }
        let (folding, units, observe, states, por) = (
            self.limits.folding,
            &self.units,
            self.observe,
            &self.states,
            self.por,
        );
        let expand_one = |(key, m): (StateKey, Box<Machine>)| {
            (key, expand(m, key, folding, por, units, observe, states))
        };
        match pool {
            Some(pool) => pool.install(|| work.into_par_iter().map(expand_one).collect()),
            None => work.into_iter().map(expand_one).collect(),
        }
    }

    /// Enters the successors of node `from`'s machine state into the arenas (phase 2), and
    /// the new states among them into the state map. A refused enabled choice is a cudasem
    /// bug, never skipped (a skipped choice would hide states and make the verdict wrong).
    fn record(
        &mut self,
        from: NodeId,
        result: Result<Expansion, Failed>,
    ) -> Result<(), ExploreFailure> {
        let key = self.graph[from].state;
        let list = match result {
            Ok(list) => list,
            Err(failed) => {
                let mut prefix = path_to(
                    from,
                    &self.parent,
                    &self.initial_choices,
                    &self.choice_arena,
                );
                prefix.extend_from_slice(&failed.taken);
                return Err(Refused::new(&prefix, failed.steps, failed.error).into());
            }
        };
        let succ_start = self.succ_arena.len();
        let base = self.choice_arena.len();
        self.choice_arena.extend_from_slice(&list.choices);
        // A persistent singleton: the first successor that may be explored alone and leads to
        // a state not known before (the cycle proviso, [`ample`]).
        let alone = list
            .succ
            .iter()
            .position(|e| e.alone && e.to != key && !self.states.contains_key(&e.to));
        let mut pruned = UnitSet::EMPTY;
        if alone.is_some() {
            self.reduced_states += 1;
        }
        for (i, e) in list.succ.into_iter().enumerate() {
            if alone.is_some_and(|a| a != i) {
                pruned = pruned.union(e.units);
                continue;
            }
            let choices = ChoiceRange {
                start: (base + e.choices.start) as u32,
                len: e.choices.len() as u32,
            };
            self.succ_arena.push(Succ {
                units: e.units,
                choices,
                to: e.to,
            });
            // The first machine found with a fingerprint is the one kept.
            if let Some(info) = e.info
                && !self.states.contains_key(&e.to)
            {
                self.states.insert(e.to, info);
            }
        }
        if let Some(s) = self.states.get_mut(&key) {
            s.succ = Some(SuccRange {
                start: succ_start as u32,
                len: (self.succ_arena.len() - succ_start) as u32,
            });
            s.pruned = pruned;
        }
        Ok(())
    }

    /// The edges out of node `from`, one per successor and unit it steps, to the nodes
    /// (machine state × stepped units) they reach, new ones appended; stops at the node bound.
    fn add_edges(&mut self, from: NodeId) {
        let Search {
            units,
            memory_units,
            limits,
            states,
            graph,
            index,
            edge_choices,
            parent,
            succ_arena,
            bound_hit,
            ..
        } = self;
        let (key, stepped) = (graph[from].state, graph[from].stepped);
        let succ = states.get(&key).and_then(|s| s.succ).map_or(&[][..], |r| {
            let start = r.start as usize;
            &succ_arena[start..start + r.len as usize]
        });
        // Units whose transitions a persistent set left out are enabled here all the same.
        let mut enabled_units = states.get(&key).map_or(UnitSet::EMPTY, |s| s.pruned);
        for s in succ {
            let to_done = states.get(&s.to).map_or(UnitSet::EMPTY, |i| i.done);
            // The memory system's steps make no program unit have stepped.
            let to_stepped = stepped.union(s.units.difference(*memory_units));
            let to_node = match index.entry((s.to, to_stepped)) {
                Entry::Occupied(e) => *e.get(),
                Entry::Vacant(e) => {
                    if graph.node_count() >= limits.max_states {
                        *bound_hit = Some(Bound::States(limits.max_states));
                        break;
                    }
                    let n = graph.add_node(Node {
                        state: s.to,
                        stepped: to_stepped,
                        done: to_done,
                        enabled: UnitSet::EMPTY,
                    });
                    e.insert(n);
                    parent.push(Some((from, s.choices)));
                    n
                }
            };
            // Every enabled choice steps at least one unit (memory choices the issuing unit
            // or the memory system, [`units`]); should one step none, charge the lowest
            // live unit rather than lose the transition.
            let labels = if s.units.is_empty() {
                graph[from]
                    .live(units.graph_units())
                    .min()
                    .map_or(UnitSet::EMPTY, UnitSet::single)
            } else {
                s.units
            };
            for u in labels.iter() {
                enabled_units = enabled_units.with(u);
                graph.add_edge(from, to_node, u);
                edge_choices.push(s.choices);
            }
        }
        graph[from].enabled = enabled_units;
    }

    /// The exploration: outcomes are the terminal states in breadth-first order, each with
    /// the shortest run that reaches it.
    fn finish(self) -> Exploration {
        let mut outcomes: BTreeMap<Outcome, OutcomeInfo> = BTreeMap::new();
        let mut counted: FingerprintMap<StateKey, ()> = FingerprintMap::default();
        for n in self.graph.node_indices() {
            let key = self.graph[n].state;
            let Some(o) = self.states.get(&key).and_then(|s| s.outcome.as_ref()) else {
                continue;
            };
            if counted.insert(key, ()).is_some() {
                continue;
            }
            let e = outcomes.entry(o.clone()).or_insert_with(|| OutcomeInfo {
                states: 0,
                witness: path_to(n, &self.parent, &self.initial_choices, &self.choice_arena),
            });
            e.states += 1;
        }
        let lts = Lts {
            units: self.units.graph_units(),
            owed: self.units.op_units(),
            graph: self.graph,
        };
        Exploration {
            units: self.units,
            oracle: Oracle::new(lts),
            edge_choices: self.edge_choices,
            choice_arena: self.choice_arena,
            initial_choices: self.initial_choices,
            outcomes,
            machine_states: self.states.len(),
            bound_hit: self.bound_hit,
            limits: self.limits,
            por: self.por,
            reduced_states: self.reduced_states,
        }
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

/// The node information of a machine state reached for the first time.
fn state_info(m: Machine, units: &Units, observe: &Observe) -> StateInfo {
    let mut info = StateInfo::default();
    match m.termination() {
        Some(t) => {
            let outcome = Outcome::of(&m, t, observe);
            // A fault ends the run: not a non-termination, so its units count as done.
            info.done = if matches!(outcome.status, Status::Error { .. }) {
                UnitSet::all(units.graph_units())
            } else {
                units.done(&m)
            };
            info.outcome = Some(outcome);
            info.succ = Some(SuccRange { start: 0, len: 0 });
        }
        None => {
            info.done = units.done(&m);
            info.machine = Some(Box::new(m));
        }
    }
    info
}

/// One successor of a machine state, as computed by [`expand`].
struct Expanded {
    units: UnitSet,
    /// The choice, then the invisible and system choices folded after it: a range of the
    /// expansion's own choice list ([`Expansion::choices`]).
    choices: std::ops::Range<usize>,
    to: StateKey,
    /// The successor's node information, unless its state was known before the chunk.
    info: Option<StateInfo>,
    /// Its transaction may be explored alone ([`ample::alone_ample`]; the cycle proviso is
    /// checked when it is recorded).
    alone: bool,
}

/// The successors of one machine state, their choices back to back (one allocation).
struct Expansion {
    choices: Vec<Choice>,
    succ: Vec<Expanded>,
}

/// A step the machine refused while expanding a state: the choices of the transaction up to
/// it, the machine's step count and the error.
struct Failed {
    taken: Vec<Choice>,
    steps: u64,
    error: semantics::machine::StepError,
}

/// The successors of machine state `key`, one per enabled choice in the machine's order (a
/// pure function of the machine: threads may compute them in any order). `known` is only
/// read, to drop at once the machines of states already recorded.
fn expand(
    m: Box<Machine>,
    key: StateKey,
    folding: Folding,
    por: Por,
    units: &Units,
    observe: &Observe,
    known: &FingerprintMap<StateKey, StateInfo>,
) -> Result<Expansion, Failed> {
    let enabled: Vec<Choice> = branches(&m);
    let mut out = Expansion {
        choices: Vec::new(),
        succ: Vec::with_capacity(enabled.len()),
    };
    let mut last = Some(m);
    for (i, c) in enabled.iter().enumerate() {
        let Some(m) = last.as_deref() else { break };
        let u = units.of(m, c);
        // Every choice is judged: which one is the persistent singleton is decided when the
        // successors are recorded, in node order, whatever the number of threads.
        let candidate = (por == Por::Persistent && enabled.len() > 1)
            .then(|| ample::Candidate::of(m, &enabled, c))
            .flatten();
        // The last child takes the parent's machine: one clone fewer per state.
        let mut m2 = if i + 1 == enabled.len() {
            match last.take() {
                Some(m) => *m,
                None => break,
            }
        } else {
            m.clone()
        };
        let start = out.choices.len();
        let folded = fold::step_folded(
            &mut m2,
            c,
            folding,
            Some(key),
            Some(units),
            candidate.is_some(),
            por == Por::Persistent,
            &mut out.choices,
        );
        let mut settled = false;
        let (fp, refused) = match folded {
            Ok(fp) => {
                let before = out.choices.len();
                let e = settle(&mut m2, &mut out.choices).err();
                settled = out.choices.len() > before;
                (fp, e)
            }
            Err(e) => (None, Some(e)),
        };
        if let Some(error) = refused {
            return Err(Failed {
                taken: out.choices.split_off(start),
                steps: m2.steps(),
                error,
            });
        }
        let to = m2.state_fingerprint();
        let alone = candidate.is_some_and(|cand| cand.alone(fp, &m2, settled));
        let info = (!known.contains_key(&to)).then(|| state_info(m2, units, observe));
        out.succ.push(Expanded {
            units: u,
            choices: start..out.choices.len(),
            to,
            info,
            alone,
        });
    }
    Ok(out)
}

/// The choices of the breadth-first path from the initial machine to node `n`.
fn path_to(
    n: NodeId,
    parent: &[Option<(NodeId, ChoiceRange)>],
    initial_choices: &[Choice],
    choice_arena: &[Choice],
) -> Vec<Choice> {
    let mut path = Vec::new();
    let mut cur = n;
    while let Some((p, list)) = parent[cur.index()] {
        path.push(list);
        cur = p;
    }
    let mut out = initial_choices.to_vec();
    for list in path.into_iter().rev() {
        out.extend_from_slice(ChoiceRange::of(choice_arena, list));
    }
    out
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
    /// reduction does not preserve `model`'s verdict ([`Por::preserves`]).
    pub fn verdict(&self, model: ProgressModel) -> Option<Verdict> {
        if self.bound_hit.is_some() || !self.por.preserves(model) {
            None
        } else {
            Some(self.oracle.verdict(model))
        }
    }

    /// A lasso when `model`'s verdict is FAIL (never when bounded out).
    pub fn lasso(&self, model: ProgressModel) -> Option<Lasso> {
        if self.bound_hit.is_some() || !self.por.preserves(model) {
            return None;
        }
        let cx: Counterexample = self.oracle.counterexample(model)?;
        let mut stem = self.initial_choices.clone();
        for t in &cx.stem {
            stem.extend_from_slice(self.choices_of(t));
        }
        let mut cycle = Vec::new();
        for t in &cx.cycle {
            cycle.extend_from_slice(self.choices_of(t));
        }
        let stepping = cx.cycle.iter().fold(UnitSet::EMPTY, |s, t| s.with(t.unit));
        Some(Lasso {
            model,
            stem,
            cycle,
            reason: cx.reason,
            stepping,
        })
    }

    /// The choices of the edge `t` stands for.
    fn choices_of(&self, t: &Transition) -> &[Choice] {
        let g = &self.oracle.lts().graph;
        g.edges_connecting(t.from, t.to)
            .find(|e| *e.weight() == t.unit)
            .and_then(|e| {
                self.edge_choices
                    .get(petgraph::visit::EdgeRef::id(&e).index())
            })
            .map_or(&[], |&range| ChoiceRange::of(&self.choice_arena, range))
    }
}
