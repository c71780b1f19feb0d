//! Where a stateful search's states come from (issue 14 measurement): explores the grid
//! barrier (`tests/kernels/grid_barrier`, `BLOCKS` blocks of 32 threads, default 3) with the
//! fold of invisible steps, and prints how many distinct machine states there are against
//! distinct tuples of the blocks' pcs, and at which instructions transactions end.
//!
//!   cargo run --release -p litmus --example state_census -- [BLOCKS] [none|fold]

use explore::{Folding, Level, Units, fold, settle};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

mod common;

fn main() {
    let mut args = std::env::args().skip(1);
    let blocks: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    let folding: Folding = args.next().and_then(|a| a.parse().ok()).unwrap_or_default();
    let mut m = common::grid_barrier(blocks);
    let units = Units::new(&m, Level::Blocks).expect("units");
    let mut taken = Vec::new();
    settle(&mut m, &mut taken).expect("settles");
    let mut seen: HashSet<u128> = HashSet::new();
    let mut pcs: HashMap<Vec<(u32, bool)>, usize> = HashMap::new();
    let mut ends: BTreeMap<u32, usize> = BTreeMap::new();
    let mut queue = VecDeque::new();
    seen.insert(m.state_fingerprint());
    queue.push_back(m);
    while let Some(m) = queue.pop_front() {
        let key: Vec<(u32, bool)> = (0..blocks)
            .map(|b| {
                m.warp_view(b, 0)
                    .map_or((u32::MAX, false), |w| (w.pc, w.completed))
            })
            .collect();
        *pcs.entry(key).or_default() += 1;
        if m.termination().is_some() {
            continue;
        }
        for c in m.enabled().to_vec() {
            let mut m2 = m.clone();
            let mut t = Vec::new();
            fold::step_folded(
                &mut m2,
                &c,
                folding,
                None,
                Some(&units),
                false,
                Default::default(),
                &mut t,
            )
            .expect("steps");
            // The pc of the transaction's last step: the pc before it, read off a replay.
            let mut r = m.clone();
            for (i, c) in t.iter().enumerate() {
                if i + 1 == t.len()
                    && let traces::Choice::Warp { block, warp } = *c
                {
                    let pc = r.warp_view(block, warp).map_or(u32::MAX, |w| w.pc);
                    *ends.entry(pc).or_default() += 1;
                }
                r.step(c).expect("replays");
            }
            settle(&mut m2, &mut t).expect("settles");
            if seen.insert(m2.state_fingerprint()) {
                queue.push_back(m2);
            }
        }
    }
    println!(
        "{blocks} blocks, {folding}: {} states, {} distinct pc tuples",
        seen.len(),
        pcs.len()
    );
    let mut multi: Vec<_> = pcs.iter().filter(|(_, n)| **n > 1).collect();
    multi.sort_by_key(|(_, n)| std::cmp::Reverse(**n));
    for (k, n) in multi.iter().take(8) {
        println!("  pcs {k:?}: {n} states");
    }
    println!("transactions by the pc of their last step:");
    let program = common::grid_barrier(blocks);
    for (pc, n) in ends {
        let op = program
            .program()
            .instructions
            .get(pc as usize)
            .map(|i| format!("{:?}", i.op))
            .unwrap_or_default();
        println!(
            "  {pc:>4} {n:>8}  {}",
            op.chars().take(90).collect::<String>()
        );
    }
}
