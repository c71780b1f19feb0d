//! The labelled transition system a termination check runs on, and its explicit-state
//! construction from any system of units.
//!
//! Digest §4.1/§4.4: nodes are canonical machine states together with the progress models'
//! bookkeeping (who has stepped, who has terminated); every edge is one step of one unit. A
//! unit's termination is merged into its last step (digest §4.4: "either encoding is fine").
//! All 11 models read F off the same graph (F is a function of a node's `stepped`/`done`), so
//! one exploration serves every model.
//!
//! The seam for other machines is [`UnitSystem`]: the AXB interpreter implements it here; the
//! CUDA machine can implement it with CTAs, warps or lane groups as units and a canonical state
//! key without monotone counters (digest §7.2).

use super::units::{MAX_UNITS, Unit, UnitSet};
use petgraph::graph::{DiGraph, NodeIndex};
use scheduler::Stop;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::Hash;

/// A system of units whose interleavings a progress model constrains.
pub trait UnitSystem {
    /// A canonical state: two states that behave the same must be equal (no step counters).
    type State: Clone + Eq + Hash;

    /// The number of units, `0..n` (at most [`MAX_UNITS`]).
    fn unit_count(&self) -> usize;

    /// The initial state.
    fn initial(&self) -> Self::State;

    /// The units that have terminated in `state`. Must only grow along steps.
    fn done(&self, state: &Self::State) -> UnitSet;

    /// Pushes every `(unit, successor)` of `state` onto `out` (a unit may have several
    /// successors when its step is itself nondeterministic, none when it is blocked).
    fn successors(&self, state: &Self::State, out: &mut Vec<(Unit, Self::State)>);
}

/// A node of an [`Lts`] (an index into its graph).
pub type NodeId = NodeIndex<u32>;

/// A node of the LTS: a machine state plus the models' bookkeeping.
#[derive(Debug, Clone)]
pub struct Node<S> {
    pub state: S,
    /// Units that have taken at least one step on the way here.
    pub stepped: UnitSet,
    /// Units that have terminated.
    pub done: UnitSet,
    /// Units with at least one outgoing step.
    pub enabled: UnitSet,
}

impl<S> Node<S> {
    /// Units not terminated.
    pub fn live(&self, units: usize) -> UnitSet {
        UnitSet::all(units).difference(self.done)
    }
}

/// The reachable LTS: nodes are [`Node`]s, an edge's weight is the unit that steps. The
/// initial node is index 0.
#[derive(Debug, Clone)]
pub struct Lts<S> {
    pub units: usize,
    /// Units owed a step under every progress model while they are live, whatever the model
    /// says of the others: the in-flight operations of a fair memory system
    /// (`explore::units`). Their steps are not in any node's `stepped`.
    pub owed: UnitSet,
    pub graph: DiGraph<Node<S>, Unit, u32>,
}

impl<S> Lts<S> {
    pub fn initial(&self) -> NodeId {
        NodeIndex::new(0)
    }

    pub fn node(&self, n: NodeId) -> &Node<S> {
        &self.graph[n]
    }

    pub fn state_count(&self) -> usize {
        self.graph.node_count()
    }

    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }
}

/// Bounds on exploration; always reported when hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Give up after this many distinct nodes.
    pub max_states: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_states: 1_000_000,
        }
    }
}

/// Why no LTS came out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExploreError {
    #[error("{0} units, but a progress model handles at most {MAX_UNITS}")]
    TooManyUnits(usize),
    #[error("state bound hit: more than {0} states (raise the bound or shrink the program)")]
    StateBound(usize),
    /// The caller's stop flag was set (its time or memory bound, or Ctrl-C).
    #[error("stopped after {0} states")]
    Stopped(usize),
    #[error("unit {unit} stepped after terminating, or a terminated unit came back to life")]
    NotMonotone { unit: Unit },
}

/// Builds the reachable LTS of `system` breadth-first (so node ids follow BFS order).
pub fn explore<U: UnitSystem>(system: &U, limits: Limits) -> Result<Lts<U::State>, ExploreError> {
    explore_until(system, limits, &Stop::never())
}

/// [`explore`], giving up with [`ExploreError::Stopped`] once `stop` is set.
pub fn explore_until<U: UnitSystem>(
    system: &U,
    limits: Limits,
    stop: &Stop,
) -> Result<Lts<U::State>, ExploreError> {
    let units = system.unit_count();
    if units > MAX_UNITS {
        return Err(ExploreError::TooManyUnits(units));
    }
    let mut graph: DiGraph<Node<U::State>, Unit, u32> = DiGraph::default();
    let mut index: HashMap<(U::State, UnitSet), NodeId> = HashMap::new();
    let init = system.initial();
    let done = system.done(&init);
    let root = graph.add_node(Node {
        state: init.clone(),
        stepped: UnitSet::EMPTY,
        done,
        enabled: UnitSet::EMPTY,
    });
    index.insert((init, UnitSet::EMPTY), root);
    let mut succ = Vec::new();
    let mut next = 0;
    // Node indices are assigned in discovery order, so scanning them in order is a BFS.
    while next < graph.node_count() {
        if stop.requested() {
            return Err(ExploreError::Stopped(graph.node_count()));
        }
        let from = NodeIndex::new(next);
        next += 1;
        succ.clear();
        system.successors(&graph[from].state, &mut succ);
        let (stepped, done) = (graph[from].stepped, graph[from].done);
        let mut enabled = UnitSet::EMPTY;
        for (unit, state) in succ.drain(..) {
            if done.contains(unit) {
                return Err(ExploreError::NotMonotone { unit });
            }
            enabled = enabled.with(unit);
            let to_done = system.done(&state);
            if !done.is_subset(to_done) {
                return Err(ExploreError::NotMonotone {
                    unit: done.difference(to_done).min().unwrap_or(unit),
                });
            }
            let to_stepped = stepped.with(unit);
            let to = match index.entry((state, to_stepped)) {
                Entry::Occupied(e) => *e.get(),
                Entry::Vacant(e) => {
                    if graph.node_count() >= limits.max_states {
                        return Err(ExploreError::StateBound(limits.max_states));
                    }
                    let n = graph.add_node(Node {
                        state: e.key().0.clone(),
                        stepped: to_stepped,
                        done: to_done,
                        enabled: UnitSet::EMPTY,
                    });
                    e.insert(n);
                    n
                }
            };
            graph.add_edge(from, to, unit);
        }
        graph[from].enabled = enabled;
    }
    Ok(Lts {
        units,
        owed: UnitSet::EMPTY,
        graph,
    })
}
