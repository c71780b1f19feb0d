//! What the stateful search stores per state (docs/exploration.md, "What a stored state
//! costs"): a state's successors are entered once, at the first node it is expanded at, and read
//! back from that node's edges when the state is reached again with other units stepped. Every
//! node of a state must then have the same transitions: per unit, to the same target states.
//! Checked on blocks that spin from their first instruction, where a state is reached again
//! with other units stepped (the corpus kernels have no such state: every unit has stepped
//! before any state recurs), with and without the fold, at the levels of blocks and of warps.

use explore::progress::Lts;
use explore::{Folding, Level, Limits, StateKey, explore};
use petgraph::visit::EdgeRef;
use scheduler::outcome::Observe;
use semantics::machine::{LaunchConfig, Machine, MachineConfig};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Blocks of one thread that wait for a flag nobody sets, from their first instruction on: one
/// round of the loop (a load of zero, a false predicate, the branch back) ends in the state it
/// started from, so a state is reached with every subset of the blocks stepped.
const SPIN: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.global .u32 flag;

.visible .entry spin()
{
    .reg .u32 %r<2>;
    .reg .pred %p<2>;
WAIT:
    ld.volatile.global.u32 %r1, [flag];
    setp.ne.u32 %p1, %r1, 0;
    @!%p1 bra WAIT;
    ret;
}
"#;

fn spinners(blocks: u32) -> Machine {
    let parsed = ptx_parser::parse(SPIN);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    let program = semantics::load(&parsed.module, SPIN).unwrap().0;
    let launch = LaunchConfig::kernel_1d("spin", blocks, 1);
    Machine::new(Arc::new(program), &launch, &MachineConfig::default()).unwrap()
}

/// Per state (its label), the sorted transitions (unit, target state) of each of its nodes.
fn transitions_by_state(lts: &Lts<StateKey>) -> BTreeMap<StateKey, Vec<Vec<(usize, StateKey)>>> {
    let g = &lts.graph;
    let mut by_state: BTreeMap<StateKey, Vec<Vec<(usize, StateKey)>>> = BTreeMap::new();
    for n in g.node_indices() {
        let mut out: Vec<(usize, StateKey)> = g
            .edges(n)
            .map(|e| (*e.weight(), g[e.target()].state))
            .collect();
        out.sort_unstable();
        by_state.entry(g[n].state).or_default().push(out);
    }
    by_state
}

#[test]
fn every_node_of_a_state_has_the_state_s_transitions() {
    let mut states_with_several_nodes = 0;
    let mut searched = 0;
    for blocks in [2, 3, 4] {
        let (name, m, observe) = (
            format!("spinners {blocks}"),
            spinners(blocks),
            Observe::default(),
        );
        for folding in [Folding::Invisible, Folding::None] {
            for level in [Level::Blocks, Level::Warps] {
                let limits = Limits {
                    max_states: 5_000,
                    folding,
                    jobs: 1,
                };
                // A search the state bound cuts may stop inside a node's edges.
                let Ok(x) = explore(&m, level, &observe, limits) else {
                    continue;
                };
                if x.bound_hit.is_some() {
                    continue;
                }
                searched += 1;
                let lts = x.oracle().lts();
                for (state, nodes) in transitions_by_state(lts) {
                    if nodes.len() > 1 {
                        states_with_several_nodes += 1;
                    }
                    for t in &nodes {
                        assert_eq!(
                            *t, nodes[0],
                            "{name} ({folding}, {level:?}): state {state:x} has nodes with different transitions"
                        );
                    }
                }
            }
        }
    }
    eprintln!("{searched} searches, {states_with_several_nodes} states with several nodes");
    assert_eq!(searched, 12, "every search is complete");
    assert!(
        states_with_several_nodes > 20,
        "only {states_with_several_nodes} states reached with several stepped sets"
    );
}
