//! Symmetry reduction over identical blocks for the stateful search (ARCHITECTURE.md section
//! 5; Emerson and Sistla, "Symmetry and model checking", FMSD 1996, and "Utilizing symmetry
//! when model-checking under fairness assumptions", TOPLAS 1997; Ip and Dill, "Better
//! verification through symmetry", FMSD 1996, the scalarsets of Murphi).
//!
//! When no thread can tell the blocks of a grid apart ([`Machine::blocks_interchangeable`]: no
//! `%ctaid` or `%smid` is read, memory is flat, one grid, every block issued), a permutation
//! `sigma` of the blocks (each with its shared and local memory) maps every execution to an
//! execution, every state to a state with the same global memory and the same way the run
//! ended. The spin lock's states are then products of the blocks' positions, and up to `sigma`
//! multisets: their number grows polynomially in the blocks where the product grows
//! exponentially.
//!
//! **The quotient search.** With [`Symmetry::Blocks`] a state's key is
//! [`Machine::symmetric_fingerprint`] (the blocks hashed as a multiset). A quotient state `q`
//! is explored through one concrete machine, its *representative* `r(q)`: the machine the
//! search first reached `q` with (a state's machine is rebuilt by taking its origin's
//! transaction again, which yields that same machine). Successors, persistent sets and the fold
//! are computed on `r(q)`, and the units (blocks, or warps or lanes of blocks) of a node are
//! named as in its representative. The search keeps, per state, the representative's concrete
//! [`Machine::state_fingerprint`] (the node's label in the graph), and per edge whether it is
//! *exact*: the transaction from `r(p)` reaches a machine `t` with `t`'s concrete fingerprint
//! that of `r(q)`, not merely `sigma(r(q))`. Edges that first reach a state are exact by
//! definition.
//!
//! **Why exact edges inside cycles suffice.** Suppose every edge whose source and target lie
//! in the same strongly connected component of the quotient graph (self-loops included) is
//! exact. Take a cycle `D` of the concrete graph through `sigma(r(q1)), sigma'(r(q2)), ...`.
//! Its projection is a closed walk of the quotient, so all of `q1, q2, ...` lie in one
//! component `C`. At `sigma(r(q1))` the step of `D` is `sigma` of a transaction at `r(q1)`;
//! that transaction's quotient edge is internal to `C`, hence exact, hence it lands on `r(q2)`
//! itself, and `sigma` of it on `sigma(r(q2))`: the permutation is the same `sigma` all along
//! `D`, and `D = sigma(D')` with `D'` a cycle of the quotient through the representatives,
//! edge for edge and unit for unit (each unit of `D'` is `sigma` of the unit of `D`). Conversely
//! every cycle of the quotient inside `C` is a concrete cycle among the representatives. So each
//! component of the quotient, with its edges, is isomorphic to a component of the concrete
//! graph. A fairness notion invariant under a renaming of the units then judges `D` and `D'`
//! alike: the unfair model (F is empty) and weak and strong fairness towards every live unit
//! (`fair`: F = live, and "enabled", "steps", "leaves the component" are all carried by
//! `sigma`). Hence the verdicts of those models, their lassos (the stem the chain of first
//! transactions to `r(q1)`, replayed; the cycle the component's exact edges, replayed, so that
//! it closes on the concrete machine), and the set of outcomes (the global memory and how the
//! run ended, which no `sigma` changes) are those of the unreduced search. Models whose F
//! depends on which units stepped first or on the lowest live unit (HSA, OBE, HSA+OBE, LOBE)
//! are not invariant under renaming and get no verdict ([`Symmetry::preserves`]).
//!
//! **With persistent sets** ([`crate::ample`]): `sigma` of a persistent set at `r` is
//! persistent at `sigma(r)` (dependence of two transactions is invariant under a block
//! permutation), and the cycle proviso, checked on quotient keys, holds on every concrete cycle
//! because that cycle maps onto a quotient cycle (above).
//!
//! **The fallback.** If some edge inside a component is not exact (a cycle of the quotient
//! that permutes blocks, such as two blocks handing a token back and forth), the argument does
//! not apply and the quotient is not trusted: the search runs again without symmetry
//! ([`SymmetryUse::FellBack`]). The check ([`cycles_are_exact`]) runs after every complete
//! quotient search, as the search always answers verdicts; it is a linear pass over the graph.
//! It is conservative: a component whose representatives were first reached with the blocks in
//! different roles fails it too, though there the permutations of its inexact edges compose to
//! the identity round every cycle (the spin lock under ITS, whose spin loop spans several
//! states). Accepting those would need the units of each such component renamed into one
//! numbering and a lasso's cycle replayed through the permutations.
//!
//! **Nodes and `stepped`.** A node is (machine state, units that have stepped). On a non-exact
//! edge the units that have stepped are named in `t`'s numbering and are renamed into `r(q)`'s
//! through the block permutation the two canonical orders give
//! ([`Machine::canonical_block_order`]: the i-th block of `t`'s order to the i-th of
//! `r(q)`'s; blocks with equal states are interchangeable, so that is one valid choice). Under
//! the models symmetry preserves, F does not depend on `stepped`.
//!
//! **Counts.** A state count is of quotient states: states distinct up to a permutation of the
//! blocks; an outcome's count of terminal states likewise.

