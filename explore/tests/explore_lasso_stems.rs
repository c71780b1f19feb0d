//! Lasso stems are breadth-first shortest: for each lasso the explorer reports, the stem is as
//! long as the shortest path (computed here independently, by Dijkstra with unit weights over
//! the explored graph) from the initial node to the stem's end, and no node of the cycle is
//! closer to the initial node than the stem's end. The lasso's choices then replay.

use explore::progress::ProgressModel;
use explore::{Level, Limits, explore};
use petgraph::algo::dijkstra;
use scheduler::outcome::Observe;
use scheduler::replay::{CycleCheck, replay};
use semantics::machine::{LaunchConfig, Machine, MachineConfig, WarpModel};
use std::path::PathBuf;
use std::sync::Arc;

fn machine(grid: u32, block: u32, model: WarpModel) -> Machine {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/thesis/listing_6_2.ptx");
    let text = std::fs::read_to_string(path).unwrap();
    let parsed = ptx_parser::parse(&text);
    let p = Arc::new(semantics::load(&parsed.module, &text).unwrap().0);
    let launch = LaunchConfig::kernel_1d("kernel", grid, block);
    let config = MachineConfig {
        warp_model: model,
        ..MachineConfig::default()
    };
    Machine::new(p, &launch, &config).unwrap()
}

#[test]
fn lasso_stems_are_shortest() {
    let observe = Observe {
        buffers: Vec::new(),
        variables: vec!["lock".into()],
        registers: Vec::new(),
    };
    let mut checked = 0;
    for (grid, block, warp_model, level) in [
        (1, 2, WarpModel::SimtStack, Level::Lanes),
        (2, 1, WarpModel::SimtStack, Level::Blocks),
        (3, 1, WarpModel::SimtStack, Level::Blocks),
        (1, 3, WarpModel::Threads, Level::Lanes),
    ] {
        let m = machine(grid, block, warp_model);
        let x = explore(&m, level, &observe, Limits::default()).unwrap();
        assert_eq!(x.bound_hit, None);
        let lts = x.oracle().lts();
        let dist = dijkstra(&lts.graph, lts.initial(), None, |_| 1u32);
        for model in ["unfair", "fair", "obe", "hsa", "lobe"] {
            let model: ProgressModel = model.parse().unwrap();
            let Some(cx) = x.oracle().counterexample(model) else {
                continue;
            };
            let end = cx.stem.last().map_or(lts.initial(), |t| t.to);
            let shortest = dist[&end];
            assert_eq!(cx.stem.len() as u32, shortest, "{model:?} {grid}x{block}");
            for t in &cx.cycle {
                assert!(
                    dist[&t.from] >= shortest,
                    "{model:?}: a cycle node is closer"
                );
            }
            // The lasso in choices replays and closes.
            let lasso = x.lasso(model).unwrap();
            let mut all = lasso.stem.clone();
            all.extend_from_slice(&lasso.cycle);
            let mut fresh = m.clone();
            let r = replay(&mut fresh, &all, None, Some(lasso.stem.len()), false);
            assert_eq!(r.divergence, None);
            if !lasso.cycle.is_empty() {
                assert!(matches!(r.cycle, Some(CycleCheck::Closed { .. })));
            }
            checked += 1;
        }
    }
    // Listing 6.2 spins under every one of these setups for some model.
    assert!(checked >= 8, "{checked} lassos checked");
}
