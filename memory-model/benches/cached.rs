//! Cached memory engine throughput (issue 15 item 3): the cost of one memory micro step as the
//! number of in-flight ops grows. Each thread of `blocks` blocks of 256 threads (one SM per
//! block, 16 SMs, the default cache sizes) has a global load of its own word and a store to
//! it in flight; the memory choices are taken round-robin until every op has ended, with the
//! enabled set recomputed after every step as the machine does. Divan's item throughput is
//! micro steps per second: with the incremental enabled set the time per step stays flat as
//! `blocks` grows (before, every step scanned every op: 1.8 to 42 us at 4 to 256 blocks).

use memory_model::cached::{
    CacheConfig, Cached, Dest, MemChoice, Order, Request, RequestKind, Rmw,
};
use memory_model::{Flat, MemSpace, Who};

fn main() {
    divan::main();
}

const THREADS_PER_BLOCK: u32 = 256;

fn setup(blocks: u32) -> (Cached, Flat) {
    let threads = blocks * THREADS_PER_BLOCK;
    let mut dram = Flat::new(1024);
    let base = dram.alloc_global("g", &vec![0u8; threads as usize * 4]);
    let mut c = Cached::new(CacheConfig::default());
    for t in 0..threads {
        let block = t / THREADS_PER_BLOCK;
        let thread = t % THREADS_PER_BLOCK;
        let who = Who { block, thread };
        let sm = block % 16;
        let addr = base + t as u64 * 4;
        let dest = Dest {
            warp: thread / 32,
            lane: thread % 32,
            reg: 1,
            level: 0,
            signed: false,
            bits: 32,
        };
        let access = |kind| Request {
            who,
            sm,
            kind,
            space: MemSpace::Global,
            addr,
            size: 4,
            order: Order::Weak,
            scope: None,
        };
        c.issue(access(RequestKind::Load {
            cop: None,
            dest: Some(dest),
        }));
        c.issue(access(RequestKind::Store {
            cop: None,
            value: t as u64,
        }));
    }
    (c, dram)
}

fn apply(_: Rmw, old: u64, _: u32) -> u64 {
    old
}

/// Steps round-robin through the enabled set until no op is in flight; returns the steps.
fn drain(c: &mut Cached, dram: &mut Flat) -> u64 {
    let mut steps = 0u64;
    let mut next = 0usize;
    let mut enabled = Vec::new();
    while !c.idle() {
        enabled.clear();
        c.enabled(&mut enabled);
        // Ops first: silent choices never end an op, and L1 evictions are offered forever.
        let ops = enabled
            .iter()
            .filter(|m| matches!(m, MemChoice::Step { .. }))
            .count();
        if ops == 0 {
            break;
        }
        let choice = enabled[next % ops];
        next = next % ops + 1;
        c.step(choice, dram, &apply)
            .expect("an enabled choice steps");
        steps += 1;
    }
    steps
}

#[divan::bench(args = [4, 16, 64, 256])]
fn micro_steps(bencher: divan::Bencher, blocks: u32) {
    let (c, dram) = setup(blocks);
    let steps = {
        let (mut c, mut dram) = (c.clone(), dram.clone());
        drain(&mut c, &mut dram)
    };
    bencher
        .counter(divan::counter::ItemsCount::new(steps))
        .with_inputs(|| (c.clone(), dram.clone()))
        .bench_local_values(|(mut c, mut dram)| drain(&mut c, &mut dram));
}