use crate::progress::{ModelKind, ProgressModel};
use semantics::machine::Machine;
use std::fmt;

/// Which symmetry the stateful search exploits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Symmetry {
    /// States are concrete machine states.
    #[default]
    None,
    /// States are machine states up to a permutation of the blocks, where the blocks are
    /// interchangeable (module header).
    Blocks,
}

impl Symmetry {
    /// Whether the quotient graph decides `model` exactly as the full one (module header): the
    /// unfair model and weak and strong fairness towards every live unit, whose F does not
    /// depend on the units' names.
    pub fn preserves(self, model: ProgressModel) -> bool {
        match self {
            Symmetry::None => true,
            Symmetry::Blocks => matches!(model.kind, ModelKind::Unfair | ModelKind::Fair),
        }
    }

    /// `self` where it preserves `model`, else [`Symmetry::None`].
    pub fn for_model(self, model: ProgressModel) -> Symmetry {
        if self.preserves(model) {
            self
        } else {
            Symmetry::None
        }
    }
}

/// `none`, `blocks` (the `--symmetry` flag's words).
impl std::str::FromStr for Symmetry {
    type Err = UnknownSymmetry;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "none" => Ok(Symmetry::None),
            "blocks" => Ok(Symmetry::Blocks),
            _ => Err(UnknownSymmetry(s.to_string())),
        }
    }
}

/// A `--symmetry` word that is none of the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown symmetry `{0}` (expected `blocks` or `none`)")]
pub struct UnknownSymmetry(pub String);

/// Why the blocks of a launch are not interchangeable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotApplicable {
    /// Some instruction reads `%ctaid` or `%smid`: blocks can tell themselves apart.
    ReadsBlockIdentity,
    /// Cached memory: a block's SM decides which L1 it sees.
    CachedMemory,
    /// A program of several grids.
    SeveralGrids,
    /// Some block of the grid is not issued at the start: its turn depends on its number.
    BlocksNotIssued,
    /// One block: nothing to permute.
    OneBlock,
    /// The progress model asked for depends on the units' names ([`Symmetry::preserves`]).
    Model(ProgressModel),
}

impl fmt::Display for NotApplicable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotApplicable::ReadsBlockIdentity => {
                f.write_str("the kernel reads %ctaid or %smid, so its blocks are told apart")
            }
            NotApplicable::CachedMemory => f.write_str(
                "memory is cached: a block's SM decides which L1 cache it sees (flat memory only)",
            ),
            NotApplicable::SeveralGrids => f.write_str("the program launches several grids"),
            NotApplicable::BlocksNotIssued => f.write_str(
                "not every block is resident at the start, and a block's turn to be issued depends on its number",
            ),
            NotApplicable::OneBlock => f.write_str("the grid has one block"),
            NotApplicable::Model(m) => write!(
                f,
                "the progress model {} depends on which unit is which (symmetry preserves unfair and fair only)",
                m.name()
            ),
        }
    }
}

/// What the search did with symmetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SymmetryUse {
    /// Not asked for.
    #[default]
    Off,
    /// Asked for, but the launch's blocks are not interchangeable.
    NotApplicable(NotApplicable),
    /// States are counted up to a permutation of the blocks.
    Applied,
    /// The quotient had a cycle that permutes blocks: the search was run again without
    /// symmetry (module header, "The fallback").
    FellBack,
}

impl SymmetryUse {
    /// Whether the exploration's states are quotient states.
    pub fn applied(self) -> bool {
        self == SymmetryUse::Applied
    }
}

/// Whether `machine` (settled: its system choices taken) has interchangeable blocks, and why
/// not.
pub fn applicable(machine: &Machine) -> Result<(), NotApplicable> {
    let grids = machine.grids();
    if machine.program().reads_block_identity {
        return Err(NotApplicable::ReadsBlockIdentity);
    }
    if machine.cache().is_some() {
        return Err(NotApplicable::CachedMemory);
    }
    let [grid] = &grids[..] else {
        return Err(NotApplicable::SeveralGrids);
    };
    if grid.issued != grid.shape.blocks {
        return Err(NotApplicable::BlocksNotIssued);
    }
    if grid.shape.blocks < 2 {
        return Err(NotApplicable::OneBlock);
    }
    // The machine's own judgement is the one that counts; the cases above name why not.
    if !machine.blocks_interchangeable() {
        return Err(NotApplicable::ReadsBlockIdentity);
    }
    Ok(())
}

/// The permutation of all `blocks` blocks that sends the i-th block of `from` (a canonical
/// order, [`Machine::canonical_block_order`]) to the i-th of `to`: `result[b]` is `b`'s
/// image. Blocks in neither order (completed and no longer resident) go to each other in
/// increasing order: they have no state left to tell them apart.
pub fn block_map(from: &[u32], to: &[u32], blocks: u32) -> Box<[u32]> {
    let mut map: Vec<u32> = (0..blocks).collect();
    for (&f, &t) in from.iter().zip(to) {
        if let Some(slot) = map.get_mut(f as usize) {
            *slot = t;
        }
    }
    let rest = |order: &[u32]| -> Vec<u32> { (0..blocks).filter(|b| !order.contains(b)).collect() };
    for (f, t) in rest(from).into_iter().zip(rest(to)) {
        map[f as usize] = t;
    }
    map.into_boxed_slice()
}

/// Whether every edge inside a strongly connected component of the quotient graph is exact
/// (module header): `edges` are (source, target, exact) over states `0..states`.
pub fn cycles_are_exact(states: usize, edges: impl Iterator<Item = (u32, u32, bool)>) -> bool {
    use petgraph::graph::{DiGraph, NodeIndex};
    let mut g: DiGraph<(), (), u32> = DiGraph::with_capacity(states, 0);
    for _ in 0..states {
        g.add_node(());
    }
    let mut inexact = Vec::new();
    for (from, to, exact) in edges {
        g.add_edge(
            NodeIndex::new(from as usize),
            NodeIndex::new(to as usize),
            (),
        );
        if !exact {
            inexact.push((from, to));
        }
    }
    if inexact.is_empty() {
        return true;
    }
    let mut component = vec![0u32; states];
    for (i, scc) in petgraph::algo::tarjan_scc(&g).into_iter().enumerate() {
        for n in scc {
            component[n.index()] = i as u32;
        }
    }
    inexact
        .into_iter()
        .all(|(from, to)| component[from as usize] != component[to as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_map_pairs_the_orders_then_the_blocks_in_neither() {
        // Blocks 1 and 3 completed in the first state, 0 and 2 in the second.
        assert_eq!(&*block_map(&[2, 0], &[1, 3], 4), &[3, 0, 1, 2]);
        assert_eq!(&*block_map(&[0, 1], &[0, 1], 2), &[0, 1]);
        assert_eq!(&*block_map(&[1, 0], &[0, 1], 2), &[1, 0]);
    }

    #[test]
    fn an_inexact_edge_is_trusted_only_between_components() {
        // 0 -> 1 -> 2 -> 1: {1, 2} is a component.
        let edges = |e01, e12, e21| vec![(0, 1, e01), (1, 2, e12), (2, 1, e21)].into_iter();
        assert!(cycles_are_exact(3, edges(false, true, true)));
        assert!(!cycles_are_exact(3, edges(true, false, true)));
        assert!(!cycles_are_exact(3, edges(true, true, false)));
        // An inexact self-loop permutes blocks on a cycle of length one.
        assert!(!cycles_are_exact(1, vec![(0, 0, false)].into_iter()));
        assert!(cycles_are_exact(1, vec![(0, 0, true)].into_iter()));
    }

    #[test]
    fn only_models_blind_to_unit_names_are_preserved() {
        for m in ProgressModel::ALL {
            let blind = matches!(m.kind, ModelKind::Unfair | ModelKind::Fair);
            assert_eq!(Symmetry::Blocks.preserves(m), blind, "{m}");
            assert!(Symmetry::None.preserves(m));
        }
    }
}
